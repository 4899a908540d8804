//! The kit's five EVM tools end to end on the local network inside the host, signed by the
//! ECDSA genesis account 0.0.1003: an ERC-20 is created through the factory, transferred by
//! contract id and by EVM address; an ERC-721 is created, minted and transferred; balances
//! and owners are read back with `eth_call`s on the mirror. Policies see the movements (the
//! recipient allowlist and the spend limit apply to ERC-20/721), a hook cannot make the
//! payload pay an address other than the account the policies judged, and an ED25519
//! operator is refused with the kit's words.

use alloy_primitives::{Address, U256};
use alloy_sol_types::{sol, SolCall};
use hak_tests::*;
use serde_json::{json, Value};

sol! {
    function balanceOf(address owner) external view returns (uint256);
    function ownerOf(uint256 tokenId) external view returns (address);
}

/// The local network in process, operated (and used) by the ECDSA account 0.0.1003.
const ECDSA_LOCAL: &str = "[network]\nname = \"local\"\n\n[operator]\naccount_id = \"0.0.1003\"\nkey_env = \"HAK_TEST_UNSET_ECDSA_KEY\"\n\n[context]\naccount_id = \"0.0.1003\"\n";

fn long_zero(num: u64) -> Address {
    let mut bytes = [0u8; 20];
    bytes[12..].copy_from_slice(&num.to_be_bytes());
    Address::from(bytes)
}

/// An `eth_call` on the local network's mirror (`POST /contracts/call`).
fn eth_call(host: &hak_host::Host, to: &str, data: Vec<u8>) -> Vec<u8> {
    let url = host.local_network().unwrap().mirror_url();
    let addr = url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let body = json!({"to": to, "data": format!("0x{}", hex::encode(data))}).to_string();
    let (status, _, answer) = http(
        addr,
        "POST",
        "/api/v1/contracts/call",
        &[("content-type", "application/json")],
        &body,
    );
    assert_eq!(status, 200, "{answer}");
    hex::decode(answer["result"].as_str().unwrap().trim_start_matches("0x")).unwrap()
}

fn balance_of(host: &hak_host::Host, token: &str, owner: Address) -> U256 {
    let out = eth_call(host, token, balanceOfCall { owner }.abi_encode());
    balanceOfCall::abi_decode_returns(&out).unwrap()
}

fn owner_of(host: &hak_host::Host, token: &str, serial: u64) -> Address {
    let out = eth_call(
        host,
        token,
        ownerOfCall {
            tokenId: U256::from(serial),
        }
        .abi_encode(),
    );
    ownerOfCall::abi_decode_returns(&out).unwrap()
}

fn call(host: &hak_host::Host, tool: &str, params: Value) -> Value {
    host.default_session()
        .call(tool, &params.to_string())
        .unwrap()
}

fn succeeded(out: &Value) {
    assert_eq!(out["raw"]["status"], "SUCCESS", "{out}");
}

/// A new ERC-20 (2 decimals, 1,000 tokens to 0.0.1003): its EVM address and contract id.
fn gold(host: &hak_host::Host) -> (String, String) {
    let out = call(
        host,
        "create_erc20_tool",
        json!({"tokenName": "Gold", "tokenSymbol": "GLD", "decimals": 2, "initialSupply": 1000}),
    );
    succeeded(&out);
    let address = out["erc20Address"]
        .as_str()
        .expect("erc20Address")
        .to_owned();
    assert_eq!(
        out["humanMessage"],
        format!("ERC20 token created successfully at address {address}")
    );
    let id = host.mirror_get(&format!("/accounts/{address}")).unwrap()["account"]
        .as_str()
        .unwrap()
        .to_owned();
    (address, id)
}

