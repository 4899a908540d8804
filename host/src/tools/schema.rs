//! Validation of tool parameters against the kit's JSON schemas (the subset the kit's zod
//! schemas produce: type, properties, required, additionalProperties, items, min/maxItems,
//! minimum, maxLength, enum), the way zod parses: keys in the schema's order, unknown keys
//! ignored unless refused, lengths in UTF-16 units, unions failing as "Invalid input". Every
//! bad field is reported, zod-style:
//! `Invalid parameters: Field "transfers.0.amount" - Expected number, received string; …`.

use serde_json::{Map, Value};

/// What validation does with keys an object's schema does not name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UnknownKeys {
    /// Ignore them, as the kit's zod schemas do (they strip unknown keys): the default.
    #[default]
    Strip,
    /// Refuse them (`[context] strict_params = true`): `Field "x" - Unrecognized key`.
    Refuse,
}

/// A JSON schema compiled once (per tool, at start-up) into a tree the validator walks
/// without looking anything up by name.
#[derive(Debug, Clone, Default)]
pub struct Schema {
    types: Vec<JsonType>,
    /// From `anyOf`: a zod union, which fails as a whole ("Invalid input").
    union: bool,
    enum_values: Option<Vec<Value>>,
    properties: Vec<(String, Schema)>,
    required: Vec<String>,
    closed: bool,
    items: Option<Box<Schema>>,
    min_items: Option<u64>,
    max_items: Option<u64>,
    minimum: Option<f64>,
    exclusive_minimum: Option<f64>,
    max_length: Option<u64>,
    /// `format: date-time`: zod's `datetime()`.
    datetime: bool,
    /// An integer the tool converts itself (display units to base units) and refuses past
    /// int64 in its own words: the int64 bound is left to it ([`Schema::bounded_by_the_tool`]).
    bounded_by_tool: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum JsonType {
    String,
    Number,
    Integer,
    Boolean,
    Array,
    Object,
    Null,
}

impl JsonType {
    fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "string" => JsonType::String,
            "number" => JsonType::Number,
            "integer" => JsonType::Integer,
            "boolean" => JsonType::Boolean,
            "array" => JsonType::Array,
            "object" => JsonType::Object,
            "null" => JsonType::Null,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            JsonType::String => "string",
            JsonType::Number => "number",
            JsonType::Integer => "integer",
            JsonType::Boolean => "boolean",
            JsonType::Array => "array",
            JsonType::Object => "object",
            JsonType::Null => "null",
        }
    }

    fn matches(self, value: &Value) -> bool {
        match self {
            JsonType::String => value.is_string(),
            JsonType::Number => value.is_number(),
            JsonType::Integer => value.as_f64().is_some_and(|f| f.fract() == 0.0),
            JsonType::Boolean => value.is_boolean(),
            JsonType::Array => value.is_array(),
            JsonType::Object => value.is_object(),
            JsonType::Null => value.is_null(),
        }
    }
}

