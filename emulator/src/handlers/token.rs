//! TokenService bodies: create, associate, dissociate, mint. Token movements ride on
//! CryptoTransfer (see `crypto`).

use super::live_token;
use super::{auto_renew_account, custom_fees, Ctx, Outcome};
use crate::state::ledger::{
    account_num, token_num, FeeKind, KeyBytes, Ledger, Nft, Token, TokenRel, Ts,
};
use hedera_proto::services as proto;
use proto::ResponseCodeEnum as Code;
use std::collections::{BTreeMap, HashSet};

/// The default auto-renew period of a new token (90 days).
const DEFAULT_AUTO_RENEW_SECONDS: i64 = 7_776_000;
/// Longest name or symbol, in bytes.
pub(super) const MAX_NAME_BYTES: usize = 100;
/// Most NFTs minted in one transaction, and most metadata bytes per NFT.
pub const MAX_MINT_BATCH: usize = 10;
pub const MAX_NFT_METADATA_BYTES: usize = 100;

/// A fresh relationship between an account and `token`.
pub fn new_rel(token: &Token, automatic: bool, at: Ts) -> TokenRel {
    TokenRel {
        balance: 0,
        frozen: token.freeze_default && token.freeze_key.is_some(),
        kyc_granted: token.kyc_key.is_none(),
        automatic,
        created: at,
    }
}

pub fn create(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    body: &proto::TokenCreateTransactionBody,
) -> Result<Outcome, Code> {
    if body.name.is_empty() {
        return Err(Code::MissingTokenName);
    }
    if body.symbol.is_empty() {
        return Err(Code::MissingTokenSymbol);
    }
    if body.name.len() > MAX_NAME_BYTES {
        return Err(Code::TokenNameTooLong);
    }
    if body.symbol.len() > MAX_NAME_BYTES {
        return Err(Code::TokenSymbolTooLong);
    }
    if body.memo.len() > 100 {
        return Err(Code::MemoTooLong);
    }
    let nft = body.token_type == proto::TokenType::NonFungibleUnique as i32;
    let finite = body.supply_type == proto::TokenSupplyType::Finite as i32;
    let initial =
        i64::try_from(body.initial_supply).map_err(|_| Code::InvalidTokenInitialSupply)?;
    if finite && body.max_supply <= 0 || !finite && body.max_supply != 0 {
        return Err(Code::InvalidTokenMaxSupply);
    }
    if finite && initial > body.max_supply {
        return Err(Code::InvalidTokenInitialSupply);
    }
    if nft {
        if initial != 0 {
            return Err(Code::InvalidTokenInitialSupply);
        }
        if body.decimals != 0 {
            return Err(Code::InvalidTokenDecimals);
        }
        if body.supply_key.is_none() {
            return Err(Code::TokenHasNoSupplyKey);
        }
    }
    check_keys(body)?;
    let treasury = body
        .treasury
        .as_ref()
        .and_then(account_num)
        .ok_or(Code::InvalidTreasuryAccountForToken)?;
    let treasury_account = ledger
        .live_account(treasury)
        .ok_or(Code::InvalidTreasuryAccountForToken)?;
    ctx.require(&treasury_account.key)?;
    if let Some(admin) = &body.admin_key {
        ctx.require(&KeyBytes::from_proto(admin))?;
    }
    let auto_renew_account = auto_renew_account(ledger, ctx, body.auto_renew_account.as_ref())?;
    let key = |k: &Option<proto::Key>| k.as_ref().map(KeyBytes::from_proto);
    let num = ledger.next_free_entity();
    let owner = custom_fees::Owner {
        token: Some(num),
        nft,
        creating: true,
    };
    let custom_fees = custom_fees::token_fees(ledger, owner, &body.custom_fees)?;
    let allocated = ledger.allocate();
    debug_assert_eq!(allocated, num);
    // An explicit expiry without a period leaves the token without one (the SDKs clear the
    // period when an expiry is set); neither gives the default.
    let auto_renew_period = match (body.auto_renew_period, body.expiry) {
        (Some(d), _) => d.seconds,
        (None, Some(_)) => 0,
        (None, None) => DEFAULT_AUTO_RENEW_SECONDS,
    };
    let token = Token {
        num,
        name: body.name.clone(),
        symbol: body.symbol.clone(),
        decimals: body.decimals,
        nft,
        max_supply: finite.then_some(body.max_supply),
        initial_supply: initial,
        total_supply: initial,
        treasury,
        admin_key: key(&body.admin_key),
        kyc_key: key(&body.kyc_key),
        freeze_key: key(&body.freeze_key),
        wipe_key: key(&body.wipe_key),
        supply_key: key(&body.supply_key),
        fee_schedule_key: key(&body.fee_schedule_key),
        pause_key: key(&body.pause_key),
        metadata_key: key(&body.metadata_key),
        freeze_default: body.freeze_default,
        paused: false,
        deleted: false,
        memo: body.memo.clone(),
        metadata: body.metadata.clone(),
        auto_renew_account,
        auto_renew_period,
        expiry: body
            .expiry
            .map_or(ctx.consensus.seconds + auto_renew_period, |e| e.seconds),
        created: ctx.consensus,
        modified: ctx.consensus,
        next_serial: 1,
        custom_fees,
    };
    // The treasury is associated, unfrozen and KYC-granted, and holds the initial supply.
    let mut rel = new_rel(&token, false, ctx.consensus);
    rel.frozen = false;
    rel.kyc_granted = true;
    rel.balance = initial;
    ledger.rels.entry(treasury).or_default().insert(num, rel);
    // Collectors of a fraction of the new token, or of a fixed fee in it, hold it from now.
    for fee in &token.custom_fees {
        let collects_it = match fee.kind {
            FeeKind::Fractional { .. } => true,
            FeeKind::Fixed(f) => f.token == Some(num),
            FeeKind::Royalty { .. } => false,
        };
        if collects_it && ledger.rel(fee.collector, num).is_none() {
            let mut rel = new_rel(&token, false, ctx.consensus);
            rel.frozen = false;
            rel.kyc_granted = true;
            ledger
                .rels
                .entry(fee.collector)
                .or_default()
                .insert(num, rel);
        }
    }
    ledger.tokens.insert(num, token);
    let mut outcome = Outcome::success().entity(num);
    outcome.receipt.token_id = Some(num);
    if initial > 0 {
        outcome.token_transfers.push((num, treasury, initial));
    }
    Ok(outcome)
}

