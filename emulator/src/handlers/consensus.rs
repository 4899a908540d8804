//! ConsensusService bodies: topics and messages, with the v3 running hash.

use super::{auto_renew_account, Ctx, Outcome};
use crate::ledger::{account_num, topic_num, KeyBytes, Ledger, Topic, TopicMessage, Ts, TxId};
use hedera_proto::services as proto;
use proto::ResponseCodeEnum as Code;
use sha2::{Digest, Sha384};

/// Largest message chunk.
pub const MAX_MESSAGE_BYTES: usize = 1024;
/// The default auto-renew period of a new topic (90 days).
const DEFAULT_AUTO_RENEW_SECONDS: i64 = 7_776_000;

pub fn create_topic(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    body: &proto::ConsensusCreateTopicTransactionBody,
) -> Result<Outcome, Code> {
    if body.memo.len() > 100 {
        return Err(Code::MemoTooLong);
    }
    if let Some(admin) = &body.admin_key {
        if !ctx.active.satisfies(admin) {
            return Err(Code::InvalidSignature);
        }
    }
    let auto_renew_account = auto_renew_account(ledger, ctx, body.auto_renew_account.as_ref())?;
    let num = ledger.allocate();
    ledger.topics.insert(
        num,
        Topic {
            num,
            memo: body.memo.clone(),
            admin_key: body.admin_key.as_ref().map(KeyBytes::from_proto),
            submit_key: body.submit_key.as_ref().map(KeyBytes::from_proto),
            auto_renew_account,
            auto_renew_period: body
                .auto_renew_period
                .map_or(DEFAULT_AUTO_RENEW_SECONDS, |d| d.seconds),
            created: ctx.consensus,
            deleted: false,
            sequence_number: 0,
            running_hash: vec![0; 48],
            messages: Vec::new(),
        },
    );
    let mut outcome = Outcome::success();
    outcome.receipt.topic_id = Some(num);
    outcome.entity = Some(format!("0.0.{num}"));
    Ok(outcome)
}

pub fn pure_check_submit(body: &proto::ConsensusSubmitMessageTransactionBody) -> Result<(), Code> {
    if body.message.is_empty() {
        return Err(Code::InvalidTopicMessage);
    }
    if body.message.len() > MAX_MESSAGE_BYTES {
        return Err(Code::MessageSizeTooLarge);
    }
    if let Some(chunk) = &body.chunk_info {
        if chunk.number < 1 || chunk.number > chunk.total {
            return Err(Code::InvalidChunkNumber);
        }
    }
    Ok(())
}

pub fn submit_message(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    body: &proto::ConsensusSubmitMessageTransactionBody,
) -> Result<Outcome, Code> {
    pure_check_submit(body)?;
    let num = body
        .topic_id
        .as_ref()
        .and_then(topic_num)
        .ok_or(Code::InvalidTopicId)?;
    let topic = ledger
        .topics
        .get(&num)
        .filter(|t| !t.deleted)
        .ok_or(Code::InvalidTopicId)?;
    if let Some(submit) = &topic.submit_key {
        if !ctx.active.satisfies(&submit.to_proto()) {
            return Err(Code::InvalidSignature);
        }
    }
    let chunk = match &body.chunk_info {
        None => None,
        Some(info) => {
            let initial = info
                .initial_transaction_id
                .as_ref()
                .and_then(TxId::from_proto)
                .ok_or(Code::InvalidChunkTransactionId)?;
            let first_matches = info.number != 1 || initial == ctx.id;
            if !first_matches || initial.payer != ctx.payer {
                return Err(Code::InvalidChunkTransactionId);
            }
            Some((initial, info.number, info.total))
        }
    };
    let topic = ledger.topics.get_mut(&num).expect("checked above");
    let sequence_number = topic.sequence_number + 1;
    let running_hash = running_hash_v3(
        &topic.running_hash,
        ctx.payer,
        num,
        ctx.consensus,
        sequence_number,
        &body.message,
    );
    topic.sequence_number = sequence_number;
    topic.running_hash = running_hash.clone();
    topic.messages.push(TopicMessage {
        consensus: ctx.consensus,
        message: body.message.clone(),
        payer: ctx.payer,
        running_hash: running_hash.clone(),
        sequence_number,
        chunk,
    });
    let mut outcome = Outcome::success();
    outcome.receipt.topic_sequence_number = sequence_number;
    outcome.receipt.topic_running_hash = running_hash;
    outcome.entity = Some(format!("0.0.{num}"));
    Ok(outcome)
}

