//! The mirror-node REST API over the ledger, with the mirror's JSON shapes: snake_case keys,
//! `"0.0.N"` ids, `"seconds.nanos"` timestamps, integer amounts, base64 messages and hashes,
//! `links.next`, and the exact 404 body.

use crate::ingest::Node;
use crate::keys::mirror_key;
use crate::ledger::{FeeKind, Ledger, Ts, TxId, TxRecord};
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::Engine;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Arc;

type Shared = State<Arc<Node>>;

pub fn router(node: Arc<Node>) -> Router {
    Router::new()
        .route("/api/v1/accounts/:id", get(account))
        .route("/api/v1/accounts/:id/tokens", get(account_tokens))
        .route("/api/v1/accounts/:id/nfts", get(account_nfts))
        .route(
            "/api/v1/accounts/:id/airdrops/pending",
            get(airdrops_pending),
        )
        .route(
            "/api/v1/accounts/:id/airdrops/outstanding",
            get(airdrops_outstanding),
        )
        .route(
            "/api/v1/accounts/:id/allowances/crypto",
            get(allowances_crypto),
        )
        .route(
            "/api/v1/accounts/:id/allowances/tokens",
            get(allowances_tokens),
        )
        .route("/api/v1/accounts/:id/allowances/nfts", get(allowances_nfts))
        .route("/api/v1/tokens/:id", get(token))
        .route("/api/v1/schedules/:id", get(schedule))
        .route("/api/v1/contracts/call", post(contract_call))
        .route("/api/v1/contracts/:id", get(contract))
        .route("/api/v1/contracts/:id/results", get(contract_results))
        .route("/api/v1/contracts/results/:id", get(contract_result))
        .route("/api/v1/balances", get(balances))
        .route("/api/v1/transactions/:id", get(transaction))
        .route("/api/v1/topics/:id", get(topic))
        .route("/api/v1/topics/:id/messages", get(topic_messages))
        .route("/api/v1/network/exchangerate", get(exchange_rate))
        .route("/api/v1/network/registered-nodes", get(registered_nodes))
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

/// Why a request for an account's resources is refused.
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
    let ledger = node.ledger.lock().unwrap_or_else(|e| e.into_inner());
    if !ledger.accounts.contains_key(&num) {
        return Err(Refusal::NotFound);
    }
    Ok((ledger, num))
}

fn lagging(node: &Node, created: Ts) -> bool {
    let lag = node
        .faults
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .mirror_lag;
    !lag.is_zero() && Ts::now().as_nanos() - created.as_nanos() < lag.as_nanos() as i128
}

fn account_json(ledger: &Ledger, num: u64) -> Option<Value> {
    let a = ledger.accounts.get(&num)?;
    Some(json!({
        "account": format!("0.0.{num}"),
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
fn token_balances(ledger: &Ledger, account: u64) -> Vec<Value> {
    ledger
        .rels
        .get(&account)
        .map(|rels| {
            rels.iter()
                .map(|(t, r)| json!({"token_id": format!("0.0.{t}"), "balance": r.balance}))
                .collect()
        })
        .unwrap_or_default()
}

fn key_json(key: &Option<crate::ledger::KeyBytes>) -> Value {
    key.as_ref()
        .map_or(Value::Null, |k| mirror_key(&k.to_proto()))
}

async fn token(State(node): Shared, Path(id): Path<String>) -> Response {
    let Some(num) = entity_num(&id) else {
        return bad_request("tokenidOrAddress");
    };
    let ledger = node.ledger.lock().unwrap_or_else(|e| e.into_inner());
    let Some(t) = ledger
        .tokens
        .get(&num)
        .filter(|t| !lagging(&node, t.created))
    else {
        return not_found();
    };
    Json(json!({
        "admin_key": key_json(&t.admin_key),
        "auto_renew_account": t.auto_renew_account.map(|a| format!("0.0.{a}")),
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
        "token_id": format!("0.0.{num}"),
        "total_supply": t.total_supply.to_string(),
        "treasury_account_id": format!("0.0.{}", t.treasury),
        "type": if t.nft { "NON_FUNGIBLE_UNIQUE" } else { "FUNGIBLE_COMMON" },
        "wipe_key": key_json(&t.wipe_key),
    }))
    .into_response()
}

async fn account_tokens(
    State(node): Shared,
    Path(id): Path<String>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let filter = match q.get("token.id").filter(|t| !t.is_empty()) {
        Some(t) => match entity_num(t.trim_start_matches("eq:")) {
            Some(n) => Some(n),
            None => return bad_request("token.id"),
        },
        None => None,
    };
    let (ledger, num) = match account_ledger(&node, &id) {
        Ok(found) => found,
        Err(refusal) => return refusal.into_response(),
    };
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
                "token_id": format!("0.0.{t}"),
            })
        })
        .collect();
    Json(json!({"tokens": tokens, "links": {"next": null}})).into_response()
}

