//! Hostile plugins are contained: each misbehaviour ends the call with the documented error
//! (naming plugin, stage and cause), and the very next call through the same session works.

use hak_host::host::HostError;
use hak_host::runtime::LoadError;
use hak_tests::*;
use serde_json::Value;

const ATTACK: &str =
    r#"{"transfers":[{"accountId":"0.0.2000","amount":1}],"transactionMemo":"attack"}"#;

fn hostile(mode: &str, extra: &str) -> String {
    // Replacing params is a capability; these modes test what happens to a granted one.
    let grant = if matches!(
        mode,
        "invalid-json" | "bad-schema" | "bad-normalised" | "big-output"
    ) {
        "capabilities = [\"params:replace\"]\n"
    } else {
        ""
    };
    let extra = &format!("{grant}{extra}");
    // Fuel counting is an engine option; the fuel test turns it on.
    let engine = if extra.contains("fuel") {
        "[engine]\nfuel = true\n"
    } else {
        ""
    };
    format!(
        "{RETURN_BYTES_HEADER}{engine}{}",
        plugin_entry(
            "hostile",
            "fixtures/hostile",
            &format!("{extra}\n[plugins.config]\nmode = {mode:?}")
        )
    )
}

/// Attack once, check the failure, then make a normal call through the same session.
fn contained(mode: &str, extra: &str) -> (Value, Vec<String>) {
    let (host, logs) = start(&hostile(mode, extra));
    let mut session = host.default_session();
    let attacked = session.call("transfer_hbar_tool", ATTACK).unwrap();
    assert_eq!(attacked["raw"]["status"], "ERROR", "{mode}: {attacked}");
    let next = session.call("transfer_hbar_tool", &transfer(1)).unwrap();
    assert_eq!(
        next["raw"]["status"], "SUCCESS",
        "{mode}: the next call must succeed: {next}"
    );
    (attacked, logs.take())
}

fn assert_failure(out: &Value, stage: &str, cause: &str, detail: &str) {
    let error = out["raw"]["error"].as_str().unwrap();
    let prefix =
        format!("Failed to execute Transfer HBAR: plugin hostile failed at {stage}: {cause} (");
    assert!(
        error.starts_with(&prefix),
        "expected {prefix:?}, got {error:?}"
    );
    assert!(error.contains(detail), "expected {detail:?} in {error:?}");
    assert_eq!(out["raw"]["errorCode"], "PLUGIN_FAILED");
    assert_eq!(out["raw"]["pluginFailure"]["plugin"], "hostile");
    assert_eq!(out["raw"]["pluginFailure"]["phase"], stage);
    assert_eq!(out["raw"]["pluginFailure"]["cause"], cause);
    assert_eq!(out["humanMessage"], error);
}

#[test]
fn infinite_loop_in_a_policy_hits_the_deadline() {
    let (out, _) = contained("loop-policy", "[plugins.limits]\ndeadline_ms = 20");
    assert_failure(
        &out,
        "pre_tool_execution",
        "deadline",
        "exceeded its 20 ms deadline",
    );
}

#[test]
fn infinite_loop_in_a_hook_hits_the_deadline() {
    let (out, _) = contained("loop-hook", "[plugins.limits]\ndeadline_ms = 20");
    assert_failure(&out, "pre_tool_execution", "deadline", "deadline");
}

#[test]
fn infinite_loop_with_a_fuel_budget_runs_out_of_fuel() {
    let (out, _) = contained(
        "loop-policy",
        "[plugins.limits]\ndeadline_ms = 60000\nfuel = 1000000",
    );
    assert_failure(
        &out,
        "pre_tool_execution",
        "fuel",
        "used up its budget of 1000000 instructions",
    );
}

