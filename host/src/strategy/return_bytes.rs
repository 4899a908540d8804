//! RETURN_BYTES: a transaction id for the context account, frozen for the configured nodes,
//! serialised. Nothing is signed or submitted.

use super::{SecondaryResult, StrategyEnv, StrategyError, TransactionStrategy};
use crate::tools::{BuiltTransaction, ToolError};
use hedera::TransactionId;
use serde::Serialize;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

/// The kit's `ReturnBytesResult` (bytes as 0x-hex).
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ReturnBytesResult {
    pub bytes: String,
    pub status: String,
    pub transaction_id: String,
    pub payer_account_id: String,
    #[serde(rename = "type")]
    pub type_name: String,
    pub expires_at: String,
    pub memo: String,
}

pub struct ReturnBytesStrategy;

impl TransactionStrategy for ReturnBytesStrategy {
    fn handle(
        &self,
        built: BuiltTransaction,
        env: &StrategyEnv<'_>,
    ) -> Result<SecondaryResult, StrategyError> {
        let payer = env.context.account_id.ok_or_else(|| {
            ToolError::message("Account ID is required in context for RETURN_BYTES mode")
        })?;
        let BuiltTransaction {
            mut tx, type_name, ..
        } = built;
        let id = TransactionId::generate(payer);
        tx.transaction_id(id);
        if tx.get_node_account_ids().is_none() {
            if env.node_account_ids.is_empty() {
                return Err(ToolError::message(
                    "no node account ids configured to freeze the transaction for",
                )
                .into());
            }
            tx.node_account_ids(env.node_account_ids.iter().copied());
        }
        tx.freeze()
            .map_err(|e| ToolError::message(format!("cannot freeze transaction: {e}")))?;
        let bytes = tx
            .to_bytes()
            .map_err(|e| ToolError::message(format!("cannot serialise transaction: {e}")))?;
        let valid_for = tx
            .get_transaction_valid_duration()
            .unwrap_or(time::Duration::seconds(120));
        Ok(SecondaryResult::Bytes(ReturnBytesResult {
            bytes: crate::tools::normalise::hex_0x(&bytes),
            status: "SUCCESS".into(),
            transaction_id: id.to_string(),
            payer_account_id: payer.to_string(),
            type_name: type_name.into(),
            expires_at: iso_millis(id.valid_start + valid_for),
            memo: tx.get_transaction_memo().to_owned(),
        }))
    }
}

/// JavaScript's `Date.toISOString()`: UTC with milliseconds, e.g. `2026-11-30T08:05:00.123Z`.
pub fn iso_millis(at: OffsetDateTime) -> String {
    let at = at.to_offset(time::UtcOffset::UTC);
    let at = at
        .replace_nanosecond(at.millisecond() as u32 * 1_000_000)
        .unwrap_or(at);
    let text = at.format(&Rfc3339).unwrap_or_default();
    // Rfc3339 drops trailing zero fractions; the kit always prints three digits.
    match text.split_once('.') {
        Some((secs, frac)) => format!("{secs}.{:0<3}Z", frac.trim_end_matches('Z')),
        None => format!("{}.000Z", text.trim_end_matches('Z')),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_has_three_fraction_digits() {
        let at = OffsetDateTime::from_unix_timestamp_nanos(1_700_000_000_120_000_000).unwrap();
        assert_eq!(iso_millis(at), "2023-11-14T22:13:20.120Z");
        let at = OffsetDateTime::from_unix_timestamp(1_700_000_000).unwrap();
        assert_eq!(iso_millis(at), "2023-11-14T22:13:20.000Z");
    }
}
