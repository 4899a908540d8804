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
//!   [`approvals`]).
//!
//! Who may call, and in which context: [`auth`] (`[[agents]]`, bearer keys). What requests a
//! browser could forge are refused: [`guard`]. Sessions are pooled and bounded: [`pool`].
//! Tool calls run at most `[server] max_concurrent_calls` at once (a call parked awaiting approval
//! gives its slot back while it waits); return-bytes calls run
//! on the worker thread that read the request, with no handoff (CPU only: a network read, a
//! guest's clock wait or an approval wait inside leaves the worker through
//! `blocking::off_worker` / `blocking::block_on`), other modes and calls over a SQLite or
//! Redis store on blocking threads. A swap never waits for calls and calls never wait for a swap. [`serve`] drains in-flight
//! calls on shutdown.

mod approvals;
pub mod auth;
pub mod guard;
pub mod openapi;
pub mod pool;

use crate::manifest::{PluginSidecar, StateBackendKind};
use crate::registry::{Registry, Source};
use auth::Callers;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use axum::{Json, Router};
use base64::Engine;
use guard::Guard;
use openapi::{ChainVersion, ErrorBody, Health, PluginsBody, Ready, Sessions, ToolResult};
use pool::SessionPool;
use serde::Deserialize;
use serde_json::{json, Value};
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
    pool: SessionPool,
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
    let direct_mode = context.mode == crate::context::AgentMode::ReturnBytes;
    let run = move |app: &App| {
        slot.hold_during(|| {
            let mut session = app.pool.take(context);
            session.set_caller(agent.as_deref());
            let out = session.call(&method, if body.trim().is_empty() { "{}" } else { &body });
            let version = session.chain_version();
            app.pool.give_back(session);
            (out, version)
        })
    };
    let done = if app.direct && direct_mode && crate::blocking::on_multi_thread_worker() {
        // CPU-only: run right here on the worker that read the request — no thread handoff.
        // What may wait inside (a network read, a guest's clock wait, a call parked for
        // approval) leaves the worker by itself (`blocking::off_worker`, `blocking::block_on`).
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(&app))).map_err(|_| {
            tracing::error!("bug: a tool call panicked outside its guarded steps");
            "the call panicked (a bug in hak, logged)".to_owned()
        })
    } else {
        let worker = app.clone();
        tokio::task::spawn_blocking(move || run(&worker))
            .await
            .map_err(|e| e.to_string())
    };
    match done {
        Ok((Ok(envelope), version)) => {
            let mut response = Json(envelope).into_response();
            response
                .headers_mut()
                .insert(CHAIN_VERSION_HEADER, HeaderValue::from(version));
            response
        }
        Ok((Err(unknown), _)) => error(StatusCode::NOT_FOUND, unknown.to_string()),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, e),
    }
}

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
async fn list_plugins(State(app): State<Arc<App>>) -> Response {
    Json(PluginsBody {
        chain_version: app.registry.host().chain_version(),
        plugins: app.registry.list(),
        sessions: Sessions {
            idle: app.pool.idle_count() as u64,
            evicted: app.pool.evicted.load(std::sync::atomic::Ordering::Relaxed),
        },
    })
    .into_response()
}

/// A plugin upload as JSON.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Upload {
    /// The component, base64.
    component: String,
    /// `{config, capabilities, limits, on_error, sha256}`, as in a plugin's sidecar.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    settings: Option<Value>,
    /// Hex ed25519 signature over the component by a trusted key.
    signature: Option<String>,
    /// Over the settings' JSON text as sent (`settings` must then be that text, verbatim):
    /// required when the component is signed and has settings.
    #[serde(rename = "settingsSignature")]
    settings_signature: Option<String>,
}

/// Admin routes need the admin token (when one is configured); with agents and no token they
/// are off.
async fn require_admin(
    State(app): State<Arc<App>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    if app.callers.is_admin(request.headers()) {
        next.run(request).await
    } else if app.callers.admin_closed() {
        error(
            StatusCode::FORBIDDEN,
            "admin routes are off: [[agents]] are configured and $HAK_ADMIN_TOKEN is not set (start hak serve with it, or with --admin-without-token)",
        )
    } else {
        error(
            StatusCode::UNAUTHORIZED,
            "admin routes need the bearer token",
        )
    }
}

/// Run a registry change off the async threads; `{chainVersion}` or the refusal.
async fn change(
    app: Arc<App>,
    work: impl FnOnce(&Registry) -> Result<Value, String> + Send + 'static,
) -> Response {
    let registry = app.registry.clone();
    match tokio::task::spawn_blocking(move || work(&registry)).await {
        Ok(Ok(body)) => Json(body).into_response(),
        Ok(Err(message)) => {
            tracing::warn!("plugin change refused (admin API): {message}");
            app.registry.host().metrics().plugin_change(false);
            error(StatusCode::UNPROCESSABLE_ENTITY, message)
        }
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    }
}