#[test]
fn erc20_tokens_are_created_and_transferred_by_contract_id_and_by_address() {
    let (host, _) = start(ECDSA_LOCAL);
    let (gold, gold_id) = gold(&host);
    assert_eq!(
        balance_of(&host, &gold, long_zero(1003)),
        U256::from(100_000)
    );
    let out = call(
        &host,
        "transfer_erc20_tool",
        json!({"contractId": gold_id, "recipientAddress": "0.0.1002", "amount": 1.5}),
    );
    succeeded(&out);
    assert_eq!(out["humanMessage"], "ERC20 token transferred successfully.");
    let out = call(
        &host,
        "transfer_erc20_tool",
        json!({"contractId": gold, "recipientAddress": format!("{:#x}", long_zero(1004)), "amount": 0.01}),
    );
    succeeded(&out);
    assert_eq!(balance_of(&host, &gold, long_zero(1002)), U256::from(150));
    assert_eq!(balance_of(&host, &gold, long_zero(1004)), U256::from(1));
    assert_eq!(
        balance_of(&host, &gold, long_zero(1003)),
        U256::from(99_849)
    );
    // The mirror shows the calls' results, with the transfers' logs.
    let results = host
        .mirror_get(&format!("/contracts/{gold_id}/results"))
        .unwrap();
    assert_eq!(results["results"].as_array().unwrap().len(), 2, "{results}");
}

#[test]
fn erc721_collections_are_created_minted_and_transferred() {
    let (host, _) = start(ECDSA_LOCAL);
    let out = call(
        &host,
        "create_erc721_tool",
        json!({"tokenName": "Art", "tokenSymbol": "ART", "baseURI": "ipfs://art/"}),
    );
    succeeded(&out);
    let art = out["erc721Address"]
        .as_str()
        .expect("erc721Address")
        .to_owned();
    // Minted to the user by default: serial 0.
    let out = call(&host, "mint_erc721_tool", json!({"contractId": art}));
    succeeded(&out);
    let tx = out["raw"]["transactionId"].as_str().unwrap();
    assert_eq!(
        out["humanMessage"],
        format!("ERC721 token minted successfully.\n    Transaction ID: {tx}")
    );
    assert_eq!(owner_of(&host, &art, 0), long_zero(1003));
    let out = call(
        &host,
        "transfer_erc721_tool",
        json!({"contractId": art, "toAddress": "0.0.1004", "tokenId": 0}),
    );
    succeeded(&out);
    assert_eq!(owner_of(&host, &art, 0), long_zero(1004));
    // Not 0.0.1003's any more: the contract reverts, the tool reports the status.
    let out = call(
        &host,
        "transfer_erc721_tool",
        json!({"contractId": art, "toAddress": "0.0.1002", "tokenId": 0}),
    );
    assert_eq!(out["raw"]["errorCode"], "CONTRACT_REVERT_EXECUTED", "{out}");
    // A serial past 2^53 - 1 is named as given, not as the float it rounds to.
    let out = host
        .default_session()
        .call(
            "transfer_erc721_tool",
            &format!(
                r#"{{"contractId":"{art}","toAddress":"0.0.1002","tokenId":9007199254740993}}"#
            ),
        )
        .unwrap();
    let error = out["raw"]["error"].as_str().unwrap();
    assert!(
        error.contains("Field \"tokenId\" - 9007199254740993 is past 2^53 - 1")
            && error.contains("JavaScript reads 9007199254740992"),
        "{out}"
    );
}

#[test]
fn an_ed25519_operator_is_refused_with_the_kits_words() {
    let (host, _) = start(LOCAL);
    let out = call(
        &host,
        "create_erc20_tool",
        json!({"tokenName": "Gold", "tokenSymbol": "GLD"}),
    );
    assert_eq!(out["raw"]["status"], "ERROR", "{out}");
    assert!(
        out["raw"]["error"]
            .as_str()
            .unwrap()
            .contains("EVM tools require an ECDSA (secp256k1) operator key. The configured operator key is \"ED25519\""),
        "{out}"
    );
}

