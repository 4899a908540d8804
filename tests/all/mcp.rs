//! `hak mcp` with the official MCP clients: the TypeScript SDK (`tests/mcp/client.mjs`) and
//! the Python `mcp` package (`tests/mcp/client.py`), each over stdio and over streamable
//! HTTP, against the `hak` binary on the local network inside it. Every client lists the
//! tools (the kit's descriptions for the context, the schemas), runs an allowed transfer, gets
//! a blocked one with the policy's reason, and sees a policy dropped into the plugins
//! directory take effect mid-session.
//!
//! Needs `npm ci` in `tests/mcp` and the Python client in `target/tools/py-venv`
//! (`scripts/install-deps.sh`); `scripts/test.sh` does both. One test runs in-process with
//! rmcp's client over in-memory pipes (return-bytes calls, answered on the server's worker).

use hak_host::model::context::{AgentContext, AgentMode};
use hak_host::tools::ToolRegistry;
use hak_tests::*;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

/// The agent key of the HTTP variant's `[[agents]]` entry.
const AGENT_KEY: &str = "mcp-test-agent-key-0123456789";

fn hak_bin() -> PathBuf {
    std::env::var_os("HAK_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/debug/hak"))
}

fn python() -> PathBuf {
    root().join("target/tools/py-venv/bin/python")
}

fn scratch(name: &str) -> PathBuf {
    let dir = root()
        .join("target/test-tmp")
        .join(format!("mcp-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("plugins")).unwrap();
    dir
}

/// A manifest for the local network inside hak (its own ledger), autonomous for 0.0.1001;
/// with `agents`, one agent by key.
fn manifest(dir: &Path, agents: bool) -> PathBuf {
    let mut text = format!(
        "[network]\nname = \"local\"\nstate_dir = {:?}\n\n[context]\naccount_id = \"0.0.1001\"\n",
        dir.join("ledger").display().to_string()
    );
    if agents {
        text += "\n[[agents]]\nname = \"mcp-agent\"\nkey_env = \"HAK_TEST_MCP_AGENT_KEY\"\n";
    }
    let path = dir.join("hak.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// Start with Max Recipients (max 1) in the watched directory.
fn seed_plugins(dir: &Path) {
    let plugins = dir.join("plugins");
    std::fs::copy(
        plugin("rust/max-recipients"),
        plugins.join("max-recipients.wasm"),
    )
    .unwrap();
    std::fs::write(
        plugins.join("max-recipients.toml"),
        "config = { maxRecipients = 1 }\n",
    )
    .unwrap();
}

enum Language {
    TypeScript,
    Python,
}

/// One MCP client process, driven a command at a time.
struct McpClient {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    /// The `hak mcp --listen` server, for the HTTP variant.
    server: Option<Child>,
}

impl McpClient {
    fn start(language: &Language, transport: &[String], server: Option<Child>) -> Self {
        Self::start_with(language, transport, server, &[])
    }

    fn start_with(
        language: &Language,
        transport: &[String],
        server: Option<Child>,
        env: &[(&str, &str)],
    ) -> Self {
        let mut command = match language {
            Language::TypeScript => {
                let dir = root().join("tests/mcp");
                assert!(
                    dir.join("node_modules/@modelcontextprotocol/sdk").is_dir(),
                    "the TypeScript MCP SDK is not installed: run `npm ci` in {}",
                    dir.display()
                );
                let mut c = Command::new("node");
                c.arg(dir.join("client.mjs"));
                c
            }
            Language::Python => {
                assert!(
                    python().is_file(),
                    "the Python MCP client is not installed: run scripts/install-deps.sh"
                );
                let mut c = Command::new(python());
                c.arg(root().join("tests/mcp/client.py"));
                c
            }
        };
        let mut child = command
            .args(transport)
            .env("HAK_TEST_MCP_AGENT_KEY", AGENT_KEY)
            .env("HAK_MCP_BEARER", AGENT_KEY)
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the MCP client starts");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        McpClient {
            child,
            stdin,
            stdout,
            server,
        }
    }

    fn send(&mut self, command: Value) -> Value {
        writeln!(self.stdin, "{command}").unwrap();
        self.stdin.flush().unwrap();
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        assert!(!line.is_empty(), "the MCP client ended early on {command}");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
    }

    fn list(&mut self) -> Value {
        self.send(json!({"op": "list"}))
    }

    fn call(&mut self, name: &str, arguments: Value) -> Value {
        self.send(json!({"op": "call", "name": name, "arguments": arguments}))
    }
}

impl Drop for McpClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(server) = &mut self.server {
            let _ = server.kill();
            let _ = server.wait();
        }
    }
}

/// `hak mcp` reads stdin and writes stdout through the runtime's reactor when they are a pipe
/// (the Python client's) or a socket (the TypeScript client's): the tests above. Anything
/// else falls back to tokio's stdin and stdout: here both are files, every request is
/// answered, and the server ends at the input's end.
#[test]
fn stdio_redirected_to_files_answers_every_request_and_ends_with_the_input() {
    let dir = scratch("files");
    let config = dir.join("rb.toml");
    std::fs::write(&config, RETURN_BYTES_HEADER).unwrap();
    let requests = [
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "files", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "transfer_hbar_tool",
            "arguments": {"transfers": [{"accountId": "0.0.2001", "amount": 1}]}}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    ];
    let input = dir.join("requests.jsonl");
    let text: String = requests.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(&input, text).unwrap();
    let output = dir.join("answers.jsonl");
    let status = Command::new(hak_bin())
        .args(["mcp", "--config"])
        .arg(&config)
        .stdin(std::fs::File::open(&input).unwrap())
        .stdout(std::fs::File::create(&output).unwrap())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "{status}");
    let answers: Vec<Value> = std::fs::read_to_string(&output)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let by_id = |id: u64| {
        answers
            .iter()
            .find(|a| a["id"] == id)
            .unwrap_or_else(|| panic!("no answer to request {id}: {answers:?}"))
    };
    assert_eq!(answers.len(), 3, "{answers:?}");
    assert_eq!(by_id(0)["result"]["protocolVersion"], "2025-06-18");
    let call = &by_id(1)["result"];
    assert_ne!(call["isError"], true, "{call}");
    assert_eq!(
        call["structuredContent"]["raw"]["status"], "SUCCESS",
        "{call}"
    );
    let tools = by_id(2)["result"]["tools"].as_array().unwrap();
    assert!(tools.iter().any(|t| t["name"] == "transfer_hbar_tool"));
}