#[test]
fn infinite_loop_in_describe_refuses_the_plugin_at_load() {
    let err = try_start(&hostile(
        "loop-describe",
        "[plugins.limits]\ndeadline_ms = 20",
    ))
    .err()
    .expect("must not load");
    assert!(
        matches!(err, HostError::Load(LoadError::Failed(_))),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "plugin hostile failed at describe: deadline (exceeded its 20 ms deadline)"
    );
}

#[test]
fn memory_bomb_hits_the_memory_cap() {
    let (out, _) = contained("memory-bomb", "[plugins.limits]\nmemory_mib = 16");
    assert_failure(&out, "pre_tool_execution", "memory", "over its limit");
}

#[test]
fn deep_recursion_overflows_the_guest_stack_only() {
    let (out, _) = contained("recursion", "");
    // A Rust guest overflows its shadow stack (in linear memory) before the wasm stack:
    // either way it is a trap inside the sandbox.
    assert_failure(&out, "pre_tool_execution", "trap", "");
    let detail = out["raw"]["pluginFailure"]["detail"].as_str().unwrap();
    assert!(
        detail.contains("stack overflow") || detail.contains("out of bounds memory access"),
        "{detail}"
    );
}

#[test]
fn a_panic_is_a_trap() {
    let (out, _) = contained("panic", "");
    assert_failure(&out, "pre_tool_execution", "trap", "unreachable");
}

#[test]
fn fifty_megabytes_of_output_is_refused() {
    // A generous deadline: filling 50 MB must be stopped by the output limit, not by the clock
    // (on a loaded 2-core machine it can take longer than the default 100 ms).
    let (out, _) = contained(
        "big-output",
        "[plugins.limits]\nmemory_mib = 256\ndeadline_ms = 10000",
    );
    assert_failure(
        &out,
        "pre_tool_execution",
        "invalid-output",
        "returned 52428800 bytes, more than the 1048576-byte limit",
    );
}

#[test]
fn a_replacement_that_is_not_json_is_refused() {
    let (out, _) = contained("invalid-json", "");
    assert_failure(
        &out,
        "pre_tool_execution",
        "invalid-output",
        "replacement rawParams are not valid JSON",
    );
}

#[test]
fn a_replacement_that_breaks_the_schema_is_refused() {
    let (out, _) = contained("bad-schema", "");
    assert_failure(
        &out,
        "pre_tool_execution",
        "invalid-output",
        "do not match the tool schema: Invalid parameters: Field \"transfers\" - Expected array, received string",
    );
}

#[test]
fn tampered_normalised_params_that_create_money_are_refused() {
    let (out, _) = contained("bad-normalised", "");
    assert_failure(
        &out,
        "post_params_normalization",
        "invalid-output",
        "hbarTransfers must sum to zero",
    );
}

#[test]
fn the_post_core_stage_is_observe_only() {
    let (out, _) = contained("replace-core", "");
    assert_failure(&out, "post_core_action", "invalid-output", "observe-only");
}

#[test]
fn a_log_flood_is_capped_and_does_not_fail_the_call() {
    // Thousands of log calls: the deadline is not what this is about (a loaded machine
    // running the debug build took more than the default 100 ms now and then).
    let (host, logs) = start(&hostile(
        "log-flood",
        "[plugins.limits]\ndeadline_ms = 5000",
    ));
    let out = host
        .default_session()
        .call("transfer_hbar_tool", ATTACK)
        .unwrap();
    assert_eq!(out["raw"]["status"], "SUCCESS", "{out}");
    let lines = logs.take();
    let bytes: usize = lines.iter().map(String::len).sum();
    assert!(
        bytes <= 16 * 1024 + 200,
        "log budget exceeded: {bytes} bytes"
    );
    assert!(
        lines
            .last()
            .unwrap()
            .contains("log budget of this call exhausted"),
        "{:?}",
        lines.last()
    );
}

#[test]
fn an_ungranted_capability_is_refused() {
    let (out, _) = contained("steal-capability", "");
    assert_eq!(
        out["raw"]["error"],
        "Failed to execute Transfer HBAR: capability hedera:submit-topic-message is not granted to plugin hostile"
    );
}

