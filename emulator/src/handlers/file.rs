//! The file service: create, append, update, delete, and the system files an SDK reads.
//!
//! A file's keys are a key list: all of them sign a create, an append or an update (an update
//! that changes the keys is signed by the new ones too), any one of them a delete. A file
//! without keys is immutable (`UNAUTHORIZED`). Files up to 0.0.750 are system files: they
//! cannot be deleted (`ENTITY_NOT_ALLOWED_TO_DELETE`); the address book (0.0.101, 0.0.102),
//! the fee schedule (0.0.111) and the exchange rates (0.0.112) exist from genesis, signed for
//! by the treasury's key, their contents built from the ledger until a transaction changes
//! them — as the network's genesis content providers do. The exchange-rate file is the
//! network's rate once written (`ledger::rates`): only its privileged payers write it (0.0.2
//! and 0.0.50 freely, 0.0.57 within 25 % of the rates in force), and only with both rates.

use super::{Ctx, Outcome};
use crate::state::ledger::{file_num, File, KeyBytes, Ledger};
use hedera_proto::services as proto;
use prost::Message;
use proto::ResponseCodeEnum as Code;

/// The largest file, in bytes (`files.maxSizeKb` = 1024).
pub const MAX_FILE_BYTES: usize = 1024 * 1024;
/// The highest system entity number (`ledger.numReservedSystemEntities`).
const RESERVED_SYSTEM_ENTITIES: u64 = 750;
/// An entity's lifetime bounds, seconds (`ledger.autoRenewPeriod.minDuration` / `maxDuration`).
const MIN_LIFETIME: i64 = 2_592_000;
const MAX_LIFETIME: i64 = 8_000_001;
/// The network's memo limit, bytes.
const MAX_MEMO_BYTES: usize = 100;

/// The system files with genesis contents.
pub const ADDRESS_BOOK: u64 = 101;
pub const NODE_DETAILS: u64 = 102;
pub const FEE_SCHEDULE: u64 = 111;
pub const EXCHANGE_RATES: u64 = 112;

/// The superusers (treasury, system admin), who write any system file without its keys.
const SUPERUSERS: [u64; 2] = [2, 50];
/// The exchange-rate admin, who writes 0.0.112 within the intraday change limit.
const EXCHANGE_RATE_ADMIN: u64 = 57;
/// How far (percent) the exchange-rate admin may move either rate at once
/// (`rates.intradayChangeLimitPercent`).
const INTRADAY_CHANGE_LIMIT_PERCENT: i128 = 25;

/// A write of the exchange-rate file: who may (`AUTHORIZATION_FAILED` for anyone else), what
/// it may hold (`INVALID_EXCHANGE_RATE_FILE` unless both rates) and how far the admin may move
/// it (`EXCHANGE_RATE_CHANGE_LIMIT_EXCEEDED`). `Ok(true)`: a privileged payer, whose write
/// needs no file key.
fn rate_file_write(ledger: &Ledger, ctx: &Ctx<'_>, contents: &[u8]) -> Result<bool, Code> {
    if !SUPERUSERS.contains(&ctx.payer) && ctx.payer != EXCHANGE_RATE_ADMIN {
        return Err(Code::AuthorizationFailed);
    }
    let set =
        crate::state::ledger::RateSet::from_file(contents).ok_or(Code::InvalidExchangeRateFile)?;
    if ctx.payer == EXCHANGE_RATE_ADMIN {
        let now = ledger.exchange_rates(ctx.consensus.seconds);
        if !now
            .current
            .within(set.current, INTRADAY_CHANGE_LIMIT_PERCENT)
            || !now.next.within(set.next, INTRADAY_CHANGE_LIMIT_PERCENT)
        {
            return Err(Code::ExchangeRateChangeLimitExceeded);
        }
    }
    Ok(true)
}

/// Checks answered at precheck (the handlers' `pureChecks`).
pub fn pure_check_create(body: &proto::FileCreateTransactionBody) -> Result<(), Code> {
    if body.expiration_time.is_none() {
        return Err(Code::InvalidExpirationTime);
    }
    Ok(())
}

/// A file id is required by append, update and delete (`INVALID_FILE_ID` at precheck).
pub fn pure_check_target(id: Option<&proto::FileId>) -> Result<(), Code> {
    match id {
        Some(_) => Ok(()),
        None => Err(Code::InvalidFileId),
    }
}

