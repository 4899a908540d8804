//! Queries the SDK sends to a node: account balance (free; also the SDK's ping), receipts
//! (free; polled until known), and the paid ones (info, records, contents, local calls: a
//! cost query first, then the answer with its payment; `payment` checks and submits it).

use crate::handlers::custom_fees;
use crate::ingest::Node;
use crate::ledger::{
    account_id, account_num, contract_id, file_num, schedule_id, schedule_num, token_id, token_num,
    topic_id, topic_num, ContractResult, KeyBytes, Ledger, TxId,
};
use crate::payment;
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
    let cost = crate::fees::query_cost(q);
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
        Q::CryptogetAccountBalance(q) => R::CryptogetAccountBalance(balance(node, q)),
        Q::TransactionGetReceipt(q) => R::TransactionGetReceipt(receipt(node, q)),
        Q::CryptoGetInfo(q) => R::CryptoGetInfo(account_info(node, q)),
        Q::ConsensusGetTopicInfo(q) => R::ConsensusGetTopicInfo(topic_info(node, q)),
        Q::TokenGetInfo(q) => R::TokenGetInfo(token_info(node, q)),
        Q::ScheduleGetInfo(q) => R::ScheduleGetInfo(schedule_info(node, q)),
        Q::TransactionGetRecord(q) => R::TransactionGetRecord(record(node, q)),
        Q::ContractCallLocal(q) => R::ContractCallLocal(call_local(node, q)),
        Q::TokenGetNftInfo(q) => R::TokenGetNftInfo(nft_info(node, q)),
        Q::FileGetContents(q) => R::FileGetContents(file_contents(node, q)),
        Q::FileGetInfo(q) => R::FileGetInfo(file_info(node, q)),
        Q::CryptoGetAccountRecords(q) => R::CryptoGetAccountRecords(account_records(node, q)),
        Q::NetworkGetVersionInfo(q) => R::NetworkGetVersionInfo(version_info(q)),
        Q::ContractGetInfo(q) => R::ContractGetInfo(contract_info(node, q)),
        Q::ContractGetBytecode(q) => R::ContractGetBytecodeResponse(contract_bytecode(node, q)),
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

/// The file a query names (`INVALID_FILE_ID` for none or an unknown one).
fn queried_file(node: &Node, id: Option<&proto::FileId>) -> Result<crate::ledger::File, Code> {
    let ledger = node.ledger.lock().unwrap_or_else(|e| e.into_inner());
    id.and_then(file_num)
        .and_then(|n| crate::handlers::file::file(&ledger, n))
        .ok_or(Code::InvalidFileId)
}

/// `FileGetContents`: a file's bytes (empty once deleted); a system file's genesis contents
/// until a transaction changed it.
fn file_contents(node: &Node, q: &proto::FileGetContentsQuery) -> proto::FileGetContentsResponse {
    let t = response_type(q.header.as_ref());
    match queried_file(node, q.file_id.as_ref()) {
        Ok(file) => proto::FileGetContentsResponse {
            header: header(Code::Ok, t),
            file_contents: Some(proto::file_get_contents_response::FileContents {
                file_id: q.file_id,
                contents: file.contents,
            }),
        },
        Err(code) => proto::FileGetContentsResponse {
            header: header(code, t),
            ..Default::default()
        },
    }
}

/// `FileGetInfo`: size, expiry, deleted flag, keys and memo.
fn file_info(node: &Node, q: &proto::FileGetInfoQuery) -> proto::FileGetInfoResponse {
    let t = response_type(q.header.as_ref());
    let file = match queried_file(node, q.file_id.as_ref()) {
        Ok(file) => file,
        Err(code) => {
            return proto::FileGetInfoResponse {
                header: header(code, t),
                ..Default::default()
            }
        }
    };
    proto::FileGetInfoResponse {
        header: header(Code::Ok, t),
        file_info: Some(proto::file_get_info_response::FileInfo {
            file_id: q.file_id,
            size: file.contents.len() as i64,
            expiration_time: Some(proto::Timestamp {
                seconds: file.expiration,
                nanos: 0,
            }),
            deleted: file.deleted,
            keys: Some(file.key_list()),
            memo: file.memo.clone(),
            ledger_id: vec![3],
        }),
    }
}