/// `hak mcp` over stdio: the client starts it.
fn over_stdio(language: Language, dir: &Path) -> McpClient {
    let transport: Vec<String> = [
        "stdio".into(),
        hak_bin().display().to_string(),
        "mcp".into(),
        "--config".into(),
        manifest(dir, false).display().to_string(),
        "--plugins-dir".into(),
        dir.join("plugins").display().to_string(),
    ]
    .into();
    McpClient::start(&language, &transport, None)
}

/// `hak mcp --listen` on `config` with `plugins`, the agent key and `env`: the server, the
/// `/mcp` URL it printed, and the address it listens on.
fn listen(
    config: &Path,
    plugins: &Path,
    env: &[(&str, &str)],
) -> (Child, String, std::net::SocketAddr) {
    let mut server = Command::new(hak_bin())
        .args(["mcp", "--listen", "127.0.0.1:0", "--config"])
        .arg(config)
        .arg("--plugins-dir")
        .arg(plugins)
        .env("HAK_TEST_MCP_AGENT_KEY", AGENT_KEY)
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("hak mcp --listen starts");
    let mut first = String::new();
    BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let url = serde_json::from_str::<Value>(&first).unwrap_or_else(|e| panic!("{e}: {first:?}"))
        ["listen"]
        .as_str()
        .unwrap()
        .to_owned();
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches(MCP_PATH)
        .parse()
        .unwrap();
    (server, url, addr)
}

const MCP_PATH: &str = "/mcp";

/// `hak mcp --listen` with an agent key; the client connects to the URL it prints.
fn over_http(language: Language, dir: &Path) -> (McpClient, String) {
    let (server, url, _) = listen(&manifest(dir, true), &dir.join("plugins"), &[]);
    let client = McpClient::start(&language, &["http".into(), url.clone()], Some(server));
    (client, url)
}

