//! "No Infinite Supply Policy": token creation must use a finite supply (a maximum the agent
//! cannot mint past). Config: `{}`.

use hak_guest::{
    block_with, parse_config, serde_json, Plugin, PluginInfo, PolicyOutcome, Stage, StageInput,
    Verdict,
};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {}

pub struct NoInfiniteSupply;

impl Plugin for NoInfiniteSupply {
    fn describe(config: &str) -> Result<(Self, PluginInfo), String> {
        let _: Config = parse_config(config)?;
        let info = PluginInfo::policy(
            "No Infinite Supply Policy",
            "Tokens must be created with a finite supply",
            [
                "create_fungible_token_tool",
                "create_non_fungible_token_tool",
            ],
            [Stage::PostParamsNormalization],
        );
        Ok((NoInfiniteSupply, info))
    }

    fn should_block_post_params_normalization(&self, input: &StageInput) -> PolicyOutcome {
        let params = input.params_value()?;
        let supply = &params["normalisedParams"]["supplyType"];
        if supply.as_str() == Some("finite") {
            return Ok(Verdict::Allow);
        }
        Ok(block_with(
            "tokens must have a finite supply",
            "INFINITE_SUPPLY",
            serde_json::json!({ "supplyType": supply }),
        ))
    }
}

hak_guest::export_plugin!(NoInfiniteSupply);
