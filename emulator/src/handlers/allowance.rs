//! Allowances: owners approve spenders for HBAR, fungible tokens and NFTs; transfers marked
//! `is_approval` spend them (see `crypto::plan_transfer`).

use super::live_token;
use super::{Ctx, Outcome};
use crate::state::ledger::{account_num, Ledger};
use hedera_proto::services as proto;
use proto::ResponseCodeEnum as Code;

/// The owner (the payer when unset), live and signing, and a live spender other than it.
fn owner_and_spender(
    ledger: &Ledger,
    ctx: &Ctx<'_>,
    owner: Option<&proto::AccountId>,
    spender: Option<&proto::AccountId>,
) -> Result<(u64, u64), Code> {
    parties(ledger, ctx, owner, spender, None)
}

/// As `owner_and_spender`, but `signer` (a delegating spender) signs instead of the owner.
fn parties(
    ledger: &Ledger,
    ctx: &Ctx<'_>,
    owner: Option<&proto::AccountId>,
    spender: Option<&proto::AccountId>,
    signer: Option<u64>,
) -> Result<(u64, u64), Code> {
    let owner = match owner {
        Some(id) => account_num(id).ok_or(Code::InvalidAllowanceOwnerId)?,
        None => ctx.payer,
    };
    let account = ledger
        .live_account(owner)
        .ok_or(Code::InvalidAllowanceOwnerId)?;
    match signer {
        None => ctx.require(&account.key)?,
        Some(delegate) => {
            let delegate = ledger
                .live_account(delegate)
                .ok_or(Code::InvalidDelegatingSpender)?;
            ctx.require(&delegate.key)?;
        }
    }
    let spender = spender
        .and_then(account_num)
        .ok_or(Code::InvalidAllowanceSpenderId)?;
    // A contract may spend (the network's own tests approve a `ContractId`).
    if ledger.live_account(spender).is_none() && ledger.live_contract(spender).is_none() {
        return Err(Code::InvalidAllowanceSpenderId);
    }
    if spender == owner {
        return Err(Code::SpenderAccountSameAsOwner);
    }
    Ok((owner, spender))
}

