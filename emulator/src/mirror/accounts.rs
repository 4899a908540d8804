//! `/accounts/{id}` and what hangs off it (tokens, NFTs, pending and outstanding airdrops,
//! allowances of each kind), and `/balances`.

use super::contracts::{contract_account_json, evm_entity};
use super::{account_ledger, b64, bad_request, entity_num, lagging, not_found, Refusal, Shared};
use crate::node::ingest::Node;
use crate::state::keys::mirror_key;
use crate::state::ledger::{EntityId, Ledger, Ts};
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};
use std::collections::HashMap;

pub(super) fn account_json(ledger: &Ledger, num: u64) -> Option<Value> {
    let a = ledger.accounts.get(&num)?;
    Some(json!({
        "account": EntityId(num),
        "alias": null,
        "auto_renew_period": a.auto_renew_period,
        "balance": {"balance": a.balance, "timestamp": ledger.last_consensus.to_string(), "tokens": token_balances(ledger, num)},
        "created_timestamp": a.created.to_string(),
        "decline_reward": a.decline_reward,
        "deleted": a.deleted,
        "ethereum_nonce": 0,
        "evm_address": a.evm_address.as_ref().map_or_else(|| format!("0x{num:040x}"), |alias| format!("0x{alias}")),
        "expiry_timestamp": Ts { seconds: a.created.seconds + a.auto_renew_period, nanos: a.created.nanos }.to_string(),
        "key": mirror_key(&a.key.to_proto()),
        "max_automatic_token_associations": a.max_automatic_token_associations,
        "memo": a.memo,
        "pending_reward": 0,
        "receiver_sig_required": a.receiver_sig_required,
        "staked_account_id": null,
        "staked_node_id": null,
        "stake_period_start": null,
    }))
}

/// `[{token_id, balance}]` of an account's associations.
pub(super) fn token_balances(ledger: &Ledger, account: u64) -> Vec<Value> {
    ledger
        .rels
        .get(&account)
        .map(|rels| {
            rels.iter()
                .map(|(t, r)| json!({"token_id": EntityId(*t), "balance": r.balance}))
                .collect()
        })
        .unwrap_or_default()
}

