//! Verdicts that hold: each way around a policy that was seen is an attack here, and must fail.
//! A hook after a policy cannot change what the policy approved (without the operator's
//! `params:replace` grant it may not replace params at all; with it, the stage's policies judge
//! the replacement), a result hook cannot swap the bytes, a guest cannot sleep past its
//! deadline in any export, granted capabilities are bounded in number and time, a failing
//! skippable hook trips only its own context's breaker, and repeated JSON keys never reach a
//! plugin.

use hak_tests::*;
use serde_json::Value;
use std::time::{Duration, Instant};

const ATTACK: &str =
    r#"{"transfers":[{"accountId":"0.0.2000","amount":1}],"transactionMemo":"attack"}"#;

fn hostile_entry(mode: &str, extra: &str) -> String {
    plugin_entry(
        "hostile",
        "fixtures/hostile",
        &format!("{extra}\n[plugins.config]\nmode = {mode:?}"),
    )
}

/// A recipient allowlist that only lets 0.0.2000 be paid.
fn allowlist() -> String {
    plugin_entry(
        "allowlist",
        "rust/recipient-allowlist",
        "[plugins.config]\naccounts = [\"0.0.2000\"]",
    )
}

fn error(out: &Value) -> &str {
    out["raw"]["error"].as_str().unwrap_or_default()
}

#[test]
fn a_hook_without_params_replace_cannot_swap_the_recipient() {
    let manifest = format!(
        "{RETURN_BYTES_HEADER}{}{}",
        allowlist(),
        hostile_entry("swap-recipient", "")
    );
    let (host, _) = start(&manifest);
    let out = host
        .default_session()
        .call("transfer_hbar_tool", ATTACK)
        .unwrap();
    assert_eq!(out["raw"]["status"], "ERROR", "{out}");
    assert!(
        error(&out).contains("without the params:replace capability"),
        "{out}"
    );
    assert_eq!(out["raw"]["pluginFailure"]["plugin"], "hostile");
}

#[test]
fn a_granted_replacement_is_judged_again_by_the_policies_before_it() {
    let manifest = format!(
        "{RETURN_BYTES_HEADER}{}{}",
        allowlist(),
        hostile_entry("swap-recipient", "capabilities = [\"params:replace\"]")
    );
    let (host, _) = start(&manifest);
    // The allowlist (post-params-normalization) allowed 0.0.2000; the hook after it, at the
    // same stage, swaps in 0.0.6666: the allowlist judges the swapped params and blocks.
    let out = host
        .default_session()
        .call("transfer_hbar_tool", ATTACK)
        .unwrap();
    assert_eq!(out["raw"]["errorCode"], "POLICY_BLOCKED", "{out}");
    assert_eq!(
        out["raw"]["policyBlock"]["reasonCode"], "RECIPIENT_NOT_ALLOWED",
        "{out}"
    );
}

#[test]
fn a_result_hook_cannot_swap_the_bytes_but_may_reword_the_message() {
    let swap = format!(
        "{RETURN_BYTES_HEADER}{}",
        hostile_entry("swap-bytes", "capabilities = [\"result:replace\"]")
    );
    let (host, _) = start(&swap);
    let out = host
        .default_session()
        .call("transfer_hbar_tool", ATTACK)
        .unwrap();
    assert_eq!(out["raw"]["status"], "ERROR", "{out}");
    assert!(error(&out).contains("changes raw"), "{out}");

    let ungranted = format!("{RETURN_BYTES_HEADER}{}", hostile_entry("swap-message", ""));
    let (host, _) = start(&ungranted);
    let out = host
        .default_session()
        .call("transfer_hbar_tool", ATTACK)
        .unwrap();
    assert!(
        error(&out).contains("without the result:replace capability"),
        "{out}"
    );

    let reword = format!(
        "{RETURN_BYTES_HEADER}{}",
        hostile_entry("swap-message", "capabilities = [\"result:replace\"]")
    );
    let (host, _) = start(&reword);
    let out = host
        .default_session()
        .call("transfer_hbar_tool", ATTACK)
        .unwrap();
    assert_eq!(out["raw"]["status"], "SUCCESS", "{out}");
    assert_eq!(out["humanMessage"], "All done (rephrased by a hook).");
    assert!(out["raw"]["bytes"].as_str().unwrap().len() > 100);
}

