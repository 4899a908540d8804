//! "Cedar Policy": the calls an agent may make, written as [Cedar](https://www.cedarpolicy.com)
//! policies — text a security team reads, validates and hot-swaps without writing a program.
//! Config: `{"policies": "<Cedar policies>", "schema": "<Cedar schema>" (optional; the
//! built-in one by default), "relevantTools": [...] (optional; default every tool)}`.
//!
//! After normalisation every relevant call is one request: principal `Agent::"<agent name,
//! else account id>"` (`account`, `mode`), action `Action::"<tool method>"` (each in
//! `Action::"transaction"` or `Action::"query"`), resource `Network::"<network>"`, context
//! `Call` from the host's facts (`schema::BUILTIN_HEAD`). A call is allowed only when Cedar
//! allows it: a `forbid` that matches blocks it (`CEDAR_DENIED`, naming the policies' `@id`s),
//! so does a call no `permit` matches; a policy whose evaluation fails blocks the call
//! (`CEDAR_ERROR`: Cedar would skip it, which for a `forbid` would let the call through).
//! The text is parsed and validated against the schema (strict mode) when the plugin loads:
//! any error refuses the plugin with Cedar's message and its line and column.

mod load;
mod request;
pub mod schema;

use cedar_policy::{Authorizer, Decision, PolicySet};
use hak_guest::serde_json::json;
use hak_guest::{
    block_with, host, parse_config, Plugin, PluginInfo, PolicyOutcome, Stage, StageInput, Verdict,
};
use serde::Deserialize;
use std::collections::HashMap;

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Config {
    policies: String,
    schema: Option<String>,
    relevant_tools: Option<Vec<String>>,
}

pub struct Cedar {
    policies: PolicySet,
    names: HashMap<cedar_policy::PolicyId, String>,
    requests: request::Requests,
    authorizer: Authorizer,
}

impl Plugin for Cedar {
    fn describe(config: &str) -> Result<(Self, PluginInfo), String> {
        let config: Config = parse_config(config)?;
        let loaded = load::load(&config.policies, config.schema.as_deref())?;
        let requests = request::Requests::new(&loaded.schema)?;
        let count = loaded.names.len();
        let mut info = PluginInfo::policy(
            "Cedar Policy",
            &format!(
                "Calls must be permitted by {count} Cedar polic{}",
                if count == 1 { "y" } else { "ies" }
            ),
            ["*"],
            [Stage::PostParamsNormalization],
        );
        if let Some(tools) = config.relevant_tools {
            info.relevant_tools = tools;
        }
        Ok((
            Cedar {
                policies: loaded.policies,
                names: loaded.names,
                requests,
                authorizer: Authorizer::new(),
            },
            info,
        ))
    }

    fn should_block_post_params_normalization(&self, input: &StageInput) -> PolicyOutcome {
        let method = &input.method;
        let Some(facts) = &input.facts else {
            return Ok(block_with(
                format!("{method}: the host stated no facts to judge"),
                "CEDAR_NO_FACTS",
                json!({}),
            ));
        };
        let who: request::Who = input.field_as("context")?.unwrap_or_default();
        let Some(response) = self.requests.authorize(
            &self.authorizer,
            &self.policies,
            &who,
            method,
            facts,
            host::now_unix_ms(),
        )?
        else {
            return Ok(block_with(
                format!("{method} is not an action of the Cedar schema"),
                "CEDAR_UNKNOWN_ACTION",
                json!({}),
            ));
        };
        let diagnostics = response.diagnostics();
        let errors: Vec<String> = diagnostics
            .errors()
            .map(|e| load::named(&self.names, &e.to_string()))
            .collect();
        let mut decided: Vec<&str> = diagnostics.reason().map(|id| self.name(id)).collect();
        decided.sort_unstable();
        let principal = who.principal();
        match response.decision() {
            Decision::Allow if errors.is_empty() => Ok(Verdict::Allow),
            Decision::Deny if !decided.is_empty() => Ok(block_with(
                format!(
                    "{method} is forbidden by Cedar polic{} {}",
                    if decided.len() == 1 { "y" } else { "ies" },
                    decided.join(", ")
                ),
                "CEDAR_DENIED",
                json!({"policies": decided, "principal": principal}),
            )),
            _ if !errors.is_empty() => Ok(block_with(
                format!("Cedar could not evaluate {method}: {}", errors.join("; ")),
                "CEDAR_ERROR",
                json!({"errors": errors, "principal": principal}),
            )),
            _ => Ok(block_with(
                format!("no Cedar policy permits {method}"),
                "CEDAR_DENIED",
                json!({"policies": [], "principal": principal}),
            )),
        }
    }
}

impl Cedar {
    fn name<'a>(&'a self, id: &'a cedar_policy::PolicyId) -> &'a str {
        self.names
            .get(id)
            .map_or(AsRef::<str>::as_ref(id), String::as_str)
    }
}

hak_guest::export_plugin!(Cedar);

#[cfg(test)]
mod tests;