pub(super) async fn account_tokens(
    State(node): Shared,
    Path(id): Path<String>,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Response, Refusal> {
    let filter = match q.get("token.id").filter(|t| !t.is_empty()) {
        Some(t) => match entity_num(t.trim_start_matches("eq:")) {
            Some(n) => Some(n),
            None => return Err(Refusal::BadRequest("token.id")),
        },
        None => None,
    };
    let (ledger, num) = account_ledger(&node, &id)?;
    let tokens: Vec<Value> = ledger
        .rels
        .get(&num)
        .into_iter()
        .flatten()
        .filter(|(t, _)| filter.is_none_or(|f| f == **t))
        .map(|(t, r)| {
            let token = &ledger.tokens[t];
            json!({
                "automatic_association": r.automatic,
                "balance": r.balance,
                "created_timestamp": r.created.to_string(),
                "decimals": token.decimals,
                "freeze_status": if token.freeze_key.is_none() { "NOT_APPLICABLE" } else if r.frozen { "FROZEN" } else { "UNFROZEN" },
                "kyc_status": if token.kyc_key.is_none() { "NOT_APPLICABLE" } else if r.kyc_granted { "GRANTED" } else { "REVOKED" },
                "token_id": EntityId(*t),
            })
        })
        .collect();
    Ok(Json(json!({"tokens": tokens, "links": {"next": null}})).into_response())
}

pub(super) async fn account_nfts(
    State(node): Shared,
    Path(id): Path<String>,
) -> Result<Response, Refusal> {
    let (ledger, num) = account_ledger(&node, &id)?;
    let nfts: Vec<Value> = ledger
        .nfts
        .iter()
        .flat_map(|(t, serials)| serials.iter().map(move |(s, n)| (*t, *s, n)))
        .filter(|(_, _, n)| n.owner == num)
        .map(|(t, serial, n)| {
            json!({
                "account_id": EntityId(num),
                "created_timestamp": n.created.to_string(),
                "delegating_spender": null,
                "deleted": false,
                "metadata": b64(&n.metadata),
                "modified_timestamp": n.modified.to_string(),
                "serial_number": serial,
                "spender": n.spender.map(EntityId),
                "token_id": EntityId(t),
            })
        })
        .collect();
    Ok(Json(json!({"nfts": nfts, "links": {"next": null}})).into_response())
}

pub(super) fn airdrops(node: &Node, id: &str, by_receiver: bool) -> Result<Response, Refusal> {
    let (ledger, num) = account_ledger(node, id)?;
    let airdrops: Vec<Value> = ledger
        .pending_airdrops
        .iter()
        .filter(|p| {
            if by_receiver {
                p.receiver == num
            } else {
                p.sender == num
            }
        })
        .map(|p| {
            json!({
                "amount": if p.serial.is_some() { Value::Null } else { json!(p.amount) },
                "receiver_id": EntityId(p.receiver),
                "sender_id": EntityId(p.sender),
                "serial_number": p.serial,
                "timestamp": {"from": p.created.to_string(), "to": null},
                "token_id": EntityId(p.token),
            })
        })
        .collect();
    Ok(Json(json!({"airdrops": airdrops, "links": {"next": null}})).into_response())
}

pub(super) async fn airdrops_pending(
    State(node): Shared,
    Path(id): Path<String>,
) -> Result<Response, Refusal> {
    airdrops(&node, &id, true)
}

pub(super) async fn airdrops_outstanding(
    State(node): Shared,
    Path(id): Path<String>,
) -> Result<Response, Refusal> {
    airdrops(&node, &id, false)
}

pub(super) async fn allowances_crypto(
    State(node): Shared,
    Path(id): Path<String>,
) -> Result<Response, Refusal> {
    let (ledger, num) = account_ledger(&node, &id)?;
    let allowances: Vec<Value> = ledger
        .hbar_allowances
        .get(&num)
        .into_iter()
        .flatten()
        .map(|(spender, amount)| {
            json!({"amount": amount, "amount_granted": amount, "owner": EntityId(num), "spender": EntityId(*spender), "timestamp": {"from": ledger.last_consensus.to_string(), "to": null}})
        })
        .collect();
    Ok(Json(json!({"allowances": allowances, "links": {"next": null}})).into_response())
}

pub(super) async fn allowances_tokens(
    State(node): Shared,
    Path(id): Path<String>,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Response, Refusal> {
    let spender_filter = q
        .get("spender.id")
        .and_then(|s| entity_num(s.trim_start_matches("eq:")));
    let (ledger, num) = account_ledger(&node, &id)?;
    let allowances: Vec<Value> = ledger
        .token_allowances
        .get(&num)
        .into_iter()
        .flatten()
        .flat_map(|(token, spenders)| spenders.iter().map(move |(s, a)| (*token, *s, *a)))
        .filter(|(_, s, _)| spender_filter.is_none_or(|f| f == *s))
        .map(|(token, spender, amount)| {
            json!({"amount": amount, "amount_granted": amount, "owner": EntityId(num), "spender": EntityId(spender), "token_id": EntityId(token), "timestamp": {"from": ledger.last_consensus.to_string(), "to": null}})
        })
        .collect();
    Ok(Json(json!({"allowances": allowances, "links": {"next": null}})).into_response())
}

pub(super) async fn allowances_nfts(
    State(node): Shared,
    Path(id): Path<String>,
) -> Result<Response, Refusal> {
    let (ledger, num) = account_ledger(&node, &id)?;
    let allowances: Vec<Value> = ledger
        .nft_approvals_for_all
        .get(&num)
        .into_iter()
        .flatten()
        .flat_map(|(token, spenders)| spenders.iter().map(move |s| (*token, *s)))
        .map(|(token, spender)| {
            json!({"approved_for_all": true, "owner": EntityId(num), "spender": EntityId(spender), "token_id": EntityId(token), "timestamp": {"from": ledger.last_consensus.to_string(), "to": null}})
        })
        .collect();
    Ok(Json(json!({"allowances": allowances, "links": {"next": null}})).into_response())
}

pub(super) async fn account(State(node): Shared, Path(id): Path<String>) -> Response {
    let ledger = node.ledger();
    // `0.0.N`, or an EVM address: an alias, a contract's address or a long-zero address.
    let hex = id.strip_prefix("0x").unwrap_or(&id);
    let is_address = hex.len() == 40 && hex.bytes().all(|b| b.is_ascii_hexdigit());
    let Some(num) = entity_num(&id).or_else(|| evm_entity(&ledger, &id)) else {
        // An address no entity holds is not found; anything else is not an id.
        return if is_address {
            not_found()
        } else {
            bad_request("idOrAliasOrEvmAddress")
        };
    };
    // Contracts are accounts to the mirror too (`type` CONTRACT in its entity table).
    let created = ledger
        .accounts
        .get(&num)
        .map(|a| a.created)
        .or_else(|| ledger.contracts.get(&num).map(|c| c.created));
    match created {
        Some(created) if !lagging(&node, created) => {
            let mut body = account_json(&ledger, num)
                .or_else(|| contract_account_json(&ledger, num))
                .expect("the entity exists");
            body["transactions"] = json!([]);
            body["links"] = json!({"next": null});
            Json(body).into_response()
        }
        _ => not_found(),
    }
}

pub(super) async fn balances(
    State(node): Shared,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let ledger = node.ledger();
    let filter = match q.get("account.id") {
        Some(text) => match entity_num(text.trim_start_matches("eq:")) {
            Some(n) => Some(n),
            None => return bad_request("account.id"),
        },
        None => None,
    };
    let rows: Vec<Value> = ledger
        .accounts
        .values()
        .filter(|a| filter.is_none_or(|n| n == a.num))
        .map(|a| json!({"account": EntityId(a.num), "balance": a.balance, "tokens": token_balances(&ledger, a.num)}))
        .collect();
    Json(json!({"timestamp": ledger.last_consensus.to_string(), "balances": rows, "links": {"next": null}})).into_response()
}