fn text_of(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

/// What every client must see: tools, an allowed call, a blocked one, a hot swap.
fn exercise(client: &mut McpClient, dir: &Path) {
    let listed = client.list();
    let tools = listed["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{listed}"));
    let native = ToolRegistry::native();
    assert_eq!(tools.len(), native.specs().count(), "{listed}");
    let context = AgentContext {
        account_id: Some("0.0.1001".parse().unwrap()),
        mode: AgentMode::Autonomous,
    };
    for tool in tools {
        let name = tool["name"].as_str().unwrap();
        let spec = native.get(name).unwrap().spec();
        assert_eq!(tool["description"], spec.describe(&context), "{name}");
        assert_eq!(tool["inputSchema"], spec.parameters, "{name}");
        assert_eq!(tool["title"], spec.name, "{name}");
    }
    let transfer = tools
        .iter()
        .find(|t| t["name"] == "transfer_hbar_tool")
        .unwrap();
    assert!(transfer["description"]
        .as_str()
        .unwrap()
        .contains("- User Account: 0.0.1001"));

    let allowed = client.call(
        "transfer_hbar_tool",
        json!({"transfers": [{"accountId": "0.0.1002", "amount": 1.5}]}),
    );
    assert_ne!(allowed["isError"], true, "{allowed}");
    let envelope = &allowed["structuredContent"];
    assert_eq!(envelope["raw"]["status"], "SUCCESS", "{allowed}");
    assert!(envelope["humanMessage"]
        .as_str()
        .unwrap()
        .starts_with("HBAR successfully transferred."));
    let text: Value = serde_json::from_str(text_of(&allowed)).unwrap();
    assert_eq!(&text, envelope, "the text is the envelope as JSON");

    let blocked = client.call(
        "transfer_hbar_tool",
        json!({"transfers": [{"accountId": "0.0.1002", "amount": 1}, {"accountId": "0.0.1003", "amount": 1}]}),
    );
    assert_eq!(blocked["isError"], true, "{blocked}");
    let block = &blocked["structuredContent"]["raw"]["policyBlock"];
    assert_eq!(block["plugin"], "max-recipients", "{blocked}");
    let reason = block["reason"].as_str().unwrap();
    assert!(!reason.is_empty());
    assert_eq!(
        text_of(&blocked),
        format!(
            "Failed to execute Transfer HBAR: Action transfer_hbar_tool blocked by policy: Max Recipients Policy (Limits the maximum number of recipients to 1) Reason: {reason}"
        ),
        "the agent reads which policy blocked and why"
    );

    let balance = json!({"accountId": "0.0.1002"});
    let before = client.call("get_hbar_balance_query_tool", balance.clone());
    assert_ne!(before["isError"], true, "{before}");
    assert!(text_of(&before).contains("1001.5"), "{before}");

    // A policy dropped into the watched directory applies to the same session's next calls.
    let plugins = dir.join("plugins");
    std::fs::write(
        plugins.join("gate.toml"),
        "config = { relevantTools = [\"get_hbar_balance_query_tool\"] }\n",
    )
    .unwrap();
    std::fs::copy(plugin("rust/reject-tool"), plugins.join("gate.wasm")).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let after = client.call("get_hbar_balance_query_tool", balance.clone());
        if after["isError"] == true {
            assert!(
                text_of(&after).contains("blocked by policy: Reject Tool Call")
                    && text_of(&after)
                        .ends_with("Reason: tool get_hbar_balance_query_tool is not allowed"),
                "{after}"
            );
            assert_eq!(
                after["structuredContent"]["raw"]["policyBlock"]["plugin"],
                "gate"
            );
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the swapped-in policy never applied: {after}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }

    let unknown = client.call("no_such_tool", json!({}));
    assert!(
        unknown["clientError"].as_str().is_some() || unknown["isError"] == true,
        "{unknown}"
    );
}

/// The TypeScript client over stdio with Approval Above (1 HBAR) in the plugins directory;
/// `elicit`: how it answers elicitations (`None`: it cannot be asked).
fn approval_client(name: &str, elicit: Option<&str>) -> McpClient {
    let dir = scratch(name);
    let plugins = dir.join("plugins");
    std::fs::copy(plugin("rust/approval-above"), plugins.join("approve.wasm")).unwrap();
    std::fs::write(
        plugins.join("approve.toml"),
        "config = { approveAboveHbar = 1, timeoutSeconds = 60 }\n",
    )
    .unwrap();
    let transport: Vec<String> = [
        "stdio".into(),
        hak_bin().display().to_string(),
        "mcp".into(),
        "--config".into(),
        manifest(&dir, false).display().to_string(),
        "--plugins-dir".into(),
        plugins.display().to_string(),
    ]
    .into();
    let env: Vec<(&str, &str)> = elicit.map(|e| ("HAK_MCP_ELICIT", e)).into_iter().collect();
    McpClient::start_with(&Language::TypeScript, &transport, None, &env)
}