async fn account_nfts(State(node): Shared, Path(id): Path<String>) -> Response {
    let (ledger, num) = match account_ledger(&node, &id) {
        Ok(found) => found,
        Err(refusal) => return refusal.into_response(),
    };
    let nfts: Vec<Value> = ledger
        .nfts
        .iter()
        .flat_map(|(t, serials)| serials.iter().map(move |(s, n)| (*t, *s, n)))
        .filter(|(_, _, n)| n.owner == num)
        .map(|(t, serial, n)| {
            json!({
                "account_id": format!("0.0.{num}"),
                "created_timestamp": n.created.to_string(),
                "delegating_spender": null,
                "deleted": false,
                "metadata": b64(&n.metadata),
                "modified_timestamp": n.modified.to_string(),
                "serial_number": serial,
                "spender": n.spender.map(|s| format!("0.0.{s}")),
                "token_id": format!("0.0.{t}"),
            })
        })
        .collect();
    Json(json!({"nfts": nfts, "links": {"next": null}})).into_response()
}

fn airdrops(node: &Node, id: &str, by_receiver: bool) -> Response {
    let (ledger, num) = match account_ledger(node, id) {
        Ok(found) => found,
        Err(refusal) => return refusal.into_response(),
    };
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
                "receiver_id": format!("0.0.{}", p.receiver),
                "sender_id": format!("0.0.{}", p.sender),
                "serial_number": p.serial,
                "timestamp": {"from": p.created.to_string(), "to": null},
                "token_id": format!("0.0.{}", p.token),
            })
        })
        .collect();
    Json(json!({"airdrops": airdrops, "links": {"next": null}})).into_response()
}

async fn airdrops_pending(State(node): Shared, Path(id): Path<String>) -> Response {
    airdrops(&node, &id, true)
}

async fn airdrops_outstanding(State(node): Shared, Path(id): Path<String>) -> Response {
    airdrops(&node, &id, false)
}

async fn allowances_crypto(State(node): Shared, Path(id): Path<String>) -> Response {
    let (ledger, num) = match account_ledger(&node, &id) {
        Ok(found) => found,
        Err(refusal) => return refusal.into_response(),
    };
    let allowances: Vec<Value> = ledger
        .hbar_allowances
        .get(&num)
        .into_iter()
        .flatten()
        .map(|(spender, amount)| {
            json!({"amount": amount, "amount_granted": amount, "owner": format!("0.0.{num}"), "spender": format!("0.0.{spender}"), "timestamp": {"from": ledger.last_consensus.to_string(), "to": null}})
        })
        .collect();
    Json(json!({"allowances": allowances, "links": {"next": null}})).into_response()
}

async fn allowances_tokens(
    State(node): Shared,
    Path(id): Path<String>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let spender_filter = q
        .get("spender.id")
        .and_then(|s| entity_num(s.trim_start_matches("eq:")));
    let (ledger, num) = match account_ledger(&node, &id) {
        Ok(found) => found,
        Err(refusal) => return refusal.into_response(),
    };
    let allowances: Vec<Value> = ledger
        .token_allowances
        .get(&num)
        .into_iter()
        .flatten()
        .flat_map(|(token, spenders)| spenders.iter().map(move |(s, a)| (*token, *s, *a)))
        .filter(|(_, s, _)| spender_filter.is_none_or(|f| f == *s))
        .map(|(token, spender, amount)| {
            json!({"amount": amount, "amount_granted": amount, "owner": format!("0.0.{num}"), "spender": format!("0.0.{spender}"), "token_id": format!("0.0.{token}"), "timestamp": {"from": ledger.last_consensus.to_string(), "to": null}})
        })
        .collect();
    Json(json!({"allowances": allowances, "links": {"next": null}})).into_response()
}

