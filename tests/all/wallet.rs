//! Wallet-grade bytes: what hak hands out in return-bytes mode is read back by the official JS
//! SDK (`Transaction.fromBytes`, `tests/conformance/wallet.mjs`) and by the Rust SDK, signed
//! with the payer's key and submitted to the local network, for every transaction tool — one
//! node and several, topic messages of one chunk and of many. The local network is seeded so
//! that each call is one the payer (0.0.1001) alone can complete: every receipt must say
//! SUCCESS. Needs `npm ci` in `tests/conformance` (scripts/test.sh does it).

use hak_host::Host;
use hak_tests::*;
use hedera::{AccountId, Hbar, PrivateKey, TokenId};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::io::Write;
use std::process::{Command, Stdio};
use std::str::FromStr;

/// What the seeding put on the local network.
struct World {
    /// Fungible, 2 decimals, treasury and supply key the user's.
    ft: String,
    /// NFT collection, serials 1–3 minted; the user holds 1 and 3, `friend` holds 2.
    nft: String,
    /// Fungible with the user's admin key.
    admin_ft: String,
    /// Topics with the user's admin key.
    topic: String,
    doomed_topic: String,
    /// An account with the user's key and free auto-associations; it approved 0.0.1001 to
    /// spend its HBAR, `ft` and NFT serial 2.
    friend: String,
    /// An account with the user's key, to be deleted.
    doomed_account: String,
    /// A token of 0.0.1002's that the user is not associated with, and one it is.
    to_associate: String,
    to_dissociate: String,
    /// A schedule that waits for the user's signature, and one the user's admin key may delete.
    to_sign: String,
    to_delete: String,
    /// An ERC-20 (2 decimals, 1,000 to the user) and an ERC-721 the user owns, from the
    /// factories, by contract id.
    erc20: String,
    erc721: String,
}

alloy_sol_types::sol! {
    function deployToken(string name_, string symbol_, uint8 decimals_, uint256 initialSupply_) external returns (address);
}

mod erc721_factory {
    alloy_sol_types::sol! {
        function deployToken(string name_, string symbol_, string baseURI_) external returns (address);
    }
}

/// Call a factory as the user with the Rust SDK: the new token's contract id (the mirror's
/// `created_contract_ids`).
fn deploy(host: &Host, factory: u64, data: Vec<u8>) -> String {
    let (user, key) = host.local_network().unwrap().operator();
    let id = with_client_as(host, user, key, |client, _, _| async move {
        let response = hedera::ContractExecuteTransaction::new()
            .contract_id(hedera::ContractId::new(0, 0, factory))
            .gas(3_000_000)
            .function_parameters(data)
            .execute(&client)
            .await
            .unwrap();
        response.get_receipt(&client).await.unwrap();
        response.transaction_id
    });
    let id = hak_host::mirror::mirror_transaction_id(&id);
    let result = host
        .mirror_get(&format!("/contracts/results/{id}"))
        .unwrap();
    result["created_contract_ids"][0]
        .as_str()
        .unwrap_or_else(|| panic!("{result}"))
        .to_owned()
}

fn genesis_key(num: u64) -> PrivateKey {
    hak_emu::genesis::accounts()
        .into_iter()
        .find(|a| a.num == num)
        .expect("a genesis account")
        .key
}