#[test]
#[ignore = "needs node and the MCP TypeScript client (npm ci in tests/mcp); scripts/test.sh runs it"]
fn an_approval_is_asked_of_the_human_through_elicitation() {
    let two = json!({"transfers": [{"accountId": "0.0.1002", "amount": 2}]});
    // Approved in the client: the transfer runs on the local network.
    let mut client = approval_client("elicit-approve", Some("approve"));
    let out = client.call("transfer_hbar_tool", two.clone());
    assert_ne!(out["isError"], true, "{out}");
    assert_eq!(
        out["structuredContent"]["raw"]["status"], "SUCCESS",
        "{out}"
    );
    let asked = out["elicitations"][0].as_str().unwrap_or_default();
    assert!(
        asked.contains("Approval Above Policy asks for approval of transfer_hbar_tool")
            && asked.contains("200000000 tinybars to 0.0.1002"),
        "{out}"
    );
    // Below the threshold nobody is asked.
    let out = client.call(
        "transfer_hbar_tool",
        json!({"transfers": [{"accountId": "0.0.1002", "amount": 1}]}),
    );
    assert_eq!(out["elicitations"], json!([]), "{out}");
    drop(client);

    // Denied in the client: blocked, and the agent reads why.
    let mut client = approval_client("elicit-deny", Some("deny"));
    let out = client.call("transfer_hbar_tool", two.clone());
    assert_eq!(out["isError"], true, "{out}");
    let block = &out["structuredContent"]["raw"]["policyBlock"];
    assert_eq!(block["approval"]["decision"], "denied", "{out}");
    assert_eq!(block["approval"]["by"], "mcp client hak-test-ts");
    assert_eq!(block["approval"]["via"], "mcp-elicitation");
    assert!(
        text_of(&out).contains("(denied by mcp client hak-test-ts: the TS client says deny)"),
        "{out}"
    );
    drop(client);

    // A client that cannot be asked: blocked at once, not parked.
    let mut client = approval_client("elicit-none", None);
    let out = client.call("transfer_hbar_tool", two);
    assert_eq!(out["isError"], true, "{out}");
    assert_eq!(
        out["structuredContent"]["raw"]["policyBlock"]["approval"]["decision"], "unavailable",
        "{out}"
    );
}

#[test]
#[ignore = "needs node and the MCP TypeScript client (npm ci in tests/mcp); scripts/test.sh runs it"]
fn typescript_client_over_stdio() {
    let dir = scratch("ts-stdio");
    seed_plugins(&dir);
    let mut client = over_stdio(Language::TypeScript, &dir);
    exercise(&mut client, &dir);
}

#[test]
#[ignore = "needs node and the MCP TypeScript client (npm ci in tests/mcp); scripts/test.sh runs it"]
fn typescript_client_over_streamable_http() {
    let dir = scratch("ts-http");
    seed_plugins(&dir);
    let (mut client, url) = over_http(Language::TypeScript, &dir);
    exercise(&mut client, &dir);
    // Without the agent key the server refuses before MCP reads the request.
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .parse()
        .unwrap();
    let (status, _, body) = http(
        addr,
        "POST",
        "/mcp",
        &[
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
        ],
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
    );
    assert_eq!(status, 401, "{body}");
    let (status, _, _) = http(addr, "GET", "/healthz", &[], "");
    assert_eq!(status, 200);
}

#[test]
#[ignore = "needs the Python MCP client (scripts/install-deps.sh); scripts/test.sh runs it"]
fn python_client_over_stdio() {
    let dir = scratch("py-stdio");
    seed_plugins(&dir);
    let mut client = over_stdio(Language::Python, &dir);
    exercise(&mut client, &dir);
}