/// The largest upload body: a component at the size limit, base64-encoded in JSON.
const MAX_UPLOAD_BYTES: usize = crate::limits::MAX_COMPONENT_BYTES / 3 * 4 + 1024 * 1024;

/// An upload that announces more than the limit is refused before a byte of it is read.
async fn announced_size(request: axum::extract::Request, next: axum::middleware::Next) -> Response {
    let announced = request
        .headers()
        .get("content-length")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    match announced {
        Some(size) if size > MAX_UPLOAD_BYTES as u64 => error(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("upload refused: {size} bytes announced, at most {MAX_UPLOAD_BYTES}"),
        ),
        _ => next.run(request).await,
    }
}

/// Add or replace a plugin, swapped in without a restart.
#[utoipa::path(
    put,
    path = "/v1/plugins/{name}",
    tag = "admin",
    params(("name" = String, Path, description = "The plugin's name in the chain")),
    request_body(
        description = "JSON, or the raw component as application/wasm with settings as JSON in \
                       x-hak-settings and signatures in x-hak-signature / x-hak-settings-signature",
        content(
            (Upload = "application/json"),
            (Vec<u8> = "application/wasm"),
        )
    ),
    responses(
        (status = 200, description = "Swapped in", body = ChainVersion),
        (status = 401, description = "Admin routes need the admin token", body = ErrorBody),
        (status = 403, description = "Admin routes are off: [[agents]] are configured and no admin token is set", body = ErrorBody),
        (status = 413, description = "Larger than a component may be", body = ErrorBody),
        (status = 422, description = "Refused: not a valid plugin, a bad signature or settings", body = ErrorBody),
    ),
    security((), ("admin_token" = []))
)]
/// `PUT /v1/plugins/{name}`: either JSON (`{"component": base64, "settings", "signature",
/// "settingsSignature"}`) or the raw component with `Content-Type: application/wasm` (settings
/// as JSON in `x-hak-settings`, signatures in `x-hak-signature` / `x-hak-settings-signature`).
async fn put_plugin(
    State(app): State<Arc<App>>,
    Path(name): Path<String>,
    headers: HeaderMap,
    body: Result<axum::body::Bytes, axum::extract::rejection::BytesRejection>,
) -> Response {
    let body = match body {
        Ok(body) => body,
        Err(rejection) => {
            return error(
                rejection.status(),
                format!(
                    "upload refused: {} (at most {MAX_UPLOAD_BYTES} bytes)",
                    rejection.body_text()
                ),
            )
        }
    };
    let header = |key: &str| {
        headers
            .get(key)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let raw = header("content-type").is_some_and(|t| t.starts_with("application/wasm"));
    let (x_settings, x_signature, x_settings_signature) = (
        header("x-hak-settings"),
        header("x-hak-signature"),
        header("x-hak-settings-signature"),
    );
    change(app, move |registry| {
        let (bytes, settings_value, signature, settings_signature) = if raw {
            let settings = match x_settings {
                Some(text) => serde_json::from_str(&text)
                    .map_err(|e| format!("x-hak-settings: not JSON: {e}"))?,
                None => json!({}),
            };
            (body.to_vec(), settings, x_signature, x_settings_signature)
        } else {
            let upload: Upload =
                serde_json::from_slice(&body).map_err(|e| format!("invalid upload: {e}"))?;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(upload.component.trim())
                .map_err(|e| format!("component: not base64: {e}"))?;
            (
                bytes,
                upload.settings.unwrap_or_else(|| json!({})),
                upload.signature,
                upload.settings_signature,
            )
        };
        let settings: PluginSidecar =
            serde_json::from_value(settings_value.clone()).map_err(|e| format!("settings: {e}"))?;
        let version = registry
            .put_signed(
                &name,
                &bytes,
                settings,
                settings_value.to_string(),
                signature.as_deref(),
                settings_signature.as_deref(),
                Source::Api,
            )
            .map_err(|e| e.to_string())?;
        Ok(json!({"chainVersion": version}))
    })
    .await
}

/// Remove a plugin from the chain.
#[utoipa::path(
    delete,
    path = "/v1/plugins/{name}",
    tag = "admin",
    params(("name" = String, Path, description = "The plugin's name in the chain")),
    responses(
        (status = 200, description = "Removed", body = ChainVersion),
        (status = 401, description = "Admin routes need the admin token", body = ErrorBody),
        (status = 403, description = "Admin routes are off: [[agents]] are configured and no admin token is set", body = ErrorBody),
        (status = 422, description = "No such plugin, or one the manifest fixes", body = ErrorBody),
    ),
    security((), ("admin_token" = []))
)]
async fn delete_plugin(State(app): State<Arc<App>>, Path(name): Path<String>) -> Response {
    change(app, move |registry| {
        let version = registry.remove(&name).map_err(|e| e.to_string())?;
        tracing::warn!("plugin {name} removed through the admin API (chain v{version})");
        Ok(json!({"chainVersion": version}))
    })
    .await
}

