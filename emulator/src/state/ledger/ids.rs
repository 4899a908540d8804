//! Entity numbers to protobuf ids and back, and as text.

use hedera_proto::services as proto;

/// An entity as receipts and the mirror write it, `0.0.N` (this network is shard 0, realm 0):
/// `Display` for messages, a JSON string when serialised.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntityId(pub u64);

impl std::fmt::Display for EntityId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "0.0.{}", self.0)
    }
}

impl serde::Serialize for EntityId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// `0.0.num` as a proto `AccountId`.
pub fn account_id(num: u64) -> proto::AccountId {
    proto::AccountId {
        shard_num: 0,
        realm_num: 0,
        account: Some(proto::account_id::Account::AccountNum(num as i64)),
    }
}

/// `0.0.num` as a proto `TopicId`.
pub fn topic_id(num: u64) -> proto::TopicId {
    proto::TopicId {
        shard_num: 0,
        realm_num: 0,
        topic_num: num as i64,
    }
}

/// The number of a `0.0.num` account id (aliases and other shards are not supported).
pub fn account_num(id: &proto::AccountId) -> Option<u64> {
    match (id.shard_num, id.realm_num, &id.account) {
        (0, 0, Some(proto::account_id::Account::AccountNum(n))) if *n >= 0 => Some(*n as u64),
        _ => None,
    }
}

/// `0.0.num` as a proto `ScheduleId`.
pub fn schedule_id(num: u64) -> proto::ScheduleId {
    proto::ScheduleId {
        shard_num: 0,
        realm_num: 0,
        schedule_num: num as i64,
    }
}

pub fn schedule_num(id: &proto::ScheduleId) -> Option<u64> {
    (id.shard_num == 0 && id.realm_num == 0 && id.schedule_num >= 0)
        .then_some(id.schedule_num as u64)
}

/// `0.0.num` as a proto `TokenId`.
pub fn token_id(num: u64) -> proto::TokenId {
    proto::TokenId {
        shard_num: 0,
        realm_num: 0,
        token_num: num as i64,
    }
}

pub fn contract_id(num: u64) -> proto::ContractId {
    proto::ContractId {
        shard_num: 0,
        realm_num: 0,
        contract: Some(proto::contract_id::Contract::ContractNum(num as i64)),
    }
}

pub fn file_id(num: u64) -> proto::FileId {
    proto::FileId {
        shard_num: 0,
        realm_num: 0,
        file_num: num as i64,
    }
}

/// The number of a `0.0.num` file id.
pub fn file_num(id: &proto::FileId) -> Option<u64> {
    (id.shard_num == 0 && id.realm_num == 0 && id.file_num > 0).then_some(id.file_num as u64)
}

pub fn token_num(id: &proto::TokenId) -> Option<u64> {
    (id.shard_num == 0 && id.realm_num == 0 && id.token_num >= 0).then_some(id.token_num as u64)
}

pub fn topic_num(id: &proto::TopicId) -> Option<u64> {
    (id.shard_num == 0 && id.realm_num == 0 && id.topic_num >= 0).then_some(id.topic_num as u64)
}