/// Time a call that must end within a few deadlines, whatever the guest does.
fn bounded(manifest: &str, params: &str) -> (Value, Duration) {
    let (host, _) = start(manifest);
    let mut session = host.default_session();
    let started = Instant::now();
    let out = session.call("transfer_hbar_tool", params).unwrap();
    (out, started.elapsed())
}

#[test]
fn a_guest_sleeping_in_a_policy_is_stopped_at_its_deadline() {
    for mode in ["sleep-policy", "sleep-forever"] {
        let manifest = format!(
            "{RETURN_BYTES_HEADER}{}",
            hostile_entry(mode, "[plugins.limits]\ndeadline_ms = 100")
        );
        let (out, took) = bounded(&manifest, ATTACK);
        assert_eq!(
            out["raw"]["pluginFailure"]["cause"], "deadline",
            "{mode}: {out}"
        );
        // The sleep asked for 3 s (or forever); the call ends near its 100 ms budget.
        assert!(
            took < Duration::from_secs(2),
            "{mode} held the call {took:?}"
        );
    }
}

#[test]
fn a_guest_sleeping_in_describe_is_refused_at_its_deadline() {
    let manifest = format!(
        "{RETURN_BYTES_HEADER}{}",
        hostile_entry("sleep-describe", "[plugins.limits]\ndeadline_ms = 100")
    );
    let started = Instant::now();
    let err = try_start(&manifest)
        .err()
        .expect("must not load")
        .to_string();
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        err,
        "plugin hostile failed at describe: deadline (exceeded its 100 ms deadline)"
    );
}

#[test]
fn a_guest_sleeping_in_on_tool_failure_does_not_hold_the_call() {
    let manifest = format!(
        "{RETURN_BYTES_HEADER}{}",
        hostile_entry("sleep-failure", "[plugins.limits]\ndeadline_ms = 100")
    );
    let (out, took) = bounded(&manifest, ATTACK);
    assert_eq!(out["raw"]["errorCode"], "POLICY_BLOCKED", "{out}");
    assert!(
        took < Duration::from_secs(3),
        "on-tool-failure held the call {took:?}"
    );
}

#[test]
fn capability_calls_are_bounded_per_call_and_per_minute() {
    let manifest = format!(
        "{LOCAL}{}",
        hostile_entry(
            "capability-flood",
            "capabilities = [\"hedera:create-topic\"]\n[plugins.limits]\ndeadline_ms = 2000\nmax_capability_calls = 3\ncapability_calls_per_minute = 5"
        )
    );
    let (host, _) = start(&manifest);
    let mut session = host.default_session();
    let first = session.call("transfer_hbar_tool", ATTACK).unwrap();
    assert_eq!(
        first["raw"]["policyBlock"]["reason"], "created 3 topics",
        "{first}"
    );
    let second = session.call("transfer_hbar_tool", ATTACK).unwrap();
    assert_eq!(
        second["raw"]["policyBlock"]["reason"], "created 2 topics",
        "{second}"
    );
    let third = session.call("transfer_hbar_tool", ATTACK).unwrap();
    assert_eq!(
        third["raw"]["policyBlock"]["reason"], "created 0 topics",
        "{third}"
    );
    let plugin = &host.plugins()[0];
    use std::sync::atomic::Ordering::Relaxed;
    assert_eq!(plugin.stats.capability.calls.load(Relaxed), 5);
    assert!(plugin.stats.capability.refusals.load(Relaxed) >= 3 * 997);
    // Another agent context has a budget of its own.
    let other = hak_host::AgentContext {
        account_id: Some(hedera::AccountId::new(0, 0, 1002)),
        mode: hak_host::AgentMode::Autonomous,
    };
    let out = host
        .session(other)
        .call("transfer_hbar_tool", ATTACK)
        .unwrap();
    assert_eq!(
        out["raw"]["policyBlock"]["reason"], "created 3 topics",
        "{out}"
    );
}

/// A return-bytes manifest header whose network (nodes and mirror) is a "node" that accepts
/// connections and never answers, with an operator so capabilities can be granted.
fn silent_network_header() -> String {
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = silent.local_addr().unwrap();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for conn in silent.incoming().flatten() {
            held.push(conn);
        }
    });
    std::env::set_var(
        "HAK_TEST_SILENT_KEY",
        hak_emu::genesis::operator_key().to_string_der(),
    );
    format!(
        "[network]\nname = \"custom\"\nnodes = {{ \"{addr}\" = \"0.0.3\" }}\nmirror_url = \"http://{addr}/api/v1\"\n\n[operator]\naccount_id = \"0.0.1001\"\nkey_env = \"HAK_TEST_SILENT_KEY\"\n\n[context]\naccount_id = \"0.0.1001\"\nmode = \"returnBytes\"\n"
    )
}

