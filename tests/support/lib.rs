//! Shared test support: where built plugins are, a log sink that records, and hosts built from
//! inline manifests. Plugins must be built first (`scripts/build-plugins.sh`).

use hak_host::runtime::{LogRecord, LogSink};
use hak_host::{Host, HostBuilder};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_owned()
}

/// A built plugin: `rust/<name>` for examples, `fixtures/<name>` for test fixtures.
/// `tests/conformance`, where the real JS kit is installed (`npm ci` there).
pub fn kit_dir() -> PathBuf {
    let dir = root().join("tests/conformance");
    assert!(
        dir.join("node_modules/@hashgraph/hedera-agent-kit")
            .is_dir(),
        "the JS kit is not installed: run `npm ci` in {}",
        dir.display()
    );
    dir
}

pub fn plugin(rel: &str) -> PathBuf {
    let path = root().join("target/plugins").join(format!("{rel}.wasm"));
    assert!(
        path.exists(),
        "{} is missing: run scripts/build-plugins.sh first",
        path.display()
    );
    path
}

/// Records every plugin log line as `(plugin, message)`.
#[derive(Default)]
pub struct Logs(Mutex<Vec<(String, String)>>);

impl LogSink for Logs {
    fn log(&self, r: &LogRecord<'_>) {
        self.0
            .lock()
            .unwrap()
            .push((r.plugin.to_owned(), r.message.to_owned()));
    }
}

impl Logs {
    /// Messages logged so far (and forget them).
    pub fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap())
            .into_iter()
            .map(|(_, m)| m)
            .collect()
    }

    pub fn take_with_plugin(&self) -> Vec<(String, String)> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

/// The precompiled cache shared by all tests of a run (compiling once keeps tests fast).
pub fn cache_dir() -> PathBuf {
    root().join("target/test-cache")
}

/// A manifest header: the local network inside the host, autonomous for its operator 0.0.1001.
pub const LOCAL: &str = "[network]\nname = \"local\"\n\n[context]\naccount_id = \"0.0.1001\"\n";

/// A manifest header for a second host on `base`'s local network (same node, same mirror),
/// autonomous for 0.0.1001.
pub fn same_network(base: &Host) -> String {
    let emu = base
        .local_network()
        .expect("the local network runs inside the base host");
    format!(
        "[network]\nname = \"local\"\ngrpc = \"{}\"\nmirror_url = \"{}\"\n\n[context]\naccount_id = \"0.0.1001\"\n",
        emu.grpc_addr,
        emu.mirror_url()
    )
}

/// The `raw` of a successful result (fails the test otherwise).
pub fn ok(out: &serde_json::Value) -> &serde_json::Value {
    assert_eq!(out["raw"]["status"], "SUCCESS", "{out}");
    &out["raw"]
}

/// A fungible token on `host`'s local network whose admin key (and, with `supply_key`, supply
/// key) is the operator's, created with the SDK directly: no kit tool sets an admin key.
pub fn token_with_admin_key(host: &Host, decimals: u32, supply_key: bool) -> String {
    with_operator_client(host, |client, operator, key| async move {
        let mut tx = hedera::TokenCreateTransaction::new();
        tx.name("Held")
            .symbol("HLD")
            .decimals(decimals)
            .treasury_account_id(operator)
            .admin_key(key.public_key());
        if supply_key {
            tx.supply_key(key.public_key());
        }
        let receipt = tx
            .execute(&client)
            .await
            .unwrap()
            .get_receipt(&client)
            .await
            .unwrap();
        receipt.token_id.unwrap().to_string()
    })
}

/// Run `work` with an SDK client for the host's local network, paid and signed by its
/// operator, on a runtime of its own (for what no hak tool does).
fn with_operator_client<F, Fut, T>(host: &Host, work: F) -> T
where
    F: FnOnce(hedera::Client, hedera::AccountId, hedera::PrivateKey) -> Fut,
    Fut: std::future::Future<Output = T>,
{
    let (operator, key) = host
        .local_network()
        .expect("the local network runs inside the host")
        .operator();
    with_client_as(host, operator, key, work)
}

