//! The mirror's fee estimate (HIP-1261, `POST /api/v1/network/fees?mode=INTRINSIC|STATE
//! [&high_volume_throttle=N]`, body: a protobuf `Transaction`): what the local network would
//! charge that transaction, in tinycents at its exchange rate, split as HIP-1261 reports it —
//! `node` (the node's tenth of the kind's base fee), `network` (the node's subtotal times the
//! multiplier: the other nine tenths), `service` (the rest of the base fee and every priced
//! extra: signatures, bytes, legs, token lists, message and file bytes, serials) — so that
//! `total` is exactly the fee the node charges ([`crate::fees::transaction_fee`]), times the
//! high-volume multiplier when the body asks for those throttles. Both modes answer alike (no
//! fee here depends on state). A body that is no transaction, or one the node refuses before
//! any fee (its pure checks), is a 400 with the node's status.

use crate::fees::{body_extras, high_volume_multiplier, size_extras, Extra};
use crate::kind::Kind;
use crate::state::ledger::{CENT_EQUIVALENT, HBAR_EQUIVALENT};
use axum::body::Bytes;
use axum::extract::Query;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use hedera_proto::services as proto;
use prost::Message;
use serde_json::{json, Value};
use std::collections::HashMap;

/// The network's share as a multiple of the node's: the node takes a tenth of a fee.
const NETWORK_MULTIPLIER: i64 = 9;

/// Tinycents for `tinybars` at the local network's rate.
fn tinycents(tinybars: i64) -> i64 {
    tinybars * i64::from(CENT_EQUIVALENT) / i64::from(HBAR_EQUIVALENT)
}

fn refused(message: impl Into<String>) -> Response {
    (
        StatusCode::BAD_REQUEST,
        Json(json!({"_status": {"messages": [{"message": message.into()}]}})),
    )
        .into_response()
}

fn extra_json(extra: &Extra) -> (i64, Value) {
    let fee_per_unit = tinycents(extra.per_unit);
    let subtotal = extra.charged() as i64 * fee_per_unit;
    (
        subtotal,
        json!({
            "name": extra.name,
            "included": extra.included,
            "count": extra.count,
            "charged": extra.charged(),
            "fee_per_unit": fee_per_unit,
            "subtotal": subtotal,
        }),
    )
}

pub(super) async fn estimate(
    Query(query): Query<HashMap<String, String>>,
    body: Bytes,
) -> Response {
    match query.get("mode").map(String::as_str) {
        None | Some("INTRINSIC" | "STATE") => {}
        Some(other) => return refused(format!("Invalid parameter: mode ({other})")),
    }
    if let Some(throttle) = query.get("high_volume_throttle") {
        if throttle.parse::<u32>().is_err() {
            return refused("Invalid parameter: high_volume_throttle");
        }
    }
    let Ok(tx) = proto::Transaction::decode(body.as_ref()) else {
        return refused("Unable to parse the transaction: not a protobuf Transaction");
    };
    let Ok(signed) = proto::SignedTransaction::decode(tx.signed_transaction_bytes.as_slice())
    else {
        return refused("Unable to parse the transaction: INVALID_TRANSACTION");
    };
    let Ok(transaction_body) = proto::TransactionBody::decode(signed.body_bytes.as_slice()) else {
        return refused("Unable to parse the transaction: INVALID_TRANSACTION_BODY");
    };
    let Some(data) = transaction_body.data.as_ref() else {
        return refused("Unable to parse the transaction: INVALID_TRANSACTION_BODY");
    };
    let Some(kind) = Kind::of(data) else {
        return refused("Unable to estimate the transaction: NOT_SUPPORTED");
    };
    if let Err(code) = crate::handlers::pure_check(data) {
        return refused(format!(
            "Unable to estimate the transaction: {}",
            code.as_str_name()
        ));
    }
    let signatures = signed.sig_map.as_ref().map_or(0, |m| m.sig_pair.len());
    let base = kind.fee();
    let node_base = tinycents(base / 10);
    let network_subtotal = node_base * NETWORK_MULTIPLIER;
    let mut service_total = tinycents(base) - node_base * (1 + NETWORK_MULTIPLIER);
    let service_base = service_total;
    let mut extras = Vec::new();
    for extra in body_extras(data)
        .iter()
        .chain(size_extras(tx.signed_transaction_bytes.len(), signatures).iter())
    {
        let (subtotal, value) = extra_json(extra);
        service_total += subtotal;
        extras.push(value);
    }
    let mut total = node_base + network_subtotal + service_total;
    let multiplier = high_volume_multiplier(kind, &transaction_body);
    if let Some(multiplier) = multiplier {
        total =
            i64::try_from(i128::from(total) * i128::from(multiplier) / 1000).unwrap_or(i64::MAX);
    }
    Json(json!({
        "high_volume_multiplier": multiplier.map_or(1, |m| m / 1000),
        "network": {"multiplier": NETWORK_MULTIPLIER, "subtotal": network_subtotal},
        "node": {"base": node_base, "extras": []},
        "service": {"base": service_base, "extras": extras},
        "notes": [],
        "total": total,
    }))
    .into_response()
}