async fn allowances_nfts(State(node): Shared, Path(id): Path<String>) -> Response {
    let (ledger, num) = match account_ledger(&node, &id) {
        Ok(found) => found,
        Err(refusal) => return refusal.into_response(),
    };
    let allowances: Vec<Value> = ledger
        .nft_approvals_for_all
        .get(&num)
        .into_iter()
        .flatten()
        .flat_map(|(token, spenders)| spenders.iter().map(move |s| (*token, *s)))
        .map(|(token, spender)| {
            json!({"approved_for_all": true, "owner": format!("0.0.{num}"), "spender": format!("0.0.{spender}"), "token_id": format!("0.0.{token}"), "timestamp": {"from": ledger.last_consensus.to_string(), "to": null}})
        })
        .collect();
    Json(json!({"allowances": allowances, "links": {"next": null}})).into_response()
}

async fn schedule(State(node): Shared, Path(id): Path<String>) -> Response {
    let Some(num) = entity_num(&id) else {
        return bad_request("scheduleId");
    };
    let ledger = node.ledger.lock().unwrap_or_else(|e| e.into_inner());
    let Some(s) = ledger
        .schedules
        .get(&num)
        .filter(|s| !lagging(&node, s.created))
    else {
        return not_found();
    };
    let signatures: Vec<Value> = s
        .signatories
        .iter()
        .filter_map(|k| hex::decode(k).ok())
        .map(|k| {
            let kind = if k.len() == 32 { "ED25519" } else { "ECDSA_SECP256K1" };
            json!({"consensus_timestamp": s.created.to_string(), "public_key_prefix": b64(&k), "signature": null, "type": kind})
        })
        .collect();
    Json(json!({
        "admin_key": key_json(&s.admin_key),
        "consensus_timestamp": s.created.to_string(),
        "creator_account_id": format!("0.0.{}", s.creator),
        "deleted": s.deleted.is_some(),
        "executed_timestamp": s.executed.map(|t| t.to_string()),
        "expiration_time": s.expiration.to_string(),
        "memo": s.memo,
        "payer_account_id": format!("0.0.{}", s.payer),
        "schedule_id": format!("0.0.{num}"),
        "signatures": signatures,
        "transaction_body": b64(&s.body),
        "wait_for_expiry": s.wait_for_expiry,
    }))
    .into_response()
}

