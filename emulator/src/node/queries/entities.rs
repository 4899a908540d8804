//! The info of files, tokens, NFTs, topics and schedules, and a file's contents.

use super::{header, response_type};
use crate::handlers::custom_fees;
use crate::node::ingest::Node;
use crate::state::ledger::{
    account_id, file_num, schedule_id, schedule_num, token_id, token_num, topic_id, topic_num,
    KeyBytes,
};
use hedera_proto::services as proto;
use proto::ResponseCodeEnum as Code;

/// The file a query names (`INVALID_FILE_ID` for none or an unknown one).
pub(super) fn queried_file(
    node: &Node,
    id: Option<&proto::FileId>,
) -> Result<crate::state::ledger::File, Code> {
    let ledger = node.ledger();
    id.and_then(file_num)
        .and_then(|n| crate::handlers::file::file(&ledger, n))
        .ok_or(Code::InvalidFileId)
}

/// `FileGetContents`: a file's bytes (empty once deleted); a system file's genesis contents
/// until a transaction changed it.
pub(super) fn file_contents(
    node: &Node,
    q: &proto::FileGetContentsQuery,
) -> proto::FileGetContentsResponse {
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
pub(super) fn file_info(node: &Node, q: &proto::FileGetInfoQuery) -> proto::FileGetInfoResponse {
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
pub(super) fn nft_info(
    node: &Node,
    q: &proto::TokenGetNftInfoQuery,
) -> proto::TokenGetNftInfoResponse {
    let t = response_type(q.header.as_ref());
    let failed = |code: Code| proto::TokenGetNftInfoResponse {
        header: header(code, t),
        ..Default::default()
    };
    let Some(id) = q.nft_id.as_ref() else {
        return failed(Code::InvalidNftId);
    };
    let ledger = node.ledger();
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

pub(super) fn topic_info(
    node: &Node,
    q: &proto::ConsensusGetTopicInfoQuery,
) -> proto::ConsensusGetTopicInfoResponse {
    let t = response_type(q.header.as_ref());
    let ledger = node.ledger();
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

pub(super) fn token_info(node: &Node, q: &proto::TokenGetInfoQuery) -> proto::TokenGetInfoResponse {
    let t = response_type(q.header.as_ref());
    let ledger = node.ledger();
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

pub(super) fn schedule_info(
    node: &Node,
    q: &proto::ScheduleGetInfoQuery,
) -> proto::ScheduleGetInfoResponse {
    use prost::Message;
    let t = response_type(q.header.as_ref());
    let ledger = node.ledger();
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
