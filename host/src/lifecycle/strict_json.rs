//! The agent's params text parsed into a JSON value, refusing any object that repeats a key.
//! `serde_json` keeps the last of two equal keys while a guest reading the raw text in place
//! (`scan::field` in the guest SDKs) sees the first: a policy could approve one `transfers`
//! and the host execute the other. So repeated keys, at any depth, end the call at stage 1,
//! before any plugin sees it. serde_json has no switch for this and no kept crate offers a
//! checked `Value`, hence this small visitor; it builds the same `Value` serde_json would.

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::map::Entry;
use serde_json::{Map, Value};
use std::fmt;

/// Why a params text is not a JSON value hak reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseError {
    /// Not JSON, or an object with a repeated key (serde_json's words, with the position).
    Json(String),
    /// A number past what a double holds (`1e400`): JavaScript reads it as `Infinity`, which
    /// is no amount, id or count; named by field and as written.
    OutOfRange { field: String, written: String },
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::Json(message) => f.write_str(message),
            ParseError::OutOfRange { field, written } => write!(
                f,
                "Field \"{field}\" - {written} is past the largest number JSON carries here (a 64-bit double, at most 1.7976931348623157e308)"
            ),
        }
    }
}

/// serde_json's words for a number past a double, which the visitor tags with the path.
const OUT_OF_RANGE: &str = "number out of range";
/// The tag: the path follows it, up to the next `\u{0}`.
const AT_PATH: &str = "\u{0}hak-number-out-of-range\u{0}";

/// Parse `text` as JSON; an object with a repeated key is an error naming the key and its path.
pub fn parse(text: &str) -> Result<Value, ParseError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = Checked {
        parent: None,
        seg: None,
    }
    .deserialize(&mut de)
    .map_err(|e| error_in(text, &e))?;
    de.end().map_err(|e| ParseError::Json(e.to_string()))?;
    Ok(value)
}

/// `e` as a [`ParseError`]: a tagged out-of-range number named by its path and its text.
fn error_in(text: &str, e: &serde_json::Error) -> ParseError {
    let message = e.to_string();
    let Some((path, original)) = message
        .strip_prefix(AT_PATH)
        .and_then(|rest| rest.split_once('\u{0}'))
    else {
        return ParseError::Json(message);
    };
    // serde_json said where it stopped ("… at line L column C", 1-based): in the number.
    let (line, column) = original
        .rsplit_once(" at line ")
        .and_then(|(_, at)| at.split_once(" column "))
        .and_then(|(l, c)| Some((l.parse::<usize>().ok()?, c.parse::<usize>().ok()?)))
        .unwrap_or((e.line(), e.column()));
    let line_start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    let number = |b: u8| b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E');
    let bytes = text.as_bytes();
    let mut end = (line_start + column).min(bytes.len());
    while end < bytes.len() && number(bytes[end]) {
        end += 1;
    }
    let mut start = end;
    while start > 0 && number(bytes[start - 1]) {
        start -= 1;
    }
    ParseError::OutOfRange {
        field: path.to_owned(),
        written: text.get(start..end).unwrap_or_default().to_owned(),
    }
}

/// Tag serde_json's out-of-range error with the path of the value it was reading (once: the
/// innermost value names it).
fn tagged<E: de::Error>(e: E, at: &Checked<'_>) -> E {
    let message = e.to_string();
    if message.starts_with(OUT_OF_RANGE) {
        E::custom(format!("{AT_PATH}{}\u{0}{message}", at.field()))
    } else {
        e
    }
}

/// One step of the path to a value.
#[derive(Clone, Copy)]
enum Seg<'a> {
    Key(&'a str),
    Index(usize),
}

/// A value somewhere in the document: its path is only spelled out for an error, so parsing
/// allocates nothing beyond the `Value` itself.
#[derive(Clone, Copy)]
struct Checked<'p> {
    parent: Option<&'p Checked<'p>>,
    seg: Option<Seg<'p>>,
}

