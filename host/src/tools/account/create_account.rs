//! `create_account_tool`: a new account keyed with the given public key (else the operator's,
//! else the default account's from the mirror), funded from the payer.

use crate::model::facts::{Asset, Facts};
use crate::tools::normalise::{self, serde_as};
use crate::tools::scheduling::{self, Scheduling};
use crate::tools::{
    BuiltTransaction, CoreOutput, RawTransactionResponse, Tool, ToolContext, ToolError, ToolType,
};
use hedera::{AccountCreateTransaction, Hbar, PublicKey};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub struct CreateAccount;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateAccountNormalised {
    /// The new account's key, DER hex.
    pub key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account_memo: Option<String>,
    /// Tinybars.
    #[serde(with = "serde_as::amount")]
    #[schemars(with = "String")]
    pub initial_balance: i64,
    pub max_automatic_token_associations: i32,
    #[serde(default)]
    pub scheduling_params: Scheduling,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Raw {
    public_key: Option<String>,
    account_memo: Option<String>,
    initial_balance: Option<f64>,
    max_automatic_token_associations: Option<f64>,
}

impl Tool for CreateAccount {
    type Normalised = CreateAccountNormalised;

    const METHOD: &'static str = "create_account_tool";
    const NAME: &'static str = "Create Account";
    const DESCRIPTION: &'static str = r#"
{context}

This tool will create a new Hedera account with a passed public key. If not passed, the tool will use operator's public key.

IMPORTANT: All parameters are optional. If the user does not explicitly provide optional parameters, proceed immediately using the default values. Do NOT ask the user for optional parameters.

NOTE: On Hedera, multiple accounts can be created and controlled using the same key pair (e.g., the operator account's key). This means that assets on the newly created account will be accessible using the same key pair as the operator account if no explicit public key is provided.
CRITICAL: Do NOT tell the user that you have generated a new key pair. This tool CANNOT generate a new key pair.
WARNING: If no public key is provided, the operator's key will be used. 

Parameters:
- publicKey (string, optional): Public key to use for the account. If not provided, the tool will use the operator's public key.
- accountMemo (string, optional): Optional memo for the account. Max 100 chars. Length will be validated in tool call.
- initialBalance (number, optional, default 0): Initial HBAR to fund the account
- maxAutomaticTokenAssociations (number, optional, default -1): -1 means unlimited
- {scheduling}

{usage}
"#;
    const TOOL_TYPE: ToolType = ToolType::Transaction;

    fn core_result_schema() -> Value {
        crate::tools::shapes::Details::new()
            .string(
                "initialBalance",
                "The initial balance in tinybars, as a decimal string.",
            )
            .summary(&Self::schema())
    }

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "schedulingParams": crate::tools::schema_fragments::scheduling_params(),
                "publicKey": {"type": "string", "description": "Account public key. If not provided, the operator’s public key will be used."},
                "accountMemo": {"type": "string", "description": "Optional memo for the account."},
                "initialBalance": {"type": "number", "default": 0, "description": "Initial HBAR balance to fund the account (defaults to 0)."},
                "maxAutomaticTokenAssociations": {"type": "number", "default": -1, "description": "Max automatic token associations (-1 for unlimited)."}
            },
            "additionalProperties": false
        })
    }

    fn normalise(&self, raw: &Value, ctx: &ToolContext<'_>) -> Result<Self::Normalised, ToolError> {
        let scheduling = scheduling::raw_from(raw)?;
        let raw = Raw::deserialize(raw)
            .map_err(|e| ToolError::message(format!("Invalid parameters: {e}")))?;
        let unresolved = || {
            ToolError::message("Unable to resolve public key: no param, mirror node, or client operator key available.")
        };
        let key = match raw.public_key.as_deref() {
            // The kit: `publicKey ?? operatorKey`, then an empty one falls to the mirror.
            Some("") => crate::tools::keys::mirror_public_key(ctx).map_err(|_| unresolved())?,
            Some(text) => text.parse::<PublicKey>().map_err(|_| {
                // The JS SDK's decoder drops a leading `0x`, then reads two digits at a time.
                let digits = text.strip_prefix("0x").unwrap_or(text);
                if digits.len() % 2 == 0 && digits.bytes().all(|b| b.is_ascii_hexdigit()) {
                    ToolError::invalid_field("publicKey", format!("Invalid public key: {text}"))
                } else {
                    // Its words for text that is not whole hex pairs (an odd length leaves
                    // one digit over).
                    ToolError::message(format!("Invalid hex string: {text}"))
                }
            })?,
            None => ctx
                .operator_public_key
                .or_else(|| crate::tools::keys::default_public_key(ctx).ok())
                .ok_or_else(unresolved)?,
        };
        let max = raw.max_automatic_token_associations.unwrap_or(-1.0);
        if max.fract() != 0.0 || max < -1.0 || max > f64::from(i32::MAX) {
            return Err(ToolError::invalid_field(
                "maxAutomaticTokenAssociations",
                format!("Invalid value: {}", normalise::js_number(max)),
            ));
        }
        Ok(CreateAccountNormalised {
            key: key.to_string_der(),
            account_memo: raw.account_memo,
            initial_balance: normalise::hbar_to_tinybars(raw.initial_balance.unwrap_or(0.0))?,
            max_automatic_token_associations: max as i32,
            scheduling_params: Scheduling::normalise(scheduling.as_ref(), ctx)?,
        })
    }

    fn facts(&self, n: &Self::Normalised) -> Facts {
        let mut f = Facts::default();
        if n.initial_balance > 0 {
            f.movements.push(crate::model::facts::Movement {
                asset: Asset::Hbar,
                to: None,
                amount: n.initial_balance as u64,
                via: crate::model::facts::Via::Transfer,
            });
        }
        f.with_memo(None, n.scheduling_params.is_scheduled)
    }

    fn core_action(
        &self,
        n: &Self::Normalised,
        ctx: &ToolContext<'_>,
    ) -> Result<CoreOutput, ToolError> {
        let key: PublicKey = n
            .key
            .parse()
            .map_err(|_| ToolError::invalid_field("key", "Invalid public key"))?;
        let mut tx = AccountCreateTransaction::new();
        tx.set_key_without_alias(key)
            .initial_balance(Hbar::from_tinybars(n.initial_balance))
            .max_automatic_token_associations(n.max_automatic_token_associations);
        if let Some(memo) = &n.account_memo {
            tx.account_memo(memo);
        }
        ctx.pin_nodes(&mut tx);
        let mut details = serde_json::Map::new();
        if ctx.wants_summary {
            details.insert(
                "initialBalance".into(),
                n.initial_balance.to_string().into(),
            );
        }
        let built = n.scheduling_params.wrap(BuiltTransaction::new(
            tx,
            "AccountCreateTransaction",
            details,
        ))?;
        Ok(CoreOutput::Transaction(Box::new(built)))
    }

    fn post_process(&self, raw: &RawTransactionResponse) -> String {
        match &raw.schedule_id {
            Some(schedule) => format!(
                "Scheduled transaction created successfully.\nTransaction ID: {}\nSchedule ID: {schedule}\n",
                raw.transaction_id
            ),
            None => format!(
                "Account created successfully.\nTransaction ID: {}\nNew Account ID: {}\n",
                raw.transaction_id,
                raw.account_id.as_deref().unwrap_or("unknown")
            ),
        }
    }
}
