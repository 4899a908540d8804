//! `hak mcp`: the tools as a Model Context Protocol server (the official Rust SDK, `rmcp`),
//! over stdio or over streamable HTTP, from the same manifest, plugins and hot-swap as
//! `hak serve`.
//! - `tools/list`: the tools the caller may call, each with the kit's description rendered
//!   for the caller's context, its JSON input schema, its kit name as title and a read-only
//!   hint for queries.
//! - `tools/call`: the full 7-stage lifecycle on a pooled session. A success is the result
//!   envelope as structured content and as JSON text; a block or error is `isError: true`
//!   with the envelope's `humanMessage` as text (with `[context] explain_blocks`, on by
//!   default here, it ends with the policy's reason) and the envelope as structured content.
//!   A call still running after a second sends progress notifications to a client that asked
//!   for them (a progress token), every second until it ends.
//!
//! Who is calling: over stdio, the local process that started hak, in the manifest's context
//! (or `--mode` / `--account-id`); over HTTP, the `[[agents]]` of the manifest by bearer key,
//! as in `hak serve` ([`crate::serve::auth`]), refused with 401 before MCP sees the request.
//! A policy's needs-approval verdict asks the human behind a client that supports
//! elicitation ([`elicitation`]). Over HTTP the admin routes and console of `hak serve` are
//! served beside `/mcp` ([`crate::serve::admin_router`]), and a parked call waits there for
//! the operator too; over stdio a call whose client cannot be asked blocks.
//!
//! Transport details (JSON-RPC, sessions, SSE) belong to `rmcp`; nothing here parses them.

pub mod elicitation;

use crate::model::context::AgentContext;
use crate::registry::Registry;
use crate::serve::auth::{Caller, Callers};
use crate::serve::guard::Guard;
use crate::serve::pool::SessionPool;
use crate::serve::ServeOptions;
use crate::tools::{ToolSpec, ToolType};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ServerCapabilities,
    ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

/// The path of the streamable HTTP endpoint.
pub const MCP_PATH: &str = "/mcp";

/// How long a call runs before its client (if it asked) hears progress, and how often after.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

/// Who the server's callers are.
pub enum Identity {
    /// stdio: the process that started hak, in one context.
    Local(AgentContext),
    /// HTTP: the manifest's agents by bearer key (or, without agents, anyone on loopback).
    Agents(Callers),
}

/// The MCP face of a registry: cheap to clone (one per MCP session).
#[derive(Clone)]
pub struct McpServer {
    inner: Arc<Inner>,
}

struct Inner {
    registry: Arc<Registry>,
    identity: Identity,
    pool: Arc<SessionPool>,
    calls: Arc<tokio::sync::Semaphore>,
    explain_blocks: bool,
    /// Where calls wait while their client is asked (`None`: asking is off).
    approvals: Option<Arc<crate::approvals::Approvals>>,
    /// Return-bytes calls run on the worker that read the request (`serve::inline_calls`).
    inline: bool,
}

impl McpServer {
    /// A server over `registry`; sessions bounded as `options` say (`[server]`). With
    /// `operator` (the approvals routes are served and someone may decide there: the admin or
    /// an approver, [`router`]), a
    /// needs-approval verdict parks in the host's approvals, where the operator (console, `hak
    /// approvals`) decides it and the asked client's answer lands too; without, only a client
    /// that can be asked is, and any other call blocks at once.
    pub fn new(
        registry: Arc<Registry>,
        identity: Identity,
        options: &ServeOptions,
        operator: bool,
    ) -> Self {
        let host = registry.host().clone();
        let explain_blocks = host.manifest().context.explain_blocks.unwrap_or(true);
        let settings = host.manifest().approvals;
        let approvals = if operator {
            let parked = host.approvals().clone();
            settings.mcp_elicitation.then_some(parked)
        } else {
            settings
                .mcp_elicitation
                .then(|| Arc::new(crate::approvals::Approvals::new(settings)))
        };
        let pool = Arc::new(SessionPool::new(
            host,
            options.idle_session,
            options.idle_memory_mib,
            options.max_concurrent_calls,
        ));
        let inline = crate::serve::inline_calls(&registry);
        McpServer {
            inner: Arc::new(Inner {
                inline,
                registry,
                identity,
                pool,
                calls: Arc::new(tokio::sync::Semaphore::new(options.max_concurrent_calls)),
                explain_blocks,
                approvals,
            }),
        }
    }

