//! `schedulingParams`, shared by every schedulable tool: normalisation (the kit's
//! `normaliseScheduledTransactionParams`, keys resolved with `resolveKey`) and wrapping a built
//! transaction in a `ScheduleCreateTransaction` (the kit's `maybeWrapInSchedule`).

use super::keys::{default_public_key, resolve_key, KeyInput};
use super::normalise::{account_id, serde_as};
use super::{BuiltTransaction, ToolContext, ToolError};
use hedera::{AccountId, ScheduleCreateTransaction};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use time::OffsetDateTime;

/// The agent's `schedulingParams` (already valid against the schema).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RawScheduling {
    #[serde(default)]
    pub is_scheduled: bool,
    pub admin_key: Option<KeyInput>,
    pub payer_account_id: Option<String>,
    pub expiration_time: Option<String>,
    pub wait_for_expiry: Option<bool>,
}

/// Normalised scheduling: `{"isScheduled": false}` unless scheduled. Keys are DER hex,
/// `payerAccountID` keeps the kit's spelling, the expiration is ISO 8601.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Scheduling {
    pub is_scheduled: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admin_key: Option<String>,
    #[serde(
        default,
        rename = "payerAccountID",
        skip_serializing_if = "Option::is_none",
        with = "serde_as::option_string"
    )]
    #[schemars(with = "Option<String>")]
    pub payer_account_id: Option<AccountId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expiration_time: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_for_expiry: Option<bool>,
}

impl Scheduling {
    /// Normalise the agent's scheduling params for the calling context.
    pub fn normalise(
        raw: Option<&RawScheduling>,
        ctx: &ToolContext<'_>,
    ) -> Result<Self, ToolError> {
        let Some(raw) = raw.filter(|r| r.is_scheduled) else {
            return Ok(Scheduling::default());
        };
        // The kit looks the user's key up for every scheduled call; hak only when `adminKey`
        // asks for it, so return-bytes scheduling needs no mirror otherwise.
        let user_key = match &raw.admin_key {
            Some(key) if key.means_user_key() => default_public_key(ctx).ok(),
            _ => None,
        };
        let admin_key = resolve_key(
            "schedulingParams.adminKey",
            raw.admin_key.as_ref(),
            user_key.as_ref(),
        )?;
        let payer_account_id = raw
            .payer_account_id
            .as_deref()
            .map(|p| account_id("schedulingParams.payerAccountId", p))
            .transpose()?;
        let expiration_time = match raw.expiration_time.as_deref() {
            None => None,
            Some(text) => Some(parse_time(text)?),
        };
        Ok(Scheduling {
            is_scheduled: true,
            admin_key: admin_key.map(|k| k.to_string_der()),
            payer_account_id,
            expiration_time: expiration_time.map(crate::tools::normalise::iso_millis),
            wait_for_expiry: Some(raw.wait_for_expiry.unwrap_or(false)),
        })
    }

    /// Wrap `built` in a `ScheduleCreateTransaction` when scheduled; otherwise return it as is.
    pub fn wrap(&self, built: BuiltTransaction) -> Result<BuiltTransaction, ToolError> {
        if !self.is_scheduled {
            return Ok(built);
        }
        let mut schedule = ScheduleCreateTransaction::new();
        let nodes = built.tx.get_node_account_ids().map(<[AccountId]>::to_vec);
        let inner_type = built.type_name;
        let mut details = Map::new();
        details.insert("scheduledType".into(), inner_type.into());
        details.insert(
            "scheduledMemo".into(),
            built.tx.get_transaction_memo().into(),
        );
        details.extend(built.details);
        schedule.scheduled_transaction(*built.tx);
        if let Some(key) = &self.admin_key {
            let key: hedera::PublicKey = key
                .parse()
                .map_err(|e| ToolError::message(format!("schedulingParams.adminKey: {e}")))?;
            schedule.admin_key(key);
        }
        if let Some(payer) = self.payer_account_id {
            schedule.payer_account_id(payer);
        }
        if let Some(at) = &self.expiration_time {
            schedule.expiration_time(parse_time(at)?);
        }
        schedule.wait_for_expiry(self.wait_for_expiry.unwrap_or(false));
        if let Some(nodes) = nodes {
            schedule.node_account_ids(nodes);
        }
        let mut wrapped = BuiltTransaction::new(schedule, "ScheduleCreateTransaction", Map::new());
        wrapped.details = details;
        Ok(wrapped)
    }
}

fn parse_time(text: &str) -> Result<OffsetDateTime, ToolError> {
    super::normalise::iso_time("schedulingParams.expirationTime", text)
}

/// Pull `schedulingParams` out of raw params (schema-valid) as typed input.
pub fn raw_from(raw: &Value) -> Result<Option<RawScheduling>, ToolError> {
    raw.get("schedulingParams")
        .map(|v| {
            RawScheduling::deserialize(v)
                .map_err(|e| ToolError::invalid_field("schedulingParams", e))
        })
        .transpose()
}
