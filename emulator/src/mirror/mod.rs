//! The mirror node over the ledger. REST (`router`), one module per resource, with the
//! mirror's JSON shapes: snake_case keys, `"0.0.N"` ids, `"seconds.nanos"` timestamps, integer
//! amounts, base64 messages and hashes, `links.next`, and the exact 404 body; the helpers every
//! resource shares live here. [`grpc`]: topic subscriptions and the address book over gRPC;
//! [`network`]: `/network/registered-nodes` and `/network/exchangerate`; `fees`: the fee
//! estimate (`POST /network/fees`, HIP-1261).

mod accounts;
mod contracts;
mod fees;
pub mod grpc;
pub mod network;
mod schedules;
mod tokens;
mod topics;
mod transactions;

use crate::node::ingest::Node;
use crate::state::keys::mirror_key;
use crate::state::ledger::{Ledger, Ts};
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::Engine;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::Arc;

type Shared = State<Arc<Node>>;

pub fn router(node: Arc<Node>) -> Router {
    Router::new()
        .route("/api/v1/accounts/:id", get(accounts::account))
        .route("/api/v1/accounts/:id/tokens", get(accounts::account_tokens))
        .route("/api/v1/accounts/:id/nfts", get(accounts::account_nfts))
        .route(
            "/api/v1/accounts/:id/airdrops/pending",
            get(accounts::airdrops_pending),
        )
        .route(
            "/api/v1/accounts/:id/airdrops/outstanding",
            get(accounts::airdrops_outstanding),
        )
        .route(
            "/api/v1/accounts/:id/allowances/crypto",
            get(accounts::allowances_crypto),
        )
        .route(
            "/api/v1/accounts/:id/allowances/tokens",
            get(accounts::allowances_tokens),
        )
        .route(
            "/api/v1/accounts/:id/allowances/nfts",
            get(accounts::allowances_nfts),
        )
        .route("/api/v1/tokens/:id", get(tokens::token))
        .route("/api/v1/schedules/:id", get(schedules::schedule))
        .route("/api/v1/contracts/call", post(contracts::contract_call))
        .route("/api/v1/contracts/:id", get(contracts::contract))
        .route(
            "/api/v1/contracts/:id/results",
            get(contracts::contract_results),
        )
        .route(
            "/api/v1/contracts/results/:id",
            get(contracts::contract_result),
        )
        .route("/api/v1/balances", get(accounts::balances))
        .route("/api/v1/transactions/:id", get(transactions::transaction))
        .route("/api/v1/topics/:id", get(topics::topic))
        .route("/api/v1/topics/:id/messages", get(topics::topic_messages))
        .route("/api/v1/network/exchangerate", get(network::exchange_rate))
        .route("/api/v1/network/fees", post(fees::estimate))
        .route(
            "/api/v1/network/registered-nodes",
            get(network::registered_nodes),
        )
        .fallback(|| async { not_found() })
        .with_state(node)
}

fn not_found() -> Response {
    (
        StatusCode::NOT_FOUND,
        Json(json!({"_status": {"messages": [{"message": "Not found"}]}})),
    )
        .into_response()
}

fn bad_request(parameter: &str) -> Response {
    let message = format!("Invalid parameter: {parameter}");
    (
        StatusCode::BAD_REQUEST,
        Json(json!({"_status": {"messages": [{"message": message}]}})),
    )
        .into_response()
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// `0.0.N` or `N`.
fn entity_num(text: &str) -> Option<u64> {
    let n = text.strip_prefix("0.0.").unwrap_or(text);
    n.parse().ok()
}

/// Why a mirror request is refused: the mirror's 400 naming the parameter, or its 404.
enum Refusal {
    BadRequest(&'static str),
    NotFound,
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        match self {
            Refusal::BadRequest(parameter) => bad_request(parameter),
            Refusal::NotFound => not_found(),
        }
    }
}

/// The locked ledger and the number of the account `id` names, or the mirror's 400 / 404.
fn account_ledger<'n>(
    node: &'n Node,
    id: &str,
) -> Result<(std::sync::MutexGuard<'n, Ledger>, u64), Refusal> {
    let num = entity_num(id).ok_or(Refusal::BadRequest("idOrAliasOrEvmAddress"))?;
    let ledger = node.ledger();
    if !ledger.accounts.contains_key(&num) {
        return Err(Refusal::NotFound);
    }
    Ok((ledger, num))
}

/// The number `id` names (`0.0.N` or `N`), or the mirror's 400 naming `parameter`.
fn id_param(id: &str, parameter: &'static str) -> Result<u64, Refusal> {
    entity_num(id).ok_or(Refusal::BadRequest(parameter))
}

/// Entity `num` of `table` as the mirror sees it: a 404 when there is none, or when it is
/// younger than the scripted mirror lag.
fn visible<'l, T>(
    node: &Node,
    table: &'l BTreeMap<u64, T>,
    num: u64,
    created: impl Fn(&T) -> Ts,
) -> Result<&'l T, Refusal> {
    table
        .get(&num)
        .filter(|e| !lagging(node, created(e)))
        .ok_or(Refusal::NotFound)
}

fn lagging(node: &Node, created: Ts) -> bool {
    let lag = node.faults().mirror_lag;
    !lag.is_zero() && Ts::now().as_nanos() - created.as_nanos() < lag.as_nanos() as i128
}

fn key_json(key: &Option<crate::state::ledger::KeyBytes>) -> Value {
    key.as_ref()
        .map_or(Value::Null, |k| mirror_key(&k.to_proto()))
}