#[test]
#[ignore = "needs the Python MCP client (scripts/install-deps.sh); scripts/test.sh runs it"]
fn python_client_over_streamable_http() {
    let dir = scratch("py-http");
    seed_plugins(&dir);
    let (mut client, _) = over_http(Language::Python, &dir);
    exercise(&mut client, &dir);
}

/// `hak mcp` answers a return-bytes call on the async worker that read it (no hand-off to a
/// blocking thread, as `hak serve`): 40 calls at once from four clients, allowed and blocked,
/// each get their own answer (a blocked call names its own recipient count).
#[test]
fn return_bytes_calls_answer_on_the_worker_each_with_its_own_result() {
    use hak_host::mcp::{Identity, McpServer};
    use hak_host::registry::Registry;
    use hak_host::serve::ServeOptions;
    use rmcp::model::CallToolRequestParams;
    use rmcp::ServiceExt;
    use std::sync::Arc;

    let manifest = format!(
        "{RETURN_BYTES_HEADER}\n[[plugins]]\nname = \"max\"\npath = {:?}\nconfig = {{ maxRecipients = 2 }}\n",
        plugin("rust/max-recipients").display().to_string()
    );
    let (host, _) = start(&manifest);
    let context = host.default_context().clone();
    let registry = Arc::new(Registry::new(host, None).unwrap());
    let options = ServeOptions::from_manifest(&registry, None).unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut clients = Vec::new();
        for _ in 0..4 {
            let server = McpServer::new(
                registry.clone(),
                Identity::Local(context.clone()),
                &options,
                false,
            );
            let (client_end, server_end) = tokio::io::duplex(1 << 16);
            tokio::spawn(async move {
                let running = server.serve(tokio::io::split(server_end)).await.unwrap();
                let _ = running.waiting().await;
            });
            clients.push(().serve(tokio::io::split(client_end)).await.unwrap());
        }
        let clients = Arc::new(clients);
        let calls: Vec<_> = (0..40usize)
            .map(|i| {
                let clients = clients.clone();
                tokio::spawn(async move {
                    let recipients = 1 + i % 5;
                    let transfers: Vec<Value> = (0..recipients)
                        .map(|r| json!({"accountId": format!("0.0.{}", 2001 + r), "amount": 1}))
                        .collect();
                    let Value::Object(arguments) = json!({"transfers": transfers}) else {
                        unreachable!()
                    };
                    let params =
                        CallToolRequestParams::new("transfer_hbar_tool").with_arguments(arguments);
                    (recipients, clients[i % 4].call_tool(params).await.unwrap())
                })
            })
            .collect();
        for call in calls {
            let (recipients, out) = call.await.unwrap();
            let raw = &out.structured_content.as_ref().unwrap()["raw"];
            if recipients <= 2 {
                assert_eq!(out.is_error, Some(false), "{out:?}");
                assert_eq!(raw["status"], "SUCCESS", "{out:?}");
            } else {
                assert_eq!(out.is_error, Some(true), "{out:?}");
                assert_eq!(
                    raw["policyBlock"]["details"]["recipientCount"], recipients,
                    "{out:?}"
                );
            }
        }
        for client in Arc::try_unwrap(clients).ok().unwrap() {
            client.cancel().await.ok();
        }
    });
}