impl<'p> Checked<'p> {
    /// The steps from the top to this value.
    fn segs(&self) -> Vec<Seg<'p>> {
        let mut segs = Vec::new();
        let mut at = Some(self);
        while let Some(node) = at {
            segs.extend(node.seg);
            at = node.parent;
        }
        segs.reverse();
        segs
    }

    /// `transfers.0.amount`: the path as the kit's schema errors name a field.
    fn field(&self) -> String {
        let parts: Vec<String> = self
            .segs()
            .into_iter()
            .map(|seg| match seg {
                Seg::Key(k) => k.to_owned(),
                Seg::Index(i) => i.to_string(),
            })
            .collect();
        parts.join(".")
    }

    /// `transfers[0].accountId`, empty at the top.
    fn path(&self) -> String {
        let mut out = String::new();
        for seg in self.segs() {
            match seg {
                Seg::Key(k) if out.is_empty() => out.push_str(k),
                Seg::Key(k) => {
                    out.push('.');
                    out.push_str(k);
                }
                Seg::Index(i) => out.push_str(&format!("[{i}]")),
            }
        }
        out
    }
}

impl<'de> DeserializeSeed<'de> for Checked<'_> {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Checked<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        loop {
            let here = Checked {
                parent: Some(&self),
                seg: Some(Seg::Index(items.len())),
            };
            match seq.next_element_seed(here) {
                Ok(Some(item)) => items.push(item),
                Ok(None) => break,
                Err(e) => return Err(tagged(e, &here)),
            }
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            // One lookup per key: the vacant entry is filled once its value is read.
            match out.entry(key) {
                Entry::Occupied(seen) => {
                    let here = Checked {
                        parent: Some(&self),
                        seg: Some(Seg::Key(seen.key())),
                    };
                    return Err(de::Error::custom(format!(
                        "the key \"{}\" appears twice (at \"{}\"); repeated keys are refused",
                        seen.key(),
                        here.path()
                    )));
                }
                Entry::Vacant(slot) => {
                    let here = Checked {
                        parent: Some(&self),
                        seg: Some(Seg::Key(slot.key())),
                    };
                    let value = map.next_value_seed(here).map_err(|e| tagged(e, &here))?;
                    slot.insert(value);
                }
            }
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::parse;
    use serde_json::json;

    #[test]
    fn same_value_as_serde_json() {
        let text = r#"{"a":[1,-2,3.5,"x",null,true,{"b":{}}],"c":18446744073709551615}"#;
        assert_eq!(
            parse(text).unwrap(),
            serde_json::from_str::<serde_json::Value>(text).unwrap()
        );
        assert_eq!(parse(" 1 ").unwrap(), json!(1));
        assert!(parse("{} x").is_err());
    }

    #[test]
    fn a_number_past_a_double_is_named_by_field_and_as_written() {
        use super::ParseError;
        let top = parse(r#"{"tokenName":"T","initialSupply":1e400}"#).unwrap_err();
        assert_eq!(
            top,
            ParseError::OutOfRange {
                field: "initialSupply".into(),
                written: "1e400".into()
            }
        );
        assert!(top.to_string().starts_with(
            "Field \"initialSupply\" - 1e400 is past the largest number JSON carries here"
        ));
        let deep = parse("{\"transfers\":[{\"accountId\":\"0.0.2\",\n \"amount\": -2.5E+999 }]}")
            .unwrap_err();
        assert_eq!(
            deep,
            ParseError::OutOfRange {
                field: "transfers.0.amount".into(),
                written: "-2.5E+999".into()
            }
        );
        let listed = parse("[1, 2, 1e999]").unwrap_err();
        assert_eq!(
            listed,
            ParseError::OutOfRange {
                field: "2".into(),
                written: "1e999".into()
            }
        );
        // Anything else keeps serde_json's words; a bare number has no field to name.
        assert!(
            matches!(parse("1e400"), Err(ParseError::Json(m)) if m.starts_with("number out of range"))
        );
        assert!(matches!(parse("{\"a\":}"), Err(ParseError::Json(_))));
    }

    #[test]
    fn repeated_keys_are_named_at_any_depth() {
        let top = parse(r#"{"transfers":[],"transfers":[1]}"#)
            .unwrap_err()
            .to_string();
        assert!(top.contains("\"transfers\" appears twice"), "{top}");
        let deep = parse(r#"{"transfers":[{"accountId":"0.0.1","accountId":"0.0.2"}]}"#)
            .unwrap_err()
            .to_string();
        assert!(deep.contains("transfers[0].accountId"), "{deep}");
    }
}
