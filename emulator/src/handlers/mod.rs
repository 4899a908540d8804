//! Transaction handlers, one module per service. A handler checks everything first and only
//! then changes the ledger, so a failed transaction changes nothing but the fee.

mod account;
mod address_book;
mod airdrop;
pub mod alias;
mod allowance;
mod consensus;
pub mod contract;
mod crypto;
pub mod custom_fees;
mod fee_assessment;
pub mod file;
mod plan;
mod reject;
mod schedule;
pub mod settle;
mod token;
mod token_admin;
mod token_update;

use crate::state::keys::ActiveKeys;
use crate::state::ledger::{token_num, EntityId, KeyBytes, Ledger, Receipt, Token, Ts, TxId};
use hedera_proto::services as proto;
use proto::transaction_body::Data;
use proto::ResponseCodeEnum as Code;

/// What a handler knows about the transaction it handles.
pub struct Ctx<'a> {
    pub payer: u64,
    pub active: &'a ActiveKeys,
    pub consensus: Ts,
    pub id: TxId,
    /// The node handling the transaction (fees go partly to it).
    pub node: u64,
    /// The most custom fees the payer accepts (the body's `max_custom_fees`; HIP-991).
    pub max_custom_fees: &'a [proto::CustomFeeLimit],
}

impl Ctx<'_> {
    /// `INVALID_SIGNATURE` unless `key` is satisfied by the transaction's signatures.
    pub fn require(&self, key: &KeyBytes) -> Result<(), Code> {
        if self.active.satisfies(&key.to_proto()) {
            Ok(())
        } else {
            Err(Code::InvalidSignature)
        }
    }
}

/// The auto-renew account a create or update body names, if any: a live account whose key
/// signed the transaction (`INVALID_AUTORENEW_ACCOUNT`, `INVALID_SIGNATURE` otherwise).
pub fn auto_renew_account(
    ledger: &Ledger,
    ctx: &Ctx<'_>,
    id: Option<&proto::AccountId>,
) -> Result<Option<u64>, Code> {
    let Some(id) = id else {
        return Ok(None);
    };
    let num = crate::state::ledger::account_num(id).ok_or(Code::InvalidAutorenewAccount)?;
    let account = ledger
        .live_account(num)
        .ok_or(Code::InvalidAutorenewAccount)?;
    ctx.require(&account.key)?;
    Ok(Some(num))
}

/// A handled transaction: the receipt, HBAR movements (fees excluded), token and NFT
/// movements, and the created or touched entity (for the mirror's `entity_id`).
/// A live (not deleted) token.
pub fn live_token<'l>(ledger: &'l Ledger, id: Option<&proto::TokenId>) -> Result<&'l Token, Code> {
    let num = id.and_then(token_num).ok_or(Code::InvalidTokenId)?;
    let token = ledger.tokens.get(&num).ok_or(Code::InvalidTokenId)?;
    if token.deleted {
        return Err(Code::TokenWasDeleted);
    }
    Ok(token)
}

pub struct Outcome {
    pub receipt: Receipt,
    pub transfers: Vec<(u64, i64)>,
    /// (token, account, amount) of fungible token movements.
    pub token_transfers: Vec<(u64, u64, i64)>,
    /// (token, sender, receiver, serial) of NFT movements (sender 0 for a mint).
    pub nft_transfers: Vec<(u64, u64, u64, i64)>,
    pub entity: Option<String>,
    /// What the EVM did (contract creates and calls).
    pub contract_result: Option<crate::state::ledger::ContractResult>,
    /// Airdrops this transaction left pending (the record's `newPendingAirdrops`).
    pub new_pending_airdrops: Vec<crate::state::ledger::PendingAirdrop>,
    /// (account, token) associations this transaction made automatically (the record's
    /// `automaticTokenAssociations`).
    pub automatic_associations: Vec<(u64, u64)>,
    /// Custom fees the transaction paid (the record's `assessed_custom_fees`).
    pub assessed_custom_fees: Vec<crate::state::ledger::AssessedFee>,
}

