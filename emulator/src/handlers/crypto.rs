//! CryptoService transfers: HBAR, fungible tokens and NFTs, with automatic associations and
//! allowance spends, planned in full before anything moves (`account`: create, update and
//! delete).

use super::fee_assessment::{charge, Mode};
use super::live_token;
use super::plan::Plan;
use super::token::new_rel;
use super::{Ctx, Outcome};
use crate::state::ledger::{account_num, Account, Ledger};
use hedera_proto::services as proto;
use proto::ResponseCodeEnum as Code;
use std::collections::{HashMap, HashSet};

/// Most account amounts in one HBAR transfer list, and most token transfer lists.
const MAX_TRANSFERS: usize = 10;

/// One leg of a transfer list.
#[derive(Clone, Copy, Debug)]
pub struct Leg {
    pub account: u64,
    pub amount: i64,
    /// Debited through an allowance granted to the payer.
    pub approval: bool,
}

/// The legs of a list, checked for shape: plain ids, no repeats, a net of zero
/// (`unbalanced` otherwise).
fn legs(amounts: &[proto::AccountAmount], unbalanced: Code) -> Result<Vec<Leg>, Code> {
    let mut seen = HashSet::new();
    let mut net: i128 = 0;
    let mut out = Vec::with_capacity(amounts.len());
    for leg in amounts {
        let id = leg.account_id.as_ref().ok_or(Code::InvalidAccountId)?;
        // An alias (resolved before a transfer is planned) stands for an account number in
        // precheck's shape checks: one number per alias, far above any entity's.
        let account = account_num(id)
            .or_else(|| super::alias::is_alias(id).then(|| alias_placeholder(id)))
            .ok_or(Code::InvalidAccountId)?;
        if !seen.insert(account) {
            return Err(Code::AccountRepeatedInAccountAmounts);
        }
        net += i128::from(leg.amount);
        out.push(Leg {
            account,
            amount: leg.amount,
            approval: leg.is_approval && leg.amount < 0,
        });
    }
    if net != 0 {
        return Err(unbalanced);
    }
    Ok(out)
}

fn alias_placeholder(id: &proto::AccountId) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    id.account.hash(&mut h);
    h.finish() | (1 << 63)
}

fn hbar_legs(body: &proto::CryptoTransferTransactionBody) -> Result<Vec<Leg>, Code> {
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
    pure_check_token_lists(&body.token_transfers)
}

pub fn pure_check_token_lists(lists: &[proto::TokenTransferList]) -> Result<(), Code> {
    if lists.len() > MAX_TRANSFERS {
        return Err(Code::TokenTransferListSizeLimitExceeded);
    }
    for list in lists {
        if list.transfers.is_empty() && list.nft_transfers.is_empty() {
            return Err(Code::EmptyTokenTransferAccountAmounts);
        }
        legs(&list.transfers, Code::TransfersNotZeroSumForToken)?;
    }
    Ok(())
}

/// How a transfer is authorised.
#[derive(Clone, Copy, Default)]
pub struct Rules {
    /// The senders already signed (a claimed airdrop): no sender signature is required now.
    pub senders_signed: bool,
    /// Receivers are associated whatever their automatic-association slots (a claim).
    pub force_association: bool,
    /// The transfer pays fees the network assessed (a topic's custom fees): credits need no
    /// signature, whatever the collector's `receiverSigRequired`.
    pub assessed_fees: bool,
}

/// A live account; it must sign when `must_sign`, or when it requires receiver signatures
/// (unless the transfer pays assessed fees).
fn party<'l>(
    ledger: &'l Ledger,
    ctx: &Ctx<'_>,
    num: u64,
    must_sign: bool,
    rules: &Rules,
) -> Result<&'l Account, Code> {
    let account = ledger.accounts.get(&num).ok_or(Code::InvalidAccountId)?;
    if account.deleted {
        return Err(Code::AccountDeleted);
    }
    if must_sign || (account.receiver_sig_required && !rules.assessed_fees) {
        ctx.require(&account.key)?;
    }
    Ok(account)
}

