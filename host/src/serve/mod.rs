//! `hak serve`: the long-running host's HTTP API over a [`Registry`].
//! - `POST /v1/tools/{method}` (body: the params JSON) → the result envelope, with the chain
//!   version it ran on in the `x-hak-chain-version` header; `GET /v1/tools` (the caller's
//!   tools, described for its context).
//! - `GET /healthz`, `GET /readyz`, `GET /v1/openapi.json` (this API as OpenAPI 3.1: [`openapi`]).
//! - `GET /metrics`: Prometheus metrics in the OpenMetrics text format (admin token when
//!   configured: they show which agents' calls were blocked).
//! - Admin (bearer token when configured): `GET /v1/plugins`, `PUT /v1/plugins/{name}`
//!   (`{"component": base64, "settings": {config, capabilities, limits, on_error, sha256},
//!   "signature": hex}`), `DELETE /v1/plugins/{name}`, `POST /v1/plugins/{name}/rollback`,
//!   `POST /v1/reload` (re-sync the plugins directory); `GET /v1/approvals`,
//!   `POST /v1/approvals/{id}/approve|deny` (calls parked on a needs-approval verdict:
//!   [`approvals`]); `GET|POST /v1/pause`, `POST /v1/resume` (the kill switch: `kill_switch`).
//!
//! Who may call, and in which context: [`auth`] (`[[agents]]`, bearer keys). What requests a
//! browser could forge are refused: [`guard`]. Sessions are pooled and bounded: [`pool`].
//! Tool calls run at most `[server] max_concurrent_calls` at once (a call parked awaiting approval
//! gives its slot back while it waits); return-bytes calls run
//! on the worker thread that read the request, with no handoff (CPU only: a network read, a
//! guest's clock wait or an approval wait inside leaves the worker through
//! `blocking::off_worker` / `blocking::block_on`), other modes and calls over a SQLite or
//! Redis store on blocking threads. A swap never waits for calls and calls never wait for a swap. [`serve`] drains in-flight
//! calls on shutdown. [`http`] ([`listen`]) is the listener, and [`admin_router`] (the admin
//! routes and the console) the admin face, of both `hak serve` and `hak mcp --listen`.

mod admin;
mod approvals;
mod decisions;
mod kill_switch;
use admin::*;
pub mod auth;
pub mod console;
pub mod guard;
pub mod listen;
pub use listen::http;
pub mod openapi;
pub mod pool;

use crate::manifest::StateBackendKind;
use crate::registry::Registry;
use auth::Callers;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use axum::{Json, Router};
use guard::Guard;
use openapi::{ErrorBody, Health, PluginsBody, Ready, Sessions, ToolResult};
use pool::SessionPool;
use std::sync::Arc;
use std::time::Duration;

/// Header naming the chain version a call ran on.
pub const CHAIN_VERSION_HEADER: &str = "x-hak-chain-version";
pub use auth::ACCOUNT_HEADER;

/// How a server treats its callers; built from the manifest by [`ServeOptions::from_manifest`].
pub struct ServeOptions {
    pub callers: Callers,
    pub guard: Guard,
    pub max_concurrent_calls: usize,
    pub idle_session: Duration,
    pub idle_memory_mib: u64,
    pub drain: Duration,
}

impl ServeOptions {
    /// The manifest's `[[agents]]` and `[server]`, with `admin_token` guarding admin routes.
    pub fn from_manifest(registry: &Registry, admin_token: Option<&str>) -> Result<Self, String> {
        let host = registry.host();
        let manifest = host.manifest();
        let server = &manifest.server;
        for (i, agent) in manifest.agents.iter().enumerate() {
            for tool in &agent.tools {
                if host.tools().get(tool).is_none() {
                    return Err(format!(
                        "agents[{i}] ({}): tools: unknown tool {tool:?}",
                        agent.name
                    ));
                }
            }
        }
        Ok(ServeOptions {
            callers: Callers::from_manifest(manifest, host.default_context(), admin_token)?,
            guard: Guard {
                hosts: server.hosts.clone(),
                allowed_origins: server.allowed_origins.clone(),
            },
            max_concurrent_calls: server.max_concurrent_calls,
            idle_session: Duration::from_secs(server.idle_session_seconds),
            idle_memory_mib: server.idle_memory_mib,
            drain: Duration::from_secs(server.drain_seconds),
        })
    }
}

