//! CryptoService accounts: creation (a key and optionally an EVM address alias, the initial
//! balance, the auto-renew period, automatic association slots), update, and deletion (the
//! balance goes to a live transfer account).

use super::{Ctx, Outcome};
use crate::state::ledger::{account_num, Account, KeyBytes, Ledger};
use hedera_proto::services as proto;
use proto::ResponseCodeEnum as Code;

/// The default auto-renew period of a new account (90 days).
const DEFAULT_AUTO_RENEW_SECONDS: i64 = 7_776_000;

/// The auto-renew periods the network accepts for an account: 30 days to about 92.6 days
/// (`ledger.autoRenewPeriod.minDuration` / `maxDuration`).
const AUTO_RENEW_SECONDS: std::ops::RangeInclusive<i64> = 2_592_000..=8_000_001;

fn check_auto_renew(period: Option<&proto::Duration>) -> Result<(), Code> {
    match period {
        Some(d) if !AUTO_RENEW_SECONDS.contains(&d.seconds) => {
            Err(Code::AutorenewDurationNotInRange)
        }
        _ => Ok(()),
    }
}

pub fn create(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    body: &proto::CryptoCreateTransactionBody,
) -> Result<Outcome, Code> {
    check_auto_renew(body.auto_renew_period.as_ref())?;
    let key = body
        .key
        .as_ref()
        .filter(|k| k.key.is_some())
        .ok_or(Code::KeyRequired)?;
    // A new account that requires receiver signatures signs its own creation.
    if body.receiver_sig_required && !ctx.active.satisfies(key) {
        return Err(Code::InvalidSignature);
    }
    // An EVM address alias (HIP-583): unused, and signed by the ECDSA key it derives from
    // unless that key is the account's own key.
    let evm_address = match body.alias.len() {
        0 => None,
        20 => {
            let alias = hex::encode(&body.alias);
            let derives = |raw: &[u8]| {
                super::alias::ecdsa_evm_address(raw).as_deref() == Some(alias.as_str())
            };
            let own_key =
                matches!(&key.key, Some(proto::key::Key::EcdsaSecp256k1(raw)) if derives(raw));
            if !own_key && !ctx.active.keys().iter().any(|raw| derives(raw)) {
                return Err(Code::InvalidSignature);
            }
            if ledger
                .accounts
                .values()
                .any(|a| a.evm_address.as_deref() == Some(alias.as_str()))
            {
                return Err(Code::AliasAlreadyAssigned);
            }
            Some(alias)
        }
        _ => return Err(Code::InvalidAliasKey),
    };
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
            evm_address,
            key_alias: None,
        },
    );
    let mut outcome = Outcome::success().entity(num);
    outcome.receipt.account_id = Some(num);
    outcome.transfers = vec![(ctx.payer, -initial), (num, initial)];
    Ok(outcome)
}

pub fn update(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    body: &proto::CryptoUpdateTransactionBody,
) -> Result<Outcome, Code> {
    use proto::crypto_update_transaction_body::ReceiverSigRequiredField as Rsr;
    let num = body
        .account_id_to_update
        .as_ref()
        .and_then(account_num)
        .ok_or(Code::InvalidAccountId)?;
    let account = ledger.accounts.get(&num).ok_or(Code::InvalidAccountId)?;
    if account.deleted {
        return Err(Code::AccountDeleted);
    }
    ctx.require(&account.key)?;
    let new_key = body.key.as_ref().map(KeyBytes::from_proto);
    if let Some(key) = &new_key {
        ctx.require(key)?;
    }
    if body.memo.as_ref().is_some_and(|m| m.len() > 100) {
        return Err(Code::MemoTooLong);
    }
    check_auto_renew(body.auto_renew_period.as_ref())?;
    if let Some(max) = body.max_automatic_token_associations {
        if max < -1 {
            return Err(Code::InvalidMaxAutoAssociations);
        }
        if max >= 0 && (max as usize) < ledger.automatic_associations(num) {
            return Err(Code::ExistingAutomaticAssociationsExceedGivenLimit);
        }
    }
    let account = ledger.accounts.get_mut(&num).expect("checked");
    if let Some(key) = new_key {
        account.key = key;
    }
    if let Some(memo) = &body.memo {
        account.memo = memo.clone();
    }
    if let Some(max) = body.max_automatic_token_associations {
        account.max_automatic_token_associations = max;
    }
    if let Some(decline) = body.decline_reward {
        account.decline_reward = decline;
    }
    if let Some(period) = body.auto_renew_period {
        account.auto_renew_period = period.seconds;
    }
    match body.receiver_sig_required_field {
        Some(Rsr::ReceiverSigRequired(v)) => account.receiver_sig_required = v,
        Some(Rsr::ReceiverSigRequiredWrapper(v)) => account.receiver_sig_required = v,
        None => {}
    }
    Ok(Outcome::success().entity(num))
}

pub fn delete(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    body: &proto::CryptoDeleteTransactionBody,
) -> Result<Outcome, Code> {
    let num = body
        .delete_account_id
        .as_ref()
        .and_then(account_num)
        .ok_or(Code::InvalidAccountId)?;
    let to = body
        .transfer_account_id
        .as_ref()
        .and_then(account_num)
        .ok_or(Code::InvalidTransferAccountId)?;
    if num == to {
        return Err(Code::TransferAccountSameAsDeleteAccount);
    }
    let account = ledger.accounts.get(&num).ok_or(Code::InvalidAccountId)?;
    if account.deleted {
        return Err(Code::AccountDeleted);
    }
    ctx.require(&account.key)?;
    let receiver = ledger
        .accounts
        .get(&to)
        .ok_or(Code::InvalidTransferAccountId)?;
    if receiver.deleted {
        return Err(Code::AccountDeleted);
    }
    if ledger
        .tokens
        .values()
        .any(|t| !t.deleted && t.treasury == num)
    {
        return Err(Code::AccountIsTreasury);
    }
    if ledger
        .rels
        .get(&num)
        .is_some_and(|r| r.values().any(|rel| rel.balance != 0))
    {
        return Err(Code::TransactionRequiresZeroTokenBalances);
    }
    let balance = account.balance;
    let account = ledger.accounts.get_mut(&num).expect("checked");
    account.balance = 0;
    account.deleted = true;
    ledger.accounts.get_mut(&to).expect("checked").balance += balance;
    let mut outcome = Outcome::success().entity(num);
    outcome.transfers = vec![(num, -balance), (to, balance)];
    Ok(outcome)
}
