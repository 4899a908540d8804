//! `hak serve`: the long-running host's local HTTP API over a [`Registry`].
//! - `POST /v1/tools/{method}` (body: the params JSON) → the result envelope, with the chain
//!   version it ran on in the `x-hak-chain-version` header; `GET /v1/tools`.
//! - Admin (bearer token when configured): `GET /v1/plugins`, `PUT /v1/plugins/{name}`
//!   (`{"component": base64, "settings": {config, capabilities, limits, on_error, sha256},
//!   "signature": hex}`), `DELETE /v1/plugins/{name}`, `POST /v1/plugins/{name}/rollback`,
//!   `POST /v1/reload` (re-sync the plugins directory).
//!
//! Tool calls run on blocking threads with pooled sessions (one per concurrent caller and
//! context), so a swap never waits for calls and calls never wait for a swap.

use crate::context::AgentContext;
use crate::lifecycle::Session;
use crate::manifest::PluginSidecar;
use crate::registry::{Registry, Source};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use axum::{Json, Router};
use base64::Engine;
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::str::FromStr;
use std::sync::{Arc, Mutex};

/// Header naming the chain version a call ran on.
pub const CHAIN_VERSION_HEADER: &str = "x-hak-chain-version";
/// Header choosing the agent context's account (default: the manifest's).
pub const ACCOUNT_HEADER: &str = "x-hak-account-id";

struct App {
    registry: Arc<Registry>,
    admin_token: Option<String>,
    sessions: Mutex<HashMap<String, Vec<Session>>>,
}

impl App {
    fn context(&self, headers: &HeaderMap) -> Result<AgentContext, String> {
        let mut context = self.registry.host().default_context().clone();
        if let Some(account) = headers.get(ACCOUNT_HEADER) {
            let text = account.to_str().map_err(|_| "bad account header")?;
            context.account_id = Some(
                hedera::AccountId::from_str(text)
                    .map_err(|e| format!("{ACCOUNT_HEADER}: invalid account id {text:?}: {e}"))?,
            );
        }
        Ok(context)
    }

    fn take(&self, context: AgentContext) -> Session {
        let key = context.scope_key();
        let pooled = self.lock().get_mut(&key).and_then(Vec::pop);
        pooled.unwrap_or_else(|| self.registry.host().session(context))
    }

