//! The kill switch (`POST /v1/pause`, `POST /v1/resume`): while paused every tool that changes
//! the ledger is blocked at once in the kit's block envelope with the reason, queries answer,
//! a call parked for approval is denied; the pause is counted, logged in the decision log,
//! survives a restart (the journal), and is shared by two `hak serve` replicas on one Redis —
//! and a replica that cannot read it from a frozen Redis counts as paused until it can.

use hak_tests::*;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

const TOKEN: (&str, &str) = ("authorization", "Bearer s3cret");

fn transfer_of(hbar: f64) -> String {
    json!({"transfers": [{"accountId": "0.0.1002", "amount": hbar}]}).to_string()
}

fn call(addr: std::net::SocketAddr, tool: &str, params: &str) -> Value {
    http(addr, "POST", &format!("/v1/tools/{tool}"), &[], params).2
}

/// The kill switch's block: the kit's envelope, policy `Kill Switch`, code `PAUSED`.
fn assert_paused(out: &Value, reason: &str) {
    let block = &out["raw"]["policyBlock"];
    assert_eq!(block["reasonCode"], "PAUSED", "{out}");
    assert_eq!(block["policyName"], "Kill Switch", "{out}");
    assert!(
        block["reason"]
            .as_str()
            .unwrap_or_default()
            .contains(reason),
        "{out}"
    );
    assert_eq!(out["raw"]["errorCode"], "POLICY_BLOCKED", "{out}");
}

fn metric(addr: std::net::SocketAddr, line_start: &str) -> String {
    let (_, _, text) = http_text(addr, "GET", "/metrics", &[TOKEN], "");
    text.lines()
        .find(|l| l.starts_with(line_start))
        .unwrap_or_else(|| panic!("no {line_start} in {text}"))
        .to_owned()
}