fn seed(host: &Host) -> World {
    let mut s = host.default_session();
    let mut call =
        |tool: &str, params: Value| ok(&s.call(tool, &params.to_string()).unwrap()).clone();
    let id_of = |raw: Value, key: &str| raw[key].as_str().unwrap().to_owned();
    let ft = id_of(
        call(
            "create_fungible_token_tool",
            json!({"tokenName": "Gold", "tokenSymbol": "GLD", "initialSupply": 1000, "decimals": 2, "isSupplyKey": true}),
        ),
        "tokenId",
    );
    let nft = id_of(
        call(
            "create_non_fungible_token_tool",
            json!({"tokenName": "Art", "tokenSymbol": "ART"}),
        ),
        "tokenId",
    );
    call(
        "mint_non_fungible_token_tool",
        json!({"tokenId": nft, "uris": ["ipfs://1", "ipfs://2", "ipfs://3"]}),
    );
    let topic = id_of(
        call(
            "create_topic_tool",
            json!({"topicMemo": "wallet", "adminKey": true}),
        ),
        "topicId",
    );
    let doomed_topic = id_of(
        call(
            "create_topic_tool",
            json!({"topicMemo": "doomed", "adminKey": true}),
        ),
        "topicId",
    );
    let friend = id_of(
        call(
            "create_account_tool",
            json!({"initialBalance": 20, "maxAutomaticTokenAssociations": 10}),
        ),
        "accountId",
    );
    let doomed_account = id_of(
        call("create_account_tool", json!({"initialBalance": 1})),
        "accountId",
    );
    call(
        "transfer_fungible_token_tool",
        json!({"tokenId": ft, "transfers": [{"accountId": friend, "amount": 50}]}),
    );
    call(
        "transfer_non_fungible_token_tool",
        json!({"tokenId": nft, "recipients": [{"recipientId": friend, "serialNumber": 2}]}),
    );
    let admin_ft = token_with_admin_key(host, 2, false);
    let (user, user_key) = host.local_network().unwrap().operator();
    let friend_id = AccountId::from_str(&friend).unwrap();
    let (ft_id, nft_id) = (
        TokenId::from_str(&ft).unwrap(),
        TokenId::from_str(&nft).unwrap(),
    );
    // The friend's key is the user's, so the user's client signs the friend's approvals.
    with_client_as(host, user, user_key.clone(), |client, _, _| async move {
        hedera::AccountAllowanceApproveTransaction::new()
            .approve_hbar_allowance(friend_id, user, Hbar::new(5))
            .approve_token_allowance(ft_id, friend_id, user, 1_000)
            .approve_token_nft_allowance(nft_id.nft(2), friend_id, user)
            .execute(&client)
            .await
            .unwrap()
            .get_receipt(&client)
            .await
            .unwrap();
    });
    // 0.0.1002's tokens and schedules: things only another account can set up.
    let other = AccountId::new(0, 0, 1002);
    let (to_associate, to_dissociate, to_sign, to_delete) = with_client_as(
        host,
        other,
        genesis_key(1002),
        |client, other, _| async move {
            let mut tokens = Vec::new();
            for symbol in ["ASC", "DIS"] {
                let receipt = hedera::TokenCreateTransaction::new()
                    .name(symbol)
                    .symbol(symbol)
                    .treasury_account_id(other)
                    .initial_supply(10)
                    .execute(&client)
                    .await
                    .unwrap()
                    .get_receipt(&client)
                    .await
                    .unwrap();
                tokens.push(receipt.token_id.unwrap().to_string());
            }
            let mut needs_user = hedera::TransferTransaction::new();
            needs_user
                .hbar_transfer(user, Hbar::new(-1))
                .hbar_transfer(other, Hbar::new(1));
            let to_sign = hedera::ScheduleCreateTransaction::new()
                .scheduled_transaction(needs_user)
                .execute(&client)
                .await
                .unwrap()
                .get_receipt(&client)
                .await
                .unwrap()
                .schedule_id
                .unwrap();
            let mut needs_1003 = hedera::TransferTransaction::new();
            needs_1003
                .hbar_transfer(AccountId::new(0, 0, 1003), Hbar::new(-1))
                .hbar_transfer(other, Hbar::new(1));
            // An admin key signs the schedule's creation.
            let to_delete = hedera::ScheduleCreateTransaction::new()
                .scheduled_transaction(needs_1003)
                .admin_key(user_key.public_key())
                .freeze_with(&client)
                .unwrap()
                .sign(user_key)
                .execute(&client)
                .await
                .unwrap()
                .get_receipt(&client)
                .await
                .unwrap()
                .schedule_id
                .unwrap();
            (
                tokens[0].clone(),
                tokens[1].clone(),
                to_sign.to_string(),
                to_delete.to_string(),
            )
        },
    );
    let mut s = host.default_session();
    ok(&s
        .call(
            "associate_token_tool",
            &json!({"tokenIds": [to_dissociate]}).to_string(),
        )
        .unwrap());
    use alloy_sol_types::SolCall;
    let erc20 = deploy(
        host,
        hak_emu::genesis::ERC20_FACTORY,
        deployTokenCall {
            name_: "Wallet Gold".into(),
            symbol_: "WGLD".into(),
            decimals_: 2,
            initialSupply_: alloy_primitives::U256::from(1000),
        }
        .abi_encode(),
    );
    let erc721 = deploy(
        host,
        hak_emu::genesis::ERC721_FACTORY,
        erc721_factory::deployTokenCall {
            name_: "Wallet Art".into(),
            symbol_: "WART".into(),
            baseURI_: "ipfs://wallet/".into(),
        }
        .abi_encode(),
    );
    World {
        erc20,
        erc721,
        ft,
        nft,
        admin_ft,
        topic,
        doomed_topic,
        friend,
        doomed_account,
        to_associate,
        to_dissociate,
        to_sign,
        to_delete,
    }
}

