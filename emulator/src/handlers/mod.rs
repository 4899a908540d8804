//! Transaction handlers, one module per service. A handler checks everything first and only
//! then changes the ledger, so a failed transaction changes nothing but the fee.

mod consensus;
mod crypto;

use crate::keys::ActiveKeys;
use crate::ledger::{Ledger, Receipt, Ts, TxId};
use hedera_proto::services as proto;
use proto::transaction_body::Data;
use proto::ResponseCodeEnum as Code;

/// What a handler knows about the transaction it handles.
pub struct Ctx<'a> {
    pub payer: u64,
    pub active: &'a ActiveKeys,
    pub consensus: Ts,
    pub id: TxId,
}

/// A successful handling: the receipt, HBAR movements (fees excluded) and the created or
/// touched entity (for the mirror's `entity_id`).
pub struct Outcome {
    pub receipt: Receipt,
    pub transfers: Vec<(u64, i64)>,
    pub entity: Option<String>,
}

impl Outcome {
    fn success() -> Self {
        Outcome {
            receipt: Receipt {
                status: Code::Success as i32,
                ..Default::default()
            },
            transfers: Vec::new(),
            entity: None,
        }
    }
}

/// The transaction kinds this emulator handles. Everything else is `NOT_SUPPORTED` at precheck.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    CryptoTransfer,
    CryptoCreate,
    TopicCreate,
    TopicSubmit,
}

impl Kind {
    pub fn of(data: &Data) -> Option<Self> {
        Some(match data {
            Data::CryptoTransfer(body) if body.token_transfers.is_empty() => Kind::CryptoTransfer,
            Data::CryptoCreateAccount(_) => Kind::CryptoCreate,
            Data::ConsensusCreateTopic(_) => Kind::TopicCreate,
            Data::ConsensusSubmitMessage(_) => Kind::TopicSubmit,
            _ => return None,
        })
    }

    /// The flat fee in tinybars (below the SDK's default max fees).
    pub fn fee(self) -> i64 {
        match self {
            Kind::CryptoTransfer => 100_000,
            Kind::CryptoCreate => 5_000_000,
            Kind::TopicCreate => 1_000_000,
            Kind::TopicSubmit => 10_000,
        }
    }

    /// The mirror node's transaction `name`.
    pub fn mirror_name(self) -> &'static str {
        match self {
            Kind::CryptoTransfer => "CRYPTOTRANSFER",
            Kind::CryptoCreate => "CRYPTOCREATEACCOUNT",
            Kind::TopicCreate => "CONSENSUSCREATETOPIC",
            Kind::TopicSubmit => "CONSENSUSSUBMITMESSAGE",
        }
    }
}

/// Checks that need no state (the node's handler `pureChecks`), answered at precheck.
pub fn pure_check(data: &Data) -> Result<(), Code> {
    match data {
        Data::CryptoTransfer(body) => crypto::pure_check_transfer(body),
        Data::ConsensusSubmitMessage(body) => consensus::pure_check_submit(body),
        _ => Ok(()),
    }
}

/// Handle a transaction that passed precheck.
pub fn handle(ledger: &mut Ledger, ctx: &Ctx<'_>, data: &Data) -> Result<Outcome, Code> {
    match data {
        Data::CryptoTransfer(body) => crypto::transfer(ledger, ctx, body),
        Data::CryptoCreateAccount(body) => crypto::create(ledger, ctx, body),
        Data::ConsensusCreateTopic(body) => consensus::create_topic(ledger, ctx, body),
        Data::ConsensusSubmitMessage(body) => consensus::submit_message(ledger, ctx, body),
        _ => Err(Code::NotSupported),
    }
}
