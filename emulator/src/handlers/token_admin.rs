//! What a token's keys do after its creation: freeze and unfreeze an account (freeze key),
//! grant and revoke KYC (KYC key), pause and unpause (pause key), burn from the treasury
//! (supply key), wipe from an account (wipe key) and delete (admin key), with the network's
//! statuses. Transfers already honour what these set (frozen, KYC, paused, deleted).

use super::live_token;
use super::{Ctx, Outcome};
use crate::state::ledger::{account_num, KeyBytes, Ledger};
use hedera_proto::services as proto;
use proto::ResponseCodeEnum as Code;

/// The token, its key for this action (or `missing`), signed for.
fn keyed(
    ledger: &Ledger,
    ctx: &Ctx<'_>,
    token: Option<&proto::TokenId>,
    key: fn(&crate::state::ledger::Token) -> &Option<KeyBytes>,
    missing: Code,
) -> Result<u64, Code> {
    let token = live_token(ledger, token)?;
    let key = key(token).as_ref().ok_or(missing)?;
    ctx.require(key)?;
    Ok(token.num)
}

/// The account a per-account action names, live and associated with `token`.
fn associated(
    ledger: &Ledger,
    account: Option<&proto::AccountId>,
    token: u64,
) -> Result<u64, Code> {
    let num = account
        .and_then(account_num)
        .ok_or(Code::InvalidAccountId)?;
    if ledger.live_account(num).is_none() {
        return Err(if ledger.accounts.contains_key(&num) {
            Code::AccountDeleted
        } else {
            Code::InvalidAccountId
        });
    }
    ledger
        .rel(num, token)
        .ok_or(Code::TokenNotAssociatedToAccount)?;
    Ok(num)
}

/// A per-account action names its token (`INVALID_TOKEN_ID`) and account
/// (`INVALID_ACCOUNT_ID`), checked at precheck.
pub fn pure_check_pair(
    token: Option<&proto::TokenId>,
    account: Option<&proto::AccountId>,
) -> Result<(), Code> {
    if token.is_none() {
        return Err(Code::InvalidTokenId);
    }
    if account.is_none() {
        return Err(Code::InvalidAccountId);
    }
    Ok(())
}

/// Freeze (`frozen = true`) or unfreeze an account's relationship.
pub fn set_frozen(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    token: Option<&proto::TokenId>,
    account: Option<&proto::AccountId>,
    frozen: bool,
) -> Result<Outcome, Code> {
    let num = keyed(
        ledger,
        ctx,
        token,
        |t| &t.freeze_key,
        Code::TokenHasNoFreezeKey,
    )?;
    let account = associated(ledger, account, num)?;
    ledger.rel_mut(account, num).expect("checked").frozen = frozen;
    Ok(Outcome::success())
}

/// Grant (`granted = true`) or revoke an account's KYC.
pub fn set_kyc(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    token: Option<&proto::TokenId>,
    account: Option<&proto::AccountId>,
    granted: bool,
) -> Result<Outcome, Code> {
    let num = keyed(ledger, ctx, token, |t| &t.kyc_key, Code::TokenHasNoKycKey)?;
    let account = associated(ledger, account, num)?;
    ledger.rel_mut(account, num).expect("checked").kyc_granted = granted;
    Ok(Outcome::success())
}

/// Pause (`paused = true`) or unpause the token.
pub fn set_paused(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    token: Option<&proto::TokenId>,
    paused: bool,
) -> Result<Outcome, Code> {
    let num = keyed(
        ledger,
        ctx,
        token,
        |t| &t.pause_key,
        Code::TokenHasNoPauseKey,
    )?;
    let token = ledger.tokens.get_mut(&num).expect("checked");
    token.paused = paused;
    token.modified = ctx.consensus;
    Ok(Outcome::success())
}

/// Delete the token (its admin key signs; without one it is immutable).
pub fn delete(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    body: &proto::TokenDeleteTransactionBody,
) -> Result<Outcome, Code> {
    let num = keyed(
        ledger,
        ctx,
        body.token.as_ref(),
        |t| &t.admin_key,
        Code::TokenIsImmutable,
    )?;
    let token = ledger.tokens.get_mut(&num).expect("checked");
    token.deleted = true;
    token.modified = ctx.consensus;
    Ok(Outcome::success())
}

/// What a burn or wipe takes out, from whom, and its statuses for serials the holder lacks and
/// for a bad amount.
struct Removal<'b> {
    holder: u64,
    amount: u64,
    serials: &'b [i64],
    not_owned: Code,
    bad_amount: Code,
}

