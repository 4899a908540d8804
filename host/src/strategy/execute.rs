//! AUTONOMOUS: sign with the operator, submit, wait for the receipt.

use super::{SecondaryResult, StrategyEnv, StrategyError, TransactionStrategy};
use crate::network::block_on;
use crate::tools::transaction::kit_transaction_id;
use crate::tools::{BuiltTransaction, RawTransactionResponse, ToolError};

pub struct ExecuteStrategy;

impl TransactionStrategy for ExecuteStrategy {
    fn handle(
        &self,
        built: BuiltTransaction,
        env: &StrategyEnv<'_>,
    ) -> Result<SecondaryResult, StrategyError> {
        if !env.has_operator_key {
            return Err(ToolError::message(
                "autonomous mode needs an operator: set [operator] account_id and key_env in the manifest and export the key",
            )
            .into());
        }
        let BuiltTransaction { mut tx, .. } = built;
        let client = env.client;
        block_on(env.runtime, async move {
            let response = tx.execute(client).await.map_err(sdk_error)?;
            let transaction_id = kit_transaction_id(&response.transaction_id);
            let receipt = response.get_receipt(client).await.map_err(sdk_error)?;
            Ok(SecondaryResult::Executed(
                RawTransactionResponse::from_receipt(&receipt, transaction_id),
            ))
        })
    }
}

/// Map SDK errors as the kit's `BaseTransactionTool.handleError` does: status errors carry
/// `errorCode` and `transactionId`, with the JS SDK's message wording.
fn sdk_error(e: hedera::Error) -> StrategyError {
    match e {
        hedera::Error::ReceiptStatus {
            status,
            transaction_id,
        } => {
            let id = transaction_id
                .map(|t| kit_transaction_id(&t))
                .unwrap_or_default();
            StrategyError::Transaction {
                status: status.as_str_name().to_owned(),
                message: format!(
                    "receipt for transaction {id} contained error status {}",
                    status.as_str_name()
                ),
                transaction_id: id,
            }
        }
        hedera::Error::TransactionPreCheckStatus {
            status,
            transaction_id,
            ..
        } => {
            let id = kit_transaction_id(&transaction_id);
            StrategyError::Transaction {
                status: status.as_str_name().to_owned(),
                message: format!(
                    "transaction {id} failed precheck with status {}",
                    status.as_str_name()
                ),
                transaction_id: id,
            }
        }
        other => StrategyError::Tool(ToolError::message(other.to_string())),
    }
}
