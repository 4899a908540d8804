//! ScheduleService bodies: a schedule holds an inner transaction until the signatures it
//! needs (its payer's and those its handler requires) have been collected on the create and
//! sign transactions; then it executes at once, under the id `{creator, valid start,
//! scheduled}`, paid by the schedule's payer.

use super::settle::{charge_fee, settle, RecordMeta};
use super::{Ctx, Outcome};
use crate::kind::Kind;
use crate::state::keys::ActiveKeys;
use crate::state::ledger::{account_num, schedule_num, KeyBytes, Ledger, Schedule, Ts, TxId};
use hedera_proto::services as proto;
use prost::Message;
use proto::schedulable_transaction_body::Data as S;
use proto::transaction_body::Data as T;
use proto::ResponseCodeEnum as Code;

/// How long a schedule lives by default (the network's 30 minutes).
/// How far ahead a schedule may expire (the network's 62 days).
const MAX_EXPIRY_SECONDS: i64 = 5_356_800;
const DEFAULT_EXPIRY_SECONDS: i64 = 1800;

/// The inner transaction as a transaction body, if it is one this network can schedule.
fn inner_data(data: S) -> Option<T> {
    Some(match data {
        S::CryptoTransfer(b) => T::CryptoTransfer(b),
        S::CryptoCreateAccount(b) => T::CryptoCreateAccount(b),
        S::CryptoUpdateAccount(b) => T::CryptoUpdateAccount(b),
        S::CryptoDelete(b) => T::CryptoDelete(b),
        S::CryptoApproveAllowance(b) => T::CryptoApproveAllowance(b),
        S::CryptoDeleteAllowance(b) => T::CryptoDeleteAllowance(b),
        S::ConsensusCreateTopic(b) => T::ConsensusCreateTopic(b),
        S::ConsensusUpdateTopic(b) => T::ConsensusUpdateTopic(b),
        S::ConsensusDeleteTopic(b) => T::ConsensusDeleteTopic(b),
        S::ConsensusSubmitMessage(b) => T::ConsensusSubmitMessage(b),
        S::TokenCreation(b) => T::TokenCreation(b),
        S::TokenAssociate(b) => T::TokenAssociate(b),
        S::TokenDissociate(b) => T::TokenDissociate(b),
        S::TokenMint(b) => T::TokenMint(b),
        S::TokenUpdate(b) => T::TokenUpdate(b),
        S::TokenAirdrop(b) => T::TokenAirdrop(b),
        S::TokenClaimAirdrop(b) => T::TokenClaimAirdrop(b),
        S::TokenCancelAirdrop(b) => T::TokenCancelAirdrop(b),
        S::TokenFreeze(b) => T::TokenFreeze(b),
        S::TokenUnfreeze(b) => T::TokenUnfreeze(b),
        S::TokenGrantKyc(b) => T::TokenGrantKyc(b),
        S::TokenRevokeKyc(b) => T::TokenRevokeKyc(b),
        S::TokenPause(b) => T::TokenPause(b),
        S::TokenUnpause(b) => T::TokenUnpause(b),
        S::TokenBurn(b) => T::TokenBurn(b),
        S::TokenWipe(b) => T::TokenWipe(b),
        S::TokenDeletion(b) => T::TokenDeletion(b),
        _ => return None,
    })
}

fn add_signatories(schedule: &mut Schedule, active: &ActiveKeys) -> usize {
    let mut added = 0;
    for key in active.keys() {
        let hex = hex::encode(key);
        if !schedule.signatories.contains(&hex) {
            schedule.signatories.push(hex);
            added += 1;
        }
    }
    added
}

pub fn create(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    body: &proto::ScheduleCreateTransactionBody,
) -> Result<Outcome, Code> {
    let inner = body
        .scheduled_transaction_body
        .clone()
        .ok_or(Code::InvalidTransaction)?;
    let data = inner
        .data
        .clone()
        .and_then(inner_data)
        .ok_or(Code::ScheduledTransactionNotInWhitelist)?;
    let kind = Kind::of(&data).ok_or(Code::ScheduledTransactionNotInWhitelist)?;
    super::custom_fees::pure_check_limits(&inner.max_custom_fees, kind == Kind::TopicSubmit)?;
    if body.memo.len() > 100 {
        return Err(Code::MemoTooLong);
    }
    if let Some(admin) = &body.admin_key {
        ctx.require(&KeyBytes::from_proto(admin))?;
    }
    let payer = match &body.payer_account_id {
        Some(id) => account_num(id).ok_or(Code::InvalidSchedulePayerId)?,
        None => ctx.payer,
    };
    ledger
        .live_account(payer)
        .ok_or(Code::InvalidSchedulePayerId)?;
    let expiration = match body.expiration_time {
        Some(t) => {
            let t = Ts::from_proto(&t);
            if t <= ctx.consensus {
                return Err(Code::ScheduleExpirationTimeMustBeHigherThanConsensusTime);
            }
            // `ledger.schedule.maxExpirationFutureSeconds`: 62 days.
            if t.seconds > ctx.consensus.seconds + MAX_EXPIRY_SECONDS {
                return Err(Code::ScheduleExpirationTimeTooFarInFuture);
            }
            t
        }
        None => Ts {
            seconds: ctx.consensus.seconds + DEFAULT_EXPIRY_SECONDS,
            nanos: ctx.consensus.nanos,
        },
    };
    let body_bytes = inner.encode_to_vec();
    let admin_key = body.admin_key.as_ref().map(KeyBytes::from_proto);
    let identical = ledger.schedules.values().find(|s| {
        s.executed.is_none()
            && s.deleted.is_none()
            && s.body == body_bytes
            && s.memo == body.memo
            && s.admin_key == admin_key
            && s.wait_for_expiry == body.wait_for_expiry
    });
    if let Some(existing) = identical {
        let mut outcome = Outcome::failed(Code::IdenticalScheduleAlreadyCreated);
        outcome.receipt.schedule_id = Some(existing.num);
        outcome.receipt.scheduled_transaction_id = Some(existing.scheduled_id);
        return Ok(outcome);
    }
    let num = ledger.allocate();
    let scheduled_id = TxId {
        scheduled: true,
        ..ctx.id
    };
    let mut schedule = Schedule {
        num,
        body: body_bytes,
        memo: body.memo.clone(),
        admin_key,
        payer,
        creator: ctx.payer,
        created: ctx.consensus,
        expiration,
        wait_for_expiry: body.wait_for_expiry,
        signatories: Vec::new(),
        executed: None,
        deleted: None,
        scheduled_id,
    };
    add_signatories(&mut schedule, ctx.active);
    ledger.schedules.insert(num, schedule);
    try_execute(ledger, num, ctx.node);
    let mut outcome = Outcome::success().entity(num);
    outcome.receipt.schedule_id = Some(num);
    outcome.receipt.scheduled_transaction_id = Some(scheduled_id);
    Ok(outcome)
}

