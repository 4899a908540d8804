//! The EVM of the local network, driven by the real Rust SDK: a constructor runs and its
//! storage and runtime code stay; a call changes state, logs, and returns its value in the
//! record; a local call answers without changing anything; a revert is recorded with its
//! status; HBAR sent to a contract moves; system contracts are refused by name.

use crate::common::start;
use hedera::{
    AccountBalanceQuery, ContractCallQuery, ContractCreateTransaction, ContractExecuteTransaction,
    ContractId, Hbar, Status,
};

/// Constructor: slot 0 = 41. Runtime (any call): slot 0 += 1, LOG0 of it, return it.
const COUNTER: &str = concat!(
    "6029600055",
    "60186011600039",
    "60186000f3",
    "600054600101806000558060005260206000a060206000f3"
);
/// Runtime: REVERT with no data.
const REVERTS: &str = "6005600c60003960056000f360006000fd";
/// Runtime: CALL 0x167 (HTS) with no data and return its success flag.
const CALLS_HTS: &str = concat!(
    "6017600c60003960176000f3",
    "60006000600060006000610167",
    "5af1",
    "600052",
    "60206000f3"
);

fn word(n: u64) -> Vec<u8> {
    let mut w = vec![0u8; 32];
    w[24..].copy_from_slice(&n.to_be_bytes());
    w
}

async fn deploy(client: &hedera::Client, initcode: &str, value: Hbar) -> ContractId {
    ContractCreateTransaction::new()
        .bytecode(hex::decode(initcode).unwrap())
        .gas(200_000)
        .initial_balance(value)
        .execute(client)
        .await
        .unwrap()
        .get_receipt(client)
        .await
        .unwrap()
        .contract_id
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_contract_is_constructed_called_and_queried_in_the_evm() {
    let (emu, client) = start().await;
    let counter = deploy(&client, COUNTER, Hbar::ZERO).await;

    // A local call runs the code on the constructor's state and applies nothing.
    for _ in 0..2 {
        let local = ContractCallQuery::new()
            .contract_id(counter)
            .gas(100_000)
            .execute(&client)
            .await
            .unwrap();
        assert_eq!(local.bytes.to_vec(), word(42), "41 + 1, not kept");
    }

    // A call applies its state, logs, and its record carries the result and gas.
    let response = ContractExecuteTransaction::new()
        .contract_id(counter)
        .gas(100_000)
        .execute(&client)
        .await
        .unwrap();
    let record = response.get_record(&client).await.unwrap();
    assert_eq!(record.receipt.status, Status::Success);
    let result = record.contract_function_result.unwrap();
    assert_eq!(result.contract_id, counter);
    assert_eq!(result.bytes.to_vec(), word(42));
    assert!(
        result.gas_used > 21_000 && result.gas_used < 100_000,
        "{}",
        result.gas_used
    );
    assert_eq!(result.logs.len(), 1);
    assert_eq!(result.logs[0].data.to_vec(), word(42));
    let local = ContractCallQuery::new()
        .contract_id(counter)
        .gas(100_000)
        .execute(&client)
        .await
        .unwrap();
    assert_eq!(
        local.bytes.to_vec(),
        word(43),
        "the call's increment was kept"
    );

    // Less gas than a create's intrinsic 53,000: refused at the receipt.
    let short = ContractCreateTransaction::new()
        .bytecode(hex::decode(COUNTER).unwrap())
        .gas(50_000)
        .execute(&client)
        .await
        .unwrap()
        .get_receipt(&client)
        .await
        .unwrap_err();
    assert!(
        matches!(short, hedera::Error::ReceiptStatus { status: Status::InsufficientGas, .. }),
        "{short:?}"
    );

    // Too little gas: the call fails, and nothing changes.
    let starved = ContractExecuteTransaction::new()
        .contract_id(counter)
        .gas(21_500)
        .execute(&client)
        .await
        .unwrap()
        .get_receipt(&client)
        .await
        .unwrap_err();
    assert!(
        matches!(
            starved,
            hedera::Error::ReceiptStatus {
                status: Status::InsufficientGas,
                ..
            }
        ),
        "{starved:?}"
    );
    emu.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reverts_value_and_system_contracts() {
    let (emu, client) = start().await;
    let reverts = deploy(&client, REVERTS, Hbar::ZERO).await;
    let failed = ContractExecuteTransaction::new()
        .contract_id(reverts)
        .gas(50_000)
        .execute(&client)
        .await
        .unwrap()
        .get_receipt(&client)
        .await
        .unwrap_err();
    assert!(
        matches!(
            failed,
            hedera::Error::ReceiptStatus {
                status: Status::ContractRevertExecuted,
                ..
            }
        ),
        "{failed:?}"
    );

    // A call that reaches a Hedera system contract fails as a whole, naming it.
    let hts = deploy(&client, CALLS_HTS, Hbar::ZERO).await;
    let refused = ContractExecuteTransaction::new()
        .contract_id(hts)
        .gas(100_000)
        .execute(&client)
        .await
        .unwrap()
        .get_receipt(&client)
        .await
        .unwrap_err();
    assert!(
        matches!(
            refused,
            hedera::Error::ReceiptStatus {
                status: Status::NotSupported,
                ..
            }
        ),
        "{refused:?}"
    );
    let local = ContractCallQuery::new()
        .contract_id(hts)
        .gas(100_000)
        .execute(&client)
        .await
        .unwrap_err();
    assert!(format!("{local:?}").contains("NotSupported"), "{local:?}");

    // HBAR sent with a create moves from the payer into the contract (hand-written code has
    // no payable check), beside the fee.
    let operator = emu.operator().0;
    let balance = || async {
        AccountBalanceQuery::new()
            .account_id(operator)
            .execute(&client)
            .await
            .unwrap()
            .hbars
    };
    let before = balance().await;
    deploy(&client, COUNTER, Hbar::new(3)).await;
    let after = balance().await;
    assert_eq!(
        before.to_tinybars() - after.to_tinybars(),
        300_000_000 + 50_000_000,
        "3 HBAR sent, 0.5 HBAR fee"
    );
    emu.shutdown();
}