#[test]
fn a_capability_call_to_a_silent_network_times_out() {
    let manifest = format!(
        "{}{}",
        silent_network_header(),
        hostile_entry(
            "steal-capability",
            "capabilities = [\"hedera:submit-topic-message\"]\n[plugins.limits]\ncapability_timeout_ms = 300\ndeadline_ms = 3000"
        )
    );
    let (out, took) = bounded(&manifest, ATTACK);
    assert!(error(&out).contains("timed out after 300ms"), "{out}");
    assert!(took < Duration::from_secs(5), "held {took:?}");
}

/// One deadline for everything a plugin does in a stage: a capability call to a network that
/// never answers is cancelled at the plugin's 200 ms deadline (not its own 5 s timeout), and
/// the plugin fails as out of time, closed, whatever it answers after the call (it was a
/// capability call of 5 s past a 100 ms deadline).
#[test]
fn a_capability_call_counts_against_the_plugins_deadline() {
    let manifest = format!(
        "{}{}",
        silent_network_header(),
        hostile_entry(
            "steal-capability",
            "capabilities = [\"hedera:submit-topic-message\"]\n[plugins.limits]\ndeadline_ms = 200"
        )
    );
    let (out, took) = bounded(&manifest, ATTACK);
    let failure = &out["raw"]["pluginFailure"];
    assert_eq!(failure["cause"], "deadline", "{out}");
    assert!(
        error(&out).contains(
            "exceeded its 200 ms deadline in a capability call (hedera.submit-topic-message)"
        ),
        "{out}"
    );
    assert!(took < Duration::from_secs(3), "held {took:?}");
}

#[test]
fn one_budget_bounds_every_plugin_and_host_call_of_a_tool_call() {
    // Three policies, each asking a network that never answers for topics: with default
    // limits that is 3 plugins × 4 capability calls × 5 s = 60 s of a held call. The tool
    // call's plugin budget (here 1.5 s) bounds all of it together.
    let mut manifest = format!(
        "{}\n[engine]\ncall_budget_ms = 1500\n",
        silent_network_header()
    );
    for i in 1..=3 {
        manifest.push_str(&plugin_entry(
            &format!("flood{i}"),
            "fixtures/hostile",
            "capabilities = [\"hedera:create-topic\"]\n[plugins.config]\nmode = \"capability-flood\"\n[plugins.limits]\ndeadline_ms = 5000",
        ));
    }
    let (out, took) = bounded(&manifest, ATTACK);
    let failure = &out["raw"]["pluginFailure"];
    assert_eq!(failure["plugin"], "flood1", "{out}");
    assert_eq!(failure["cause"], "deadline", "{out}");
    assert!(
        error(&out).contains("1500 ms plugin budget ([engine] call_budget_ms)"),
        "{out}"
    );
    assert!(took < Duration::from_secs(5), "held {took:?}");
}

#[test]
fn a_skipped_hook_that_spends_the_budget_leaves_the_policies_after_it_failing_closed() {
    // A skippable hook spins past the call's 300 ms: it is stopped at the budget's end and
    // skipped, and the policy after it, with no time left, fails closed without running.
    let manifest = format!(
        "{RETURN_BYTES_HEADER}\n[engine]\ncall_budget_ms = 300\n{}{}",
        hostile_entry(
            "loop-hook",
            "on_error = \"skip\"\n[plugins.limits]\ndeadline_ms = 5000"
        ),
        allowlist()
    );
    let (host, _) = start(&manifest);
    let started = Instant::now();
    let out = host
        .default_session()
        .call("transfer_hbar_tool", ATTACK)
        .unwrap();
    let took = started.elapsed();
    let failure = &out["raw"]["pluginFailure"];
    assert_eq!(failure["plugin"], "allowlist", "{out}");
    assert_eq!(failure["cause"], "deadline", "{out}");
    assert!(error(&out).contains("not run"), "{out}");
    assert!(took < Duration::from_secs(3), "held {took:?}");
}

#[test]
fn a_call_budget_out_of_range_is_refused_naming_the_field() {
    for ms in [0, 600_001] {
        let text = format!("{RETURN_BYTES_HEADER}\n[engine]\ncall_budget_ms = {ms}\n");
        let err = hak_host::manifest::Manifest::parse(&text, "m.toml", root())
            .err()
            .unwrap_or_else(|| panic!("{ms} accepted"));
        assert!(
            err.to_string()
                .contains("engine.call_budget_ms must be between 1 and 600000"),
            "{err}"
        );
    }
}

