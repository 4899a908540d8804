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
mod reject;
mod schedule;
mod token;
mod token_admin;
mod token_update;

use crate::keys::ActiveKeys;
use crate::ledger::{KeyBytes, Ledger, Receipt, Ts, TxId};
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
    let num = crate::ledger::account_num(id).ok_or(Code::InvalidAutorenewAccount)?;
    let account = ledger
        .live_account(num)
        .ok_or(Code::InvalidAutorenewAccount)?;
    ctx.require(&account.key)?;
    Ok(Some(num))
}

/// A handled transaction: the receipt, HBAR movements (fees excluded), token and NFT
/// movements, and the created or touched entity (for the mirror's `entity_id`).
pub struct Outcome {
    pub receipt: Receipt,
    pub transfers: Vec<(u64, i64)>,
    /// (token, account, amount) of fungible token movements.
    pub token_transfers: Vec<(u64, u64, i64)>,
    /// (token, sender, receiver, serial) of NFT movements (sender 0 for a mint).
    pub nft_transfers: Vec<(u64, u64, u64, i64)>,
    pub entity: Option<String>,
    /// What the EVM did (contract creates and calls).
    pub contract_result: Option<crate::ledger::ContractResult>,
    /// Airdrops this transaction left pending (the record's `newPendingAirdrops`).
    pub new_pending_airdrops: Vec<crate::ledger::PendingAirdrop>,
    /// (account, token) associations this transaction made automatically (the record's
    /// `automaticTokenAssociations`).
    pub automatic_associations: Vec<(u64, u64)>,
    /// Custom fees the transaction paid (the record's `assessed_custom_fees`).
    pub assessed_custom_fees: Vec<crate::ledger::AssessedFee>,
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
        self.entity = Some(format!("0.0.{num}"));
        self
    }
}

/// The transaction kinds this emulator handles. Everything else is `NOT_SUPPORTED` at precheck.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    CryptoTransfer,
    CryptoCreate,
    CryptoUpdate,
    CryptoDelete,
    TopicCreate,
    TopicUpdate,
    TopicDelete,
    TopicSubmit,
    TokenCreate,
    TokenAssociate,
    TokenDissociate,
    TokenMint,
    AllowanceApprove,
    AllowanceDelete,
    TokenAirdrop,
    TokenClaimAirdrop,
    TokenCancelAirdrop,
    TokenUpdate,
    TokenFreeze,
    TokenUnfreeze,
    TokenGrantKyc,
    TokenRevokeKyc,
    TokenPause,
    TokenUnpause,
    TokenBurn,
    TokenWipe,
    TokenDelete,
    ScheduleCreate,
    ScheduleSign,
    ScheduleDelete,
    ContractCreate,
    ContractCall,
    ContractUpdate,
    ContractDelete,
    TokenUpdateNfts,
    TokenReject,
    FileCreate,
    FileAppend,
    FileUpdate,
    FileDelete,
    TokenFeeScheduleUpdate,
    NodeCreate,
    NodeUpdate,
    NodeDelete,
    RegisteredNodeCreate,
    RegisteredNodeUpdate,
    RegisteredNodeDelete,
    AtomicBatch,
}

impl Kind {
    /// Every kind, in declaration order.
    pub const ALL: [Kind; 48] = [
        Kind::CryptoTransfer,
        Kind::CryptoCreate,
        Kind::CryptoUpdate,
        Kind::CryptoDelete,
        Kind::TopicCreate,
        Kind::TopicUpdate,
        Kind::TopicDelete,
        Kind::TopicSubmit,
        Kind::TokenCreate,
        Kind::TokenAssociate,
        Kind::TokenDissociate,
        Kind::TokenMint,
        Kind::AllowanceApprove,
        Kind::AllowanceDelete,
        Kind::TokenAirdrop,
        Kind::TokenClaimAirdrop,
        Kind::TokenCancelAirdrop,
        Kind::TokenUpdate,
        Kind::TokenFreeze,
        Kind::TokenUnfreeze,
        Kind::TokenGrantKyc,
        Kind::TokenRevokeKyc,
        Kind::TokenPause,
        Kind::TokenUnpause,
        Kind::TokenBurn,
        Kind::TokenWipe,
        Kind::TokenDelete,
        Kind::ScheduleCreate,
        Kind::ScheduleSign,
        Kind::ScheduleDelete,
        Kind::ContractCreate,
        Kind::ContractCall,
        Kind::ContractUpdate,
        Kind::ContractDelete,
        Kind::TokenUpdateNfts,
        Kind::TokenReject,
        Kind::FileCreate,
        Kind::FileAppend,
        Kind::FileUpdate,
        Kind::FileDelete,
        Kind::TokenFeeScheduleUpdate,
        Kind::NodeCreate,
        Kind::NodeUpdate,
        Kind::NodeDelete,
        Kind::RegisteredNodeCreate,
        Kind::RegisteredNodeUpdate,
        Kind::RegisteredNodeDelete,
        Kind::AtomicBatch,
    ];