    /// The pool of sessions this server's calls run on (the admin routes count it).
    pub fn pool(&self) -> Arc<SessionPool> {
        self.inner.pool.clone()
    }

    /// The caller of a request: its context and the tools it may call.
    fn caller<'a>(&'a self, context: &RequestContext<RoleServer>) -> Result<Caller<'a>, String> {
        match &self.inner.identity {
            Identity::Local(local) => Ok(Caller {
                context: local.clone(),
                agent: None,
            }),
            Identity::Agents(callers) => {
                let empty = HeaderMap::new();
                let headers = context
                    .extensions
                    .get::<Parts>()
                    .map_or(&empty, |parts| &parts.headers);
                callers.caller(headers).map_err(|(_, why)| why)
            }
        }
    }

    /// Run one call on a pooled session: on the worker that read the request when it is
    /// CPU-only (return-bytes, `serve::inline_calls`), else on a blocking thread.
    async fn run(
        &self,
        caller_context: AgentContext,
        agent: Option<Arc<str>>,
        method: String,
        params: String,
        peer: rmcp::Peer<RoleServer>,
        progress: Option<rmcp::model::ProgressToken>,
    ) -> Result<Value, ErrorData> {
        // A call parked on an elicitation gives its slot back while the human decides.
        let Some(slot) = crate::approvals::CallSlot::acquire(&self.inner.calls).await else {
            return Err(ErrorData::internal_error(
                "the server is shutting down",
                None,
            ));
        };
        let inner = self.inner.clone();
        let approver = inner.approvals.as_ref().and_then(|approvals| {
            elicitation::ElicitingApprover::for_client(
                approvals,
                &peer,
                tokio::runtime::Handle::current(),
            )
        });
        let (inline, mode) = (inner.inline, caller_context.mode);
        let work = move || {
            slot.hold_during(|| {
                let mut session = inner.pool.take(caller_context);
                session.set_explain_blocks(inner.explain_blocks);
                session.set_caller(agent.as_deref());
                session.set_approver(approver);
                let out = session.call(&method, &params);
                // A pooled session serves other clients next: not this one's approver.
                session.set_approver(None);
                inner.pool.give_back(session);
                out
            })
        };
        // A client that asked for progress hears every second that its call still runs
        // (stopped when the call ends or its request is dropped).
        let _ticker = progress.map(|token| Ticker(tokio::spawn(progress_notes(peer, token))));
        // Return-bytes calls run on the worker that read the request, as in `hak serve`: a
        // hand-off to a blocking thread and back would cost as much as the call.
        match crate::serve::run_call(inline, mode, work).await {
            Ok(Ok(envelope)) => Ok(envelope),
            Ok(Err(unknown)) => Err(ErrorData::invalid_params(unknown.to_string(), None)),
            Err(e) => Err(ErrorData::internal_error(
                format!("the call failed: {e}"),
                None,
            )),
        }
    }
}

/// A progress task, aborted when dropped.
struct Ticker(tokio::task::JoinHandle<()>);

