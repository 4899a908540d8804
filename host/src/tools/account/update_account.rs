//! `update_account_tool`: memo, automatic associations, staking of an account (default: the
//! user's), optionally scheduled.

use crate::model::facts::Facts;
use crate::tools::normalise::{self, serde_as};
use crate::tools::scheduling::{self, Scheduling};
use crate::tools::{
    BuiltTransaction, CoreOutput, RawTransactionResponse, Tool, ToolContext, ToolError, ToolType,
};
use hedera::{AccountId, AccountUpdateTransaction};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub struct UpdateAccount;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateAccountNormalised {
    #[serde(with = "serde_as::string")]
    #[schemars(with = "String")]
    pub account_id: AccountId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_automatic_token_associations: Option<i32>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "serde_as::option_string"
    )]
    #[schemars(with = "Option<String>")]
    pub staked_account_id: Option<AccountId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account_memo: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decline_staking_reward: Option<bool>,
    #[serde(default)]
    pub scheduling_params: Scheduling,
}

impl Tool for UpdateAccount {
    type Normalised = UpdateAccountNormalised;

    const METHOD: &'static str = "update_account_tool";
    const NAME: &'static str = "Update Account";
    const DESCRIPTION: &'static str = r#"
{context}

This tool will update an existing Hedera account. Only provided fields will be updated.

Parameters:
- accountId (str, optional): The Hedera account ID. If not provided, defaults to the {default_account}
- accountId (string, optional) Account ID to update (e.g., 0.0.xxxxx). If not provided, operator account ID will be used
- maxAutomaticTokenAssociations (number, optional)
- stakedAccountId (string, optional)
- accountMemo (string, optional) - memo to be set for the upgraded account
- declineStakingReward (boolean, optional)
- {scheduling}

{usage}
"#;
    const TOOL_TYPE: ToolType = ToolType::Transaction;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "schedulingParams": crate::tools::schema_fragments::scheduling_params(),
                "accountId": {"type": "string", "description": "Account ID to update (e.g., 0.0.xxxxx). If not provided, operator account ID will be used"},
                "maxAutomaticTokenAssociations": {"type": "integer", "description": "Max automatic token associations, positive, zero or -1 if unlimited"},
                "stakedAccountId": {"type": "string", "description": "Staked account ID"},
                "accountMemo": {"type": "string", "description": "Account memo"},
                "declineStakingReward": {"type": "boolean", "description": "Decline staking rewards"}
            },
            "additionalProperties": false
        })
    }

    fn normalise(&self, raw: &Value, ctx: &ToolContext<'_>) -> Result<Self::Normalised, ToolError> {
        let scheduling = scheduling::raw_from(raw)?;
        let text = |k: &str| raw.get(k).and_then(Value::as_str);
        let max = match raw
            .get("maxAutomaticTokenAssociations")
            .and_then(Value::as_f64)
        {
            None => None,
            Some(m) if m >= -1.0 && m <= f64::from(i32::MAX) => Some(m as i32),
            Some(m) => {
                return Err(ToolError::invalid_field(
                    "maxAutomaticTokenAssociations",
                    format!("Invalid value: {}", normalise::js_number(m)),
                ))
            }
        };
        Ok(UpdateAccountNormalised {
            account_id: normalise::resolve_account("accountId", text("accountId"), ctx)?,
            max_automatic_token_associations: max,
            staked_account_id: text("stakedAccountId")
                .map(|s| normalise::account_id("stakedAccountId", s))
                .transpose()?,
            account_memo: text("accountMemo").map(str::to_owned),
            decline_staking_reward: raw.get("declineStakingReward").and_then(Value::as_bool),
            scheduling_params: Scheduling::normalise(scheduling.as_ref(), ctx)?,
        })
    }

    fn facts(&self, n: &Self::Normalised) -> Facts {
        let mut f = Facts::default();
        f.changes("account", &n.account_id);
        f.with_memo(None, n.scheduling_params.is_scheduled)
    }

    fn core_action(
        &self,
        n: &Self::Normalised,
        ctx: &ToolContext<'_>,
    ) -> Result<CoreOutput, ToolError> {
        let mut tx = AccountUpdateTransaction::new();
        tx.account_id(n.account_id);
        if let Some(max) = n.max_automatic_token_associations {
            tx.max_automatic_token_associations(max);
        }
        if let Some(staked) = n.staked_account_id {
            tx.staked_account_id(staked);
        }
        if let Some(memo) = &n.account_memo {
            tx.account_memo(memo);
        }
        if let Some(decline) = n.decline_staking_reward {
            tx.decline_staking_reward(decline);
        }
        ctx.pin_nodes(&mut tx);
        let built = BuiltTransaction::new(tx, "AccountUpdateTransaction", serde_json::Map::new());
        let built = n.scheduling_params.wrap(built)?;
        Ok(CoreOutput::Transaction(Box::new(built)))
    }

    fn post_process(&self, raw: &RawTransactionResponse) -> String {
        match &raw.schedule_id {
            Some(schedule) => format!(
                "Scheduled account update created successfully.\nTransaction ID: {}\nSchedule ID: {schedule}",
                raw.transaction_id
            ),
            None => format!("Account successfully updated.\nTransaction ID: {}", raw.transaction_id),
        }
    }
}
