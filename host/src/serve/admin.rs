//! The admin routes that change a running host's plugins: upload (raw or JSON, size checked
//! before reading), remove, roll back, reload; all behind the admin token. What must not
//! live here: tool calls and approvals.

use super::*;
use crate::manifest::PluginSidecar;
use crate::registry::{Registry, Source};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use base64::Engine;
use openapi::{ChainVersion, ErrorBody};
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::Arc;

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
    /// The component's signature by a trusted key: cosign's (base64 ECDSA P-256 over the
    /// bytes, as `cosign sign-blob` writes it) or hak's ed25519 (hex, over the sha256).
    signature: Option<String>,
    /// Over the settings' JSON text as sent (`settings` must then be that text, verbatim):
    /// required when the component is signed and has settings.
    #[serde(rename = "settingsSignature")]
    settings_signature: Option<String>,
}

/// Admin routes need the admin token (when one is configured); with agents and no token they
/// are off.
pub(super) async fn require_admin(
    State(app): State<Arc<Admin>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    if app.callers.is_admin(request.headers()) {
        next.run(request).await
    } else if app.callers.admin_closed() {
        error(
            StatusCode::FORBIDDEN,
            "admin routes are off: [[agents]] are configured and $HAK_ADMIN_TOKEN is not set (start the server with it, or with --admin-without-token)",
        )
    } else {
        error(
            StatusCode::UNAUTHORIZED,
            "admin routes need the bearer token",
        )
    }
}

/// Run a registry change off the async threads; `{chainVersion}` or the refusal.
pub(super) async fn change(
    app: Arc<Admin>,
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
pub(super) const MAX_UPLOAD_BYTES: usize =
    crate::model::limits::MAX_COMPONENT_BYTES / 3 * 4 + 1024 * 1024;

/// An upload that announces more than the limit is refused before a byte of it is read.
pub(super) async fn announced_size(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
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
pub(super) async fn put_plugin(
    State(app): State<Arc<Admin>>,
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
pub(super) async fn delete_plugin(
    State(app): State<Arc<Admin>>,
    Path(name): Path<String>,
) -> Response {
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
pub(super) async fn rollback_plugin(
    State(app): State<Arc<Admin>>,
    Path(name): Path<String>,
) -> Response {
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
pub(super) async fn reload(State(app): State<Arc<Admin>>) -> Response {
    change(app, |registry| {
        serde_json::to_value(registry.sync_dir()).map_err(|e| e.to_string())
    })
    .await
}
