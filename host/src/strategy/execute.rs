//! AUTONOMOUS: sign with the operator, submit, wait for the receipt. Transaction ids are
//! unique per payer in this process, so a `DUPLICATE_TRANSACTION` after the SDK's own retry
//! means the first attempt went through: its receipt is the answer, not an error. When no
//! receipt comes, the mirror is asked for the transaction (a few tries, for its lag); only if
//! it does not know it either is the outcome unknown (`StrategyError::Unknown`, with the id).
//! A tool that reports what its contract call returned (the EVM factories' new address) gets
//! the record read after the receipt; a record that cannot be read never fails the call.

use super::{SecondaryResult, StrategyEnv, StrategyError, TransactionStrategy};
use crate::blocking::block_on;
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
        let BuiltTransaction {
            mut tx,
            reads_call_result,
            type_name,
            ..
        } = built;
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
        let sends = match type_name {
            "TopicMessageSubmitTransaction" => cut_as_the_kit(&tx, client)?,
            _ => vec![*tx],
        };
        let mirror = env.mirror;
        block_on(env.runtime, async move {
            let outcome = submit(sends, client, sent_id, id, reads_call_result).await;
            match (outcome, mirror, sent_id) {
                // No receipt: ask the mirror before saying "unknown".
                (
                    Err(StrategyError::Unknown {
                        transaction_id,
                        message,
                    }),
                    Some(mirror),
                    Some(sent),
                ) => match resolve(mirror, &sent).await {
                    Some(resolved) => resolved,
                    None => Err(StrategyError::Unknown {
                        transaction_id,
                        message,
                    }),
                },
                (outcome, _, _) => outcome,
            }
        })
    }
}

/// A topic message as the JS SDK sends it: 1,024-byte chunks (`strategy::wire`, the layout
/// return-bytes hands out), each signed by the operator, to be sent in order. The Rust SDK's
/// own chunking counts one chunk too many for an exact multiple of its chunk size (1,024
/// bytes went out as 1,023 + 1).
fn cut_as_the_kit(
    tx: &hedera::AnyTransaction,
    client: &hedera::Client,
) -> Result<Vec<hedera::AnyTransaction>, StrategyError> {
    super::wire::message_chunks(tx)
        .map_err(ToolError::message)?
        .iter()
        .map(|list| {
            let mut chunk = hedera::AnyTransaction::from_bytes(list)
                .map_err(|e| ToolError::message(format!("cannot read a chunk back: {e}")))?;
            chunk
                .sign_with_operator(client)
                .map_err(|e| ToolError::message(format!("cannot sign a chunk: {e}")))?;
            Ok(chunk)
        })
        .collect()
}

/// Submit (each chunk of a topic message in order) and wait for the receipt of the first
/// (and, when asked, read the record's contract call result).
async fn submit(
    mut sends: Vec<hedera::AnyTransaction>,
    client: &hedera::Client,
    sent_id: Option<hedera::TransactionId>,
    id: Option<String>,
    reads_call_result: bool,
) -> Result<SecondaryResult, StrategyError> {
    let mut first = None;
    for tx in &mut sends {
        let this_id = tx.get_transaction_id().or(sent_id);
        let answered = match tx.execute(client).await {
            Ok(response) => response.transaction_id,
            // Our own earlier attempt got through (its answer was lost, the SDK retried):
            // ids are unique per payer in this process, so the duplicate is this very
            // transaction — its receipt is the answer.
            Err(hedera::Error::TransactionPreCheckStatus {
                status: hedera::Status::DuplicateTransaction,
                transaction_id,
                ..
            }) if Some(*transaction_id) == this_id => *transaction_id,
            Err(e) => return Err(sdk_error(e, id.clone())),
        };
        first.get_or_insert(answered);
    }
    let receipt_of =
        first.ok_or_else(|| StrategyError::from(ToolError::message("nothing to send")))?;
    let transaction_id = kit_transaction_id(&receipt_of);
    let receipt = hedera::TransactionReceiptQuery::new()
        .transaction_id(receipt_of)
        .validate_status(true)
        .execute(client)
        .await
        .map_err(|e| sdk_error(e, Some(transaction_id.clone())))?;
    let mut raw = RawTransactionResponse::from_receipt(&receipt, transaction_id);
    if reads_call_result {
        raw.contract_output = call_result(client, receipt_of).await;
    }
    Ok(SecondaryResult::Executed(raw))
}

/// The contract call result in the record of an applied transaction. The transaction has
/// applied whatever this finds: a record that cannot be read leaves the result unknown
/// (`None`, logged), never fails the call.
async fn call_result(client: &hedera::Client, id: hedera::TransactionId) -> Option<Vec<u8>> {
    match hedera::TransactionRecordQuery::new()
        .transaction_id(id)
        .execute(client)
        .await
    {
        Ok(record) => record.contract_function_result.map(|result| result.bytes),
        Err(e) => {
            tracing::warn!("the record of {id} could not be read: {e}");
            None
        }
    }
}

/// What the mirror knows of a transaction whose receipt never came: its result (a few tries,
/// for the mirror's lag), or `None` when it does not know it either.
async fn resolve(
    mirror: &crate::mirror::Mirror,
    id: &hedera::TransactionId,
) -> Option<Result<SecondaryResult, StrategyError>> {
    for attempt in 0..3 {
        if attempt > 0 {
            tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        }
        let Ok(found) = mirror.transaction_async(id).await else {
            continue;
        };
        let Some(record) = found["transactions"].as_array().and_then(|t| t.first()) else {
            continue;
        };
        let transaction_id = kit_transaction_id(id);
        let result = record["result"].as_str().unwrap_or("UNKNOWN").to_owned();
        if result != "SUCCESS" {
            return Some(Err(StrategyError::Transaction {
                message: format!(
                    "receipt for transaction {transaction_id} contained error status {result}"
                ),
                status: result,
                transaction_id,
            }));
        }
        let entity = record["entity_id"].as_str().map(str::to_owned);
        let mut raw = RawTransactionResponse {
            status: result,
            account_id: None,
            token_id: None,
            serials: Vec::new(),
            transaction_id,
            topic_id: None,
            schedule_id: None,
            contract_output: None,
        };
        match record["name"].as_str() {
            Some("CRYPTOCREATEACCOUNT") => raw.account_id = entity,
            Some("TOKENCREATION") => raw.token_id = entity,
            Some("CONSENSUSCREATETOPIC") => raw.topic_id = entity,
            Some("SCHEDULECREATE") => raw.schedule_id = entity,
            _ => {}
        }
        return Some(Ok(SecondaryResult::Executed(raw)));
    }
    None
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
