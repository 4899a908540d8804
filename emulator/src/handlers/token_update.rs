//! TokenUpdate, with HIP-540's rules for who may change which key: the admin key changes
//! anything; each lower-privilege key (KYC, freeze, wipe, supply, fee schedule, pause,
//! metadata) may also be replaced by its own holder — with the new key's signature too
//! under `FULL_VALIDATION`, the default — but only the admin key removes a key (an empty
//! key list), so a token without one keeps its keys (`TOKEN_IS_IMMUTABLE`). A new admin key
//! always signs. Keys the token was created without cannot be added.

use super::live_token;
use super::token::MAX_NAME_BYTES;
use super::{auto_renew_account, Ctx, Outcome};
use crate::state::ledger::{account_num, KeyBytes, Ledger};
use hedera_proto::services as proto;
use proto::key::Key as K;
use proto::ResponseCodeEnum as Code;

/// An empty key list: the key is removed.
fn is_removal(key: &proto::Key) -> bool {
    matches!(&key.key, Some(K::KeyList(list)) if list.keys.is_empty())
}

/// A key every one of `keys` must sign for.
fn all_of(keys: Vec<proto::Key>) -> proto::Key {
    proto::Key {
        key: Some(K::KeyList(proto::KeyList { keys })),
    }
}

/// A key any one of `keys` may sign for.
fn any_of(keys: Vec<proto::Key>) -> proto::Key {
    proto::Key {
        key: Some(K::ThresholdKey(proto::ThresholdKey {
            threshold: 1,
            keys: Some(proto::KeyList { keys }),
        })),
    }
}

/// One lower-privilege key a body may change.
struct RoleKey<'a> {
    new: Option<&'a proto::Key>,
    old: Option<&'a KeyBytes>,
    missing: Code,
    invalid: Code,
}

