//! `/contracts/{id}`, `/contracts/call` (the EVM, read-only), `/contracts/{id}/results` and
//! `/contracts/results/{id}`.

use super::transactions::parse_tx_id;
use super::{bad_request, entity_num, key_json, lagging, not_found, visible, Shared};
use crate::state::ledger::{EntityId, Ledger, Ts, TxRecord};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

/// A contract as `/accounts/{id}` shows it.
pub(super) fn contract_account_json(ledger: &Ledger, num: u64) -> Option<Value> {
    let c = ledger.contracts.get(&num)?;
    Some(json!({
        "account": EntityId(num),
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
pub(super) async fn contract_call(State(node): Shared, Json(body): Json<Value>) -> Response {
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
    let mut ledger = node.ledger();
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

/// A contract by `0.0.N` or by its long-zero EVM address (`0x` + 40 hex digits).
/// The entity an EVM address (`0x` + 40 hex digits) names: long-zero or a contract's alias.
pub(super) fn evm_entity(ledger: &Ledger, text: &str) -> Option<u64> {
    let hex = text.strip_prefix("0x").unwrap_or(text);
    if hex.len() != 40 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let bytes = hex::decode(hex).ok()?;
    let address = revm::primitives::Address::from_slice(&bytes);
    crate::evm::entity_of(ledger, &address).or_else(|| crate::evm::long_zero_num(&address))
}

pub(super) async fn contract(State(node): Shared, Path(id): Path<String>) -> Response {
    let ledger = node.ledger();
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
    let c = match visible(&node, &ledger.contracts, num, |e| e.created) {
        Ok(c) => c,
        Err(refusal) => return refusal.into_response(),
    };
    let expiration = Ts {
        seconds: c.created.seconds + c.auto_renew_period,
        nanos: c.created.nanos,
    };
    Json(json!({
        "admin_key": key_json(&c.admin_key),
        "auto_renew_account": c.auto_renew_account.map(EntityId),
        "auto_renew_period": c.auto_renew_period,
        "contract_id": EntityId(num),
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

/// One contract result as the mirror writes it (`/contracts/results/{id}` adds the logs).
pub(super) fn contract_result_json(ledger: &Ledger, r: &TxRecord, full: bool) -> Option<Value> {
    let c = r.contract_result.as_ref()?;
    let address = |num: u64| format!("{:#x}", crate::evm::address_of(ledger, num));
    let mut body = json!({
        "address": address(c.contract),
        "amount": c.amount,
        "bloom": "0x",
        "call_result": format!("0x{}", hex::encode(&c.output)),
        "contract_id": EntityId(c.contract),
        "created_contract_ids": c.created.iter().map(|n| EntityId(*n)).collect::<Vec<_>>(),
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
                    "contract_id": EntityId(log.contract),
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
pub(super) async fn contract_result(State(node): Shared, Path(id): Path<String>) -> Response {
    let ledger = node.ledger();
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
pub(super) async fn contract_results(State(node): Shared, Path(id): Path<String>) -> Response {
    let ledger = node.ledger();
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