    /// The `HederaFunctionality` of this kind (the fee schedule's key).
    pub fn functionality(self) -> proto::HederaFunctionality {
        match self {
            Kind::CryptoTransfer => proto::HederaFunctionality::CryptoTransfer,
            Kind::CryptoCreate => proto::HederaFunctionality::CryptoCreate,
            Kind::CryptoUpdate => proto::HederaFunctionality::CryptoUpdate,
            Kind::CryptoDelete => proto::HederaFunctionality::CryptoDelete,
            Kind::TopicCreate => proto::HederaFunctionality::ConsensusCreateTopic,
            Kind::TopicUpdate => proto::HederaFunctionality::ConsensusUpdateTopic,
            Kind::TopicDelete => proto::HederaFunctionality::ConsensusDeleteTopic,
            Kind::TopicSubmit => proto::HederaFunctionality::ConsensusSubmitMessage,
            Kind::TokenCreate => proto::HederaFunctionality::TokenCreate,
            Kind::TokenAssociate => proto::HederaFunctionality::TokenAssociateToAccount,
            Kind::TokenDissociate => proto::HederaFunctionality::TokenDissociateFromAccount,
            Kind::TokenMint => proto::HederaFunctionality::TokenMint,
            Kind::AllowanceApprove => proto::HederaFunctionality::CryptoApproveAllowance,
            Kind::AllowanceDelete => proto::HederaFunctionality::CryptoDeleteAllowance,
            Kind::TokenAirdrop => proto::HederaFunctionality::TokenAirdrop,
            Kind::TokenClaimAirdrop => proto::HederaFunctionality::TokenClaimAirdrop,
            Kind::TokenCancelAirdrop => proto::HederaFunctionality::TokenCancelAirdrop,
            Kind::TokenUpdate => proto::HederaFunctionality::TokenUpdate,
            Kind::TokenFreeze => proto::HederaFunctionality::TokenFreezeAccount,
            Kind::TokenUnfreeze => proto::HederaFunctionality::TokenUnfreezeAccount,
            Kind::TokenGrantKyc => proto::HederaFunctionality::TokenGrantKycToAccount,
            Kind::TokenRevokeKyc => proto::HederaFunctionality::TokenRevokeKycFromAccount,
            Kind::TokenPause => proto::HederaFunctionality::TokenPause,
            Kind::TokenUnpause => proto::HederaFunctionality::TokenUnpause,
            Kind::TokenBurn => proto::HederaFunctionality::TokenBurn,
            Kind::TokenWipe => proto::HederaFunctionality::TokenAccountWipe,
            Kind::TokenDelete => proto::HederaFunctionality::TokenDelete,
            Kind::ScheduleCreate => proto::HederaFunctionality::ScheduleCreate,
            Kind::ScheduleSign => proto::HederaFunctionality::ScheduleSign,
            Kind::ScheduleDelete => proto::HederaFunctionality::ScheduleDelete,
            Kind::ContractCreate => proto::HederaFunctionality::ContractCreate,
            Kind::ContractCall => proto::HederaFunctionality::ContractCall,
            Kind::ContractUpdate => proto::HederaFunctionality::ContractUpdate,
            Kind::ContractDelete => proto::HederaFunctionality::ContractDelete,
            Kind::TokenUpdateNfts => proto::HederaFunctionality::TokenUpdateNfts,
            Kind::TokenReject => proto::HederaFunctionality::TokenReject,
            Kind::FileCreate => proto::HederaFunctionality::FileCreate,
            Kind::FileAppend => proto::HederaFunctionality::FileAppend,
            Kind::FileUpdate => proto::HederaFunctionality::FileUpdate,
            Kind::FileDelete => proto::HederaFunctionality::FileDelete,
            Kind::TokenFeeScheduleUpdate => proto::HederaFunctionality::TokenFeeScheduleUpdate,
            Kind::NodeCreate => proto::HederaFunctionality::NodeCreate,
            Kind::NodeUpdate => proto::HederaFunctionality::NodeUpdate,
            Kind::NodeDelete => proto::HederaFunctionality::NodeDelete,
            Kind::RegisteredNodeCreate => proto::HederaFunctionality::RegisteredNodeCreate,
            Kind::RegisteredNodeUpdate => proto::HederaFunctionality::RegisteredNodeUpdate,
            Kind::RegisteredNodeDelete => proto::HederaFunctionality::RegisteredNodeDelete,
            Kind::AtomicBatch => proto::HederaFunctionality::AtomicBatch,
        }
    }

