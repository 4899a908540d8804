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
/// Runtime: STATICCALL the address in the call data's first word with the rest of it; return
/// what it returned, or revert with it.
const FORWARDS: &str = concat!(
    "6028600c60003960286000f3",
    "6020360380602060003760006000826000600035",
    "5afa",
    "3d600060003e",
    "6023573d6000fd",
    "5b3d6000f3"
);
/// Runtime: return EXTCODESIZE of the address in the call data's first word.
const CODE_SIZE: &str = concat!("600c600c600039600c6000f3", "6000353b60005260206000f3");
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
        matches!(
            short,
            hedera::Error::ReceiptStatus {
                status: Status::InsufficientGas,
                ..
            }
        ),
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

/// Constructor: send the value it was created with to `address`, keep no code.
fn forwards_value_to(address: &str) -> String {
    format!("600060006000600034 73{address} 5af100").replace(' ', "")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn value_sent_to_an_unknown_evm_address_makes_a_hollow_account_and_is_never_lost() {
    let (emu, client) = start().await;
    let alias = "1111111111111111111111111111111111111111";
    for _ in 0..2 {
        deploy(&client, &forwards_value_to(alias), Hbar::new(2)).await;
    }
    let (status, hollow) = crate::common::mirror(&emu, &format!("/accounts/0x{alias}")).await;
    assert_eq!(status, 200, "{hollow}");
    assert_eq!(hollow["evm_address"], format!("0x{alias}"));
    assert_eq!(
        hollow["balance"]["balance"], 400_000_000,
        "one hollow account, both sends"
    );

    // A long-zero address no entity holds: the run fails and the value stays with the payer.
    let operator = emu.operator().0;
    let balance = || async {
        AccountBalanceQuery::new()
            .account_id(operator)
            .execute(&client)
            .await
            .unwrap()
            .hbars
            .to_tinybars()
    };
    let before = balance().await;
    let failed = ContractCreateTransaction::new()
        .bytecode(
            hex::decode(forwards_value_to(
                "00000000000000000000000000000000000fffff",
            ))
            .unwrap(),
        )
        .gas(200_000)
        .initial_balance(Hbar::new(2))
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
                status: Status::InvalidSolidityAddress,
                ..
            }
        ),
        "{failed:?}"
    );
    assert_eq!(before - balance().await, 50_000_000, "only the fee");
    emu.shutdown();
}

mod abi {
    alloy_sol_types::sol! {
        interface Erc20Factory {
            function deployToken(string name_, string symbol_, uint8 decimals_, uint256 initialSupply_) external returns (address);
        }
        interface Erc721Factory {
            function deployToken(string name_, string symbol_, string baseURI_) external returns (address);
        }
        interface Erc20 {
            function balanceOf(address who) external view returns (uint256);
            function decimals() external view returns (uint8);
            function transfer(address to, uint256 amount) external returns (bool);
        }
        interface Hts {
            function allowance(address token, address owner, address spender) external returns (int64 responseCode, uint256 allowance);
        }
        interface Facade {
            function name() external view returns (string);
            function decimals() external view returns (uint8);
            function totalSupply() external view returns (uint256);
            function balanceOf(address account) external view returns (uint256);
            function allowance(address owner, address spender) external view returns (uint256);
            function ownerOf(uint256 serial) external view returns (address);
            function transfer(address to, uint256 amount) external returns (bool);
        }
        interface Erc721 {
            function safeMint(address to) external returns (bool);
            function ownerOf(uint256 id) external view returns (address);
            function transferFrom(address from, address to, uint256 id) external;
            function tokenURI(uint256 id) external view returns (string);
        }
    }
}

use alloy_sol_types::SolCall;
use revm::primitives::{Address, U256};

async fn execute(client: &hedera::Client, contract: ContractId, data: Vec<u8>) -> Vec<u8> {
    let record = ContractExecuteTransaction::new()
        .contract_id(contract)
        .gas(3_000_000)
        .function_parameters(data)
        .execute(client)
        .await
        .unwrap()
        .get_record(client)
        .await
        .unwrap();
    assert_eq!(record.receipt.status, Status::Success);
    record.contract_function_result.unwrap().bytes.to_vec()
}

async fn query(client: &hedera::Client, contract: ContractId, data: Vec<u8>) -> Vec<u8> {
    ContractCallQuery::new()
        .contract_id(contract)
        .gas(1_000_000)
        .function_parameters(data)
        .execute(client)
        .await
        .unwrap()
        .bytes
        .to_vec()
}

