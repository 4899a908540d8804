//! ConsensusService bodies: topics and messages, with the v3 running hash.

use super::crypto::{apply_transfer, plan_transfer, Leg, Rules};
use super::fee_assessment::{charge, Mode};
use super::plan::Plan;
use super::{auto_renew_account, custom_fees, Ctx, Outcome};
use crate::state::ledger::{
    account_id, account_num, token_id, topic_num, AssessedFee, EntityId, FeeKind, FixedFee,
    KeyBytes, Ledger, Topic, TopicMessage, Ts, TxId,
};
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
    if body
        .fee_schedule_key
        .as_ref()
        .is_some_and(|k| !crate::state::keys::is_valid(k))
    {
        return Err(Code::InvalidCustomFeeScheduleKey);
    }
    let fee_exempt_keys = custom_fees::fee_exempt_keys(&body.fee_exempt_key_list)?;
    let custom_fees = custom_fees::topic_fees(ledger, &body.custom_fees)?;
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
            fee_schedule_key: body.fee_schedule_key.as_ref().map(KeyBytes::from_proto),
            custom_fees,
            fee_exempt_keys,
        },
    );
    let mut outcome = Outcome::success();
    outcome.receipt.topic_id = Some(num);
    outcome.entity = Some(EntityId(num).to_string());
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
    let fees = charge_topic_fees(ledger, ctx, topic)?;
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
    let mut outcome = match fees {
        Some((plan, assessed)) => {
            let mut paid = apply_transfer(ledger, ctx, plan);
            paid.assessed_custom_fees = assessed;
            paid
        }
        None => Outcome::success(),
    };
    outcome.receipt.topic_sequence_number = sequence_number;
    outcome.receipt.topic_running_hash = running_hash;
    outcome.entity = Some(EntityId(num).to_string());
    Ok(outcome)
}