/// The file `num` names: a stored one, or a system file's genesis state.
pub fn file(ledger: &Ledger, num: u64) -> Option<File> {
    ledger
        .files
        .get(&num)
        .cloned()
        .or_else(|| system_file(ledger, num))
}

/// A system file as genesis made it: contents built from the ledger, the treasury's key.
pub fn system_file(ledger: &Ledger, num: u64) -> Option<File> {
    let contents = match num {
        ADDRESS_BOOK | NODE_DETAILS => address_book(ledger).encode_to_vec(),
        FEE_SCHEDULE => crate::fees::schedule_file(ledger.last_consensus.seconds).encode_to_vec(),
        EXCHANGE_RATES => crate::state::ledger::RateSet::genesis(ledger.last_consensus.seconds)
            .to_proto()
            .encode_to_vec(),
        _ => return None,
    };
    let treasury = ledger
        .accounts
        .get(&crate::state::genesis::TREASURY_ACCOUNT)?;
    Some(File {
        num,
        keys: Some(KeyBytes::from_proto(&key_list(vec![treasury
            .key
            .to_proto()]))),
        contents,
        memo: String::new(),
        // System files never expire in practice.
        expiration: i64::from(i32::MAX),
        deleted: false,
    })
}

/// The network's address book: the one node, where it listens, its account and the
/// description its NodeUpdates left.
pub fn address_book(ledger: &Ledger) -> proto::NodeAddressBook {
    let description = ledger
        .nodes
        .get(&0)
        .map_or_else(|| "hak-emu".to_owned(), |n| n.state().description);
    let endpoint = ledger
        .node_endpoint
        .unwrap_or_else(|| ([127, 0, 0, 1], 50211).into());
    let key = ledger
        .accounts
        .get(&crate::state::genesis::NODE_ACCOUNT)
        .map(|a| hex::encode(&a.key.0))
        .unwrap_or_default();
    proto::NodeAddressBook {
        node_address: vec![proto::NodeAddress {
            rsa_pub_key: key,
            node_id: 0,
            node_account_id: Some(crate::state::ledger::account_id(
                crate::state::genesis::NODE_ACCOUNT,
            )),
            description,
            service_endpoint: vec![proto::ServiceEndpoint {
                ip_address_v4: match endpoint.ip() {
                    std::net::IpAddr::V4(ip) => ip.octets().to_vec(),
                    std::net::IpAddr::V6(_) => Vec::new(),
                },
                port: i32::from(endpoint.port()),
                domain_name: String::new(),
            }],
            ..Default::default()
        }],
    }
}

fn key_list(keys: Vec<proto::Key>) -> proto::Key {
    proto::Key {
        key: Some(proto::key::Key::KeyList(proto::KeyList { keys })),
    }
}

fn check_memo(memo: &str) -> Result<(), Code> {
    if memo.len() > MAX_MEMO_BYTES {
        return Err(Code::MemoTooLong);
    }
    if memo.contains('\0') {
        return Err(Code::InvalidZeroByteInString);
    }
    Ok(())
}

/// Every key of `list` signed (a key list is satisfied by all its keys).
fn require_all(ctx: &Ctx<'_>, list: &proto::KeyList) -> Result<(), Code> {
    if list.keys.is_empty() || ctx.active.satisfies(&key_list(list.keys.clone())) {
        Ok(())
    } else {
        Err(Code::InvalidSignature)
    }
}

/// The live file a body names (`INVALID_FILE_ID`, `FILE_DELETED`).
fn target(ledger: &Ledger, id: Option<&proto::FileId>) -> Result<File, Code> {
    let num = id.and_then(file_num).ok_or(Code::InvalidFileId)?;
    file(ledger, num).ok_or(Code::InvalidFileId)
}

pub fn create(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    body: &proto::FileCreateTransactionBody,
) -> Result<Outcome, Code> {
    let keys = body.keys.clone();
    if let Some(list) = &keys {
        require_all(ctx, list)?;
    }
    let expiration = body
        .expiration_time
        .as_ref()
        .ok_or(Code::InvalidExpirationTime)?
        .seconds;
    // The network translates an out-of-range expiry to this status for files.
    let lifetime = expiration - ctx.consensus.seconds;
    if !(MIN_LIFETIME..=MAX_LIFETIME).contains(&lifetime) {
        return Err(Code::AutorenewDurationNotInRange);
    }
    check_memo(&body.memo)?;
    if body.contents.len() > MAX_FILE_BYTES {
        return Err(Code::MaxFileSizeExceeded);
    }
    let num = ledger.allocate();
    ledger.files.insert(
        num,
        File {
            num,
            keys: keys.map(|list| KeyBytes::from_proto(&key_list(list.keys))),
            contents: body.contents.clone(),
            memo: body.memo.clone(),
            expiration,
            deleted: false,
        },
    );
    let mut outcome = Outcome::success().entity(num);
    outcome.receipt.file_id = Some(num);
    Ok(outcome)
}