impl Schema {
    /// Compile the subset of JSON schema the kit's tools use.
    pub fn compile(schema: &Value) -> Self {
        let Some(s) = schema.as_object() else {
            return Schema::default();
        };
        let types = match s.get("type") {
            Some(Value::String(t)) => JsonType::parse(t).into_iter().collect(),
            Some(Value::Array(ts)) => ts
                .iter()
                .filter_map(Value::as_str)
                .filter_map(JsonType::parse)
                .collect(),
            _ => Vec::new(),
        };
        // `anyOf` (a zod union; branches without a type, such as `instanceof Date`, admit no
        // JSON value here).
        let branches = s.get("anyOf").and_then(Value::as_array);
        let types = match branches {
            Some(branches) => branches
                .iter()
                .filter_map(|b| b.get("type").and_then(Value::as_str))
                .filter_map(JsonType::parse)
                .collect(),
            None => types,
        };
        let properties = s
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| {
                p.iter()
                    .map(|(k, v)| (k.clone(), Schema::compile(v)))
                    .collect()
            })
            .unwrap_or_default();
        let required = s
            .get("required")
            .and_then(Value::as_array)
            .map(|r| {
                r.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        Schema {
            types,
            union: branches.is_some(),
            enum_values: s.get("enum").and_then(Value::as_array).cloned(),
            properties,
            required,
            closed: s.get("additionalProperties") == Some(&Value::Bool(false)),
            items: s.get("items").map(|i| Box::new(Schema::compile(i))),
            min_items: s.get("minItems").and_then(Value::as_u64),
            max_items: s.get("maxItems").and_then(Value::as_u64),
            minimum: s.get("minimum").and_then(Value::as_f64),
            exclusive_minimum: s.get("exclusiveMinimum").and_then(Value::as_f64),
            max_length: s.get("maxLength").and_then(Value::as_u64),
            datetime: s.get("format").and_then(Value::as_str) == Some("date-time"),
            bounded_by_tool: false,
        }
    }

    /// Leave the int64 bound of the top-level integer `fields` to the tool, which converts
    /// them to base units and refuses what int64 cannot hold naming the base units, as the
    /// kit does.
    pub fn bounded_by_the_tool(mut self, fields: &[&str]) -> Self {
        for (name, property) in &mut self.properties {
            if fields.contains(&name.as_str()) {
                property.bounded_by_tool = true;
            }
        }
        self
    }

    /// Validate `value` the way the kit's zod schemas parse it: keys the schema does not name
    /// are ignored (zod strips them); `Err` holds the kit-style message naming every bad field.
    pub fn validate(&self, value: &Value) -> Result<(), String> {
        self.validate_with(value, UnknownKeys::Strip)
    }

    /// Validate `value`, treating keys the schema does not name as `unknown` says.
    pub fn validate_with(&self, value: &Value, unknown: UnknownKeys) -> Result<(), String> {
        let mut issues = Vec::new();
        self.check(value, &mut String::new(), unknown, &mut issues);
        if issues.is_empty() {
            return Ok(());
        }
        Err(words(&issues))
    }

    /// The kit's refusal of a number past a double at `path` (`a.0.b`): JavaScript reads it
    /// as ±Infinity, which `z.number().int()` refuses as a float (then its minimum, for
    /// -Infinity). `None` where the schema names no integer field: a plain `z.number()` takes
    /// Infinity, so the kit has no words of its own for it.
    pub fn infinity_refusal(&self, path: &str, negative: bool) -> Option<String> {
        let mut at = self;
        for segment in path.split('.') {
            at = match (&at.items, segment.parse::<usize>()) {
                (Some(items), Ok(_)) => items,
                _ => &at.properties.iter().find(|(name, _)| name == segment)?.1,
            };
        }
        let integer = !at.union
            && at.types.contains(&JsonType::Integer)
            && at
                .types
                .iter()
                .all(|t| matches!(t, JsonType::Integer | JsonType::Null));
        if !integer {
            return None;
        }
        let mut issues = vec![(
            path.to_owned(),
            "Expected integer, received float".to_owned(),
        )];
        if negative {
            if let Some(min) = at.minimum {
                issues.push((
                    path.to_owned(),
                    format!("Number must be greater than or equal to {min}"),
                ));
            }
            if let Some(min) = at.exclusive_minimum {
                issues.push((
                    path.to_owned(),
                    format!("Number must be greater than {min}"),
                ));
            }
        }
        if !at.bounded_by_tool {
            let bound = if negative {
                format!("greater than or equal to {}", i64::MIN)
            } else {
                format!("less than or equal to {}", i64::MAX)
            };
            issues.push((path.to_owned(), format!("Number must be {bound}")));
        }
        Some(words(&issues))
    }

    fn check(
        &self,
        value: &Value,
        path: &mut String,
        unknown: UnknownKeys,
        issues: &mut Vec<(String, String)>,
    ) {
        if !self.types.is_empty() && !self.types.iter().any(|t| t.matches(value)) {
            issues.push((path.clone(), self.type_mismatch(value)));
            // zod's `z.number().int()` runs its other checks (`min`) on a fraction too.
            let fraction = value.is_number()
                && !self.union
                && self
                    .types
                    .iter()
                    .all(|t| matches!(t, JsonType::Integer | JsonType::Null));
            if !fraction {
                return;
            }
        }
        if let Some(options) = &self.enum_values {
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
            Value::Object(map) => self.check_object(map, path, unknown, issues),
            Value::Array(items) => self.check_array(items, path, unknown, issues),
            Value::Number(n) => {
                let x = n.as_f64().unwrap_or(0.0);
                if let Some(min) = self.minimum.filter(|min| x < *min) {
                    issues.push((
                        path.clone(),
                        format!("Number must be greater than or equal to {min}"),
                    ));
                }
                if let Some(min) = self.exclusive_minimum.filter(|min| x <= *min) {
                    issues.push((path.clone(), format!("Number must be greater than {min}")));
                }
                // Integers become int64 on the wire (the kit's `Long.fromNumber` would clamp).
                if self.types.contains(&JsonType::Integer)
                    && !self.bounded_by_tool
                    && x.abs() >= 9_223_372_036_854_775_808.0
                {
                    let bound = if x < 0.0 {
                        format!("greater than or equal to {}", i64::MIN)
                    } else {
                        format!("less than or equal to {}", i64::MAX)
                    };
                    issues.push((path.clone(), format!("Number must be {bound}")));
                }
            }
            Value::String(s) => {
                if self.datetime && super::normalise::zod_datetime(s).is_none() {
                    issues.push((path.clone(), "Invalid datetime".into()));
                }
                // JavaScript strings count UTF-16 code units ("😀" is 2).
                if let Some(max) = self
                    .max_length
                    .filter(|max| s.encode_utf16().count() as u64 > *max)
                {
                    issues.push((
                        path.clone(),
                        format!("String must contain at most {max} character(s)"),
                    ));
                }
            }
            _ => {}
        }
    }

    /// zod's words for a value of the wrong type: a union says only "Invalid input"; an
    /// integer is a number (`z.number().int()`) unless the value is a number with a fraction.
    fn type_mismatch(&self, value: &Value) -> String {
        let types: Vec<JsonType> = self
            .types
            .iter()
            .copied()
            .filter(|t| *t != JsonType::Null)
            .collect();
        if let Some(options) = &self.enum_values {
            let expected: Vec<String> = options.iter().map(quote).collect();
            return format!(
                "Expected {}, received {}",
                expected.join(" | "),
                received(value)
            );
        }
        if self.union {
            return "Invalid input".into();
        }
        match types.as_slice() {
            [JsonType::Integer] if value.is_number() => "Expected integer, received float".into(),
            [only] => {
                let expected = match only {
                    JsonType::Integer => "number",
                    other => other.name(),
                };
                format!("Expected {expected}, received {}", received(value))
            }
            _ => "Invalid input".into(),
        }
    }

    fn check_object(
        &self,
        map: &Map<String, Value>,
        path: &mut String,
        unknown: UnknownKeys,
        issues: &mut Vec<(String, String)>,
    ) {
        // zod reports in the order the schema declares its keys.
        for (key, sub) in &self.properties {
            let len = push_path(path, key);
            match lookup(map, key) {
                Some(item) => sub.check(item, path, unknown, issues),
                None if self.required.iter().any(|r| r == key) => {
                    issues.push((path.clone(), "Required".into()))
                }
                None => {}
            }
            path.truncate(len);
        }
        if self.closed && unknown == UnknownKeys::Refuse {
            for key in map.keys() {
                if !self.properties.iter().any(|(name, _)| name == key) {
                    let len = push_path(path, key);
                    issues.push((path.clone(), "Unrecognized key".into()));
                    path.truncate(len);
                }
            }
        }
    }

    fn check_array(
        &self,
        items: &[Value],
        path: &mut String,
        unknown: UnknownKeys,
        issues: &mut Vec<(String, String)>,
    ) {
        if let Some(min) = self.min_items.filter(|min| (items.len() as u64) < *min) {
            issues.push((
                path.clone(),
                format!("Array must contain at least {min} element(s)"),
            ));
        }
        if let Some(max) = self.max_items.filter(|max| items.len() as u64 > *max) {
            issues.push((
                path.clone(),
                format!("Array must contain at most {max} element(s)"),
            ));
        }
        if let Some(item_schema) = &self.items {
            for (i, item) in items.iter().enumerate() {
                let len = push_path(path, itoa::Buffer::new().format(i));
                item_schema.check(item, path, unknown, issues);
                path.truncate(len);
            }
        }
    }
}

/// Issues as the kit words them: `Invalid parameters: Field "a" - …; Field "b" - …`.
fn words(issues: &[(String, String)]) -> String {
    let fields: Vec<String> = issues
        .iter()
        .map(|(path, msg)| format!("Field \"{path}\" - {msg}"))
        .collect();
    format!("Invalid parameters: {}", fields.join("; "))
}

/// Validate `value` against a JSON schema given as JSON (compiles it first; tests and tools
/// that validate once).
pub fn validate(schema: &Value, value: &Value) -> Result<(), String> {
    Schema::compile(schema).validate(value)
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

/// `map[key]`: params objects have a handful of keys, and comparing them costs less than
/// hashing one (serde_json's map hashes with SipHash); a larger object is looked up.
fn lookup<'m>(map: &'m Map<String, Value>, key: &str) -> Option<&'m Value> {
    if map.len() <= 8 {
        map.iter().find_map(|(k, v)| (k == key).then_some(v))
    } else {
        map.get(key)
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

fn quote(v: &Value) -> String {
    match v {
        Value::String(s) => format!("'{s}'"),
        other => other.to_string(),
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
        let compiled = Schema::compile(&schema());
        let err = compiled.validate_with(&v, UnknownKeys::Refuse).unwrap_err();
        assert!(err.starts_with("Invalid parameters: "), "{err}");
        for part in [
            "Field \"transfers.0.accountId\" - Expected string, received number",
            "Field \"transfers.0.amount\" - Expected number, received string",
            "Field \"transfers.1.accountId\" - Required",
            "Field \"memo\" - String must contain at most 3 character(s)",
            "Field \"extra\" - Unrecognized key",
            "Field \"key\" - Invalid input",
            "Field \"kind\" - Invalid enum value. Expected 'finite' | 'infinite', received 'x'",
        ] {
            assert!(err.contains(part), "missing {part:?} in {err}");
        }
        // By default unknown keys are ignored, as zod strips them.
        let err = compiled.validate(&v).unwrap_err();
        assert!(!err.contains("extra"), "{err}");
        assert_eq!(
            compiled.validate(
                &json!({"transfers":[{"accountId":"0.0.2","amount":1,"note":1}],"extra":1})
            ),
            Ok(())
        );
    }

    #[test]
    fn issues_follow_the_schema_order_and_zod_wording() {
        let s = json!({"type":"object","properties":{
            "b":{"type":"integer"},"a":{"type":"string","maxLength":2},"c":{"type":"integer"}},
            "required":["c"]});
        assert_eq!(
            validate(&s, &json!({"a":"😀😀","b":"1"})).unwrap_err(),
            "Invalid parameters: Field \"b\" - Expected number, received string; Field \"a\" - String must contain at most 2 character(s); Field \"c\" - Required"
        );
        assert_eq!(
            validate(&s, &json!({"a":"éé","b":1.5,"c":1})).unwrap_err(),
            "Invalid parameters: Field \"b\" - Expected integer, received float"
        );
        // A negative fraction fails both of `z.number().int().min(0)`'s checks.
        let min = json!({"type":"object","properties":{"n":{"type":"integer","minimum":0}}});
        assert_eq!(
            validate(&min, &json!({"n":-0.5})).unwrap_err(),
            "Invalid parameters: Field \"n\" - Expected integer, received float; Field \"n\" - Number must be greater than or equal to 0"
        );
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