#[test]
fn files_env_and_args_are_out_of_reach_and_stdout_is_captured() {
    let (host, logs) = start(&hostile("escape", ""));
    let out = host
        .default_session()
        .call("transfer_hbar_tool", ATTACK)
        .unwrap();
    assert_eq!(out["raw"]["status"], "SUCCESS", "{out}");
    assert_eq!(logs.take(), ["sandbox held"]);
}

#[test]
fn a_failing_hook_with_on_error_skip_is_bypassed() {
    let (host, _) = start(&hostile(
        "loop-hook",
        "on_error = \"skip\"\n[plugins.limits]\ndeadline_ms = 100",
    ));
    let out = host
        .default_session()
        .call("transfer_hbar_tool", ATTACK)
        .unwrap();
    assert_eq!(out["raw"]["status"], "SUCCESS", "{out}");
}

#[test]
fn on_error_skip_is_refused_for_a_policy() {
    let err = try_start(&hostile("ok", "on_error = \"skip\""))
        .err()
        .expect("must not load");
    assert!(err.to_string().contains("allowed for hooks only"), "{err}");
}

fn load_bytes(bytes: &[u8]) -> String {
    let dir = root().join("target/test-tmp");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!(
        "bad-{}.wasm",
        hex::encode(&bytes[..bytes.len().min(6)])
    ));
    std::fs::write(&path, bytes).unwrap();
    let manifest = format!(
        "{RETURN_BYTES_HEADER}\n[[plugins]]\nname = \"bad\"\npath = {:?}\n",
        path.display().to_string()
    );
    try_start(&manifest)
        .err()
        .expect("must not load")
        .to_string()
}

#[test]
fn garbage_files_core_modules_and_wrong_worlds_are_refused_clearly() {
    assert_eq!(
        load_bytes(b"this is not wasm at all"),
        "plugin bad: not a WebAssembly component: the file does not start with the WebAssembly magic bytes"
    );
    assert!(load_bytes(b"\0asm\x01\0\0\0").contains("it is a core wasm module"));
    let mut truncated = std::fs::read(plugin("rust/reject-tool")).unwrap();
    truncated.truncate(truncated.len() / 2);
    assert!(load_bytes(&truncated).starts_with("plugin bad: not a WebAssembly component"));
    let manifest = format!(
        "{RETURN_BYTES_HEADER}{}",
        plugin_entry("other", "fixtures/wrong-world", "")
    );
    let err = try_start(&manifest)
        .err()
        .expect("must not load")
        .to_string();
    assert!(
        err.starts_with(
            "plugin other: does not fit the hedera:agent-kit/agent-plugin@0.2.2 world (or 0.1.0-0.1.2)"
        ),
        "{err}"
    );
}

/// A plugin whose `hak:fast/judge` export has another type than `wit/ext/judge.wit`'s is
/// never called through it (with arguments it does not take): it loads (the load warns), and
/// it is judged through `policy`, which every plugin has.
#[test]
fn a_judge_export_of_another_type_is_not_called_and_policy_judges() {
    let manifest = format!(
        "{RETURN_BYTES_HEADER}{}",
        plugin_entry("wrongjudge", "fixtures/wrong-judge", "")
    );
    let (host, _logs) = start(&manifest);
    let out = host
        .default_session()
        .call("transfer_hbar_tool", &transfer(1))
        .unwrap();
    assert_eq!(
        out["raw"]["policyBlock"]["reason"], "judged through policy",
        "{out}"
    );
}

#[test]
fn a_sha256_pin_mismatch_is_refused() {
    let pin = "0".repeat(64);
    let manifest = format!(
        "{RETURN_BYTES_HEADER}{}",
        plugin_entry(
            "pinned",
            "rust/reject-tool",
            &format!("sha256 = {pin:?}\n[plugins.config]\nrelevantTools = []")
        )
    );
    let err = try_start(&manifest)
        .err()
        .expect("must not load")
        .to_string();
    assert!(
        err.starts_with(&format!(
            "plugin pinned: sha256 mismatch: manifest pins {pin}, file is "
        )),
        "{err}"
    );
}