/// Run `work` with an SDK client for the host's local network paid and signed by `account`
/// with `key` (a genesis account's dev key, say), on a runtime of its own.
pub fn with_client_as<F, Fut, T>(
    host: &Host,
    operator: hedera::AccountId,
    key: hedera::PrivateKey,
    work: F,
) -> T
where
    F: FnOnce(hedera::Client, hedera::AccountId, hedera::PrivateKey) -> Fut,
    Fut: std::future::Future<Output = T>,
{
    let emu = host
        .local_network()
        .expect("the local network runs inside the host");
    let nodes = std::collections::HashMap::from([(
        emu.grpc_addr.to_string(),
        hedera::AccountId::new(0, 0, 3),
    )]);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async move {
        let client = hedera::Client::for_network(nodes).unwrap();
        client.set_operator(operator, key.clone());
        work(client, operator, key).await
    })
}

/// A contract created on the host's local network with the Rust SDK (the kit has no tool that
/// creates one): the operator's admin key and auto-renew account, a memo, inline initcode.
pub fn contract_with_admin_key(host: &Host, memo: &str) -> String {
    let memo = memo.to_owned();
    with_operator_client(host, |client, operator, key| async move {
        let receipt = hedera::ContractCreateTransaction::new()
            .bytecode(vec![0x60, 0x80, 0x60, 0x40, 0x52])
            .gas(100_000)
            .admin_key(key.public_key())
            .auto_renew_account_id(operator)
            .contract_memo(memo)
            .execute(&client)
            .await
            .unwrap()
            .get_receipt(&client)
            .await
            .unwrap();
        receipt.contract_id.unwrap().to_string()
    })
}

/// A manifest header: testnet address book, one fixed node, return-bytes for 0.0.1001.
pub const RETURN_BYTES_HEADER: &str = r#"
[network]
name = "testnet"
node_account_ids = ["0.0.3"]

[context]
account_id = "0.0.1001"
mode = "returnBytes"
"#;

/// One `[[plugins]]` entry. `extra` is TOML appended inside the entry (config, limits, …).
pub fn plugin_entry(name: &str, rel: &str, extra: &str) -> String {
    format!(
        "\n[[plugins]]\nname = {name:?}\npath = {:?}\n{extra}\n",
        plugin(rel).display().to_string()
    )
}

/// Build a host from manifest text, with a recording log sink.
pub fn start(manifest: &str) -> (Host, Arc<Logs>) {
    try_start(manifest).unwrap_or_else(|e| panic!("host failed to build: {e}"))
}

pub fn try_start(manifest: &str) -> Result<(Host, Arc<Logs>), hak_host::host::HostError> {
    let logs = Arc::new(Logs::default());
    let manifest = hak_host::manifest::Manifest::parse(manifest, "test manifest", root())
        .unwrap_or_else(|e| panic!("bad test manifest: {e}"));
    let host = HostBuilder::new(manifest)
        .log_sink(logs.clone())
        .cache_dir(Some(cache_dir()))
        .build()?;
    Ok((host, logs))
}