/// A message of `len` bytes whose chunks can be told apart.
fn long_message(len: usize) -> String {
    (0..len)
        .map(|i| char::from(b'a' + (i / 1024 % 26) as u8))
        .collect()
}

/// One call per transaction tool (some tools twice) that the user alone can complete, in an
/// order that keeps each valid after the ones before it.
fn calls(w: &World) -> Vec<(&'static str, Value)> {
    let World {
        ft,
        nft,
        admin_ft,
        topic,
        doomed_topic,
        friend,
        doomed_account,
        to_associate,
        to_dissociate,
        to_sign,
        to_delete,
        erc20,
        erc721,
    } = w;
    vec![
        (
            "transfer_hbar_tool",
            json!({"transfers": [{"accountId": "0.0.1002", "amount": 1.5}], "transactionMemo": "wallet"}),
        ),
        (
            "transfer_hbar_tool",
            json!({"transfers": [{"accountId": "0.0.1004", "amount": 1}], "schedulingParams": {"isScheduled": true}}),
        ),
        (
            "transfer_hbar_with_allowance_tool",
            json!({"sourceAccountId": friend, "transfers": [{"accountId": "0.0.1002", "amount": 1}]}),
        ),
        (
            "create_account_tool",
            json!({"initialBalance": 1, "accountMemo": "from a wallet"}),
        ),
        (
            "update_account_tool",
            json!({"accountId": "0.0.1001", "accountMemo": "wallet user"}),
        ),
        (
            "delete_account_tool",
            json!({"accountId": doomed_account, "transferAccountId": "0.0.1001"}),
        ),
        (
            "approve_hbar_allowance_tool",
            json!({"spenderAccountId": "0.0.1002", "amount": 1.25}),
        ),
        (
            "delete_hbar_allowance_tool",
            json!({"spenderAccountId": "0.0.1002"}),
        ),
        (
            "approve_token_allowance_tool",
            json!({"spenderAccountId": "0.0.1002", "tokenApprovals": [{"tokenId": ft, "amount": 2.5}]}),
        ),
        (
            "delete_token_allowance_tool",
            json!({"ownerAccountId": "0.0.1001", "spenderAccountId": "0.0.1002", "tokenIds": [ft]}),
        ),
        (
            "sign_schedule_transaction_tool",
            json!({"scheduleId": to_sign}),
        ),
        ("schedule_delete_tool", json!({"scheduleId": to_delete})),
        (
            "create_fungible_token_tool",
            json!({"tokenName": "Wallet", "tokenSymbol": "WAL", "initialSupply": 10, "decimals": 1}),
        ),
        (
            "create_non_fungible_token_tool",
            json!({"tokenName": "Pics", "tokenSymbol": "PIC", "maxSupply": 5}),
        ),
        (
            "mint_fungible_token_tool",
            json!({"tokenId": ft, "amount": 2.5}),
        ),
        (
            "mint_non_fungible_token_tool",
            json!({"tokenId": nft, "uris": ["ipfs://wallet"]}),
        ),
        ("associate_token_tool", json!({"tokenIds": [to_associate]})),
        (
            "dissociate_token_tool",
            json!({"tokenIds": [to_dissociate]}),
        ),
        (
            "update_token_tool",
            json!({"tokenId": admin_ft, "tokenMemo": "signed in a wallet"}),
        ),
        (
            "transfer_fungible_token_tool",
            json!({"tokenId": ft, "transfers": [{"accountId": friend, "amount": 1.25}]}),
        ),
        (
            "transfer_fungible_token_with_allowance_tool",
            json!({"tokenId": ft, "sourceAccountId": friend, "transfers": [{"accountId": "0.0.1001", "amount": 0.5}]}),
        ),
        (
            "airdrop_fungible_token_tool",
            json!({"tokenId": ft, "recipients": [{"accountId": friend, "amount": 1}]}),
        ),
        (
            "transfer_non_fungible_token_tool",
            json!({"tokenId": nft, "recipients": [{"recipientId": friend, "serialNumber": 1}]}),
        ),
        (
            "transfer_non_fungible_token_with_allowance_tool",
            json!({"sourceAccountId": friend, "tokenId": nft, "recipients": [{"recipientId": "0.0.1001", "serialNumber": 2}]}),
        ),
        (
            "approve_nft_allowance_tool",
            json!({"spenderAccountId": "0.0.1002", "tokenId": nft, "serialNumbers": [3]}),
        ),
        (
            "delete_non_fungible_token_allowance_tool",
            json!({"tokenId": nft, "serialNumbers": [3]}),
        ),
        ("create_topic_tool", json!({"topicMemo": "wallet topic"})),
        (
            "update_topic_tool",
            json!({"topicId": topic, "topicMemo": "renamed in a wallet"}),
        ),
        ("delete_topic_tool", json!({"topicId": doomed_topic})),
        (
            "create_erc20_tool",
            json!({"tokenName": "Wallet Silver", "tokenSymbol": "WSLV", "initialSupply": 5}),
        ),
        (
            "create_erc721_tool",
            json!({"tokenName": "Wallet Prints", "tokenSymbol": "WPRT"}),
        ),
        (
            "transfer_erc20_tool",
            json!({"contractId": erc20, "recipientAddress": "0.0.1002", "amount": 2.5}),
        ),
        // Minted to the user (serial 0), then moved: the bytes are submitted in this order.
        ("mint_erc721_tool", json!({"contractId": erc721})),
        (
            "transfer_erc721_tool",
            json!({"contractId": erc721, "toAddress": "0.0.1002", "tokenId": 0}),
        ),
        (
            "submit_topic_message_tool",
            json!({"topicId": topic, "message": "short"}),
        ),
        (
            "submit_topic_message_tool",
            json!({"topicId": topic, "message": long_message(2048)}),
        ),
        (
            "submit_topic_message_tool",
            json!({"topicId": topic, "message": long_message(2500)}),
        ),
    ]
}

