//! `hak serve` you can expose: callers are agents with keys bound to their contexts, requests a
//! browser could forge are refused, and contexts are bounded (idle ones are evicted, so new
//! ones never lock out, and idle instances cannot hold memory without bound).

use hak_host::serve::pool::SessionPool;
use hak_host::{AgentContext, AgentMode};
use hak_tests::*;
use serde_json::Value;
use std::io::{Read, Write};
use std::time::Duration;

const TRANSFER: &str = r#"{"transfers":[{"accountId":"0.0.2001","amount":1}]}"#;

/// One raw HTTP/1.1 request: (status, body).
fn request(addr: std::net::SocketAddr, head: &str, body: &str) -> (u16, Value) {
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    let text = format!(
        "{head}\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(text.as_bytes()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    (
        head[9..12].parse().unwrap(),
        serde_json::from_str(body).unwrap_or(Value::Null),
    )
}

fn post(addr: std::net::SocketAddr, tool: &str, headers: &str, body: &str) -> (u16, Value) {
    let mut head = format!("POST /v1/tools/{tool} HTTP/1.1\r\nHost: {addr}");
    if !headers.is_empty() {
        head += "\r\n";
        head += headers;
    }
    request(addr, &head, body)
}

const AGENTS: &str = r#"
[[agents]]
name = "payer"
key_env = "HAK_TEST_AGENT_PAYER"
tools = ["transfer_hbar_tool"]

[[agents]]
name = "other"
key_sha256 = "SHA"
account_id = "0.0.1002"
"#;

fn agents_manifest() -> String {
    std::env::set_var("HAK_TEST_AGENT_PAYER", "payer-key-0123456789abcdef");
    let other_digest = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(
        b"other-key-0123456789abcdef",
    ));
    format!(
        "{RETURN_BYTES_HEADER}{}",
        AGENTS.replace("SHA", &other_digest)
    )
}

#[test]
fn agents_need_their_key_and_get_the_context_it_is_bound_to() {
    let (addr, _rt) = serve(&agents_manifest());
    let payer = "Authorization: Bearer payer-key-0123456789abcdef";
    let other = "Authorization: Bearer other-key-0123456789abcdef";

    let (status, body) = post(addr, "transfer_hbar_tool", "", TRANSFER);
    assert_eq!(status, 401, "{body}");
    let (status, _) = post(
        addr,
        "transfer_hbar_tool",
        "Authorization: Bearer guess-guess-guess",
        TRANSFER,
    );
    assert_eq!(status, 401);

    let (status, out) = post(addr, "transfer_hbar_tool", payer, TRANSFER);
    assert_eq!(
        (status, &out["raw"]["payerAccountId"]),
        (200, &"0.0.1001".into()),
        "{out}"
    );
    let (status, body) = post(addr, "get_hbar_balance_query_tool", payer, "{}");
    assert_eq!(status, 403, "not in its tools: {body}");

    // The context comes from the key; a header cannot move it.
    let (status, out) = post(addr, "transfer_hbar_tool", other, TRANSFER);
    assert_eq!(
        (status, &out["raw"]["payerAccountId"]),
        (200, &"0.0.1002".into()),
        "{out}"
    );
    let (status, body) = post(
        addr,
        "transfer_hbar_tool",
        &format!("{other}\r\nx-hak-account-id: 0.0.1003"),
        TRANSFER,
    );
    assert_eq!(status, 403, "{body}");
}