/// Take the units or serials out of the holder's balance and the total supply.
fn remove(ledger: &mut Ledger, ctx: &Ctx<'_>, num: u64, r: Removal<'_>) -> Result<Outcome, Code> {
    let Removal {
        holder,
        amount,
        serials,
        not_owned,
        bad_amount,
    } = r;
    let token = &ledger.tokens[&num];
    if token.paused {
        return Err(Code::TokenIsPaused);
    }
    let mut outcome = Outcome::success();
    let removed = if token.nft {
        if serials.is_empty() {
            return Err(bad_amount);
        }
        if amount != 0 {
            return Err(Code::InvalidTransactionBody);
        }
        if serials.len() > super::token::MAX_MINT_BATCH {
            return Err(Code::BatchSizeLimitExceeded);
        }
        let owned = ledger.nfts.get(&num);
        for (i, serial) in serials.iter().enumerate() {
            if serials[..i].contains(serial) {
                return Err(Code::InvalidNftId);
            }
            match owned.and_then(|n| n.get(serial)) {
                None => return Err(Code::InvalidNftId),
                Some(nft) if nft.owner != holder => return Err(not_owned),
                Some(_) => {}
            }
        }
        let nfts = ledger.nfts.get_mut(&num).expect("checked");
        for serial in serials {
            nfts.remove(serial);
            outcome.nft_transfers.push((num, holder, 0, *serial));
        }
        serials.len() as i64
    } else {
        if !serials.is_empty() {
            return Err(Code::InvalidTransactionBody);
        }
        let amount = i64::try_from(amount).map_err(|_| bad_amount)?;
        // Removing nothing succeeds and changes nothing, as on the network.
        if amount == 0 {
            outcome.receipt.new_total_supply = token.total_supply.max(0) as u64;
            return Ok(outcome.entity(num));
        }
        let held = ledger.rel(holder, num).map_or(0, |r| r.balance);
        if amount > held {
            return Err(if bad_amount == Code::InvalidWipingAmount {
                bad_amount
            } else {
                Code::InsufficientTokenBalance
            });
        }
        outcome.token_transfers.push((num, holder, -amount));
        amount
    };
    if let Some(rel) = ledger.rel_mut(holder, num) {
        rel.balance -= removed;
    }
    let token = ledger.tokens.get_mut(&num).expect("checked");
    token.total_supply -= removed;
    token.modified = ctx.consensus;
    outcome.receipt.new_total_supply = token.total_supply.max(0) as u64;
    Ok(outcome.entity(num))
}

/// Burn from the treasury (the supply key signs).
pub fn burn(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    body: &proto::TokenBurnTransactionBody,
) -> Result<Outcome, Code> {
    let num = keyed(
        ledger,
        ctx,
        body.token.as_ref(),
        |t| &t.supply_key,
        Code::TokenHasNoSupplyKey,
    )?;
    let treasury = ledger.tokens[&num].treasury;
    let bad_amount = if ledger.tokens[&num].nft {
        Code::InvalidTokenBurnMetadata
    } else {
        Code::InvalidTokenBurnAmount
    };
    let removal = Removal {
        holder: treasury,
        amount: body.amount,
        serials: &body.serial_numbers,
        not_owned: Code::TreasuryMustOwnBurnedNft,
        bad_amount,
    };
    remove(ledger, ctx, num, removal)
}

/// Wipe from an account other than the treasury (the wipe key signs).
pub fn wipe(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    body: &proto::TokenWipeAccountTransactionBody,
) -> Result<Outcome, Code> {
    let num = keyed(
        ledger,
        ctx,
        body.token.as_ref(),
        |t| &t.wipe_key,
        Code::TokenHasNoWipeKey,
    )?;
    let account = associated(ledger, body.account.as_ref(), num)?;
    if account == ledger.tokens[&num].treasury {
        return Err(Code::CannotWipeTokenTreasuryAccount);
    }
    let removal = Removal {
        holder: account,
        amount: body.amount,
        serials: &body.serial_numbers,
        not_owned: Code::AccountDoesNotOwnWipedNft,
        bad_amount: Code::InvalidWipingAmount,
    };
    remove(ledger, ctx, num, removal)
}

/// `TokenUpdateNfts`: new metadata for some serials of an NFT class, signed by its metadata
/// key (a class without one cannot be signed for: `INVALID_SIGNATURE`).
pub fn update_nfts(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    body: &proto::TokenUpdateNftsTransactionBody,
) -> Result<Outcome, Code> {
    let num = keyed(
        ledger,
        ctx,
        body.token.as_ref(),
        |t| &t.metadata_key,
        Code::InvalidSignature,
    )?;
    if !ledger.tokens[&num].nft {
        return Err(Code::InvalidTokenId);
    }
    let Some(metadata) = &body.metadata else {
        // Nothing to change.
        return Ok(Outcome::success().entity(num));
    };
    if metadata.len() > super::token::MAX_NFT_METADATA_BYTES {
        return Err(Code::MetadataTooLong);
    }
    let nfts = ledger.nfts.get(&num);
    for serial in &body.serial_numbers {
        if *serial <= 0 {
            return Err(Code::InvalidTokenNftSerialNumber);
        }
        if nfts.and_then(|n| n.get(serial)).is_none() {
            return Err(Code::InvalidNftId);
        }
    }
    let nfts = ledger.nfts.get_mut(&num).expect("checked");
    for serial in &body.serial_numbers {
        let nft = nfts.get_mut(serial).expect("checked");
        nft.metadata = metadata.clone();
        nft.modified = ctx.consensus;
    }
    Ok(Outcome::success().entity(num))
}