/// The record of a call of `contract` with `data`, whatever its status.
async fn record_of(
    client: &hedera::Client,
    contract: ContractId,
    data: Vec<u8>,
) -> hedera::TransactionRecord {
    ContractExecuteTransaction::new()
        .contract_id(contract)
        .gas(100_000)
        .function_parameters(data)
        .execute(client)
        .await
        .unwrap()
        .get_record_query()
        .validate_status(false)
        .execute(client)
        .await
        .unwrap()
}

fn by_address(address: Address) -> ContractId {
    ContractId::from_evm_address(0, 0, &format!("{address:x}")).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_kits_factories_deploy_erc20_and_erc721_tokens_that_work() {
    let (emu, client) = start().await;
    let operator = hak_emu::evm::long_zero(1001);
    let friend = hak_emu::evm::long_zero(1002);

    // ERC-20: 1,000 display units at 2 decimals go to the caller; a transfer moves 2.50.
    let out = execute(
        &client,
        ContractId::new(0, 0, 1012),
        abi::Erc20Factory::deployTokenCall {
            name_: "Hak".into(),
            symbol_: "HAK".into(),
            decimals_: 2,
            initialSupply_: U256::from(1000),
        }
        .abi_encode(),
    )
    .await;
    let token = by_address(abi::Erc20Factory::deployTokenCall::abi_decode_returns(&out).unwrap());
    let balance = |who: Address| abi::Erc20::balanceOfCall { who }.abi_encode();
    let decode = |b: Vec<u8>| abi::Erc20::balanceOfCall::abi_decode_returns(&b).unwrap();
    assert_eq!(
        decode(query(&client, token, balance(operator)).await),
        U256::from(100_000)
    );
    let decimals = query(&client, token, abi::Erc20::decimalsCall {}.abi_encode()).await;
    assert_eq!(
        abi::Erc20::decimalsCall::abi_decode_returns(&decimals).unwrap(),
        2
    );
    execute(
        &client,
        token,
        abi::Erc20::transferCall {
            to: friend,
            amount: U256::from(250),
        }
        .abi_encode(),
    )
    .await;
    assert_eq!(
        decode(query(&client, token, balance(operator)).await),
        U256::from(99_750)
    );
    assert_eq!(
        decode(query(&client, token, balance(friend)).await),
        U256::from(250)
    );

    // ERC-721: the creator mints serial 0 to itself and transfers it.
    let out = execute(
        &client,
        ContractId::new(0, 0, 1013),
        abi::Erc721Factory::deployTokenCall {
            name_: "Art".into(),
            symbol_: "ART".into(),
            baseURI_: "ipfs://art/".into(),
        }
        .abi_encode(),
    )
    .await;
    let nft = by_address(abi::Erc721Factory::deployTokenCall::abi_decode_returns(&out).unwrap());
    execute(
        &client,
        nft,
        abi::Erc721::safeMintCall { to: operator }.abi_encode(),
    )
    .await;
    let owner = |id: u64| abi::Erc721::ownerOfCall { id: U256::from(id) }.abi_encode();
    let owner_of = |b: Vec<u8>| abi::Erc721::ownerOfCall::abi_decode_returns(&b).unwrap();
    assert_eq!(owner_of(query(&client, nft, owner(0)).await), operator);
    execute(
        &client,
        nft,
        abi::Erc721::transferFromCall {
            from: operator,
            to: friend,
            id: U256::ZERO,
        }
        .abi_encode(),
    )
    .await;
    assert_eq!(owner_of(query(&client, nft, owner(0)).await), friend);
    let uri = query(
        &client,
        nft,
        abi::Erc721::tokenURICall { id: U256::ZERO }.abi_encode(),
    )
    .await;
    assert_eq!(
        abi::Erc721::tokenURICall::abi_decode_returns(&uri).unwrap(),
        "ipfs://art/0"
    );

    // The mirror follows: the token contract by its EVM address, its results, and one result
    // by its hash.
    let token_address = format!("0x{}", token.evm_address.map(hex::encode).unwrap());
    let (status, info) = crate::common::mirror(&emu, &format!("/contracts/{token_address}")).await;
    assert_eq!(status, 200, "{info}");
    assert_eq!(info["evm_address"], token_address.as_str());
    assert!(info["runtime_bytecode"].as_str().unwrap().len() > 1000);
    let id = info["contract_id"].as_str().unwrap().to_owned();
    let (_, results) = crate::common::mirror(&emu, &format!("/contracts/{id}/results")).await;
    let results = results["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "the transfer: {results:?}");
    assert_eq!(results[0]["result"], "SUCCESS");
    assert_eq!(results[0]["from"], format!("{operator:#x}"));
    let hash = results[0]["hash"].as_str().unwrap().to_owned();
    let (status, one) = crate::common::mirror(&emu, &format!("/contracts/results/{hash}")).await;
    assert_eq!(status, 200, "{one}");
    let transfer_topic = format!(
        "0x{}",
        hex::encode(revm::primitives::keccak256(
            "Transfer(address,address,uint256)"
        ))
    );
    assert_eq!(
        one["logs"][0]["topics"][0],
        transfer_topic.as_str(),
        "{one}"
    );
    assert_eq!(one["logs"][0]["contract_id"], id.as_str());
    let (_, factory) = crate::common::mirror(&emu, "/contracts/0.0.1012/results").await;
    let deployed = &factory["results"][0];
    assert_eq!(
        deployed["created_contract_ids"][0],
        id.as_str(),
        "{deployed}"
    );
    emu.shutdown();
}

#[test]
#[ignore = "needs node and npm ci in emulator/contracts; scripts/test.sh runs it"]
fn the_shipped_factory_initcode_is_what_their_source_compiles_to() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("contracts");
    assert!(
        dir.join("node_modules/solc").exists(),
        "solc-js is not installed: run npm ci in {}",
        dir.display()
    );
    let out = std::process::Command::new("node")
        .args(["compile.mjs", "--check"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A contract reads back what the ledger holds through Hedera's system contracts, as the JS
/// SDK's `TokenAllowancesIntegrationTest` does with a `ContractId` spender (`IERC20(token)
/// .allowance(owner, contract)`, compiled to check that the token's address has code): the
/// allowance through HTS (0x167, `(SUCCESS, 100)`) and through the token's own address
/// (HIP-218: 100), with its name, decimals, supply and a balance, in a call's record and a
/// local call alike; an NFT's owner by serial; another spender has 0; the token's address
/// holds Hedera's token proxy code. An NFT or unknown token, an unknown owner and a missing serial revert with
/// the status's name; a transfer through the token's address is not answered and fails the run
/// as NOT_SUPPORTED, naming the token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_contract_reads_allowances_and_balances_through_hederas_system_contracts() {
    use abi::{Facade, Hts};
    use hedera::{
        AccountAllowanceApproveTransaction, TokenCreateTransaction, TokenMintTransaction, TokenType,
    };
    let (emu, client) = start().await;
    let operator = emu.operator().0;
    let create = |tx: &mut TokenCreateTransaction| {
        let mut tx = tx.clone();
        let client = client.clone();
        async move {
            tx.execute(&client)
                .await
                .unwrap()
                .get_receipt(&client)
                .await
                .unwrap()
                .token_id
                .unwrap()
        }
    };
    let token = create(
        TokenCreateTransaction::new()
            .name("Allowed")
            .symbol("ALW")
            .decimals(2)
            .initial_supply(1_000)
            .treasury_account_id(operator),
    )
    .await;
    let nft = create(
        TokenCreateTransaction::new()
            .name("Art")
            .symbol("ART")
            .token_type(TokenType::NonFungibleUnique)
            .treasury_account_id(operator)
            .supply_key(client.get_operator_public_key().unwrap()),
    )
    .await;
    TokenMintTransaction::new()
        .token_id(nft)
        .metadata([b"ipfs://one".to_vec()])
        .execute(&client)
        .await
        .unwrap()
        .get_receipt(&client)
        .await
        .unwrap();
    let reader = deploy(&client, FORWARDS, Hbar::ZERO).await;
    AccountAllowanceApproveTransaction::new()
        .approve_token_allowance(
            token,
            operator,
            hedera::AccountId::new(0, 0, reader.num),
            100,
        )
        .execute(&client)
        .await
        .unwrap()
        .get_receipt(&client)
        .await
        .unwrap();
    let at = |num: u64| {
        let mut bytes = [0u8; 20];
        bytes[12..].copy_from_slice(&num.to_be_bytes());
        Address::from(bytes)
    };
    let to = |num: u64, payload: Vec<u8>| [word(num), payload].concat();
    let hts = |token: u64, owner: u64, spender: u64| {
        to(
            0x167,
            Hts::allowanceCall {
                token: at(token),
                owner: at(owner),
                spender: at(spender),
            }
            .abi_encode(),
        )
    };
    let erc20_allowance = |owner: u64, spender: u64| {
        to(
            token.num,
            Facade::allowanceCall {
                owner: at(owner),
                spender: at(spender),
            }
            .abi_encode(),
        )
    };
    let read = |out: &[u8]| {
        let answer = Hts::allowanceCall::abi_decode_returns(out).unwrap();
        (answer.responseCode, answer.allowance)
    };
    let granted = hts(token.num, operator.num, reader.num);
    assert_eq!(
        read(&execute(&client, reader, granted.clone()).await),
        (22, U256::from(100))
    );
    assert_eq!(
        read(&query(&client, reader, granted).await),
        (22, U256::from(100))
    );
    assert_eq!(
        read(&query(&client, reader, hts(token.num, operator.num, 1002)).await),
        (22, U256::ZERO),
        "another spender has none"
    );
    let erc20 = erc20_allowance(operator.num, reader.num);
    assert_eq!(
        execute(&client, reader, erc20.clone()).await,
        word(100),
        "IERC20(token).allowance(owner, contract)"
    );
    assert_eq!(
        query(&client, reader, erc20_allowance(operator.num, 1002)).await,
        word(0)
    );
    let name = query(
        &client,
        reader,
        to(token.num, Facade::nameCall {}.abi_encode()),
    )
    .await;
    assert_eq!(
        Facade::nameCall::abi_decode_returns(&name).unwrap(),
        "Allowed"
    );
    for (payload, answer) in [
        (Facade::decimalsCall {}.abi_encode(), 2),
        (Facade::totalSupplyCall {}.abi_encode(), 1_000),
        (
            Facade::balanceOfCall {
                account: at(operator.num),
            }
            .abi_encode(),
            1_000,
        ),
        (Facade::balanceOfCall { account: at(1002) }.abi_encode(), 0),
    ] {
        assert_eq!(
            query(&client, reader, to(token.num, payload)).await,
            word(answer)
        );
    }
    let owner = query(
        &client,
        reader,
        to(
            nft.num,
            Facade::ownerOfCall {
                serial: U256::from(1),
            }
            .abi_encode(),
        ),
    )
    .await;
    assert_eq!(word(operator.num), owner, "serial 1 is the treasury's");
    // A token's address holds Hedera's token proxy code (a contract compiled to check that
    // code exists before calling finds it); an account's holds none.
    let sizes = deploy(&client, CODE_SIZE, Hbar::ZERO).await;
    assert_eq!(query(&client, sizes, word(token.num)).await, word(147));
    assert_eq!(query(&client, sizes, word(operator.num)).await, word(0));

    // Not a fungible token, not an owner, no such serial: reverted with the status's name.
    for (data, status) in [
        (hts(nft.num, operator.num, reader.num), "INVALID_TOKEN_ID"),
        (hts(999_999, operator.num, reader.num), "INVALID_TOKEN_ID"),
        (
            hts(token.num, 999_999, reader.num),
            "INVALID_ALLOWANCE_OWNER_ID",
        ),
        (
            erc20_allowance(999_999, reader.num),
            "INVALID_ALLOWANCE_OWNER_ID",
        ),
        (
            to(
                nft.num,
                Facade::ownerOfCall {
                    serial: U256::from(7),
                }
                .abi_encode(),
            ),
            "INVALID_TOKEN_NFT_SERIAL_NUMBER",
        ),
    ] {
        let refused = ContractCallQuery::new()
            .contract_id(reader)
            .gas(100_000)
            .function_parameters(data.clone())
            .execute(&client)
            .await
            .unwrap_err();
        assert!(
            format!("{refused:?}").contains("ContractRevertExecuted"),
            "{status}: {refused:?}"
        );
        let record = record_of(&client, reader, data).await;
        assert_eq!(record.receipt.status, Status::ContractRevertExecuted);
        let result = record.contract_function_result.unwrap();
        assert_eq!(
            result.error_message,
            Some(format!("reverted: 0x{}", hex::encode(status))),
            "{status}"
        );
    }

    // Moving tokens through the token's address is not emulated: the run fails, naming it.
    let transfer = to(
        token.num,
        Facade::transferCall {
            to: at(1002),
            amount: U256::from(1),
        }
        .abi_encode(),
    );
    let record = record_of(&client, reader, transfer).await;
    assert_eq!(record.receipt.status, Status::NotSupported);
    let error = record.contract_function_result.unwrap().error_message;
    assert_eq!(
        error.as_deref(),
        Some(
            format!(
                "the token 0.0.{}'s address is not available on the local network",
                token.num
            )
            .as_str()
        )
    );
    emu.shutdown();
}
