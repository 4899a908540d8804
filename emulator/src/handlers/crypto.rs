//! CryptoService bodies: transfers (HBAR, fungible tokens, NFTs, with automatic
//! associations), account creation, update and deletion.

use super::token::{live_token, new_rel};
use super::{Ctx, Outcome};
use crate::ledger::{account_num, Account, KeyBytes, Ledger};
use hedera_proto::services as proto;
use proto::ResponseCodeEnum as Code;
use std::collections::{HashMap, HashSet};

/// Most account amounts in one HBAR transfer list, and most token transfer lists.
const MAX_TRANSFERS: usize = 10;
/// The default auto-renew period of a new account (90 days).
const DEFAULT_AUTO_RENEW_SECONDS: i64 = 7_776_000;

/// Account numbers and amounts of a list, checked for shape: plain ids, no repeats, no
/// approvals (allowances are not emulated yet), a net of zero (`unbalanced` otherwise).
fn legs(amounts: &[proto::AccountAmount], unbalanced: Code) -> Result<Vec<(u64, i64)>, Code> {
    let mut seen = HashSet::new();
    let mut net: i128 = 0;
    let mut out = Vec::with_capacity(amounts.len());
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
        out.push((num, leg.amount));
    }
    if net != 0 {
        return Err(unbalanced);
    }
    Ok(out)
}

fn hbar_legs(body: &proto::CryptoTransferTransactionBody) -> Result<Vec<(u64, i64)>, Code> {
    let amounts = body
        .transfers
        .as_ref()
        .map(|t| t.account_amounts.as_slice())
        .unwrap_or_default();
    if amounts.len() > MAX_TRANSFERS {
        return Err(Code::TransferListSizeLimitExceeded);
    }
    legs(amounts, Code::InvalidAccountAmounts)
}

pub fn pure_check_transfer(body: &proto::CryptoTransferTransactionBody) -> Result<(), Code> {
    hbar_legs(body)?;
    if body.token_transfers.len() > MAX_TRANSFERS {
        return Err(Code::TokenTransferListSizeLimitExceeded);
    }
    for list in &body.token_transfers {
        if list.transfers.is_empty() && list.nft_transfers.is_empty() {
            return Err(Code::EmptyTokenTransferAccountAmounts);
        }
        legs(&list.transfers, Code::TransfersNotZeroSumForToken)?;
        if list.nft_transfers.iter().any(|n| n.is_approval) {
            return Err(Code::NotSupported);
        }
    }
    Ok(())
}

/// The changes a transfer makes, gathered while checking, applied only if all checks pass.
#[derive(Default)]
struct Plan {
    hbar: Vec<(u64, i64)>,
    /// (token, account, amount)
    fungible: Vec<(u64, u64, i64)>,
    /// (token, sender, receiver, serial)
    nfts: Vec<(u64, u64, u64, i64)>,
    /// (account, token) associations made automatically by this transfer.
    automatic: Vec<(u64, u64)>,
}

impl Plan {
    /// Check that `account` can hold `token` (associating it automatically when it has a
    /// free slot), is not frozen and has KYC.
    fn holder(
        &mut self,
        ledger: &Ledger,
        account: u64,
        token: u64,
        receiving: bool,
    ) -> Result<(), Code> {
        let t = &ledger.tokens[&token];
        match ledger.rel(account, token) {
            Some(rel) => {
                if rel.frozen {
                    return Err(Code::AccountFrozenForToken);
                }
                if !rel.kyc_granted {
                    return Err(Code::AccountKycNotGrantedForToken);
                }
                Ok(())
            }
            None if self.automatic.contains(&(account, token)) => Ok(()),
            None if receiving => {
                let max = ledger.accounts[&account].max_automatic_token_associations;
                let used = ledger.automatic_associations(account)
                    + self.automatic.iter().filter(|(a, _)| *a == account).count();
                let free = max == -1 || (max > 0 && used < max as usize);
                if !free || (t.freeze_default && t.freeze_key.is_some()) || t.kyc_key.is_some() {
                    return Err(Code::TokenNotAssociatedToAccount);
                }
                self.automatic.push((account, token));
                Ok(())
            }
            None => Err(Code::TokenNotAssociatedToAccount),
        }
    }
}

