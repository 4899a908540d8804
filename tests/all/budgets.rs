//! Budgets that hold (contract 0.1.2 `budget`): spend-limit and rate-limit reserve atomically,
//! the host commits or releases by the call's outcome, and no concurrency, restart, process,
//! replica or unknown receipt gets around them. Every test here was an overrun before.

use hak_host::state_store::{sqlite::SqliteBackend, MemoryBackend, StateBackend};
use hak_host::{AgentContext, AgentMode, Host, HostBuilder};
use hak_tests::*;
use serde_json::json;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

fn spend_limit(budget_hbar: u64) -> String {
    plugin_entry(
        "spend",
        "rust/spend-limit",
        &format!("[plugins.config]\ndailyHbarBudget = {budget_hbar}"),
    )
}

fn rate_limit(limit: u32) -> String {
    plugin_entry(
        "rate",
        "rust/rate-limit",
        &format!("[plugins.config]\nlimit = {limit}\nwindowSeconds = 3600"),
    )
}

fn host_with(manifest: &str, backend: Arc<dyn StateBackend>) -> Host {
    let manifest = hak_host::manifest::Manifest::parse(manifest, "test manifest", root())
        .unwrap_or_else(|e| panic!("bad test manifest: {e}"));
    HostBuilder::new(manifest)
        .cache_dir(Some(cache_dir()))
        .state_backend(backend)
        .build()
        .unwrap()
}

fn hbar_to(account: &str, amount: f64) -> String {
    json!({"transfers": [{"accountId": account, "amount": amount}]}).to_string()
}

/// `threads` sessions of `context` on `hosts` (round robin), each making `per_thread` calls
/// of `params` at once; how many succeeded.
fn hammer(
    hosts: &[Host],
    context: &AgentContext,
    threads: usize,
    per_thread: usize,
    params: &str,
) -> usize {
    let ok = AtomicUsize::new(0);
    let barrier = std::sync::Barrier::new(threads);
    std::thread::scope(|s| {
        for t in 0..threads {
            let host = hosts[t % hosts.len()].clone();
            let (ok, barrier) = (&ok, &barrier);
            let context = context.clone();
            s.spawn(move || {
                let mut session = host.session(context);
                barrier.wait();
                for _ in 0..per_thread {
                    let out = session.call("transfer_hbar_tool", params).unwrap();
                    if out["raw"]["status"] == "SUCCESS" {
                        ok.fetch_add(1, Ordering::Relaxed);
                    }
                }
            });
        }
    });
    ok.into_inner()
}

fn bytes_context() -> AgentContext {
    AgentContext {
        account_id: Some(hedera::AccountId::new(0, 0, 1001)),
        mode: AgentMode::ReturnBytes,
    }
}

#[test]
fn sixty_four_concurrent_calls_of_one_context_never_pass_a_budget_or_a_rate() {
    let backend: Arc<dyn StateBackend> = Arc::new(MemoryBackend::default());
    let host = host_with(&format!("{RETURN_BYTES_HEADER}{}", spend_limit(5)), backend);
    let passed = hammer(&[host], &bytes_context(), 64, 1, &hbar_to("0.0.1002", 1.0));
    assert_eq!(passed, 5, "a 5 HBAR budget, 64 concurrent 1 HBAR calls");

    let backend: Arc<dyn StateBackend> = Arc::new(MemoryBackend::default());
    let host = host_with(&format!("{RETURN_BYTES_HEADER}{}", rate_limit(5)), backend);
    let passed = hammer(&[host], &bytes_context(), 64, 2, &hbar_to("0.0.1002", 1.0));
    assert_eq!(passed, 5, "5 calls per hour, 128 concurrent calls");
}

#[test]
fn autonomous_concurrent_transfers_move_no_more_than_the_budget() {
    let (base, _) = start(LOCAL);
    let manifest = format!("{}{}", same_network(&base), spend_limit(5));
    let host = host_with(&manifest, Arc::new(MemoryBackend::default()));
    let context = host.default_context().clone();
    let before = balance(&base, "0.0.1004");
    let passed = hammer(&[host], &context, 64, 1, &hbar_to("0.0.1004", 1.0));
    assert!(passed <= 5, "{passed} passed");
    assert_eq!(
        balance(&base, "0.0.1004") - before,
        passed as i64 * 100_000_000,
        "the ledger moved what was approved"
    );
}

fn balance(host: &Host, account: &str) -> i64 {
    let out = host
        .mirror_get(&format!("/balances?account.id={account}"))
        .unwrap();
    out["balances"][0]["balance"].as_i64().unwrap()
}