    pub fn of(data: &Data) -> Option<Self> {
        Some(match data {
            Data::CryptoTransfer(_) => Kind::CryptoTransfer,
            Data::CryptoCreateAccount(_) => Kind::CryptoCreate,
            Data::CryptoUpdateAccount(_) => Kind::CryptoUpdate,
            Data::CryptoDelete(_) => Kind::CryptoDelete,
            Data::ConsensusCreateTopic(_) => Kind::TopicCreate,
            Data::ConsensusUpdateTopic(_) => Kind::TopicUpdate,
            Data::ConsensusDeleteTopic(_) => Kind::TopicDelete,
            Data::ConsensusSubmitMessage(_) => Kind::TopicSubmit,
            Data::TokenCreation(_) => Kind::TokenCreate,
            Data::TokenAssociate(_) => Kind::TokenAssociate,
            Data::TokenDissociate(_) => Kind::TokenDissociate,
            Data::TokenMint(_) => Kind::TokenMint,
            Data::CryptoApproveAllowance(_) => Kind::AllowanceApprove,
            Data::CryptoDeleteAllowance(_) => Kind::AllowanceDelete,
            Data::TokenAirdrop(_) => Kind::TokenAirdrop,
            Data::TokenClaimAirdrop(_) => Kind::TokenClaimAirdrop,
            Data::TokenCancelAirdrop(_) => Kind::TokenCancelAirdrop,
            Data::TokenUpdate(_) => Kind::TokenUpdate,
            Data::TokenFreeze(_) => Kind::TokenFreeze,
            Data::TokenUnfreeze(_) => Kind::TokenUnfreeze,
            Data::TokenGrantKyc(_) => Kind::TokenGrantKyc,
            Data::TokenRevokeKyc(_) => Kind::TokenRevokeKyc,
            Data::TokenPause(_) => Kind::TokenPause,
            Data::TokenUnpause(_) => Kind::TokenUnpause,
            Data::TokenBurn(_) => Kind::TokenBurn,
            Data::TokenWipe(_) => Kind::TokenWipe,
            Data::TokenDeletion(_) => Kind::TokenDelete,
            Data::ScheduleCreate(_) => Kind::ScheduleCreate,
            Data::ScheduleSign(_) => Kind::ScheduleSign,
            Data::ScheduleDelete(_) => Kind::ScheduleDelete,
            Data::ContractCreateInstance(_) => Kind::ContractCreate,
            Data::ContractCall(_) => Kind::ContractCall,
            Data::ContractUpdateInstance(_) => Kind::ContractUpdate,
            Data::ContractDeleteInstance(_) => Kind::ContractDelete,
            Data::TokenUpdateNfts(_) => Kind::TokenUpdateNfts,
            Data::TokenReject(_) => Kind::TokenReject,
            Data::FileCreate(_) => Kind::FileCreate,
            Data::FileAppend(_) => Kind::FileAppend,
            Data::FileUpdate(_) => Kind::FileUpdate,
            Data::FileDelete(_) => Kind::FileDelete,
            Data::TokenFeeScheduleUpdate(_) => Kind::TokenFeeScheduleUpdate,
            Data::NodeCreate(_) => Kind::NodeCreate,
            Data::NodeUpdate(_) => Kind::NodeUpdate,
            Data::NodeDelete(_) => Kind::NodeDelete,
            Data::RegisteredNodeCreate(_) => Kind::RegisteredNodeCreate,
            Data::RegisteredNodeUpdate(_) => Kind::RegisteredNodeUpdate,
            Data::RegisteredNodeDelete(_) => Kind::RegisteredNodeDelete,
            Data::AtomicBatch(_) => Kind::AtomicBatch,
            _ => return None,
        })
    }

