//! 64-bit amounts arrive as signed decimal strings (tinybars, token base units) so that no
//! language loses precision. [`Amount`] reads them without going through floating point.

use serde::{Deserialize, Deserializer};

/// A signed integer amount in base units, read from a decimal string or a JSON integer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Amount(pub i128);

impl Amount {
    pub fn is_positive(self) -> bool {
        self.0 > 0
    }

    /// Read an amount from its raw JSON (a decimal string or a number, as found with
    /// [`crate::scan`]); plain digit strings take a fast path without serde.
    pub fn from_json(raw: &str) -> Result<Amount, String> {
        if let Some(v) = plain_integer(raw.as_bytes()) {
            return Ok(Amount(v.into()));
        }
        let raw = raw.trim();
        if let Some(inner) = raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
            if !inner.contains('\\') {
                return parse_decimal(inner).ok_or_else(|| format!("bad amount {inner:?}"));
            }
        }
        serde_json::from_str(raw).map_err(|e| e.to_string())
    }
}

/// `"123"`, `"-123"`, `123` or `-123` with at most 18 digits (no overflow is possible), read
/// by hand; anything else (whitespace, `+`, escapes, longer numbers) is left to the full path.
fn plain_integer(raw: &[u8]) -> Option<i64> {
    let inner = match raw {
        [b'"', inner @ .., b'"'] => inner,
        _ => raw,
    };
    let (negative, digits) = match inner {
        [b'-', digits @ ..] => (true, digits),
        _ => (false, inner),
    };
    if digits.is_empty() || digits.len() > 18 {
        return None;
    }
    let mut v: i64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        v = v * 10 + i64::from(d - b'0');
    }
    Some(if negative { -v } else { v })
}

/// A signed decimal integer: 64-bit first (every tinybar or base-unit amount fits, and i128
/// arithmetic is emulated in wasm, several times slower), then 128-bit.
fn parse_decimal(s: &str) -> Option<Amount> {
    if let Ok(v) = s.parse::<i64>() {
        return Some(Amount(v.into()));
    }
    s.parse::<i128>().ok().map(Amount)
}

impl<'de> Deserialize<'de> for Amount {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Amount;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an integer amount as a decimal string")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Amount, E> {
                parse_decimal(s).ok_or_else(|| E::custom(format!("bad amount {s:?}")))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Amount, E> {
                Ok(Amount(v.into()))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Amount, E> {
                Ok(Amount(v.into()))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Amount, E> {
                // Only integers are amounts; a fraction is kept by sign (enough for comparisons).
                Ok(Amount(if v > 0.0 {
                    v.ceil() as i128
                } else {
                    v.floor() as i128
                }))
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::Amount;

    #[test]
    fn reads_strings_and_numbers_like_serde() {
        for raw in [
            r#""100000000""#,
            r#""-5""#,
            r#""0""#,
            r#""170141183460469231731687303715884105727""#,
            "12",
            "-3",
            "0.5",
            "-0.25",
            r#""1\u0032""#,
            r#""x""#,
            r#""1.5""#,
            "true",
            r#"" 1""#,
            r#""007""#,
            r#""-0""#,
            r#""+5""#,
            r#""999999999999999999""#,
            r#""-999999999999999999""#,
            r#""9999999999999999999""#,
            "9223372036854775807",
            r#""-""#,
            r#""""#,
            "-",
            "1e3",
            r#""12a""#,
        ] {
            let fast = Amount::from_json(raw).ok();
            let serde = serde_json::from_str::<Amount>(raw).ok();
            assert_eq!(fast, serde, "{raw}");
        }
        assert_eq!(Amount::from_json(r#""1\u0032""#), Ok(Amount(12)));
    }
}