pub fn append(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    body: &proto::FileAppendTransactionBody,
) -> Result<Outcome, Code> {
    let mut file = target(ledger, body.file_id.as_ref())?;
    let privileged = if file.num == EXCHANGE_RATES {
        let mut contents = file.contents.clone();
        contents.extend_from_slice(&body.contents);
        rate_file_write(ledger, ctx, &contents)?
    } else {
        false
    };
    if !privileged {
        require_all(ctx, &file.key_list())?;
    }
    if !file.is_mutable() {
        return Err(Code::Unauthorized);
    }
    if file.deleted {
        return Err(Code::FileDeleted);
    }
    if file.contents.len() + body.contents.len() > MAX_FILE_BYTES {
        return Err(Code::MaxFileSizeExceeded);
    }
    file.contents.extend_from_slice(&body.contents);
    let num = file.num;
    ledger.files.insert(num, file);
    Ok(Outcome::success().entity(num))
}

pub fn update(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    body: &proto::FileUpdateTransactionBody,
) -> Result<Outcome, Code> {
    let mut file = target(ledger, body.file_id.as_ref())?;
    let changes_more_than_expiry =
        body.keys.is_some() || !body.contents.is_empty() || body.memo.is_some();
    let privileged = file.num == EXCHANGE_RATES
        && !body.contents.is_empty()
        && rate_file_write(ledger, ctx, &body.contents)?;
    if changes_more_than_expiry {
        if !privileged {
            require_all(ctx, &file.key_list())?;
        }
        if let Some(list) = &body.keys {
            require_all(ctx, list)?;
        }
    }
    if file.deleted {
        return Err(Code::FileDeleted);
    }
    if changes_more_than_expiry {
        if !file.is_mutable() {
            return Err(Code::Unauthorized);
        }
        if let Some(memo) = &body.memo {
            check_memo(memo)?;
        }
    }
    if let Some(expiration) = &body.expiration_time {
        let lifetime = expiration.seconds - ctx.id.valid_start.seconds;
        if !(MIN_LIFETIME..=MAX_LIFETIME).contains(&lifetime) {
            return Err(Code::AutorenewDurationNotInRange);
        }
        // An expiry is only ever extended.
        file.expiration = file.expiration.max(expiration.seconds);
    }
    if let Some(list) = &body.keys {
        file.keys = Some(KeyBytes::from_proto(&key_list(list.keys.clone())));
    }
    if !body.contents.is_empty() {
        if body.contents.len() > MAX_FILE_BYTES {
            return Err(Code::MaxFileSizeExceeded);
        }
        file.contents = body.contents.clone();
    }
    if let Some(memo) = &body.memo {
        file.memo = memo.clone();
    }
    let num = file.num;
    ledger.files.insert(num, file);
    Ok(Outcome::success().entity(num))
}

pub fn delete(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    body: &proto::FileDeleteTransactionBody,
) -> Result<Outcome, Code> {
    let mut file = target(ledger, body.file_id.as_ref())?;
    // Any one of the file's keys deletes it.
    let list = file.key_list();
    if !list.keys.is_empty() {
        let one_of = proto::Key {
            key: Some(proto::key::Key::ThresholdKey(proto::ThresholdKey {
                threshold: 1,
                keys: Some(list),
            })),
        };
        if !ctx.active.satisfies(&one_of) {
            return Err(Code::InvalidSignature);
        }
    }
    if file.num <= RESERVED_SYSTEM_ENTITIES {
        return Err(Code::EntityNotAllowedToDelete);
    }
    if !file.is_mutable() {
        return Err(Code::Unauthorized);
    }
    if file.deleted {
        return Err(Code::FileDeleted);
    }
    file.deleted = true;
    file.contents.clear();
    let num = file.num;
    ledger.files.insert(num, file);
    Ok(Outcome::success().entity(num))
}
