//! The secondary action (stage 6): what happens to a built transaction, chosen by the agent
//! mode like the kit's `getStrategyFromContext`: return-bytes freezes and serialises it,
//! autonomous signs with the operator, submits and waits for the receipt, and the two custom
//! modes hand it to an operator-supplied [`TransactionStrategy`].

mod execute;
mod return_bytes;
mod transfer_wire;
pub mod wire;

pub use execute::ExecuteStrategy;
pub use return_bytes::{ReturnBytesResult, ReturnBytesStrategy};

use crate::model::context::{AgentContext, AgentMode};
use crate::tools::{BuiltTransaction, RawTransactionResponse, ToolError};
use hedera::{AccountId, Client};

/// What the secondary action produced.
#[derive(Debug)]
pub enum SecondaryResult {
    /// The transaction was executed (autonomous / custom-execute).
    Executed(RawTransactionResponse),
    /// The transaction was frozen and serialised for someone else to sign (return-bytes modes).
    Bytes(ReturnBytesResult),
}

/// Why the secondary action failed.
#[derive(Debug)]
pub enum StrategyError {
    /// A plain error (the kit's generic `handleError`).
    Tool(ToolError),
    /// The network rejected the transaction (the kit's `ReceiptStatusError` /
    /// `PrecheckStatusError`): carries the status name and the transaction id.
    Transaction {
        status: String,
        transaction_id: String,
        message: String,
    },
    /// The transaction may have been sent, and no receipt says what became of it (the SDK
    /// gave up waiting, the connection broke): it may yet apply.
    Unknown {
        transaction_id: Option<String>,
        message: String,
    },
}

impl From<ToolError> for StrategyError {
    fn from(e: ToolError) -> Self {
        StrategyError::Tool(e)
    }
}

/// What a strategy may use.
pub struct StrategyEnv<'a> {
    pub context: &'a AgentContext,
    pub client: &'a Client,
    /// Nodes to freeze for when the tool did not set any.
    pub node_account_ids: &'a [AccountId],
    pub runtime: &'a tokio::runtime::Handle,
    pub has_operator_key: bool,
    /// The mirror, to resolve what became of a transaction whose receipt never came.
    pub mirror: Option<&'a crate::mirror::Mirror>,
}

/// The kit's `TransactionStrategy`: custom modes plug in here (a human approval step, a remote
/// signer, a delegated payer…).
pub trait TransactionStrategy: Send + Sync {
    fn handle(
        &self,
        tx: BuiltTransaction,
        env: &StrategyEnv<'_>,
    ) -> Result<SecondaryResult, StrategyError>;
}

/// The kit's message when a custom mode has no strategy.
pub const CUSTOM_NEEDS_STRATEGY: &str =
    "transactionStrategy must be provided in Context when AgentMode is CUSTOM_EXECUTE_TX or CUSTOM_RETURN_BYTES";

/// The kit's `getStrategyFromContext`: return-bytes and autonomous are built in; the custom
/// modes use the operator's strategy, if one was given.
pub fn for_mode(
    mode: AgentMode,
    custom: Option<&dyn TransactionStrategy>,
) -> Result<&dyn TransactionStrategy, String> {
    static RETURN_BYTES: ReturnBytesStrategy = ReturnBytesStrategy;
    static EXECUTE: ExecuteStrategy = ExecuteStrategy;
    match mode {
        AgentMode::ReturnBytes => Ok(&RETURN_BYTES),
        AgentMode::Autonomous => Ok(&EXECUTE),
        AgentMode::CustomExecuteTx | AgentMode::CustomReturnBytes => {
            custom.ok_or_else(|| CUSTOM_NEEDS_STRATEGY.to_owned())
        }
    }
}
