//! The official Hedera JS SDK against the emulator (the brief: "the official JS SDK pointed
//! at it must work too"). Needs `npm ci` in `emulator/tests/js-sdk` (scripts/test.sh does it).

use hak_emu::{Emulator, EmulatorConfig};
use std::path::Path;

/// Run `script` (in `tests/js-sdk`) with node against a fresh emulator (the connection JSON,
/// then `extra`, as arguments): its output lines.
async fn run_script(script: &str, extra: &[String]) -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/js-sdk");
    assert!(
        dir.join("node_modules/@hiero-ledger/sdk").exists(),
        "run `npm ci` in {} first (scripts/test.sh does)",
        dir.display()
    );
    let emu = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let info = emu.connection_json().to_string();
    let output = tokio::process::Command::new("node")
        .arg(script)
        .arg(&info)
        .args(extra)
        .current_dir(&dir)
        .output()
        .await
        .expect("run node");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    emu.shutdown();
    stdout.lines().map(str::to_owned).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs node and the JS SDK (npm ci in emulator/tests/js-sdk); scripts/test.sh runs it"]
async fn the_js_sdk_transfers_creates_and_submits_against_the_emulator() {
    let lines = run_script("check.mjs", &[]).await;
    assert_eq!(
        lines,
        [
            "transfer SUCCESS",
            "balance 100200000000",
            "account 0.0.1006",
            "message 1",
            "token SUCCESS",
            "relationship 5",
            "token balance 5",
            "exchange rate 30000 360000",
            "hollow SUCCESS",
            "hollow key none",
            "completing SUCCESS",
            "completed true",
            "subscription hi chunked-whole",
            "file hello, world",
            "file size 12",
            "fee schedule true",
            "exchange rates 30000 360000",
            "address book 1 0.0.3",
            "high volume 2 2000 0",
            "high volume transfer 100000 0",
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs node and the JS SDK (npm ci in emulator/tests/js-sdk); scripts/test.sh runs it"]
async fn topic_fee_limits_set_through_the_js_sdk_bound_what_a_message_pays() {
    let lines = run_script("topic-fees.mjs", &[]).await;
    assert_eq!(
        lines,
        [
            "low limit MAX_CUSTOM_FEE_LIMIT_EXCEEDED",
            "other denomination NO_VALID_MAX_CUSTOM_FEE",
            "duplicate denomination DUPLICATE_DENOMINATION_IN_MAX_CUSTOM_FEE_LIST",
            "collector unpaid 0",
            "enough SUCCESS",
            "no limit SUCCESS",
            "collector paid 200000000",
            "limit on a transfer MAX_CUSTOM_FEES_IS_NOT_SUPPORTED",
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs node and the JS SDK (npm ci in emulator/tests/js-sdk); scripts/test.sh runs it"]
async fn registered_and_consensus_nodes_through_the_js_sdk() {
    let treasury = hak_emu::genesis::treasury_key().to_string_der();
    let lines = run_script("nodes.mjs", &[treasury]).await;
    assert_eq!(
        lines,
        [
            "no admin key KEY_REQUIRED",
            "no endpoints INVALID_REGISTERED_ENDPOINT",
            "unsigned INVALID_SIGNATURE",
            "registered SUCCESS 1",
            "listed 1 1 block node true",
            "endpoints BLOCK_NODE:127.0.0.1:443 GENERAL_SERVICE:status.example.com:8443",
            "apis SUBSCRIBE_STREAM,STATUS status page",
            "update SUCCESS",
            "new admin unsigned INVALID_SIGNATURE",
            "missing INVALID_REGISTERED_NODE_ID",
            "node by operator UNAUTHORIZED",
            "node SUCCESS 1",
            "delete associated REGISTERED_NODE_STILL_ASSOCIATED",
            "cleared SUCCESS 1",
            "delete registered SUCCESS",
            "delete again INVALID_REGISTERED_NODE_ID",
            "proxy SUCCESS",
            "unproxied SUCCESS 0",
            "node 0 by stranger INVALID_SIGNATURE",
            "node delete SUCCESS",
            "deleted node NODE_DELETED",
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs node and the JS SDK (npm ci in emulator/tests/js-sdk); scripts/test.sh runs it"]
async fn nft_allowances_delegate_and_allowances_are_checked_before_senders() {
    let lines = run_script("allowances.mjs", &[]).await;
    assert_eq!(
        lines,
        [
            "delegate without approval DELEGATING_SPENDER_DOES_NOT_HAVE_APPROVE_FOR_ALL",
            "approve all SUCCESS",
            "delegate SUCCESS",
            "spender moves it SUCCESS",
            "own debit on approval SPENDER_DOES_NOT_HAVE_ALLOWANCE",
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs node and the JS SDK (npm ci in emulator/tests/js-sdk); scripts/test.sh runs it"]
async fn atomic_batches_run_all_their_inner_transactions_or_none() {
    let lines = run_script("batch.mjs", &[]).await;
    assert_eq!(
        lines,
        [
            "batch SUCCESS",
            "inner SUCCESS SUCCESS true true",
            "empty BATCH_LIST_EMPTY",
            "unsigned batch key INVALID_SIGNATURE",
            "failing batch INNER_TRANSACTION_FAILED",
            "failing inner REVERTED_SUCCESS INSUFFICIENT_ACCOUNT_BALANCE",
        ]
    );
}
