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
/// by hand, eight digits at a time; anything else (whitespace, `+`, escapes, longer numbers)
/// is left to the full path.
#[inline(always)]
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
    let mut v: u64 = 0;
    let mut rest = digits;
    while let Some((chunk, tail)) = rest.split_first_chunk::<8>() {
        v = v * 100_000_000 + eight_digits(u64::from_le_bytes(*chunk))?;
        rest = tail;
    }
    for &d in rest {
        let d = d.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v * 10 + u64::from(d);
    }
    // At most 18 digits: below 10^18 < 2^63.
    let v = v as i64;
    Some(if negative { -v } else { v })
}

/// Eight ASCII digits (the first in the lowest byte) as their number, `None` when a byte is
/// not a digit: three multiplications instead of eight rounds of a byte loop (an amount of
/// tinybars has 8–11 digits).
#[inline(always)]
fn eight_digits(w: u64) -> Option<u64> {
    const NIBBLES: u64 = 0xF0F0_F0F0_F0F0_F0F0;
    // Every byte 0x30..=0x39: its high nibble is 3, and adding 6 keeps it 3.
    let high = w & NIBBLES;
    let plus_six = w.wrapping_add(0x0606_0606_0606_0606) & NIBBLES;
    if high | (plus_six >> 4) != 0x3333_3333_3333_3333 {
        return None;
    }
    let v = w & 0x0F0F_0F0F_0F0F_0F0F;
    let v = v.wrapping_mul(10 * (1 << 8) + 1) >> 8;
    let v = (v & 0x00FF_00FF_00FF_00FF).wrapping_mul(100 * (1 << 16) + 1) >> 16;
    Some((v & 0x0000_FFFF_0000_FFFF).wrapping_mul(10_000 * (1 << 32) + 1) >> 32)
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

    /// The eight-at-a-time reader reads every digit string of 1–20 digits as serde does, and
    /// refuses (to the full path) any with a byte that is not a digit, at every position.
    #[test]
    fn digit_strings_read_as_serde_reads_them() {
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for len in 1..=20 {
            for round in 0..300 {
                let mut digits: Vec<u8> = (0..len).map(|_| b'0' + (next() % 10) as u8).collect();
                if round % 3 == 1 {
                    // A byte just outside the digits, or anything, somewhere.
                    let at = (next() % len as u64) as usize;
                    digits[at] =
                        [b'/', b':', b'a', b' ', 0xC3, b'\x00', b'.'][(next() % 7) as usize];
                }
                let digits = String::from_utf8_lossy(&digits).into_owned();
                for raw in [
                    format!("\"{digits}\""),
                    format!("\"-{digits}\""),
                    digits.clone(),
                ] {
                    let fast = Amount::from_json(&raw).ok();
                    let serde = serde_json::from_str::<Amount>(&raw).ok();
                    if raw.starts_with('"') || serde.is_some() {
                        assert_eq!(fast, serde, "{raw}");
                    }
                    if let Some(plain) = super::plain_integer(raw.as_bytes()) {
                        let inner = raw.trim_matches('"');
                        assert_eq!(Some(i128::from(plain)), inner.parse::<i128>().ok(), "{raw}");
                    }
                }
            }
        }
        assert_eq!(
            super::eight_digits(u64::from_le_bytes(*b"12345678")),
            Some(12_345_678)
        );
        assert_eq!(super::eight_digits(u64::from_le_bytes(*b"1234567:")), None);
    }
}