/// `hak mcp --listen` serves `hak serve`'s admin routes and console beside `/mcp`: a call from
/// an MCP client that cannot be asked parks for the operator instead of blocking, shows in the
/// console in a real browser, and goes on once approved there. The agent's key reads none of
/// it.
#[test]
#[ignore = "needs node, chromium and `npm ci` in tests/mcp and tests/console; scripts/test.sh runs it"]
fn a_call_over_mcp_listen_is_approved_in_its_console_in_a_real_browser() {
    let dir = scratch("console");
    let plugins = dir.join("plugins");
    std::fs::copy(plugin("rust/approval-above"), plugins.join("approve.wasm")).unwrap();
    std::fs::write(
        plugins.join("approve.toml"),
        "config = { approveAboveHbar = 1, timeoutSeconds = 120 }\n",
    )
    .unwrap();
    let (server, url, addr) = listen(
        &manifest(&dir, true),
        &plugins,
        &[("HAK_ADMIN_TOKEN", crate::console::TOKEN)],
    );

    // The console's routes are the admin token's: an agent's key is refused.
    let agent = format!("Bearer {AGENT_KEY}");
    for path in ["/v1/approvals", "/v1/plugins", "/v1/decisions", "/metrics"] {
        let (status, _, body) = http(addr, "GET", path, &[("authorization", &agent)], "");
        assert_eq!(status, 401, "{path} with the agent's key: {body}");
    }
    let (status, _, _) = http_text(addr, "GET", "/console", &[], "");
    assert_eq!(status, 200);

    let mut client = McpClient::start(&Language::TypeScript, &["http".into(), url], Some(server));
    let call = std::thread::spawn(move || {
        let out = client.call(
            "transfer_hbar_tool",
            json!({"transfers": [{"accountId": "0.0.1002", "amount": 2}], "transactionMemo": "over mcp"}),
        );
        (out, client)
    });
    let report = crate::console::drive(
        addr,
        "approve",
        "seen in the console",
        &root().join("target/test-tmp/console-mcp-approvals.png"),
    );
    let card = report["card"].as_str().unwrap();
    for shown in [
        "transfer_hbar_tool",
        "2 ℏ to 0.0.1002",
        "Memo: over mcp",
        "mcp-agent",
    ] {
        assert!(card.contains(shown), "{shown:?} not in the card: {card}");
    }
    let (out, _client) = call.join().unwrap();
    assert_ne!(out["isError"], true, "{out}");
    assert_eq!(
        out["structuredContent"]["raw"]["status"], "SUCCESS",
        "approved in the console, so run on the local network: {out}"
    );
}

/// With `[approvals] quorum = 2`, the human behind an MCP client asked by elicitation counts
/// as one approver: their approval leaves the call parked (listed as approved by the client),
/// and the operator's approval through the admin routes of `hak mcp --listen` makes two.
#[test]
#[ignore = "needs node and the MCP TypeScript client (npm ci in tests/mcp); scripts/test.sh runs it"]
fn an_mcp_clients_approval_counts_as_one_of_a_quorum() {
    let dir = scratch("quorum");
    let plugins = dir.join("plugins");
    std::fs::copy(plugin("rust/approval-above"), plugins.join("approve.wasm")).unwrap();
    std::fs::write(
        plugins.join("approve.toml"),
        "config = { approveAboveHbar = 1, timeoutSeconds = 120 }\n",
    )
    .unwrap();
    let config = manifest(&dir, true);
    let mut text = std::fs::read_to_string(&config).unwrap();
    text += "\n[approvals]\nquorum = 2\n";
    std::fs::write(&config, text).unwrap();
    let (server, url, addr) = listen(
        &config,
        &plugins,
        &[("HAK_ADMIN_TOKEN", crate::console::TOKEN)],
    );
    let admin = format!("Bearer {}", crate::console::TOKEN);
    let mut client = McpClient::start_with(
        &Language::TypeScript,
        &["http".into(), url],
        Some(server),
        &[("HAK_MCP_ELICIT", "approve")],
    );
    let call = std::thread::spawn(move || {
        let out = client.call(
            "transfer_hbar_tool",
            json!({"transfers": [{"accountId": "0.0.1002", "amount": 2}]}),
        );
        (out, client)
    });
    // The client's human approved: one of two, still parked.
    let deadline = Instant::now() + Duration::from_secs(30);
    let id = loop {
        let listed = http(
            addr,
            "GET",
            "/v1/approvals",
            &[("authorization", &admin)],
            "",
        )
        .2;
        let waiting = &listed["approvals"][0];
        if waiting["approvedBy"] == json!(["mcp client hak-test-ts"]) {
            assert_eq!(waiting["quorum"], 2, "{listed}");
            break waiting["id"].as_str().unwrap().to_owned();
        }
        assert!(
            Instant::now() < deadline,
            "no elicited approval counted: {listed}"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let (status, _, decided) = http(
        addr,
        "POST",
        &format!("/v1/approvals/{id}/approve"),
        &[("authorization", &admin)],
        "",
    );
    assert_eq!(status, 200, "{decided}");
    assert_eq!(decided["decision"], "approved", "{decided}");
    let (out, _client) = call.join().unwrap();
    assert_eq!(
        out["structuredContent"]["raw"]["status"], "SUCCESS",
        "two approvals: the transfer ran on the local network: {out}"
    );
}
