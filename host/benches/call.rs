//! What a tool call costs: `transfer_hbar_tool` in return-bytes mode through
//! - no plugins (the SDK + lifecycle baseline),
//! - 5 sandboxed wasm policies (3× max-recipients, 2× reject-tool for other tools),
//! - 5 wasm max-recipients policies (every plugin relevant and called),
//! - the same policies as native Rust in the host (the floor),
//! - the cost of a fresh instance per context (instantiate + describe),
//! - autonomous round trips against the local network inside the host,
//! - a mix of tools (transfer, token create, topic submit, a balance query against the local
//!   mirror) in return-bytes mode, with no plugins and with 5 wasm policies;
//! - 5 wasm policies one of which is spend-limit (an atomic budget reservation per call,
//!   settled after it) on each state store: memory, the journal (the embedded default),
//!   SQLite (shared by processes), Redis
//!   (a real `redis-server` on loopback, when installed).
//!
//! Run `scripts/build-plugins.sh` first. Figures go to docs/BENCHMARKS.md as ratios.

mod support;

use criterion::{criterion_group, criterion_main, Criterion};
use hak_host::manifest::Manifest;
use hak_host::model::stage::{Stage, StageSet};
use hak_host::plugin::{BlockReason, StageCall, Verdict};
use hak_host::runtime::PluginDescription;
use hak_host::{lifecycle::native::NativePlugin, Host, HostBuilder};
use serde::Deserialize;
use std::sync::Arc;
use support::{plugin, root, PARAMS};

const HEADER: &str = "[network]\nname = \"testnet\"\nnode_account_ids = [\"0.0.3\"]\n[context]\naccount_id = \"0.0.1001\"\nmode = \"returnBytes\"\n";

fn entry(name: &str, file: &str, config: &str) -> String {
    format!(
        "\n[[plugins]]\nname = {name:?}\npath = {:?}\nconfig = {config}\n",
        plugin(file)
    )
}

fn host(manifest: &str, natives: Vec<Arc<dyn NativePlugin>>) -> Host {
    let manifest = Manifest::parse(manifest, "bench", root()).unwrap();
    let mut builder = HostBuilder::new(manifest).cache_dir(Some(root().join("target/test-cache")));
    for native in natives {
        builder = builder.native_plugin(native);
    }
    builder.build().unwrap()
}

fn five_wasm() -> String {
    let mut m = HEADER.to_owned();
    for i in 0..3 {
        m += &entry(
            &format!("max-{i}"),
            "max-recipients",
            "{ maxRecipients = 5 }",
        );
    }
    for i in 0..2 {
        m += &entry(
            &format!("reject-{i}"),
            "reject-tool",
            "{ relevantTools = [\"get_hbar_balance_query_tool\"] }",
        );
    }
    m
}

fn five_wasm_relevant() -> String {
    let mut m = HEADER.to_owned();
    for i in 0..5 {
        m += &entry(
            &format!("max-{i}"),
            "max-recipients",
            "{ maxRecipients = 5 }",
        );
    }
    m
}

/// The max-recipients policy written as native Rust (same parse of the same stage JSON).
struct NativeMaxRecipients(PluginDescription, u64);

#[derive(Deserialize)]
struct Entry<'a> {
    #[serde(borrow)]
    amount: Option<&'a str>,
}
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Normalised<'a> {
    #[serde(borrow)]
    hbar_transfers: Option<Vec<Entry<'a>>>,
}
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Params<'a> {
    #[serde(borrow)]
    normalised_params: Normalised<'a>,
}

impl NativePlugin for NativeMaxRecipients {
    fn description(&self) -> &PluginDescription {
        &self.0
    }
    fn policy(&self, call: &StageCall<'_>) -> Result<Verdict, String> {
        let p: Params = serde_json::from_str(call.input).map_err(|e| e.to_string())?;
        let count = p
            .normalised_params
            .hbar_transfers
            .unwrap_or_default()
            .iter()
            .filter(|e| {
                e.amount
                    .is_none_or(|a| a.parse::<i128>().is_ok_and(|v| v > 0))
            })
            .count() as u64;
        Ok(if count > self.1 {
            Verdict::Block(BlockReason {
                message: "too many".into(),
                code: None,
                details_json: None,
            })
        } else {
            Verdict::Allow
        })
    }
}

/// The reject-tool policy as native Rust.
struct NativeReject(PluginDescription);

impl NativePlugin for NativeReject {
    fn description(&self) -> &PluginDescription {
        &self.0
    }
    fn policy(&self, call: &StageCall<'_>) -> Result<Verdict, String> {
        Ok(Verdict::Block(BlockReason {
            message: format!("{} not allowed", call.method),
            code: None,
            details_json: None,
        }))
    }
}

fn description(name: &str, tools: &[&str], stage: Stage) -> PluginDescription {
    PluginDescription {
        name: name.into(),
        description: String::new(),
        relevant_tools: tools.iter().map(|t| t.to_string()).collect(),
        hook_stages: StageSet::default(),
        policy_stages: [stage].into_iter().collect(),
    }
}