pub fn update(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    body: &proto::TokenUpdateTransactionBody,
) -> Result<Outcome, Code> {
    let token = live_token(ledger, body.token.as_ref())?;
    let num = token.num;
    let roles = [
        (
            &body.kyc_key,
            &token.kyc_key,
            Code::TokenHasNoKycKey,
            Code::InvalidKycKey,
        ),
        (
            &body.freeze_key,
            &token.freeze_key,
            Code::TokenHasNoFreezeKey,
            Code::InvalidFreezeKey,
        ),
        (
            &body.wipe_key,
            &token.wipe_key,
            Code::TokenHasNoWipeKey,
            Code::InvalidWipeKey,
        ),
        (
            &body.supply_key,
            &token.supply_key,
            Code::TokenHasNoSupplyKey,
            Code::InvalidSupplyKey,
        ),
        (
            &body.fee_schedule_key,
            &token.fee_schedule_key,
            Code::TokenHasNoFeeScheduleKey,
            Code::InvalidCustomFeeScheduleKey,
        ),
        (
            &body.pause_key,
            &token.pause_key,
            Code::TokenHasNoPauseKey,
            Code::InvalidPauseKey,
        ),
        (
            &body.metadata_key,
            &token.metadata_key,
            Code::TokenHasNoMetadataKey,
            Code::InvalidMetadataKey,
        ),
    ]
    .map(|(new, old, missing, invalid)| RoleKey {
        new: new.as_ref(),
        old: old.as_ref(),
        missing,
        invalid,
    });

    // Structure first: a new key is an empty list (removal) or a valid key.
    if let Some(admin) = &body.admin_key {
        if !is_removal(admin) && !crate::state::keys::is_valid(admin) {
            return Err(Code::InvalidAdminKey);
        }
    }
    for role in &roles {
        if let Some(new) = role.new {
            if !is_removal(new) && !crate::state::keys::is_valid(new) {
                return Err(role.invalid);
            }
        }
    }

    // Who signs. Anything but keys, metadata and the expiry is the admin key's alone.
    let admin = token.admin_key.as_ref().map(KeyBytes::to_proto);
    let admin_only = !body.name.is_empty()
        || !body.symbol.is_empty()
        || body.treasury.is_some()
        || body.admin_key.is_some()
        || body.auto_renew_account.is_some()
        || body.auto_renew_period.is_some()
        || body.memo.is_some();
    let require_admin = || -> Result<(), Code> {
        let admin = admin.as_ref().ok_or(Code::TokenIsImmutable)?;
        ctx.require(&KeyBytes::from_proto(admin))
    };
    if admin_only {
        require_admin()?;
    }
    if let Some(new_admin) = &body.admin_key {
        if !is_removal(new_admin) {
            ctx.require(&KeyBytes::from_proto(new_admin))?;
        }
    }
    if body.metadata.is_some() {
        let holders: Vec<proto::Key> = admin
            .iter()
            .cloned()
            .chain(token.metadata_key.as_ref().map(KeyBytes::to_proto))
            .collect();
        if holders.is_empty() {
            return Err(Code::TokenIsImmutable);
        }
        ctx.require(&KeyBytes::from_proto(&any_of(holders)))?;
    }
    let full_validation =
        body.key_verification_mode != proto::TokenKeyValidation::NoValidation as i32;
    for role in &roles {
        let Some(new) = role.new else { continue };
        let old = role.old.ok_or(role.missing)?;
        if is_removal(new) {
            require_admin()?;
            continue;
        }
        // The old key, and the new one under full validation; or else the admin key.
        let mut holders = vec![old.to_proto()];
        if full_validation {
            holders.push(new.clone());
        }
        let mut required = all_of(holders);
        if let Some(admin) = &admin {
            required = any_of(vec![admin.clone(), required]);
        }
        ctx.require(&KeyBytes::from_proto(&required))?;
    }

    if body.name.len() > MAX_NAME_BYTES {
        return Err(Code::TokenNameTooLong);
    }
    if body.symbol.len() > MAX_NAME_BYTES {
        return Err(Code::TokenSymbolTooLong);
    }
    if body.memo.as_ref().is_some_and(|m| m.len() > 100) {
        return Err(Code::MemoTooLong);
    }
    let new_treasury = match &body.treasury {
        None => None,
        Some(id) => {
            let t = account_num(id).ok_or(Code::InvalidTreasuryAccountForToken)?;
            let account = ledger
                .live_account(t)
                .ok_or(Code::InvalidTreasuryAccountForToken)?;
            ctx.require(&account.key)?;
            if ledger.rel(t, num).is_none() {
                return Err(Code::TokenNotAssociatedToAccount);
            }
            (t != token.treasury).then_some(t)
        }
    };
    let auto_renew_account = auto_renew_account(ledger, ctx, body.auto_renew_account.as_ref())?;
    let (old_treasury, nft) = (token.treasury, token.nft);
    let mut outcome = Outcome::success().entity(num);
    if let Some(t) = new_treasury {
        // The old treasury's fungible balance moves to the new treasury.
        if !nft {
            let moved = ledger.rel(old_treasury, num).map_or(0, |r| r.balance);
            if moved > 0 {
                ledger
                    .rel_mut(old_treasury, num)
                    .expect("treasury is associated")
                    .balance = 0;
                ledger.rel_mut(t, num).expect("checked").balance += moved;
                outcome.token_transfers = vec![(num, old_treasury, -moved), (num, t, moved)];
            }
        }
    }
    // A removed key is gone, not an empty list.
    let key = |k: &proto::Key| (!is_removal(k)).then(|| KeyBytes::from_proto(k));
    let token = ledger.tokens.get_mut(&num).expect("checked");
    if !body.name.is_empty() {
        token.name = body.name.clone();
    }
    if !body.symbol.is_empty() {
        token.symbol = body.symbol.clone();
    }
    if let Some(t) = new_treasury {
        token.treasury = t;
    }
    for (new, slot) in [
        (&body.admin_key, &mut token.admin_key),
        (&body.kyc_key, &mut token.kyc_key),
        (&body.freeze_key, &mut token.freeze_key),
        (&body.wipe_key, &mut token.wipe_key),
        (&body.supply_key, &mut token.supply_key),
        (&body.fee_schedule_key, &mut token.fee_schedule_key),
        (&body.pause_key, &mut token.pause_key),
        (&body.metadata_key, &mut token.metadata_key),
    ] {
        if let Some(new) = new {
            *slot = key(new);
        }
    }
    if let Some(a) = auto_renew_account {
        token.auto_renew_account = Some(a);
    }
    if let Some(p) = body.auto_renew_period {
        token.auto_renew_period = p.seconds;
    }
    if let Some(e) = body.expiry {
        token.expiry = e.seconds;
    }
    if let Some(m) = &body.memo {
        token.memo = m.clone();
    }
    if let Some(m) = &body.metadata {
        token.metadata = m.clone();
    }
    token.modified = ctx.consensus;
    Ok(outcome)
}
