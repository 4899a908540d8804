//! `/tokens/{id}`: a token with its keys, supplies and custom fees.

use super::{b64, id_param, key_json, visible, Refusal, Shared};
use crate::state::ledger::{EntityId, FeeKind};
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

pub(super) async fn token(
    State(node): Shared,
    Path(id): Path<String>,
) -> Result<Response, Refusal> {
    let num = id_param(&id, "tokenidOrAddress")?;
    let ledger = node.ledger();
    let t = visible(&node, &ledger.tokens, num, |e| e.created)?;
    Ok(Json(json!({
        "admin_key": key_json(&t.admin_key),
        "auto_renew_account": t.auto_renew_account.map(EntityId),
        "auto_renew_period": t.auto_renew_period,
        "created_timestamp": t.created.to_string(),
        "custom_fees": token_fees_json(t),
        "decimals": t.decimals.to_string(),
        "deleted": t.deleted,
        "expiry_timestamp": i128::from(t.expiry) * 1_000_000_000,
        "fee_schedule_key": key_json(&t.fee_schedule_key),
        "freeze_default": t.freeze_default,
        "freeze_key": key_json(&t.freeze_key),
        "initial_supply": t.initial_supply.to_string(),
        "kyc_key": key_json(&t.kyc_key),
        "max_supply": t.max_supply.unwrap_or(0).to_string(),
        "memo": t.memo,
        "metadata": b64(&t.metadata),
        "metadata_key": key_json(&t.metadata_key),
        "modified_timestamp": t.modified.to_string(),
        "name": t.name,
        "pause_key": key_json(&t.pause_key),
        "pause_status": if t.pause_key.is_none() { "NOT_APPLICABLE" } else if t.paused { "PAUSED" } else { "UNPAUSED" },
        "supply_key": key_json(&t.supply_key),
        "supply_type": if t.max_supply.is_some() { "FINITE" } else { "INFINITE" },
        "symbol": t.symbol,
        "token_id": EntityId(num),
        "total_supply": t.total_supply.to_string(),
        "treasury_account_id": EntityId(t.treasury),
        "type": if t.nft { "NON_FUNGIBLE_UNIQUE" } else { "FUNGIBLE_COMMON" },
        "wipe_key": key_json(&t.wipe_key),
    }))
    .into_response())
}

/// A token's custom fees in the mirror's shape (`/api/v1/tokens/{id}`).
pub(super) fn token_fees_json(t: &crate::state::ledger::Token) -> Value {
    let (mut fixed, mut fractional, mut royalty) = (Vec::new(), Vec::new(), Vec::new());
    for f in &t.custom_fees {
        let collector = EntityId(f.collector);
        match f.kind {
            FeeKind::Fixed(fee) => fixed.push(json!({
                "all_collectors_are_exempt": f.all_collectors_exempt,
                "amount": fee.amount,
                "collector_account_id": collector,
                "denominating_token_id": fee.token.map(EntityId),
            })),
            FeeKind::Fractional {
                numerator,
                denominator,
                minimum,
                maximum,
                net_of_transfers,
            } => fractional.push(json!({
                "all_collectors_are_exempt": f.all_collectors_exempt,
                "amount": {"numerator": numerator, "denominator": denominator},
                "collector_account_id": collector,
                "denominating_token_id": EntityId(t.num),
                "maximum": (maximum > 0).then_some(maximum),
                "minimum": minimum,
                "net_of_transfers": net_of_transfers,
            })),
            FeeKind::Royalty {
                numerator,
                denominator,
                fallback,
            } => royalty.push(json!({
                "all_collectors_are_exempt": f.all_collectors_exempt,
                "amount": {"numerator": numerator, "denominator": denominator},
                "collector_account_id": collector,
                "fallback_fee": fallback.map(|fee| json!({
                    "amount": fee.amount,
                    "denominating_token_id": fee.token.map(EntityId),
                })),
            })),
        }
    }
    json!({
        "created_timestamp": t.created.to_string(),
        "fixed_fees": fixed,
        "fractional_fees": fractional,
        "royalty_fees": royalty,
    })
}