/// A transfer of `n` recipients of 1 HBAR each.
pub fn transfer(n: usize) -> String {
    let transfers: Vec<String> = (0..n)
        .map(|i| format!(r#"{{"accountId":"0.0.{}","amount":1}}"#, 2000 + i))
        .collect();
    format!(r#"{{"transfers":[{}]}}"#, transfers.join(","))
}

/// The transaction in a return-bytes result (`raw.bytes`, 0x-hex), decoded by the SDK.
pub fn decode_bytes(out: &serde_json::Value) -> hedera::AnyTransaction {
    let hex_text = out["raw"]["bytes"]
        .as_str()
        .unwrap_or_else(|| panic!("no raw.bytes in {out}"));
    let bytes = hex::decode(hex_text.strip_prefix("0x").expect("bytes are 0x-hex")).unwrap();
    hedera::AnyTransaction::from_bytes(&bytes).unwrap()
}

/// A small deterministic generator (xorshift64*) for generated-input tests: a failure names
/// its seed, and the same seed replays the same cases.
pub struct Rng(pub u64);

/// A generator seed: `$var` when set (to replay a run), else the clock. Printed as `var=seed`
/// so a failing run can be replayed.
pub fn seed_from_env(var: &str) -> u64 {
    let seed = std::env::var(var)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
                | 1
        });
    println!("{var}={seed}");
    seed
}

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[(self.next_u64() % items.len() as u64) as usize]
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

pub mod redis_ha;
pub use redis_ha::{RedisCluster, RedisSentinelSet};

/// A real `redis-server` on a free loopback port, for as long as the value lives: with its
/// append-only file on (in a temporary directory), as hak requires, or volatile. Panics with
/// the install hint when the server is missing.
pub struct RedisServer {
    child: std::process::Child,
    pub url: String,
    dir: PathBuf,
}

impl RedisServer {
    /// A server that persists (`appendonly yes`).
    pub fn start() -> Self {
        Self::start_with(&["--appendonly", "yes"])
    }

    /// A server that keeps nothing across a restart (`--save '' --appendonly no`).
    pub fn start_volatile() -> Self {
        Self::start_with(&["--save", "", "--appendonly", "no"])
    }

    fn start_with(persistence: &[&str]) -> Self {
        // A port found free may be taken again before redis-server binds it (by another test's
        // server, or as a cluster node's bus port); the server then exits and whatever else
        // listens there would answer the test. So the server is ours only once the process
        // answering on the port gives our child's pid; otherwise another port is tried.
        for _ in 0..5 {
            let port = free_port();
            let dir = root().join(format!("target/test-tmp/redis-{port}"));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            let mut child = std::process::Command::new("redis-server")
                .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
                .args(["--save", ""])
                .args(persistence)
                .arg("--dir")
                .arg(&dir)
                .stdout(std::process::Stdio::null())
                .spawn()
                .expect(
                    "redis-server runs (scripts/install-deps.sh installs Debian's redis-server)",
                );
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
            loop {
                if redis_pid_at(port) == Some(child.id()) {
                    return RedisServer {
                        child,
                        url: format!("redis://127.0.0.1:{port}/0"),
                        dir,
                    };
                }
                let exited = child.try_wait().ok().flatten().is_some();
                if exited || std::time::Instant::now() >= deadline {
                    let _ = child.kill();
                    let _ = child.wait();
                    let _ = std::fs::remove_dir_all(&dir);
                    assert!(exited, "redis-server did not start within 10 s");
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        }
        panic!("redis-server found no free port in five tries");
    }

    /// Freeze (`SIGSTOP`) or thaw (`SIGCONT`) the server: it keeps its port and answers nothing.
    pub fn signal(&self, signal: &str) {
        let status = std::process::Command::new("kill")
            .args([format!("-{signal}"), self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success(), "kill -{signal}");
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A loopback port free when asked (the kernel's pick for port 0). Another process may take
/// it before the caller binds it: a server started on it must check that it is the one that
/// answers (see [`RedisServer`]).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// The pid of the Redis server answering on loopback `port` (`INFO server`'s `process_id`),
/// or `None` when nothing answers as a Redis server within a second.
pub fn redis_pid_at(port: u16) -> Option<u32> {
    use std::io::{Read, Write};
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let second = std::time::Duration::from_secs(1);
    let mut stream = std::net::TcpStream::connect_timeout(&addr, second).ok()?;
    stream.set_read_timeout(Some(second)).ok()?;
    stream.write_all(b"INFO server\r\n").ok()?;
    let mut reply = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let text = String::from_utf8_lossy(&reply);
        if let Some(at) = text.find("\r\nprocess_id:") {
            let rest = &text[at + "\r\nprocess_id:".len()..];
            if let Some(end) = rest.find("\r\n") {
                return rest[..end].trim().parse().ok();
            }
        }
        if reply.len() > 64 * 1024 {
            return None;
        }
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return None,
            Ok(n) => reply.extend_from_slice(&chunk[..n]),
        }
    }
}

/// One HTTP/1.1 request to a server on loopback: (status, head, body as JSON or null).
pub fn http(
    addr: std::net::SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String, serde_json::Value) {
    let (status, head, body) = http_text(addr, method, path, headers, body);
    (
        status,
        head,
        serde_json::from_str(&body).unwrap_or(serde_json::Value::Null),
    )
}

/// [`http`], with the body as text.
pub fn http_text(
    addr: std::net::SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String, String) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        request += &format!("{k}: {v}\r\n");
    }
    request += "\r\n";
    request += body;
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    let status = head[9..12].parse().unwrap();
    (status, head.to_owned(), body.to_owned())
}

/// A `hak serve` on a free loopback port (admin token `s3cret`). Dropped, it stops its
/// runtime before the host goes (a host must not be dropped on a runtime thread).
pub struct Server {
    pub addr: std::net::SocketAddr,
    pub registry: Arc<hak_host::registry::Registry>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_timeout(std::time::Duration::from_secs(5));
        }
    }
}

/// Serve `manifest` (see [`Server`]).
pub fn serve(manifest: &str) -> (std::net::SocketAddr, Server) {
    let server = serve_dir(manifest, None);
    (server.addr, server)
}

/// Serve `manifest` with the plugins of `plugins_dir` (synced once; re-sync through the
/// registry or `POST /v1/reload`).
pub fn serve_dir(manifest: &str, plugins_dir: Option<PathBuf>) -> Server {
    serve_with(manifest, plugins_dir, Some("s3cret"), false)
}

/// Serve `manifest` with `admin_token` (none: the admin routes are open without `[[agents]]`,
/// off with them unless `admin_without_token`).
pub fn serve_with(
    manifest: &str,
    plugins_dir: Option<PathBuf>,
    admin_token: Option<&str>,
    admin_without_token: bool,
) -> Server {
    use hak_host::registry::Registry;
    let (host, _) = start(manifest);
    let registry = Arc::new(Registry::new(host, plugins_dir).unwrap());
    registry.sync_dir();
    let mut options = hak_host::serve::ServeOptions::from_manifest(&registry, admin_token).unwrap();
    if admin_without_token {
        options.callers = options.callers.admin_without_token();
    }
    spawn_serve(registry, options, std::future::pending()).0
}

/// `hak_host::serve::serve` of `registry` on a free loopback port until `shutdown`; what
/// `serve` returned, once it has.
fn spawn_serve(
    registry: Arc<hak_host::registry::Registry>,
    options: hak_host::serve::ServeOptions,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> (
    Server,
    tokio::sync::oneshot::Receiver<std::io::Result<bool>>,
) {
    let (runtime, listener) = on_loopback();
    let addr = listener.local_addr().unwrap();
    let (done, served) = tokio::sync::oneshot::channel();
    let server = hak_host::serve::serve(listener, registry.clone(), options, shutdown);
    runtime.spawn(async move {
        let _ = done.send(server.await);
    });
    let server = Server {
        addr,
        registry,
        runtime: Some(runtime),
    };
    (server, served)
}

/// A server that can be stopped the way `hak serve` stops on a signal (see [`serve_stoppable`]).
pub struct Stoppable {
    stop: tokio::sync::oneshot::Sender<()>,
    served: tokio::sync::oneshot::Receiver<std::io::Result<bool>>,
}

impl Stoppable {
    /// Stop the server and wait for `serve` to return: whether every call finished in the drain.
    pub fn stop(self) -> bool {
        let _ = self.stop.send(());
        self.served
            .blocking_recv()
            .expect("the server's task ended without an answer")
            .expect("serve failed")
    }
}

/// Serve `manifest` (admin token `s3cret`) until [`Stoppable::stop`].
pub fn serve_stoppable(manifest: &str) -> (Server, Stoppable) {
    let (host, _) = start(manifest);
    let registry = Arc::new(hak_host::registry::Registry::new(host, None).unwrap());
    let options = hak_host::serve::ServeOptions::from_manifest(&registry, Some("s3cret")).unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let (server, served) = spawn_serve(registry, options, async move {
        let _ = stopped.await;
    });
    (server, Stoppable { stop, served })
}

/// A server's runtime (two workers, as `hak serve` and `hak mcp` run) and a listener on a
/// free loopback port.
fn on_loopback() -> (tokio::runtime::Runtime, tokio::net::TcpListener) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    (runtime, listener)
}

/// `hak mcp --listen` over `manifest` on a free loopback port, in this process, as the CLI
/// serves it (`hak_host::serve::http`); without `[[agents]]` anyone on loopback may call.
pub fn serve_mcp(manifest: &str) -> Server {
    let (host, _) = start(manifest);
    let registry = Arc::new(hak_host::registry::Registry::new(host, None).unwrap());
    let options = hak_host::serve::ServeOptions::from_manifest(&registry, None).unwrap();
    let callers = options
        .callers
        .clone()
        .with_default_context(registry.host().default_context().clone());
    let identity = hak_host::mcp::Identity::Agents(callers.clone());
    let mcp = hak_host::mcp::McpServer::new(registry.clone(), identity, &options, true);
    let admin = hak_host::serve::Admin::new(registry.clone(), callers, mcp.pool());
    let app = hak_host::mcp::router(mcp, admin, options.guard.clone(), Default::default());
    let (runtime, listener) = on_loopback();
    let addr = listener.local_addr().unwrap();
    runtime.spawn(hak_host::serve::http(listener, app, std::future::pending()));
    Server {
        addr,
        registry,
        runtime: Some(runtime),
    }
}

/// A policy's verdict on a stage input of `method` at post-params-normalization, run
/// directly on `instance` with the facts the host would state from the input's
/// `normalisedParams` (none when the tool refuses them).
pub fn judge_normalised(
    instance: &mut hak_host::runtime::PluginInstance,
    method: &str,
    params: &str,
) -> Result<Result<hak_host::plugin::Verdict, String>, hak_host::plugin::PluginFailure> {
    let normalised = serde_json::from_str::<serde_json::Value>(params)
        .ok()
        .and_then(|v| v.get("normalisedParams").map(|n| n.to_string()));
    static TOOLS: std::sync::OnceLock<hak_host::tools::ToolRegistry> = std::sync::OnceLock::new();
    let tools = TOOLS.get_or_init(hak_host::tools::ToolRegistry::native);
    let facts = normalised.and_then(|n| tools.facts_from_json(method, &n));
    instance.policy(&hak_host::plugin::StageCall {
        stage: hak_host::model::stage::Stage::PostParamsNormalization,
        method,
        tool_type: hak_host::tools::ToolType::Transaction,
        input: params,
        facts: facts.as_ref(),
        budget: None,
    })
}

/// A real OCI registry (Debian's `docker-registry`, Distribution 2.8) on a free loopback port,
/// its storage in a temporary directory, for as long as the value lives. [`OciRegistry::stop`]
/// kills it (the port goes dead); [`OciRegistry::restart`] brings it back on the same port and
/// storage.
pub struct OciRegistry {
    child: Option<std::process::Child>,
    pub port: u16,
    pub dir: PathBuf,
}

impl OciRegistry {
    pub fn start() -> Self {
        Self::start_with_auth(None)
    }

    /// A registry that takes only `user` with `password` (HTTP basic, an htpasswd file with a
    /// bcrypt hash, as Distribution requires).
    pub fn start_with_auth(credentials: Option<(&str, &str)>) -> Self {
        let port = free_port();
        let dir = root().join(format!("target/test-tmp/oci-registry-{port}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("data")).unwrap();
        let mut config = format!(
            "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\nhttp:\n  addr: 127.0.0.1:{port}\n",
            dir.join("data").display()
        );
        if let Some((user, password)) = credentials {
            let hash = bcrypt::hash(password, 4).unwrap();
            std::fs::write(dir.join("htpasswd"), format!("{user}:{hash}\n")).unwrap();
            config += &format!(
                "auth:\n  htpasswd:\n    realm: hak-test\n    path: {}\n",
                dir.join("htpasswd").display()
            );
        }
        std::fs::write(dir.join("config.yml"), config).unwrap();
        let mut registry = OciRegistry {
            child: None,
            port,
            dir,
        };
        registry.restart();
        registry
    }

    /// `oci://127.0.0.1:<port>/<path>`.
    pub fn reference(&self, path: &str) -> String {
        format!("oci://127.0.0.1:{}/{path}", self.port)
    }

    /// Kill the registry (SIGKILL): nothing answers on its port until [`Self::restart`].
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    pub fn restart(&mut self) {
        self.stop();
        let child = std::process::Command::new("docker-registry")
            .arg("serve")
            .arg(self.dir.join("config.yml"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect(
                "docker-registry runs (scripts/install-deps.sh installs Debian's docker-registry)",
            );
        self.child = Some(child);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            if let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", self.port)) {
                use std::io::{Read, Write};
                let _ = s.write_all(b"GET /v2/ HTTP/1.0\r\n\r\n");
                let mut answer = String::new();
                let _ = s.read_to_string(&mut answer);
                // 200, or 401 from a registry that wants credentials: it is up.
                if answer.starts_with("HTTP/1.")
                    && (answer.contains(" 200 ") || answer.contains(" 401 "))
                {
                    return;
                }
            }
            assert!(
                std::time::Instant::now() < deadline,
                "docker-registry did not start"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// The file holding blob `digest` (`sha256:<hex>`) in the registry's storage.
    pub fn blob_path(&self, digest: &str) -> PathBuf {
        let hex = digest.trim_start_matches("sha256:");
        self.dir
            .join("data/docker/registry/v2/blobs/sha256")
            .join(&hex[..2])
            .join(hex)
            .join("data")
    }
}

impl Drop for OciRegistry {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `hak serve` (the real binary, `HAK_BIN` or target/debug/hak) on `manifest`, its log in
/// `log`; killed with SIGKILL when dropped.
pub struct ServeProcess {
    child: std::process::Child,
    pub addr: std::net::SocketAddr,
}

impl ServeProcess {
    pub fn start(manifest: &std::path::Path, log: &std::path::Path) -> Self {
        use std::io::BufRead;
        let bin = std::env::var_os("HAK_BIN")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| root().join("target/debug/hak"));
        let mut child = std::process::Command::new(bin)
            .args(["serve", "--listen", "127.0.0.1:0", "--config"])
            .arg(manifest)
            .env("HAK_LOG", "info")
            .stdout(std::process::Stdio::piped())
            .stderr(std::fs::File::create(log).unwrap())
            .spawn()
            .expect("hak serve starts");
        let mut first = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        let listen: serde_json::Value = serde_json::from_str(&first).unwrap_or_else(|e| {
            panic!(
                "{e}: {first:?}; log: {}",
                std::fs::read_to_string(log).unwrap_or_default()
            )
        });
        let addr = listen["listen"]
            .as_str()
            .unwrap()
            .trim_start_matches("http://")
            .parse()
            .unwrap();
        ServeProcess { child, addr }
    }

    /// Send a tool call and do not wait for its answer.
    pub fn send(&self, tool: &str, body: &str) -> std::net::TcpStream {
        use std::io::Write;
        let mut stream = std::net::TcpStream::connect(self.addr).unwrap();
        let request = format!(
            "POST /v1/tools/{tool} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
            self.addr,
            body.len()
        );
        stream.write_all(request.as_bytes()).unwrap();
        stream
    }

    pub fn call(&self, tool: &str, body: &str) -> serde_json::Value {
        http(self.addr, "POST", &format!("/v1/tools/{tool}"), &[], body).2
    }

    pub fn kill(mut self) {
        let _ = self.child.kill(); // SIGKILL
        let _ = self.child.wait();
    }
}

impl Drop for ServeProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
