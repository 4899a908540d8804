//! The custom modes through the `TransactionStrategy` seam (the kit's
//! `context.transactionStrategy`): a human-approval strategy and a delegated-payer bytes
//! strategy, driven by the real lifecycle and plugins.

use hak_host::manifest::Manifest;
use hak_host::strategy::{
    ReturnBytesResult, SecondaryResult, StrategyEnv, StrategyError, TransactionStrategy,
};
use hak_host::tools::{BuiltTransaction, ToolError};
use hak_host::{AgentContext, AgentMode, HostBuilder};
use hak_tests::*;
use hedera::{AccountId, TransactionId};
use std::sync::Arc;

/// Says no, like the kit's `CLITransactionApprovalStrategy` when the human answers N.
struct Rejecting;

impl TransactionStrategy for Rejecting {
    fn handle(
        &self,
        _tx: BuiltTransaction,
        _env: &StrategyEnv<'_>,
    ) -> Result<SecondaryResult, StrategyError> {
        Err(
            ToolError::message("Transaction rejected by user (Human-in-the-Loop check failed)")
                .into(),
        )
    }
}

/// A fee payer (0.0.5000) generates the transaction id and freezes the bytes.
struct DelegatedPayer;

impl TransactionStrategy for DelegatedPayer {
    fn handle(
        &self,
        built: BuiltTransaction,
        env: &StrategyEnv<'_>,
    ) -> Result<SecondaryResult, StrategyError> {
        let payer = AccountId::new(0, 0, 5000);
        let mut tx = built.tx;
        let id = TransactionId::generate(payer);
        tx.transaction_id(id)
            .node_account_ids(env.node_account_ids.iter().copied());
        tx.freeze().map_err(|e| ToolError::message(e.to_string()))?;
        let bytes = tx
            .to_bytes()
            .map_err(|e| ToolError::message(e.to_string()))?;
        Ok(SecondaryResult::Bytes(ReturnBytesResult {
            bytes: format!("0x{}", hex::encode(bytes)),
            status: "SUCCESS".into(),
            transaction_id: hak_host::tools::transaction::kit_transaction_id(&id),
            payer_account_id: payer.to_string(),
            type_name: built.type_name.into(),
            expires_at: String::new(),
            memo: tx.get_transaction_memo().into(),
        }))
    }
}

fn host_with(strategy: Arc<dyn TransactionStrategy>) -> hak_host::Host {
    let manifest = format!(
        "{RETURN_BYTES_HEADER}{}",
        plugin_entry(
            "max",
            "rust/max-recipients",
            "config = { maxRecipients = 1 }"
        )
    );
    HostBuilder::new(Manifest::parse(&manifest, "test", root()).unwrap())
        .cache_dir(Some(cache_dir()))
        .transaction_strategy(strategy)
        .build()
        .unwrap()
}

fn custom(mode: AgentMode) -> AgentContext {
    AgentContext {
        account_id: Some(AccountId::new(0, 0, 1001)),
        mode,
    }
}

#[test]
fn a_rejecting_approval_strategy_fails_the_call_with_its_reason() {
    let host = host_with(Arc::new(Rejecting));
    let out = host
        .session(custom(AgentMode::CustomExecuteTx))
        .call("transfer_hbar_tool", &transfer(1))
        .unwrap();
    assert_eq!(
        out["raw"]["error"],
        "Failed to execute Transfer HBAR: Transaction rejected by user (Human-in-the-Loop check failed)"
    );
    // Policies still run before the strategy: a blocked call never reaches it.
    let out = host
        .session(custom(AgentMode::CustomExecuteTx))
        .call("transfer_hbar_tool", &transfer(2))
        .unwrap();
    assert_eq!(out["raw"]["errorCode"], "POLICY_BLOCKED");
}

#[test]
fn a_delegated_payer_strategy_returns_its_own_bytes() {
    let host = host_with(Arc::new(DelegatedPayer));
    let out = host
        .session(custom(AgentMode::CustomReturnBytes))
        .call("transfer_hbar_tool", &transfer(1))
        .unwrap();
    assert_eq!(out["raw"]["payerAccountId"], "0.0.5000", "{out}");
    let tx = decode_bytes(&out);
    assert_eq!(
        tx.get_transaction_id().unwrap().account_id,
        AccountId::new(0, 0, 5000)
    );
}

#[test]
fn custom_modes_without_a_strategy_are_refused_with_the_kits_message() {
    let manifest =
        RETURN_BYTES_HEADER.replace("mode = \"returnBytes\"", "mode = \"customExecuteTx\"");
    let err = try_start(&manifest)
        .err()
        .expect("must be refused")
        .to_string();
    assert_eq!(err, "transactionStrategy must be provided in Context when AgentMode is CUSTOM_EXECUTE_TX or CUSTOM_RETURN_BYTES");
    let (host, _) = start(RETURN_BYTES_HEADER);
    let out = host
        .session(custom(AgentMode::CustomReturnBytes))
        .call("transfer_hbar_tool", &transfer(1))
        .unwrap();
    assert_eq!(
        out["raw"]["error"],
        "Failed to execute Transfer HBAR: transactionStrategy must be provided in Context when AgentMode is CUSTOM_EXECUTE_TX or CUSTOM_RETURN_BYTES"
    );
}