pub fn approve(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    body: &proto::CryptoApproveAllowanceTransactionBody,
) -> Result<Outcome, Code> {
    if body.crypto_allowances.is_empty()
        && body.token_allowances.is_empty()
        && body.nft_allowances.is_empty()
    {
        return Err(Code::EmptyAllowances);
    }
    // Check everything, then apply.
    let mut hbar = Vec::new();
    for a in &body.crypto_allowances {
        let (owner, spender) =
            owner_and_spender(ledger, ctx, a.owner.as_ref(), a.spender.as_ref())?;
        if a.amount < 0 {
            return Err(Code::NegativeAllowanceAmount);
        }
        hbar.push((owner, spender, a.amount));
    }
    let mut tokens = Vec::new();
    for a in &body.token_allowances {
        let (owner, spender) =
            owner_and_spender(ledger, ctx, a.owner.as_ref(), a.spender.as_ref())?;
        let token = live_token(ledger, a.token_id.as_ref())?;
        if token.nft {
            return Err(Code::NftInFungibleTokenAllowances);
        }
        if a.amount < 0 {
            return Err(Code::NegativeAllowanceAmount);
        }
        if ledger.rel(owner, token.num).is_none() {
            return Err(Code::TokenNotAssociatedToAccount);
        }
        tokens.push((owner, token.num, spender, a.amount));
    }
    let mut serials = Vec::new();
    let mut for_all = Vec::new();
    for a in &body.nft_allowances {
        // A spender approved for all of the owner's serials may grant single serials on the
        // owner's behalf, signing itself (never "all serials" in turn).
        let delegate = match &a.delegating_spender {
            None => None,
            Some(id) => Some(account_num(id).ok_or(Code::InvalidDelegatingSpender)?),
        };
        if delegate.is_some() && a.approved_for_all == Some(true) {
            return Err(Code::DelegatingSpenderCannotGrantApproveForAll);
        }
        let (owner, spender) =
            parties(ledger, ctx, a.owner.as_ref(), a.spender.as_ref(), delegate)?;
        let token = live_token(ledger, a.token_id.as_ref())?;
        if !token.nft {
            return Err(Code::FungibleTokenInNftAllowances);
        }
        if let Some(delegate) = delegate {
            let approved = ledger
                .nft_approvals_for_all
                .get(&owner)
                .and_then(|tokens| tokens.get(&token.num))
                .is_some_and(|spenders| spenders.contains(&delegate));
            if !approved {
                return Err(Code::DelegatingSpenderDoesNotHaveApproveForAll);
            }
        }
        if ledger.rel(owner, token.num).is_none() {
            return Err(Code::TokenNotAssociatedToAccount);
        }
        for serial in &a.serial_numbers {
            let nft = ledger
                .nfts
                .get(&token.num)
                .and_then(|s| s.get(serial))
                .ok_or(Code::InvalidTokenNftSerialNumber)?;
            if nft.owner != owner {
                return Err(Code::SenderDoesNotOwnNftSerialNo);
            }
            serials.push((token.num, *serial, spender));
        }
        if let Some(all) = a.approved_for_all {
            for_all.push((owner, token.num, spender, all));
        }
    }
    for (owner, spender, amount) in hbar {
        let spenders = ledger.hbar_allowances.entry(owner).or_default();
        if amount == 0 {
            spenders.remove(&spender);
        } else {
            spenders.insert(spender, amount);
        }
    }
    for (owner, token, spender, amount) in tokens {
        let spenders = ledger
            .token_allowances
            .entry(owner)
            .or_default()
            .entry(token)
            .or_default();
        if amount == 0 {
            spenders.remove(&spender);
        } else {
            spenders.insert(spender, amount);
        }
    }
    for (token, serial, spender) in serials {
        if let Some(nft) = ledger.nfts.get_mut(&token).and_then(|s| s.get_mut(&serial)) {
            nft.spender = Some(spender);
        }
    }
    for (owner, token, spender, all) in for_all {
        let spenders = ledger
            .nft_approvals_for_all
            .entry(owner)
            .or_default()
            .entry(token)
            .or_default();
        if all {
            spenders.insert(spender);
        } else {
            spenders.remove(&spender);
        }
    }
    Ok(Outcome::success())
}

pub fn delete(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    body: &proto::CryptoDeleteAllowanceTransactionBody,
) -> Result<Outcome, Code> {
    if body.nft_allowances.is_empty() {
        return Err(Code::EmptyAllowances);
    }
    let mut clear = Vec::new();
    for a in &body.nft_allowances {
        let owner = match &a.owner {
            Some(id) => account_num(id).ok_or(Code::InvalidAllowanceOwnerId)?,
            None => ctx.payer,
        };
        let account = ledger
            .live_account(owner)
            .ok_or(Code::InvalidAllowanceOwnerId)?;
        ctx.require(&account.key)?;
        let token = live_token(ledger, a.token_id.as_ref())?;
        if !token.nft {
            return Err(Code::FungibleTokenInNftAllowances);
        }
        if a.serial_numbers.is_empty() {
            return Err(Code::EmptyAllowances);
        }
        for serial in &a.serial_numbers {
            let nft = ledger
                .nfts
                .get(&token.num)
                .and_then(|s| s.get(serial))
                .ok_or(Code::InvalidTokenNftSerialNumber)?;
            if nft.owner != owner {
                return Err(Code::SenderDoesNotOwnNftSerialNo);
            }
            clear.push((token.num, *serial));
        }
    }
    for (token, serial) in clear {
        if let Some(nft) = ledger.nfts.get_mut(&token).and_then(|s| s.get_mut(&serial)) {
            nft.spender = None;
        }
    }
    Ok(Outcome::success())
}