#[test]
fn a_tripped_breaker_bypasses_a_hook_in_its_own_context_only() {
    let manifest = format!(
        "{RETURN_BYTES_HEADER}{}",
        hostile_entry("panic-hook", "on_error = \"skip\"")
    );
    let (host, _) = start(&manifest);
    let plugin = host.plugins()[0].clone();
    use std::sync::atomic::Ordering::Relaxed;
    let mut attacker = host.default_session();
    for _ in 0..5 {
        let out = attacker.call("transfer_hbar_tool", ATTACK).unwrap();
        assert_eq!(out["raw"]["status"], "SUCCESS", "skipped: {out}");
    }
    assert_eq!(plugin.stats.tripped_contexts(), ["0.0.1001/returnBytes"]);
    let calls = plugin.stats.calls.load(Relaxed);
    attacker.call("transfer_hbar_tool", ATTACK).unwrap();
    assert_eq!(plugin.stats.calls.load(Relaxed), calls, "bypassed here");
    let other = hak_host::AgentContext {
        account_id: Some(hedera::AccountId::new(0, 0, 1002)),
        mode: hak_host::AgentMode::ReturnBytes,
    };
    host.session(other)
        .call("transfer_hbar_tool", &transfer(1))
        .unwrap();
    assert_eq!(
        plugin.stats.calls.load(Relaxed),
        calls + 1,
        "still called in another context"
    );
}

#[test]
fn repeated_keys_are_refused_before_any_plugin_sees_them() {
    let manifest = format!("{RETURN_BYTES_HEADER}{}", allowlist());
    let (host, _) = start(&manifest);
    let plugin = host.plugins()[0].clone();
    let out = host
        .default_session()
        .call(
            "transfer_hbar_tool",
            r#"{"transfers":[{"accountId":"0.0.2000","amount":1}],"transfers":[{"accountId":"0.0.6666","amount":100}]}"#,
        )
        .unwrap();
    assert_eq!(out["raw"]["status"], "ERROR");
    assert!(
        error(&out).contains("the key \"transfers\" appears twice"),
        "{out}"
    );
    use std::sync::atomic::Ordering::Relaxed;
    assert_eq!(plugin.stats.calls.load(Relaxed), 0, "no plugin saw it");
}

/// Waiting for an approver is not plugin time: a human who takes longer to approve than the
/// call's whole plugin budget leaves the policies after the asking one (same stage) their
/// budget. The stage's next step starts after the answer, not where the asking policy's guest
/// call ended (back-to-back steps share a clock read; an approval clears it): counted from
/// there, the wait would be charged to the next policy and leave nothing for the one after.
#[test]
fn waiting_for_an_approver_leaves_the_policies_after_it_their_budget() {
    use hak_host::approvals::{Approver, Ask, Decision, Outcome};
    struct Slow;
    impl Approver for Slow {
        fn decide(&self, _ask: Ask) -> Outcome {
            std::thread::sleep(Duration::from_millis(400));
            Outcome {
                id: None,
                decision: Decision::Approved {
                    by: "test".into(),
                    via: "test",
                    note: None,
                },
            }
        }
    }
    let manifest = format!(
        "{RETURN_BYTES_HEADER}\n[engine]\ncall_budget_ms = 200\n{}{}",
        plugin_entry(
            "approve",
            "rust/approval-above",
            "[plugins.config]\napproveAboveHbar = 0.5"
        ),
        allowlist()
    ) + &plugin_entry(
        "max",
        "rust/max-recipients",
        "[plugins.config]\nmaxRecipients = 1",
    );
    let (host, _) = start(&manifest);
    let mut session = host.default_session();
    session.set_approver(Some(std::sync::Arc::new(Slow)));
    let out = session
        .call(
            "transfer_hbar_tool",
            r#"{"transfers":[{"accountId":"0.0.2000","amount":1}]}"#,
        )
        .unwrap();
    assert_eq!(out["raw"]["status"], "SUCCESS", "{out}");
    // Both policies judged it: a recipient off the allowlist is still blocked after approval.
    let out = session
        .call(
            "transfer_hbar_tool",
            r#"{"transfers":[{"accountId":"0.0.2001","amount":1}]}"#,
        )
        .unwrap();
    assert_eq!(out["raw"]["policyBlock"]["plugin"], "allowlist", "{out}");
}
