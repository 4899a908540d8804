//! Validation of tool parameters against the kit's JSON schemas (the subset the kit's zod
//! schemas produce: type, properties, required, additionalProperties, items, min/maxItems,
//! minimum, maxLength, enum). Every bad field is reported, zod-style:
//! `Invalid parameters: Field "transfers.0.amount" - Expected number, received string; …`.

use serde_json::{Map, Value};

/// Validate `value` against `schema`; `Err` holds the kit-style message naming every bad field.
pub fn validate(schema: &Value, value: &Value) -> Result<(), String> {
    let mut issues = Vec::new();
    check(schema, value, &mut String::new(), &mut issues);
    if issues.is_empty() {
        Ok(())
    } else {
        let fields: Vec<String> = issues
            .iter()
            .map(|(path, msg)| format!("Field \"{path}\" - {msg}"))
            .collect();
        Err(format!("Invalid parameters: {}", fields.join("; ")))
    }
}

fn received(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn type_matches(ty: &str, value: &Value) -> bool {
    match ty {
        "string" => value.is_string(),
        "number" => value.is_number(),
        "integer" => value.as_f64().is_some_and(|f| f.fract() == 0.0),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "null" => value.is_null(),
        _ => true,
    }
}

fn push_path(path: &mut String, key: &str) -> usize {
    let len = path.len();
    if !path.is_empty() {
        path.push('.');
    }
    path.push_str(key);
    len
}

fn check(schema: &Value, value: &Value, path: &mut String, issues: &mut Vec<(String, String)>) {
    let Some(schema) = schema.as_object() else {
        return;
    };
    if let Some(ty) = schema.get("type") {
        let types: Vec<&str> = match ty {
            Value::String(s) => vec![s.as_str()],
            Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        if !types.is_empty() && !types.iter().any(|t| type_matches(t, value)) {
            let message = if types == ["integer"] && value.is_number() {
                "Expected integer, received float".to_owned()
            } else if types.len() > 1 {
                format!(
                    "Expected {}, received {}",
                    types.join(" | "),
                    received(value)
                )
            } else {
                format!("Expected {}, received {}", types[0], received(value))
            };
            issues.push((path.clone(), message));
            return;
        }
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array) {
        if !options.contains(value) {
            let expected: Vec<String> = options.iter().map(quote).collect();
            issues.push((
                path.clone(),
                format!(
                    "Invalid enum value. Expected {}, received {}",
                    expected.join(" | "),
                    quote(value)
                ),
            ));
        }
    }
    match value {
        Value::Object(map) => check_object(schema, map, path, issues),
        Value::Array(items) => check_array(schema, items, path, issues),
        Value::Number(n) => {
            let x = n.as_f64().unwrap_or(0.0);
            if let Some(min) = schema.get("minimum").and_then(Value::as_f64) {
                if x < min {
                    issues.push((
                        path.clone(),
                        format!("Number must be greater than or equal to {min}"),
                    ));
                }
            }
            if let Some(min) = schema.get("exclusiveMinimum").and_then(Value::as_f64) {
                if x <= min {
                    issues.push((path.clone(), format!("Number must be greater than {min}")));
                }
            }
        }
        Value::String(s) => {
            if let Some(max) = schema.get("maxLength").and_then(Value::as_u64) {
                if s.chars().count() as u64 > max {
                    issues.push((
                        path.clone(),
                        format!("String must contain at most {max} character(s)"),
                    ));
                }
            }
        }
        _ => {}
    }
}

fn quote(v: &Value) -> String {
    match v {
        Value::String(s) => format!("'{s}'"),
        other => other.to_string(),
    }
}

fn check_object(
    schema: &Map<String, Value>,
    map: &Map<String, Value>,
    path: &mut String,
    issues: &mut Vec<(String, String)>,
) {
    let properties = schema.get("properties").and_then(Value::as_object);
    if let Some(required) = schema.get("required").and_then(Value::as_array) {
        for key in required.iter().filter_map(Value::as_str) {
            if !map.contains_key(key) {
                let len = push_path(path, key);
                issues.push((path.clone(), "Required".into()));
                path.truncate(len);
            }
        }
    }
    let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
    for (key, item) in map {
        let len = push_path(path, key);
        match properties.and_then(|p| p.get(key)) {
            Some(sub) => check(sub, item, path, issues),
            None if closed => issues.push((path.clone(), "Unrecognized key".into())),
            None => {}
        }
        path.truncate(len);
    }
}

fn check_array(
    schema: &Map<String, Value>,
    items: &[Value],
    path: &mut String,
    issues: &mut Vec<(String, String)>,
) {
    if let Some(min) = schema.get("minItems").and_then(Value::as_u64) {
        if (items.len() as u64) < min {
            issues.push((
                path.clone(),
                format!("Array must contain at least {min} element(s)"),
            ));
        }
    }
    if let Some(max) = schema.get("maxItems").and_then(Value::as_u64) {
        if items.len() as u64 > max {
            issues.push((
                path.clone(),
                format!("Array must contain at most {max} element(s)"),
            ));
        }
    }
    if let Some(item_schema) = schema.get("items") {
        for (i, item) in items.iter().enumerate() {
            let len = push_path(path, &i.to_string());
            check(item_schema, item, path, issues);
            path.truncate(len);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type":"object","properties":{
            "transfers":{"type":"array","minItems":1,"items":{"type":"object",
                "properties":{"accountId":{"type":"string"},"amount":{"type":"number"}},
                "required":["accountId","amount"],"additionalProperties":false}},
            "memo":{"type":"string","maxLength":3},
            "kind":{"type":"string","enum":["finite","infinite"]},
            "key":{"type":["boolean","string"]}},
            "required":["transfers"],"additionalProperties":false})
    }

    #[test]
    fn valid_input_passes() {
        let v =
            json!({"transfers":[{"accountId":"0.0.2","amount":1.5}],"key":true,"kind":"finite"});
        assert_eq!(validate(&schema(), &v), Ok(()));
    }

    #[test]
    fn names_every_bad_field() {
        let v = json!({"transfers":[{"accountId":2,"amount":"1"},{"amount":1}],"memo":"toolong","extra":1,"key":3,"kind":"x"});
        let err = validate(&schema(), &v).unwrap_err();
        assert!(err.starts_with("Invalid parameters: "), "{err}");
        for part in [
            "Field \"transfers.0.accountId\" - Expected string, received number",
            "Field \"transfers.0.amount\" - Expected number, received string",
            "Field \"transfers.1.accountId\" - Required",
            "Field \"memo\" - String must contain at most 3 character(s)",
            "Field \"extra\" - Unrecognized key",
            "Field \"key\" - Expected boolean | string, received number",
            "Field \"kind\" - Invalid enum value. Expected 'finite' | 'infinite', received 'x'",
        ] {
            assert!(err.contains(part), "missing {part:?} in {err}");
        }
    }

    #[test]
    fn missing_and_empty() {
        assert_eq!(
            validate(&schema(), &json!({})).unwrap_err(),
            "Invalid parameters: Field \"transfers\" - Required"
        );
        assert_eq!(
            validate(&schema(), &json!({"transfers":[]})).unwrap_err(),
            "Invalid parameters: Field \"transfers\" - Array must contain at least 1 element(s)"
        );
        assert_eq!(
            validate(&schema(), &json!([1])).unwrap_err(),
            "Invalid parameters: Field \"\" - Expected object, received array"
        );
    }
}
