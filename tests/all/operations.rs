//! What an operator sees of a running host: Prometheus metrics after known calls, the
//! decision log of allowed, blocked and failed calls, a shadow plugin that would block but
//! does not (and its promotion by a settings change), refused changes reported once.

use hak_tests::*;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const ADMIN: (&str, &str) = ("Authorization", "Bearer s3cret");
const ATTACK: &str =
    r#"{"transfers":[{"accountId":"0.0.2000","amount":1}],"transactionMemo":"attack"}"#;

fn temp_dir(name: &str) -> PathBuf {
    let dir = root().join(format!(
        "target/test-tmp/operations-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn call(addr: std::net::SocketAddr, params: &str) -> Value {
    let (status, _, body) = http(addr, "POST", "/v1/tools/transfer_hbar_tool", &[], params);
    assert_eq!(status, 200, "{body}");
    body
}

/// The value of the metric line `name{labels}` (exactly), or None.
fn metric(text: &str, series: &str) -> Option<f64> {
    text.lines().find_map(|line| {
        let (name, value) = line.rsplit_once(' ')?;
        (name == series).then(|| value.parse().unwrap())
    })
}

/// The decision log's lines once it holds `n` (the writer thread appends asynchronously).
fn decision_lines(path: &Path, n: usize) -> Vec<Value> {
    let started = Instant::now();
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect();
        if lines.len() >= n || started.elapsed() > Duration::from_secs(10) {
            return lines;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn metrics_and_the_decision_log_show_every_call_by_plugin_name() {
    let dir = temp_dir("metrics");
    let log = dir.join("decisions.jsonl");
    let manifest = format!(
        "{RETURN_BYTES_HEADER}\n[decisions]\npath = {:?}\n{}{}{}",
        log.display().to_string(),
        plugin_entry(
            "budget",
            "rust/spend-limit",
            "[plugins.config]\ndailyHbarBudget = 1000"
        ),
        plugin_entry(
            "cap-one",
            "rust/max-recipients",
            "[plugins.config]\nmaxRecipients = 1"
        ),
        plugin_entry(
            "boom",
            "fixtures/hostile",
            "[plugins.config]\nmode = \"panic\""
        ),
    );
    let (addr, server) = serve(&manifest);
    // `boom` fails at stage 1 on ATTACK; `cap-one` judges at stage 3, so it sees 3 calls.
    let one = transfer(1);
    assert!(call(addr, &one)["raw"]["bytes"].is_string());
    assert!(call(addr, &one)["raw"]["bytes"].is_string());
    let blocked = call(addr, &transfer(2));
    assert_eq!(blocked["raw"]["errorCode"], "POLICY_BLOCKED", "{blocked}");
    let failed = call(addr, ATTACK);
    assert!(failed["raw"]["pluginFailure"].is_object(), "{failed}");

    let (status, _, _) = http_text(addr, "GET", "/metrics", &[], "");
    assert_eq!(status, 401, "metrics need the admin token");
    let (status, head, text) = http_text(addr, "GET", "/metrics", &[ADMIN], "");
    assert_eq!(status, 200, "{text}");
    assert!(head.contains("application/openmetrics-text"), "{head}");
    assert!(text.ends_with("# EOF\n"), "{text}");
    let calls = |outcome: &str| {
        metric(
            &text,
            &format!(
                r#"hak_calls_total{{tool="transfer_hbar_tool",mode="returnBytes",outcome="{outcome}"}}"#
            ),
        )
    };
    assert_eq!(calls("success"), Some(2.0), "{text}");
    assert_eq!(calls("blocked"), Some(1.0), "{text}");
    assert_eq!(calls("plugin_failure"), Some(1.0), "{text}");
    let verdicts = |plugin: &str, stage: &str, verdict: &str| {
        metric(
            &text,
            &format!(
                r#"hak_plugin_verdicts_total{{plugin="{plugin}",stage="{stage}",verdict="{verdict}"}}"#
            ),
        )
    };
    assert_eq!(
        verdicts("cap-one", "post_params_normalization", "allow"),
        Some(2.0),
        "{text}"
    );
    assert_eq!(
        verdicts("cap-one", "post_params_normalization", "block"),
        Some(1.0),
        "{text}"
    );
    assert_eq!(
        verdicts("boom", "pre_tool_execution", "failure"),
        Some(1.0),
        "{text}"
    );
    assert_eq!(
        metric(
            &text,
            r#"hak_plugin_failures_total{plugin="boom",cause="trap"}"#
        ),
        Some(1.0),
        "{text}"
    );
    assert_eq!(
        metric(
            &text,
            r#"hak_plugin_call_seconds_count{plugin="cap-one",stage="post_params_normalization",kind="policy"}"#
        ),
        Some(3.0),
        "{text}"
    );
    assert!(
        metric(&text, r#"hak_state_store_seconds_count{op="reserve"}"#).unwrap_or(0.0) >= 2.0,
        "{text}"
    );
    assert_eq!(metric(&text, "hak_chain_version"), Some(1.0), "{text}");
    assert_eq!(metric(&text, "hak_chain_plugins"), Some(3.0), "{text}");
    assert!(
        metric(&text, "hak_instances_live").unwrap_or(0.0) >= 1.0,
        "{text}"
    );

    // A swap through the admin API is counted, and the chain version follows.
    let upload = serde_json::json!({
        "component": base64::Engine::encode(
            &base64::engine::general_purpose::STANDARD,
            std::fs::read(plugin("rust/reject-tool")).unwrap()
        ),
        "settings": {"config": {"relevantTools": ["create_topic_tool"]}},
    })
    .to_string();
    let (status, _, body) = http(addr, "PUT", "/v1/plugins/extra", &[ADMIN], &upload);
    assert_eq!(status, 200, "{body}");
    let (_, _, text) = http_text(addr, "GET", "/metrics", &[ADMIN], "");
    assert_eq!(
        metric(&text, r#"hak_plugin_changes_total{result="applied"}"#),
        Some(1.0),
        "{text}"
    );
    assert_eq!(metric(&text, "hak_chain_version"), Some(2.0), "{text}");

    // The decision log: one line per call, in order.
    let lines = decision_lines(&log, 4);
    drop(server);
    let outcomes: Vec<&str> = lines
        .iter()
        .map(|l| l["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(
        outcomes,
        ["success", "success", "blocked", "plugin_failure"],
        "{lines:?}"
    );
    for (line, params) in lines
        .iter()
        .zip([&one, &one, &transfer(2), &ATTACK.to_owned()])
    {
        assert_eq!(
            line["paramsSha256"],
            hex::encode(Sha256::digest(params.as_bytes())),
            "{line}"
        );
        assert!(
            line.get("params").is_none(),
            "digest only by default: {line}"
        );
        assert_eq!(line["tool"], "transfer_hbar_tool");
        assert_eq!(line["context"], "0.0.1001/returnBytes");
        assert_eq!(line["chainVersion"], 1);
        assert!(line["agent"].is_null());
        time::OffsetDateTime::parse(
            line["time"].as_str().unwrap(),
            &time::format_description::well_known::Rfc3339,
        )
        .unwrap();
    }
    assert_eq!(
        lines[0]["transactionOutcome"], "unknown",
        "bytes handed out"
    );
    let steps = |line: &Value| -> Vec<String> {
        line["decisions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| {
                format!(
                    "{} {} {} {}",
                    d["plugin"], d["stage"], d["kind"], d["verdict"]
                )
            })
            .collect()
    };
    assert!(steps(&lines[0])
        .contains(&r#""cap-one" "post_params_normalization" "policy" "allow""#.to_owned()));
    let block = lines[2]["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["verdict"] == "block")
        .unwrap_or_else(|| panic!("{}", lines[2]));
    assert_eq!(block["plugin"], "cap-one");
    assert_eq!(block["enforce"], true);
    assert_eq!(block["code"], blocked["raw"]["policyBlock"]["reasonCode"]);
    assert_eq!(lines[2]["transactionOutcome"], "not-applied");
    assert_eq!(lines[2]["errorCode"], "POLICY_BLOCKED");
    let failure = lines[3]["decisions"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(failure["plugin"], "boom", "{}", lines[3]);
    assert_eq!(failure["verdict"], "failure");
    assert_eq!(failure["code"], "trap");
}

#[test]
fn a_shadow_plugin_would_block_but_does_not_until_its_settings_promote_it() {
    let dir = temp_dir("shadow");
    let plugins = dir.join("plugins");
    std::fs::create_dir_all(&plugins).unwrap();
    std::fs::copy(plugin("rust/max-recipients"), plugins.join("cap.wasm")).unwrap();
    let settings = |enforce: bool| format!("enforce = {enforce}\n[config]\nmaxRecipients = 1\n");
    std::fs::write(plugins.join("cap.toml"), settings(false)).unwrap();
    let server = serve_dir(RETURN_BYTES_HEADER, Some(plugins.clone()));
    let addr = server.addr;

    let out = call(addr, &transfer(2));
    assert!(
        out["raw"]["bytes"].is_string(),
        "a shadow plugin never blocks: {out}"
    );
    let (_, _, list) = http(addr, "GET", "/v1/plugins", &[ADMIN], "");
    let cap = &list["plugins"][0];
    assert_eq!(cap["name"], "cap", "{list}");
    assert_eq!(cap["enforce"], false, "{list}");
    assert_eq!(cap["wouldBlock"], 1, "{list}");
    assert_eq!(cap["blocks"], 0, "{list}");
    let (_, _, text) = http_text(addr, "GET", "/metrics", &[ADMIN], "");
    assert_eq!(
        metric(
            &text,
            r#"hak_plugin_verdicts_total{plugin="cap",stage="post_params_normalization",verdict="would_block"}"#
        ),
        Some(1.0),
        "{text}"
    );

    // Promotion is a settings change, hot-swapped.
    std::fs::write(plugins.join("cap.toml"), settings(true)).unwrap();
    let (status, _, report) = http(addr, "POST", "/v1/reload", &[ADMIN], "");
    assert_eq!(status, 200, "{report}");
    assert_eq!(report["loaded"], serde_json::json!(["cap"]), "{report}");
    let out = call(addr, &transfer(2));
    assert_eq!(out["raw"]["errorCode"], "POLICY_BLOCKED", "{out}");
    assert_eq!(out["raw"]["policyBlock"]["plugin"], "cap", "{out}");
    let (_, _, list) = http(addr, "GET", "/v1/plugins", &[ADMIN], "");
    assert_eq!(list["plugins"][0]["enforce"], true, "{list}");
    assert_eq!(list["plugins"][0]["blocks"], 1, "{list}");
}

#[test]
fn a_refused_file_is_reported_once_until_it_changes() {
    let dir = temp_dir("refused");
    std::fs::write(dir.join("bad.wasm"), b"\0asm not really").unwrap();
    let server = serve_dir(RETURN_BYTES_HEADER, Some(dir.clone()));
    // serve_dir synced once already: that was the report.
    for _ in 0..3 {
        let report = server.registry.sync_dir();
        assert!(report.rejected.is_empty(), "{report:?}");
    }
    std::fs::write(dir.join("bad.wasm"), b"\0asm still not").unwrap();
    let report = server.registry.sync_dir();
    assert_eq!(report.rejected.len(), 1, "{report:?}");
    assert!(report.rejected[0].1.contains("bad"), "{report:?}");
    let (_, _, text) = http_text(server.addr, "GET", "/metrics", &[ADMIN], "");
    assert_eq!(
        metric(&text, r#"hak_plugin_changes_total{result="refused"}"#),
        Some(2.0),
        "{text}"
    );
}
