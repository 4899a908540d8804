//! The agent's params text parsed into a JSON value, refusing any object that repeats a key.
//! `serde_json` keeps the last of two equal keys while a guest reading the raw text in place
//! (`scan::field` in the guest SDKs) sees the first: a policy could approve one `transfers`
//! and the host execute the other. So repeated keys, at any depth, end the call at stage 1,
//! before any plugin sees it. serde_json has no switch for this and no kept crate offers a
//! checked `Value`, hence this small visitor; it builds the same `Value` serde_json would.

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::fmt;

/// Parse `text` as JSON; an object with a repeated key is an error naming the key and its path.
pub fn parse(text: &str) -> Result<Value, String> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = Checked {
        parent: None,
        seg: None,
    }
    .deserialize(&mut de)
    .map_err(|e| e.to_string())?;
    de.end().map_err(|e| e.to_string())?;
    Ok(value)
}

/// One step of the path to a value.
#[derive(Clone, Copy)]
enum Seg<'a> {
    Key(&'a str),
    Index(usize),
}

/// A value somewhere in the document: its path is only spelled out for an error, so parsing
/// allocates nothing beyond the `Value` itself.
struct Checked<'p> {
    parent: Option<&'p Checked<'p>>,
    seg: Option<Seg<'p>>,
}

impl Checked<'_> {
    /// `transfers[0].accountId`, empty at the top.
    fn path(&self) -> String {
        let mut segs = Vec::new();
        let mut at = Some(self);
        while let Some(node) = at {
            segs.extend(node.seg);
            at = node.parent;
        }
        let mut out = String::new();
        for seg in segs.into_iter().rev() {
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
        while let Some(item) = seq.next_element_seed(Checked {
            parent: Some(&self),
            seg: Some(Seg::Index(items.len())),
        })? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let here = Checked {
                parent: Some(&self),
                seg: Some(Seg::Key(&key)),
            };
            if out.contains_key(&key) {
                return Err(de::Error::custom(format!(
                    "the key \"{key}\" appears twice (at \"{}\"); repeated keys are refused",
                    here.path()
                )));
            }
            let value = map.next_value_seed(here)?;
            out.insert(key, value);
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
    fn repeated_keys_are_named_at_any_depth() {
        let top = parse(r#"{"transfers":[],"transfers":[1]}"#).unwrap_err();
        assert!(top.contains("\"transfers\" appears twice"), "{top}");
        let deep =
            parse(r#"{"transfers":[{"accountId":"0.0.1","accountId":"0.0.2"}]}"#).unwrap_err();
        assert!(deep.contains("transfers[0].accountId"), "{deep}");
    }
}
