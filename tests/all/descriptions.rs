//! The tool descriptions an LLM reads equal the JS kit's own, as its tools render them for a
//! context (`tests/conformance/kit-describe.mjs`), for every tool hak serves and for contexts
//! in each of the kit's branches: return-bytes with and without an account, autonomous with
//! and without one, a custom mode.

use hak_host::model::context::{AgentContext, AgentMode};
use hak_host::tools::ToolRegistry;
use hak_tests::*;
use serde_json::{json, Value};
use std::process::Command;

/// The kit's descriptions for `context` (`{"mode", "accountId"?}`), by method.
fn kit_descriptions(context: &Value) -> serde_json::Map<String, Value> {
    let dir = kit_dir();
    let out = Command::new("node")
        .arg("kit-describe.mjs")
        .arg(context.to_string())
        .current_dir(&dir)
        .output()
        .expect("node runs");
    assert!(
        out.status.success(),
        "kit-describe.mjs failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    match serde_json::from_slice(&out.stdout).unwrap() {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

#[test]
#[ignore = "needs node and the JS kit (npm ci in tests/conformance); scripts/test.sh runs it"]
fn every_description_equals_the_kits_for_the_context() {
    let tools = ToolRegistry::native();
    let contexts = [
        (AgentMode::ReturnBytes, Some("0.0.1001")),
        (AgentMode::ReturnBytes, None),
        (AgentMode::Autonomous, Some("0.0.4242")),
        (AgentMode::Autonomous, None),
        (AgentMode::CustomExecuteTx, Some("0.0.7")),
        (AgentMode::CustomReturnBytes, Some("0.0.8")),
    ];
    let mut compared = 0;
    let mut total_chars = 0;
    for (mode, account) in contexts {
        let mut kit_context = json!({"mode": mode.as_str()});
        if let Some(account) = account {
            kit_context["accountId"] = account.into();
        }
        let kit = kit_descriptions(&kit_context);
        let context = AgentContext {
            account_id: account.map(|a| a.parse().unwrap()),
            mode,
        };
        for spec in tools.specs() {
            let theirs = kit[spec.method]
                .as_str()
                .unwrap_or_else(|| panic!("the kit has no {}", spec.method));
            let ours = spec.describe(&context);
            if ours != theirs {
                let at = ours
                    .char_indices()
                    .zip(theirs.chars())
                    .find(|((_, a), b)| a != b)
                    .map_or(ours.len().min(theirs.len()), |((i, _), _)| i);
                panic!(
                    "{} in {kit_context}: differs at byte {at}:\n hak: {:?}\n kit: {:?}",
                    spec.method,
                    &ours[at.saturating_sub(40)..(at + 80).min(ours.len())],
                    theirs.get(at.saturating_sub(40)..(at + 80).min(theirs.len())),
                );
            }
            compared += 1;
            total_chars += ours.chars().count();
        }
        // hak serves every tool of the kit.
        let missing: Vec<_> = kit
            .keys()
            .filter(|m| tools.get(m).is_none())
            .cloned()
            .collect();
        assert!(
            missing.is_empty(),
            "tools the kit has and hak lacks: {missing:?}"
        );
    }
    assert_eq!(compared, tools.specs().count() * 6);
    assert!(total_chars > 6 * 60_000, "{total_chars}");
}
