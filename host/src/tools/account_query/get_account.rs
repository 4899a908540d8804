//! `get_account_query_tool`: an account's details from the mirror node.

use crate::tools::normalise::{self, serde_as};
use crate::tools::{CoreOutput, Tool, ToolContext, ToolError, ToolType};
use hedera::AccountId;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub struct GetAccount;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GetAccountNormalised {
    #[serde(with = "serde_as::string")]
    #[schemars(with = "String")]
    pub account_id: AccountId,
    /// The EVM address the agent wrote for the account, echoed in the result as the kit does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written_as: Option<String>,
}

/// JavaScript's `${value}` for the JSON values the mirror returns.
fn js(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "null".into(),
        other => other.to_string(),
    }
}

impl Tool for GetAccount {
    type Normalised = GetAccountNormalised;

    const METHOD: &'static str = "get_account_query_tool";
    const NAME: &'static str = "Get Account Query";
    const DESCRIPTION: &'static str = r#"
{context}

This tool will return the account information for a given Hedera account. The returned account will contain the balance in HBAR, public key, and EVM address.

Parameters:
- accountId (str, required): The account ID to query
{usage}
"#;
    const TOOL_TYPE: ToolType = ToolType::Query;

    fn core_result_schema() -> Value {
        crate::tools::shapes::Details::new()
            .string("accountId", "The account queried.")
            .value("account", serde_json::json!({"type": "object", "description": "The kit's account mapping of the mirror's /accounts/{id} (null where the mirror has no value).", "properties": {"accountId": {"type": ["string", "null"]}, "accountPublicKey": {"type": ["string", "null"]}, "balance": {"type": "object", "description": "The mirror's balance object, its balance in HBAR."}, "evmAddress": {"type": ["string", "null"]}, "ethereumNonce": {"type": ["integer", "null"]}, "createdTimestamp": {"type": ["string", "null"]}, "memo": {"type": ["string", "null"]}, "maxAutomaticTokenAssociations": {"type": ["integer", "null"]}, "deleted": {"type": ["boolean", "null"]}, "hbarBalance": {"type": "string", "description": "HBAR, as the kit writes it."}}, "required": ["accountId", "accountPublicKey", "balance", "evmAddress", "ethereumNonce", "createdTimestamp", "memo", "maxAutomaticTokenAssociations", "deleted", "hbarBalance"], "additionalProperties": false}))
            .query()
    }

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {"accountId": {"type": "string", "description": "The account ID to query."}},
            "required": ["accountId"],
            "additionalProperties": false
        })
    }

    fn normalise(
        &self,
        raw: &Value,
        _ctx: &ToolContext<'_>,
    ) -> Result<Self::Normalised, ToolError> {
        let id = raw["accountId"].as_str().unwrap_or_default();
        Ok(GetAccountNormalised {
            account_id: normalise::account_id("accountId", id)?,
            written_as: normalise::written_as_address(id),
        })
    }

    fn core_action(
        &self,
        n: &Self::Normalised,
        ctx: &ToolContext<'_>,
    ) -> Result<CoreOutput, ToolError> {
        let id = n.account_id.to_string();
        let account = ctx.mirror.account(&id)?;
        if !account.exists() {
            return Err(ToolError::message(format!("Account {id} not found")));
        }
        let data = account.0;
        let tinybars = data["balance"]["balance"].as_i64().unwrap_or(0);
        let hbar = normalise::tinybars_to_hbar_string(tinybars);
        let mut balance = data["balance"].clone();
        balance["balance"] = hbar.clone().into();
        // The kit's `getAccount` mapping, with the balance in HBAR.
        let account = json!({
            "accountId": data["account"],
            "accountPublicKey": data["key"]["key"],
            "balance": balance,
            "evmAddress": data["evm_address"],
            "ethereumNonce": data["ethereum_nonce"],
            "createdTimestamp": data["created_timestamp"],
            "memo": data["memo"],
            "maxAutomaticTokenAssociations": data["max_automatic_token_associations"],
            "deleted": data["deleted"],
            "hbarBalance": hbar,
        });
        let message = format!(
            "Details for {}\nBalance: {} HBAR\nPublic Key: {},\nEVM address: {},\nEthereum nonce: {},\nCreated timestamp: {},\nMemo: {},\nMax automatic token associations: {},\nDeleted: {},\n",
            js(&account["accountId"]),
            hbar,
            js(&account["accountPublicKey"]),
            js(&account["evmAddress"]),
            js(&account["ethereumNonce"]),
            js(&account["createdTimestamp"]),
            js(&account["memo"]),
            js(&account["maxAutomaticTokenAssociations"]),
            js(&account["deleted"]),
        );
        Ok(CoreOutput::Query(
            json!({"raw": {"accountId": normalise::echo_account(&n.account_id, n.written_as.as_deref()), "account": account}, "humanMessage": message}),
        ))
    }
}