impl Outcome {
    pub fn success() -> Self {
        Outcome::failed(Code::Success)
    }

    /// A handled transaction that changed nothing but the fee.
    pub fn failed(status: Code) -> Self {
        Outcome {
            receipt: Receipt {
                status: status as i32,
                ..Default::default()
            },
            transfers: Vec::new(),
            token_transfers: Vec::new(),
            nft_transfers: Vec::new(),
            entity: None,
            contract_result: None,
            new_pending_airdrops: Vec::new(),
            automatic_associations: Vec::new(),
            assessed_custom_fees: Vec::new(),
        }
    }

    fn entity(mut self, num: u64) -> Self {
        self.entity = Some(EntityId(num).to_string());
        self
    }
}

/// Checks that need no state (the node's handler `pureChecks`), answered at precheck.
pub fn pure_check(data: &Data) -> Result<(), Code> {
    match data {
        Data::CryptoTransfer(body) => crypto::pure_check_transfer(body),
        Data::ConsensusSubmitMessage(body) => consensus::pure_check_submit(body),
        Data::TokenClaimAirdrop(body) => airdrop::pure_check_ids(&body.pending_airdrops),
        Data::TokenCancelAirdrop(body) => airdrop::pure_check_ids(&body.pending_airdrops),
        // Both ids are required (`CryptoDeleteHandler`, `CryptoUpdateHandler` pure checks).
        Data::CryptoDelete(body)
            if body.delete_account_id.is_none() || body.transfer_account_id.is_none() =>
        {
            Err(Code::AccountIdDoesNotExist)
        }
        Data::CryptoUpdateAccount(body) if body.account_id_to_update.is_none() => {
            Err(Code::AccountIdDoesNotExist)
        }
        Data::ContractDeleteInstance(body) => contract::pure_check_delete(body),
        Data::TokenReject(body) => reject::pure_check(body),
        // Token and account are required (the handlers' pure checks).
        Data::TokenFreeze(b) => token_admin::pure_check_pair(b.token.as_ref(), b.account.as_ref()),
        Data::TokenUnfreeze(b) => {
            token_admin::pure_check_pair(b.token.as_ref(), b.account.as_ref())
        }
        Data::TokenGrantKyc(b) => {
            token_admin::pure_check_pair(b.token.as_ref(), b.account.as_ref())
        }
        Data::TokenRevokeKyc(b) => {
            token_admin::pure_check_pair(b.token.as_ref(), b.account.as_ref())
        }
        Data::FileCreate(body) => file::pure_check_create(body),
        Data::FileAppend(body) => file::pure_check_target(body.file_id.as_ref()),
        Data::FileUpdate(body) => file::pure_check_target(body.file_id.as_ref()),
        Data::FileDelete(body) => file::pure_check_target(body.file_id.as_ref()),
        Data::NodeCreate(body) => address_book::pure_check_node_create(body),
        Data::RegisteredNodeCreate(body) => address_book::pure_check_registered_create(body),
        _ => Ok(()),
    }
}

