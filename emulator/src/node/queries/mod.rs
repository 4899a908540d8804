//! Queries the SDK sends to a node: account balance (free; also the SDK's ping), receipts
//! (free; polled until known), and the paid ones (info, records, contents, local calls: a
//! cost query first, then the answer with its payment; `payment` checks and submits it).
//! Here the dispatch and the response headers; the answers by family: `accounts`,
//! `records` (receipts and records), `entities` (files, tokens, NFTs, topics, schedules),
//! `contracts`.

mod accounts;
mod contracts;
mod entities;
mod records;

use crate::node::ingest::Node;
use crate::node::payment;
use crate::state::ledger::account_num;
use hedera_proto::services as proto;
use proto::query::Query as Q;
use proto::response::Response as R;
use proto::ResponseCodeEnum as Code;

fn header(code: Code, response_type: i32) -> Option<proto::ResponseHeader> {
    Some(proto::ResponseHeader {
        node_transaction_precheck_code: code as i32,
        response_type,
        cost: 0,
        state_proof: Vec::new(),
    })
}

/// Answer a query. A paid query's payment is checked and submitted first (`payment`); a
/// cost answer is the full answer's status with the cost and no body, so asking the cost of
/// a deleted or missing entity fails as asking for it does. Queries this emulator does not
/// model answer `NOT_SUPPORTED` in their own response type; `None` only for a query without
/// a response type.
pub fn answer(node: &Node, query: &proto::Query) -> Option<proto::Response> {
    let q = query.query.as_ref()?;
    let asked = payment::query_header(q);
    let t = response_type(asked);
    let cost_only = t == proto::ResponseType::CostAnswer as i32;
    let cost = {
        // Priced in tinycents, paid in tinybars at the rate in force.
        let ledger = node.ledger();
        let rate = ledger.rate(ledger.last_consensus.seconds);
        u64::try_from(rate.charge(i64::try_from(crate::fees::query_cost(q)).unwrap_or(i64::MAX)))
            .unwrap_or(0)
    };
    if !cost_only && cost > 0 {
        if let Err(code) = payment::pay(node, asked, cost) {
            let mut refused = payment::empty_response(q, header(code, t))?;
            if let Some(h) = payment::response_header_mut(&mut refused) {
                h.cost = cost;
            }
            return Some(respond(refused));
        }
    }
    let mut response = match q {
        Q::CryptogetAccountBalance(q) => R::CryptogetAccountBalance(accounts::balance(node, q)),
        Q::TransactionGetReceipt(q) => R::TransactionGetReceipt(records::receipt(node, q)),
        Q::CryptoGetInfo(q) => R::CryptoGetInfo(accounts::account_info(node, q)),
        Q::ConsensusGetTopicInfo(q) => R::ConsensusGetTopicInfo(entities::topic_info(node, q)),
        Q::TokenGetInfo(q) => R::TokenGetInfo(entities::token_info(node, q)),
        Q::ScheduleGetInfo(q) => R::ScheduleGetInfo(entities::schedule_info(node, q)),
        Q::TransactionGetRecord(q) => R::TransactionGetRecord(records::record(node, q)),
        Q::ContractCallLocal(q) => R::ContractCallLocal(contracts::call_local(node, q)),
        Q::TokenGetNftInfo(q) => R::TokenGetNftInfo(entities::nft_info(node, q)),
        Q::FileGetContents(q) => R::FileGetContents(entities::file_contents(node, q)),
        Q::FileGetInfo(q) => R::FileGetInfo(entities::file_info(node, q)),
        Q::CryptoGetAccountRecords(q) => {
            R::CryptoGetAccountRecords(records::account_records(node, q))
        }
        Q::NetworkGetVersionInfo(q) => R::NetworkGetVersionInfo(version_info(q)),
        Q::ContractGetInfo(q) => R::ContractGetInfo(contracts::contract_info(node, q)),
        Q::ContractGetBytecode(q) => {
            R::ContractGetBytecodeResponse(contracts::contract_bytecode(node, q))
        }
        other => payment::empty_response(other, header(Code::NotSupported, t))?,
    };
    if cost_only {
        let code = payment::response_header(&response)
            .map_or(Code::Ok as i32, |h| h.node_transaction_precheck_code);
        let mut h = header(Code::Ok, t);
        if let Some(h) = h.as_mut() {
            h.node_transaction_precheck_code = code;
        }
        response = payment::empty_response(q, h)?;
    }
    if let Some(h) = payment::response_header_mut(&mut response) {
        h.cost = cost;
    }
    Some(respond(response))
}

fn respond(response: R) -> proto::Response {
    proto::Response {
        response: Some(response),
    }
}

/// The response type asked for (the handlers answer in full; `answer` strips a cost answer).
fn response_type(h: Option<&proto::QueryHeader>) -> i32 {
    h.map_or(0, |h| h.response_type)
}

/// `NetworkGetVersionInfo`: the HAPI and services versions this emulator follows.
fn version_info(q: &proto::NetworkGetVersionInfoQuery) -> proto::NetworkGetVersionInfoResponse {
    let version = proto::SemanticVersion {
        major: 0,
        minor: 66,
        patch: 0,
        ..Default::default()
    };
    proto::NetworkGetVersionInfoResponse {
        header: header(Code::Ok, response_type(q.header.as_ref())),
        hapi_proto_version: Some(version.clone()),
        hedera_services_version: Some(version),
    }
}

/// The payer of a query's payment transaction.
fn payment_payer(h: Option<&proto::QueryHeader>) -> Option<u64> {
    use prost::Message;
    let payment = h?.payment.as_ref()?;
    let body_bytes = if !payment.signed_transaction_bytes.is_empty() {
        proto::SignedTransaction::decode(payment.signed_transaction_bytes.as_slice())
            .ok()?
            .body_bytes
    } else {
        #[allow(deprecated)]
        payment.body_bytes.clone()
    };
    let body = proto::TransactionBody::decode(body_bytes.as_slice()).ok()?;
    account_num(body.transaction_id?.account_id.as_ref()?)
}
