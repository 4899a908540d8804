//! Contract 0.2.0: the host states each call's facts (who gets what, tokens, changes, memo,
//! scheduling) and hands them to plugins typed; a policy may answer needs-approval, and the
//! call parks until a human decides (HTTP admin routes, `hak approvals`), times out, or finds
//! nobody to ask — only an approval lets it go on. Plugins built for 0.1.x and 0.2.0 keep
//! loading (0.2.0 ones, without `inputs`, are handed the whole stage input).

use hak_host::model::facts::{Asset, Via, ALL};
use hak_host::tools::ToolRegistry;
use hak_tests::*;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::time::{Duration, Instant};

const ADMIN: (&str, &str) = ("authorization", "Bearer s3cret");

fn hak_bin() -> PathBuf {
    std::env::var_os("HAK_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/debug/hak"))
}

#[test]
fn tools_state_their_facts_from_normalised_params() {
    let tools = ToolRegistry::native();
    let f = tools
        .facts_from_json(
            "transfer_hbar_tool",
            r#"{"hbarTransfers":[{"accountId":"0.0.2001","amount":"150000000"},{"accountId":"0.0.2002","amount":"50000000"},{"accountId":"0.0.1001","amount":"-200000000"}],"transactionMemo":"rent","schedulingParams":{"isScheduled":false}}"#,
        )
        .unwrap();
    assert_eq!(f.movements.len(), 2, "debits are not movements: {f:?}");
    assert_eq!(f.movements[0].to.as_deref(), Some("0.0.2001"));
    assert_eq!(f.movements[0].amount, 150_000_000);
    assert_eq!(
        (f.movements[0].asset.clone(), f.movements[0].via),
        (Asset::Hbar, Via::Transfer)
    );
    assert_eq!(f.source.as_deref(), Some("0.0.1001"));
    assert_eq!(f.memo.as_deref(), Some("rent"));
    assert!(!f.scheduled);

    let f = tools
        .facts_from_json(
            "delete_account_tool",
            r#"{"accountId":"0.0.2001","transferAccountId":"0.0.1001"}"#,
        )
        .unwrap();
    assert_eq!(f.movements[0].amount, ALL, "the whole balance: {f:?}");
    assert_eq!(f.changes[0].kind, "account");
    assert_eq!(f.changes[0].id, "0.0.2001");

    let f = tools
        .facts_from_json(
            "approve_nft_allowance_tool",
            r#"{"ownerAccountId":"0.0.1001","spenderAccountId":"0.0.7","tokenId":"0.0.9","allSerials":true,"serialNumbers":[]}"#,
        )
        .unwrap();
    assert_eq!(f.movements[0].asset, Asset::Nft("0.0.9".into()));
    assert_eq!(
        (f.movements[0].amount, f.movements[0].via),
        (ALL, Via::Allowance)
    );
    assert_eq!(f.tokens, ["0.0.9"]);

    let f = tools
        .facts_from_json(
            "associate_token_tool",
            r#"{"accountId":"0.0.1001","tokenIds":["0.0.7","0.0.8","0.0.7"]}"#,
        )
        .unwrap();
    assert_eq!(f.tokens, ["0.0.7", "0.0.8"], "once each");
    assert!(f.movements.is_empty());

    // Params a tool refuses state nothing (a plugin then gets no facts).
    assert!(tools
        .facts_from_json("transfer_hbar_tool", r#"{"hbarTransfers":"x"}"#)
        .is_none());
}

#[test]
fn policies_decide_on_the_facts_the_host_states() {
    // The allowlist reads only the facts: an allowlisted recipient passes, another is blocked.
    let entry = plugin_entry(
        "allow",
        "rust/recipient-allowlist",
        "config = { accounts = [\"0.0.2000\"] }",
    );
    let (host, _) = start(&format!("{RETURN_BYTES_HEADER}{entry}"));
    let mut session = host.default_session();
    let out = session.call("transfer_hbar_tool", &transfer(1)).unwrap();
    assert!(out["raw"]["bytes"].is_string(), "{out}");
    let out = session.call("transfer_hbar_tool", &transfer(2)).unwrap();
    assert_eq!(
        out["raw"]["policyBlock"]["reason"], "0.0.2001 is not an allowlisted recipient",
        "{out}"
    );
}

#[test]
#[ignore = "needs the JS and Go plugins (scripts/build-plugins.sh js go); scripts/test.sh runs it"]
fn the_js_and_go_twins_decide_on_the_same_facts() {
    for lang in ["js", "go"] {
        let entry = plugin_entry(
            "allow",
            &format!("{lang}/recipient-allowlist"),
            "config = { accounts = [\"0.0.2000\"] }",
        );
        let (host, _) = start(&format!("{RETURN_BYTES_HEADER}{entry}"));
        assert_eq!(host.plugins()[0].contract(), "0.2", "{lang}");
        let mut session = host.default_session();
        let out = session.call("transfer_hbar_tool", &transfer(1)).unwrap();
        assert!(out["raw"]["bytes"].is_string(), "{lang}: {out}");
        let out = session.call("transfer_hbar_tool", &transfer(2)).unwrap();
        assert_eq!(
            out["raw"]["policyBlock"]["reason"], "0.0.2001 is not an allowlisted recipient",
            "{lang}: {out}"
        );
    }
}

#[test]
fn a_plugin_built_for_contract_0_1_2_still_loads_and_its_budget_holds() {
    let entry = plugin_entry("old-budget", "fixtures/v0-1-2", "");
    let (host, _) = start(&format!("{RETURN_BYTES_HEADER}{entry}"));
    assert_eq!(host.plugins()[0].contract(), "0.1");
    let mut session = host.default_session();
    for _ in 0..3 {
        let out = session.call("transfer_hbar_tool", &transfer(1)).unwrap();
        assert!(out["raw"]["bytes"].is_string(), "{out}");
    }
    let out = session.call("transfer_hbar_tool", &transfer(1)).unwrap();
    assert_eq!(
        out["raw"]["policyBlock"]["reason"], "0.1.2 budget spent: 300000000",
        "{out}"
    );
    // And a 0.2 plugin beside it.
    let entry = plugin_entry(
        "allow",
        "rust/approval-above",
        "config = { approveAboveHbar = 5 }",
    );
    let (host, _) = start(&format!("{RETURN_BYTES_HEADER}{entry}"));
    assert_eq!(host.plugins()[0].contract(), "0.2");
}

#[test]
fn without_an_approver_a_needs_approval_verdict_blocks() {
    let entry = plugin_entry(
        "approve",
        "rust/approval-above",
        "config = { approveAboveHbar = 1 }",
    );
    let (host, _) = start(&format!("{RETURN_BYTES_HEADER}{entry}"));
    let mut session = host.default_session();
    // At the threshold: no approval needed.
    let out = session.call("transfer_hbar_tool", &transfer(1)).unwrap();
    assert!(out["raw"]["bytes"].is_string(), "{out}");
    let out = session.call("transfer_hbar_tool", &transfer(2)).unwrap();
    let block = &out["raw"]["policyBlock"];
    assert_eq!(block["approval"]["decision"], "unavailable", "{out}");
    assert_eq!(block["reasonCode"], "APPROVAL_ABOVE_THRESHOLD");
    assert!(
        block["reason"]
            .as_str()
            .unwrap()
            .contains("approval unavailable: no approver here"),
        "{out}"
    );
    assert!(
        out["raw"].get("bytes").is_none(),
        "nothing handed out: {out}"
    );
}

/// Approval Above at 1 HBAR, a minute to decide: a transfer of 2 HBAR parks for approval.
fn approve_above_one_hbar() -> String {
    plugin_entry(
        "approve",
        "rust/approval-above",
        "config = { approveAboveHbar = 1, timeoutSeconds = 60 }",
    )
}

/// A transfer sent to `server` on a thread of its own (it parks).
fn call_in_background(
    addr: std::net::SocketAddr,
    params: String,
) -> std::thread::JoinHandle<Value> {
    std::thread::spawn(move || http(addr, "POST", "/v1/tools/transfer_hbar_tool", &[], &params).2)
}

/// Wait until `n` calls await approval; their listing.
fn pending(addr: std::net::SocketAddr, n: usize) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (status, _, body) = http(addr, "GET", "/v1/approvals", &[ADMIN], "");
        assert_eq!(status, 200, "{body}");
        let list = body["approvals"].as_array().unwrap().clone();
        if list.len() >= n {
            return list;
        }
        assert!(Instant::now() < deadline, "no call parked: {body}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// An agent cannot take the server by asking for approvals: a parked call gives its call slot
/// back while it waits, so with two slots four calls park and a fifth, small one still runs;
/// the approved ones take a slot again and finish.
#[test]
fn calls_awaiting_approval_do_not_hold_the_servers_call_slots() {
    let entry = approve_above_one_hbar();
    let (addr, _server) = serve(&format!(
        "{RETURN_BYTES_HEADER}\n[server]\nmax_concurrent_calls = 2\n{entry}"
    ));
    let parked: Vec<_> = (0..4)
        .map(|_| call_in_background(addr, transfer(2)))
        .collect();
    let listed = pending(addr, 4);
    let small = http(
        addr,
        "POST",
        "/v1/tools/transfer_hbar_tool",
        &[],
        r#"{"transfers":[{"accountId":"0.0.2001","amount":0.5}]}"#,
    )
    .2;
    assert!(small["raw"]["bytes"].is_string(), "{small}");
    for p in &listed {
        let id = p["id"].as_str().unwrap();
        let (status, _, body) = http(
            addr,
            "POST",
            &format!("/v1/approvals/{id}/approve"),
            &[ADMIN],
            "",
        );
        assert_eq!(status, 200, "{body}");
    }
    for call in parked {
        let out = call.join().unwrap();
        assert!(out["raw"]["bytes"].is_string(), "approved: {out}");
    }
}

/// The key of approver `name` in these tests, and its `Authorization` header.
fn key_of(name: &str) -> String {
    format!("{name}-approver-key-0123456789")
}

fn bearer_of(name: &str) -> String {
    format!("Bearer {}", key_of(name))
}

/// `[[approvers]]` entries for `names`, each known by the sha256 of [`key_of`].
fn approvers(names: &[&str]) -> String {
    use sha2::Digest;
    names
        .iter()
        .map(|name| {
            format!(
                "[[approvers]]\nname = \"{name}\"\nkey_sha256 = \"{}\"\n",
                hex::encode(sha2::Sha256::digest(key_of(name).as_bytes()))
            )
        })
        .collect()
}

/// Two of three approvers (`[approvals] quorum = 2`, the admin token not one of them): a
/// parked call goes on only once two distinct approvers approved it, each named by their own
/// key (never by the body); the same approver twice counts once; one denial blocks it; the
/// listing shows who approved so far; an agent's key and the admin token decide nothing.
#[test]
fn a_parked_call_goes_on_only_when_a_quorum_of_distinct_approvers_approved_it() {
    let entry = approve_above_one_hbar();
    let (addr, _server) = serve(&format!(
        "{RETURN_BYTES_HEADER}\n[approvals]\nquorum = 2\nadmin_approves = false\n{}{entry}",
        approvers(&["alice", "bob", "carol"])
    ));
    let as_ = |name: &str| bearer_of(name);
    let decide = |id: &str, verb: &str, who: &str, body: &str| {
        let header = as_(who);
        let headers: Vec<(&str, &str)> = if who == "admin" {
            vec![ADMIN]
        } else {
            vec![("authorization", header.as_str())]
        };
        http(
            addr,
            "POST",
            &format!("/v1/approvals/{id}/{verb}"),
            &headers,
            body,
        )
    };

    let call = call_in_background(addr, transfer(2));
    let id = pending(addr, 1)[0]["id"].as_str().unwrap().to_owned();
    // An approver lists what waits (with the quorum and nobody yet).
    let (status, _, listed) = http(
        addr,
        "GET",
        "/v1/approvals",
        &[("authorization", &as_("carol"))],
        "",
    );
    assert_eq!(status, 200, "{listed}");
    assert_eq!(listed["approvals"][0]["quorum"], 2);
    assert_eq!(listed["approvals"][0]["approvedBy"], json!([]));
    // An approver's key is no admin: no plugins, no metrics.
    assert_eq!(
        http(
            addr,
            "GET",
            "/v1/plugins",
            &[("authorization", &as_("carol"))],
            ""
        )
        .0,
        401
    );
    // Not the admin token, not an unknown key, not a name in the body.
    assert_eq!(decide(&id, "approve", "admin", "").0, 403);
    assert_eq!(decide(&id, "approve", "mallory", "").0, 401);
    assert_eq!(decide(&id, "approve", "alice", r#"{"by":"bob"}"#).0, 400);
    let (status, _, first) = decide(&id, "approve", "alice", "");
    assert_eq!(status, 200, "{first}");
    assert_eq!(first["decision"], "awaiting");
    assert_eq!(first["approvedBy"], json!(["alice"]));
    // Alice again counts once.
    assert_eq!(decide(&id, "approve", "alice", "").0, 409);
    assert_eq!(pending(addr, 1)[0]["approvedBy"], json!(["alice"]));
    assert!(!call.is_finished(), "one approval of two: still parked");
    let (status, _, second) = decide(&id, "approve", "bob", r#"{"note":"checked"}"#);
    assert_eq!(status, 200, "{second}");
    assert_eq!(second["decision"], "approved");
    let out = call.join().unwrap();
    assert!(out["raw"]["bytes"].is_string(), "approved by two: {out}");

    // One denial blocks, whoever approved before.
    let call = call_in_background(addr, transfer(3));
    let id = pending(addr, 1)[0]["id"].as_str().unwrap().to_owned();
    assert_eq!(decide(&id, "approve", "alice", "").0, 200);
    assert_eq!(decide(&id, "deny", "carol", r#"{"note":"no"}"#).0, 200);
    let out = call.join().unwrap();
    let approval = &out["raw"]["policyBlock"]["approval"];
    assert_eq!(approval["decision"], "denied", "{out}");
    assert_eq!(approval["by"], "carol", "{out}");
}

#[test]
fn an_approval_is_granted_denied_and_timed_out_over_http_and_the_cli() {
    let dir = root()
        .join("target/test-tmp")
        .join(format!("approvals-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("decisions.jsonl");
    let entry = approve_above_one_hbar();
    let manifest = format!(
        "{RETURN_BYTES_HEADER}\n[decisions]\npath = {:?}\n{}{entry}",
        log.display().to_string(),
        approvers(&["alice", "bob"])
    );
    let (addr, server) = serve(&manifest);

    // Admin routes need the token.
    assert_eq!(http(addr, "GET", "/v1/approvals", &[], "").0, 401);

    // 1. Granted over HTTP: the call goes on and returns its bytes.
    let call = call_in_background(addr, transfer(2));
    let listed = pending(addr, 1);
    let p = &listed[0];
    assert_eq!(p["plugin"], "approve");
    assert_eq!(p["policyName"], "Approval Above Policy");
    assert_eq!(p["tool"], "transfer_hbar_tool");
    assert_eq!(p["stage"], "post_params_normalization");
    assert_eq!(p["code"], "APPROVAL_ABOVE_THRESHOLD");
    assert_eq!(p["details"]["totalTinybars"], "200000000");
    assert_eq!(p["facts"]["movements"][1]["to"], "0.0.2001", "{p}");
    assert_eq!(
        p["normalisedParams"]["hbarTransfers"][0]["accountId"],
        "0.0.2000"
    );
    let id = p["id"].as_str().unwrap().to_owned();
    let (status, _, body) = http(
        addr,
        "POST",
        &format!("/v1/approvals/{id}/approve"),
        &[("authorization", &bearer_of("alice"))],
        "",
    );
    assert_eq!(
        (status, &body["decision"]),
        (200, &json!("approved")),
        "{body}"
    );
    let out = call.join().unwrap();
    assert!(out["raw"]["bytes"].is_string(), "approved, so built: {out}");
    // Deciding again: nobody waits under that id any more.
    let (status, _, _) = http(
        addr,
        "POST",
        &format!("/v1/approvals/{id}/deny"),
        &[ADMIN],
        "",
    );
    assert_eq!(status, 404);

    // 2. Denied through `hak approvals` (the CLI talks to the same admin routes).
    let call = call_in_background(addr, transfer(3));
    let id = pending(addr, 1)[0]["id"].as_str().unwrap().to_owned();
    let server_url = format!("http://{addr}");
    let cli = |args: &[&str]| {
        let out = std::process::Command::new(hak_bin())
            .args(args)
            .args(["--server", &server_url])
            .env("HAK_ADMIN_TOKEN", "s3cret")
            .env("HAK_TEST_BOB_KEY", key_of("bob"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let listed = cli(&["approvals", "list"]);
    assert_eq!(listed["approvals"][0]["id"], id.as_str(), "{listed}");
    let decided = cli(&[
        "approvals",
        "deny",
        &id,
        "--key-env",
        "HAK_TEST_BOB_KEY",
        "--note",
        "not today",
    ]);
    assert_eq!(decided["decision"], "denied", "{decided}");
    let out = call.join().unwrap();
    let block = &out["raw"]["policyBlock"];
    assert_eq!(block["approval"]["decision"], "denied", "{out}");
    assert_eq!(block["approval"]["by"], "bob");
    assert_eq!(block["approval"]["via"], "admin-api");
    assert!(
        block["reason"]
            .as_str()
            .unwrap()
            .ends_with("(denied by bob: not today)"),
        "{out}"
    );
    assert!(out["raw"].get("bytes").is_none(), "{out}");
    drop(server);

    // 3. Timed out: nobody decides within the (host-capped) timeout.
    let entry = plugin_entry(
        "approve",
        "rust/approval-above",
        "config = { approveAboveHbar = 1 }",
    );
    let (addr, _server) = serve(&format!(
        "{RETURN_BYTES_HEADER}\n[approvals]\ndefault_timeout_seconds = 1\nmax_timeout_seconds = 1\n{entry}"
    ));
    let started = Instant::now();
    let out = http(
        addr,
        "POST",
        "/v1/tools/transfer_hbar_tool",
        &[],
        &transfer(2),
    )
    .2;
    assert_eq!(
        out["raw"]["policyBlock"]["approval"]["decision"], "timeout",
        "{out}"
    );
    assert!(started.elapsed() >= Duration::from_secs(1));
    assert!(
        pending(addr, 0).is_empty(),
        "a timed-out call is no longer listed"
    );

    // The decision log says who decided what.
    let lines: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let approvals: Vec<(&str, &str, &str)> = lines
        .iter()
        .flat_map(|l| l["decisions"].as_array().unwrap())
        .filter_map(|d| {
            let a = d.get("approval")?;
            Some((
                d["verdict"].as_str()?,
                a["decision"].as_str()?,
                a["by"].as_str().unwrap_or(""),
            ))
        })
        .collect();
    assert_eq!(
        approvals,
        [
            ("approved", "approved", "alice"),
            ("denied", "denied", "bob")
        ],
        "{lines:?}"
    );
}

#[test]
#[ignore = "needs the JS plugins (scripts/build-plugins.sh js); scripts/test.sh runs it"]
fn a_js_time_window_reads_the_clock_live_not_at_build_time() {
    let now_ms = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as i64
    };
    let hour = (now_ms() / 3_600_000 % 24) as u32;
    let window = |from: u32, to: u32| {
        let entry = plugin_entry(
            "window",
            "js/time-window",
            &format!("config = {{ fromHour = {from}, toHour = {to} }}"),
        );
        start(&format!("{RETURN_BYTES_HEADER}{entry}")).0
    };
    // Now is inside [hour, hour + 2): allowed.
    let to = if hour + 2 > 24 {
        hour + 2 - 24
    } else {
        hour + 2
    };
    let out = window(hour, to)
        .default_session()
        .call("transfer_hbar_tool", &transfer(1))
        .unwrap();
    assert!(out["raw"]["bytes"].is_string(), "{out}");
    // Outside [hour + 2, hour + 3): blocked, reporting the clock it read, which moves.
    let from = (hour + 2) % 24;
    let to = if hour + 3 > 24 {
        hour + 3 - 24
    } else {
        hour + 3
    };
    let host = window(from, to);
    let mut session = host.default_session();
    let read = |session: &mut hak_host::lifecycle::Session| {
        let out = session.call("transfer_hbar_tool", &transfer(1)).unwrap();
        assert_eq!(
            out["raw"]["policyBlock"]["reasonCode"], "OUTSIDE_TIME_WINDOW",
            "{out}"
        );
        out["raw"]["policyBlock"]["details"]["nowUnixMs"]
            .as_i64()
            .unwrap_or_else(|| panic!("{out}"))
    };
    let first = read(&mut session);
    assert!(
        (first - now_ms()).abs() < 60_000,
        "the host's clock, not the build's: {first}"
    );
    std::thread::sleep(Duration::from_millis(1100));
    let second = read(&mut session);
    assert!(
        second - first >= 1000,
        "the clock moved: {first} then {second}"
    );
}

/// A policy asking for approval at pre-tool-execution would have the approver decide on its
/// own words alone (no normalised params, no facts yet): the host refuses the call at once and
/// parks nothing.
#[test]
fn an_approval_asked_before_the_host_states_the_call_is_refused_not_parked() {
    let entry = plugin_entry(
        "early",
        "fixtures/hostile",
        "[plugins.config]\nmode = \"approve-early\"",
    );
    let (addr, _server) = serve(&format!("{RETURN_BYTES_HEADER}{entry}"));
    let attack =
        r#"{"transfers":[{"accountId":"0.0.666","amount":100}],"transactionMemo":"attack"}"#;
    let out = http(addr, "POST", "/v1/tools/transfer_hbar_tool", &[], attack).2;
    assert_eq!(out["raw"]["errorCode"], "POLICY_BLOCKED", "{out}");
    let reason = out["raw"]["policyBlock"]["reason"].as_str().unwrap();
    assert!(reason.contains("an approver would decide blind"), "{out}");
    assert!(out["raw"]["bytes"].is_null(), "nothing built: {out}");
    let (status, _, listed) = http(addr, "GET", "/v1/approvals", &[ADMIN], "");
    assert_eq!(status, 200);
    assert_eq!(listed["approvals"], serde_json::json!([]), "{listed}");
}

/// A plugin built for 0.2.0 exports no `inputs` (0.2.1): it loads on this host and is handed
/// the whole stage input, params and facts, beside 0.2.1 plugins that read less.
#[test]
fn a_plugin_built_for_contract_0_2_0_still_gets_the_whole_stage_input() {
    let older = plugin_entry("older", "fixtures/v0-2-0", "");
    let blind = plugin_entry(
        "blind",
        "fixtures/recorder",
        "[plugins.config]\ntag = \"B\"\nreads = []\nstages = [\"post-params-normalization\"]\n",
    );
    let (host, _logs) = start(&format!("{RETURN_BYTES_HEADER}{blind}{older}"));
    let out = host
        .default_session()
        .call("transfer_hbar_tool", &transfer(2))
        .unwrap();
    let reason = out["raw"]["policyBlock"]["reason"]
        .as_str()
        .unwrap_or_default();
    assert!(
        reason.starts_with("0.2.0 got ") && reason.ends_with(" params bytes and 2 movements"),
        "{out}"
    );
    let bytes: usize = reason["0.2.0 got ".len()..]
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(bytes > 100, "{out}");
}

/// The `hak:fast/judge` extension (`wit/ext/judge.wit`): for a tool the plugin names in its
/// relevant tools and reads no facts of, the host calls `judge` with flat arguments instead
/// of `policy`; the plugin then gets the same method and params (none when it reads none).
/// A tool it reaches only through `"*"`, or whose facts it reads, goes through `policy`. The
/// fixture's two exports answer differently, so the block reason names the one called.
#[test]
fn named_tools_without_facts_are_judged_through_flat_arguments() {
    let reason = |tools: &str, reads: &str| {
        let entry = plugin_entry(
            "two-faced",
            "fixtures/two-faced",
            &format!("[plugins.config]\nrelevantTools = {tools}\n{reads}"),
        );
        let (host, _logs) = start(&format!("{RETURN_BYTES_HEADER}{entry}"));
        let out = host
            .default_session()
            .call("transfer_hbar_tool", &transfer(2))
            .unwrap();
        assert_eq!(out["raw"]["errorCode"], "POLICY_BLOCKED", "{out}");
        out["raw"]["policyBlock"]["reason"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    let named = r#"["create_topic_tool", "transfer_hbar_tool"]"#;
    let judged = reason(named, "reads = [\"params\"]");
    let policed = reason(r#"["*"]"#, "reads = [\"params\"]");
    let bytes = |r: &str| -> usize {
        r.split("params=")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    assert!(
        judged.starts_with("judge saw transfer_hbar_tool params="),
        "{judged}"
    );
    assert!(judged.ends_with(" facts=none"), "{judged}");
    assert!(
        policed.starts_with("policy saw transfer_hbar_tool params="),
        "{policed}"
    );
    assert!(bytes(&judged) > 100, "{judged}");
    assert_eq!(bytes(&judged), bytes(&policed), "{judged} / {policed}");
    // Reading nothing: no params sent at all.
    assert_eq!(
        reason(named, "reads = []"),
        "judge saw transfer_hbar_tool params=0 facts=none"
    );
    // Facts are only in `policy`'s input: a plugin that reads them is called there.
    let with_facts = reason(named, "reads = [\"params\", \"facts\"]");
    assert!(
        with_facts.starts_with("policy saw transfer_hbar_tool params="),
        "{with_facts}"
    );
    assert!(with_facts.ends_with(" facts=2"), "{with_facts}");
    // Saying nothing about what it reads means reading everything, facts included.
    assert!(reason(named, "").starts_with("policy saw "));
}

/// The Rust SDK's `judge` hands the plugin the name of the tool it was called for, call after
/// call on one instance (it lends the name from its table of relevant tools and takes it
/// back): `reject-tool` names the tool it blocks.
#[test]
fn the_sdks_judge_names_each_calls_own_tool_call_after_call() {
    let entry = plugin_entry(
        "reject",
        "rust/reject-tool",
        "config = { relevantTools = [\"create_topic_tool\", \"transfer_hbar_tool\", \"get_hbar_balance_query_tool\"] }",
    );
    let (host, _logs) = start(&format!("{RETURN_BYTES_HEADER}{entry}"));
    let mut session = host.default_session();
    let calls = [
        ("transfer_hbar_tool", transfer(1)),
        (
            "get_hbar_balance_query_tool",
            r#"{"accountId":"0.0.1001"}"#.to_owned(),
        ),
        ("transfer_hbar_tool", transfer(2)),
        ("transfer_hbar_tool", transfer(1)),
        ("create_topic_tool", "{}".to_owned()),
        (
            "get_hbar_balance_query_tool",
            r#"{"accountId":"0.0.1001"}"#.to_owned(),
        ),
    ];
    for (tool, params) in calls {
        let out = session.call(tool, &params).unwrap();
        assert_eq!(out["raw"]["errorCode"], "POLICY_BLOCKED", "{tool}: {out}");
        assert_eq!(
            out["raw"]["policyBlock"]["reason"],
            format!("tool {tool} is not allowed"),
            "{out}"
        );
    }
}

/// Stopping a server with a call in flight (parked for approval, so surely inside) and an
/// idle keep-alive connection: the call ends blocked and its answer still reaches the client,
/// the idle connection is closed by the server, `serve` reports every call finished, and no
/// new connection is accepted (the graceful stop of `serve::http`).
#[test]
fn a_stopped_server_answers_its_call_in_flight_closes_idle_connections_and_accepts_no_more() {
    use std::io::{Read, Write};
    let entry = approve_above_one_hbar();
    let (server, stoppable) = serve_stoppable(&format!(
        "{RETURN_BYTES_HEADER}\n[server]\ndrain_seconds = 5\n{entry}"
    ));
    let addr = server.addr;
    let mut idle = std::net::TcpStream::connect(addr).unwrap();
    idle.write_all(b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
        .unwrap();
    let mut answer = [0u8; 512];
    let n = idle.read(&mut answer).unwrap();
    assert!(
        answer[..n].starts_with(b"HTTP/1.1 200"),
        "{:?}",
        String::from_utf8_lossy(&answer[..n])
    );
    let call = call_in_background(addr, transfer(2));
    pending(addr, 1);
    assert!(stoppable.stop(), "the drain ran out");
    let out = call.join().unwrap();
    let block = &out["raw"]["policyBlock"];
    assert!(
        block.to_string().contains("shutting down"),
        "the parked call did not end blocked by the stop: {out}"
    );
    assert!(
        out["raw"].get("bytes").is_none(),
        "nothing handed out: {out}"
    );
    idle.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    assert_eq!(
        idle.read(&mut answer).unwrap(),
        0,
        "the idle connection is still open"
    );
    assert!(
        std::net::TcpStream::connect(addr).is_err(),
        "a stopped server still accepts connections"
    );
}

/// Two approvers in the console, in a real browser: alice signs in with her own key and
/// approves (the card stays, saying who approved of how many, her Approve spent; another page
/// refuses her key without forgetting it), then bob approves and the call goes on.
#[test]
#[ignore = "needs chromium and `npm ci` in tests/console (scripts/install-deps.sh); scripts/test.sh runs it"]
fn two_approvers_approve_a_call_in_the_console_in_a_real_browser() {
    let entry = approve_above_one_hbar();
    let (addr, _server) = serve(&format!(
        "{RETURN_BYTES_HEADER}\n[approvals]\nquorum = 2\nadmin_approves = false\n{}{entry}",
        approvers(&["alice", "bob"])
    ));
    let call = call_in_background(addr, transfer(2));
    pending(addr, 1);
    let drive = |key: &str, action: &str, shot: &str| -> Value {
        let out = std::process::Command::new("node")
            .arg(root().join("tests/console/drive.mjs"))
            .args([&format!("http://{addr}"), key, action, "--approver"])
            .arg("--screenshot")
            .arg(root().join("target/test-tmp").join(shot))
            .output()
            .expect("node runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let report: Value = serde_json::from_str(stdout.lines().last().unwrap_or_default())
            .unwrap_or_else(|e| panic!("{e}: {stdout}\n{}", String::from_utf8_lossy(&out.stderr)));
        assert_eq!(report["errors"], json!([]), "{report}");
        assert_eq!(report["external"], json!([]), "{report}");
        report
    };
    let alice = drive(&key_of("alice"), "approve-once", "console-quorum.png");
    assert!(
        alice["status"]
            .as_str()
            .unwrap()
            .contains("Approved as alice: 1 of 2"),
        "{alice}"
    );
    assert_eq!(alice["quorum"], "approved by alice (1 of 2)", "{alice}");
    assert_eq!(alice["approveEnabled"], false, "{alice}");
    assert_eq!(alice["signOutShown"], true, "{alice}");
    assert!(!call.is_finished(), "one approval of two: still parked");
    let bob = drive(&key_of("bob"), "approve", "console-quorum-done.png");
    assert!(
        bob["card"]
            .as_str()
            .unwrap()
            .contains("approved by alice (1 of 2)"),
        "{bob}"
    );
    assert_eq!(bob["pauseShown"], false, "an approver's key: {bob}");
    let out = call.join().unwrap();
    assert!(out["raw"]["bytes"].is_string(), "approved by two: {out}");
}