fn five_native() -> Vec<Arc<dyn NativePlugin>> {
    let mut v: Vec<Arc<dyn NativePlugin>> = Vec::new();
    for _ in 0..3 {
        let d = description(
            "Max Recipients Policy",
            &["transfer_hbar_tool"],
            Stage::PostParamsNormalization,
        );
        v.push(Arc::new(NativeMaxRecipients(d, 5)));
    }
    for _ in 0..2 {
        v.push(Arc::new(NativeReject(description(
            "Reject Tool Call",
            &["get_hbar_balance_query_tool"],
            Stage::PreToolExecution,
        ))));
    }
    v
}

fn bench_calls(c: &mut Criterion) {
    let mut group = c.benchmark_group("transfer_hbar_return_bytes");
    let cases: [(&str, Host); 4] = [
        ("0_plugins", host(HEADER, vec![])),
        ("5_native_policies", host(HEADER, five_native())),
        ("5_wasm_policies", host(&five_wasm(), vec![])),
        (
            "5_wasm_policies_all_called",
            host(&five_wasm_relevant(), vec![]),
        ),
    ];
    for (name, host) in cases {
        let mut session = host.default_session();
        let first = session.call("transfer_hbar_tool", PARAMS).unwrap();
        assert_eq!(first["raw"]["status"], "SUCCESS", "{first}");
        group.bench_function(name, |b| {
            b.iter(|| session.call_envelope("transfer_hbar_tool", PARAMS).unwrap())
        });
    }
    group.finish();

    // A new agent context: instantiate + describe each plugin once, then the call.
    let host = host(&five_wasm_relevant(), vec![]);
    c.bench_function("new_context_first_call_5_wasm", |b| {
        b.iter(|| {
            host.default_session()
                .call("transfer_hbar_tool", PARAMS)
                .unwrap()
        })
    });
}

/// Autonomous round trips on the local network inside the host: sign, submit over gRPC,
/// precheck + handle in the emulator, poll the receipt. Throughput = 1 / time per call.
fn bench_autonomous(c: &mut Criterion) {
    const LOCAL: &str = "[network]\nname = \"local\"\n[context]\naccount_id = \"0.0.1001\"\n";
    const TO_1002: &str = r#"{"transfers":[{"accountId":"0.0.1002","amount":0.0001}]}"#;
    let mut group = c.benchmark_group("transfer_hbar_autonomous_local");
    for (name, manifest) in [
        ("0_plugins", LOCAL.to_owned()),
        ("5_wasm_policies", five_wasm().replace(HEADER, LOCAL)),
    ] {
        let host = host(&manifest, vec![]);
        let mut session = host.default_session();
        let first = session.call("transfer_hbar_tool", TO_1002).unwrap();
        assert_eq!(first["raw"]["status"], "SUCCESS", "{first}");
        group.bench_function(name, |b| {
            b.iter(|| {
                session
                    .call_envelope("transfer_hbar_tool", TO_1002)
                    .unwrap()
            })
        });
    }
    group.finish();
}