/// A live account that must sign when debited (or when it requires receiver signatures).
fn party<'l>(
    ledger: &'l Ledger,
    ctx: &Ctx<'_>,
    num: u64,
    debited: bool,
) -> Result<&'l Account, Code> {
    let account = ledger.accounts.get(&num).ok_or(Code::InvalidAccountId)?;
    if account.deleted {
        return Err(Code::AccountDeleted);
    }
    if debited || account.receiver_sig_required {
        ctx.require(&account.key)?;
    }
    Ok(account)
}

pub fn transfer(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    body: &proto::CryptoTransferTransactionBody,
) -> Result<Outcome, Code> {
    pure_check_transfer(body)?;
    let mut plan = Plan {
        hbar: hbar_legs(body)?,
        ..Plan::default()
    };
    for &(num, amount) in &plan.hbar {
        let account = party(ledger, ctx, num, amount < 0)?;
        if amount < 0 && account.balance < -amount {
            return Err(Code::InsufficientAccountBalance);
        }
    }
    let mut owners: HashMap<(u64, i64), u64> = HashMap::new();
    for list in &body.token_transfers {
        let token = live_token(ledger, list.token.as_ref())?;
        let num = token.num;
        if token.paused {
            return Err(Code::TokenIsPaused);
        }
        if list.expected_decimals.is_some_and(|d| d != token.decimals) {
            return Err(Code::UnexpectedTokenDecimals);
        }
        if token.nft && !list.transfers.is_empty() {
            return Err(Code::AccountAmountTransfersOnlyAllowedForFungibleCommon);
        }
        if !token.nft && !list.nft_transfers.is_empty() {
            return Err(Code::InvalidNftId);
        }
        for (account, amount) in legs(&list.transfers, Code::TransfersNotZeroSumForToken)? {
            party(ledger, ctx, account, amount < 0)?;
            plan.holder(ledger, account, num, amount > 0)?;
            if amount < 0 && ledger.rel(account, num).map_or(0, |r| r.balance) < -amount {
                return Err(Code::InsufficientTokenBalance);
            }
            plan.fungible.push((num, account, amount));
        }
        for nft in &list.nft_transfers {
            let sender = nft
                .sender_account_id
                .as_ref()
                .and_then(account_num)
                .ok_or(Code::InvalidAccountId)?;
            let receiver = nft
                .receiver_account_id
                .as_ref()
                .and_then(account_num)
                .ok_or(Code::InvalidAccountId)?;
            if sender == receiver {
                return Err(Code::AccountRepeatedInAccountAmounts);
            }
            party(ledger, ctx, sender, true)?;
            party(ledger, ctx, receiver, false)?;
            plan.holder(ledger, sender, num, false)?;
            plan.holder(ledger, receiver, num, true)?;
            let serial = nft.serial_number;
            let stored = ledger
                .nfts
                .get(&num)
                .and_then(|s| s.get(&serial))
                .ok_or(Code::InvalidNftId)?;
            let owner = owners.get(&(num, serial)).copied().unwrap_or(stored.owner);
            if owner != sender {
                return Err(Code::SenderDoesNotOwnNftSerialNo);
            }
            owners.insert((num, serial), receiver);
            plan.nfts.push((num, sender, receiver, serial));
        }
    }

    // Every check passed: apply.
    for &(num, amount) in &plan.hbar {
        ledger.accounts.get_mut(&num).expect("checked").balance += amount;
    }
    for &(account, token) in &plan.automatic {
        let rel = new_rel(&ledger.tokens[&token], true, ctx.consensus);
        ledger.rels.entry(account).or_default().insert(token, rel);
    }
    for &(token, account, amount) in &plan.fungible {
        ledger
            .rel_mut(account, token)
            .expect("checked or associated")
            .balance += amount;
    }
    for &(token, sender, receiver, serial) in &plan.nfts {
        let nft = ledger
            .nfts
            .get_mut(&token)
            .and_then(|s| s.get_mut(&serial))
            .expect("checked");
        nft.owner = receiver;
        nft.modified = ctx.consensus;
        ledger.rel_mut(sender, token).expect("checked").balance -= 1;
        ledger
            .rel_mut(receiver, token)
            .expect("checked or associated")
            .balance += 1;
    }
    let mut outcome = Outcome::success();
    outcome.transfers = plan.hbar;
    outcome.token_transfers = plan.fungible;
    outcome.nft_transfers = plan.nfts;
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
    if let Some(max) = body.max_automatic_token_associations {
        if max < -1 || (max >= 0 && (max as usize) < ledger.automatic_associations(num)) {
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
