//! CryptoService bodies: HBAR transfers and account creation.

use super::{Ctx, Outcome};
use crate::ledger::{account_num, Account, KeyBytes, Ledger};
use hedera_proto::services as proto;
use proto::ResponseCodeEnum as Code;
use std::collections::HashSet;

/// Most account amounts in one HBAR transfer list.
const MAX_TRANSFERS: usize = 10;
/// The default auto-renew period of a new account (90 days).
const DEFAULT_AUTO_RENEW_SECONDS: i64 = 7_776_000;

/// The transfer list's account numbers and amounts, checked for shape: known id form, no
/// repeats, a net of zero, a bounded size.
fn transfer_legs(body: &proto::CryptoTransferTransactionBody) -> Result<Vec<(u64, i64)>, Code> {
    let amounts = body
        .transfers
        .as_ref()
        .map(|t| t.account_amounts.as_slice())
        .unwrap_or_default();
    if amounts.len() > MAX_TRANSFERS {
        return Err(Code::TransferListSizeLimitExceeded);
    }
    let mut seen = HashSet::new();
    let mut legs = Vec::with_capacity(amounts.len());
    let mut net: i128 = 0;
    for leg in amounts {
        let num = leg
            .account_id
            .as_ref()
            .and_then(account_num)
            .ok_or(Code::InvalidAccountId)?;
        if leg.is_approval {
            return Err(Code::NotSupported);
        }
        if !seen.insert(num) {
            return Err(Code::AccountRepeatedInAccountAmounts);
        }
        net += i128::from(leg.amount);
        legs.push((num, leg.amount));
    }
    if net != 0 {
        return Err(Code::InvalidAccountAmounts);
    }
    Ok(legs)
}

pub fn pure_check_transfer(body: &proto::CryptoTransferTransactionBody) -> Result<(), Code> {
    transfer_legs(body).map(|_| ())
}

pub fn transfer(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    body: &proto::CryptoTransferTransactionBody,
) -> Result<Outcome, Code> {
    let legs = transfer_legs(body)?;
    for &(num, amount) in &legs {
        let account = ledger.accounts.get(&num).ok_or(Code::InvalidAccountId)?;
        if account.deleted {
            return Err(Code::AccountDeleted);
        }
        let must_sign = amount < 0 || (amount > 0 && account.receiver_sig_required);
        if must_sign && !ctx.active.satisfies(&account.key.to_proto()) {
            return Err(Code::InvalidSignature);
        }
    }
    for &(num, amount) in &legs {
        if amount < 0 && ledger.accounts[&num].balance < -amount {
            return Err(Code::InsufficientAccountBalance);
        }
    }
    for &(num, amount) in &legs {
        ledger
            .accounts
            .get_mut(&num)
            .expect("checked above")
            .balance += amount;
    }
    let mut outcome = Outcome::success();
    outcome.transfers = legs;
    Ok(outcome)
}

pub fn create(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    body: &proto::CryptoCreateTransactionBody,
) -> Result<Outcome, Code> {
    let key = body
        .key
        .as_ref()
        .filter(|k| k.key.is_some())
        .ok_or(Code::KeyRequired)?;
    if !body.alias.is_empty() {
        return Err(Code::NotSupported);
    }
    if body.memo.len() > 100 {
        return Err(Code::MemoTooLong);
    }
    if body.max_automatic_token_associations < -1 {
        return Err(Code::InvalidMaxAutoAssociations);
    }
    let initial = i64::try_from(body.initial_balance).map_err(|_| Code::InvalidInitialBalance)?;
    if ledger.accounts[&ctx.payer].balance < initial {
        return Err(Code::InsufficientPayerBalance);
    }
    let num = ledger.allocate();
    ledger
        .accounts
        .get_mut(&ctx.payer)
        .expect("payer exists")
        .balance -= initial;
    ledger.accounts.insert(
        num,
        Account {
            num,
            key: KeyBytes::from_proto(key),
            balance: initial,
            deleted: false,
            memo: body.memo.clone(),
            receiver_sig_required: body.receiver_sig_required,
            max_automatic_token_associations: body.max_automatic_token_associations,
            auto_renew_period: body
                .auto_renew_period
                .map_or(DEFAULT_AUTO_RENEW_SECONDS, |d| d.seconds),
            created: ctx.consensus,
            decline_reward: body.decline_reward,
        },
    );
    let mut outcome = Outcome::success();
    outcome.receipt.account_id = Some(num);
    outcome.transfers = vec![(ctx.payer, -initial), (num, initial)];
    outcome.entity = Some(format!("0.0.{num}"));
    Ok(outcome)
}
