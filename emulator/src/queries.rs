//! Queries the SDK sends to a node: account balance (free; also the SDK's ping), receipts
//! (free; polled until known) and account info (paid: a cost query first, then the answer).

use crate::ingest::Node;
use crate::ledger::{account_id, account_num, TxId};
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

/// Answer a query, or `None` when this emulator does not serve that query.
pub fn answer(node: &Node, query: &proto::Query) -> Option<proto::Response> {
    let response = match query.query.as_ref()? {
        Q::CryptogetAccountBalance(q) => R::CryptogetAccountBalance(balance(node, q)),
        Q::TransactionGetReceipt(q) => R::TransactionGetReceipt(receipt(node, q)),
        Q::CryptoGetInfo(q) => R::CryptoGetInfo(account_info(node, q)),
        _ => return None,
    };
    Some(proto::Response {
        response: Some(response),
    })
}

fn balance(
    node: &Node,
    q: &proto::CryptoGetAccountBalanceQuery,
) -> proto::CryptoGetAccountBalanceResponse {
    use proto::crypto_get_account_balance_query::BalanceSource;
    let response_type = q.header.as_ref().map_or(0, |h| h.response_type);
    let num = match &q.balance_source {
        Some(BalanceSource::AccountId(id)) => account_num(id),
        _ => None,
    };
    let ledger = node.ledger.lock().unwrap_or_else(|e| e.into_inner());
    match num.and_then(|n| ledger.accounts.get(&n)) {
        None => proto::CryptoGetAccountBalanceResponse {
            header: header(Code::InvalidAccountId, response_type),
            ..Default::default()
        },
        Some(a) if a.deleted => proto::CryptoGetAccountBalanceResponse {
            header: header(Code::AccountDeleted, response_type),
            ..Default::default()
        },
        Some(a) => proto::CryptoGetAccountBalanceResponse {
            header: header(Code::Ok, response_type),
            account_id: Some(account_id(a.num)),
            balance: a.balance.max(0) as u64,
            ..Default::default()
        },
    }
}

fn receipt(
    node: &Node,
    q: &proto::TransactionGetReceiptQuery,
) -> proto::TransactionGetReceiptResponse {
    let response_type = q.header.as_ref().map_or(0, |h| h.response_type);
    let Some(id) = q.transaction_id.as_ref().and_then(TxId::from_proto) else {
        return proto::TransactionGetReceiptResponse {
            header: header(Code::InvalidTransactionId, response_type),
            ..Default::default()
        };
    };
    if node
        .faults
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take_receipt_unknown()
    {
        let unknown = proto::TransactionReceipt {
            status: Code::Unknown as i32,
            ..Default::default()
        };
        return proto::TransactionGetReceiptResponse {
            header: header(Code::Ok, response_type),
            receipt: Some(unknown),
            ..Default::default()
        };
    }
    let ledger = node.ledger.lock().unwrap_or_else(|e| e.into_inner());
    match ledger.receipts.get(&id.to_string()) {
        None => proto::TransactionGetReceiptResponse {
            header: header(Code::ReceiptNotFound, response_type),
            ..Default::default()
        },
        Some(r) => proto::TransactionGetReceiptResponse {
            header: header(Code::Ok, response_type),
            receipt: Some(r.to_proto()),
            ..Default::default()
        },
    }
}

fn account_info(node: &Node, q: &proto::CryptoGetInfoQuery) -> proto::CryptoGetInfoResponse {
    let response_type = q.header.as_ref().map_or(0, |h| h.response_type);
    if response_type == proto::ResponseType::CostAnswer as i32 {
        // Info queries are free here: the cost answer is 0 and no payment is required.
        return proto::CryptoGetInfoResponse {
            header: header(Code::Ok, response_type),
            ..Default::default()
        };
    }
    let ledger = node.ledger.lock().unwrap_or_else(|e| e.into_inner());
    let Some(account) = q
        .account_id
        .as_ref()
        .and_then(account_num)
        .and_then(|n| ledger.accounts.get(&n))
    else {
        return proto::CryptoGetInfoResponse {
            header: header(Code::InvalidAccountId, response_type),
            ..Default::default()
        };
    };
    let info = proto::crypto_get_info_response::AccountInfo {
        account_id: Some(account_id(account.num)),
        contract_account_id: format!("{:040x}", account.num),
        deleted: account.deleted,
        key: Some(account.key.to_proto()),
        balance: account.balance.max(0) as u64,
        receiver_sig_required: account.receiver_sig_required,
        expiration_time: Some(proto::Timestamp {
            seconds: account.created.seconds + account.auto_renew_period,
            nanos: 0,
        }),
        auto_renew_period: Some(proto::Duration {
            seconds: account.auto_renew_period,
        }),
        memo: account.memo.clone(),
        max_automatic_token_associations: account.max_automatic_token_associations,
        ledger_id: vec![3],
        ..Default::default()
    };
    proto::CryptoGetInfoResponse {
        header: header(Code::Ok, response_type),
        account_info: Some(info),
    }
}