/// A return-bytes host on `base`'s local network, frozen for `nodes`.
fn bytes_host(base: &Host, nodes: &[&str]) -> Host {
    let header = same_network(base).replace(
        "[context]\n",
        &format!("node_account_ids = {nodes:?}\n\n[context]\nmode = \"returnBytes\"\n"),
    );
    start(&header).0
}

/// Every call's bytes (the calls must all succeed).
fn bytes_of(host: &Host, calls: &[(&str, Value)]) -> Vec<String> {
    let mut session = host.default_session();
    calls
        .iter()
        .map(|(tool, params)| {
            let out = session.call(tool, &params.to_string()).unwrap();
            ok(&out)["bytes"].as_str().unwrap().to_owned()
        })
        .collect()
}

/// Run `tests/conformance/wallet.mjs` on `bytes`, signed with the user's key.
fn js_wallet(host: &Host, bytes: &[String], submit: bool) -> Vec<Value> {
    let emu = host.local_network().unwrap();
    let key = emu.operator().1.to_string_der();
    let input = json!({
        "grpc": emu.grpc_addr.to_string(),
        "nodeAccountId": "0.0.3",
        "cases": bytes.iter().map(|b| json!({"bytes": b, "keys": [key], "submit": submit})).collect::<Vec<_>>(),
    });
    let dir = root().join("tests/conformance");
    let mut child = Command::new("node")
        .arg("wallet.mjs")
        .current_dir(&dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("node runs (npm ci in tests/conformance first)");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "wallet.mjs failed");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn transaction_tools(host: &Host) -> BTreeSet<String> {
    host.tools()
        .specs()
        .filter(|s| s.tool_type == hak_host::tools::ToolType::Transaction)
        .map(|s| s.method.to_owned())
        .collect()
}

#[test]
#[ignore = "needs node and the JS SDK (npm ci in tests/conformance); scripts/test.sh runs it"]
fn the_js_sdk_reads_signs_and_submits_every_transaction_tools_bytes() {
    let (auto, _) = start(LOCAL);
    let world = seed(&auto);
    let calls = calls(&world);
    let covered: BTreeSet<String> = calls.iter().map(|(t, _)| (*t).to_owned()).collect();
    assert_eq!(covered, transaction_tools(&auto), "every transaction tool");
    let bytes = bytes_of(&bytes_host(&auto, &["0.0.3"]), &calls);
    let answers = js_wallet(&auto, &bytes, true);
    assert_eq!(answers.len(), calls.len());
    for ((tool, params), answer) in calls.iter().zip(&answers) {
        let chunks = answer["chunks"].as_u64().unwrap_or(0) as usize;
        let expected = vec!["SUCCESS"; chunks.max(1)].join(",");
        assert_eq!(
            answer["status"],
            expected.as_str(),
            "{tool} {params}: {answer}"
        );
        assert_eq!(answer["nodes"], json!(["0.0.3"]), "{tool}");
    }
    // The long messages arrived whole, in 1,024-byte chunks as the kit cuts them.
    let chunked: Vec<&Value> = answers.iter().rev().take(2).collect();
    assert_eq!(chunked[0]["chunks"], 3, "2,500 bytes");
    assert_eq!(chunked[1]["chunks"], 2, "2,048 bytes");
    let messages = auto
        .mirror_get(&format!("/topics/{}/messages?limit=100", world.topic))
        .unwrap();
    let texts: Vec<Vec<u8>> = messages["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            use base64::Engine as _;
            base64::engine::general_purpose::STANDARD
                .decode(m["message"].as_str().unwrap())
                .unwrap()
        })
        .collect();
    let tail: Vec<u8> = texts[texts.len() - 3..].concat();
    assert_eq!(tail, long_message(2500).into_bytes());
    let middle: Vec<u8> = texts[texts.len() - 5..texts.len() - 3].concat();
    assert_eq!(middle, long_message(2048).into_bytes());
}