/// Put back the plugin's previous version.
#[utoipa::path(
    post,
    path = "/v1/plugins/{name}/rollback",
    tag = "admin",
    params(("name" = String, Path, description = "The plugin's name in the chain")),
    responses(
        (status = 200, description = "Rolled back", body = ChainVersion),
        (status = 401, description = "Admin routes need the admin token", body = ErrorBody),
        (status = 403, description = "Admin routes are off: [[agents]] are configured and no admin token is set", body = ErrorBody),
        (status = 422, description = "Nothing to roll back to", body = ErrorBody),
    ),
    security((), ("admin_token" = []))
)]
async fn rollback_plugin(State(app): State<Arc<App>>, Path(name): Path<String>) -> Response {
    change(app, move |registry| {
        let version = registry.rollback(&name).map_err(|e| e.to_string())?;
        Ok(json!({"chainVersion": version}))
    })
    .await
}

/// Re-read the plugins directory now.
#[utoipa::path(
    post,
    path = "/v1/reload",
    tag = "admin",
    responses(
        (status = 200, description = "What the scan loaded, removed and refused", body = crate::registry::SyncReport),
        (status = 401, description = "Admin routes need the admin token", body = ErrorBody),
        (status = 403, description = "Admin routes are off: [[agents]] are configured and no admin token is set", body = ErrorBody),
    ),
    security((), ("admin_token" = []))
)]
async fn reload(State(app): State<Arc<App>>) -> Response {
    change(app, |registry| {
        serde_json::to_value(registry.sync_dir()).map_err(|e| e.to_string())
    })
    .await
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
async fn metrics(State(app): State<Arc<App>>) -> Response {
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

/// The API's router.
pub fn router(registry: Arc<Registry>, options: ServeOptions) -> Router {
    // Needs-approval verdicts park here (admin routes below decide them).
    registry.host().approvals();
    let pool = SessionPool::new(
        registry.host().clone(),
        options.idle_session,
        options.idle_memory_mib,
        options.max_concurrent_calls,
    );
    let direct = !matches!(
        registry.host().manifest().state.backend,
        Some(StateBackendKind::Sqlite | StateBackendKind::Redis)
    );
    let app = Arc::new(App {
        registry,
        callers: options.callers,
        pool,
        calls: Arc::new(tokio::sync::Semaphore::new(options.max_concurrent_calls)),
        direct,
    });
    // The one admin check, before any handler reads a body. A route layer: a method a path
    // does not serve still answers 405.
    let admin = axum::middleware::from_fn_with_state(app.clone(), require_admin);
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/v1/openapi.json", get(openapi::document))
        .route("/v1/tools", get(list_tools))
        .route("/v1/tools/:method", post(call_tool))
        .route("/metrics", get(metrics).route_layer(admin.clone()))
        .route("/v1/plugins", get(list_plugins).route_layer(admin.clone()))
        .route(
            "/v1/plugins/:name",
            put(put_plugin)
                .delete(delete_plugin)
                .layer(axum::extract::DefaultBodyLimit::max(MAX_UPLOAD_BYTES))
                .layer(axum::middleware::from_fn(announced_size))
                .route_layer(admin.clone()),
        )
        .route(
            "/v1/plugins/:name/rollback",
            post(rollback_plugin).route_layer(admin.clone()),
        )
        .route("/v1/reload", post(reload).route_layer(admin.clone()))
        .route(
            "/v1/approvals",
            get(approvals::list).route_layer(admin.clone()),
        )
        .route(
            "/v1/approvals/:id/approve",
            post(approvals::approve).route_layer(admin.clone()),
        )
        .route(
            "/v1/approvals/:id/deny",
            post(approvals::deny).route_layer(admin),
        )
        .with_state(app)
        .layer(axum::middleware::from_fn_with_state(
            Arc::new(options.guard),
            guard::guard,
        ))
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
    let server = axum::serve(listener, router(registry, options)).with_graceful_shutdown(async {
        let _ = stop_rx.await;
    });
    let mut running = tokio::spawn(async move { server.await });
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