/// Check a whole transfer (HBAR legs and token lists) and gather its changes.
pub fn plan_transfer(
    ledger: &Ledger,
    ctx: &Ctx<'_>,
    hbar: &[Leg],
    lists: &[proto::TokenTransferList],
    rules: Rules,
) -> Result<Plan, Code> {
    let mut plan = Plan::default();
    let spender = ctx.payer;
    for leg in hbar {
        let debit = leg.amount < 0;
        let account = party(
            ledger,
            ctx,
            leg.account,
            debit && !leg.approval && !rules.senders_signed,
            &rules,
        )?;
        if debit && account.balance < -leg.amount {
            return Err(Code::InsufficientAccountBalance);
        }
        if leg.approval {
            let allowed = ledger
                .hbar_allowances
                .get(&leg.account)
                .and_then(|s| s.get(&spender))
                .copied();
            match allowed {
                None => return Err(Code::SpenderDoesNotHaveAllowance),
                Some(a) if a < -leg.amount => return Err(Code::AmountExceedsAllowance),
                Some(_) => plan
                    .hbar_allowance
                    .push((leg.account, spender, -leg.amount)),
            }
        }
        plan.hbar.push((leg.account, leg.amount));
    }
    let mut owners: HashMap<(u64, i64), u64> = HashMap::new();
    // The network's order: every token's own checks and every receiver's association first
    // (`AssociateTokenRecipientsStep`), then allowances, then senders' relationships and
    // balances.
    let mut fungible_legs = Vec::new();
    for list in lists {
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
        for leg in legs(&list.transfers, Code::TransfersNotZeroSumForToken)? {
            let debit = leg.amount < 0;
            party(
                ledger,
                ctx,
                leg.account,
                debit && !leg.approval && !rules.senders_signed,
                &rules,
            )?;
            // Receivers now (`AssociateTokenRecipientsStep`); senders after the allowances.
            if !debit {
                plan.holder(ledger, leg.account, num, true, rules.force_association)?;
            }
            fungible_legs.push((num, leg));
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
            party(
                ledger,
                ctx,
                sender,
                !nft.is_approval && !rules.senders_signed,
                &rules,
            )?;
            party(ledger, ctx, receiver, false, &rules)?;
            plan.holder(ledger, sender, num, false, false)?;
            plan.holder(ledger, receiver, num, true, rules.force_association)?;
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
            if nft.is_approval {
                let for_all = ledger
                    .nft_approvals_for_all
                    .get(&sender)
                    .and_then(|t| t.get(&num))
                    .is_some_and(|s| s.contains(&spender));
                if stored.spender != Some(spender) && !for_all {
                    return Err(Code::SpenderDoesNotHaveAllowance);
                }
            }
            owners.insert((num, serial), receiver);
            plan.nfts.push((num, sender, receiver, serial));
        }
    }
    for (num, leg) in fungible_legs.iter().filter(|(_, leg)| leg.approval) {
        let allowed = ledger
            .token_allowances
            .get(&leg.account)
            .and_then(|t| t.get(num))
            .and_then(|s| s.get(&spender))
            .copied();
        match allowed {
            None => return Err(Code::SpenderDoesNotHaveAllowance),
            Some(a) if a < -leg.amount => return Err(Code::AmountExceedsAllowance),
            Some(_) => plan
                .token_allowance
                .push((leg.account, *num, spender, -leg.amount)),
        }
    }
    for (num, leg) in fungible_legs {
        if leg.amount < 0 {
            plan.holder(ledger, leg.account, num, false, false)?;
        }
        let held = ledger.rel(leg.account, num).map_or(0, |r| r.balance);
        if leg.amount < 0 && held < -leg.amount {
            return Err(Code::InsufficientTokenBalance);
        }
        plan.fungible.push((num, leg.account, leg.amount));
    }
    Ok(plan)
}

/// Apply a checked plan.
pub fn apply_transfer(ledger: &mut Ledger, ctx: &Ctx<'_>, plan: Plan) -> Outcome {
    for &(num, amount) in &plan.hbar {
        ledger.accounts.get_mut(&num).expect("checked").balance += amount;
    }
    for &(owner, spender, amount) in &plan.hbar_allowance {
        if let Some(left) = ledger
            .hbar_allowances
            .get_mut(&owner)
            .and_then(|s| s.get_mut(&spender))
        {
            *left -= amount;
        }
    }
    for &(owner, token, spender, amount) in &plan.token_allowance {
        let left = ledger
            .token_allowances
            .get_mut(&owner)
            .and_then(|t| t.get_mut(&token))
            .and_then(|s| s.get_mut(&spender));
        if let Some(left) = left {
            *left -= amount;
        }
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
        nft.spender = None;
        nft.modified = ctx.consensus;
        ledger.rel_mut(sender, token).expect("checked").balance -= 1;
        ledger
            .rel_mut(receiver, token)
            .expect("checked or associated")
            .balance += 1;
    }
    let mut outcome = Outcome::success();
    outcome.transfers = plan.hbar;
    // One entry per (token, account), as the record lists them.
    let mut merged: Vec<(u64, u64, i64)> = Vec::with_capacity(plan.fungible.len());
    for (token, account, amount) in plan.fungible {
        match merged
            .iter_mut()
            .find(|(t, a, _)| *t == token && *a == account)
        {
            Some(entry) => entry.2 += amount,
            None => merged.push((token, account, amount)),
        }
    }
    merged.retain(|m| m.2 != 0);
    outcome.token_transfers = merged;
    outcome.nft_transfers = plan.nfts;
    outcome.automatic_associations = plan.automatic;
    outcome
}

pub fn transfer(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    body: &proto::CryptoTransferTransactionBody,
) -> Result<Outcome, Code> {
    pure_check_transfer(body)?;
    let (resolved, created) = match super::alias::resolve_transfer(ledger, ctx, body)? {
        Some((resolved, created)) => (Some(resolved), created),
        None => (None, Vec::new()),
    };
    let body = resolved.as_ref().unwrap_or(body);
    let planned = hbar_legs(body).and_then(|legs| {
        let mut plan = plan_transfer(ledger, ctx, &legs, &body.token_transfers, Rules::default())?;
        let fees = charge(ledger, ctx, &mut plan, Mode::Transfer, &[], &[])?;
        Ok((plan, fees))
    });
    match planned {
        Ok((plan, fees)) => {
            let mut outcome = apply_transfer(ledger, ctx, plan);
            outcome.assessed_custom_fees = fees;
            outcome.receipt.created_accounts = created;
            Ok(outcome)
        }
        Err(code) => {
            super::alias::undo(ledger, &created);
            Err(code)
        }
    }
}