#[test]
fn erc20_and_erc721_movements_are_judged_by_the_recipient_allowlist_and_the_spend_limit() {
    let manifest = format!(
        "{ECDSA_LOCAL}{}{}",
        plugin_entry(
            "allowlist",
            "rust/recipient-allowlist",
            "[plugins.config]\naccounts = [\"0.0.1002\"]"
        ),
        plugin_entry("spend-limit", "rust/spend-limit", "[plugins.config]\nmaxHbarPerTransaction = 1000\n[plugins.config.tokens.\"0.0.1006\"]\nmaxPerTransaction = \"200\""),
    );
    let (host, _) = start(&manifest);
    let (gold, gold_id) = gold(&host);
    assert_eq!(
        gold_id, "0.0.1006",
        "the spend limit's config names the first new entity"
    );
    // To an account not on the list, however the recipient is written.
    for recipient in ["0.0.1004".to_owned(), format!("{:#x}", long_zero(1004))] {
        let out = call(
            &host,
            "transfer_erc20_tool",
            json!({"contractId": gold, "recipientAddress": recipient, "amount": 1}),
        );
        assert_eq!(
            out["raw"]["policyBlock"]["reasonCode"], "RECIPIENT_NOT_ALLOWED",
            "{out}"
        );
    }
    // To the allowed account, within the cap (200 base units = 2 tokens), then past it.
    succeeded(&call(
        &host,
        "transfer_erc20_tool",
        json!({"contractId": gold, "recipientAddress": "0.0.1002", "amount": 2}),
    ));
    let out = call(
        &host,
        "transfer_erc20_tool",
        json!({"contractId": gold, "recipientAddress": "0.0.1002", "amount": 2.01}),
    );
    assert_eq!(out["raw"]["errorCode"], "POLICY_BLOCKED", "{out}");
    assert_eq!(balance_of(&host, &gold, long_zero(1002)), U256::from(200));
    // A mint is a movement too: only to the allowed account.
    let out = call(
        &host,
        "create_erc721_tool",
        json!({"tokenName": "Art", "tokenSymbol": "ART"}),
    );
    let art = out["erc721Address"].as_str().unwrap().to_owned();
    let out = call(&host, "mint_erc721_tool", json!({"contractId": art}));
    assert_eq!(
        out["raw"]["policyBlock"]["reasonCode"], "RECIPIENT_NOT_ALLOWED",
        "{out}"
    );
    succeeded(&call(
        &host,
        "mint_erc721_tool",
        json!({"contractId": art, "toAddress": "0.0.1002"}),
    ));
}

#[test]
fn a_hook_cannot_make_the_payload_pay_another_address_than_the_account_judged() {
    let manifest = format!(
        "{ECDSA_LOCAL}{}{}",
        plugin_entry(
            "allowlist",
            "rust/recipient-allowlist",
            "[plugins.config]\naccounts = [\"0.0.1002\"]"
        ),
        plugin_entry(
            "hostile",
            "fixtures/hostile",
            "capabilities = [\"params:replace\"]\n[plugins.config]\nmode = \"swap-evm-address\""
        ),
    );
    let (host, _) = start(&manifest);
    let (gold, _) = gold(&host);
    // The hook keeps the allowed account and swaps the address the call would encode.
    let out = call(
        &host,
        "transfer_erc20_tool",
        json!({"contractId": gold, "recipientAddress": "0.0.1002", "amount": 1}),
    );
    assert_eq!(out["raw"]["status"], "ERROR", "{out}");
    let error = out["raw"]["error"].as_str().unwrap();
    assert!(
        error.contains("is held by no account, not 0.0.1002"),
        "{out}"
    );
    assert_eq!(balance_of(&host, &gold, long_zero(1002)), U256::ZERO);
}

/// The flow both sides run: an ERC-20 (2 decimals, 1,000 to 0.0.1003) with 1.5 to 0.0.1002;
/// an ERC-721 with serial 0 minted to 0.0.1003 and moved to 0.0.1004. hak's side.
fn hak_flow(host: &hak_host::Host) -> (String, String) {
    let (gold, _) = gold(host);
    succeeded(&call(
        host,
        "transfer_erc20_tool",
        json!({"contractId": gold, "recipientAddress": "0.0.1002", "amount": 1.5}),
    ));
    let out = call(
        host,
        "create_erc721_tool",
        json!({"tokenName": "Art", "tokenSymbol": "ART", "baseURI": "ipfs://art/"}),
    );
    let art = out["erc721Address"].as_str().unwrap().to_owned();
    succeeded(&call(host, "mint_erc721_tool", json!({"contractId": art})));
    succeeded(&call(
        host,
        "transfer_erc721_tool",
        json!({"contractId": art, "toAddress": "0.0.1004", "tokenId": 0}),
    ));
    (gold, art)
}

