//! The operator console: a page, its scripts (the shared `console.js`, one per page:
//! `approvals.js`, `decisions.js`, `chain.js`, `metrics.js`, and `killswitch.js` above them), a style sheet and an icon
//! embedded in the binary and served at `GET /console` by `hak serve` and `hak mcp --listen`. The page holds no
//! data: it reads the admin routes (approvals, decisions, plugins, roll back, metrics) of the
//! server that served it, with the admin token the
//! operator types (kept for the tab, sent as the bearer, never in a URL), so nothing it shows
//! is more than an admin token can read already. Every answer carries a strict
//! Content-Security-Policy (this origin's script and style only, no inline code, no frames,
//! no request elsewhere). What lives here: the files and their headers; what the page does
//! with the JSON is `console/console.js`'s; the routes it reads are the admin API's.

use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

const JS: &str = "text/javascript; charset=utf-8";

/// Every file of the console: its path, content type and bytes.
const FILES: [(&str, &str, &str); 9] = [
    (
        "/console",
        "text/html; charset=utf-8",
        include_str!("console/index.html"),
    ),
    (
        "/console/console.js",
        JS,
        include_str!("console/console.js"),
    ),
    (
        "/console/approvals.js",
        JS,
        include_str!("console/approvals.js"),
    ),
    ("/console/chain.js", JS, include_str!("console/chain.js")),
    (
        "/console/decisions.js",
        JS,
        include_str!("console/decisions.js"),
    ),
    (
        "/console/metrics.js",
        JS,
        include_str!("console/metrics.js"),
    ),
    (
        "/console/killswitch.js",
        JS,
        include_str!("console/killswitch.js"),
    ),
    (
        "/console/console.css",
        "text/css; charset=utf-8",
        include_str!("console/console.css"),
    ),
    (
        "/console/favicon.svg",
        "image/svg+xml",
        include_str!("console/favicon.svg"),
    ),
];

/// What the page may load and send: this origin's script, style and JSON, nothing else.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; \
     form-action 'none'; frame-ancestors 'none'";

fn file(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::REFERRER_POLICY, "no-referrer"),
            (header::X_FRAME_OPTIONS, "DENY"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

/// The console's routes (no state: the page is static).
pub fn routes<S: Clone + Send + Sync + 'static>() -> Router<S> {
    FILES
        .iter()
        .fold(Router::new(), |router, &(path, content_type, body)| {
            router.route(path, get(move || async move { file(content_type, body) }))
        })
}