/// Handle a transaction that passed precheck.
pub fn handle(ledger: &mut Ledger, ctx: &Ctx<'_>, data: &Data) -> Result<Outcome, Code> {
    match data {
        Data::CryptoTransfer(body) => crypto::transfer(ledger, ctx, body),
        Data::CryptoCreateAccount(body) => account::create(ledger, ctx, body),
        Data::CryptoUpdateAccount(body) => account::update(ledger, ctx, body),
        Data::CryptoDelete(body) => account::delete(ledger, ctx, body),
        Data::ConsensusCreateTopic(body) => consensus::create_topic(ledger, ctx, body),
        Data::ConsensusUpdateTopic(body) => consensus::update_topic(ledger, ctx, body),
        Data::ConsensusDeleteTopic(body) => consensus::delete_topic(ledger, ctx, body),
        Data::ConsensusSubmitMessage(body) => consensus::submit_message(ledger, ctx, body),
        Data::TokenCreation(body) => token::create(ledger, ctx, body),
        Data::TokenAssociate(body) => token::associate(ledger, ctx, body),
        Data::TokenDissociate(body) => token::dissociate(ledger, ctx, body),
        Data::TokenMint(body) => token::mint(ledger, ctx, body),
        Data::CryptoApproveAllowance(body) => allowance::approve(ledger, ctx, body),
        Data::CryptoDeleteAllowance(body) => allowance::delete(ledger, ctx, body),
        Data::TokenAirdrop(body) => airdrop::airdrop(ledger, ctx, body),
        Data::ContractCreateInstance(body) => contract::create(ledger, ctx, body),
        Data::ContractCall(body) => contract::call(ledger, ctx, body),
        Data::TokenClaimAirdrop(body) => airdrop::claim(ledger, ctx, body),
        Data::TokenCancelAirdrop(body) => airdrop::cancel(ledger, ctx, body),
        Data::TokenUpdate(body) => token_update::update(ledger, ctx, body),
        Data::TokenFreeze(b) => {
            token_admin::set_frozen(ledger, ctx, b.token.as_ref(), b.account.as_ref(), true)
        }
        Data::TokenUnfreeze(b) => {
            token_admin::set_frozen(ledger, ctx, b.token.as_ref(), b.account.as_ref(), false)
        }
        Data::TokenGrantKyc(b) => {
            token_admin::set_kyc(ledger, ctx, b.token.as_ref(), b.account.as_ref(), true)
        }
        Data::TokenRevokeKyc(b) => {
            token_admin::set_kyc(ledger, ctx, b.token.as_ref(), b.account.as_ref(), false)
        }
        Data::TokenPause(b) => token_admin::set_paused(ledger, ctx, b.token.as_ref(), true),
        Data::TokenUnpause(b) => token_admin::set_paused(ledger, ctx, b.token.as_ref(), false),
        Data::TokenBurn(body) => token_admin::burn(ledger, ctx, body),
        Data::TokenWipe(body) => token_admin::wipe(ledger, ctx, body),
        Data::TokenDeletion(body) => token_admin::delete(ledger, ctx, body),
        Data::ScheduleCreate(body) => schedule::create(ledger, ctx, body),
        Data::ScheduleSign(body) => schedule::sign(ledger, ctx, body),
        Data::ScheduleDelete(body) => schedule::delete(ledger, ctx, body),
        Data::ContractUpdateInstance(body) => contract::update(ledger, ctx, body),
        Data::TokenUpdateNfts(body) => token_admin::update_nfts(ledger, ctx, body),
        Data::TokenReject(body) => reject::reject(ledger, ctx, body),
        Data::ContractDeleteInstance(body) => contract::delete(ledger, ctx, body),
        Data::FileCreate(body) => file::create(ledger, ctx, body),
        Data::FileAppend(body) => file::append(ledger, ctx, body),
        Data::FileUpdate(body) => file::update(ledger, ctx, body),
        Data::FileDelete(body) => file::delete(ledger, ctx, body),
        Data::TokenFeeScheduleUpdate(body) => custom_fees::update_schedule(ledger, ctx, body),
        Data::NodeCreate(body) => address_book::create_node(ledger, ctx, body),
        Data::NodeUpdate(body) => address_book::update_node(ledger, ctx, body),
        Data::NodeDelete(body) => address_book::delete_node(ledger, ctx, body),
        Data::RegisteredNodeCreate(body) => address_book::create_registered(ledger, ctx, body),
        Data::RegisteredNodeUpdate(body) => address_book::update_registered(ledger, ctx, body),
        Data::RegisteredNodeDelete(body) => address_book::delete_registered(ledger, ctx, body),
        _ => Err(Code::NotSupported),
    }
}