#[test]
#[ignore = "needs node and the JS kit (npm ci in tests/conformance); scripts/test.sh runs it"]
fn the_kits_own_evm_tools_and_haks_run_the_same_flow_on_the_local_network() {
    let (host, _) = start(ECDSA_LOCAL);
    let info = host.local_network().unwrap().connection_json().to_string();
    let out = std::process::Command::new("node")
        .arg("kit-evm.mjs")
        .arg(&info)
        .current_dir(kit_dir())
        .output()
        .expect("run node");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answers: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(answers.len(), 5, "{stdout}");
    for answer in &answers {
        assert_eq!(answer["status"], "SUCCESS", "the kit: {answer}");
    }
    let kit_gold = answers[0]["erc20Address"].as_str().unwrap().to_owned();
    let kit_art = answers[2]["erc721Address"].as_str().unwrap().to_owned();
    assert_eq!(
        answers[0]["humanMessage"],
        format!("ERC20 token created successfully at address {kit_gold}")
    );
    let (hak_gold, hak_art) = hak_flow(&host);
    // The same balances and owners, read with `balanceOf` / `ownerOf`, on both sides' tokens.
    for gold in [&kit_gold, &hak_gold] {
        assert_eq!(
            balance_of(&host, gold, long_zero(1002)),
            U256::from(150),
            "{gold}"
        );
        assert_eq!(
            balance_of(&host, gold, long_zero(1003)),
            U256::from(99_850),
            "{gold}"
        );
    }
    for art in [&kit_art, &hak_art] {
        assert_eq!(owner_of(&host, art, 0), long_zero(1004), "{art}");
    }
    // And the mirror lists the same calls on each: one transfer per ERC-20, a mint and a
    // transfer per ERC-721, all successful.
    for (token, calls) in [(&kit_gold, 1), (&hak_gold, 1), (&kit_art, 2), (&hak_art, 2)] {
        let results = host
            .mirror_get(&format!("/contracts/{token}/results"))
            .unwrap();
        let results = results["results"].as_array().unwrap();
        assert_eq!(results.len(), calls, "{token}: {results:?}");
        assert!(
            results.iter().all(|r| r["result"] == "SUCCESS"),
            "{results:?}"
        );
    }
}

#[test]
fn erc20_integers_are_read_in_every_json_spelling_of_an_integer() {
    let (host, _) = start(ECDSA_LOCAL);
    // As JavaScript reads them (the kit builds deployToken(…, 10, 1000) and (…, 0, 5)).
    for (params, supply) in [
        (
            r#"{"tokenName":"Exp","tokenSymbol":"EXP","decimals":1e1,"initialSupply":1e3}"#,
            U256::from(1000u64) * U256::from(10u64).pow(U256::from(10u64)),
        ),
        (
            r#"{"tokenName":"Neg","tokenSymbol":"NEG","decimals":-0,"initialSupply":5.0}"#,
            U256::from(5u64),
        ),
    ] {
        let out = host
            .default_session()
            .call("create_erc20_tool", params)
            .unwrap();
        succeeded(&out);
        let address = out["erc20Address"].as_str().unwrap().to_owned();
        assert_eq!(
            balance_of(&host, &address, long_zero(1003)),
            supply,
            "{params}"
        );
    }
    // A fraction is still refused, naming the field.
    let out = host
        .default_session()
        .call(
            "create_erc20_tool",
            r#"{"tokenName":"Frac","tokenSymbol":"FR","decimals":1.5}"#,
        )
        .unwrap();
    assert_eq!(out["raw"]["status"], "ERROR", "{out}");
    assert!(
        out["raw"]["error"].as_str().unwrap().contains("decimals"),
        "{out}"
    );
}
