//! Token amounts: display units → int64 base units with the kit's `toBaseUnitLong` errors,
//! and a token's decimals as the mirror node reports them.

use crate::tools::normalise::{decimal_to_base_units, UnitsError};
use crate::tools::{ToolContext, ToolError};
use serde_json::Value;

/// The token's decimals from the mirror (`GET /tokens/{id}`, the kit's `getTokenInfo`), or
/// `None` when the answer has none that parse (most tools then use 0, as the kit does).
pub fn token_decimals(
    ctx: &ToolContext<'_>,
    token: &hedera::TokenId,
) -> Result<Option<u32>, ToolError> {
    let info = ctx.mirror_get(&format!("/tokens/{token}")).map_err(|e| {
        ToolError::message(format!("Failed to get token info for a token {token}: {e}"))
    })?;
    Ok(match &info["decimals"] {
        Value::String(text) => text.trim().parse::<u32>().ok(),
        Value::Number(n) => n.as_u64().and_then(|d| u32::try_from(d).ok()),
        _ => None,
    })
}

/// The kit's `toBaseUnitLong(amount, decimals, label)`: `amount × 10^decimals` rounded down,
/// refused above the HTS int64 maximum with the kit's message.
pub fn to_base_units(amount: f64, decimals: u32, label: &str) -> Result<i64, ToolError> {
    let floored = |a: f64| decimal_to_base_units(a, decimals);
    match floored(amount) {
        Ok(units) => Ok(units),
        Err(UnitsError::Fraction) => {
            // Round toward −∞ like BigNumber's ROUND_FLOOR: drop the excess decimals first.
            let scale = 10f64.powi(decimals as i32);
            let whole = (amount * scale).floor();
            decimal_to_base_units(whole, 0).map_err(|_| too_large(&format!("{whole}"), label))
        }
        Err(UnitsError::Range) => {
            let digits = format!("{amount}");
            let shown = if decimals == 0 || !digits.bytes().all(|b| b.is_ascii_digit()) {
                digits
            } else {
                format!("{digits}{}", "0".repeat(decimals as usize))
            };
            Err(too_large(&shown, label))
        }
    }
}

fn too_large(shown: &str, label: &str) -> ToolError {
    ToolError::message(format!(
        "{label} in base units ({shown}) exceeds the HTS int64 maximum of {}. HTS token amounts are stored as int64; use a smaller display-unit value.",
        i64::MAX
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_amounts_scale_by_decimals() {
        assert_eq!(to_base_units(1_000_000.0, 2, "Max supply"), Ok(100_000_000));
        assert_eq!(to_base_units(0.0, 8, "Initial supply"), Ok(0));
        assert_eq!(to_base_units(1.239, 2, "amount"), Ok(123));
        let err = to_base_units(1e18, 2, "Initial supply").unwrap_err();
        assert_eq!(err.message, "Initial supply in base units (100000000000000000000) exceeds the HTS int64 maximum of 9223372036854775807. HTS token amounts are stored as int64; use a smaller display-unit value.");
    }
}