#[test]
fn calls_whose_guests_print_read_stdin_and_sleep_are_served_on_the_server_threads() {
    // Return-bytes calls run on the worker that read the request; a guest's blocking WASI
    // calls (stdout, stdin, a clock wait) must work there, concurrently, and leave the
    // server answering.
    let manifest = format!(
        "{RETURN_BYTES_HEADER}{}",
        plugin_entry(
            "nap",
            "fixtures/hostile",
            // Eight callers on two workers with a clock wait each: the deadline is not what
            // this is about (a loaded machine passed the default 100 ms now and then).
            "[plugins.limits]\ndeadline_ms = 5000\n[plugins.config]\nmode = \"nap\""
        )
    );
    let (addr, _rt) = serve(&manifest);
    let callers: Vec<_> = (0..8)
        .map(|_| {
            std::thread::spawn(move || {
                (0..5)
                    .map(|_| post(addr, "transfer_hbar_tool", "", TRANSFER))
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    for caller in callers {
        for (status, body) in caller.join().unwrap() {
            assert_eq!(status, 200, "{body}");
            assert_eq!(body["raw"]["status"], "SUCCESS", "{body}");
        }
    }
    let (status, body) = request(addr, &format!("GET /healthz HTTP/1.1\r\nHost: {addr}"), "");
    assert_eq!(status, 200, "{body}");
}

#[test]
fn health_and_readiness_answer_without_a_key() {
    // The agents manifest needs keys for tool calls; probes need none.
    let (addr, _rt) = serve(&agents_manifest());
    let (status, body) = request(addr, &format!("GET /healthz HTTP/1.1\r\nHost: {addr}"), "");
    assert_eq!(
        (status, &body["status"]),
        (200, &Value::from("ok")),
        "{body}"
    );
    let (status, body) = request(addr, &format!("GET /readyz HTTP/1.1\r\nHost: {addr}"), "");
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["ready"], true);
    assert!(body["chainVersion"].as_u64().is_some(), "{body}");
    let (status, _) = post(addr, "transfer_hbar_tool", "", &transfer(1));
    assert_eq!(status, 401, "tool calls still need an agent key");
}

#[test]
fn forged_browser_requests_are_refused_before_any_tool_runs() {
    let (addr, _rt) = serve(RETURN_BYTES_HEADER);
    let (status, out) = post(addr, "transfer_hbar_tool", "", TRANSFER);
    assert_eq!((status, &out["raw"]["status"]), (200, &"SUCCESS".into()));
    let (status, body) = post(
        addr,
        "transfer_hbar_tool",
        "Origin: http://evil.example\r\nContent-Type: text/plain",
        TRANSFER,
    );
    assert_eq!(status, 403, "{body}");
    assert!(body["error"].as_str().unwrap().contains("origin"), "{body}");
    // DNS rebinding: a hostile name pointed at the server.
    let (status, body) = request(
        addr,
        "POST /v1/tools/transfer_hbar_tool HTTP/1.1\r\nHost: evil.example:8787",
        TRANSFER,
    );
    assert_eq!(status, 403, "{body}");
    let (status, _) = request(
        addr,
        &format!("POST /v1/plugins/x/rollback HTTP/1.1\r\nHost: {addr}\r\nOrigin: http://evil.example\r\nAuthorization: Bearer s3cret"),
        "",
    );
    assert_eq!(status, 403);
    // The server's own origin (the console's requests) passes; another port of the same
    // address does not, nor a rebinding name with its own origin.
    let (status, out) = post(
        addr,
        "transfer_hbar_tool",
        &format!("Origin: http://{addr}"),
        TRANSFER,
    );
    assert_eq!(status, 200, "{out}");
    let (status, _) = post(
        addr,
        "transfer_hbar_tool",
        &format!("Origin: http://{}:1", addr.ip()),
        TRANSFER,
    );
    assert_eq!(status, 403);
    let (status, _) = request(
        addr,
        "POST /v1/tools/transfer_hbar_tool HTTP/1.1\r\nHost: evil.example:8787\r\nOrigin: http://evil.example:8787",
        TRANSFER,
    );
    assert_eq!(status, 403);
}

fn bytes_context(account: u64) -> AgentContext {
    AgentContext {
        account_id: Some(hedera::AccountId::new(0, 0, account)),
        mode: AgentMode::ReturnBytes,
    }
}

fn policies(n: usize, extra: &str) -> String {
    (0..n)
        .map(|i| {
            plugin_entry(
                &format!("max-{i}"),
                "rust/max-recipients",
                &format!("{extra}\n[plugins.config]\nmaxRecipients = 5"),
            )
        })
        .collect()
}

#[test]
fn twenty_thousand_contexts_are_served_and_idle_ones_evicted() {
    for (plugins, contexts) in [(1, 20_000u64), (5, 2_500)] {
        let (host, _) = start(&format!("{RETURN_BYTES_HEADER}{}", policies(plugins, "")));
        let pool = SessionPool::new(host, Duration::from_secs(300), 1024, 32);
        let before = rss_mib();
        for i in 0..contexts {
            let mut session = pool.take(bytes_context(100_000 + i));
            let out = session.call("transfer_hbar_tool", TRANSFER).unwrap();
            assert_eq!(out["raw"]["status"], "SUCCESS", "context {i}: {out}");
            pool.give_back(session);
        }
        // The manifest's own context still works, and the pool stayed within its bound.
        let mut session = pool.take(bytes_context(1001));
        let out = session.call("transfer_hbar_tool", TRANSFER).unwrap();
        assert_eq!(out["raw"]["status"], "SUCCESS", "{out}");
        let idle = pool.idle_count();
        assert!(
            idle <= 1024 / (64 * plugins),
            "{idle} idle with {plugins} plugins"
        );
        assert!(pool.evicted.load(std::sync::atomic::Ordering::Relaxed) > 0);
        eprintln!(
            "{contexts} contexts, {plugins} plugins: {idle} idle sessions kept, RSS {before} → {} MiB",
            rss_mib()
        );
    }
}

fn rss_mib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace()
        .nth(1)
        .unwrap()
        .parse::<u64>()
        .unwrap()
        / 1024
}

#[test]
fn plugins_holding_memory_in_many_contexts_stay_bounded() {
    // Each instance keeps 48 MiB (inside its 64 MiB cap); 30 contexts would hold 1.4 GiB if
    // every idle context were kept. The pool keeps idle instances' limits within 256 MiB.
    let manifest = format!(
        "{RETURN_BYTES_HEADER}{}",
        plugin_entry(
            "holder",
            "fixtures/hostile",
            "[plugins.config]\nmode = \"hold-memory\"\n[plugins.limits]\nmemory_mib = 64\ndeadline_ms = 5000"
        )
    );
    let (host, _) = start(&manifest);
    let pool = SessionPool::new(host, Duration::from_secs(300), 256, 32);
    let before = rss_mib();
    for i in 0..30 {
        let mut session = pool.take(bytes_context(200_000 + i));
        let out = session
            .call(
                "transfer_hbar_tool",
                r#"{"transfers":[{"accountId":"0.0.2001","amount":1}],"transactionMemo":"attack"}"#,
            )
            .unwrap();
        assert_eq!(out["raw"]["status"], "SUCCESS", "{out}");
        pool.give_back(session);
    }
    assert!(pool.idle_count() <= 4, "{}", pool.idle_count());
    let grown = rss_mib().saturating_sub(before);
    assert!(grown < 600, "RSS grew by {grown} MiB");
}

#[test]
#[ignore = "needs the JS plugins (scripts/build-plugins.sh js); scripts/test.sh runs it"]
fn a_12_mb_js_plugin_uploads_raw_and_oversized_uploads_get_json_errors() {
    let (addr, _rt) = serve(RETURN_BYTES_HEADER);
    let component = std::fs::read(plugin("js/max-recipients")).unwrap();
    assert!(component.len() > 8 << 20, "{} bytes", component.len());
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    let head = format!(
        "PUT /v1/plugins/js-max HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer s3cret\r\nContent-Type: application/wasm\r\nx-hak-settings: {{\"config\": {{\"maxRecipients\": 1}}}}\r\nConnection: close\r\nContent-Length: {}\r\n\r\n",
        component.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(&component).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    let two = r#"{"transfers":[{"accountId":"0.0.2001","amount":1},{"accountId":"0.0.2002","amount":1}]}"#;
    let (_, out) = post(addr, "transfer_hbar_tool", "", two);
    assert_eq!(out["raw"]["errorCode"], "POLICY_BLOCKED", "{out}");

    // The body never comes: the server answers from the announced length alone (the
    // connection may stay open for a body, so read only the response).
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let head = format!(
        "PUT /v1/plugins/big HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer s3cret\r\nContent-Type: application/wasm\r\nConnection: close\r\nContent-Length: 200000000\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).unwrap();
    let mut response = Vec::new();
    let mut chunk = [0u8; 4096];
    let text = loop {
        let n = stream.read(&mut chunk).unwrap_or(0);
        response.extend_from_slice(&chunk[..n]);
        let text = String::from_utf8_lossy(&response).into_owned();
        let complete = text.split_once("\r\n\r\n").is_some_and(|(head, body)| {
            let length = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length: ")
                        .map(str::to_owned)
                })
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            body.len() >= length
        });
        if n == 0 || complete {
            break text;
        }
    };
    assert!(text.starts_with("HTTP/1.1 413"), "{text}");
    let body: Value = serde_json::from_str(text.split_once("\r\n\r\n").unwrap().1).unwrap();
    assert!(
        body["error"].as_str().unwrap().contains("upload refused"),
        "{body}"
    );
}

/// The schema a documented response promises, with `$ref`s to components resolved.
fn resolve<'a>(doc: &'a Value, schema: &'a Value) -> &'a Value {
    match schema["$ref"].as_str() {
        Some(reference) => {
            let name = reference.trim_start_matches("#/components/schemas/");
            resolve(doc, &doc["components"]["schemas"][name])
        }
        None => schema,
    }
}

/// What a body must look like for the schema: the JSON type, and an object's required fields.
fn conforms(doc: &Value, schema: &Value, body: &Value) -> Result<(), String> {
    let schema = resolve(doc, schema);
    let wanted = schema["type"].as_str().unwrap_or("");
    let fits = match wanted {
        "object" => body.is_object(),
        "array" => body.is_array(),
        "string" => body.is_string(),
        _ => true,
    };
    if !fits {
        return Err(format!("{body} is not a {wanted}"));
    }
    for field in schema["required"].as_array().into_iter().flatten() {
        let field = field.as_str().unwrap();
        if body.get(field).is_none() {
            return Err(format!("{body} lacks the required {field}"));
        }
    }
    if let (Some(items), Some(body)) = (schema.get("items"), body.as_array()) {
        for item in body {
            conforms(doc, items, item)?;
        }
    }
    Ok(())
}

#[test]
#[ignore = "needs openapi-spec-validator (scripts/install-deps.sh); scripts/test.sh runs it"]
fn the_openapi_document_validates_and_every_operation_answers_as_documented() {
    let (addr, _rt) = serve(RETURN_BYTES_HEADER);
    let (status, _, doc) = http(addr, "GET", "/v1/openapi.json", &[], "");
    assert_eq!(status, 200);
    assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"), "{doc}");

    // A validator that is not ours: openapi-spec-validator (installed by scripts/install-deps.sh).
    let file = root().join("target/test-tmp/openapi.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    let validator = root().join("target/tools/py-venv/bin/openapi-spec-validator");
    let out = std::process::Command::new(&validator)
        .arg(&file)
        .output()
        .unwrap_or_else(|e| panic!("{}: {e} (run scripts/install-deps.sh)", validator.display()));
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );

    // Every documented operation is routed and answers with a status it documents, in its shape.
    let examples = [
        ("{method}", "get_hbar_balance_query_tool"),
        ("{name}", "no-such-plugin"),
    ];
    let mut operations = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        let concrete = examples
            .iter()
            .fold(path.clone(), |p, (from, to)| p.replace(from, to));
        for method in ["get", "post", "put", "delete", "patch"] {
            let Some(operation) = item.get(method) else {
                // Not documented: the router must not answer it either.
                let (status, _, _) = http(addr, &method.to_uppercase(), &concrete, &[], "");
                assert_eq!(status, 405, "{method} {path} is routed but not documented");
                continue;
            };
            operations += 1;
            let admin = operation["tags"][0] == "admin";
            let auth = [("Authorization", "Bearer s3cret")];
            let headers: &[(&str, &str)] = if admin { &auth } else { &[] };
            let (status, _, body) = http(
                addr,
                &method.to_uppercase(),
                &concrete,
                &[&[("Content-Type", "application/json")], headers].concat(),
                if method == "get" { "" } else { "{}" },
            );
            let documented = &operation["responses"][status.to_string()];
            assert!(
                documented.is_object(),
                "{method} {path} answered {status}, which it does not document: {body}"
            );
            if let Some(schema) = documented.pointer("/content/application~1json/schema") {
                conforms(&doc, schema, &body)
                    .unwrap_or_else(|e| panic!("{method} {path} ({status}): {e}"));
            }
            // Without the admin token, admin operations refuse as documented.
            if admin {
                let (status, _, _) = http(addr, &method.to_uppercase(), &concrete, &[], "{}");
                assert_eq!(status, 401, "{method} {path} without a token");
            }
        }
    }
    assert_eq!(operations, 17, "{doc}");
}

/// With `[[agents]]` and no admin token, an agent key must never reach the admin routes: it
/// could approve its own held call, list or remove its policies, read the metrics.
#[test]
fn an_agent_key_never_reaches_the_admin_routes() {
    let manifest = agents_manifest();
    let payer = ("Authorization", "Bearer payer-key-0123456789abcdef");
    let admin_routes = [
        ("GET", "/v1/approvals"),
        ("GET", "/v1/decisions"),
        ("GET", "/v1/plugins"),
        ("GET", "/metrics"),
        ("POST", "/v1/approvals/1/approve"),
        ("POST", "/v1/reload"),
    ];
    let closed = serve_with(&manifest, None, None, false);
    for (method, path) in admin_routes {
        for headers in [&[payer][..], &[]] {
            let (status, _, body) = http(closed.addr, method, path, headers, "");
            assert_eq!(status, 403, "{method} {path}: {body}");
            assert!(
                body["error"]
                    .as_str()
                    .is_some_and(|e| e.contains("admin routes are off")),
                "{body}"
            );
        }
    }
    // Tool calls still work with the agent's key.
    let (status, body) = post(
        closed.addr,
        "transfer_hbar_tool",
        "Authorization: Bearer payer-key-0123456789abcdef",
        TRANSFER,
    );
    assert_eq!(status, 200, "{body}");
    drop(closed);

    // With a token only the token opens them.
    let guarded = serve_with(&manifest, None, Some("admin-token-0123456789"), false);
    let (status, _, _) = http(guarded.addr, "GET", "/v1/plugins", &[payer], "");
    assert_eq!(status, 401);
    let admin = ("Authorization", "Bearer admin-token-0123456789");
    let (status, _, _) = http(guarded.addr, "GET", "/v1/plugins", &[admin], "");
    assert_eq!(status, 200);
    drop(guarded);

    // Opening them without a token is an explicit choice.
    let open = serve_with(&manifest, None, None, true);
    let (status, _, _) = http(open.addr, "GET", "/v1/plugins", &[payer], "");
    assert_eq!(status, 200);
    drop(open);

    // An admin token that is an agent's key is refused at start.
    let (host, _) = start(&manifest);
    let registry = std::sync::Arc::new(hak_host::registry::Registry::new(host, None).unwrap());
    let err =
        hak_host::serve::ServeOptions::from_manifest(&registry, Some("payer-key-0123456789abcdef"))
            .err()
            .expect("an agent key as the admin token must be refused");
    assert!(
        err.contains("agent payer's key is the admin token"),
        "{err}"
    );
}

/// The server's end of `client`'s connection, found among this process's descriptors by its
/// peer address (the servers of these tests run in this process) and duplicated.
#[cfg(target_os = "linux")]
fn server_end(client: &std::net::TcpStream) -> std::net::TcpStream {
    use std::os::fd::BorrowedFd;
    let ours = client.local_addr().unwrap();
    for entry in std::fs::read_dir("/proc/self/fd").unwrap() {
        let Ok(fd) = entry.unwrap().file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        // SAFETY: the descriptor is only duplicated; one closed meanwhile fails to duplicate,
        // one reused meanwhile is another file whose peer (if any) is not ours.
        let Ok(owned) = unsafe { BorrowedFd::borrow_raw(fd) }.try_clone_to_owned() else {
            continue;
        };
        let stream = std::net::TcpStream::from(owned);
        if stream.peer_addr().ok() == Some(ours) {
            return stream;
        }
    }
    panic!("no descriptor of this process is connected to {ours}");
}

/// `GET /healthz` on a connection kept open, read to its answer's end.
#[cfg(target_os = "linux")]
fn healthz_kept_open(addr: std::net::SocketAddr) -> std::net::TcpStream {
    let mut client = std::net::TcpStream::connect(addr).unwrap();
    write!(client, "GET /healthz HTTP/1.1\r\nHost: {addr}\r\n\r\n").unwrap();
    let mut answer = Vec::new();
    let mut buf = [0u8; 1024];
    while !answer.ends_with(b"}") {
        let n = client.read(&mut buf).unwrap();
        assert!(n > 0, "{addr} closed before answering");
        answer.extend_from_slice(&buf[..n]);
    }
    assert!(answer.starts_with(b"HTTP/1.1 200"), "{answer:?}");
    client
}

/// The attack on latency: an answer written in two pieces (an MCP event stream's event, then
/// its chunked body's end) waited for the client's delayed ACK of the first (Nagle's
/// algorithm): 44 ms an MCP tools/call over HTTP instead of ~0.5 ms. Every connection of
/// `hak serve` and `hak mcp --listen` must have TCP_NODELAY (read from the server's own socket,
/// no clock involved).
#[cfg(target_os = "linux")]
#[test]
fn servers_send_answers_without_waiting_for_the_clients_ack() {
    let served = serve_dir(RETURN_BYTES_HEADER, None);
    let mcp = serve_mcp(RETURN_BYTES_HEADER);
    for (server, addr) in [("hak serve", served.addr), ("hak mcp --listen", mcp.addr)] {
        let client = healthz_kept_open(addr);
        assert!(
            server_end(&client).nodelay().unwrap(),
            "{server}: a connection without TCP_NODELAY"
        );
    }
}