#[test]
fn the_rust_sdk_reads_signs_and_submits_every_transaction_tools_bytes() {
    let (auto, _) = start(LOCAL);
    let world = seed(&auto);
    // Multi-chunk messages are left to the JS wallet: the Rust SDK 0.43 panics executing a
    // chunked transaction read from bytes (an index out of bounds in its source execution).
    let calls: Vec<_> = calls(&world)
        .into_iter()
        .filter(|(_, p)| p["message"].as_str().is_none_or(|m| m.len() <= 1024))
        .collect();
    let bytes = bytes_of(&bytes_host(&auto, &["0.0.3"]), &calls);
    let (user, key) = auto.local_network().unwrap().operator();
    let statuses: Vec<String> =
        with_client_as(&auto, user, key.clone(), |client, _, key| async move {
            let mut statuses = Vec::new();
            for hex_text in bytes {
                let raw = hex::decode(hex_text.strip_prefix("0x").unwrap()).unwrap();
                let mut tx = hedera::AnyTransaction::from_bytes(&raw).unwrap();
                tx.sign(key.clone());
                let status = match tx.execute(&client).await {
                    Ok(response) => match response.get_receipt(&client).await {
                        Ok(receipt) => receipt.status.as_str_name().to_owned(),
                        Err(e) => format!("receipt: {e}"),
                    },
                    Err(e) => format!("execute: {e}"),
                };
                statuses.push(status);
            }
            statuses
        });
    for ((tool, params), status) in calls.iter().zip(&statuses) {
        assert_eq!(status, "SUCCESS", "{tool} {params}");
    }
}

