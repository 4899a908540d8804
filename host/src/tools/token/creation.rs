//! What the two token-creating tools share: the supply type, a `TokenCreateTransaction` with
//! the JS SDK's defaults, and the kit's success message.

use crate::tools::{RawTransactionResponse, ToolError};
use hedera::{TokenCreateTransaction, TokenSupplyType};
use serde::{Deserialize, Serialize};

/// The JS SDK's `DEFAULT_AUTO_RENEW_PERIOD` (90 days, as the Rust SDK's default).
const AUTO_RENEW_SECONDS: i64 = 7_776_000;

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SupplyType {
    Finite,
    Infinite,
}

/// A `TokenCreateTransaction` as the JS SDK's constructor leaves it: expiry now + 7,776,000 s
/// (whole seconds) and the same auto-renew period, so the bodies equal the kit's.
pub fn js_token_create() -> TokenCreateTransaction {
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let expiry = time::OffsetDateTime::from_unix_timestamp(now + AUTO_RENEW_SECONDS)
        .unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
    let mut tx = TokenCreateTransaction::new();
    // Expiry first: setting it clears the period.
    tx.expiration_time(expiry)
        .auto_renew_period(time::Duration::seconds(AUTO_RENEW_SECONDS));
    tx
}

/// A finite supply needs a positive max supply (an infinite one ignores it).
pub fn check_supply(supply_type: SupplyType, max_supply: Option<i64>) -> Result<(), ToolError> {
    match (supply_type, max_supply) {
        (SupplyType::Finite, Some(max)) if max <= 0 => Err(ToolError::invalid_field(
            "maxSupply",
            "Number must be greater than 0",
        )),
        (SupplyType::Finite, None) => Err(ToolError::invalid_field(
            "maxSupply",
            "a finite supply needs a max supply",
        )),
        _ => Ok(()),
    }
}

/// Put the supply type (and, when finite, the max supply) on the transaction.
pub fn set_supply(
    tx: &mut TokenCreateTransaction,
    supply_type: SupplyType,
    max_supply: Option<i64>,
) {
    match (supply_type, max_supply) {
        (SupplyType::Finite, Some(max)) => {
            tx.token_supply_type(TokenSupplyType::Finite)
                .max_supply(max as u64);
        }
        _ => {
            tx.token_supply_type(TokenSupplyType::Infinite);
        }
    }
}

/// The kit's message after a token creation (or its scheduling).
pub fn created_message(raw: &RawTransactionResponse) -> String {
    if let Some(schedule) = &raw.schedule_id {
        return format!(
            "Scheduled transaction created successfully.\nTransaction ID: {}\nSchedule ID: {schedule}",
            raw.transaction_id
        );
    }
    format!(
        "Token created successfully.\nTransaction ID: {}\nToken ID: {}",
        raw.transaction_id,
        raw.token_id.as_deref().unwrap_or("unknown")
    )
}