/// The mixed-tool calls, shared with `js-kit/bench.mjs` (same params, same order).
const MIX: [(&str, &str); 4] = [
    ("transfer_hbar_tool", PARAMS),
    (
        "create_fungible_token_tool",
        r#"{"tokenName":"Bench","tokenSymbol":"BEN","initialSupply":1000,"decimals":2}"#,
    ),
    (
        "submit_topic_message_tool",
        r#"{"topicId":"0.0.5005","message":"bench"}"#,
    ),
    ("get_hbar_balance_query_tool", r#"{"accountId":"0.0.1001"}"#),
];

/// 5 policies for the mix: 3 max-recipients (called for the transfer) and 2 reject-tool
/// (relevant to `delete_account_tool` only, so never called here).
fn five_wasm_mixed(header: &str) -> String {
    five_wasm()
        .replace(HEADER, header)
        .replace("get_hbar_balance_query_tool", "delete_account_tool")
}

/// Each tool of the mix, and the four in a row, in return-bytes mode on the local network
/// (its mirror answers the query).
fn bench_mixed(c: &mut Criterion) {
    const LOCAL_BYTES: &str = "[network]\nname = \"local\"\n[context]\naccount_id = \"0.0.1001\"\nmode = \"returnBytes\"\n";
    let mut group = c.benchmark_group("mixed_return_bytes");
    for (plugins, manifest) in [
        ("0_plugins", LOCAL_BYTES.to_owned()),
        ("5_wasm_policies", five_wasm_mixed(LOCAL_BYTES)),
    ] {
        let host = host(&manifest, vec![]);
        let mut session = host.default_session();
        for (tool, params) in MIX {
            let first = session.call(tool, params).unwrap();
            assert_eq!(first["raw"]["status"], "SUCCESS", "{tool}: {first}");
            group.bench_function(format!("{plugins}/{tool}"), |b| {
                b.iter(|| session.call_envelope(tool, params).unwrap())
            });
        }
        group.bench_function(format!("{plugins}/all_four"), |b| {
            b.iter(|| {
                for (tool, params) in MIX {
                    session.call_envelope(tool, params).unwrap();
                }
            })
        });
    }
    group.finish();
}

/// One max-recipients policy per guest language: a warm call (instance reused per context)
/// and the first call of a new context (instantiate + describe + call).
fn bench_languages(c: &mut Criterion) {
    let mut group = c.benchmark_group("one_policy_per_language");
    for lang in ["rust", "js", "go", "python"] {
        let path = root().join(format!("target/plugins/{lang}/max-recipients.wasm"));
        if !path.exists() {
            eprintln!("{} missing: run scripts/build-plugins.sh", path.display());
            continue;
        }
        let manifest = format!(
            "{HEADER}\n[[plugins]]\nname = \"max\"\npath = {:?}\nconfig = {{ maxRecipients = 5 }}\n",
            path.display().to_string()
        );
        let host = host(&manifest, vec![]);
        let mut session = host.default_session();
        let first = session.call("transfer_hbar_tool", PARAMS).unwrap();
        assert_eq!(first["raw"]["status"], "SUCCESS", "{first}");
        group.bench_function(format!("{lang}/warm"), |b| {
            b.iter(|| session.call_envelope("transfer_hbar_tool", PARAMS).unwrap())
        });
        group.bench_function(format!("{lang}/new_context_first_call"), |b| {
            b.iter(|| {
                host.default_session()
                    .call("transfer_hbar_tool", PARAMS)
                    .unwrap()
            })
        });
    }
    group.finish();
}

/// 3 max-recipients, 1 reject-tool (for another tool), 1 spend-limit with a budget no call
/// reaches: every call reserves and settles.
fn five_wasm_with_budget() -> String {
    let mut m = HEADER.to_owned();
    for i in 0..3 {
        m += &entry(
            &format!("max-{i}"),
            "max-recipients",
            "{ maxRecipients = 5 }",
        );
    }
    m += &entry(
        "reject",
        "reject-tool",
        "{ relevantTools = [\"get_hbar_balance_query_tool\"] }",
    );
    m += &entry("spend", "spend-limit", "{ dailyHbarBudget = 1000000000 }");
    m
}

/// A `redis-server` on a free loopback port for the bench's lifetime (None if not installed).
struct Redis(std::process::Child, String);

impl Redis {
    fn start() -> Option<Self> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .ok()?
            .local_addr()
            .ok()?
            .port();
        let child = std::process::Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(std::process::Stdio::null())
            .spawn()
            .ok()?;
        for _ in 0..500 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Some(Redis(child, format!("redis://127.0.0.1:{port}/0")));
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        None
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn bench_state_stores(c: &mut Criterion) {
    use hak_host::state_store::{
        journal::JournalBackend, redis::RedisBackend, sqlite::SqliteBackend, MemoryBackend,
        StateBackend,
    };
    let mut group = c.benchmark_group("5_wasm_policies_with_spend_limit");
    let dir = root().join(format!("target/bench-state-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let redis = Redis::start();
    let mut stores: Vec<(&str, Arc<dyn StateBackend>)> = vec![
        ("memory", Arc::new(MemoryBackend::default())),
        ("journal", Arc::new(JournalBackend::open(&dir).unwrap())),
        ("sqlite", Arc::new(SqliteBackend::open(&dir).unwrap())),
    ];
    match &redis {
        // The bench's server keeps nothing (a scratch store), knowingly.
        Some(r) => stores.push((
            "redis",
            Arc::new(
                RedisBackend::open(
                    &r.1,
                    std::time::Duration::from_millis(50),
                    hak_host::state_store::redis::Persistence::Acknowledged,
                    Default::default(),
                    hak_host::state_store::PRESUMED_STOPPED,
                )
                .unwrap(),
            ),
        )),
        None => eprintln!("redis-server not installed: no redis figure"),
    }
    for (name, store) in stores {
        let manifest = Manifest::parse(&five_wasm_with_budget(), "bench", root()).unwrap();
        let host = HostBuilder::new(manifest)
            .cache_dir(Some(root().join("target/test-cache")))
            .state_backend(store)
            .build()
            .unwrap();
        let mut session = host.default_session();
        let first = session.call("transfer_hbar_tool", PARAMS).unwrap();
        assert_eq!(first["raw"]["status"], "SUCCESS", "{first}");
        group.bench_function(name, |b| {
            b.iter(|| session.call_envelope("transfer_hbar_tool", PARAMS).unwrap())
        });
    }
    group.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(50).measurement_time(std::time::Duration::from_secs(4));
    targets = bench_calls, bench_autonomous, bench_mixed, bench_languages, bench_state_stores
}
criterion_main!(benches);