    /// The flat fee in tinybars (below the SDK's default max fees).
    pub fn fee(self) -> i64 {
        match self {
            Kind::CryptoTransfer => 100_000,
            Kind::CryptoCreate => 5_000_000,
            Kind::CryptoUpdate | Kind::CryptoDelete => 1_000_000,
            Kind::TopicCreate | Kind::TopicUpdate | Kind::TopicDelete => 1_000_000,
            Kind::TopicSubmit => 10_000,
            Kind::TokenCreate => 100_000_000,
            Kind::TokenAssociate | Kind::TokenDissociate | Kind::TokenMint => 5_000_000,
            Kind::AllowanceApprove | Kind::AllowanceDelete => 5_000_000,
            Kind::TokenAirdrop | Kind::TokenClaimAirdrop | Kind::TokenCancelAirdrop => 10_000_000,
            Kind::ScheduleCreate | Kind::ScheduleSign | Kind::ScheduleDelete => 1_000_000,
            Kind::TokenUpdate => 5_000_000,
            Kind::TokenFreeze
            | Kind::TokenUnfreeze
            | Kind::TokenGrantKyc
            | Kind::TokenRevokeKyc
            | Kind::TokenPause
            | Kind::TokenUnpause
            | Kind::TokenDelete => 5_000_000,
            Kind::TokenBurn | Kind::TokenWipe => 5_000_000,
            Kind::ContractCreate => 50_000_000,
            Kind::ContractCall => 5_000_000,
            Kind::ContractUpdate | Kind::ContractDelete => 5_000_000,
            Kind::TokenUpdateNfts | Kind::TokenReject | Kind::TokenFeeScheduleUpdate => 5_000_000,
            Kind::FileCreate | Kind::FileAppend | Kind::FileUpdate => 5_000_000,
            Kind::FileDelete => 1_000_000,
            Kind::NodeCreate | Kind::RegisteredNodeCreate => 5_000_000,
            Kind::NodeUpdate | Kind::NodeDelete => 1_000_000,
            Kind::RegisteredNodeUpdate | Kind::RegisteredNodeDelete => 1_000_000,
            // The batch itself; each inner transaction pays its own fee.
            Kind::AtomicBatch => 100_000,
        }
    }

    /// The mirror node's transaction `name`.
    pub fn mirror_name(self) -> &'static str {
        match self {
            Kind::CryptoTransfer => "CRYPTOTRANSFER",
            Kind::CryptoCreate => "CRYPTOCREATEACCOUNT",
            Kind::CryptoUpdate => "CRYPTOUPDATEACCOUNT",
            Kind::CryptoDelete => "CRYPTODELETE",
            Kind::TopicCreate => "CONSENSUSCREATETOPIC",
            Kind::TopicUpdate => "CONSENSUSUPDATETOPIC",
            Kind::TopicDelete => "CONSENSUSDELETETOPIC",
            Kind::TopicSubmit => "CONSENSUSSUBMITMESSAGE",
            Kind::TokenCreate => "TOKENCREATION",
            Kind::TokenAssociate => "TOKENASSOCIATE",
            Kind::TokenDissociate => "TOKENDISSOCIATE",
            Kind::TokenMint => "TOKENMINT",
            Kind::AllowanceApprove => "CRYPTOAPPROVEALLOWANCE",
            Kind::AllowanceDelete => "CRYPTODELETEALLOWANCE",
            Kind::TokenAirdrop => "TOKENAIRDROP",
            Kind::TokenClaimAirdrop => "TOKENCLAIMAIRDROP",
            Kind::TokenCancelAirdrop => "TOKENCANCELAIRDROP",
            Kind::TokenUpdate => "TOKENUPDATE",
            Kind::TokenFreeze => "TOKENFREEZE",
            Kind::TokenUnfreeze => "TOKENUNFREEZE",
            Kind::TokenGrantKyc => "TOKENGRANTKYC",
            Kind::TokenRevokeKyc => "TOKENREVOKEKYC",
            Kind::TokenPause => "TOKENPAUSE",
            Kind::TokenUnpause => "TOKENUNPAUSE",
            Kind::TokenBurn => "TOKENBURN",
            Kind::TokenWipe => "TOKENWIPE",
            Kind::TokenDelete => "TOKENDELETION",
            Kind::ScheduleCreate => "SCHEDULECREATE",
            Kind::ScheduleSign => "SCHEDULESIGN",
            Kind::ScheduleDelete => "SCHEDULEDELETE",
            Kind::ContractCreate => "CONTRACTCREATEINSTANCE",
            Kind::ContractCall => "CONTRACTCALL",
            Kind::ContractUpdate => "CONTRACTUPDATEINSTANCE",
            Kind::ContractDelete => "CONTRACTDELETEINSTANCE",
            Kind::TokenUpdateNfts => "TOKENUPDATENFTS",
            Kind::TokenReject => "TOKENREJECT",
            Kind::FileCreate => "FILECREATE",
            Kind::FileAppend => "FILEAPPEND",
            Kind::FileUpdate => "FILEUPDATE",
            Kind::FileDelete => "FILEDELETE",
            Kind::TokenFeeScheduleUpdate => "TOKENFEESCHEDULEUPDATE",
            Kind::NodeCreate => "NODECREATE",
            Kind::NodeUpdate => "NODEUPDATE",
            Kind::NodeDelete => "NODEDELETE",
            Kind::RegisteredNodeCreate => "REGISTEREDNODECREATE",
            Kind::RegisteredNodeUpdate => "REGISTEREDNODEUPDATE",
            Kind::RegisteredNodeDelete => "REGISTEREDNODEDELETE",
            Kind::AtomicBatch => "ATOMICBATCH",
        }
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