/// Every key of a create body must be a usable key structure (`crate::state::keys::is_valid`).
fn check_keys(body: &proto::TokenCreateTransactionBody) -> Result<(), Code> {
    let keys = [
        (&body.admin_key, Code::InvalidAdminKey),
        (&body.kyc_key, Code::InvalidKycKey),
        (&body.freeze_key, Code::InvalidFreezeKey),
        (&body.wipe_key, Code::InvalidWipeKey),
        (&body.supply_key, Code::InvalidSupplyKey),
        (&body.fee_schedule_key, Code::InvalidCustomFeeScheduleKey),
        (&body.pause_key, Code::InvalidPauseKey),
        (&body.metadata_key, Code::InvalidMetadataKey),
    ];
    for (key, invalid) in keys {
        if key
            .as_ref()
            .is_some_and(|k| !crate::state::keys::is_valid(k))
        {
            return Err(invalid);
        }
    }
    Ok(())
}

/// The account (or contract: its admin key) of an associate / dissociate body, which must sign.
fn signing_account(
    ledger: &Ledger,
    ctx: &Ctx<'_>,
    id: Option<&proto::AccountId>,
) -> Result<u64, Code> {
    let num = id.and_then(account_num).ok_or(Code::InvalidAccountId)?;
    if let Some(contract) = ledger.contracts.get(&num) {
        // A contract associates as an account whose key is its admin key; one without an
        // admin key can only act from inside the EVM, so no transaction signs for it.
        if contract.deleted {
            return Err(Code::ContractDeleted);
        }
        let key = contract.admin_key.as_ref().ok_or(Code::InvalidSignature)?;
        ctx.require(key)?;
        return Ok(num);
    }
    let account = ledger.accounts.get(&num).ok_or(Code::InvalidAccountId)?;
    if account.deleted {
        return Err(Code::AccountDeleted);
    }
    ctx.require(&account.key)?;
    Ok(num)
}

/// The body's token numbers, each once.
fn distinct_tokens(tokens: &[proto::TokenId]) -> Result<Vec<u64>, Code> {
    let mut seen = HashSet::new();
    tokens
        .iter()
        .map(|t| {
            let num = token_num(t).ok_or(Code::InvalidTokenId)?;
            if seen.insert(num) {
                Ok(num)
            } else {
                Err(Code::TokenIdRepeatedInTokenList)
            }
        })
        .collect()
}

