//! What the tools' plain-params readers ([`crate::tools::Tool::read_plain`]) share: [`Text`],
//! a strict reader of the JSON subset plain params are written in, which declines (so the
//! general path reads the text and words any error) whatever the schema would strip, refuse
//! or read differently; and, for tests, the serde reading a hand reader is held to. What must
//! not live here: a tool's own fields or messages.

#[cfg(test)]
use crate::tools::js_number::is_integral_float;
#[cfg(test)]
use serde::{Deserialize, Deserializer};

/// An optional string key as serde reads it (`#[serde(default, deserialize_with = …)]`):
/// absent is `None`, a string is `Some`, and `null` — which the schema refuses as "Expected
/// string, received null" — is an error. The reference a hand reader's test compares with.
#[cfg(test)]
pub fn present_string<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    String::deserialize(d).map(Some)
}

/// A JSON number as the general path reads it into an `f64` (serde_json's `as_f64`), and
/// whether the text wrote it as a float although JavaScript reads it as an integer (`1.0`,
/// `1e3`: rawParams then shows it as `JSON.stringify` would, [`is_integral_float`]). The
/// reference a hand reader's test compares with.
#[cfg(test)]
pub fn number(n: &serde_json::Number) -> (f64, bool) {
    (n.as_f64().unwrap_or(f64::NAN), is_integral_float(n))
}

/// A reader of plain params' JSON text that accepts a strict subset of JSON and declines
/// (`None`) everything else, so the general path (serde and the schema) reads it: strings
/// without escapes or control characters, numbers without exponents, leading zeros or an
/// integral value written as a fraction (`1.0`, `-0`, which the general path shows as
/// JavaScript would), at most 18 integer or 17 significant digits. What it accepts it reads
/// exactly as serde_json does.
///
/// Why by hand: serde's derived reader of `transfer_hbar_tool`'s params (~120 bytes) counted
/// ~3,500 instructions, a fifth of a call without plugins (visitor dispatch per key, a
/// `String` and a `Vec` growth per value); this reader takes a few hundred.
pub struct Text<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Text<'a> {
    pub fn new(text: &'a str) -> Self {
        Text { text, at: 0 }
    }

    fn skip_ws(&mut self) {
        let s = self.text.as_bytes();
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = s.get(self.at) {
            self.at += 1;
        }
    }

    /// The next byte after whitespace, not taken.
    pub fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.text.as_bytes().get(self.at).copied()
    }

    /// The next byte after whitespace, taken.
    pub fn next_byte(&mut self) -> Option<u8> {
        let b = self.peek()?;
        self.at += 1;
        Some(b)
    }

    /// Take `byte` (after whitespace), or decline.
    pub fn eat(&mut self, byte: u8) -> Option<()> {
        (self.next_byte()? == byte).then_some(())
    }

    /// A string without escapes or control characters (serde refuses the latter; the former
    /// it would unescape).
    pub fn string(&mut self) -> Option<&'a str> {
        self.eat(b'"')?;
        let s = self.text.as_bytes();
        let start = self.at;
        let len = crate::tools::json_text::unescaped_len(&s[start..]);
        if s.get(start + len) != Some(&b'"') {
            return None;
        }
        self.at = start + len + 1;
        // Both ends are ASCII quotes: character boundaries.
        self.text.get(start..start + len)
    }

    /// A number as serde_json reads it into an `f64` (an integer through `u64` / `i64`, a
    /// fraction correctly rounded, as `float_roundtrip` does).
    pub fn number(&mut self) -> Option<f64> {
        self.skip_ws();
        let s = self.text.as_bytes();
        let start = self.at;
        let mut i = start + usize::from(s.get(start) == Some(&b'-'));
        let int_start = i;
        while s.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        let int_digits = i - int_start;
        if int_digits == 0 || (int_digits > 1 && s[int_start] == b'0') {
            return None;
        }
        let mut frac_digits = 0;
        let mut frac_zero = true;
        if s.get(i) == Some(&b'.') {
            i += 1;
            while let Some(d) = s.get(i).filter(|d| d.is_ascii_digit()) {
                frac_zero &= *d == b'0';
                frac_digits += 1;
                i += 1;
            }
            if frac_digits == 0 || frac_zero {
                return None;
            }
        }
        if matches!(s.get(i), Some(b'e' | b'E')) {
            return None;
        }
        let written = &self.text[start..i];
        let value = if frac_digits == 0 {
            // `-0` is a float to serde_json (an integral one, shown as JavaScript would).
            if int_digits > 18 || written == "-0" {
                return None;
            }
            // serde_json: a negative integer is an i64, a positive one a u64, then `as f64`.
            let n: i64 = written.parse().ok()?;
            n as f64
        } else {
            if int_digits + frac_digits > 17 {
                return None;
            }
            let value: f64 = written.parse().ok()?;
            // A fraction too small for the float (`…146.2` above 2^52) is read as an
            // integral float, shown as JavaScript would: the general path's case.
            if value.fract() == 0.0 {
                return None;
            }
            value
        };
        self.at = i;
        Some(value)
    }

    /// Only whitespace is left.
    pub fn end(&mut self) -> Option<()> {
        self.skip_ws();
        (self.at == self.text.len()).then_some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    struct Memo {
        #[serde(default, deserialize_with = "present_string")]
        memo: Option<String>,
    }

    #[test]
    fn an_optional_string_is_absent_or_a_string_never_null() {
        assert_eq!(serde_json::from_str::<Memo>("{}").unwrap().memo, None);
        assert_eq!(
            serde_json::from_str::<Memo>(r#"{"memo":"a"}"#)
                .unwrap()
                .memo
                .as_deref(),
            Some("a")
        );
        assert!(serde_json::from_str::<Memo>(r#"{"memo":null}"#).is_err());
        assert!(serde_json::from_str::<Memo>(r#"{"memo":1}"#).is_err());
    }

    #[test]
    fn numbers_read_as_the_general_path_reads_them() {
        let n = |t: &str| number(&serde_json::from_str(t).unwrap());
        assert_eq!(n("1"), (1.0, false));
        assert_eq!(n("0.5"), (0.5, false));
        assert_eq!(n("1.0"), (1.0, true));
        assert_eq!(n("1e3"), (1000.0, true));
        assert_eq!(n("-2"), (-2.0, false));
        assert_eq!(
            n("18446744073709551615"),
            (18446744073709551615u64 as f64, false)
        );
    }
}