fn live_schedule(ledger: &Ledger, id: Option<&proto::ScheduleId>) -> Result<u64, Code> {
    let num = id.and_then(schedule_num).ok_or(Code::InvalidScheduleId)?;
    let s = ledger.schedules.get(&num).ok_or(Code::InvalidScheduleId)?;
    if s.executed.is_some() {
        return Err(Code::ScheduleAlreadyExecuted);
    }
    if s.deleted.is_some() {
        return Err(Code::ScheduleAlreadyDeleted);
    }
    Ok(num)
}

pub fn sign(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    body: &proto::ScheduleSignTransactionBody,
) -> Result<Outcome, Code> {
    let num = live_schedule(ledger, body.schedule_id.as_ref())?;
    let schedule = ledger.schedules.get_mut(&num).expect("checked");
    if add_signatories(schedule, ctx.active) == 0 {
        return Err(Code::NoNewValidSignatures);
    }
    let scheduled_id = schedule.scheduled_id;
    let mut outcome = Outcome::success().entity(num);
    if try_execute(ledger, num, ctx.node) {
        outcome.receipt.scheduled_transaction_id = Some(scheduled_id);
    }
    Ok(outcome)
}

pub fn delete(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    body: &proto::ScheduleDeleteTransactionBody,
) -> Result<Outcome, Code> {
    let num = live_schedule(ledger, body.schedule_id.as_ref())?;
    let admin = ledger.schedules[&num]
        .admin_key
        .clone()
        .ok_or(Code::ScheduleIsImmutable)?;
    ctx.require(&admin)?;
    ledger.schedules.get_mut(&num).expect("checked").deleted = Some(ctx.consensus);
    Ok(Outcome::success().entity(num))
}

/// Execute the schedule's inner transaction if its signatures are complete (and it does not
/// wait for its expiry). Returns whether it executed (successfully or not).
fn try_execute(ledger: &mut Ledger, num: u64, node: u64) -> bool {
    let schedule = &ledger.schedules[&num];
    if schedule.wait_for_expiry || schedule.executed.is_some() || schedule.deleted.is_some() {
        return false;
    }
    let Ok(inner) = proto::SchedulableTransactionBody::decode(schedule.body.as_slice()) else {
        return false;
    };
    let Some(data) = inner.data.clone().and_then(inner_data) else {
        return false;
    };
    let Some(kind) = Kind::of(&data) else {
        return false;
    };
    let keys = schedule
        .signatories
        .iter()
        .filter_map(|k| hex::decode(k).ok())
        .collect();
    let active = ActiveKeys::from_keys(keys);
    let (payer, id) = (schedule.payer, schedule.scheduled_id);
    let Some(payer_account) = ledger.accounts.get(&payer) else {
        return false;
    };
    if !active.satisfies(&payer_account.key.to_proto()) {
        return false;
    }
    let consensus = ledger.next_consensus();
    let ctx = Ctx {
        payer,
        active: &active,
        consensus,
        id,
        node,
        max_custom_fees: &inner.max_custom_fees,
    };
    let fee = crate::fees::body_fee(kind, &data);
    let outcome = if ledger.accounts[&payer].balance < fee {
        Outcome::failed(Code::InsufficientPayerBalance)
    } else {
        match super::handle(ledger, &ctx, &data) {
            // Not every required key has signed yet: nothing changed, keep waiting.
            Err(Code::InvalidSignature) => return false,
            Ok(outcome) => outcome,
            Err(code) => Outcome::failed(code),
        }
    };
    let fee_legs = charge_fee(
        ledger,
        payer,
        node,
        fee.min(ledger.accounts[&payer].balance.max(0)),
    );
    let meta = RecordMeta {
        max_fee: inner.transaction_fee,
        memo: inner.memo,
        node,
        valid_duration_seconds: 0,
        hash: Vec::new(),
        high_volume_multiplier: None,
    };
    settle(ledger, id, consensus, kind, fee, fee_legs, outcome, meta);
    ledger.schedules.get_mut(&num).expect("exists").executed = Some(consensus);
    true
}