impl Drop for Ticker {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Tell the client every `PROGRESS_EVERY` that its call still runs (until aborted).
async fn progress_notes(peer: rmcp::Peer<RoleServer>, token: rmcp::model::ProgressToken) {
    let mut ticks = 0u32;
    loop {
        tokio::time::sleep(PROGRESS_EVERY).await;
        ticks += 1;
        let note = ProgressNotificationParam::new(token.clone(), f64::from(ticks)).with_message(
            format!("still running after {ticks} s (waiting for the network)"),
        );
        let _ = peer.notify_progress(note).await;
    }
}

/// One tool as MCP lists it, for `context`.
pub fn mcp_tool(spec: &ToolSpec, context: &AgentContext) -> Tool {
    let schema = match &spec.parameters {
        Value::Object(map) => map.clone(),
        _ => serde_json::Map::new(),
    };
    let mut annotations = ToolAnnotations::default();
    annotations.title = Some(spec.name.to_owned());
    annotations.read_only_hint = Some(spec.tool_type == ToolType::Query);
    annotations.open_world_hint = Some(true);
    if spec.tool_type == ToolType::Transaction {
        annotations.destructive_hint = Some(true);
        annotations.idempotent_hint = Some(false);
    }
    Tool::new(spec.method, spec.describe(context), Arc::new(schema))
        .with_title(spec.name)
        .with_annotations(annotations)
}

/// A result envelope as an MCP tool result.
pub fn tool_result(envelope: Value) -> CallToolResult {
    let failed = envelope["raw"]["status"] == "ERROR";
    let mut result = if failed {
        let text = envelope["humanMessage"]
            .as_str()
            .map_or_else(|| envelope.to_string(), str::to_owned);
        CallToolResult::error(vec![ContentBlock::text(text)])
    } else {
        CallToolResult::success(vec![ContentBlock::text(envelope.to_string())])
    };
    result.structured_content = Some(envelope);
    result
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("hak", env!("CARGO_PKG_VERSION"))
                    .with_title("hak: Hedera Agent Kit tools with sandboxed policies"),
            )
            .with_instructions(
                "Hedera tools of the Hedera Agent Kit. Every call passes the operator's policies; \
                 a blocked call is an error result whose text says which policy blocked it and why.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let caller = self
            .caller(&context)
            .map_err(|why| ErrorData::invalid_request(why, None))?;
        let host = self.inner.registry.host();
        let tools = host
            .tools()
            .specs()
            .filter(|spec| caller.may_call(spec.method))
            .map(|spec| mcp_tool(spec, &caller.context))
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        let host = self.inner.registry.host();
        let spec = host.tools().get(name)?.spec();
        let context = match &self.inner.identity {
            Identity::Local(local) => local.clone(),
            Identity::Agents(_) => host.default_context().clone(),
        };
        Some(mcp_tool(spec, &context))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let method = request.name.to_string();
        if self.inner.registry.host().tools().get(&method).is_none() {
            return Err(ErrorData::invalid_params(
                format!("unknown tool {method:?}"),
                None,
            ));
        }
        let caller = self
            .caller(&context)
            .map_err(|why| ErrorData::invalid_request(why, None))?;
        if let Err((_, why)) = caller.check(&method) {
            return Ok(CallToolResult::error(vec![ContentBlock::text(why)]).into());
        }
        let caller_context = caller.context;
        let agent = caller.agent.map(|a| a.name.clone());
        let params = Value::Object(request.arguments.unwrap_or_default()).to_string();
        let progress = context.meta.get_progress_token();
        let envelope = self
            .run(
                caller_context,
                agent,
                method,
                params,
                context.peer.clone(),
                progress,
            )
            .await?;
        Ok(tool_result(envelope).into())
    }
}

/// Serve MCP over stdin/stdout until the client closes it or `shutdown` resolves.
pub async fn serve_stdio(
    server: McpServer,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let running = server.serve(stdio()?).await?;
    let cancel = running.cancellation_token();
    tokio::spawn(async move {
        shutdown.await;
        cancel.cancel();
    });
    running.waiting().await?;
    Ok(())
}

/// Boxed halves of a byte stream, as rmcp's `transport-io` takes them.
type Reader = Box<dyn tokio::io::AsyncRead + Send + Unpin>;
type Writer = Box<dyn tokio::io::AsyncWrite + Send + Unpin>;

/// stdin and stdout for MCP. A client that starts hak connects them to a pipe (Python's
/// `subprocess`) or a socket (Node's `child_process`): then they are read and written by the
/// runtime's own reactor, non-blocking, on the worker that serves the call. Anything else (a
/// terminal, a file) gets tokio's stdin and stdout, which hand every read and write to a
/// blocking thread and back: two thread hand-offs a request, the largest cost of a served
/// call after rmcp's own. Only the protocol uses stdout in this mode (logs go to stderr), so
/// making its descriptor non-blocking affects nothing else. Both are checked before either
/// is changed; one that then cannot be registered with the reactor is an error, not a
/// fallback (its descriptor may be non-blocking by then).
fn stdio() -> anyhow::Result<(Reader, Writer)> {
    #[cfg(unix)]
    if let Some(pair) = stdio_unix()? {
        return Ok(pair);
    }
    Ok((Box::new(tokio::io::stdin()), Box::new(tokio::io::stdout())))
}

