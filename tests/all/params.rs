//! Bad input never panics and always names the tool: every one of the 44 tools gets non-object
//! params, then a plausible call derived from its schema with each property in turn replaced
//! by hostile values (wrong types, huge and negative numbers, deep nesting, unknown fields).
//! Every answer must be a proper envelope; refusals must follow the kit's error wording.

use hak_tests::*;
use serde_json::{json, Value};

const LOCAL_BYTES: &str =
    "[network]\nname = \"local\"\n\n[context]\naccount_id = \"0.0.1001\"\nmode = \"returnBytes\"\n";

/// A value that satisfies `schema` as far as types go (ids as "0.0.1001").
fn plausible(schema: &Value) -> Value {
    let ty = match &schema["type"] {
        Value::String(t) => t.as_str(),
        Value::Array(ts) => ts.first().and_then(Value::as_str).unwrap_or("string"),
        _ => "string",
    };
    match ty {
        "object" => {
            let mut out = serde_json::Map::new();
            if let Some(props) = schema["properties"].as_object() {
                let required: Vec<&str> = schema["required"]
                    .as_array()
                    .map(|r| r.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                for (name, sub) in props {
                    if required.contains(&name.as_str()) {
                        out.insert(name.clone(), plausible(sub));
                    }
                }
            }
            Value::Object(out)
        }
        "array" => json!([plausible(&schema["items"])]),
        "number" | "integer" => json!(1),
        "boolean" => json!(true),
        _ => json!("0.0.1001"),
    }
}

fn hostile_values() -> Vec<Value> {
    let mut deep = json!(1);
    for _ in 0..200 {
        deep = json!([deep]);
    }
    vec![
        Value::Null,
        json!(true),
        json!(-1),
        json!(0),
        json!(1e300),
        json!(-9.3e18),
        json!(1.0000000001),
        json!(""),
        json!("x"),
        json!("0.0.-1"),
        json!("1.2.3.4"),
        json!("\u{0}\u{202e}"),
        json!("9".repeat(400)),
        json!([]),
        json!([null, "x", -5]),
        json!({}),
        json!({"nested": {"x": [1, 2, {"y": null}]}}),
        deep,
    ]
}

fn check(tool: &str, name: &str, params: &str, out: &Value) {
    let status = out["raw"]["status"].as_str();
    assert!(
        matches!(status, Some("SUCCESS") | Some("ERROR")),
        "{tool} {params}: no envelope: {out}"
    );
    if status == Some("ERROR") {
        let error = out["raw"]["error"].as_str().unwrap_or_default();
        assert!(
            error.starts_with(&format!("Failed to execute {name}: ")),
            "{tool} {params}: {error}"
        );
        assert_eq!(out["humanMessage"], out["raw"]["error"], "{tool}");
    }
}

#[test]
fn no_json_value_makes_any_tool_panic() {
    let (host, _) = start(LOCAL_BYTES);
    let mut session = host.default_session();
    let specs: Vec<(String, String, Value)> = host
        .tools()
        .specs()
        .map(|s| (s.method.to_owned(), s.name.to_owned(), s.parameters.clone()))
        .collect();
    assert_eq!(specs.len(), 44, "all tools of the kit");
    let mut calls = 0;
    for (tool, name, schema) in &specs {
        for params in ["", "null", "[]", "1", "\"x\"", "{"] {
            let out = session.call(tool, params).unwrap();
            assert_eq!(out["raw"]["status"], "ERROR", "{tool} {params:?}: {out}");
            check(tool, name, params, &out);
            calls += 1;
        }
        let base = plausible(schema);
        let mut variants = vec![base.clone()];
        let mut unknown = base.clone();
        unknown["notAParameter"] = json!(1);
        variants.push(unknown);
        // Only a stray key: ignored (as zod strips it), so valid where nothing is required.
        variants.push(json!({"a": 1}));
        for property in schema["properties"].as_object().unwrap().keys() {
            for value in hostile_values() {
                let mut params = base.clone();
                params[property.as_str()] = value;
                variants.push(params);
            }
        }
        for params in variants {
            let text = params.to_string();
            let out = session.call(tool, &text).unwrap();
            check(tool, name, &text, &out);
            calls += 1;
        }
    }
    assert!(calls > 44 * 20, "{calls} calls");
}

#[test]
fn unknown_and_missing_fields_are_named() {
    // `[context] strict_params = true` refuses keys the schema does not name.
    let strict = LOCAL_BYTES.replace("mode = ", "strict_params = true\nmode = ");
    let (host, _) = start(&strict);
    let mut session = host.default_session();
    let params = r#"{"transfers":[{"accountId":7,"amount":"1"}],"extra":true}"#;
    let out = session
        .call("transfer_fungible_token_tool", params)
        .unwrap();
    let error = out["raw"]["error"].as_str().unwrap();
    for field in [
        "tokenId",
        "transfers.0.accountId",
        "transfers.0.amount",
        "extra",
    ] {
        assert!(
            error.contains(&format!("Field \"{field}\"")),
            "{field} not named in {error}"
        );
    }
    // By default they are ignored, as the kit's zod schemas strip them; the rest is named.
    let (host, _) = start(LOCAL_BYTES);
    let mut session = host.default_session();
    let out = session
        .call("transfer_fungible_token_tool", params)
        .unwrap();
    let error = out["raw"]["error"].as_str().unwrap();
    assert!(!error.contains("extra"), "{error}");
    assert!(error.contains("Field \"transfers.0.amount\""), "{error}");
    let out = session
        .call(
            "transfer_hbar_tool",
            r#"{"transfers":[{"accountId":"0.0.1002","amount":1,"note":"x"}],"comment":"stray"}"#,
        )
        .unwrap();
    assert_eq!(out["raw"]["status"], "SUCCESS", "{out}");
}

/// A number past a double (`1e400`, which JavaScript reads as `Infinity`) is refused naming
/// its field, in any tool, at any depth (it was "the params are not valid JSON: number out of
/// range at line 1 column 56"): in the kit's words where the kit's schema refuses Infinity (an
/// integer field: `z.number().int()`, then its minimum for -Infinity), else naming the number
/// as written (a plain `z.number()` takes Infinity; hak does not).
#[test]
fn a_number_past_a_double_is_named_by_field() {
    let (host, _) = start(LOCAL_BYTES);
    let mut session = host.default_session();
    for (tool, params, field, error) in [
        (
            "create_fungible_token_tool",
            r#"{"tokenName":"T","tokenSymbol":"T","initialSupply":1e400}"#,
            "initialSupply",
            "Invalid parameters: Field \"initialSupply\" - Expected integer, received float",
        ),
        (
            "transfer_non_fungible_token_tool",
            r#"{"tokenId":"0.0.5005","recipients":[{"recipientId":"0.0.1002","serialNumber":-1e999}]}"#,
            "recipients.0.serialNumber",
            "Invalid parameters: Field \"recipients.0.serialNumber\" - Expected integer, received float; Field \"recipients.0.serialNumber\" - Number must be greater than or equal to 1; Field \"recipients.0.serialNumber\" - Number must be greater than or equal to -9223372036854775808",
        ),
        (
            "transfer_hbar_tool",
            r#"{"transfers":[{"accountId":"0.0.1002","amount":-1E+309}]}"#,
            "transfers.0.amount",
            "Invalid parameters: Field \"transfers.0.amount\" - -1E+309 is past the largest number JSON carries here (a 64-bit double, at most 1.7976931348623157e308)",
        ),
    ] {
        let out = session.call(tool, params).unwrap();
        assert_eq!(out["raw"]["field"], field, "{out}");
        let said = out["raw"]["error"].as_str().unwrap();
        assert!(said.ends_with(&format!(": {error}")), "{said}");
    }
}

/// Values that have broken hak or the SDK under it: long messages around the chunk sizes,
/// EVM addresses, amounts past 2^53 and i64, odd dates, keys of every form.
fn edge_values() -> Vec<Value> {
    vec![
        json!("a".repeat(1024)),
        json!("b".repeat(1025)),
        json!("c".repeat(2048)),
        json!("d".repeat(20 * 1024 + 1)),
        json!("e".repeat(1023)),
        json!("f".repeat(20 * 1024)),
        json!(format!("{}é{}", "g".repeat(1023), "h".repeat(1023))),
        json!("0x000000000000000000000000000000000000abcd"),
        json!("0x0000000000000000000000000000000000000000"),
        json!("0.0.1001"),
        json!("0.0.1002"),
        json!(9_007_199_254_740_993u64),
        json!(123_456_789.123_456_79),
        json!(1e19),
        json!(-0.000_000_01),
        json!(0.000_000_001),
        json!("2026-13-45"),
        json!("2027-01-01"),
        json!("2027-01-01T00:00:00+02:00"),
        json!(true),
        json!("true"),
        json!(""),
        json!([]),
        json!([1, 2, 3]),
        json!({"isScheduled": true}),
        json!({"isScheduled": true, "adminKey": true, "expirationTime": "2027-01-01T00:00:00Z", "waitForExpiry": true}),
        json!({"isScheduled": true, "payerAccountId": "0x000000000000000000000000000000000000abcd"}),
    ]
}

#[test]
fn no_generated_call_makes_any_tool_panic() {
    // Replays with HAK_PARAMS_SEED=<seed>.
    let seed = seed_from_env("HAK_PARAMS_SEED");
    let mut rng = Rng(seed);
    let (host, _) = start(LOCAL_BYTES);
    let mut session = host.default_session();
    let specs: Vec<(String, String, Value)> = host
        .tools()
        .specs()
        .map(|s| (s.method.to_owned(), s.name.to_owned(), s.parameters.clone()))
        .collect();
    let edges = edge_values();
    let mut calls = 0;
    for (tool, name, schema) in &specs {
        let properties: Vec<String> = schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        for _ in 0..15 {
            let mut params = plausible(schema);
            for _ in 0..=(rng.next_u64() % 3) {
                let property = rng.pick(&properties).clone();
                params[property.as_str()] = rng.pick(&edges).clone();
            }
            if rng.next_u64().is_multiple_of(4) {
                params["schedulingParams"] = json!({"isScheduled": true});
            }
            let text = params.to_string();
            let out = session.call(tool, &text).unwrap();
            check(tool, name, &text, &out);
            let error = out["raw"]["error"].as_str().unwrap_or_default();
            assert!(
                !error.contains("a bug in hak"),
                "seed {seed}: {tool} {text}: {error}"
            );
            calls += 1;
        }
    }
    assert_eq!(calls, 44 * 15);
}