pub fn associate(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    body: &proto::TokenAssociateTransactionBody,
) -> Result<Outcome, Code> {
    let account = signing_account(ledger, ctx, body.account.as_ref())?;
    let tokens = distinct_tokens(&body.tokens)?;
    let mut new = BTreeMap::new();
    for num in tokens {
        let token = live_token(ledger, Some(&crate::state::ledger::token_id(num)))?;
        if ledger.rel(account, num).is_some() {
            return Err(Code::TokenAlreadyAssociatedToAccount);
        }
        new.insert(num, new_rel(token, false, ctx.consensus));
    }
    ledger.rels.entry(account).or_default().extend(new);
    Ok(Outcome::success().entity(account))
}

pub fn dissociate(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    body: &proto::TokenDissociateTransactionBody,
) -> Result<Outcome, Code> {
    let account = signing_account(ledger, ctx, body.account.as_ref())?;
    let tokens = distinct_tokens(&body.tokens)?;
    for &num in &tokens {
        let rel = ledger
            .rel(account, num)
            .ok_or(Code::TokenNotAssociatedToAccount)?;
        let token = ledger.tokens.get(&num).ok_or(Code::InvalidTokenId)?;
        if !token.deleted && token.treasury == account {
            return Err(Code::AccountIsTreasury);
        }
        if rel.balance != 0 && !token.deleted {
            return Err(if token.nft {
                Code::AccountStillOwnsNfts
            } else {
                Code::TransactionRequiresZeroTokenBalances
            });
        }
    }
    let rels = ledger.rels.entry(account).or_default();
    for num in tokens {
        rels.remove(&num);
    }
    Ok(Outcome::success().entity(account))
}

pub fn mint(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    body: &proto::TokenMintTransactionBody,
) -> Result<Outcome, Code> {
    let token = live_token(ledger, body.token.as_ref())?;
    let num = token.num;
    if token.paused {
        return Err(Code::TokenIsPaused);
    }
    let supply_key = token.supply_key.as_ref().ok_or(Code::TokenHasNoSupplyKey)?;
    ctx.require(supply_key)?;
    let treasury = token.treasury;
    let mut outcome = Outcome::success().entity(num);
    if token.nft {
        if body.metadata.is_empty() {
            return Err(Code::InvalidTokenMintMetadata);
        }
        if body.amount != 0 {
            return Err(Code::InvalidTransactionBody);
        }
        if body.metadata.len() > MAX_MINT_BATCH {
            return Err(Code::BatchSizeLimitExceeded);
        }
        if body
            .metadata
            .iter()
            .any(|m| m.len() > MAX_NFT_METADATA_BYTES)
        {
            return Err(Code::MetadataTooLong);
        }
        let count = body.metadata.len() as i64;
        if token
            .max_supply
            .is_some_and(|max| token.total_supply + count > max)
        {
            return Err(Code::TokenMaxSupplyReached);
        }
        let first = token.next_serial;
        let serials: Vec<i64> = (first..first + count).collect();
        let nfts = ledger.nfts.entry(num).or_default();
        for (serial, metadata) in serials.iter().zip(&body.metadata) {
            nfts.insert(
                *serial,
                Nft {
                    spender: None,
                    owner: treasury,
                    metadata: metadata.clone(),
                    created: ctx.consensus,
                    modified: ctx.consensus,
                },
            );
            outcome.nft_transfers.push((num, 0, treasury, *serial));
        }
        let token = ledger.tokens.get_mut(&num).expect("checked");
        token.next_serial += count;
        token.total_supply += count;
        token.modified = ctx.consensus;
        outcome.receipt.new_total_supply = token.total_supply as u64;
        outcome.receipt.serial_numbers = serials;
        if let Some(rel) = ledger.rel_mut(treasury, num) {
            rel.balance += count;
        }
    } else {
        if !body.metadata.is_empty() {
            return Err(Code::InvalidTransactionBody);
        }
        let amount = i64::try_from(body.amount).map_err(|_| Code::InvalidTokenMintAmount)?;
        // Minting nothing succeeds and changes nothing, as on the network.
        if amount == 0 {
            outcome.receipt.new_total_supply = token.total_supply.max(0) as u64;
            return Ok(outcome);
        }
        let total = token
            .total_supply
            .checked_add(amount)
            .ok_or(Code::InvalidTokenMintAmount)?;
        if token.max_supply.is_some_and(|max| total > max) {
            return Err(Code::TokenMaxSupplyReached);
        }
        let token = ledger.tokens.get_mut(&num).expect("checked");
        token.total_supply = total;
        token.modified = ctx.consensus;
        outcome.receipt.new_total_supply = total as u64;
        if let Some(rel) = ledger.rel_mut(treasury, num) {
            rel.balance += amount;
        }
        outcome.token_transfers.push((num, treasury, amount));
    }
    Ok(outcome)
}