struct App {
    registry: Arc<Registry>,
    callers: Callers,
    pool: Arc<SessionPool>,
    calls: Arc<tokio::sync::Semaphore>,
    /// Return-bytes calls run directly on the server's threads: true unless the state store
    /// may block a thread on I/O it does not hand off (SQLite's lock waits, Redis round trips).
    direct: bool,
}

fn error(status: StatusCode, message: impl Into<String>) -> Response {
    (
        status,
        Json(ErrorBody {
            error: message.into(),
        }),
    )
        .into_response()
}

/// Run one tool call through the plugin chain.
#[utoipa::path(
    post,
    path = "/v1/tools/{method}",
    tag = "tools",
    params(("method" = String, Path, description = "The tool, e.g. transfer_hbar_tool")),
    request_body(content = Object, description = "The tool's params (its JSON schema is in GET /v1/tools)", content_type = "application/json"),
    responses(
        (status = 200, description = "The result envelope (success, error or block), with the chain version in x-hak-chain-version", body = ToolResult,
         headers(("x-hak-chain-version" = u64, description = "The plugin chain version the call ran on"))),
        (status = 400, description = "x-hak-account-id is not an account id", body = ErrorBody),
        (status = 401, description = "No or unknown agent key", body = ErrorBody),
        (status = 403, description = "The agent may not call this tool or pick its account", body = ErrorBody),
        (status = 404, description = "No such tool", body = ErrorBody),
    ),
    security((), ("agent_key" = []))
)]
async fn call_tool(
    State(app): State<Arc<App>>,
    Path(method): Path<String>,
    headers: HeaderMap,
    body: String,
) -> Response {
    let (context, agent) = match app.callers.context_for(&headers, &method) {
        Ok(c) => c,
        Err((status, why)) => {
            return error(
                StatusCode::from_u16(status).unwrap_or(StatusCode::FORBIDDEN),
                why,
            )
        }
    };
    // A parked call (needs-approval) gives its slot back while it waits.
    let Some(slot) = crate::approvals::CallSlot::acquire(&app.calls).await else {
        return error(
            StatusCode::SERVICE_UNAVAILABLE,
            "the server is shutting down",
        );
    };
    let (direct, mode) = (app.direct, context.mode);
    let done = run_call(direct, mode, move || {
        slot.hold_during(|| {
            let mut session = app.pool.take(context);
            session.set_caller(agent.as_deref());
            let out =
                session.call_envelope(&method, if body.trim().is_empty() { "{}" } else { &body });
            let version = session.chain_version();
            app.pool.give_back(session);
            (out, version)
        })
    })
    .await;
    match done {
        Ok((Ok(envelope), version)) => envelope_response(&envelope, version),
        Ok((Err(unknown), _)) => error(StatusCode::NOT_FOUND, unknown.to_string()),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, e),
    }
}

/// Whether return-bytes calls may run on the async worker that read their request, for
/// `hak serve` and `hak mcp`: CPU-only unless a state store answers from disk or the network
/// (what else may wait inside a call leaves the worker by itself, `crate::blocking`).
pub(crate) fn inline_calls(registry: &Registry) -> bool {
    !matches!(
        registry.host().manifest().state.backend,
        Some(StateBackendKind::Sqlite | StateBackendKind::Redis)
    )
}

/// Run one call's `work` (`hak serve`'s and `hak mcp`'s): right here, on the async worker
/// that read its request, when `inline` ([`inline_calls`]) and the call is return-bytes
/// (CPU-only) on a multi-threaded runtime's worker: no thread hand-off (what may wait inside,
/// a network read, a guest's clock wait, a call parked for approval, leaves the worker by
/// itself: `blocking::off_worker`, `blocking::block_on`). Otherwise on a blocking thread. A
/// panic outside the call's guarded steps is the call's error (logged) either way.
pub(crate) async fn run_call<T: Send + 'static>(
    inline: bool,
    mode: crate::model::context::AgentMode,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, String> {
    if inline
        && mode == crate::model::context::AgentMode::ReturnBytes
        && crate::blocking::on_multi_thread_worker()
    {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).map_err(|_| {
            tracing::error!("bug: a tool call panicked outside its guarded steps");
            "the call panicked (a bug in hak, logged)".to_owned()
        })
    } else {
        tokio::task::spawn_blocking(work)
            .await
            .map_err(|e| e.to_string())
    }
}

