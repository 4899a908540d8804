//! `/topics/{id}` and `/topics/{id}/messages` with their timestamp filters and paging.

use super::{b64, id_param, key_json, lagging, visible, Refusal, Shared};
use crate::state::keys::mirror_key;
use crate::state::ledger::{EntityId, FeeKind, Ts};
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

pub(super) async fn topic(
    State(node): Shared,
    Path(id): Path<String>,
) -> Result<Response, Refusal> {
    let num = id_param(&id, "topic.id")?;
    let ledger = node.ledger();
    let t = visible(&node, &ledger.topics, num, |e| e.created)?;
    Ok(Json(json!({
        "admin_key": key_json(&t.admin_key),
        "auto_renew_account": t.auto_renew_account.map(EntityId),
        "auto_renew_period": t.auto_renew_period,
        "created_timestamp": t.created.to_string(),
        "custom_fees": {
            "created_timestamp": t.created.to_string(),
            "fixed_fees": t.custom_fees.iter().filter_map(|f| match f.kind {
                FeeKind::Fixed(fixed) => Some(json!({
                    "amount": fixed.amount,
                    "collector_account_id": EntityId(f.collector),
                    "denominating_token_id": fixed.token.map(EntityId),
                })),
                _ => None,
            }).collect::<Vec<_>>(),
        },
        "deleted": t.deleted,
        "fee_exempt_key_list": t.fee_exempt_keys.iter().map(|k| mirror_key(&k.to_proto())).collect::<Vec<_>>(),
        "fee_schedule_key": key_json(&t.fee_schedule_key),
        "memo": t.memo,
        "submit_key": key_json(&t.submit_key),
        "timestamp": {"from": t.created.to_string(), "to": null},
        "topic_id": EntityId(num),
        "sequence_number": t.sequence_number,
        "running_hash": b64(&t.running_hash),
    }))
    .into_response())
}

/// `gte:1700000000.000000000` style filters.
pub(super) fn timestamp_filter(value: &str) -> Option<(&str, Ts)> {
    let (op, ts) = value.split_once(':').unwrap_or(("eq", value));
    let (secs, nanos) = ts.split_once('.').unwrap_or((ts, "0"));
    let nanos = format!("{nanos:0<9}");
    Some((
        op,
        Ts {
            seconds: secs.parse().ok()?,
            nanos: nanos.get(..9)?.parse().ok()?,
        },
    ))
}

pub(super) async fn topic_messages(
    State(node): Shared,
    Path(id): Path<String>,
    raw: axum::extract::RawQuery,
) -> Result<Response, Refusal> {
    let num = id_param(&id, "topic.id")?;
    let mut filters = Vec::new();
    let mut order_desc = false;
    let mut limit = 25usize;
    let mut sequence_filters = Vec::new();
    for pair in raw
        .0
        .as_deref()
        .unwrap_or_default()
        .split('&')
        .filter(|p| !p.is_empty())
    {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        match key {
            "timestamp" => match timestamp_filter(value) {
                Some(f) => filters.push((f.0.to_owned(), f.1)),
                None => return Err(Refusal::BadRequest("timestamp")),
            },
            "sequencenumber" => {
                let (op, n) = value.split_once(':').unwrap_or(("eq", value));
                match n.parse::<u64>() {
                    Ok(n) => sequence_filters.push((op.to_owned(), n)),
                    Err(_) => return Err(Refusal::BadRequest("sequencenumber")),
                }
            }
            "order" => {
                order_desc = match value {
                    "asc" => false,
                    "desc" => true,
                    _ => return Err(Refusal::BadRequest("order")),
                }
            }
            "limit" => match value.parse::<usize>() {
                Ok(n) if (1..=100).contains(&n) => limit = n,
                _ => return Err(Refusal::BadRequest("limit")),
            },
            _ => {}
        }
    }
    let ledger = node.ledger();
    let t = visible(&node, &ledger.topics, num, |e| e.created)?;
    let keep = |op: &str, ord: std::cmp::Ordering| match op {
        "gt" => ord.is_gt(),
        "gte" => ord.is_ge(),
        "lt" => ord.is_lt(),
        "lte" => ord.is_le(),
        "ne" => ord.is_ne(),
        _ => ord.is_eq(),
    };
    let mut matching: Vec<_> = t
        .messages
        .iter()
        .filter(|m| filters.iter().all(|(op, ts)| keep(op, m.consensus.cmp(ts))))
        .filter(|m| {
            sequence_filters
                .iter()
                .all(|(op, n)| keep(op, m.sequence_number.cmp(n)))
        })
        .filter(|m| !lagging(&node, m.consensus))
        .collect();
    if order_desc {
        matching.reverse();
    }
    let more = matching.len() > limit;
    matching.truncate(limit);
    let next = match (more, matching.last()) {
        (true, Some(last)) => {
            let op = if order_desc { "lt" } else { "gt" };
            let order = if order_desc { "desc" } else { "asc" };
            Some(format!(
                "/api/v1/topics/0.0.{num}/messages?limit={limit}&order={order}&timestamp={op}:{}",
                last.consensus
            ))
        }
        _ => None,
    };
    let messages: Vec<Value> = matching
        .iter()
        .map(|m| {
            json!({
                "chunk_info": m.chunk.map(|(initial, number, total)| json!({
                    "initial_transaction_id": {
                        "account_id": EntityId(initial.payer),
                        "nonce": initial.nonce,
                        "scheduled": initial.scheduled,
                        "transaction_valid_start": initial.valid_start.to_string(),
                    },
                    "number": number,
                    "total": total,
                })),
                "consensus_timestamp": m.consensus.to_string(),
                "message": b64(&m.message),
                "payer_account_id": EntityId(m.payer),
                "running_hash": b64(&m.running_hash),
                "running_hash_version": 3,
                "sequence_number": m.sequence_number,
                "topic_id": EntityId(num),
            })
        })
        .collect();
    Ok(Json(json!({"messages": messages, "links": {"next": next}})).into_response())
}