/// `TokenGetNftInfo`: one serial's owner, metadata, creation time and spender.
fn nft_info(node: &Node, q: &proto::TokenGetNftInfoQuery) -> proto::TokenGetNftInfoResponse {
    let t = response_type(q.header.as_ref());
    let failed = |code: Code| proto::TokenGetNftInfoResponse {
        header: header(code, t),
        ..Default::default()
    };
    let Some(id) = q.nft_id.as_ref() else {
        return failed(Code::InvalidNftId);
    };
    let ledger = node.ledger.lock().unwrap_or_else(|e| e.into_inner());
    let Some(token) = id.token_id.as_ref().and_then(token_num) else {
        return failed(Code::InvalidTokenId);
    };
    match ledger.tokens.get(&token) {
        None => return failed(Code::InvalidTokenId),
        Some(t) if !t.nft => return failed(Code::NotSupported),
        Some(_) => {}
    }
    if id.serial_number <= 0 {
        return failed(Code::InvalidTokenNftSerialNumber);
    }
    let Some(nft) = ledger
        .nfts
        .get(&token)
        .and_then(|n| n.get(&id.serial_number))
    else {
        return failed(Code::InvalidNftId);
    };
    proto::TokenGetNftInfoResponse {
        header: header(Code::Ok, t),
        nft: Some(proto::TokenNftInfo {
            nft_id: Some(*id),
            account_id: Some(account_id(nft.owner)),
            creation_time: Some(nft.created.to_proto()),
            metadata: nft.metadata.clone(),
            ledger_id: vec![3],
            spender_id: nft.spender.map(account_id),
        }),
    }
}

fn topic_info(
    node: &Node,
    q: &proto::ConsensusGetTopicInfoQuery,
) -> proto::ConsensusGetTopicInfoResponse {
    let t = response_type(q.header.as_ref());
    let ledger = node.ledger.lock().unwrap_or_else(|e| e.into_inner());
    let Some(topic) = q
        .topic_id
        .as_ref()
        .and_then(topic_num)
        .and_then(|n| ledger.topics.get(&n))
        .filter(|t| !t.deleted)
    else {
        return proto::ConsensusGetTopicInfoResponse {
            header: header(Code::InvalidTopicId, t),
            ..Default::default()
        };
    };
    let info = proto::ConsensusTopicInfo {
        memo: topic.memo.clone(),
        running_hash: topic.running_hash.clone(),
        sequence_number: topic.sequence_number,
        expiration_time: Some(proto::Timestamp {
            seconds: topic.created.seconds + topic.auto_renew_period,
            nanos: 0,
        }),
        admin_key: topic.admin_key.as_ref().map(KeyBytes::to_proto),
        submit_key: topic.submit_key.as_ref().map(KeyBytes::to_proto),
        auto_renew_period: Some(proto::Duration {
            seconds: topic.auto_renew_period,
        }),
        auto_renew_account: topic.auto_renew_account.map(account_id),
        ledger_id: vec![3],
        fee_schedule_key: topic.fee_schedule_key.as_ref().map(KeyBytes::to_proto),
        fee_exempt_key_list: topic
            .fee_exempt_keys
            .iter()
            .map(KeyBytes::to_proto)
            .collect(),
        custom_fees: topic
            .custom_fees
            .iter()
            .map(custom_fees::topic_fee_to_proto)
            .collect(),
    };
    proto::ConsensusGetTopicInfoResponse {
        header: header(Code::Ok, t),
        topic_id: Some(topic_id(topic.num)),
        topic_info: Some(info),
    }
}

