//! What MCP adds to a tool call: `transfer_hbar_tool` in return-bytes mode through 5 wasm
//! policies (as in `call.rs`), called
//! - directly on a `Session` (the floor),
//! - through `tools/call` of the MCP server (`hak mcp`), from rmcp's own client over an
//!   in-memory pipe: JSON-RPC framing and parsing both ways, the session pool, the call on
//!   the worker that read it (return-bytes), the result as text and structured content;
//! - through `tools/call` of a server that does no work (`Echo`: rmcp's own service answering
//!   with the result hak gave for the same call): what rmcp's client and server cost alone
//!   for this request and this answer, the floor of any MCP server built on them;
//! - the same on a current-thread runtime (rmcp with no hand-off between threads at all).
//!
//! The difference is the MCP overhead per call; stdio adds only the pipe's system calls
//! (`scripts/bench-mcp-stdio.py` measures `hak mcp` from a client process).
//! Run `scripts/build-plugins.sh` first. Figures go to docs/BENCHMARKS.md as ratios.

mod support;

use criterion::{criterion_group, criterion_main, Criterion};
use hak_host::manifest::Manifest;
use hak_host::mcp::{Identity, McpServer};
use hak_host::registry::Registry;
use hak_host::serve::ServeOptions;
use hak_host::HostBuilder;
use rmcp::model::{CallToolRequestParams, CallToolResponse, CallToolResult, ErrorData};
use rmcp::service::{RequestContext, RoleClient, RoleServer, RunningService};
use rmcp::{ServerHandler, ServiceExt};
use serde_json::{json, Map, Value};
use std::sync::Arc;
use support::{plugin, root, PARAMS};
use tokio::runtime::Runtime;

/// rmcp's client, as `().serve(…)` starts it.
type Client = RunningService<RoleClient, ()>;

/// The manifest of `call.rs`'s `5_wasm_policies`: 3 max-recipients, 2 reject-tool for others.
fn five_wasm() -> String {
    let mut manifest = String::from(
        "[network]\nname = \"testnet\"\nnode_account_ids = [\"0.0.3\"]\n[context]\naccount_id = \"0.0.1001\"\nmode = \"returnBytes\"\n",
    );
    for i in 0..3 {
        manifest += &format!(
            "\n[[plugins]]\nname = \"max-{i}\"\npath = {:?}\nconfig = {{ maxRecipients = 5 }}\n",
            plugin("max-recipients")
        );
    }
    for i in 0..2 {
        manifest += &format!(
            "\n[[plugins]]\nname = \"reject-{i}\"\npath = {:?}\nconfig = {{ relevantTools = [\"create_topic_tool\"] }}\n",
            plugin("reject-tool")
        );
    }
    manifest
}

/// An MCP server that answers every `tools/call` with one fixed result and does nothing else.
#[derive(Clone)]
struct Echo(CallToolResult);

impl ServerHandler for Echo {
    async fn call_tool(
        &self,
        _request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        Ok(self.0.clone().into())
    }
}

/// An rmcp client of `server`, the two joined by an in-memory pipe and run on `runtime`.
fn connect(runtime: &Runtime, server: impl ServerHandler) -> Client {
    let (client_end, server_end) = tokio::io::duplex(1 << 16);
    runtime.block_on(async move {
        tokio::spawn(async move {
            let running = server.serve(tokio::io::split(server_end)).await.unwrap();
            let _ = running.waiting().await;
        });
        ().serve(tokio::io::split(client_end)).await.unwrap()
    })
}

/// One `tools/call` of `transfer_hbar_tool` with `arguments`, from `client` on `runtime`.
fn transfer(runtime: &Runtime, client: &Client, arguments: &Map<String, Value>) -> CallToolResult {
    runtime.block_on(async {
        let params =
            CallToolRequestParams::new("transfer_hbar_tool").with_arguments(arguments.clone());
        client.call_tool(params).await.unwrap()
    })
}

fn bench_mcp(c: &mut Criterion) {
    let manifest = Manifest::parse(&five_wasm(), "bench", root()).unwrap();
    let host = HostBuilder::new(manifest)
        .cache_dir(Some(root().join("target/test-cache")))
        .build()
        .unwrap();
    let context = host.default_context().clone();
    let mut session = host.default_session();
    let registry = Arc::new(Registry::new(host, None).unwrap());
    let options = ServeOptions::from_manifest(&registry, None).unwrap();

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let server = McpServer::new(registry.clone(), Identity::Local(context), &options, false);
    let client = connect(&runtime, server);
    let Value::Object(arguments) = serde_json::from_str::<Value>(PARAMS).unwrap() else {
        unreachable!()
    };
    let call = || transfer(&runtime, &client, &arguments);
    let first = call();
    assert_ne!(first.is_error, Some(true), "{first:?}");
    assert_eq!(
        first.structured_content.as_ref().unwrap()["raw"]["status"],
        json!("SUCCESS")
    );

    // The same request and answer through rmcp alone.
    let echo_client = connect(&runtime, Echo(first.clone()));
    let echo_call = || transfer(&runtime, &echo_client, &arguments);
    assert_eq!(echo_call(), first);

    // The same through rmcp alone with everything on one thread (a current-thread runtime:
    // no hand-off between threads; hak's server needs the multi-threaded one for its inline
    // calls, so this is rmcp's floor, not hak's).
    let one_thread = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let local_client = connect(&one_thread, Echo(first.clone()));
    let local_call = || transfer(&one_thread, &local_client, &arguments);
    assert_eq!(local_call(), first);

    let mut group = c.benchmark_group("transfer_hbar_5_wasm_policies");
    group.bench_function("direct_session_call", |b| {
        b.iter(|| session.call("transfer_hbar_tool", PARAMS).unwrap())
    });
    group.bench_function("mcp_tools_call", |b| b.iter(call));
    group.bench_function("mcp_tools_call_rmcp_alone", |b| b.iter(echo_call));
    group.bench_function("mcp_tools_call_rmcp_alone_one_thread", |b| {
        b.iter(local_call)
    });
    group.finish();
    runtime.block_on(async move {
        client.cancel().await.ok();
        echo_client.cancel().await.ok();
    });
    one_thread.block_on(async move {
        local_client.cancel().await.ok();
    });
}

criterion_group!(benches, bench_mcp);
criterion_main!(benches);