#[test]
fn a_random_concurrent_schedule_never_approves_more_than_the_budget() {
    // Random amounts, some calls refused later in the chain (a recipient deny list after the
    // budget: their reservations must be released, not leak), many threads: the approved total
    // never passes the budget, and the refused calls do not eat it.
    let seed = 0x0b0d_6e75_u64 ^ std::process::id() as u64;
    println!("seed {seed}");
    let mut rng = Rng(seed | 1);
    let budget = 40u64;
    let deny = plugin_entry(
        "deny",
        "rust/recipient-denylist",
        "[plugins.config]\naccounts = [\"0.0.666\"]",
    );
    let manifest = format!("{RETURN_BYTES_HEADER}{}{deny}", spend_limit(budget));
    let backend = Arc::new(MemoryBackend::default());
    let host = host_with(&manifest, backend.clone());
    let plans: Vec<Vec<(String, u64, bool)>> = (0..16)
        .map(|_| {
            (0..8)
                .map(|_| {
                    let amount = 1 + rng.below(4);
                    let denied = rng.below(4) == 0;
                    let to = if denied { "0.0.666" } else { "0.0.1002" };
                    (hbar_to(to, amount as f64), amount, denied)
                })
                .collect()
        })
        .collect();
    let approved = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for plan in &plans {
            let host = host.clone();
            let approved = &approved;
            s.spawn(move || {
                let mut session = host.session(bytes_context());
                for (params, amount, denied) in plan {
                    let out = session.call("transfer_hbar_tool", params).unwrap();
                    if out["raw"]["status"] == "SUCCESS" {
                        assert!(!denied);
                        approved.fetch_add(*amount as usize, Ordering::Relaxed);
                    }
                }
            });
        }
    });
    let approved = approved.into_inner() as u64;
    assert!(approved <= budget, "approved {approved} > budget {budget}");
    // What the store holds is exactly what was approved: refused calls were released.
    let spent = backend
        .spent(
            &hak_host::state_store::PadKey {
                scope: "0.0.1001/returnBytes".into(),
                plugin: "spend".into(),
            },
            "spent:hbar",
            86_400,
            hak_host::state_store::now_ms(),
        )
        .unwrap();
    assert_eq!(spent, approved * 100_000_000);
}

#[test]
fn an_unknown_receipt_counts_as_spent() {
    let (base, _) = start(LOCAL);
    let manifest = format!("{}{}", same_network(&base), spend_limit(3))
        .replace("[context]", "request_timeout_ms = 1500\n\n[context]");
    let host = host_with(&manifest, Arc::new(MemoryBackend::default()));
    let emu = base.local_network().unwrap();
    // No receipt, and the mirror does not know the transactions yet either.
    emu.inject(|f| {
        f.receipt_unknown = 1_000_000;
        f.mirror_lag = std::time::Duration::from_secs(600);
    });
    let mut session = host.default_session();
    let mut unknown = 0;
    for _ in 0..5 {
        let out = session
            .call("transfer_hbar_tool", &hbar_to("0.0.1003", 1.0))
            .unwrap();
        match out["raw"]["errorCode"].as_str() {
            Some("OUTCOME_UNKNOWN") => {
                unknown += 1;
                assert!(out["raw"]["transactionId"]
                    .as_str()
                    .unwrap()
                    .starts_with("0.0.1001@"));
            }
            Some("POLICY_BLOCKED") => {}
            other => panic!("unexpected {other:?}: {out}"),
        }
    }
    emu.inject(|f| {
        f.receipt_unknown = 0;
        f.mirror_lag = std::time::Duration::ZERO;
    });
    // Three unknown outcomes used up the 3 HBAR budget; the rest were blocked.
    assert_eq!(unknown, 3);
}

#[test]
fn a_missing_receipt_is_resolved_through_the_mirror() {
    let (base, _) = start(LOCAL);
    let manifest = format!("{}{}", same_network(&base), spend_limit(3))
        .replace("[context]", "request_timeout_ms = 1500\n\n[context]");
    let host = host_with(&manifest, Arc::new(MemoryBackend::default()));
    let emu = base.local_network().unwrap();
    emu.inject(|f| f.receipt_unknown = 1_000_000);
    let before = balance(&base, "0.0.1003");
    let out = host
        .default_session()
        .call("transfer_hbar_tool", &hbar_to("0.0.1003", 1.0))
        .unwrap();
    emu.inject(|f| f.receipt_unknown = 0);
    // The node never gave a receipt; the mirror has the record: the transfer applied.
    assert_eq!(out["raw"]["status"], "SUCCESS", "{out}");
    assert!(out["raw"]["transactionId"]
        .as_str()
        .unwrap()
        .starts_with("0.0.1001@"));
    assert_eq!(balance(&base, "0.0.1003") - before, 100_000_000);
}

#[test]
fn a_hundred_thousand_spends_in_one_window_keep_the_store_bounded_and_exact() {
    // Through spend-limit: a budget of 100,000 tinybars, 1 tinybar per call. 100,000 calls
    // on a loaded 2-core machine met the default 100 ms deadline once (call 52,573 of a
    // clean-clone run); the deadline is not what this is about.
    let entry = plugin_entry(
        "spend",
        "rust/spend-limit",
        "[plugins.limits]\ndeadline_ms = 5000\n[plugins.config]\ndailyHbarBudget = \"0.001\"",
    );
    let backend = Arc::new(MemoryBackend::default());
    let host = host_with(&format!("{RETURN_BYTES_HEADER}{entry}"), backend.clone());
    let mut session = host.session(bytes_context());
    let tinybar = hbar_to("0.0.1002", 0.000_000_01);
    for i in 0..100_000 {
        let out = session.call("transfer_hbar_tool", &tinybar).unwrap();
        assert_eq!(out["raw"]["status"], "SUCCESS", "spend {i}: {out}");
    }
    let out = session.call("transfer_hbar_tool", &tinybar).unwrap();
    assert_eq!(
        out["raw"]["policyBlock"]["details"]["spent"], "100000",
        "{out}"
    );
    assert!(backend.rows() <= 61, "{} rows", backend.rows());
}