fn token_info(node: &Node, q: &proto::TokenGetInfoQuery) -> proto::TokenGetInfoResponse {
    let t = response_type(q.header.as_ref());
    let ledger = node.ledger.lock().unwrap_or_else(|e| e.into_inner());
    let Some(token) = q
        .token
        .as_ref()
        .and_then(token_num)
        .and_then(|n| ledger.tokens.get(&n))
    else {
        return proto::TokenGetInfoResponse {
            header: header(Code::InvalidTokenId, t),
            ..Default::default()
        };
    };
    let key = |k: &Option<KeyBytes>| k.as_ref().map(KeyBytes::to_proto);
    let info = proto::TokenInfo {
        token_id: Some(token_id(token.num)),
        name: token.name.clone(),
        symbol: token.symbol.clone(),
        decimals: token.decimals,
        total_supply: token.total_supply.max(0) as u64,
        treasury: Some(account_id(token.treasury)),
        admin_key: key(&token.admin_key),
        kyc_key: key(&token.kyc_key),
        freeze_key: key(&token.freeze_key),
        wipe_key: key(&token.wipe_key),
        supply_key: key(&token.supply_key),
        // TokenFreezeStatus / TokenKycStatus: 0 = not applicable, 1 = frozen/granted, 2 = unfrozen/revoked.
        default_freeze_status: if token.freeze_key.is_none() {
            0
        } else if token.freeze_default {
            1
        } else {
            2
        },
        default_kyc_status: if token.kyc_key.is_none() { 0 } else { 2 },
        deleted: token.deleted,
        auto_renew_account: token.auto_renew_account.map(account_id),
        auto_renew_period: (token.auto_renew_period > 0).then_some(proto::Duration {
            seconds: token.auto_renew_period,
        }),
        expiry: Some(proto::Timestamp {
            seconds: token.expiry,
            nanos: 0,
        }),
        memo: token.memo.clone(),
        token_type: i32::from(token.nft),
        supply_type: i32::from(token.max_supply.is_some()),
        max_supply: token.max_supply.unwrap_or(0),
        fee_schedule_key: key(&token.fee_schedule_key),
        pause_key: key(&token.pause_key),
        pause_status: if token.pause_key.is_none() {
            0
        } else if token.paused {
            1
        } else {
            2
        },
        ledger_id: vec![3],
        metadata: token.metadata.clone(),
        metadata_key: key(&token.metadata_key),
        custom_fees: token
            .custom_fees
            .iter()
            .map(custom_fees::to_proto)
            .collect(),
    };
    proto::TokenGetInfoResponse {
        header: header(Code::Ok, t),
        token_info: Some(info),
    }
}

fn schedule_info(node: &Node, q: &proto::ScheduleGetInfoQuery) -> proto::ScheduleGetInfoResponse {
    use prost::Message;
    let t = response_type(q.header.as_ref());
    let ledger = node.ledger.lock().unwrap_or_else(|e| e.into_inner());
    let Some(s) = q
        .schedule_id
        .as_ref()
        .and_then(schedule_num)
        .and_then(|n| ledger.schedules.get(&n))
    else {
        return proto::ScheduleGetInfoResponse {
            header: header(Code::InvalidScheduleId, t),
            ..Default::default()
        };
    };
    let signers = s
        .signatories
        .iter()
        .filter_map(|k| hex::decode(k).ok())
        .map(|raw| proto::Key {
            key: Some(if raw.len() == 32 {
                proto::key::Key::Ed25519(raw)
            } else {
                proto::key::Key::EcdsaSecp256k1(raw)
            }),
        })
        .collect();
    let data = match (s.executed, s.deleted) {
        (Some(at), _) => Some(proto::schedule_info::Data::ExecutionTime(at.to_proto())),
        (_, Some(at)) => Some(proto::schedule_info::Data::DeletionTime(at.to_proto())),
        _ => None,
    };
    let info = proto::ScheduleInfo {
        schedule_id: Some(schedule_id(s.num)),
        expiration_time: Some(s.expiration.to_proto()),
        scheduled_transaction_body: proto::SchedulableTransactionBody::decode(s.body.as_slice())
            .ok(),
        memo: s.memo.clone(),
        admin_key: s.admin_key.as_ref().map(KeyBytes::to_proto),
        signers: Some(proto::KeyList { keys: signers }),
        creator_account_id: Some(account_id(s.creator)),
        payer_account_id: Some(account_id(s.payer)),
        scheduled_transaction_id: Some(s.scheduled_id.to_proto()),
        ledger_id: vec![3],
        wait_for_expiry: s.wait_for_expiry,
        data,
    };
    proto::ScheduleGetInfoResponse {
        header: header(Code::Ok, t),
        schedule_info: Some(info),
    }
}