/// A call's envelope as the response: written once into a buffer sized for a typical
/// envelope (axum's `Json` starts at 128 bytes and grows it twice for a return-bytes one).
fn envelope_response(envelope: &crate::lifecycle::envelope::Envelope, version: u64) -> Response {
    let mut body = Vec::with_capacity(ENVELOPE_BYTES);
    if let Err(e) = serde_json::to_writer(&mut body, envelope) {
        return error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string());
    }
    let mut response = Response::new(axum::body::Body::from(body));
    let headers = response.headers_mut();
    headers.insert(
        axum::http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(CHAIN_VERSION_HEADER, HeaderValue::from(version));
    response
}

/// Room for a return-bytes envelope of a small transfer (~400 bytes) in one allocation.
const ENVELOPE_BYTES: usize = 512;

/// Liveness: the process answers HTTP (no authentication, no state).
#[utoipa::path(
    get,
    path = "/healthz",
    tag = "health",
    responses((status = 200, description = "The process answers", body = Health))
)]
async fn healthz() -> Response {
    Json(Health {
        status: "ok".into(),
    })
    .into_response()
}

/// Readiness: the router exists only once the manifest's chain is loaded, so a served request
/// is ready; it reports the chain version.
#[utoipa::path(
    get,
    path = "/readyz",
    tag = "health",
    responses((status = 200, description = "The plugin chain is loaded; calls are served", body = Ready))
)]
async fn readyz(State(app): State<Arc<App>>) -> Response {
    Json(Ready {
        ready: true,
        chain_version: app.registry.host().chain_version(),
    })
    .into_response()
}

/// The tools the caller may call, described for the caller's context.
#[utoipa::path(
    get,
    path = "/v1/tools",
    tag = "tools",
    responses(
        (status = 200, description = "Each tool with the kit's description for the caller's context and its params' JSON schema", body = Vec<crate::tools::ToolListing>),
        (status = 400, description = "x-hak-account-id is not an account id", body = ErrorBody),
        (status = 401, description = "No or unknown agent key", body = ErrorBody),
        (status = 403, description = "The agent may not pick its account", body = ErrorBody),
    ),
    security((), ("agent_key" = []))
)]
async fn list_tools(State(app): State<Arc<App>>, headers: HeaderMap) -> Response {
    let caller = match app.callers.caller(&headers) {
        Ok(caller) => caller,
        Err((status, why)) => {
            return error(
                StatusCode::from_u16(status).unwrap_or(StatusCode::FORBIDDEN),
                why,
            )
        }
    };
    let host = app.registry.host();
    let listing: Vec<_> = host
        .tools()
        .specs()
        .filter(|spec| caller.may_call(spec.method))
        .map(|spec| spec.listing(&caller.context))
        .collect();
    Json(listing).into_response()
}

/// The plugin chain: every plugin with its source, stages and counters.
#[utoipa::path(
    get,
    path = "/v1/plugins",
    tag = "admin",
    responses(
        (status = 200, description = "Every plugin with its source, stages and counters", body = PluginsBody),
        (status = 401, description = "Admin routes need the admin token", body = ErrorBody),
        (status = 403, description = "Admin routes are off: [[agents]] are configured and no admin token is set", body = ErrorBody),
    ),
    security((), ("admin_token" = []))
)]
async fn list_plugins(State(app): State<Arc<Admin>>) -> Response {
    let snapshot = app.registry.snapshot();
    Json(PluginsBody {
        chain_version: snapshot.chain_version,
        plugins: snapshot.plugins,
        sessions: Sessions {
            idle: app.pool.idle_count() as u64,
            evicted: app.pool.evicted.load(std::sync::atomic::Ordering::Relaxed),
        },
    })
    .into_response()
}

