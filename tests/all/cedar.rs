//! Policies as Cedar text (`example-plugins/rust/cedar`) in a running `hak serve`: agents
//! under `[[agents]]` are Cedar principals by name, a forbid names its `@id` in the block and
//! the decision log's reason, a text Cedar refuses never replaces the running one (the refusal says
//! where), and a new text in the plugins folder's settings takes effect as any config change.

use hak_tests::*;
use serde_json::Value;

const POLICIES_V1: &str = r#"
@id("everything-else")
permit(principal, action, resource);

@id("cap-10-hbar")
forbid(principal, action in Action::"transaction", resource)
when { context.hbarOut > 1000000000 };

@id("denylist")
forbid(principal, action, resource)
when { context.recipients.containsAny(["0.0.666", "0.0.667"]) };

@id("quarantine-bot-7")
forbid(principal == Agent::"bot-7", action in Action::"transaction", resource);
"#;

fn settings(policies: &str) -> String {
    format!("[config]\npolicies = '''{policies}'''\n")
}

fn transfer(to: &str, hbar: u32) -> String {
    format!(r#"{{"transfers":[{{"accountId":"{to}","amount":{hbar}}}]}}"#)
}

fn call(addr: std::net::SocketAddr, key: &str, body: &str) -> Value {
    let auth = format!("Bearer {key}");
    let (status, _, out) = http(
        addr,
        "POST",
        "/v1/tools/transfer_hbar_tool",
        &[("Authorization", &auth)],
        body,
    );
    assert_eq!(status, 200, "{out}");
    out
}

fn reason(out: &Value) -> &str {
    out["raw"]["policyBlock"]["reason"].as_str().unwrap_or("")
}

#[test]
fn cedar_policies_judge_agents_by_name_and_swap_as_text() {
    let dir = root().join(format!("target/test-tmp/cedar-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let plugins = dir.join("plugins");
    std::fs::create_dir_all(&plugins).unwrap();
    std::fs::copy(plugin("rust/cedar"), plugins.join("cedar.wasm")).unwrap();
    let sidecar = plugins.join("cedar.toml");
    std::fs::write(&sidecar, settings(POLICIES_V1)).unwrap();
    std::env::set_var("HAK_TEST_CEDAR_ALICE", "alice-key-0123456789abcdef");
    std::env::set_var("HAK_TEST_CEDAR_BOT7", "bot-7-key-0123456789abcdef");
    let log = dir.join("decisions.jsonl");
    let manifest = format!(
        "{RETURN_BYTES_HEADER}\n[decisions]\npath = {:?}\n\n[[agents]]\nname = \"alice\"\nkey_env = \"HAK_TEST_CEDAR_ALICE\"\n\n[[agents]]\nname = \"bot-7\"\nkey_env = \"HAK_TEST_CEDAR_BOT7\"\n",
        log.display().to_string()
    );
    let server = serve_dir(&manifest, Some(plugins.clone()));
    let addr = server.addr;
    let (alice, bot) = ("alice-key-0123456789abcdef", "bot-7-key-0123456789abcdef");

    let out = call(addr, alice, &transfer("0.0.2001", 5));
    assert!(
        out["raw"]["bytes"].is_string() || out["raw"]["status"].is_string(),
        "allowed: {out}"
    );
    assert_eq!(out["raw"]["policyBlock"], Value::Null, "{out}");

    let out = call(addr, alice, &transfer("0.0.2001", 20));
    assert_eq!(
        reason(&out),
        "transfer_hbar_tool is forbidden by Cedar policy cap-10-hbar",
        "{out}"
    );
    assert_eq!(
        out["raw"]["policyBlock"]["reasonCode"], "CEDAR_DENIED",
        "{out}"
    );
    let out = call(addr, bot, &transfer("0.0.666", 1));
    assert_eq!(
        reason(&out),
        "transfer_hbar_tool is forbidden by Cedar policies denylist, quarantine-bot-7",
        "{out}"
    );

    // The decision log names the policies that decided, and the agent (its writer thread
    // appends the line soon after the call answered).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let bot_line: Value = loop {
        let lines = std::fs::read_to_string(&log).unwrap_or_default();
        let found = lines
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|l| l["agent"] == "bot-7");
        match found {
            Some(line) => break line,
            None if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(50))
            }
            None => panic!("no line of bot-7 in {lines}"),
        }
    };
    let step = &bot_line["decisions"][0];
    assert_eq!(
        (&step["plugin"], &step["code"], &step["reason"]),
        (
            &"cedar".into(),
            &"CEDAR_DENIED".into(),
            &"transfer_hbar_tool is forbidden by Cedar policies denylist, quarantine-bot-7".into()
        ),
        "{bot_line}"
    );

    // A text Cedar refuses (a mistyped attribute) leaves the running policies in force, and
    // says where the mistake is.
    let version = server.registry.host().chain_version();
    std::fs::write(
        &sidecar,
        settings(&POLICIES_V1.replace(
            "context.hbarOut > 1000000000",
            "context.hbarsOut > 1000000000",
        )),
    )
    .unwrap();
    let report = server.registry.sync_dir();
    let (name, why) = report
        .rejected
        .first()
        .unwrap_or_else(|| panic!("not refused: {report:?}"));
    assert_eq!(name, "cedar");
    assert!(
        why.contains("policies 6:8:") && why.contains("hbarsOut"),
        "{why}"
    );
    assert_eq!(server.registry.host().chain_version(), version);
    assert!(reason(&call(addr, alice, &transfer("0.0.2001", 20))).ends_with("cap-10-hbar"));

    // A new text takes effect as any config change: the cap is 50 HBAR and bot-7 is let out.
    let v2 = POLICIES_V1
        .replace("1000000000", "5000000000")
        .replace("cap-10-hbar", "cap-50-hbar")
        .replace(
            "principal == Agent::\"bot-7\"",
            "principal == Agent::\"bot-8\"",
        );
    std::fs::write(&sidecar, settings(&v2)).unwrap();
    let report = server.registry.sync_dir();
    assert_eq!(report.loaded, vec!["cedar".to_owned()], "{report:?}");
    let out = call(addr, alice, &transfer("0.0.2001", 20));
    assert_eq!(out["raw"]["policyBlock"], Value::Null, "{out}");
    assert_eq!(
        reason(&call(addr, alice, &transfer("0.0.2001", 60))),
        "transfer_hbar_tool is forbidden by Cedar policy cap-50-hbar"
    );
    assert_eq!(
        call(addr, bot, &transfer("0.0.2001", 1))["raw"]["policyBlock"],
        Value::Null
    );
}
