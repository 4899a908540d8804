//! What the tools' plain-params readers ([`crate::tools::Tool::read_plain`]) share: serde
//! helpers that accept exactly what a tool's schema accepts, and refuse (so the general path
//! words the error) whatever it would strip, refuse or read differently. What must not live
//! here: a tool's own fields or messages.

use crate::tools::js_number::is_integral_float;
use serde::{Deserialize, Deserializer};

/// An optional string key of a plain reader (`#[serde(default, deserialize_with = …)]`):
/// absent is `None`, a string is `Some`, and `null` — which the schema refuses as "Expected
/// string, received null" — is an error, so the general path reports it.
pub fn present_string<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    String::deserialize(d).map(Some)
}

/// A JSON number as the general path reads it into an `f64` (serde_json's `as_f64`), and
/// whether the text wrote it as a float although JavaScript reads it as an integer (`1.0`,
/// `1e3`: rawParams then shows it as `JSON.stringify` would, [`is_integral_float`]).
pub fn number(n: &serde_json::Number) -> (f64, bool) {
    (n.as_f64().unwrap_or(f64::NAN), is_integral_float(n))
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
