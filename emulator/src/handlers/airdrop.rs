//! Airdrops: token transfers that go straight to receivers who can take them (associated,
//! or with a free automatic-association slot and no receiver signature requirement) and
//! become pending airdrops for the others, to be claimed by the receiver or cancelled by the
//! sender.

use super::crypto::{apply_transfer, plan_transfer, pure_check_token_lists, Rules};
use super::fee_assessment::{charge, Mode};
use super::live_token;
use super::plan::has_free_slot;
use super::{Ctx, Outcome};
use crate::state::ledger::{account_id, account_num, token_id, Ledger, PendingAirdrop};
use hedera_proto::services as proto;
use proto::ResponseCodeEnum as Code;

/// Does `token` go to `receiver` now (else it pends)? An associated receiver takes it unless
/// it requires receiver signatures — frozen or not: a frozen one fails the transfer
/// (`ACCOUNT_FROZEN_FOR_TOKEN`), as on the network; an unassociated one needs a free slot.
fn takes_now(ledger: &Ledger, receiver: u64, token: u64, planned: &[(u64, u64)]) -> bool {
    let Some(account) = ledger.accounts.get(&receiver) else {
        return false;
    };
    if account.receiver_sig_required {
        return false;
    }
    ledger.rel(receiver, token).is_some() || has_free_slot(ledger, receiver, planned)
}

pub fn airdrop(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    body: &proto::TokenAirdropTransactionBody,
) -> Result<Outcome, Code> {
    if body.token_transfers.is_empty() {
        return Err(Code::EmptyTokenTransferBody);
    }
    pure_check_token_lists(&body.token_transfers)?;
    // Receivers named by a key alias or an EVM address are created first (HIP-583), as a
    // transfer creates them; a failed airdrop creates nobody.
    let as_transfer = proto::CryptoTransferTransactionBody {
        transfers: None,
        token_transfers: body.token_transfers.clone(),
    };
    let Some((resolved, created)) = super::alias::resolve_transfer(ledger, ctx, &as_transfer)?
    else {
        return deliver(ledger, ctx, body);
    };
    let body = proto::TokenAirdropTransactionBody {
        token_transfers: resolved.token_transfers,
    };
    match deliver(ledger, ctx, &body) {
        Ok(mut outcome) => {
            outcome.receipt.created_accounts = created;
            Ok(outcome)
        }
        Err(code) => {
            super::alias::undo(ledger, &created);
            Err(code)
        }
    }
}