#[test]
#[ignore = "needs node and the JS SDK (npm ci in tests/conformance); scripts/test.sh runs it"]
fn bytes_for_several_nodes_decode_with_every_node_and_sign() {
    let (auto, _) = start(LOCAL);
    let world = seed(&auto);
    let calls = calls(&world);
    let nodes = ["0.0.3", "0.0.4", "0.0.5"];
    let bytes = bytes_of(&bytes_host(&auto, &nodes), &calls);
    let answers = js_wallet(&auto, &bytes, false);
    for ((tool, _), answer) in calls.iter().zip(&answers) {
        assert_eq!(answer["nodes"], json!(nodes), "{tool}: {answer}");
        assert!(answer["stage"].is_null(), "{tool}: {answer}");
    }
    // Chunk ids: the first chunk's valid start plus 1 ns per chunk.
    let ids = answers.last().unwrap()["transactionIds"]
        .as_array()
        .unwrap();
    assert_eq!(ids.len(), 3);
    let nanos: Vec<i64> = ids
        .iter()
        .map(|id| {
            let (_, start) = id.as_str().unwrap().split_once('@').unwrap();
            let (s, n) = start.split_once('.').unwrap();
            s.parse::<i64>().unwrap() * 1_000_000_000 + n.parse::<i64>().unwrap()
        })
        .collect();
    assert_eq!(nanos[1] - nanos[0], 1);
    assert_eq!(nanos[2] - nanos[1], 1);
}

#[test]
fn long_messages_arrive_whole_autonomously_and_oversized_ones_are_refused_like_the_kit() {
    let (auto, _) = start(LOCAL);
    let mut session = auto.default_session();
    let topic = ok(&session
        .call("create_topic_tool", r#"{"topicMemo":"long"}"#)
        .unwrap())["topicId"]
        .as_str()
        .unwrap()
        .to_owned();
    // 2,048 bytes: an exact multiple of the chunk size (see docs/CONFORMANCE.md); 2,500 bytes.
    for len in [2048, 2500] {
        let params = json!({"topicId": topic, "message": long_message(len)});
        ok(&session
            .call("submit_topic_message_tool", &params.to_string())
            .unwrap());
    }
    let messages = auto
        .mirror_get(&format!("/topics/{topic}/messages?limit=100"))
        .unwrap();
    let mut all = Vec::new();
    for m in messages["messages"].as_array().unwrap() {
        use base64::Engine as _;
        all.extend(
            base64::engine::general_purpose::STANDARD
                .decode(m["message"].as_str().unwrap())
                .unwrap(),
        );
    }
    assert_eq!(
        all,
        [long_message(2048), long_message(2500)]
            .concat()
            .into_bytes()
    );

    let refusals = [
        (
            json!({"topicId": topic, "message": long_message(1025), "schedulingParams": {"isScheduled": true}}),
            "Failed to execute Submit Topic Message: cannot schedule `TopicMessageSubmitTransaction` with message over 1024 bytes",
        ),
        (
            json!({"topicId": topic, "message": long_message(20 * 1024 + 1)}),
            "Failed to execute Submit Topic Message: Message with size 20481 too long for 20 chunks",
        ),
    ];
    for (params, expected) in refusals {
        let out = session
            .call("submit_topic_message_tool", &params.to_string())
            .unwrap();
        assert_eq!(out["raw"]["error"], expected);
    }
    // Exactly 1,024 bytes may be scheduled (the Rust SDK's chunk count made it panic).
    let params = json!({"topicId": topic, "message": long_message(1024), "schedulingParams": {"isScheduled": true}});
    ok(&session
        .call("submit_topic_message_tool", &params.to_string())
        .unwrap());
}
