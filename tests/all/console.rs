//! The operator console (`GET /console` of `hak serve`) in a real browser: Debian's chromium,
//! headless, driven by puppeteer-core (`tests/console/drive.mjs`). A call parked for approval
//! shows as a card with what it does (from the host's facts), is approved in the page and
//! goes on; another is denied with a note and ends blocked with it; a wrong token is refused;
//! the chain shows its plugins under their version and rolls one back once confirmed; no page
//! error, no request leaves the server's origin. The page's own headers are checked without a
//! browser.

use hak_tests::*;
use serde_json::Value;
use std::path::Path;

pub(crate) const TOKEN: &str = "s3cret";

/// The approval-above policy at 1 HBAR, two minutes to decide.
fn approve_above_one_hbar() -> String {
    plugin_entry(
        "approve",
        "rust/approval-above",
        "config = { approveAboveHbar = 1, timeoutSeconds = 120 }",
    )
}

/// `params` sent to `transfer_hbar_tool` on a thread of its own (it parks for approval).
fn park(addr: std::net::SocketAddr, params: &'static str) -> std::thread::JoinHandle<Value> {
    std::thread::spawn(move || http(addr, "POST", "/v1/tools/transfer_hbar_tool", &[], params).2)
}

/// The driver's report of one session in the page (see `tests/console/drive.mjs`): no page
/// error, no request off the server's origin.
fn run_driver(addr: std::net::SocketAddr, args: &[&str], screenshot: &Path) -> Value {
    let out = std::process::Command::new("node")
        .arg(root().join("tests/console/drive.mjs"))
        .args([&format!("http://{addr}"), TOKEN])
        .args(args)
        .arg("--screenshot")
        .arg(screenshot)
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().last().unwrap_or_default();
    let report: Value = serde_json::from_str(last)
        .unwrap_or_else(|e| panic!("{e}: {stdout}\n{}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(report["errors"], serde_json::json!([]), "{report}");
    assert_eq!(report["external"], serde_json::json!([]), "{report}");
    report
}

/// An approval decided in the page (`approve` or `deny`, with `note`).
pub(crate) fn drive(
    addr: std::net::SocketAddr,
    action: &str,
    note: &str,
    screenshot: &Path,
) -> Value {
    let report = run_driver(addr, &[action, "--note", note], screenshot);
    assert!(
        report["refused"]
            .as_str()
            .unwrap_or_default()
            .contains("refused the token"),
        "{report}"
    );
    assert_eq!(report["signInShown"], false, "{report}");
    assert_eq!(report["signOutShown"], true, "{report}");
    // The wrong token's refusal is not held against the right one.
    assert_eq!(report["pauseShown"], true, "{report}");
    report
}

#[test]
fn the_console_is_served_with_a_strict_content_security_policy() {
    let (addr, _server) = serve(RETURN_BYTES_HEADER);
    for (path, kind) in [
        ("/console", "text/html"),
        ("/console/console.js", "text/javascript"),
        ("/console/console.css", "text/css"),
    ] {
        let (status, head, body) = http_text(addr, "GET", path, &[], "");
        assert_eq!(status, 200, "{path}: {head}");
        let head = head.to_ascii_lowercase();
        assert!(head.contains(&format!("content-type: {kind}")), "{head}");
        assert!(
            head.contains("content-security-policy: default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'"),
            "{head}"
        );
        assert!(head.contains("x-frame-options: deny"), "{head}");
        assert!(!body.is_empty());
    }
    // The page holds no data: what it shows comes from the admin routes, which need the token.
    let (status, _, _) = http(addr, "GET", "/v1/approvals", &[], "");
    assert_eq!(status, 401);
}

#[test]
#[ignore = "needs chromium and `npm ci` in tests/console (scripts/install-deps.sh); scripts/test.sh runs it"]
fn a_parked_call_is_approved_and_another_denied_in_the_console_in_a_real_browser() {
    let (addr, _server) = serve(&format!(
        "{RETURN_BYTES_HEADER}\n{}",
        approve_above_one_hbar()
    ));
    let shots = root().join("target/test-tmp");
    std::fs::create_dir_all(&shots).unwrap();

    // Approved in the page: the call goes on and its transaction is built.
    let call = park(
        addr,
        r#"{"transfers":[{"accountId":"0.0.1002","amount":2.5}],"transactionMemo":"rent for May"}"#,
    );
    let report = drive(
        addr,
        "approve",
        "checked with the landlord",
        &shots.join("console-approvals.png"),
    );
    let card = report["card"].as_str().unwrap();
    for shown in [
        "transfer_hbar_tool",
        "2.5 ℏ to 0.0.1002",
        "Memo: rent for May",
        "moves 2.50000000 HBAR",
        "asked by Approval Above",
        "left",
    ] {
        assert!(card.contains(shown), "{shown:?} not in the card: {card}");
    }
    assert!(
        report["after"]
            .as_str()
            .unwrap()
            .contains("No call is waiting"),
        "{report}"
    );
    let out = call.join().unwrap();
    assert!(out["raw"]["bytes"].is_string(), "approved, so built: {out}");

    // Denied in the page with a note: the call ends blocked, the note in its reason.
    let call = park(
        addr,
        r#"{"transfers":[{"accountId":"0.0.1003","amount":7},{"accountId":"0.0.1004","amount":0.00000001},{"accountId":"0.0.1005","amount":90071992.54740995}]}"#,
    );
    let report = drive(
        addr,
        "deny",
        "not this one",
        &shots.join("console-approvals-deny.png"),
    );
    let card = report["card"].as_str().unwrap();
    assert!(card.contains("7 ℏ to 0.0.1003"), "{card}");
    assert!(card.contains("0.00000001 ℏ to 0.0.1004"), "{card}");
    // 2^53 + 3 tinybars: past what a JavaScript number holds, shown exactly.
    assert!(card.contains("90071992.54740995 ℏ to 0.0.1005"), "{card}");
    let out = call.join().unwrap();
    let block = &out["raw"]["policyBlock"];
    assert_eq!(block["approval"]["decision"], "denied", "{out}");
    assert!(
        block["reason"]
            .as_str()
            .unwrap()
            .ends_with("(denied by admin: not this one)"),
        "{out}"
    );
}

#[test]
#[ignore = "needs chromium and `npm ci` in tests/console (scripts/install-deps.sh); scripts/test.sh runs it"]
fn the_chain_is_listed_under_its_version_and_a_plugin_rolled_back_once_confirmed_in_a_real_browser()
{
    let server = serve_dir(RETURN_BYTES_HEADER, None);
    let settings =
        |text: &str| -> hak_host::manifest::PluginSidecar { toml::from_str(text).unwrap() };
    let put = |component: &str, config: &str| {
        server
            .registry
            .put(
                "gate",
                &std::fs::read(plugin(component)).unwrap(),
                settings(config),
                config.into(),
                None,
                hak_host::registry::Source::Api,
            )
            .unwrap()
    };
    put(
        "rust/reject-tool",
        "config = { relevantTools = [\"transfer_hbar_tool\"] }",
    );
    let replaced = put("rust/max-recipients", "config = { maxRecipients = 5 }");
    let report = run_driver(
        server.addr,
        &["chain", "gate"],
        &root().join("target/test-tmp/console-chain.png"),
    );
    assert_eq!(
        report["approvalsShown"], false,
        "one page at a time: {report}"
    );
    let before = report["before"].as_str().unwrap();
    for shown in [
        &format!("version {replaced}"),
        "gate",
        "Max Recipients Policy",
        "api",
        "policies: post_params_normalization",
        "enforced",
    ] {
        assert!(before.contains(shown), "{shown:?} not in: {before}");
    }
    assert_eq!(
        report["confirm"], "Roll back gate to its previous version?",
        "{report}"
    );
    let status = report["status"].as_str().unwrap();
    assert_eq!(
        status,
        format!("Rolled back gate: chain version {}.", replaced + 1)
    );
    let after = report["after"].as_str().unwrap();
    assert!(
        after.contains(&format!("version {}", replaced + 1)),
        "{after}"
    );
    assert!(after.contains("Reject Tool Call"), "{after}");
    assert!(!after.contains("Max Recipients Policy"), "{after}");
    // The server agrees: the previous version runs, once (the cancelled ask changed nothing).
    assert_eq!(server.registry.host().chain_version(), replaced + 1);
    let out = server
        .registry
        .host()
        .default_session()
        .call(
            "transfer_hbar_tool",
            r#"{"transfers":[{"accountId":"0.0.1002","amount":1}]}"#,
        )
        .unwrap();
    assert_eq!(out["raw"]["errorCode"], "POLICY_BLOCKED", "{out}");
}

/// A host with a decision log in `dir` and the reject-tool policy ("gate") on transfers.
fn logged(dir: &Path) -> String {
    format!(
        "{RETURN_BYTES_HEADER}\n[decisions]\npath = {:?}\n{}",
        dir.join("decisions.jsonl").display().to_string(),
        plugin_entry(
            "gate",
            "rust/reject-tool",
            "config = { relevantTools = [\"transfer_hbar_tool\"] }",
        )
    )
}

/// A blocked transfer, then a balance query that succeeds.
fn two_calls(addr: std::net::SocketAddr) {
    let (_, _, out) = http(
        addr,
        "POST",
        "/v1/tools/transfer_hbar_tool",
        &[],
        r#"{"transfers":[{"accountId":"0.0.1002","amount":1}]}"#,
    );
    assert_eq!(out["raw"]["errorCode"], "POLICY_BLOCKED", "{out}");
    let (status, _, out) = http(
        addr,
        "POST",
        "/v1/tools/get_hbar_balance_query_tool",
        &[],
        r#"{"accountId":"0.0.1002"}"#,
    );
    assert_eq!(status, 200, "{out}");
}

/// `GET /v1/decisions?query` once it lists at least `n` calls (the log writes on a thread).
fn decisions(addr: std::net::SocketAddr, query: &str, n: usize) -> Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let (status, _, body) = http(
            addr,
            "GET",
            &format!("/v1/decisions?{query}"),
            &[("authorization", "Bearer s3cret")],
            "",
        );
        assert_eq!(status, 200, "{body}");
        if body["decisions"].as_array().unwrap().len() >= n {
            return body;
        }
        assert!(std::time::Instant::now() < deadline, "{body}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn the_decision_log_route_filters_recent_calls_newest_first_and_keeps_them_across_a_restart() {
    let dir = root().join(format!(
        "target/test-tmp/decisions-route-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    {
        let (addr, _server) = serve(&logged(&dir));
        two_calls(addr);
        let all = decisions(addr, "", 2);
        assert_eq!(all["enabled"], true);
        let lines = all["decisions"].as_array().unwrap();
        assert_eq!(lines.len(), 2, "{all}");
        assert_eq!(
            lines[0]["tool"], "get_hbar_balance_query_tool",
            "newest first"
        );
        assert_eq!(lines[1]["tool"], "transfer_hbar_tool");
        for (query, tool) in [
            ("outcome=blocked", "transfer_hbar_tool"),
            ("verdict=block", "transfer_hbar_tool"),
            ("plugin=gate", "transfer_hbar_tool"),
            (
                "tool=get_hbar_balance_query_tool",
                "get_hbar_balance_query_tool",
            ),
            ("limit=1", "get_hbar_balance_query_tool"),
        ] {
            let got = decisions(addr, query, 1);
            let got = got["decisions"].as_array().unwrap();
            assert_eq!(got.len(), 1, "{query}: {got:?}");
            assert_eq!(got[0]["tool"], tool, "{query}");
        }
        assert_eq!(
            decisions(addr, "agent=nobody", 0)["decisions"],
            serde_json::json!([])
        );
        let (status, _, body) = http(
            addr,
            "GET",
            "/v1/decisions?colour=red",
            &[("authorization", "Bearer s3cret")],
            "",
        );
        assert_eq!(status, 400, "{body}");
        assert!(body["error"].as_str().unwrap().contains("colour"), "{body}");
        let (status, _, _) = http(addr, "GET", "/v1/decisions", &[], "");
        assert_eq!(status, 401, "admin only");
    }
    // A restarted server lists what the file holds.
    let (addr, _server) = serve(&logged(&dir));
    let all = decisions(addr, "", 2);
    assert_eq!(all["decisions"][1]["tool"], "transfer_hbar_tool", "{all}");
    // Without [decisions]: nothing kept, and said so.
    let (addr, _plain) = serve(RETURN_BYTES_HEADER);
    let off = decisions(addr, "", 0);
    assert_eq!(off["enabled"], false, "{off}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[ignore = "needs chromium and `npm ci` in tests/console (scripts/install-deps.sh); scripts/test.sh runs it"]
fn recent_decisions_are_listed_filtered_and_opened_in_a_real_browser() {
    let dir = root().join(format!(
        "target/test-tmp/decisions-page-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (addr, _server) = serve(&logged(&dir));
    two_calls(addr);
    decisions(addr, "", 2);
    let report = run_driver(
        addr,
        &["decisions"],
        &root().join("target/test-tmp/console-decisions.png"),
    );
    let table = report["table"].as_str().unwrap();
    let newest = table.find("get_hbar_balance_query_tool").unwrap();
    let older = table.find("transfer_hbar_tool").unwrap();
    assert!(newest < older, "newest first: {table}");
    assert!(table.contains("gate: block"), "{table}");
    let filtered = report["filtered"].as_str().unwrap();
    assert!(filtered.contains("transfer_hbar_tool"), "{filtered}");
    assert!(
        !filtered.contains("get_hbar_balance_query_tool"),
        "{filtered}"
    );
    let detail = report["detail"].as_str().unwrap();
    assert!(
        detail.contains("gate policy at pre_tool_execution: block"),
        "{detail}"
    );
    assert!(detail.contains("\"outcome\": \"blocked\""), "{detail}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[ignore = "needs chromium and `npm ci` in tests/console (scripts/install-deps.sh); scripts/test.sh runs it"]
fn the_metrics_page_charts_calls_and_plugin_step_times_sampled_from_metrics_in_a_real_browser() {
    let (addr, _server) = serve(&format!(
        "{RETURN_BYTES_HEADER}\n{}",
        plugin_entry(
            "max-recipients",
            "rust/max-recipients",
            "config = { maxRecipients = 1 }",
        )
    ));
    // Calls all along the browser's session: one passes, one is blocked, in turn.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let caller = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let started = std::time::Instant::now();
            while !stop.load(std::sync::atomic::Ordering::Relaxed)
                && started.elapsed() < std::time::Duration::from_secs(90)
            {
                for recipients in [1, 2] {
                    http(
                        addr,
                        "POST",
                        "/v1/tools/transfer_hbar_tool",
                        &[],
                        &transfer(recipients),
                    );
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        })
    };
    let report = run_driver(
        addr,
        &["metrics", "max-recipients"],
        &root().join("target/test-tmp/console-metrics.png"),
    );
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    caller.join().unwrap();
    let charts = report["charts"].as_str().unwrap();
    for shown in [
        "Calls",
        "Blocked calls",
        "Approvals decided",
        "Plugin step time (all plugins)",
        "p50",
        "p99",
    ] {
        assert!(charts.contains(shown), "{shown:?} not in: {charts}");
    }
    // Calls and blocks drew lines; p50 and p99 too (approvals: none were asked).
    assert!(report["lines"].as_u64().unwrap() >= 4, "{report}");
    assert_eq!(
        report["plugins"],
        serde_json::json!(["", "max-recipients"]),
        "{report}"
    );
    let chosen = report["chosen"].as_str().unwrap();
    assert!(
        chosen.contains("Plugin step time (max-recipients)"),
        "{chosen}"
    );
    assert!(chosen.contains(" µs"), "{chosen}");
}

/// The kill switch in the console, in a real browser: paused from the page with a reason (a
/// banner says why and who; calls that change the ledger are blocked, queries answer), then
/// resumed from the page once confirmed (the banner goes; calls run again).
#[test]
#[ignore = "needs chromium and `npm ci` in tests/console (scripts/install-deps.sh); scripts/test.sh runs it"]
fn the_kill_switch_is_paused_and_resumed_in_the_console_in_a_real_browser() {
    let (addr, _server) = serve(RETURN_BYTES_HEADER);
    let transfer = r#"{"transfers":[{"accountId":"0.0.1002","amount":1}]}"#;
    let call = || http(addr, "POST", "/v1/tools/transfer_hbar_tool", &[], transfer).2;
    assert!(call()["raw"]["bytes"].is_string());

    let report = run_driver(
        addr,
        &["pause", "incident 9: rotate the keys"],
        &root().join("target/test-tmp/console-paused.png"),
    );
    let banner = report["banner"].as_str().unwrap();
    assert!(
        banner.contains("Paused by admin") && banner.contains("incident 9: rotate the keys"),
        "{report}"
    );
    assert_eq!(report["formShown"], false, "{report}");
    let out = call();
    assert_eq!(out["raw"]["policyBlock"]["reasonCode"], "PAUSED", "{out}");

    let report = run_driver(
        addr,
        &["resume"],
        &root().join("target/test-tmp/console-resumed.png"),
    );
    assert_eq!(report["asked"], "Confirm: resume calls", "{report}");
    assert_eq!(report["formShown"], true, "{report}");
    assert!(call()["raw"]["bytes"].is_string(), "resumed");
}