#[cfg(unix)]
fn stdio_unix() -> anyhow::Result<Option<(Reader, Writer)>> {
    use std::os::fd::{AsFd, OwnedFd};
    use std::os::unix::fs::FileTypeExt;
    use std::os::unix::net::UnixStream;
    /// What a descriptor is connected to, when the reactor can drive it.
    #[derive(Clone, Copy)]
    enum Kind {
        Pipe,
        Socket,
    }
    let kind = |fd: std::os::fd::BorrowedFd<'_>| -> Option<(Kind, OwnedFd)> {
        let owned = fd.try_clone_to_owned().ok()?;
        let file_type = std::fs::File::from(owned.try_clone().ok()?)
            .metadata()
            .ok()?
            .file_type();
        if file_type.is_fifo() {
            Some((Kind::Pipe, owned))
        } else if file_type.is_socket() {
            Some((Kind::Socket, owned))
        } else {
            None
        }
    };
    let (Some((read_kind, input)), Some((write_kind, output))) = (
        kind(std::io::stdin().as_fd()),
        kind(std::io::stdout().as_fd()),
    ) else {
        return Ok(None);
    };
    let socket = |fd: OwnedFd| -> std::io::Result<tokio::net::UnixStream> {
        let socket = UnixStream::from(fd);
        socket.set_nonblocking(true)?;
        tokio::net::UnixStream::from_std(socket)
    };
    let reader: Reader = match read_kind {
        Kind::Pipe => Box::new(tokio::net::unix::pipe::Receiver::from_owned_fd(input)?),
        Kind::Socket => Box::new(socket(input)?),
    };
    let writer: Writer = match write_kind {
        Kind::Pipe => Box::new(tokio::net::unix::pipe::Sender::from_owned_fd(output)?),
        Kind::Socket => Box::new(socket(output)?),
    };
    Ok(Some((reader, writer)))
}

/// Refuse a request without a known agent key before MCP reads it (when agents are set).
async fn authenticate(
    axum::extract::State(server): axum::extract::State<McpServer>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    if let Identity::Agents(callers) = &server.inner.identity {
        if let Err((status, why)) = callers.caller(request.headers()) {
            return (
                StatusCode::from_u16(status).unwrap_or(StatusCode::UNAUTHORIZED),
                Json(json!({"error": why})),
            )
                .into_response();
        }
    }
    next.run(request).await
}

/// The streamable HTTP router: `POST|GET|DELETE /mcp`, `GET /healthz`, `GET /readyz`, and
/// `hak serve`'s admin routes and console ([`crate::serve::admin_router`]), behind the same
/// browser guard as `hak serve` (`[server] hosts`, `allowed_origins`).
pub fn router(
    server: McpServer,
    admin: crate::serve::Admin,
    guard: Guard,
    stop: tokio_util::sync::CancellationToken,
) -> Router {
    let factory = server.clone();
    // The guard below checks Host and Origin for every route, with hak's rules.
    let config = StreamableHttpServerConfig::default()
        .with_cancellation_token(stop)
        .disable_allowed_hosts();
    let service = StreamableHttpService::new(
        move || Ok(factory.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let registry = server.inner.registry.clone();
    Router::new()
        .nest_service(MCP_PATH, service)
        .layer(axum::middleware::from_fn_with_state(
            server.clone(),
            authenticate,
        ))
        .route("/healthz", get(|| async { Json(json!({"status": "ok"})) }))
        .route(
            "/readyz",
            get(move || {
                let version = registry.host().chain_version();
                async move { Json(json!({"ready": true, "chainVersion": version})) }
            }),
        )
        .merge(crate::serve::admin_router(admin))
        .layer(crate::serve::guard::GuardLayer(Arc::new(guard)))
}