    fn give_back(&self, session: Session) {
        let key = session.context().scope_key();
        self.lock().entry(key).or_default().push(session);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vec<Session>>> {
        self.sessions.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn authorised(&self, headers: &HeaderMap) -> bool {
        match &self.admin_token {
            None => true,
            Some(token) => headers
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.strip_prefix("Bearer "))
                .is_some_and(|given| given == token),
        }
    }
}

fn error(status: StatusCode, message: impl Into<String>) -> Response {
    (status, Json(json!({"error": message.into()}))).into_response()
}

async fn call_tool(
    State(app): State<Arc<App>>,
    Path(method): Path<String>,
    headers: HeaderMap,
    body: String,
) -> Response {
    let context = match app.context(&headers) {
        Ok(c) => c,
        Err(e) => return error(StatusCode::BAD_REQUEST, e),
    };
    let worker = app.clone();
    let done = tokio::task::spawn_blocking(move || {
        let mut session = worker.take(context);
        let out = session.call(&method, if body.trim().is_empty() { "{}" } else { &body });
        let version = session.chain_version();
        worker.give_back(session);
        (out, version)
    })
    .await;
    match done {
        Ok((Ok(envelope), version)) => {
            let mut response = Json(envelope).into_response();
            response
                .headers_mut()
                .insert(CHAIN_VERSION_HEADER, HeaderValue::from(version));
            response
        }
        Ok((Err(unknown), _)) => error(StatusCode::NOT_FOUND, unknown.to_string()),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    }
}

async fn list_tools(State(app): State<Arc<App>>) -> Response {
    let specs: Vec<_> = app.registry.host().tools().specs().cloned().collect();
    Json(specs).into_response()
}

async fn list_plugins(State(app): State<Arc<App>>, headers: HeaderMap) -> Response {
    if !app.authorised(&headers) {
        return error(
            StatusCode::UNAUTHORIZED,
            "admin routes need the bearer token",
        );
    }
    Json(json!({
        "chainVersion": app.registry.host().chain_version(),
        "plugins": app.registry.list(),
    }))
    .into_response()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Upload {
    /// The component, base64.
    component: String,
    #[serde(default)]
    settings: Option<Value>,
    signature: Option<String>,
}

/// Run a registry change off the async threads; `{chainVersion}` or the refusal.
async fn change(
    app: Arc<App>,
    headers: HeaderMap,
    work: impl FnOnce(&Registry) -> Result<Value, String> + Send + 'static,
) -> Response {
    if !app.authorised(&headers) {
        return error(
            StatusCode::UNAUTHORIZED,
            "admin routes need the bearer token",
        );
    }
    let registry = app.registry.clone();
    match tokio::task::spawn_blocking(move || work(&registry)).await {
        Ok(Ok(body)) => Json(body).into_response(),
        Ok(Err(message)) => error(StatusCode::UNPROCESSABLE_ENTITY, message),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    }
}

async fn put_plugin(
    State(app): State<Arc<App>>,
    Path(name): Path<String>,
    headers: HeaderMap,
    body: String,
) -> Response {
    change(app, headers, move |registry| {
        let upload: Upload =
            serde_json::from_str(&body).map_err(|e| format!("invalid upload: {e}"))?;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(upload.component.trim())
            .map_err(|e| format!("component: not base64: {e}"))?;
        let settings_value = upload.settings.unwrap_or_else(|| json!({}));
        let settings: PluginSidecar =
            serde_json::from_value(settings_value.clone()).map_err(|e| format!("settings: {e}"))?;
        let version = registry
            .put(
                &name,
                &bytes,
                settings,
                settings_value.to_string(),
                upload.signature.as_deref(),
                Source::Api,
            )
            .map_err(|e| e.to_string())?;
        Ok(json!({"chainVersion": version}))
    })
    .await
}

async fn delete_plugin(
    State(app): State<Arc<App>>,
    Path(name): Path<String>,
    headers: HeaderMap,
) -> Response {
    change(app, headers, move |registry| {
        let version = registry.remove(&name).map_err(|e| e.to_string())?;
        Ok(json!({"chainVersion": version}))
    })
    .await
}

async fn rollback_plugin(
    State(app): State<Arc<App>>,
    Path(name): Path<String>,
    headers: HeaderMap,
) -> Response {
    change(app, headers, move |registry| {
        let version = registry.rollback(&name).map_err(|e| e.to_string())?;
        Ok(json!({"chainVersion": version}))
    })
    .await
}

async fn reload(State(app): State<Arc<App>>, headers: HeaderMap) -> Response {
    change(app, headers, |registry| {
        serde_json::to_value(registry.sync_dir()).map_err(|e| e.to_string())
    })
    .await
}

/// The API's router.
pub fn router(registry: Arc<Registry>, admin_token: Option<String>) -> Router {
    let app = Arc::new(App {
        registry,
        admin_token,
        sessions: Mutex::new(HashMap::new()),
    });
    Router::new()
        .route("/v1/tools", get(list_tools))
        .route("/v1/tools/:method", post(call_tool))
        .route("/v1/plugins", get(list_plugins))
        .route("/v1/plugins/:name", put(put_plugin).delete(delete_plugin))
        .route("/v1/plugins/:name/rollback", post(rollback_plugin))
        .route("/v1/reload", post(reload))
        .with_state(app)
}

/// Serve on `listener` until the process ends.
pub async fn serve(
    listener: tokio::net::TcpListener,
    registry: Arc<Registry>,
    admin_token: Option<String>,
) -> std::io::Result<()> {
    axum::serve(listener, router(registry, admin_token)).await
}