/// Prometheus metrics (OpenMetrics text): calls by tool, mode and outcome; plugin verdicts,
/// latency and failures; chain swaps; instances and sessions; state-store latency.
#[utoipa::path(
    get,
    path = "/metrics",
    tag = "admin",
    responses(
        (status = 200, description = "Every metric in the OpenMetrics text format", body = String, content_type = "application/openmetrics-text"),
        (status = 401, description = "Admin routes need the admin token", body = ErrorBody),
        (status = 403, description = "Admin routes are off: [[agents]] are configured and no admin token is set", body = ErrorBody),
    ),
    security((), ("admin_token" = []))
)]
async fn metrics(State(app): State<Arc<Admin>>) -> Response {
    let text = app.registry.host().render_metrics((
        app.pool.idle_count() as u64,
        app.pool.evicted.load(std::sync::atomic::Ordering::Relaxed),
    ));
    (
        [(
            axum::http::header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        text,
    )
        .into_response()
}

/// What the admin routes and the console read: the registry, who the admin is, and the
/// counters of the server's session pool. `hak serve` and `hak mcp --listen` each build one
/// over their own pool ([`admin_router`]).
pub struct Admin {
    registry: Arc<Registry>,
    callers: Callers,
    pool: Arc<SessionPool>,
}

impl Admin {
    /// The admin face of `registry` for a server whose callers are `callers` and whose
    /// sessions are pooled in `pool`.
    pub fn new(registry: Arc<Registry>, callers: Callers, pool: Arc<SessionPool>) -> Self {
        Admin {
            registry,
            callers,
            pool,
        }
    }
}

/// The admin routes (plugins, reload, approvals, decisions, metrics), each behind the admin
/// token, and the console that reads them.
pub fn admin_router(admin: Admin) -> Router {
    let admin = Arc::new(admin);
    // The one admin check, before any handler reads a body. A route layer: a method a path
    // does not serve still answers 405.
    let check = axum::middleware::from_fn_with_state(admin.clone(), require_admin);
    // The approvals routes: the admin, or an approver by their own key.
    let approver = axum::middleware::from_fn_with_state(admin.clone(), approvals::require_approver);
    Router::new()
        .route("/metrics", get(metrics).route_layer(check.clone()))
        .route("/v1/plugins", get(list_plugins).route_layer(check.clone()))
        .route(
            "/v1/plugins/:name",
            put(put_plugin)
                .delete(delete_plugin)
                .layer(axum::extract::DefaultBodyLimit::max(MAX_UPLOAD_BYTES))
                .layer(axum::middleware::from_fn(announced_size))
                .route_layer(check.clone()),
        )
        .route(
            "/v1/plugins/:name/rollback",
            post(rollback_plugin).route_layer(check.clone()),
        )
        .route("/v1/reload", post(reload).route_layer(check.clone()))
        .route(
            "/v1/approvals",
            get(approvals::list).route_layer(approver.clone()),
        )
        .route(
            "/v1/approvals/:id/approve",
            post(approvals::approve).route_layer(approver.clone()),
        )
        .route(
            "/v1/approvals/:id/deny",
            post(approvals::deny).route_layer(approver),
        )
        .route(
            "/v1/decisions",
            get(decisions::list).route_layer(check.clone()),
        )
        .route(
            "/v1/pause",
            get(kill_switch::show)
                .post(kill_switch::pause)
                .route_layer(check.clone()),
        )
        .route("/v1/resume", post(kill_switch::resume).route_layer(check))
        .merge(console::routes())
        .with_state(admin)
}

/// The API's router: the tool routes, health, OpenAPI, and [`admin_router`].
pub fn router(registry: Arc<Registry>, options: ServeOptions) -> Router {
    // Needs-approval verdicts park here (the admin routes decide them).
    registry.host().approvals();
    let pool = Arc::new(SessionPool::new(
        registry.host().clone(),
        options.idle_session,
        options.idle_memory_mib,
        options.max_concurrent_calls,
    ));
    let admin = Admin::new(registry.clone(), options.callers.clone(), pool.clone());
    let direct = inline_calls(&registry);
    let app = Arc::new(App {
        registry,
        callers: options.callers,
        pool,
        calls: Arc::new(tokio::sync::Semaphore::new(options.max_concurrent_calls)),
        direct,
    });
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/v1/openapi.json", get(openapi::document))
        .route("/v1/tools", get(list_tools))
        .route("/v1/tools/:method", post(call_tool))
        .with_state(app)
        .merge(admin_router(admin))
        .layer(guard::GuardLayer(Arc::new(options.guard)))
}

/// Serve on `listener` until `shutdown` resolves, then stop accepting and let in-flight calls
/// finish for up to `options.drain`. Returns whether every call finished.
pub async fn serve(
    listener: tokio::net::TcpListener,
    registry: Arc<Registry>,
    options: ServeOptions,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<bool> {
    let drain = options.drain;
    let host = registry.host().clone();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server = http(listener, router(registry, options), async {
        let _ = stop_rx.await;
    });
    let mut running = tokio::spawn(server);
    tokio::select! {
        finished = &mut running => return finished.map_err(std::io::Error::other)?.map(|()| true),
        () = shutdown => {}
    }
    let _ = stop_tx.send(());
    // Calls parked on an approval would outlast the drain: they end blocked now.
    host.approvals().close("the server is shutting down");
    match tokio::time::timeout(drain, &mut running).await {
        Ok(finished) => finished.map_err(std::io::Error::other)?.map(|()| true),
        Err(_) => {
            running.abort();
            Ok(false)
        }
    }
}