/// An airdrop whose parties are all account numbers.
fn deliver(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    body: &proto::TokenAirdropTransactionBody,
) -> Result<Outcome, Code> {
    let mut direct_lists = Vec::new();
    let mut pending = Vec::new();
    let mut planned: Vec<(u64, u64)> = Vec::new();
    for list in &body.token_transfers {
        let token = live_token(ledger, list.token.as_ref())?;
        let num = token.num;
        // A paused token moves neither now nor later (pending airdrops included).
        if token.paused {
            return Err(Code::TokenIsPaused);
        }
        let mut direct = proto::TokenTransferList {
            token: list.token,
            expected_decimals: list.expected_decimals,
            ..Default::default()
        };
        // Fungible: credits split into direct and pending; senders are debited only for the direct part.
        let mut pending_by_sender: std::collections::BTreeMap<u64, i64> = Default::default();
        for leg in &list.transfers {
            let account = leg
                .account_id
                .as_ref()
                .and_then(account_num)
                .ok_or(Code::InvalidAccountId)?;
            if leg.amount > 0 && !takes_now(ledger, account, num, &planned) {
                ledger.live_account(account).ok_or(Code::InvalidAccountId)?;
                pending.push((account, num, None, leg.amount));
                continue;
            }
            if leg.amount > 0 && ledger.rel(account, num).is_none() {
                planned.push((account, num));
            }
            direct.transfers.push(leg.clone());
        }
        let senders: Vec<u64> = list
            .transfers
            .iter()
            .filter(|l| l.amount < 0)
            .filter_map(|l| l.account_id.as_ref().and_then(account_num))
            .collect();
        if senders.len() > 1 && pending.iter().any(|p| p.1 == num) {
            // With several senders, pending credits cannot be attributed to one of them.
            return Err(Code::InvalidTransaction);
        }
        for (_, _, _, amount) in pending.iter().filter(|p| p.1 == num && p.2.is_none()) {
            if let Some(sender) = senders.first() {
                *pending_by_sender.entry(*sender).or_default() += amount;
            }
        }
        for (sender, amount) in &pending_by_sender {
            let held = ledger.rel(*sender, num).map_or(0, |r| r.balance);
            let total_out: i64 = list
                .transfers
                .iter()
                .filter(|l| l.amount < 0)
                .map(|l| -l.amount)
                .sum();
            if held < total_out {
                return Err(Code::InsufficientTokenBalance);
            }
            if let Some(leg) = direct
                .transfers
                .iter_mut()
                .find(|l| l.account_id.as_ref().and_then(account_num) == Some(*sender))
            {
                leg.amount += amount;
            }
        }
        direct.transfers.retain(|l| l.amount != 0);
        // NFTs: each serial goes straight or becomes pending.
        for nft in &list.nft_transfers {
            let receiver = nft
                .receiver_account_id
                .as_ref()
                .and_then(account_num)
                .ok_or(Code::InvalidAccountId)?;
            let sender = nft
                .sender_account_id
                .as_ref()
                .and_then(account_num)
                .ok_or(Code::InvalidAccountId)?;
            if takes_now(ledger, receiver, num, &planned) {
                if ledger.rel(receiver, num).is_none() {
                    planned.push((receiver, num));
                }
                direct.nft_transfers.push(nft.clone());
            } else {
                ledger
                    .live_account(receiver)
                    .ok_or(Code::InvalidAccountId)?;
                let owned = ledger
                    .nfts
                    .get(&num)
                    .and_then(|s| s.get(&nft.serial_number))
                    .map(|n| n.owner);
                if owned != Some(sender) {
                    return Err(Code::SenderDoesNotOwnNftSerialNo);
                }
                ctx.require(&ledger.accounts[&sender].key)?;
                pending.push((receiver, num, Some((sender, nft.serial_number)), 1));
            }
        }
        if !direct.transfers.is_empty() || !direct.nft_transfers.is_empty() {
            direct_lists.push(direct);
        }
        for list_sender in senders {
            ctx.require(
                &ledger
                    .accounts
                    .get(&list_sender)
                    .ok_or(Code::InvalidAccountId)?
                    .key,
            )?;
        }
    }
    // The sender of each pending airdrop: an NFT's, or the one debited for the token.
    let sender_of = |token: u64, nft: Option<(u64, i64)>| match nft {
        Some((sender, serial)) => (sender, Some(serial)),
        None => {
            let list = body
                .token_transfers
                .iter()
                .find(|l| l.token.as_ref().map(|t| t.token_num as u64) == Some(token))
                .expect("seen");
            let sender = list
                .transfers
                .iter()
                .find(|l| l.amount < 0)
                .and_then(|l| l.account_id.as_ref().and_then(account_num))
                .unwrap_or(ctx.payer);
            (sender, None)
        }
    };
    let mut plan = plan_transfer(ledger, ctx, &[], &direct_lists, Rules::default())?;
    // The sender pays every custom fee now, pending airdrops' included (HIP-904).
    let mut pending_units = Vec::new();
    let mut pending_nfts = Vec::new();
    for &(receiver, token, nft, amount) in &pending {
        match sender_of(token, nft) {
            (sender, Some(serial)) => pending_nfts.push((token, sender, receiver, serial)),
            (sender, None) => pending_units.push((token, sender, amount)),
        }
    }
    let fees = charge(
        ledger,
        ctx,
        &mut plan,
        Mode::Airdrop,
        &pending_units,
        &pending_nfts,
    )?;
    let mut outcome = apply_transfer(ledger, ctx, plan);
    outcome.assessed_custom_fees = fees;
    let mut new_pending = Vec::new();
    for (receiver, token, nft, amount) in pending {
        let (sender, serial) = sender_of(token, nft);
        let added = PendingAirdrop {
            sender,
            receiver,
            token,
            serial,
            amount,
            created: ctx.consensus,
        };
        match ledger.pending_airdrops.iter_mut().find(|p| {
            p.sender == sender
                && p.receiver == receiver
                && p.token == token
                && serial.is_none()
                && p.serial.is_none()
        }) {
            Some(existing) => existing.amount += amount,
            None => ledger.pending_airdrops.push(added.clone()),
        }
        // The record lists what this airdrop added (an amount added to a pending one too).
        new_pending.push(added);
    }
    outcome.new_pending_airdrops = new_pending;
    Ok(outcome)
}