async fn account(State(node): Shared, Path(id): Path<String>) -> Response {
    let ledger = node.ledger.lock().unwrap_or_else(|e| e.into_inner());
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

/// A contract as `/accounts/{id}` shows it.
fn contract_account_json(ledger: &Ledger, num: u64) -> Option<Value> {
    let c = ledger.contracts.get(&num)?;
    Some(json!({
        "account": format!("0.0.{num}"),
        "alias": null,
        "auto_renew_period": c.auto_renew_period,
        "balance": {"balance": c.balance, "timestamp": ledger.last_consensus.to_string(), "tokens": []},
        "created_timestamp": c.created.to_string(),
        "decline_reward": false,
        "deleted": c.deleted,
        "ethereum_nonce": 0,
        "evm_address": format!("{:#x}", crate::evm::address_of(ledger, num)),
        "expiry_timestamp": Ts { seconds: c.created.seconds + c.auto_renew_period, nanos: c.created.nanos }.to_string(),
        "key": key_json(&c.admin_key),
        "max_automatic_token_associations": c.max_automatic_token_associations,
        "memo": c.memo,
        "pending_reward": 0,
        "receiver_sig_required": false,
        "staked_account_id": null,
        "staked_node_id": null,
        "stake_period_start": null,
    }))
}

/// `POST /contracts/call`: a read-only call (the web3 module's `eth_call`), nothing applied.
/// `{data, to, from?, gas?, value?}` → `{result}`; a revert answers 400 with the mirror's
/// `CONTRACT_REVERT_EXECUTED` and the revert data.
async fn contract_call(State(node): Shared, Json(body): Json<Value>) -> Response {
    let field = |name: &str| body[name].as_str().map(str::to_owned);
    let data = match field("data") {
        None => Vec::new(),
        Some(text) => match hex::decode(text.trim_start_matches("0x")) {
            Ok(data) => data,
            Err(_) => return bad_request("data"),
        },
    };
    let gas = body["gas"].as_u64().unwrap_or(crate::evm::MAX_GAS);
    if gas > crate::evm::MAX_GAS {
        return bad_request("gas");
    }
    let value = body["value"].as_i64().unwrap_or(0);
    let mut ledger = node.ledger.lock().unwrap_or_else(|e| e.into_inner());
    let Some(to) = field("to") else {
        return bad_request("to");
    };
    if to.trim_start_matches("0x").len() != 40 {
        return bad_request("to");
    }
    let sender = field("from")
        .and_then(|from| evm_entity(&ledger, &from))
        .unwrap_or(0);
    // `estimate: true` asks for the gas the call takes instead of its output (hex).
    let estimate = body["estimate"].as_bool().unwrap_or(false);
    // An address no contract holds has no code: the call returns nothing, for the
    // intrinsic gas of a transaction carrying this data.
    let Some(num) = evm_entity(&ledger, &to).filter(|n| ledger.contracts.contains_key(n)) else {
        if estimate {
            let intrinsic: u64 = 21_000
                + data
                    .iter()
                    .map(|b| if *b == 0 { 4 } else { 16 })
                    .sum::<u64>();
            return Json(json!({"result": format!("0x{intrinsic:x}")})).into_response();
        }
        return Json(json!({"result": "0x"})).into_response();
    };
    let run = crate::evm::run(
        &mut ledger,
        sender,
        crate::evm::Target::Call { num, data },
        value,
        gas,
        false,
    );
    if run.status == hedera_proto::services::ResponseCodeEnum::Success {
        if estimate {
            return Json(json!({"result": format!("0x{:x}", run.result.gas_used)})).into_response();
        }
        return Json(json!({"result": format!("0x{}", hex::encode(&run.result.output))}))
            .into_response();
    }
    (
        StatusCode::BAD_REQUEST,
        Json(json!({"_status": {"messages": [{
            "message": run.status.as_str_name(),
            "detail": run.result.error,
            "data": format!("0x{}", hex::encode(&run.result.output)),
        }]}})),
    )
        .into_response()
}

async fn balances(State(node): Shared, Query(q): Query<HashMap<String, String>>) -> Response {
    let ledger = node.ledger.lock().unwrap_or_else(|e| e.into_inner());
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
        .map(|a| json!({"account": format!("0.0.{}", a.num), "balance": a.balance, "tokens": token_balances(&ledger, a.num)}))
        .collect();
    Json(json!({"timestamp": ledger.last_consensus.to_string(), "balances": rows, "links": {"next": null}})).into_response()
}

/// `0.0.x-sss-nnn` (mirror form) or `0.0.x@sss.nnn` (SDK form).
fn parse_tx_id(text: &str) -> Option<TxId> {
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

async fn transaction(
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
    let ledger = node.ledger.lock().unwrap_or_else(|e| e.into_inner());
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
                    "receiver_account_id": format!("0.0.{to}"),
                    "sender_account_id": (*from != 0).then(|| format!("0.0.{from}")),
                    "serial_number": serial,
                    "token_id": format!("0.0.{t}"),
                })).collect::<Vec<_>>(),
                "node": format!("0.0.{}", r.node),
                "nonce": r.id.nonce,
                "parent_consensus_timestamp": null,
                "result": r.result,
                "scheduled": r.id.scheduled,
                "staking_reward_transfers": [],
                "token_transfers": r.token_transfers.iter().map(|(t, a, amount)| json!({"token_id": format!("0.0.{t}"), "account": format!("0.0.{a}"), "amount": amount, "is_approval": false})).collect::<Vec<_>>(),
                "transaction_hash": b64(&r.hash),
                "transaction_id": r.id.mirror_form(),
                "transfers": r.transfers.iter().map(|(a, amount)| json!({"account": format!("0.0.{a}"), "amount": amount, "is_approval": false})).collect::<Vec<_>>(),
                "valid_duration_seconds": r.valid_duration_seconds.to_string(),
                "valid_start_timestamp": r.id.valid_start.to_string(),
                "assessed_custom_fees": r.assessed_custom_fees.iter().map(|f| json!({
                    "amount": f.amount,
                    "collector_account_id": format!("0.0.{}", f.collector),
                    "effective_payer_account_ids": f.payers.iter().map(|p| format!("0.0.{p}")).collect::<Vec<_>>(),
                    "token_id": f.token.map(|t| format!("0.0.{t}")),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    if rows.is_empty() {
        return not_found();
    }
    Json(json!({"transactions": rows})).into_response()
}

/// A token's custom fees in the mirror's shape (`/api/v1/tokens/{id}`).
fn token_fees_json(t: &crate::ledger::Token) -> Value {
    let (mut fixed, mut fractional, mut royalty) = (Vec::new(), Vec::new(), Vec::new());
    let id = |n: u64| format!("0.0.{n}");
    for f in &t.custom_fees {
        let collector = id(f.collector);
        match f.kind {
            FeeKind::Fixed(fee) => fixed.push(json!({
                "all_collectors_are_exempt": f.all_collectors_exempt,
                "amount": fee.amount,
                "collector_account_id": collector,
                "denominating_token_id": fee.token.map(id),
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
                "denominating_token_id": id(t.num),
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
                    "denominating_token_id": fee.token.map(id),
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

async fn topic(State(node): Shared, Path(id): Path<String>) -> Response {
    let Some(num) = entity_num(&id) else {
        return bad_request("topic.id");
    };
    let ledger = node.ledger.lock().unwrap_or_else(|e| e.into_inner());
    let Some(t) = ledger
        .topics
        .get(&num)
        .filter(|t| !lagging(&node, t.created))
    else {
        return not_found();
    };
    Json(json!({
        "admin_key": key_json(&t.admin_key),
        "auto_renew_account": t.auto_renew_account.map(|a| format!("0.0.{a}")),
        "auto_renew_period": t.auto_renew_period,
        "created_timestamp": t.created.to_string(),
        "custom_fees": {
            "created_timestamp": t.created.to_string(),
            "fixed_fees": t.custom_fees.iter().filter_map(|f| match f.kind {
                FeeKind::Fixed(fixed) => Some(json!({
                    "amount": fixed.amount,
                    "collector_account_id": format!("0.0.{}", f.collector),
                    "denominating_token_id": fixed.token.map(|d| format!("0.0.{d}")),
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
        "topic_id": format!("0.0.{num}"),
        "sequence_number": t.sequence_number,
        "running_hash": b64(&t.running_hash),
    }))
    .into_response()
}

/// A contract by `0.0.N` or by its long-zero EVM address (`0x` + 40 hex digits).
/// The entity an EVM address (`0x` + 40 hex digits) names: long-zero or a contract's alias.
fn evm_entity(ledger: &Ledger, text: &str) -> Option<u64> {
    let hex = text.strip_prefix("0x").unwrap_or(text);
    if hex.len() != 40 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let bytes = hex::decode(hex).ok()?;
    let address = revm::primitives::Address::from_slice(&bytes);
    crate::evm::entity_of(ledger, &address).or_else(|| crate::evm::long_zero_num(&address))
}

async fn contract(State(node): Shared, Path(id): Path<String>) -> Response {
    let ledger = node.ledger.lock().unwrap_or_else(|e| e.into_inner());
    // An EVM address, with or without 0x (the SDKs' `populateAccountNum` sends it bare).
    let hex = id.strip_prefix("0x").unwrap_or(&id);
    let is_address = hex.len() == 40 && hex.bytes().all(|b| b.is_ascii_hexdigit());
    let num = if is_address {
        match evm_entity(&ledger, hex) {
            Some(num) => Some(num),
            None => return not_found(),
        }
    } else if id.starts_with("0x") {
        None
    } else {
        entity_num(&id)
    };
    let Some(num) = num else {
        return bad_request("contractid");
    };
    let Some(c) = ledger
        .contracts
        .get(&num)
        .filter(|c| !lagging(&node, c.created))
    else {
        return not_found();
    };
    let expiration = Ts {
        seconds: c.created.seconds + c.auto_renew_period,
        nanos: c.created.nanos,
    };
    Json(json!({
        "admin_key": key_json(&c.admin_key),
        "auto_renew_account": c.auto_renew_account.map(|a| format!("0.0.{a}")),
        "auto_renew_period": c.auto_renew_period,
        "contract_id": format!("0.0.{num}"),
        "created_timestamp": c.created.to_string(),
        "deleted": c.deleted,
        "evm_address": format!("{:#x}", crate::evm::address_of(&ledger, num)),
        "expiration_timestamp": expiration.to_string(),
        "file_id": null,
        "max_automatic_token_associations": c.max_automatic_token_associations,
        "memo": c.memo,
        "nonce": c.nonce,
        "obtainer_id": null,
        "permanent_removal": null,
        "proxy_account_id": null,
        "timestamp": {"from": c.created.to_string(), "to": null},
        "bytecode": format!("0x{}", hex::encode(&c.initcode)),
        "runtime_bytecode": format!("0x{}", hex::encode(&c.runtime_code)),
    }))
    .into_response()
}

/// `gte:1700000000.000000000` style filters.
fn timestamp_filter(value: &str) -> Option<(&str, Ts)> {
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

async fn topic_messages(
    State(node): Shared,
    Path(id): Path<String>,
    raw: axum::extract::RawQuery,
) -> Response {
    let Some(num) = entity_num(&id) else {
        return bad_request("topic.id");
    };
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
                None => return bad_request("timestamp"),
            },
            "sequencenumber" => {
                let (op, n) = value.split_once(':').unwrap_or(("eq", value));
                match n.parse::<u64>() {
                    Ok(n) => sequence_filters.push((op.to_owned(), n)),
                    Err(_) => return bad_request("sequencenumber"),
                }
            }
            "order" => {
                order_desc = match value {
                    "asc" => false,
                    "desc" => true,
                    _ => return bad_request("order"),
                }
            }
            "limit" => match value.parse::<usize>() {
                Ok(n) if (1..=100).contains(&n) => limit = n,
                _ => return bad_request("limit"),
            },
            _ => {}
        }
    }
    let ledger = node.ledger.lock().unwrap_or_else(|e| e.into_inner());
    let Some(t) = ledger
        .topics
        .get(&num)
        .filter(|t| !lagging(&node, t.created))
    else {
        return not_found();
    };
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
                        "account_id": format!("0.0.{}", initial.payer),
                        "nonce": initial.nonce,
                        "scheduled": initial.scheduled,
                        "transaction_valid_start": initial.valid_start.to_string(),
                    },
                    "number": number,
                    "total": total,
                })),
                "consensus_timestamp": m.consensus.to_string(),
                "message": b64(&m.message),
                "payer_account_id": format!("0.0.{}", m.payer),
                "running_hash": b64(&m.running_hash),
                "running_hash_version": 3,
                "sequence_number": m.sequence_number,
                "topic_id": format!("0.0.{num}"),
            })
        })
        .collect();
    Json(json!({"messages": messages, "links": {"next": next}})).into_response()
}

async fn registered_nodes(
    State(node): Shared,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    match crate::mirror_network::registered_nodes(&node, &q) {
        Ok(page) => Json(page).into_response(),
        Err(parameter) => bad_request(parameter),
    }
}

async fn exchange_rate(State(node): Shared) -> Response {
    let ledger = node.ledger.lock().unwrap_or_else(|e| e.into_inner());
    let expiry = (ledger.last_consensus.seconds / 3600 + 1) * 3600;
    let rate = |exp: i64| json!({"cent_equivalent": crate::ledger::CENT_EQUIVALENT, "expiration_time": exp, "hbar_equivalent": crate::ledger::HBAR_EQUIVALENT});
    Json(json!({
        "current_rate": rate(expiry),
        "next_rate": rate(expiry + 3600),
        "timestamp": ledger.last_consensus.to_string(),
    }))
    .into_response()
}

/// One contract result as the mirror writes it (`/contracts/results/{id}` adds the logs).
fn contract_result_json(ledger: &Ledger, r: &TxRecord, full: bool) -> Option<Value> {
    let c = r.contract_result.as_ref()?;
    let address = |num: u64| format!("{:#x}", crate::evm::address_of(ledger, num));
    let mut body = json!({
        "address": address(c.contract),
        "amount": c.amount,
        "bloom": "0x",
        "call_result": format!("0x{}", hex::encode(&c.output)),
        "contract_id": format!("0.0.{}", c.contract),
        "created_contract_ids": c.created.iter().map(|n| format!("0.0.{n}")).collect::<Vec<_>>(),
        "error_message": (!c.error.is_empty()).then(|| c.error.clone()),
        "from": address(c.sender),
        "function_parameters": format!("0x{}", hex::encode(&c.function_parameters)),
        "gas_consumed": c.gas_used,
        "gas_limit": c.gas_limit,
        "gas_used": c.gas_used,
        "hash": format!("0x{}", hex::encode(&r.hash[..r.hash.len().min(32)])),
        "result": r.result,
        "status": if r.result == "SUCCESS" { "0x1" } else { "0x0" },
        "timestamp": r.consensus.to_string(),
        "to": address(c.contract),
    });
    if full {
        body["logs"] = c
            .logs
            .iter()
            .enumerate()
            .map(|(index, log)| {
                json!({
                    "address": address(log.contract),
                    "bloom": "0x",
                    "contract_id": format!("0.0.{}", log.contract),
                    "data": format!("0x{}", hex::encode(&log.data)),
                    "index": index,
                    "topics": log.topics.iter().map(|t| format!("0x{t}")).collect::<Vec<_>>(),
                })
            })
            .collect();
        body["state_changes"] = json!([]);
        body["transaction_id"] = json!(r.id.mirror_form());
        body["nonce"] = json!(r.id.nonce);
    }
    Some(body)
}

/// `/contracts/results/{transactionIdOrHash}`: the result of one contract create or call.
async fn contract_result(State(node): Shared, Path(id): Path<String>) -> Response {
    let ledger = node.ledger.lock().unwrap_or_else(|e| e.into_inner());
    let found = match parse_tx_id(&id) {
        Some(tx) => ledger.records.iter().find(|r| {
            r.id.payer == tx.payer && r.id.valid_start == tx.valid_start && r.id.nonce == tx.nonce
        }),
        None => {
            let hash = id.strip_prefix("0x").unwrap_or(&id).to_ascii_lowercase();
            if hash.len() != 64 && hash.len() != 96 {
                return bad_request("transactionIdOrHash");
            }
            ledger
                .records
                .iter()
                .find(|r| hex::encode(&r.hash).starts_with(&hash))
        }
    };
    match found
        .filter(|r| !lagging(&node, r.consensus))
        .and_then(|r| contract_result_json(&ledger, r, true))
    {
        Some(body) => Json(body).into_response(),
        None => not_found(),
    }
}

/// `/contracts/{id}/results`: a contract's results, oldest first.
async fn contract_results(State(node): Shared, Path(id): Path<String>) -> Response {
    let ledger = node.ledger.lock().unwrap_or_else(|e| e.into_inner());
    let Some(num) = entity_num(&id).or_else(|| evm_entity(&ledger, &id)) else {
        return bad_request("contractId");
    };
    let results: Vec<Value> = ledger
        .records
        .iter()
        .filter(|r| {
            r.contract_result
                .as_ref()
                .is_some_and(|c| c.contract == num)
        })
        .filter(|r| !lagging(&node, r.consensus))
        .filter_map(|r| contract_result_json(&ledger, r, false))
        .collect();
    Json(json!({"results": results, "links": {"next": null}})).into_response()
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
