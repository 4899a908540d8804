//! Receipts (free; polled until known) and records: a transaction's, with its children and
//! duplicates, and an account's recent ones.

use super::accounts::pending_airdrop_record;
use super::contracts::function_result;
use super::{header, response_type};
use crate::node::ingest::Node;
use crate::state::ledger::{account_id, token_id, Ledger, TxId};
use hedera_proto::services as proto;
use proto::ResponseCodeEnum as Code;

pub(super) fn receipt(
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
    if node.faults().take_receipt_unknown() {
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
    let ledger = node.ledger();
    match ledger.receipts.get(&id.to_string()) {
        None => proto::TransactionGetReceiptResponse {
            header: header(Code::ReceiptNotFound, response_type),
            ..Default::default()
        },
        Some(r) => proto::TransactionGetReceiptResponse {
            header: header(Code::Ok, response_type),
            receipt: Some(r.to_proto()),
            // An account an alias credit created is a preceding child of the transaction.
            child_transaction_receipts: if q.include_child_receipts {
                r.created_accounts
                    .iter()
                    .map(|&account| {
                        crate::state::ledger::Receipt {
                            status: Code::Success as i32,
                            account_id: Some(account),
                            consensus_seconds: r.consensus_seconds,
                            ..Default::default()
                        }
                        .to_proto()
                    })
                    .collect()
            } else {
                Vec::new()
            },
            ..Default::default()
        },
    }
}

pub(super) fn record(
    node: &Node,
    q: &proto::TransactionGetRecordQuery,
) -> proto::TransactionGetRecordResponse {
    let t = response_type(q.header.as_ref());
    let Some(id) = q.transaction_id.as_ref().and_then(TxId::from_proto) else {
        return proto::TransactionGetRecordResponse {
            header: header(Code::InvalidTransactionId, t),
            ..Default::default()
        };
    };
    let ledger = node.ledger();
    let (Some(receipt), Some(r)) = (
        ledger.receipts.get(&id.to_string()),
        ledger.records.iter().rev().find(|r| r.id == id),
    ) else {
        return proto::TransactionGetRecordResponse {
            header: header(Code::RecordNotFound, t),
            ..Default::default()
        };
    };
    let record = transaction_record(&ledger, receipt, r);
    proto::TransactionGetRecordResponse {
        header: header(Code::Ok, t),
        transaction_record: Some(record),
        ..Default::default()
    }
}

/// A handled transaction's record, as the network reports it.
pub(super) fn transaction_record(
    ledger: &Ledger,
    receipt: &crate::state::ledger::Receipt,
    r: &crate::state::ledger::TxRecord,
) -> proto::TransactionRecord {
    let amount = |account: u64, amount: i64| proto::AccountAmount {
        account_id: Some(account_id(account)),
        amount,
        is_approval: false,
        ..Default::default()
    };
    let mut token_lists: Vec<proto::TokenTransferList> = Vec::new();
    for &(token, account, value) in &r.token_transfers {
        match token_lists
            .iter_mut()
            .find(|l| l.token == Some(token_id(token)))
        {
            Some(list) => list.transfers.push(amount(account, value)),
            None => token_lists.push(proto::TokenTransferList {
                token: Some(token_id(token)),
                transfers: vec![amount(account, value)],
                ..Default::default()
            }),
        }
    }
    for &(token, sender, receiver, serial) in &r.nft_transfers {
        let nft = proto::NftTransfer {
            sender_account_id: (sender != 0).then(|| account_id(sender)),
            receiver_account_id: Some(account_id(receiver)),
            serial_number: serial,
            is_approval: false,
            ..Default::default()
        };
        match token_lists
            .iter_mut()
            .find(|l| l.token == Some(token_id(token)))
        {
            Some(list) => list.nft_transfers.push(nft),
            None => token_lists.push(proto::TokenTransferList {
                token: Some(token_id(token)),
                nft_transfers: vec![nft],
                ..Default::default()
            }),
        }
    }
    proto::TransactionRecord {
        receipt: Some(receipt.to_proto()),
        transaction_hash: r.hash.clone(),
        consensus_timestamp: Some(r.consensus.to_proto()),
        transaction_id: Some(r.id.to_proto()),
        memo: r.memo.clone(),
        transaction_fee: r.charged_fee.max(0) as u64,
        high_volume_pricing_multiplier: r.high_volume_multiplier.unwrap_or(0),
        transfer_list: Some(proto::TransferList {
            account_amounts: r.transfers.iter().map(|&(a, v)| amount(a, v)).collect(),
        }),
        token_transfer_lists: token_lists,
        automatic_token_associations: r
            .automatic_associations
            .iter()
            .map(|&(account, token)| proto::TokenAssociation {
                token_id: Some(token_id(token)),
                account_id: Some(account_id(account)),
            })
            .collect(),
        assessed_custom_fees: r
            .assessed_custom_fees
            .iter()
            .map(|f| proto::AssessedCustomFee {
                amount: f.amount,
                token_id: f.token.map(token_id),
                fee_collector_account_id: Some(account_id(f.collector)),
                effective_payer_account_id: f.payers.iter().map(|&p| account_id(p)).collect(),
            })
            .collect(),
        new_pending_airdrops: r
            .new_pending_airdrops
            .iter()
            .map(pending_airdrop_record)
            .collect(),
        body: r.contract_result.as_ref().map(|c| {
            let result = function_result(ledger, c);
            if r.name == "CONTRACTCREATEINSTANCE" {
                proto::transaction_record::Body::ContractCreateResult(result)
            } else {
                proto::transaction_record::Body::ContractCallResult(result)
            }
        }),
        ..Default::default()
    }
}

/// How long the network keeps a payer's records (`cache.records.ttl`, seconds).
pub(super) const RECORD_TTL_SECONDS: i64 = 180;

/// `CryptoGetAccountRecords`: the records of the transactions an account paid for in the
/// last three minutes.
pub(super) fn account_records(
    node: &Node,
    q: &proto::CryptoGetAccountRecordsQuery,
) -> proto::CryptoGetAccountRecordsResponse {
    let t = response_type(q.header.as_ref());
    let failed = |code: Code| proto::CryptoGetAccountRecordsResponse {
        header: header(code, t),
        ..Default::default()
    };
    let ledger = node.ledger();
    let Some(num) = q
        .account_id
        .as_ref()
        .and_then(|id| ledger.resolve_account(id))
    else {
        return failed(Code::InvalidAccountId);
    };
    match ledger.accounts.get(&num) {
        None => return failed(Code::InvalidAccountId),
        Some(a) if a.deleted => return failed(Code::AccountDeleted),
        Some(_) => {}
    }
    let since = ledger.last_consensus.seconds - RECORD_TTL_SECONDS;
    let records = ledger
        .records
        .iter()
        .rev()
        .take_while(|r| r.consensus.seconds >= since)
        .filter(|r| r.id.payer == num)
        .filter_map(|r| {
            let receipt = ledger.receipts.get(&r.id.to_string())?;
            Some(transaction_record(&ledger, receipt, r))
        })
        .collect::<Vec<_>>();
    proto::CryptoGetAccountRecordsResponse {
        header: header(Code::Ok, t),
        account_id: Some(account_id(num)),
        records: records.into_iter().rev().collect(),
    }
}