/// The pending airdrop an id names (its index), or `INVALID_PENDING_AIRDROP_ID`.
fn find(ledger: &Ledger, id: &proto::PendingAirdropId) -> Result<usize, Code> {
    use proto::pending_airdrop_id::TokenReference as R;
    let sender = id
        .sender_id
        .as_ref()
        .and_then(account_num)
        .ok_or(Code::InvalidPendingAirdropId)?;
    let receiver = id
        .receiver_id
        .as_ref()
        .and_then(account_num)
        .ok_or(Code::InvalidPendingAirdropId)?;
    let (token, serial) = match &id.token_reference {
        Some(R::FungibleTokenType(t)) => (t.token_num as u64, None),
        Some(R::NonFungibleToken(n)) => (
            n.token_id.as_ref().map_or(0, |t| t.token_num as u64),
            Some(n.serial_number),
        ),
        None => return Err(Code::InvalidPendingAirdropId),
    };
    ledger
        .pending_airdrops
        .iter()
        .position(|p| {
            p.sender == sender && p.receiver == receiver && p.token == token && p.serial == serial
        })
        .ok_or(Code::InvalidPendingAirdropId)
}

/// The network's pure checks of a claim or cancel: 1 to 10 distinct ids, refused at
/// precheck (`EMPTY_PENDING_AIRDROP_ID_LIST`, `PENDING_AIRDROP_ID_LIST_TOO_LONG`,
/// `PENDING_AIRDROP_ID_REPEATED`).
pub fn pure_check_ids(ids: &[proto::PendingAirdropId]) -> Result<(), Code> {
    if ids.is_empty() {
        return Err(Code::EmptyPendingAirdropIdList);
    }
    if ids.len() > 10 {
        return Err(Code::PendingAirdropIdListTooLong);
    }
    if ids.iter().enumerate().any(|(i, id)| ids[..i].contains(id)) {
        return Err(Code::PendingAirdropIdRepeated);
    }
    Ok(())
}

pub fn claim(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    body: &proto::TokenClaimAirdropTransactionBody,
) -> Result<Outcome, Code> {
    if body.pending_airdrops.is_empty() {
        return Err(Code::EmptyPendingAirdropIdList);
    }
    let mut indices = Vec::new();
    let mut lists: Vec<proto::TokenTransferList> = Vec::new();
    for id in &body.pending_airdrops {
        let i = find(ledger, id)?;
        let p = ledger.pending_airdrops[i].clone();
        ctx.require(
            &ledger
                .live_account(p.receiver)
                .ok_or(Code::InvalidAccountId)?
                .key,
        )?;
        let mut list = proto::TokenTransferList {
            token: Some(token_id(p.token)),
            ..Default::default()
        };
        match p.serial {
            Some(serial) => list.nft_transfers.push(proto::NftTransfer {
                sender_account_id: Some(account_id(p.sender)),
                receiver_account_id: Some(account_id(p.receiver)),
                serial_number: serial,
                is_approval: false,
                ..Default::default()
            }),
            None => {
                list.transfers.push(proto::AccountAmount {
                    account_id: Some(account_id(p.sender)),
                    amount: -p.amount,
                    is_approval: false,
                    ..Default::default()
                });
                list.transfers.push(proto::AccountAmount {
                    account_id: Some(account_id(p.receiver)),
                    amount: p.amount,
                    is_approval: false,
                    ..Default::default()
                });
            }
        }
        lists.push(list);
        indices.push(i);
    }
    let rules = Rules {
        senders_signed: true,
        force_association: true,
        assessed_fees: false,
    };
    let plan = plan_transfer(ledger, ctx, &[], &lists, rules)?;
    let outcome = apply_transfer(ledger, ctx, plan);
    indices.sort_unstable();
    for i in indices.into_iter().rev() {
        ledger.pending_airdrops.remove(i);
    }
    Ok(outcome)
}

pub fn cancel(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    body: &proto::TokenCancelAirdropTransactionBody,
) -> Result<Outcome, Code> {
    if body.pending_airdrops.is_empty() {
        return Err(Code::EmptyPendingAirdropIdList);
    }
    let mut indices = Vec::new();
    for id in &body.pending_airdrops {
        let i = find(ledger, id)?;
        let sender = ledger.pending_airdrops[i].sender;
        ctx.require(&ledger.accounts[&sender].key)?;
        indices.push(i);
    }
    indices.sort_unstable();
    indices.dedup();
    for i in indices.into_iter().rev() {
        ledger.pending_airdrops.remove(i);
    }
    Ok(Outcome::success())
}
