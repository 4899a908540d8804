//! `/transactions/{id}` (both id forms) and the id parser the contract results share.

use super::{b64, bad_request, entity_num, lagging, not_found, Shared};
use crate::state::ledger::{EntityId, Ts, TxId};
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};
use std::collections::HashMap;

/// `0.0.x-sss-nnn` (mirror form) or `0.0.x@sss.nnn` (SDK form).
pub(super) fn parse_tx_id(text: &str) -> Option<TxId> {
    let (payer, secs, nanos) = match text.split_once('@') {
        Some((payer, start)) => {
            let (secs, nanos) = start.split_once('.')?;
            (payer, secs, nanos)
        }
        None => {
            let mut parts = text.rsplitn(3, '-');
            let nanos = parts.next()?;
            let secs = parts.next()?;
            (parts.next()?, secs, nanos)
        }
    };
    Some(TxId {
        payer: entity_num(payer)?,
        valid_start: Ts {
            seconds: secs.parse().ok()?,
            nanos: nanos.parse().ok()?,
        },
        scheduled: false,
        nonce: 0,
    })
}

pub(super) async fn transaction(
    State(node): Shared,
    Path(id): Path<String>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let Some(id) = parse_tx_id(&id) else {
        return bad_request("transactionId");
    };
    let nonce = match q.get("nonce").map(|n| n.parse::<i32>()) {
        None => None,
        Some(Ok(n)) if n >= 0 => Some(n),
        Some(_) => return bad_request("nonce"),
    };
    let ledger = node.ledger();
    let mut matching: Vec<_> = ledger
        .records
        .iter()
        .filter(|r| {
            r.id.payer == id.payer
                && r.id.valid_start == id.valid_start
                && nonce.is_none_or(|n| r.id.nonce == n)
                && !lagging(&node, r.consensus)
        })
        .collect();
    // A scheduled execution is handled inside its create or sign: order by consensus time.
    matching.sort_by_key(|r| r.consensus);
    let rows: Vec<Value> = matching
        .into_iter()
        .map(|r| {
            json!({
                "batch_key": null,
                "bytes": null,
                "charged_tx_fee": r.charged_fee,
                "consensus_timestamp": r.consensus.to_string(),
                "entity_id": r.entity_id,
                "max_custom_fees": [],
                "max_fee": r.max_fee.to_string(),
                "memo_base64": b64(r.memo.as_bytes()),
                "name": r.name,
                "nft_transfers": r.nft_transfers.iter().map(|(t, from, to, serial)| json!({
                    "is_approval": false,
                    "receiver_account_id": EntityId(*to),
                    "sender_account_id": (*from != 0).then_some(EntityId(*from)),
                    "serial_number": serial,
                    "token_id": EntityId(*t),
                })).collect::<Vec<_>>(),
                "node": EntityId(r.node),
                "nonce": r.id.nonce,
                "parent_consensus_timestamp": null,
                "result": r.result,
                "scheduled": r.id.scheduled,
                "staking_reward_transfers": [],
                "token_transfers": r.token_transfers.iter().map(|(t, a, amount)| json!({"token_id": EntityId(*t), "account": EntityId(*a), "amount": amount, "is_approval": false})).collect::<Vec<_>>(),
                "transaction_hash": b64(&r.hash),
                "transaction_id": r.id.mirror_form(),
                "transfers": r.transfers.iter().map(|(a, amount)| json!({"account": EntityId(*a), "amount": amount, "is_approval": false})).collect::<Vec<_>>(),
                "valid_duration_seconds": r.valid_duration_seconds.to_string(),
                "valid_start_timestamp": r.id.valid_start.to_string(),
                "assessed_custom_fees": r.assessed_custom_fees.iter().map(|f| json!({
                    "amount": f.amount,
                    "collector_account_id": EntityId(f.collector),
                    "effective_payer_account_ids": f.payers.iter().map(|p| EntityId(*p)).collect::<Vec<_>>(),
                    "token_id": f.token.map(EntityId),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    if rows.is_empty() {
        return not_found();
    }
    Json(json!({"transactions": rows})).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transaction_ids_in_both_forms() {
        let a = parse_tx_id("0.0.1001-1700000000-000000123").unwrap();
        let b = parse_tx_id("0.0.1001@1700000000.000000123").unwrap();
        assert_eq!(a, b);
        assert_eq!(
            a.valid_start,
            Ts {
                seconds: 1_700_000_000,
                nanos: 123
            }
        );
        assert_eq!(a.mirror_form(), "0.0.1001-1700000000-000000123");
        assert!(parse_tx_id("garbage").is_none());
    }
}
