//! The kit guide's `tx-timing-hook` in Rust, JavaScript and Go: each call of one context
//! logs its own duration once, even when the context's calls run at the same time.

use hak_tests::*;
use std::time::Instant;

const TRANSFER: &str = r#"{"transfers":[{"accountId":"0.0.1002","amount":1}]}"#;

/// Run `calls` concurrent transfers in the default context through the hook `rel`; the
/// durations it logged, in µs, and the wall time of the batch.
fn timed(rel: &str, calls: usize) -> (Vec<u64>, u128) {
    let (host, logs) = start(&format!(
        "{LOCAL}{}",
        plugin_entry(
            "timing",
            rel,
            "config = { relevantTools = [\"transfer_hbar_tool\"] }"
        )
    ));
    // One warm-up call (the first instance is described at load), then the batch.
    host.default_session()
        .call("transfer_hbar_tool", TRANSFER)
        .unwrap();
    logs.take();
    let started = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..calls {
            let host = host.clone();
            scope.spawn(move || {
                let out = host
                    .default_session()
                    .call("transfer_hbar_tool", TRANSFER)
                    .unwrap();
                assert_eq!(out["raw"]["status"], "SUCCESS", "{out}");
            });
        }
    });
    let wall = started.elapsed().as_micros();
    let durations = logs
        .take()
        .into_iter()
        .map(|line| {
            let micros = line
                .strip_prefix("[tx-timing-hook] transfer_hbar_tool took ")
                .and_then(|rest| rest.strip_suffix(" µs"))
                .unwrap_or_else(|| panic!("{rel}: unexpected log line {line:?}"));
            micros.parse().unwrap()
        })
        .collect();
    (durations, wall)
}

fn check(rel: &str) {
    let calls = 8;
    let (durations, wall) = timed(rel, calls);
    // A start shared by the context's calls would be overwritten and taken twice: fewer lines.
    assert_eq!(durations.len(), calls, "{rel}: {durations:?}");
    for d in &durations {
        assert!(*d > 0 && u128::from(*d) <= wall, "{rel}: {d} µs of {wall}");
    }
}

#[test]
fn the_rust_timing_hook_logs_each_concurrent_calls_duration_once() {
    check("rust/tx-timing-hook");
}

#[test]
#[ignore = "needs the JS and Go plugins (scripts/build-plugins.sh js go); scripts/test.sh runs it"]
fn the_js_and_go_timing_hooks_log_each_concurrent_calls_duration_once() {
    check("js/tx-timing-hook");
    check("go/tx-timing-hook");
}

#[test]
#[ignore = "needs the Python plugins (scripts/build-plugins.sh python); scripts/test.sh runs it"]
fn the_python_timing_hook_logs_each_concurrent_calls_duration_once() {
    check("python/tx-timing-hook");
}
