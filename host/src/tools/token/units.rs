//! Token amounts: display units → int64 base units with the kit's `toBaseUnitLong` errors,
//! and a token's decimals as the mirror node reports them.

use crate::tools::js_number::Digits;
use crate::tools::normalise::decimal_to_base_units;
use crate::tools::{ToolContext, ToolError};

/// The token's decimals from the mirror (`GET /tokens/{id}`, the kit's `getTokenInfo`), or
/// `None` when the answer has none that parse (most tools then use 0, as the kit does).
pub fn token_decimals(
    ctx: &ToolContext<'_>,
    token: &hedera::TokenId,
) -> Result<Option<u32>, ToolError> {
    Ok(ctx.mirror.token(token)?.decimals())
}

/// The kit's `toBaseUnitLong(amount, decimals, label)`: `amount × 10^decimals` rounded toward
/// −∞ (BigNumber's `ROUND_FLOOR`), in exact decimal arithmetic on the number's shortest
/// decimal form (what `new BigNumber(n)` reads), refused above the HTS int64 maximum with the
/// kit's message. Below the int64 minimum hak refuses too (the kit's `Long.fromString` wraps
/// around: docs/CONFORMANCE.md).
pub fn to_base_units(amount: f64, decimals: u32, label: &str) -> Result<i64, ToolError> {
    // The common case (no excess decimals, within int64) needs no flooring and no allocation.
    if let Ok(units) = decimal_to_base_units(amount, decimals) {
        return Ok(units);
    }
    let Some(digits) = Digits::of(amount) else {
        // What the kit's BigNumber arithmetic gives an infinite amount (an amount string
        // "Infinity" reads as one): past the int64 bound, in the kit's words.
        return Err(if amount == f64::INFINITY {
            too_large("Infinity", label)
        } else if amount == f64::NEG_INFINITY {
            ToolError::message(format!(
                "{label} in base units (-Infinity) is below the HTS int64 minimum of {}",
                i64::MIN
            ))
        } else {
            ToolError::message(format!("{label} is not a number"))
        });
    };
    let floored = floor_scaled(&digits, decimals);
    match floored.parse::<i64>() {
        Ok(units) => Ok(units),
        Err(_) if floored.starts_with('-') => Err(ToolError::message(format!(
            "{label} in base units ({floored}) is below the HTS int64 minimum of {}",
            i64::MIN
        ))),
        Err(_) => Err(too_large(&floored, label)),
    }
}

/// `floor(amount × 10^decimals)` as decimal text, exactly (BigNumber's `multipliedBy` then
/// `integerValue(ROUND_FLOOR).toFixed()`, the kit's `toBaseUnit`), of any size; `None` for a
/// number that is not finite.
pub fn floor_base_units_text(amount: f64, decimals: u32) -> Option<String> {
    Digits::of(amount).map(|digits| floor_scaled(&digits, decimals))
}

/// `floor(number × 10^decimals)` as decimal text (`BigNumber#toFixed()` of the integer),
/// exactly, on the digits JavaScript reads the number as (`new BigNumber(n)` reads `String(n)`).
fn floor_scaled(number: &Digits, decimals: u32) -> String {
    let digits = number.digits();
    let shift = number.exponent + i64::from(decimals);
    let (mut whole, dropped_nonzero) = if shift >= 0 {
        let mut whole = digits.to_vec();
        whole.resize(whole.len() + shift as usize, 0);
        (whole, false)
    } else {
        let keep = digits.len().saturating_sub(shift.unsigned_abs() as usize);
        let dropped = digits[keep..].iter().any(|d| *d != 0);
        (digits[..keep].to_vec(), dropped)
    };
    if number.negative && dropped_nonzero {
        // Toward −∞: one more unit of magnitude.
        let mut i = whole.len();
        loop {
            if i == 0 {
                whole.insert(0, 1);
                break;
            }
            i -= 1;
            if whole[i] == 9 {
                whole[i] = 0;
            } else {
                whole[i] += 1;
                break;
            }
        }
    }
    let start = whole.iter().position(|d| *d != 0).unwrap_or(whole.len());
    if start == whole.len() {
        return "0".into();
    }
    let sign = if number.negative { "-" } else { "" };
    let text: String = whole[start..]
        .iter()
        .map(|d| char::from(b'0' + d))
        .collect();
    format!("{sign}{text}")
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
        // Exact: no floating-point product (123456789.12345679 × 10^8 in f64 is …680).
        assert_eq!(
            to_base_units(123_456_789.123_456_79, 8, "amount"),
            Ok(12_345_678_912_345_679)
        );
        assert_eq!(
            to_base_units(9.223_372_036_854_775, 18, "amount"),
            Ok(9_223_372_036_854_775_000)
        );
        assert_eq!(to_base_units(0.000_000_001, 8, "amount"), Ok(0));
        assert_eq!(to_base_units(-0.000_000_001, 8, "amount"), Ok(-1));
        assert_eq!(to_base_units(-1.5, 0, "amount"), Ok(-2));
        assert_eq!(to_base_units(-0.95, 1, "amount"), Ok(-10));
        assert_eq!(
            to_base_units(-1e19, 0, "amount").unwrap_err().message,
            "amount in base units (-10000000000000000000) is below the HTS int64 minimum of -9223372036854775808"
        );
        let err = to_base_units(1e18, 2, "Initial supply").unwrap_err();
        assert_eq!(err.message, "Initial supply in base units (100000000000000000000) exceeds the HTS int64 maximum of 9223372036854775807. HTS token amounts are stored as int64; use a smaller display-unit value.");
    }
}