fn record(
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
    let ledger = node.ledger.lock().unwrap_or_else(|e| e.into_inner());
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
fn transaction_record(
    ledger: &Ledger,
    receipt: &crate::ledger::Receipt,
    r: &crate::ledger::TxRecord,
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
const RECORD_TTL_SECONDS: i64 = 180;

/// `CryptoGetAccountRecords`: the records of the transactions an account paid for in the
/// last three minutes.
fn account_records(
    node: &Node,
    q: &proto::CryptoGetAccountRecordsQuery,
) -> proto::CryptoGetAccountRecordsResponse {
    let t = response_type(q.header.as_ref());
    let failed = |code: Code| proto::CryptoGetAccountRecordsResponse {
        header: header(code, t),
        ..Default::default()
    };
    let ledger = node.ledger.lock().unwrap_or_else(|e| e.into_inner());
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

/// `ContractGetInfo`: the contract entity (its admin key, or its own id when it has none),
/// balance, expiry and storage in bytes (64 a slot, key and value).
fn contract_info(node: &Node, q: &proto::ContractGetInfoQuery) -> proto::ContractGetInfoResponse {
    let t = response_type(q.header.as_ref());
    let ledger = node.ledger.lock().unwrap_or_else(|e| e.into_inner());
    let num = match crate::handlers::contract::contract_num(&ledger, q.contract_id.as_ref()) {
        Ok(num) => num,
        Err(code) => {
            return proto::ContractGetInfoResponse {
                header: header(code, t),
                ..Default::default()
            }
        }
    };
    let c = &ledger.contracts[&num];
    let own_id = proto::Key {
        key: Some(proto::key::Key::ContractId(contract_id(num))),
    };
    let info = proto::contract_get_info_response::ContractInfo {
        contract_id: Some(contract_id(num)),
        account_id: Some(account_id(num)),
        contract_account_id: c
            .evm_address
            .clone()
            .unwrap_or_else(|| format!("{num:040x}")),
        admin_key: Some(c.admin_key.as_ref().map_or(own_id, KeyBytes::to_proto)),
        expiration_time: Some(proto::Timestamp {
            seconds: c.expiration(),
            nanos: 0,
        }),
        auto_renew_period: Some(proto::Duration {
            seconds: c.auto_renew_period,
        }),
        storage: c.storage.len() as i64 * 64,
        memo: c.memo.clone(),
        balance: c.balance.max(0) as u64,
        deleted: c.deleted,
        ledger_id: vec![3],
        auto_renew_account_id: c.auto_renew_account.map(account_id),
        max_automatic_token_associations: c.max_automatic_token_associations,
        ..Default::default()
    };
    proto::ContractGetInfoResponse {
        header: header(Code::Ok, t),
        contract_info: Some(info),
    }
}

/// `ContractGetBytecode`: the runtime bytecode the constructor returned.
fn contract_bytecode(
    node: &Node,
    q: &proto::ContractGetBytecodeQuery,
) -> proto::ContractGetBytecodeResponse {
    let t = response_type(q.header.as_ref());
    let ledger = node.ledger.lock().unwrap_or_else(|e| e.into_inner());
    match crate::handlers::contract::contract_num(&ledger, q.contract_id.as_ref()) {
        Ok(num) => proto::ContractGetBytecodeResponse {
            header: header(Code::Ok, t),
            bytecode: ledger.contracts[&num].runtime_code.clone(),
        },
        Err(code) => proto::ContractGetBytecodeResponse {
            header: header(code, t),
            ..Default::default()
        },
    }
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

// `token_balances` is deprecated in the protobufs, yet the network fills it and the SDKs read it.
#[allow(deprecated)]
fn balance(
    node: &Node,
    q: &proto::CryptoGetAccountBalanceQuery,
) -> proto::CryptoGetAccountBalanceResponse {
    use proto::crypto_get_account_balance_query::BalanceSource;
    let response_type = q.header.as_ref().map_or(0, |h| h.response_type);
    let ledger = node.ledger.lock().unwrap_or_else(|e| e.into_inner());
    let num = match &q.balance_source {
        Some(BalanceSource::AccountId(id)) => ledger.resolve_account(id),
        _ => None,
    };
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
            // Deprecated on the network but still filled, and read by the SDKs.
            token_balances: token_relationships(&ledger, a.num)
                .into_iter()
                .map(|r| proto::TokenBalance {
                    token_id: r.token_id,
                    balance: r.balance,
                    decimals: r.decimals,
                })
                .collect(),
        },
    }
}

/// A pending airdrop as a record lists it: its id and, for a fungible one, the amount.
fn pending_airdrop_record(p: &crate::ledger::PendingAirdrop) -> proto::PendingAirdropRecord {
    use proto::pending_airdrop_id::TokenReference;
    let token = token_id(p.token);
    proto::PendingAirdropRecord {
        pending_airdrop_id: Some(proto::PendingAirdropId {
            sender_id: Some(account_id(p.sender)),
            receiver_id: Some(account_id(p.receiver)),
            token_reference: Some(match p.serial {
                Some(serial_number) => TokenReference::NonFungibleToken(proto::NftId {
                    token_id: Some(token),
                    serial_number,
                }),
                None => TokenReference::FungibleTokenType(token),
            }),
        }),
        pending_airdrop_value: p.serial.is_none().then_some(proto::PendingAirdropValue {
            amount: p.amount.max(0) as u64,
        }),
    }
}

/// An account's token relationships, as balance and info queries list them.
fn token_relationships(ledger: &Ledger, account: u64) -> Vec<proto::TokenRelationship> {
    let Some(rels) = ledger.rels.get(&account) else {
        return Vec::new();
    };
    rels.iter()
        .filter_map(|(&num, rel)| {
            let token = ledger.tokens.get(&num)?;
            let applicable = |key: &Option<KeyBytes>, on: bool, off: i32| match key {
                None => 0,
                Some(_) if on => 1,
                Some(_) => off,
            };
            Some(proto::TokenRelationship {
                token_id: Some(token_id(num)),
                symbol: token.symbol.clone(),
                balance: rel.balance.max(0) as u64,
                kyc_status: applicable(&token.kyc_key, rel.kyc_granted, 2),
                freeze_status: applicable(&token.freeze_key, rel.frozen, 2),
                decimals: token.decimals,
                automatic_association: rel.automatic,
            })
        })
        .collect()
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
            // An account an alias credit created is a preceding child of the transaction.
            child_transaction_receipts: if q.include_child_receipts {
                r.created_accounts
                    .iter()
                    .map(|&account| {
                        crate::ledger::Receipt {
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

// `token_relationships` is deprecated in the protobufs, yet the SDKs read it.
#[allow(deprecated)]
fn account_info(node: &Node, q: &proto::CryptoGetInfoQuery) -> proto::CryptoGetInfoResponse {
    let response_type = q.header.as_ref().map_or(0, |h| h.response_type);
    let ledger = node.ledger.lock().unwrap_or_else(|e| e.into_inner());
    let Some(account) = q
        .account_id
        .as_ref()
        .and_then(|id| ledger.resolve_account(id))
        .and_then(|n| ledger.accounts.get(&n))
    else {
        return proto::CryptoGetInfoResponse {
            header: header(Code::InvalidAccountId, response_type),
            ..Default::default()
        };
    };
    if account.deleted {
        return proto::CryptoGetInfoResponse {
            header: header(Code::AccountDeleted, response_type),
            ..Default::default()
        };
    }
    let info = proto::crypto_get_info_response::AccountInfo {
        account_id: Some(account_id(account.num)),
        contract_account_id: account
            .evm_address
            .clone()
            .unwrap_or_else(|| format!("{:040x}", account.num)),
        // A key alias only: the SDKs decode it as a `Key` (an EVM alias shows in
        // `contract_account_id`).
        alias: account
            .key_alias
            .as_deref()
            .and_then(|a| hex::decode(a).ok())
            .unwrap_or_default(),
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
        token_relationships: token_relationships(&ledger, account.num),
        owned_nfts: ledger
            .nfts
            .values()
            .flat_map(|serials| serials.values())
            .filter(|nft| nft.owner == account.num)
            .count() as i64,
        ..Default::default()
    };
    proto::CryptoGetInfoResponse {
        header: header(Code::Ok, response_type),
        account_info: Some(info),
    }
}

/// A record's (or a local call's) `ContractFunctionResult`.
fn function_result(ledger: &Ledger, c: &ContractResult) -> proto::ContractFunctionResult {
    proto::ContractFunctionResult {
        contract_id: Some(contract_id(c.contract)),
        contract_call_result: c.output.clone(),
        error_message: c.error.clone(),
        gas_used: c.gas_used,
        log_info: c
            .logs
            .iter()
            .map(|log| proto::ContractLoginfo {
                contract_id: Some(contract_id(log.contract)),
                topic: log
                    .topics
                    .iter()
                    .filter_map(|t| hex::decode(t).ok())
                    .collect(),
                data: log.data.clone(),
                ..Default::default()
            })
            .collect(),
        evm_address: Some(crate::evm::address_of(ledger, c.contract).to_vec()),
        gas: c.gas_limit as i64,
        amount: c.amount,
        function_parameters: c.function_parameters.clone(),
        sender_id: Some(account_id(c.sender)),
        ..Default::default()
    }
}

/// `ContractCallLocal`: run a call in the EVM without applying anything.
fn call_local(node: &Node, q: &proto::ContractCallLocalQuery) -> proto::ContractCallLocalResponse {
    let t = response_type(q.header.as_ref());
    let mut ledger = node.ledger.lock().unwrap_or_else(|e| e.into_inner());
    let failed = |code: Code| proto::ContractCallLocalResponse {
        header: header(code, t),
        ..Default::default()
    };
    let num = match crate::handlers::contract::contract_num(&ledger, q.contract_id.as_ref()) {
        Ok(num) => num,
        Err(code) => return failed(code),
    };
    if q.gas <= 0 {
        return failed(Code::InsufficientGas);
    }
    if q.gas as u64 > crate::evm::MAX_GAS {
        return failed(Code::MaxGasLimitExceeded);
    }
    // The sender the query names, else the query's payer (its payment's), else 0.0.2.
    let sender = q
        .sender_id
        .as_ref()
        .and_then(account_num)
        .or_else(|| payment_payer(q.header.as_ref()))
        .unwrap_or(2);
    let run = crate::evm::run(
        &mut ledger,
        sender,
        crate::evm::Target::Call {
            num,
            data: q.function_parameters.clone(),
        },
        0,
        q.gas as u64,
        false,
    );
    let result = function_result(&ledger, &run.result);
    // A query answers OK when the call succeeded; a failed one names why in the precheck code.
    let status = if run.status == Code::Success {
        Code::Ok
    } else {
        run.status
    };
    proto::ContractCallLocalResponse {
        header: header(status, t),
        function_result: Some(result),
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