/// The v3 running hash: SHA-384 over the previous hash, the version, payer and topic ids,
/// the consensus time, the sequence number and SHA-384 of the message, big-endian.
pub fn running_hash_v3(
    previous: &[u8],
    payer: u64,
    topic: u64,
    at: Ts,
    sequence: u64,
    message: &[u8],
) -> Vec<u8> {
    let mut h = Sha384::new();
    h.update(previous);
    h.update(3u64.to_be_bytes());
    for part in [0u64, 0, payer, 0, 0, topic] {
        h.update(part.to_be_bytes());
    }
    h.update((at.seconds as u64).to_be_bytes());
    h.update(at.nanos.to_be_bytes());
    h.update(sequence.to_be_bytes());
    h.update(Sha384::digest(message));
    h.finalize().to_vec()
}

/// A live topic.
fn live_topic<'l>(ledger: &'l Ledger, id: Option<&proto::TopicId>) -> Result<&'l Topic, Code> {
    let num = id.and_then(topic_num).ok_or(Code::InvalidTopicId)?;
    ledger
        .topics
        .get(&num)
        .filter(|t| !t.deleted)
        .ok_or(Code::InvalidTopicId)
}

pub fn update_topic(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    body: &proto::ConsensusUpdateTopicTransactionBody,
) -> Result<Outcome, Code> {
    let topic = live_topic(ledger, body.topic_id.as_ref())?;
    let num = topic.num;
    let only_expiry = body.memo.is_none()
        && body.admin_key.is_none()
        && body.submit_key.is_none()
        && body.auto_renew_period.is_none()
        && body.auto_renew_account.is_none();
    if !only_expiry {
        let admin = topic.admin_key.as_ref().ok_or(Code::Unauthorized)?;
        ctx.require(admin)?;
    }
    if let Some(key) = &body.admin_key {
        ctx.require(&KeyBytes::from_proto(key))?;
    }
    if body.memo.as_ref().is_some_and(|m| m.len() > 100) {
        return Err(Code::MemoTooLong);
    }
    let auto_renew_account = match &body.auto_renew_account {
        None => None,
        Some(id) => {
            let account = account_num(id).ok_or(Code::InvalidAutorenewAccount)?;
            if account != 0 {
                let a = ledger
                    .live_account(account)
                    .ok_or(Code::InvalidAutorenewAccount)?;
                ctx.require(&a.key)?;
            }
            Some(account)
        }
    };
    // An empty key list clears a key.
    let set = |k: &proto::Key| match &k.key {
        Some(proto::key::Key::KeyList(list)) if list.keys.is_empty() => None,
        _ => Some(KeyBytes::from_proto(k)),
    };
    let topic = ledger.topics.get_mut(&num).expect("checked");
    if let Some(memo) = &body.memo {
        topic.memo = memo.clone();
    }
    if let Some(key) = &body.admin_key {
        topic.admin_key = set(key);
    }
    if let Some(key) = &body.submit_key {
        topic.submit_key = set(key);
    }
    if let Some(period) = body.auto_renew_period {
        topic.auto_renew_period = period.seconds;
    }
    if let Some(account) = auto_renew_account {
        topic.auto_renew_account = (account != 0).then_some(account);
    }
    let mut outcome = Outcome::success();
    outcome.entity = Some(format!("0.0.{num}"));
    Ok(outcome)
}

pub fn delete_topic(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    body: &proto::ConsensusDeleteTopicTransactionBody,
) -> Result<Outcome, Code> {
    let topic = live_topic(ledger, body.topic_id.as_ref())?;
    let num = topic.num;
    let admin = topic.admin_key.as_ref().ok_or(Code::Unauthorized)?;
    ctx.require(admin)?;
    ledger.topics.get_mut(&num).expect("checked").deleted = true;
    let mut outcome = Outcome::success();
    outcome.entity = Some(format!("0.0.{num}"));
    Ok(outcome)
}