#[test]
fn budgets_hold_across_hosts_on_one_durable_store_and_across_restarts() {
    let dir = root().join(format!("target/test-tmp/state-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let manifest = format!("{RETURN_BYTES_HEADER}{}", spend_limit(10));
    // Two "processes" (two hosts, two connections) on one file, concurrently.
    let a = host_with(&manifest, Arc::new(SqliteBackend::open(&dir).unwrap()));
    let b = host_with(&manifest, Arc::new(SqliteBackend::open(&dir).unwrap()));
    let passed = hammer(&[a, b], &bytes_context(), 32, 1, &hbar_to("0.0.1002", 1.0));
    assert_eq!(passed, 10);
    // A restart: a new host on the same directory remembers.
    let c = host_with(&manifest, Arc::new(SqliteBackend::open(&dir).unwrap()));
    let out = c
        .session(bytes_context())
        .call("transfer_hbar_tool", &hbar_to("0.0.1002", 1.0))
        .unwrap();
    assert_eq!(out["raw"]["errorCode"], "POLICY_BLOCKED", "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[ignore = "needs redis-server (scripts/install-deps.sh); scripts/test.sh runs it"]
fn two_replicas_on_one_redis_never_pass_a_budget() {
    let redis = RedisServer::start();
    // Generous bounds (the store's and the plugin's deadline): this is about atomicity with
    // 64 calls on 2 cores, not a slow store; on a loaded machine a call out of time would be
    // refused (fail closed), which is not what is counted here.
    let manifest = format!(
        "{RETURN_BYTES_HEADER}{}[plugins.limits]\ndeadline_ms = 5000\n\n[state]\nbackend = \"redis\"\nurl = \"{}\"\ntimeout_ms = 2000\n",
        spend_limit(7),
        redis.url
    );
    let replica = || start(&manifest).0;
    let (a, b) = (replica(), replica());
    assert!(a.state_backend().describe().starts_with("redis"));
    let passed = hammer(
        &[a, b.clone()],
        &bytes_context(),
        64,
        1,
        &hbar_to("0.0.1002", 1.0),
    );
    assert_eq!(
        passed, 7,
        "a 7 HBAR budget over two replicas, 64 concurrent calls"
    );
    // The scratchpad is shared too, and so is a restart's view.
    let c = replica();
    let out = c
        .session(bytes_context())
        .call("transfer_hbar_tool", &hbar_to("0.0.1002", 1.0))
        .unwrap();
    assert_eq!(out["raw"]["errorCode"], "POLICY_BLOCKED", "{out}");
    drop(b);
}

#[test]
#[ignore = "needs redis-server (scripts/install-deps.sh); scripts/test.sh runs it"]
fn a_state_store_that_cannot_answer_blocks() {
    let redis = RedisServer::start();
    let manifest = format!(
        "{RETURN_BYTES_HEADER}{}\n[state]\nbackend = \"redis\"\nurl = \"{}\"\n",
        spend_limit(7),
        redis.url
    );
    let (host, _) = start(&manifest);
    let mut session = host.session(bytes_context());
    let ok = session
        .call("transfer_hbar_tool", &hbar_to("0.0.1002", 1.0))
        .unwrap();
    assert_eq!(ok["raw"]["status"], "SUCCESS", "{ok}");
    drop(redis);
    let out = session
        .call("transfer_hbar_tool", &hbar_to("0.0.1002", 1.0))
        .unwrap();
    assert_eq!(
        out["raw"]["policyBlock"]["reasonCode"], "SPEND_LIMIT_UNAVAILABLE",
        "{out}"
    );
}

#[test]
#[ignore = "needs the JS and Go plugins (scripts/build-plugins.sh js go); scripts/test.sh runs it"]
fn the_js_and_go_sdks_reserve_atomically_too() {
    for lang in ["js", "go"] {
        let entry = plugin_entry(
            "spend",
            &format!("{lang}/spend-limit"),
            "[plugins.config]\ndailyHbarBudget = 5",
        );
        let backend: Arc<dyn StateBackend> = Arc::new(MemoryBackend::default());
        let host = host_with(&format!("{RETURN_BYTES_HEADER}{entry}"), backend);
        let passed = hammer(
            std::slice::from_ref(&host),
            &bytes_context(),
            16,
            1,
            &hbar_to("0.0.1002", 1.0),
        );
        assert_eq!(passed, 5, "{lang}");
        let out = host
            .session(bytes_context())
            .call("transfer_hbar_tool", &hbar_to("0.0.1002", 1.0))
            .unwrap();
        assert_eq!(
            out["raw"]["policyBlock"]["reason"],
            "1 HBAR would exceed the budget of 5 HBAR per 86400 s (5 HBAR already spent)",
            "{lang}: {out}"
        );
    }
}

#[test]
fn a_lost_answer_resolves_to_the_applied_transfer_not_an_error() {
    let (base, _) = start(LOCAL);
    let manifest = format!("{}{}", same_network(&base), spend_limit(3));
    let host = host_with(&manifest, Arc::new(MemoryBackend::default()));
    let emu = base.local_network().unwrap();
    let before = balance(&base, "0.0.1005");
    // The node applies the transfer, the answer is lost, the SDK retries and hears
    // DUPLICATE_TRANSACTION: hak answers with the first attempt's receipt.
    emu.inject(|f| f.lost_response = 1);
    let out = host
        .default_session()
        .call("transfer_hbar_tool", &hbar_to("0.0.1005", 1.0))
        .unwrap();
    assert_eq!(out["raw"]["status"], "SUCCESS", "{out}");
    assert_eq!(
        balance(&base, "0.0.1005") - before,
        100_000_000,
        "applied once"
    );
}

#[test]
fn the_journal_store_holds_budgets_across_concurrency_and_restarts() {
    use hak_host::state_store::journal::JournalBackend;
    let dir = root().join(format!("target/test-tmp/journal-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let manifest = format!("{RETURN_BYTES_HEADER}{}", spend_limit(10));
    {
        let host = host_with(&manifest, Arc::new(JournalBackend::open(&dir).unwrap()));
        let passed = hammer(&[host], &bytes_context(), 32, 1, &hbar_to("0.0.1002", 1.0));
        assert_eq!(passed, 10);
    }
    // A restart replays the journal: the budget is still spent.
    let host = host_with(&manifest, Arc::new(JournalBackend::open(&dir).unwrap()));
    let out = host
        .session(bytes_context())
        .call("transfer_hbar_tool", &hbar_to("0.0.1002", 1.0))
        .unwrap();
    assert_eq!(out["raw"]["errorCode"], "POLICY_BLOCKED", "{out}");
    drop(host);
    let _ = std::fs::remove_dir_all(&dir);
}

fn dir_bytes(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum()
}

/// A chain of a plugin that fills its scratchpad on every call and a spend limit, on a
/// journal under `dir` with `[state]` `extra`.
fn filling_host(dir: &std::path::Path, extra: &str) -> Host {
    let manifest = format!(
        "{RETURN_BYTES_HEADER}[state]\nbackend = \"journal\"\ndir = {:?}\n{extra}\n{}{}",
        dir.display().to_string(),
        plugin_entry(
            "greedy",
            "fixtures/hostile",
            // ~1,000 state writes a call: the default 100 ms deadline is what a loaded
            // 2-core machine running the debug build sometimes takes, and the deadline is
            // not what these tests are about.
            "[plugins.limits]\ndeadline_ms = 5000\n[plugins.config]\nmode = \"fill-state\""
        ),
        spend_limit(1000),
    );
    let manifest = hak_host::manifest::Manifest::parse(&manifest, "test manifest", root())
        .unwrap_or_else(|e| panic!("bad test manifest: {e}"));
    HostBuilder::new(manifest)
        .cache_dir(Some(cache_dir()))
        .build()
        .unwrap()
}

fn context_of(n: u64) -> AgentContext {
    AgentContext {
        account_id: Some(hedera::AccountId::new(0, 0, 3000 + n)),
        mode: AgentMode::ReturnBytes,
    }
}

#[test]
fn sixty_four_contexts_filling_their_scratchpads_keep_the_journal_small_and_budgets_working() {
    let dir = root().join(format!("target/test-tmp/fill-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let host = filling_host(&dir, "");
    for n in 0..64 {
        let out = host
            .session(context_of(n))
            .call("transfer_hbar_tool", &hbar_to("0.0.1002", 1.0))
            .unwrap();
        assert_eq!(out["raw"]["status"], "SUCCESS", "context {n}: {out}");
    }
    // Each entry counts 64 bytes beyond its text, so a 64 KiB pad holds < 1,024 of them, not
    // ~14,000: 64 full pads are a few MiB of journal, not 65 MiB rewritten on every append.
    let bytes = dir_bytes(&dir);
    assert!(bytes < 12 << 20, "the state directory holds {bytes} bytes");
    drop(host);
    // And it all comes back.
    let host = filling_host(&dir, "");
    let out = host
        .session(context_of(0))
        .call("transfer_hbar_tool", &hbar_to("0.0.1002", 999.5))
        .unwrap();
    assert_eq!(
        out["raw"]["errorCode"], "POLICY_BLOCKED",
        "1 of 1000 spent: {out}"
    );
    drop(host);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_plugin_past_its_state_quota_is_refused_alone() {
    let dir = root().join(format!("target/test-tmp/quota-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let host = filling_host(&dir, "max_plugin_bytes = 262144");
    for n in 0..16 {
        let out = host
            .session(context_of(n))
            .call("transfer_hbar_tool", &hbar_to("0.0.1002", 1.0))
            .unwrap();
        assert_eq!(out["raw"]["status"], "SUCCESS", "context {n}: {out}");
    }
    // 16 full pads would be ~1.1 MiB of journal; the greedy plugin stopped at its 256 KiB
    // quota (~290 KiB of records), and the spend limit beside it went on.
    let bytes = dir_bytes(&dir);
    assert!(bytes < 512 << 10, "the state directory holds {bytes} bytes");
    drop(host);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_budget_key_past_256_bytes_is_refused() {
    let manifest = format!(
        "{RETURN_BYTES_HEADER}{}",
        plugin_entry(
            "hostile",
            "fixtures/hostile",
            "[plugins.config]\nmode = \"big-budget-key\""
        )
    );
    let backend = Arc::new(MemoryBackend::default());
    let host = host_with(&manifest, backend.clone());
    let attack =
        json!({"transfers": [{"accountId": "0.0.1002", "amount": 1}], "transactionMemo": "attack"});
    let out = host
        .session(bytes_context())
        .call("transfer_hbar_tool", &attack.to_string())
        .unwrap();
    assert_eq!(out["raw"]["errorCode"], "POLICY_BLOCKED", "{out}");
    assert!(
        out["raw"]["policyBlock"]["reason"]
            .as_str()
            .unwrap()
            .contains("a budget key is at most 256 bytes, got 1048576"),
        "{out}"
    );
    assert_eq!(backend.usage("hostile"), (0, 0), "nothing was stored");
}

fn redis_manifest(url: &str, extra: &str) -> String {
    format!(
        "{RETURN_BYTES_HEADER}{}\n[state]\nbackend = \"redis\"\nurl = \"{url}\"\n{extra}",
        spend_limit(7),
    )
}

/// A frozen Redis (SIGSTOP: the port stays open, nothing answers) is a store that cannot
/// answer: each call gets the spend limit's documented block, at once, not the plugin's
/// deadline after seconds of waiting (which failed the call as PLUGIN_FAILED); four calls at
/// once do not queue behind one connection; thawed, the store serves again.
#[test]
#[ignore = "needs redis-server (scripts/install-deps.sh); scripts/test.sh runs it"]
fn a_frozen_redis_blocks_each_call_within_the_plugins_deadline() {
    let redis = RedisServer::start();
    let (host, _) = start(&redis_manifest(&redis.url, ""));
    let ok = host
        .session(bytes_context())
        .call("transfer_hbar_tool", &hbar_to("0.0.1002", 1.0))
        .unwrap();
    assert_eq!(ok["raw"]["status"], "SUCCESS", "{ok}");
    redis.signal("STOP");
    let outs: Vec<serde_json::Value> = std::thread::scope(|s| {
        let calls: Vec<_> = (0..4)
            .map(|_| {
                let host = host.clone();
                s.spawn(move || {
                    host.session(bytes_context())
                        .call("transfer_hbar_tool", &hbar_to("0.0.1002", 1.0))
                        .unwrap()
                })
            })
            .collect();
        calls.into_iter().map(|c| c.join().unwrap()).collect()
    });
    for out in &outs {
        assert_eq!(
            out["raw"]["policyBlock"]["reasonCode"], "SPEND_LIMIT_UNAVAILABLE",
            "{out}"
        );
    }
    redis.signal("CONT");
    let again = host
        .session(bytes_context())
        .call("transfer_hbar_tool", &hbar_to("0.0.1002", 1.0))
        .unwrap();
    assert_eq!(again["raw"]["status"], "SUCCESS", "{again}");
}

/// Return-bytes bytes are handed out only once their spend is recorded: with no plugin after
/// them their reservation is not bound to the transaction (nothing to record before they
/// leave), so an unrecorded commit would look like a call that sent nothing and be released
/// after a restart, while the agent holds signed-ready bytes. Redis freezes while the call
/// waits for approval (8 HBAR reserved); approved, its commit cannot be written: the call is
/// refused and no bytes are returned.
#[test]
#[ignore = "needs redis-server (scripts/install-deps.sh); scripts/test.sh runs it"]
fn return_bytes_whose_spend_cannot_be_recorded_are_not_handed_out() {
    let redis = RedisServer::start();
    // Bounds generous enough for a debug build on a loaded 2-core machine (at 300 ms and the
    // default 100 ms deadline, a slow reservation made the policy block before the approval:
    // CI once saw "never held"; both plugins get 3 s, the approval's too); the frozen store
    // still fails the commit within a second.
    let manifest = format!(
        "{RETURN_BYTES_HEADER}{}{}\n[state]\nbackend = \"redis\"\nurl = \"{}\"\ntimeout_ms = 1000",
        plugin_entry(
            "spend",
            "rust/spend-limit",
            "[plugins.config]\ndailyHbarBudget = 10\n[plugins.limits]\ndeadline_ms = 3000"
        ),
        plugin_entry(
            "approve",
            "rust/approval-above",
            "[plugins.config]\napproveAboveHbar = 5\n[plugins.limits]\ndeadline_ms = 3000"
        ),
        redis.url
    );
    let (host, _) = start(&manifest);
    // Calls park only once the host has its approvals (as `hak serve` and `hak mcp` give it
    // at start); a session takes the approver when it opens. Taken here, before the call:
    // asked first from the waiting loop, a fast call could open its session before, find no
    // approver and block (CI saw "approval unavailable").
    let approvals = host.approvals().clone();
    let out = std::thread::scope(|s| {
        let call = s.spawn(|| {
            host.session(bytes_context())
                .call("transfer_hbar_tool", &hbar_to("0.0.1002", 8.0))
                .unwrap()
        });
        assert!(
            within_20s(|| approvals.pending().len() == 1 || call.is_finished()),
            "the call was never held"
        );
        if call.is_finished() {
            panic!(
                "the call ended before it was held: {}",
                call.join().unwrap()
            );
        }
        redis.signal("STOP");
        let id = approvals.pending()[0].id.clone();
        approvals
            .decide(&id, true, "test", "admin-api", None)
            .unwrap();
        let out = call.join().unwrap();
        redis.signal("CONT");
        out
    });
    assert_ne!(out["raw"]["status"], "SUCCESS", "{out}");
    assert!(out["raw"].get("bytes").is_none(), "{out}");
    assert!(
        out["raw"]["error"].as_str().is_some_and(
            |e| e.contains("could not be recorded, so its transaction bytes are not returned")
        ),
        "{out}"
    );
    // The store answers again: a call that fits is served as before.
    let again = host
        .session(bytes_context())
        .call("transfer_hbar_tool", &hbar_to("0.0.1002", 1.0))
        .unwrap();
    assert_eq!(again["raw"]["status"], "SUCCESS", "{again}");
}

/// A Redis that keeps nothing across a restart would reset every budget: refused at start,
/// unless the manifest says the operator knows.
#[test]
#[ignore = "needs redis-server (scripts/install-deps.sh); scripts/test.sh runs it"]
fn a_redis_without_persistence_is_refused_unless_acknowledged() {
    let redis = RedisServer::start_volatile();
    let err = try_start(&redis_manifest(&redis.url, ""))
        .err()
        .expect("a volatile redis must be refused")
        .to_string();
    assert!(err.contains("appendonly no"), "{err}");
    assert!(
        err.contains("redis_persistence = \"acknowledged\""),
        "{err}"
    );
    let (host, _) = start(&redis_manifest(
        &redis.url,
        "redis_persistence = \"acknowledged\"\n",
    ));
    let out = host
        .session(bytes_context())
        .call("transfer_hbar_tool", &hbar_to("0.0.1002", 1.0))
        .unwrap();
    assert_eq!(out["raw"]["status"], "SUCCESS", "{out}");
}

/// A `hak serve` manifest on `base`'s local network, autonomous for 0.0.1001, with a
/// journal store in `dir/state` and `plugins`.
fn killed_server_manifest(base: &Host, dir: &std::path::Path, plugins: &str) -> std::path::PathBuf {
    let text = format!(
        "{}\n[state]\nbackend = \"journal\"\ndir = {:?}\n\n[engine]\ncall_budget_ms = 120000\n{plugins}",
        same_network(base),
        dir.join("state").display().to_string()
    );
    let path = dir.join("hak.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn killed_server_dir(name: &str) -> std::path::PathBuf {
    let dir = root().join(format!(
        "target/test-tmp/killed-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Wait until `done` or 20 s have passed.
fn within_20s(mut done: impl FnMut() -> bool) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while std::time::Instant::now() < deadline {
        if done() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    false
}

#[test]
fn a_server_killed_while_a_call_waits_for_approval_gives_its_reservation_back_on_restart() {
    let (base, _) = start(LOCAL);
    let dir = killed_server_dir("held");
    let plugins = format!(
        "{}{}",
        spend_limit(10),
        plugin_entry(
            "approve",
            "rust/approval-above",
            "[plugins.config]\napproveAboveHbar = 5"
        )
    );
    let manifest = killed_server_manifest(&base, &dir, &plugins);
    let log = dir.join("serve.log");
    let server = ServeProcess::start(&manifest, &log);
    // 8 of the 10 HBAR reserved, then held for a human: nothing has been sent.
    let _held = server.send("transfer_hbar_tool", &hbar_to("0.0.1003", 8.0));
    assert!(
        within_20s(|| {
            let (_, _, listed) = http(server.addr, "GET", "/v1/approvals", &[], "");
            listed["approvals"].as_array().is_some_and(|a| a.len() == 1)
        }),
        "the call was never held"
    );
    let before = balance(&base, "0.0.1003");
    server.kill();

    let server = ServeProcess::start(&manifest, &dir.join("serve-2.log"));
    // The dead call's 8 HBAR come back: 4 more fit (they did not: 8 + 4 > 10, all day).
    let mut last = serde_json::Value::Null;
    assert!(
        within_20s(|| {
            last = server.call("transfer_hbar_tool", &hbar_to("0.0.1003", 4.0));
            last["raw"]["status"] == "SUCCESS"
        }),
        "the reservation of the killed call stayed held: {last}"
    );
    assert_eq!(balance(&base, "0.0.1003") - before, 400_000_000);
    let log = std::fs::read_to_string(dir.join("serve-2.log")).unwrap();
    assert!(
        log.contains("released (its call had sent nothing)"),
        "{log}"
    );
    // And only they came back: 4 spent, 7 more do not fit.
    let out = server.call("transfer_hbar_tool", &hbar_to("0.0.1003", 7.0));
    assert_eq!(out["raw"]["errorCode"], "POLICY_BLOCKED", "{out}");
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_server_killed_after_its_transfer_applied_keeps_the_spend_on_restart() {
    let (base, _) = start(LOCAL);
    let dir = killed_server_dir("applied");
    let plugins = format!(
        "{}{}",
        spend_limit(10),
        plugin_entry(
            "sleep",
            "fixtures/hostile",
            "[plugins.config]\nmode = \"sleep-after\"\n[plugins.limits]\ndeadline_ms = 60000"
        )
    );
    let manifest = killed_server_manifest(&base, &dir, &plugins);
    let server = ServeProcess::start(&manifest, &dir.join("serve.log"));
    let before = balance(&base, "0.0.1003");
    // Sent and applied; the call then sleeps in a hook and the process dies before it ends.
    let _sent = server.send("transfer_hbar_tool", &hbar_to("0.0.1003", 8.0));
    assert!(
        within_20s(|| balance(&base, "0.0.1003") - before == 800_000_000),
        "the transfer never applied"
    );
    server.kill();

    let server = ServeProcess::start(&manifest, &dir.join("serve-2.log"));
    let log_path = dir.join("serve-2.log");
    assert!(
        within_20s(|| std::fs::read_to_string(&log_path)
            .unwrap_or_default()
            .contains("committed (transaction 0.0.1001-")),
        "never reconciled: {}",
        std::fs::read_to_string(&log_path).unwrap_or_default()
    );
    // The 8 HBAR that moved stay spent: 4 more do not fit.
    let out = server.call("transfer_hbar_tool", &hbar_to("0.0.1003", 4.0));
    assert_eq!(out["raw"]["errorCode"], "POLICY_BLOCKED", "{out}");
    assert_eq!(balance(&base, "0.0.1003") - before, 800_000_000);
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_stopped_processs_reservations_are_settled_by_what_the_network_knows() {
    use hak_host::reconcile::GRACE_MS;
    use hak_host::state_store::{journal::JournalBackend, Binding, PadKey, Reserved};
    let (base, _) = start(LOCAL);
    let dir = killed_server_dir("reconcile");
    let out = base
        .default_session()
        .call("transfer_hbar_tool", &hbar_to("0.0.1003", 1.0))
        .unwrap();
    // `0.0.1001@1700000000.000000001` as the mirror spells it: `0.0.1001-1700000000-000000001`.
    let (payer, start) = ok(&out)["transactionId"]
        .as_str()
        .unwrap()
        .split_once('@')
        .unwrap();
    let applied = format!("{payer}-{}", start.replace('.', "-"));
    let now = hak_host::state_store::now_ms();
    let never_sent = |seconds_ago: u64| format!("0.0.1001-{}-000000000", now / 1000 - seconds_ago);
    let pad = PadKey {
        scope: "s".into(),
        plugin: "spend".into(),
    };
    {
        let j = JournalBackend::open(&dir.join("state")).unwrap();
        let ids: Vec<_> = [1, 2, 4, 8, 16]
            .into_iter()
            .map(
                |a| match j.reserve(&pad, "hbar", a, 1000, 86_400, now).unwrap() {
                    Reserved::Granted { id, .. } => id,
                    other => panic!("{other:?}"),
                },
            )
            .collect();
        let bind = |i: usize, b: Binding| j.bind(&ids[i..=i], &b).unwrap();
        // Applied on the network: stays spent.
        bind(
            0,
            Binding::Transaction {
                id: applied.clone(),
                until_ms: now + 120_000,
            },
        );
        // Never reached the network, and expired long enough ago: given back.
        bind(
            1,
            Binding::Transaction {
                id: never_sent(3600),
                until_ms: now - GRACE_MS - 1_000,
            },
        );
        // Not on the network yet but still valid: it may still execute, so it stays.
        bind(
            2,
            Binding::Transaction {
                id: never_sent(5),
                until_ms: now + 115_000,
            },
        );
        // ids[3]: nothing sent → given back. ids[4]: a custom strategy's → stays.
        bind(4, Binding::Opaque);
    } // the process stops without settling any of them
    let backend = Arc::new(JournalBackend::open(&dir.join("state")).unwrap());
    assert_eq!(backend.orphans().unwrap().len(), 5);
    let host = host_with(&same_network(&base), backend.clone());
    // The host settles them in the background as it starts.
    assert!(
        within_20s(|| backend.orphans().unwrap().len() == 1),
        "{:?}",
        backend.orphans()
    );
    let left = backend.orphans().unwrap();
    assert_eq!(left[0].amount, 4, "{left:?}");
    assert_eq!(
        backend.spent(&pad, "hbar", 86_400, now).unwrap(),
        1 + 4 + 16,
        "applied and opaque committed, the unsent two released, the valid one still held"
    );
    let report = host.reconcile_reservations().unwrap();
    assert_eq!(
        (report.committed, report.released, report.waiting),
        (0, 0, 1)
    );
    drop(host);
    drop(backend);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Replica A (`hak serve` on a shared store) dies with one call applied and sleeping in a hook
/// and one held for approval; replica B, on the same store, settles them once A goes unseen:
/// the applied 3 HBAR stay spent, the held 6 come back.
fn a_dead_replicas_reservations_are_settled_by_another(name: &str, state: &str) {
    let (base, _) = start(LOCAL);
    let dir = killed_server_dir(name);
    let policies = format!(
        "{}{}",
        spend_limit(10),
        plugin_entry(
            "approve",
            "rust/approval-above",
            "[plugins.config]\napproveAboveHbar = 5"
        )
    );
    let write = |file: &str, plugins: &str| {
        let path = dir.join(file);
        let text = format!(
            "{}\n[state]\n{state}\npresumed_stopped_ms = 2000\n\n[engine]\ncall_budget_ms = 120000\n{plugins}",
            same_network(&base)
        );
        std::fs::write(&path, text).unwrap();
        path
    };
    let sleepy = plugin_entry(
        "sleep",
        "fixtures/hostile",
        "[plugins.config]\nmode = \"sleep-after\"\n[plugins.limits]\ndeadline_ms = 60000",
    );
    let a = ServeProcess::start(
        &write("a.toml", &format!("{policies}{sleepy}")),
        &dir.join("a.log"),
    );
    let before = balance(&base, "0.0.1003");
    let _applied = a.send("transfer_hbar_tool", &hbar_to("0.0.1003", 3.0));
    assert!(
        within_20s(|| balance(&base, "0.0.1003") - before == 300_000_000),
        "the transfer never applied"
    );
    let _held = a.send("transfer_hbar_tool", &hbar_to("0.0.1003", 6.0));
    assert!(
        within_20s(|| {
            let (_, _, listed) = http(a.addr, "GET", "/v1/approvals", &[], "");
            listed["approvals"].as_array().is_some_and(|l| l.len() == 1)
        }),
        "the call was never held"
    );
    a.kill();

    let b = ServeProcess::start(&write("b.toml", &policies), &dir.join("b.log"));
    let mut last = serde_json::Value::Null;
    // 3 + 6 + 4 > 10 until the held 6 come back.
    assert!(
        within_20s(|| {
            last = b.call("transfer_hbar_tool", &hbar_to("0.0.1003", 4.0));
            last["raw"]["status"] == "SUCCESS"
        }),
        "the dead replica's held reservation was never released: {last}; log: {}",
        std::fs::read_to_string(dir.join("b.log")).unwrap_or_default()
    );
    // The applied 3 stay: 3 + 4 + 4 > 10.
    let out = b.call("transfer_hbar_tool", &hbar_to("0.0.1003", 4.0));
    assert_eq!(out["raw"]["errorCode"], "POLICY_BLOCKED", "{out}");
    assert_eq!(balance(&base, "0.0.1003") - before, 700_000_000);
    let log = std::fs::read_to_string(dir.join("b.log")).unwrap();
    assert!(log.contains("committed (transaction 0.0.1001-"), "{log}");
    assert!(
        log.contains("released (its call had sent nothing)"),
        "{log}"
    );
    drop(b);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A `[state]` section for an SQLite file of its own (removed when dropped).
struct SqliteSection {
    dir: std::path::PathBuf,
    text: String,
}

impl SqliteSection {
    fn new(name: &str) -> Self {
        let dir = root().join(format!("target/test-tmp/{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let text = format!(
            "backend = \"sqlite\"\ndir = {:?}",
            dir.display().to_string()
        );
        SqliteSection { dir, text }
    }
}

impl Drop for SqliteSection {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A `[state]` section for `redis` (each operation bounded generously: these tests are about
/// what is stored, not a slow store).
fn redis_section(redis: &RedisServer) -> String {
    format!(
        "backend = \"redis\"\nurl = \"{}\"\ntimeout_ms = 2000",
        redis.url
    )
}

#[test]
fn a_dead_replicas_reservations_on_sqlite_are_settled_by_another() {
    let state = SqliteSection::new("killed-sqlite-state");
    a_dead_replicas_reservations_are_settled_by_another("sqlite", &state.text);
}

#[test]
#[ignore = "needs redis-server (scripts/install-deps.sh); scripts/test.sh runs it"]
fn a_dead_replicas_reservations_on_redis_are_settled_by_another() {
    let redis = RedisServer::start();
    a_dead_replicas_reservations_are_settled_by_another("redis", &redis_section(&redis));
}

/// A plugin that fills its scratchpad in every context stops at its quota over all contexts
/// on `state` (a `[state]` section), and the spend limit beside it goes on.
fn the_greedy_plugin_stops_at_its_quota_on(state: &str) {
    let manifest = format!(
        "{RETURN_BYTES_HEADER}[state]\n{state}\nmax_plugin_bytes = 32768\n{}{}",
        // Hundreds of writes in one call: a file or a server takes longer than 100 ms.
        plugin_entry(
            "greedy",
            "fixtures/hostile",
            "[plugins.config]\nmode = \"fill-state\"\n[plugins.limits]\ndeadline_ms = 20000"
        ),
        spend_limit(2),
    );
    let (host, _) = start(&manifest);
    for n in 0..3 {
        let out = host
            .session(context_of(n))
            .call("transfer_hbar_tool", &hbar_to("0.0.1002", 1.0))
            .unwrap();
        assert_eq!(out["raw"]["status"], "SUCCESS", "context {n}: {out}");
    }
    let store = host.state_backend();
    let greedy = |n: u64| hak_host::state_store::PadKey {
        scope: context_of(n).scope_key().into(),
        plugin: "greedy".into(),
    };
    // ~66 bytes an entry: context 0 filled 32 KiB of it (under its 64 KiB pad), and nothing
    // was left for context 1.
    assert!(store.get(&greedy(0), "k400").unwrap().is_some());
    assert!(store.get(&greedy(0), "k600").unwrap().is_none());
    assert!(store.get(&greedy(1), "k0").unwrap().is_none());
    // The spend limit's own budget went on in every context: 1 of 2 spent, 1.5 more is over.
    let out = host
        .session(context_of(2))
        .call("transfer_hbar_tool", &hbar_to("0.0.1002", 1.5))
        .unwrap();
    assert_eq!(out["raw"]["errorCode"], "POLICY_BLOCKED", "{out}");
}

#[test]
fn a_plugin_past_its_quota_on_sqlite_is_refused_alone() {
    let state = SqliteSection::new("quota-sqlite");
    the_greedy_plugin_stops_at_its_quota_on(&state.text);
}

#[test]
#[ignore = "needs redis-server (scripts/install-deps.sh); scripts/test.sh runs it"]
fn a_plugin_past_its_quota_on_redis_is_refused_alone() {
    let redis = RedisServer::start();
    the_greedy_plugin_stops_at_its_quota_on(&redis_section(&redis));
}

#[test]
fn return_bytes_reservations_are_bound_only_when_a_plugin_sees_the_bytes_before_the_call_ends() {
    use hak_host::state_store::journal::JournalBackend;
    // The bytes leave with the answer, after settlement: nothing to record, unless a
    // post-tool-execution plugin sees them first.
    for (stage_7, binds) in [(false, 0), (true, 1)] {
        let dir = root().join(format!(
            "target/test-tmp/bind-{stage_7}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        let hook = plugin_entry(
            "observer",
            "fixtures/hostile",
            "[plugins.config]\nmode = \"swap-message\"",
        );
        let manifest = format!(
            "{RETURN_BYTES_HEADER}{}{}",
            spend_limit(100),
            if stage_7 { hook.as_str() } else { "" }
        );
        {
            let host = host_with(&manifest, Arc::new(JournalBackend::open(&dir).unwrap()));
            let out = host
                .session(bytes_context())
                .call("transfer_hbar_tool", &hbar_to("0.0.1002", 1.0))
                .unwrap();
            assert_eq!(out["raw"]["status"], "SUCCESS", "{out}");
        }
        let records: String = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("journal.")
            })
            .map(|p| std::fs::read_to_string(p).unwrap())
            .collect();
        assert_eq!(records.matches(r#""t":"bind""#).count(), binds, "{records}");
        assert_eq!(records.matches(r#""t":"com""#).count(), 1, "{records}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