fn leb(mut n: usize, out: &mut Vec<u8>) {
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

fn section(id: u8, body: &[u8], out: &mut Vec<u8>) {
    out.push(id);
    leb(body.len(), out);
    out.extend_from_slice(body);
}

/// A component holding one core module of `n` empty functions.
fn many_functions(n: usize) -> Vec<u8> {
    let mut module = b"\0asm\x01\0\0\0".to_vec();
    section(1, &[1, 0x60, 0, 0], &mut module); // one type: () -> ()
    let mut funcs = Vec::new();
    leb(n, &mut funcs);
    funcs.extend(std::iter::repeat_n(0u8, n));
    section(3, &funcs, &mut module);
    let mut code = Vec::new();
    leb(n, &mut code);
    for _ in 0..n {
        code.extend_from_slice(&[2, 0, 0x0b]); // size 2: no locals, end
    }
    section(10, &code, &mut module);
    let mut component = b"\0asm\x0d\0\x01\0".to_vec();
    section(1, &module, &mut component);
    component
}

#[test]
#[ignore = "needs the JS and Go plugins (scripts/build-plugins.sh js go); scripts/test.sh runs it"]
fn a_compile_bomb_is_refused_before_compiling() {
    let started = std::time::Instant::now();
    let err = load_bytes(&many_functions(100_000));
    assert!(err.contains("more than 50000 functions"), "{err}");
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    // The project's own plugins pass with room to spare.
    for rel in ["js/max-recipients", "go/max-recipients", "rust/spend-limit"] {
        let bytes = std::fs::read(plugin(rel)).unwrap();
        let (functions, _) = hak_host::runtime::structure::check(&bytes).unwrap();
        assert!(
            functions * 2 < hak_host::runtime::structure::MAX_FUNCTIONS,
            "{rel}: {functions}"
        );
    }
}

/// A call on a thread of its own, with a minute to answer (a guest left running without a
/// ticker would never be interrupted: the test fails instead of hanging).
fn call_within_a_minute(session: hak_host::lifecycle::Session) -> Value {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut session = session;
        let _ = tx.send(session.call("transfer_hbar_tool", ATTACK).unwrap());
    });
    rx.recv_timeout(std::time::Duration::from_secs(60))
        .expect("the looping guest was never interrupted: the epoch stopped advancing")
}

/// An idle engine's epoch ticker parks (no wake-ups a millisecond while nothing runs), and a
/// guest call that starts then wakes it: an infinite loop still ends at its deadline.
#[test]
fn an_idle_engines_ticker_parks_and_the_next_guest_call_wakes_it() {
    let (host, _) = start(&hostile(
        "loop-policy",
        "[plugins.limits]\ndeadline_ms = 20",
    ));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !host.runtime().epoch_ticker_parked() {
        assert!(
            std::time::Instant::now() < deadline,
            "the ticker never parked"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = call_within_a_minute(host.default_session());
    assert_failure(
        &out,
        "pre_tool_execution",
        "deadline",
        "exceeded its 20 ms deadline",
    );
    assert!(!host.runtime().epoch_ticker_parked());
}

/// A guest looping alone for longer than the ticker's check periods (nothing else starts)
/// keeps the ticker ticking: it is stopped at its deadline, not left running.
#[test]
fn a_guest_looping_alone_keeps_the_ticker_ticking_to_its_deadline() {
    let (host, _) = start(&hostile(
        "loop-policy",
        "[plugins.limits]\ndeadline_ms = 3500",
    ));
    let out = call_within_a_minute(host.default_session());
    assert_failure(
        &out,
        "pre_tool_execution",
        "deadline",
        "exceeded its 3500 ms deadline",
    );
}
