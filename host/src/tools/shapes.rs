//! What every tool's stage JSON looks like, as JSON Schemas: the raw params (the kit's schema),
//! the normalised params (derived from the tool's typed `Normalised` with schemars, so it cannot
//! drift from the code) and the `coreActionResult` plugins see at post-core-action (the
//! transaction summary every transaction tool shares, with each tool's own details, or a
//! query's `{raw, humanMessage}`). `hak tools shapes` prints them; `crate::authoring::codegen` turns them
//! into TypeScript and Go types. Nothing here runs on the call path.

use super::ToolType;
use serde_json::{json, Map, Value};

/// The three shapes of one tool.
#[derive(Clone, Debug)]
pub struct ToolShapes {
    pub method: &'static str,
    pub tool_type: ToolType,
    pub raw_params: Value,
    pub normalised_params: Value,
    pub core_action_result: Value,
}

/// The JSON Schema of a typed value as plugins see it (serialized: a field with a default is
/// always present), as schemars derives it (draft 2020-12, `$defs` inline).
pub fn schema_of<T: schemars::JsonSchema>() -> Value {
    generator().into_root_schema_for::<T>().to_value()
}

fn generator() -> schemars::SchemaGenerator {
    schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
}

/// A property of a summary's details or a query's raw result.
pub fn string(description: &str) -> Value {
    json!({"type": "string", "description": description})
}

/// The `coreActionResult` of a transaction tool: the unsigned transaction's summary, `details`
/// being the properties this tool adds (each present when the tool states it). `schedulable`:
/// a scheduled call is summarised as its `ScheduleCreateTransaction`, naming the inner type and
/// memo.
pub fn transaction_summary(details: Value, schedulable: bool) -> Value {
    let mut properties = Map::new();
    properties.insert(
        "type".into(),
        string("The SDK class of the built transaction, e.g. `TransferTransaction`."),
    );
    properties.insert(
        "memo".into(),
        string("The transaction memo (\"\" for none)."),
    );
    properties.insert(
        "maxTransactionFee".into(),
        string("The maximum fee, in tinybars, as a decimal string."),
    );
    properties.insert(
        "nodeAccountIds".into(),
        json!({"type": "array", "items": {"type": "string"}, "description": "The nodes the transaction is built for."}),
    );
    if schedulable {
        properties.insert(
            "scheduledType".into(),
            string("When scheduled: the SDK class of the scheduled (inner) transaction."),
        );
        properties.insert(
            "scheduledMemo".into(),
            string("When scheduled: the memo of the scheduled (inner) transaction."),
        );
    }
    if let Value::Object(details) = details {
        properties.extend(details);
    }
    json!({
        "type": "object",
        "description": "The unsigned transaction's summary (present when a plugin sees post-core-action).",
        "properties": properties,
        "required": ["type", "memo", "maxTransactionFee", "nodeAccountIds"],
        "additionalProperties": false,
    })
}

/// The `coreActionResult` of a query tool: the result the agent receives.
pub fn query_result(raw: Value) -> Value {
    json!({
        "type": "object",
        "description": "The query's result, as the agent receives it.",
        "properties": {
            "raw": raw,
            "humanMessage": string("The kit's text for the agent."),
        },
        "required": ["raw", "humanMessage"],
        "additionalProperties": false,
    })
}

/// An object the mirror node returns, passed through as it is (`what` names its REST path).
pub fn mirror_object(what: &str) -> Value {
    json!({"type": "object", "description": format!("The mirror node's {what}, as it returns it.")})
}

/// The properties a tool adds to its `coreActionResult` (a transaction summary's details, or a
/// query's `raw`), typed ones through schemars so they match the normalised params' types.
pub struct Details {
    generator: schemars::SchemaGenerator,
    properties: Map<String, Value>,
    required: Vec<String>,
}

impl Default for Details {
    fn default() -> Self {
        Details::new()
    }
}

impl Details {
    pub fn new() -> Self {
        Details {
            generator: generator(),
            properties: Map::new(),
            required: Vec::new(),
        }
    }

    /// A property of any JSON Schema (`schema` must not use `$ref`).
    pub fn value(mut self, key: &str, schema: Value) -> Self {
        self.required.push(key.to_owned());
        self.properties.insert(key.into(), schema);
        self
    }

    /// A string property.
    pub fn string(self, key: &str, description: &str) -> Self {
        self.value(key, string(description))
    }

    /// A property of a typed value (its JSON Schema as schemars derives it).
    pub fn typed<T: schemars::JsonSchema>(mut self, key: &str, description: &str) -> Self {
        let mut schema = self.generator.subschema_for::<T>().to_value();
        if let Value::Object(map) = &mut schema {
            map.insert("description".into(), description.into());
        }
        self.value(key, schema)
    }

    fn into_parts(mut self) -> (Map<String, Value>, Vec<String>, Map<String, Value>) {
        let defs = self.generator.take_definitions(true);
        (self.properties, self.required, defs.into_iter().collect())
    }

    /// The `coreActionResult` of a transaction tool whose raw schema is `raw_schema`. Details
    /// are present when a plugin sees post-core-action, which is when the summary exists.
    pub fn summary(self, raw_schema: &Value) -> Value {
        let (properties, _, defs) = self.into_parts();
        let mut schema = transaction_summary(Value::Object(properties), is_schedulable(raw_schema));
        with_defs(&mut schema, defs);
        schema
    }

    /// The `coreActionResult` of a query tool whose `raw` has these properties.
    pub fn query(self) -> Value {
        let (properties, required, defs) = self.into_parts();
        let raw = json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false,
        });
        let mut schema = query_result(raw);
        with_defs(&mut schema, defs);
        schema
    }
}

fn with_defs(schema: &mut Value, defs: Map<String, Value>) {
    if !defs.is_empty() {
        schema["$defs"] = Value::Object(defs);
    }
}

/// The default `coreActionResult` shape of a tool of `tool_type` that states no details.
pub fn default_result(tool_type: ToolType, schedulable: bool) -> Value {
    match tool_type {
        ToolType::Query => query_result(json!({"type": "object"})),
        _ => transaction_summary(json!({}), schedulable),
    }
}

/// Whether a tool's raw schema takes `schedulingParams`.
pub fn is_schedulable(raw_schema: &Value) -> bool {
    raw_schema["properties"].get("schedulingParams").is_some()
}

/// Every tool's shapes as one JSON document (`hak tools shapes`).
pub fn document(tools: &[ToolShapes]) -> Value {
    let mut by_method = Map::new();
    for t in tools {
        by_method.insert(
            t.method.into(),
            json!({
                "toolType": t.tool_type,
                "rawParams": t.raw_params,
                "normalisedParams": t.normalised_params,
                "coreActionResult": t.core_action_result,
            }),
        );
    }
    json!({
        "$comment": "Generated by `hak tools shapes`: the stage JSON of every tool hak serves.",
        "tools": by_method,
    })
}
