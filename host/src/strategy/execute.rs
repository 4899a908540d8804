//! AUTONOMOUS: sign with the operator, submit, wait for the receipt. Transaction ids are
//! unique per payer in this process, so a `DUPLICATE_TRANSACTION` after the SDK's own retry
//! means the first attempt went through: its receipt is the answer, not an error. When no
//! receipt comes, the outcome is unknown (`StrategyError::Unknown`, with the id).

use super::{SecondaryResult, StrategyEnv, StrategyError, TransactionStrategy};
use crate::network::block_on;
use crate::tools::transaction::{kit_transaction_id, unique_transaction_id};
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
        if tx.get_transaction_id().is_none() {
            if let Some(operator) = client.get_operator_account_id() {
                tx.transaction_id(unique_transaction_id(operator));
            }
        }
        tx.freeze_with(client)
            .map_err(|e| ToolError::message(format!("cannot freeze transaction: {e}")))?;
        // Known before anything is sent, so an unknown outcome can still name it.
        let sent_id = tx.get_transaction_id();
        let id = sent_id.as_ref().map(kit_transaction_id);
        block_on(env.runtime, async move {
            let (receipt_of, transaction_id) = match tx.execute(client).await {
                Ok(response) => (
                    response.transaction_id,
                    kit_transaction_id(&response.transaction_id),
                ),
                // Our own earlier attempt got through (its answer was lost, the SDK retried):
                // ids are unique per payer in this process, so the duplicate is this very
                // transaction — its receipt is the answer.
                Err(hedera::Error::TransactionPreCheckStatus {
                    status: hedera::Status::DuplicateTransaction,
                    transaction_id,
                    ..
                }) if Some(*transaction_id) == sent_id => {
                    (*transaction_id, kit_transaction_id(&transaction_id))
                }
                Err(e) => return Err(sdk_error(e, id.clone())),
            };
            let receipt = hedera::TransactionReceiptQuery::new()
                .transaction_id(receipt_of)
                .validate_status(true)
                .execute(client)
                .await
                .map_err(|e| sdk_error(e, Some(transaction_id.clone())))?;
            Ok(SecondaryResult::Executed(
                RawTransactionResponse::from_receipt(&receipt, transaction_id),
            ))
        })
    }
}

/// Map SDK errors as the kit's `BaseTransactionTool.handleError` does: status errors carry
/// `errorCode` and `transactionId`, with the JS SDK's message wording. A status (precheck or
/// receipt) means the network decided and the transaction did not apply; anything else once
/// the transaction may have been sent (time-outs, broken connections, receipts that never
/// came) leaves its outcome unknown.
fn sdk_error(e: hedera::Error, sent: Option<String>) -> StrategyError {
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
        other => StrategyError::Unknown {
            transaction_id: sent,
            message: other.to_string(),
        },
    }
}
