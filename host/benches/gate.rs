//! The instruction-count gate (run by `scripts/instruction-gate.sh`, in CI through
//! `scripts/test.sh`): callgrind counts, with gungraun, the instructions of **one warm call**
//! of `transfer_hbar_tool` (two recipients and a memo, return-bytes, one node) through
//! - no plugins,
//! - 5 Rust policies (3× max-recipients, 2× reject-tool for another tool),
//! - 1 JS policy (max-recipients, componentize-js).
//!
//! What is counted is fixed: the setup (not counted) builds the host on the in-memory state
//! store (no journal, so no flusher thread), with the plugins precompiled in the shared cache
//! and the engine's default instance allocator, opens one session and makes 20 calls, so
//! instances, caches and the session are warm; the counted part is the next 16 calls on the
//! same thread (other threads are not counted). Instruction counts are deterministic for one binary and input, whatever else the
//! machine does; wall-clock never appears here. The script compares them with
//! `host/benches/gate-baseline.json` and fails on more than 5 % more instructions.

mod support;

use gungraun::{library_benchmark, library_benchmark_group, main, LibraryBenchmarkConfig};
use hak_host::lifecycle::Session;
use hak_host::manifest::Manifest;
use hak_host::state_store::MemoryBackend;
use hak_host::HostBuilder;
use std::hint::black_box;
use std::sync::Arc;
use support::{plugin, root, PARAMS};

/// Calls counted per case. More than one: a call now and then refills a random number
/// generator's buffer (~48k instructions in the dev profile), and 16 calls hold ±1 refill to
/// about 1 % of the total.
const COUNTED_CALLS: usize = 16;

const HEADER: &str = "[network]\nname = \"testnet\"\nnode_account_ids = [\"0.0.3\"]\n[context]\naccount_id = \"0.0.1001\"\nmode = \"returnBytes\"\n";

fn entry(name: &str, path: &str, config: &str) -> String {
    format!("\n[[plugins]]\nname = {name:?}\npath = {path:?}\nconfig = {config}\n")
}

/// A warm session of a host built from `plugins` (manifest entries).
fn warm(plugins: &str) -> Session {
    let manifest = Manifest::parse(&format!("{HEADER}{plugins}"), "gate", root()).unwrap();
    let host = HostBuilder::new(manifest)
        .cache_dir(Some(root().join("target/test-cache")))
        .state_backend(Arc::new(MemoryBackend::default()))
        .build()
        .unwrap();
    let mut session = host.default_session();
    for _ in 0..20 {
        let out = session.call("transfer_hbar_tool", PARAMS).unwrap();
        assert_eq!(out["raw"]["status"], "SUCCESS", "{out}");
    }
    session
}

fn no_plugins() -> Session {
    warm("")
}

fn five_rust() -> Session {
    let mut m = String::new();
    for i in 0..3 {
        m += &entry(
            &format!("max-{i}"),
            &plugin("max-recipients"),
            "{ maxRecipients = 5 }",
        );
    }
    for i in 0..2 {
        m += &entry(
            &format!("reject-{i}"),
            &plugin("reject-tool"),
            "{ relevantTools = [\"get_hbar_balance_query_tool\"] }",
        );
    }
    warm(&m)
}

fn one_js() -> Session {
    let path = root().join("target/plugins/js/max-recipients.wasm");
    assert!(
        path.exists(),
        "{} missing: scripts/build-plugins.sh js",
        path.display()
    );
    warm(&entry(
        "max-js",
        &path.display().to_string(),
        "{ maxRecipients = 5 }",
    ))
}

#[library_benchmark]
#[bench::no_plugins(setup = no_plugins)]
#[bench::five_rust(setup = five_rust)]
#[bench::one_js(setup = one_js)]
fn transfer(mut session: Session) -> Session {
    for _ in 0..COUNTED_CALLS {
        black_box(
            session
                .call_envelope("transfer_hbar_tool", black_box(PARAMS))
                .unwrap(),
        );
    }
    session
}

library_benchmark_group!(name = call_path; benchmarks = transfer);

// gungraun clears the benchmark's environment: the engine settings the script compiled the
// plugins with (`scripts/instruction-gate.sh`) are set again here, or the counted run would
// miss the cache and compile every plugin under valgrind.
main!(
    config = LibraryBenchmarkConfig::default()
        .env("HAK_PORTABLE_CODE", "1")
        .env("HAK_POOLING", "0");
    library_benchmark_groups = call_path
);