#[test]
fn a_pause_blocks_what_changes_the_ledger_denies_parked_calls_and_lets_queries_answer() {
    let dir = root().join(format!(
        "target/test-tmp/kill-switch-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("decisions.jsonl");
    let (addr, _server) = serve(&format!(
        "{LOCAL}\n[decisions]\npath = {:?}\n{}",
        log.display().to_string(),
        plugin_entry(
            "approve",
            "rust/approval-above",
            "config = { approveAboveHbar = 5, timeoutSeconds = 120 }"
        )
    ));
    assert_eq!(
        call(addr, "transfer_hbar_tool", &transfer_of(1.0))["raw"]["status"],
        "SUCCESS"
    );
    let parked = std::thread::spawn(move || call(addr, "transfer_hbar_tool", &transfer_of(7.0)));
    let deadline = Instant::now() + Duration::from_secs(20);
    while http(addr, "GET", "/v1/approvals", &[TOKEN], "").2["approvals"]
        .as_array()
        .is_none_or(Vec::is_empty)
    {
        assert!(Instant::now() < deadline, "the 7 HBAR call never parked");
        std::thread::sleep(Duration::from_millis(20));
    }

    // Only the admin, and only with a reason.
    assert_eq!(
        http(addr, "POST", "/v1/pause", &[], r#"{"reason":"x"}"#).0,
        401
    );
    assert_eq!(http(addr, "POST", "/v1/pause", &[TOKEN], "{}").0, 400);
    assert_eq!(
        http(addr, "POST", "/v1/pause", &[TOKEN], r#"{"reason":"  "}"#).0,
        400
    );
    let (status, _, paused) = http(
        addr,
        "POST",
        "/v1/pause",
        &[TOKEN],
        r#"{"reason":"incident 7: a leaked key"}"#,
    );
    assert_eq!(status, 200, "{paused}");
    assert_eq!(paused["paused"], true);
    assert_eq!(paused["pause"]["by"], "admin");

    // The parked call is denied with the pause's reason.
    let out = parked.join().unwrap();
    let block = &out["raw"]["policyBlock"];
    assert_eq!(block["approval"]["decision"], "denied", "{out}");
    assert_eq!(block["approval"]["via"], "kill-switch", "{out}");
    assert!(
        block["approval"]["note"]
            .as_str()
            .unwrap_or_default()
            .contains("incident 7"),
        "{out}"
    );
    // Anything that changes the ledger is blocked at once; queries answer.
    assert_paused(
        &call(addr, "transfer_hbar_tool", &transfer_of(1.0)),
        "incident 7: a leaked key",
    );
    assert_paused(
        &call(addr, "create_topic_tool", r#"{"topicMemo":"m"}"#),
        "incident 7",
    );
    let balance = call(
        addr,
        "get_hbar_balance_query_tool",
        r#"{"accountId":"0.0.1002"}"#,
    );
    assert_eq!(balance["raw"]["status"], "SUCCESS", "{balance}");
    assert_eq!(metric(addr, "hak_paused "), "hak_paused 1");
    assert_eq!(
        metric(addr, "hak_kill_switch_total{action=\"paused\"}"),
        "hak_kill_switch_total{action=\"paused\"} 1"
    );
    assert_eq!(
        http(addr, "GET", "/v1/pause", &[TOKEN], "").2["pause"]["reason"],
        "incident 7: a leaked key"
    );

    let (status, _, resumed) = http(addr, "POST", "/v1/resume", &[TOKEN], "");
    assert_eq!(status, 200, "{resumed}");
    assert_eq!(resumed, json!({"paused": false, "pause": null}));
    assert_eq!(
        call(addr, "transfer_hbar_tool", &transfer_of(1.0))["raw"]["status"],
        "SUCCESS"
    );
    assert_eq!(metric(addr, "hak_paused "), "hak_paused 0");

    // The decision log says who paused and resumed, and when; the call list stays calls.
    let deadline = Instant::now() + Duration::from_secs(10);
    let events = loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let events: Vec<Value> = text
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|l| l.get("event").is_some())
            .collect();
        if events.len() == 2 || Instant::now() > deadline {
            break events;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(events[0]["event"], "pause");
    assert_eq!(events[0]["by"], "admin");
    assert_eq!(events[0]["reason"], "incident 7: a leaked key");
    assert!(events[0]["time"].is_string() && events[0]["pausedAt"].is_string());
    assert_eq!(events[1]["event"], "resume");
    let listed = http(addr, "GET", "/v1/decisions", &[TOKEN], "").2;
    assert!(
        listed["decisions"]
            .as_array()
            .unwrap()
            .iter()
            .all(|d| d["tool"].is_string()),
        "{listed}"
    );
}

/// A pause kept in the journal holds after a restart, before any admin says anything.
#[test]
fn a_pause_survives_a_restart() {
    let dir = root().join(format!(
        "target/test-tmp/kill-switch-restart-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let manifest = format!(
        "{RETURN_BYTES_HEADER}[state]\nbackend = \"journal\"\ndir = {:?}\n",
        dir.display().to_string()
    );
    {
        let (host, _) = start(&manifest);
        host.pause("closing for the night", "admin").unwrap();
    }
    let (host, _) = start(&manifest);
    assert_eq!(
        host.paused().map(|p| p.reason.clone()).as_deref(),
        Some("closing for the night")
    );
    let out = host
        .default_session()
        .call("transfer_hbar_tool", &transfer_of(1.0))
        .unwrap();
    assert_paused(&out, "closing for the night");
    host.resume("admin").unwrap();
    drop(host);
    let (host, _) = start(&manifest);
    assert!(host.paused().is_none());
}

fn redis_replica(dir: &std::path::Path, name: &str, redis: &RedisServer) -> ServeProcess {
    let manifest = dir.join(format!("{name}.toml"));
    std::fs::write(
        &manifest,
        format!(
            "{RETURN_BYTES_HEADER}\n[state]\nbackend = \"redis\"\nurl = \"{}\"\ntimeout_ms = 200\n",
            redis.url
        ),
    )
    .unwrap();
    ServeProcess::start(&manifest, &dir.join(format!("{name}.log")))
}

/// Call `transfer_hbar_tool` on `server` until `done` says its answer is the awaited one.
fn until(server: &ServeProcess, within: Duration, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + within;
    loop {
        let out = server.call("transfer_hbar_tool", &transfer_of(1.0));
        if done(&out) {
            return out;
        }
        assert!(Instant::now() < deadline, "still {out}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn passes(out: &Value) -> bool {
    out["raw"]["status"] == "SUCCESS"
}

fn paused(out: &Value) -> bool {
    out["raw"]["policyBlock"]["reasonCode"] == "PAUSED"
}

#[test]
fn two_replicas_on_one_redis_share_the_pause_and_a_frozen_redis_counts_as_paused() {
    let dir = root().join(format!(
        "target/test-tmp/kill-switch-redis-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let redis = RedisServer::start();
    let a = redis_replica(&dir, "a", &redis);
    let b = redis_replica(&dir, "b", &redis);
    assert!(passes(&b.call("transfer_hbar_tool", &transfer_of(1.0))));

    // Paused through one, the other blocks within its refresh.
    let (status, _, body) = http(
        a.addr,
        "POST",
        "/v1/pause",
        &[],
        r#"{"reason":"treasury audit"}"#,
    );
    assert_eq!(status, 200, "{body}");
    assert!(paused(&a.call("transfer_hbar_tool", &transfer_of(1.0))));
    let out = until(&b, Duration::from_secs(10), paused);
    assert_paused(&out, "treasury audit");
    // Resumed through the other, both run again.
    assert_eq!(http(b.addr, "POST", "/v1/resume", &[], "").0, 200);
    until(&a, Duration::from_secs(10), passes);
    until(&b, Duration::from_secs(10), passes);

    // Redis frozen: nobody can tell whether another replica paused, so after a while
    // nothing that changes the ledger runs; thawed, calls run again.
    redis.signal("STOP");
    let out = until(&a, Duration::from_secs(30), paused);
    assert!(
        out["raw"]["policyBlock"]["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("cannot be read from the state store"),
        "{out}"
    );
    redis.signal("CONT");
    until(&a, Duration::from_secs(30), passes);
    until(&b, Duration::from_secs(30), passes);

    // A replica restarted on the store starts paused.
    assert_eq!(
        http(a.addr, "POST", "/v1/pause", &[], r#"{"reason":"again"}"#).0,
        200
    );
    b.kill();
    let b = redis_replica(&dir, "b2", &redis);
    assert!(paused(&b.call("transfer_hbar_tool", &transfer_of(1.0))));
}
