//! `/schedules/{id}`: a schedule with its signatories and the wrapped body.

use super::{b64, id_param, key_json, visible, Refusal, Shared};
use crate::state::ledger::EntityId;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

pub(super) async fn schedule(
    State(node): Shared,
    Path(id): Path<String>,
) -> Result<Response, Refusal> {
    let num = id_param(&id, "scheduleId")?;
    let ledger = node.ledger();
    let s = visible(&node, &ledger.schedules, num, |e| e.created)?;
    let signatures: Vec<Value> = s
        .signatories
        .iter()
        .filter_map(|k| hex::decode(k).ok())
        .map(|k| {
            let kind = if k.len() == 32 { "ED25519" } else { "ECDSA_SECP256K1" };
            json!({"consensus_timestamp": s.created.to_string(), "public_key_prefix": b64(&k), "signature": null, "type": kind})
        })
        .collect();
    Ok(Json(json!({
        "admin_key": key_json(&s.admin_key),
        "consensus_timestamp": s.created.to_string(),
        "creator_account_id": EntityId(s.creator),
        "deleted": s.deleted.is_some(),
        "executed_timestamp": s.executed.map(|t| t.to_string()),
        "expiration_time": s.expiration.to_string(),
        "memo": s.memo,
        "payer_account_id": EntityId(s.payer),
        "schedule_id": EntityId(num),
        "signatures": signatures,
        "transaction_body": b64(&s.body),
        "wait_for_expiry": s.wait_for_expiry,
    }))
    .into_response())
}
