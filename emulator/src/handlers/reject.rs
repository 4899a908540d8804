//! `TokenReject` (HIP-904): an owner hands fungible balances and NFTs back to their
//! treasuries, without custom fees and without the treasury's receiver signature. At most ten
//! references, none repeated (checked at precheck); each token live, unpaused, associated and
//! unfrozen, the owner not its treasury.

use super::{Ctx, Outcome};
use crate::state::ledger::{token_num, Ledger};
use hedera_proto::services as proto;
use proto::token_reference::TokenIdentifier;
use proto::ResponseCodeEnum as Code;

/// `tokens.reject.maxRejections`.
const MAX_REFERENCES: usize = 10;

/// A reference as numbers: (token, serial) with serial 0 for a fungible balance.
fn reference(r: &proto::TokenReference) -> Result<(u64, i64), Code> {
    match r.token_identifier.as_ref() {
        Some(TokenIdentifier::FungibleToken(id)) => {
            Ok((token_num(id).ok_or(Code::InvalidTokenId)?, 0))
        }
        Some(TokenIdentifier::Nft(nft)) => {
            let token = nft
                .token_id
                .as_ref()
                .and_then(token_num)
                .ok_or(Code::InvalidNftId)?;
            if nft.serial_number <= 0 {
                return Err(Code::InvalidTokenNftSerialNumber);
            }
            Ok((token, nft.serial_number))
        }
        None => Err(Code::InvalidTransactionBody),
    }
}

pub fn pure_check(body: &proto::TokenRejectTransactionBody) -> Result<(), Code> {
    if body.rejections.is_empty() {
        return Err(Code::EmptyTokenReferenceList);
    }
    if body.rejections.len() > MAX_REFERENCES {
        return Err(Code::TokenReferenceListSizeLimitExceeded);
    }
    let mut seen = Vec::with_capacity(body.rejections.len());
    for r in &body.rejections {
        let key = reference(r)?;
        if seen.contains(&key) {
            return Err(Code::TokenReferenceRepeated);
        }
        seen.push(key);
    }
    Ok(())
}

pub fn reject(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    body: &proto::TokenRejectTransactionBody,
) -> Result<Outcome, Code> {
    let owner = match body.owner.as_ref() {
        Some(id) => ledger.resolve_account(id).ok_or(Code::InvalidOwnerId)?,
        None => ctx.payer,
    };
    let account = ledger.live_account(owner).ok_or(Code::InvalidOwnerId)?;
    ctx.require(&account.key)?;
    let mut moves = Vec::with_capacity(body.rejections.len());
    for r in &body.rejections {
        let (num, serial) = reference(r)?;
        let token = ledger.tokens.get(&num).ok_or(Code::InvalidTokenId)?;
        if token.deleted {
            return Err(Code::TokenWasDeleted);
        }
        if token.paused {
            return Err(Code::TokenIsPaused);
        }
        // An NFT is its owner's to reject: ownership comes before the relationship.
        if serial != 0 && token.nft {
            let nft = ledger
                .nfts
                .get(&num)
                .and_then(|n| n.get(&serial))
                .ok_or(Code::InvalidNftId)?;
            if nft.owner != owner {
                return Err(Code::InvalidOwnerId);
            }
        }
        let rel = ledger
            .rel(owner, num)
            .ok_or(Code::TokenNotAssociatedToAccount)?;
        if rel.frozen {
            return Err(Code::AccountFrozenForToken);
        }
        if token.treasury == owner {
            return Err(Code::AccountIsTreasury);
        }
        if serial == 0 {
            if token.nft {
                return Err(Code::AccountAmountTransfersOnlyAllowedForFungibleCommon);
            }
            if rel.balance <= 0 {
                return Err(Code::InsufficientTokenBalance);
            }
            moves.push((num, token.treasury, 0, rel.balance));
        } else {
            if !token.nft {
                return Err(Code::InvalidNftId);
            }
            moves.push((num, token.treasury, serial, 1));
        }
    }
    let mut outcome = Outcome::success();
    for (num, treasury, serial, amount) in moves {
        if let Some(rel) = ledger.rel_mut(owner, num) {
            rel.balance -= amount;
        }
        if let Some(rel) = ledger.rel_mut(treasury, num) {
            rel.balance += amount;
        }
        if serial == 0 {
            outcome.token_transfers.push((num, owner, -amount));
            outcome.token_transfers.push((num, treasury, amount));
        } else {
            if let Some(nft) = ledger.nfts.get_mut(&num).and_then(|n| n.get_mut(&serial)) {
                nft.owner = treasury;
                nft.spender = None;
                nft.modified = ctx.consensus;
            }
            outcome.nft_transfers.push((num, owner, treasury, serial));
        }
    }
    Ok(outcome)
}