/// The transfer that pays a topic's custom fees for the payer of a message (HIP-991), with
/// the fees it assesses; `None` when nothing is charged: no fees, or the transaction is
/// signed by a fee-exempt key. The payer's `max_custom_fees` limits bound what it pays.
fn charge_topic_fees(
    ledger: &Ledger,
    ctx: &Ctx<'_>,
    topic: &Topic,
) -> Result<Option<(Plan, Vec<AssessedFee>)>, Code> {
    if topic.custom_fees.is_empty()
        || topic
            .fee_exempt_keys
            .iter()
            .any(|k| ctx.active.satisfies(&k.to_proto()))
    {
        return Ok(None);
    }
    let payer = ctx.payer;
    // A collector does not pay itself.
    let fees: Vec<(FixedFee, u64)> = topic
        .custom_fees
        .iter()
        .filter(|f| f.collector != payer)
        .filter_map(|f| match f.kind {
            FeeKind::Fixed(fixed) => Some((fixed, f.collector)),
            _ => None,
        })
        .collect();
    if fees.is_empty() {
        return Ok(None);
    }
    check_fee_limits(ctx, &fees)?;
    // One transfer: the payer's debits, each collector's credits, per denomination.
    let mut hbar: Vec<Leg> = Vec::new();
    let mut lists: Vec<proto::TokenTransferList> = Vec::new();
    let add = |legs: &mut Vec<Leg>, account: u64, amount: i64| match legs
        .iter_mut()
        .find(|l| l.account == account)
    {
        Some(leg) => leg.amount += amount,
        None => legs.push(Leg {
            account,
            amount,
            approval: false,
        }),
    };
    let mut token_legs: Vec<(u64, Vec<Leg>)> = Vec::new();
    for &(fee, collector) in &fees {
        let legs = match fee.token {
            None => &mut hbar,
            Some(token) => {
                let at = match token_legs.iter().position(|(t, _)| *t == token) {
                    Some(at) => at,
                    None => {
                        token_legs.push((token, Vec::new()));
                        token_legs.len() - 1
                    }
                };
                &mut token_legs[at].1
            }
        };
        add(legs, payer, -fee.amount);
        add(legs, collector, fee.amount);
    }
    for (token, legs) in token_legs {
        lists.push(proto::TokenTransferList {
            token: Some(token_id(token)),
            transfers: legs
                .iter()
                .map(|l| proto::AccountAmount {
                    account_id: Some(account_id(l.account)),
                    amount: l.amount,
                    is_approval: false,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        });
    }
    let rules = Rules {
        senders_signed: true,
        force_association: false,
        assessed_fees: true,
    };
    let as_fee_status = |code| match code {
        Code::InsufficientAccountBalance => Code::InsufficientPayerBalanceForCustomFee,
        Code::InsufficientTokenBalance => Code::InsufficientSenderAccountBalanceForCustomFee,
        other => other,
    };
    let mut plan = plan_transfer(ledger, ctx, &hbar, &lists, rules).map_err(as_fee_status)?;
    let mut assessed: Vec<AssessedFee> = fees
        .iter()
        .map(|&(fee, collector)| AssessedFee {
            amount: fee.amount,
            token: fee.token,
            collector,
            payers: vec![payer],
        })
        .collect();
    assessed.extend(charge(ledger, ctx, &mut plan, Mode::Transfer, &[], &[])?);
    Ok(Some((plan, assessed)))
}

/// The payer's `max_custom_fees` (HAPI `CustomFeeLimit`), if it gave any: every limit names
/// a denomination the topic charges (`NO_VALID_MAX_CUSTOM_FEE`), and no denomination
/// charges more than its limit (`MAX_CUSTOM_FEE_LIMIT_EXCEEDED`). A payer that gives
/// limits and leaves a charged denomination out does not accept paying it.
fn check_fee_limits(ctx: &Ctx<'_>, fees: &[(FixedFee, u64)]) -> Result<(), Code> {
    if ctx.max_custom_fees.is_empty() {
        return Ok(());
    }
    let limits: Vec<(Option<u64>, i64)> = ctx
        .max_custom_fees
        .iter()
        .filter(|l| {
            l.account_id
                .as_ref()
                .is_none_or(|a| account_num(a) == Some(ctx.payer))
        })
        .flat_map(|l| &l.fees)
        .map(|f| {
            let token = f.denominating_token_id.as_ref().map(|t| t.token_num as u64);
            (token, f.amount)
        })
        .collect();
    let charged = |token: Option<u64>| -> i64 {
        fees.iter()
            .filter(|(f, _)| f.token == token)
            .map(|(f, _)| f.amount)
            .sum()
    };
    for &(token, _) in &limits {
        if !fees.iter().any(|(f, _)| f.token == token) {
            return Err(Code::NoValidMaxCustomFee);
        }
    }
    for (fee, _) in fees {
        match limits.iter().find(|l| l.0 == fee.token) {
            None => return Err(Code::NoValidMaxCustomFee),
            Some(&(_, limit)) if charged(fee.token) > limit => {
                return Err(Code::MaxCustomFeeLimitExceeded)
            }
            Some(_) => {}
        }
    }
    Ok(())
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
    // Custom fees alone are the fee schedule key's; everything but them and the expiry is
    // the admin key's.
    let needs_admin = body.memo.is_some()
        || body.admin_key.is_some()
        || body.submit_key.is_some()
        || body.auto_renew_period.is_some()
        || body.auto_renew_account.is_some()
        || body.fee_schedule_key.is_some()
        || body.fee_exempt_key_list.is_some();
    if body.fee_schedule_key.is_some() && topic.fee_schedule_key.is_none() {
        return Err(Code::FeeScheduleKeyCannotBeUpdated);
    }
    if needs_admin {
        let admin = topic.admin_key.as_ref().ok_or(Code::Unauthorized)?;
        ctx.require(admin)?;
    }
    let custom_fees = match &body.custom_fees {
        None => None,
        Some(list) => {
            let key = topic
                .fee_schedule_key
                .as_ref()
                .ok_or(Code::FeeScheduleKeyNotSet)?;
            ctx.require(key)?;
            Some(custom_fees::topic_fees(ledger, &list.fees)?)
        }
    };
    let fee_exempt_keys = body
        .fee_exempt_key_list
        .as_ref()
        .map(|list| custom_fees::fee_exempt_keys(&list.keys))
        .transpose()?;
    let clears =
        |k: &proto::Key| matches!(&k.key, Some(proto::key::Key::KeyList(l)) if l.keys.is_empty());
    if body
        .fee_schedule_key
        .as_ref()
        .is_some_and(|k| !clears(k) && !crate::state::keys::is_valid(k))
    {
        return Err(Code::InvalidCustomFeeScheduleKey);
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
    if let Some(key) = &body.fee_schedule_key {
        topic.fee_schedule_key = set(key);
    }
    if let Some(fees) = custom_fees {
        topic.custom_fees = fees;
    }
    if let Some(keys) = fee_exempt_keys {
        topic.fee_exempt_keys = keys;
    }
    if let Some(period) = body.auto_renew_period {
        topic.auto_renew_period = period.seconds;
    }
    if let Some(account) = auto_renew_account {
        topic.auto_renew_account = (account != 0).then_some(account);
    }
    let mut outcome = Outcome::success();
    outcome.entity = Some(EntityId(num).to_string());
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
    outcome.entity = Some(EntityId(num).to_string());
    Ok(outcome)
}
