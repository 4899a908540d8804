//! The transfer, allowance, airdrop and update tools autonomously on the local network, each
//! checked through the mirror API: fungible and NFT transfers, spending HBAR, token and NFT
//! allowances, airdrops that stay pending until associated, token updates; and their refusals.

use hak_host::host::Host;
use hak_host::Session;
use hak_tests::*;
use serde_json::{json, Value};

/// Call a tool, require success, return `raw`.
fn ok(session: &mut Session, tool: &str, params: Value) -> Value {
    let out = session.call(tool, &params.to_string()).unwrap();
    assert_eq!(out["raw"]["status"], "SUCCESS", "{tool} {params}: {out}");
    out["raw"].clone()
}

fn error(session: &mut Session, tool: &str, params: Value) -> Value {
    let out = session.call(tool, &params.to_string()).unwrap();
    assert_eq!(out["raw"]["status"], "ERROR", "{tool} {params}: {out}");
    out
}

fn text(v: &Value, field: &str) -> String {
    v[field]
        .as_str()
        .unwrap_or_else(|| panic!("no {field} in {v}"))
        .to_owned()
}

/// An account with the user's key (the user signs for it) and the given auto-associations.
fn account(session: &mut Session, auto_associations: i64) -> String {
    let raw = ok(
        session,
        "create_account_tool",
        json!({"initialBalance": 5, "maxAutomaticTokenAssociations": auto_associations}),
    );
    text(&raw, "accountId")
}

/// The account's balance of `token` in base units, as the mirror reports it (0 if none).
fn token_balance(host: &Host, account: &str, token: &str) -> i64 {
    let tokens = host
        .mirror_get(&format!("/accounts/{account}/tokens"))
        .unwrap();
    tokens["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["token_id"] == token)
        .and_then(|t| t["balance"].as_i64())
        .unwrap_or(0)
}

fn hbar_balance(host: &Host, account: &str) -> i64 {
    host.mirror_get(&format!("/accounts/{account}")).unwrap()["balance"]["balance"]
        .as_i64()
        .unwrap()
}

fn nft_owner(host: &Host, account: &str, token: &str, serial: u64) -> bool {
    let nfts = host
        .mirror_get(&format!("/accounts/{account}/nfts"))
        .unwrap();
    nfts["nfts"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n["token_id"] == token && n["serial_number"] == serial)
}

#[test]
fn fungible_tokens_are_transferred_airdropped_and_spent_through_allowances() {
    let (host, _) = start(LOCAL);
    let mut s = host.default_session();
    let token = text(
        &ok(
            &mut s,
            "create_fungible_token_tool",
            json!({"tokenName": "Gold", "tokenSymbol": "GLD", "initialSupply": 1000, "decimals": 2}),
        ),
        "tokenId",
    );
    let open = account(&mut s, -1);
    let closed = account(&mut s, 0);

    // Direct transfer: display units → base units; auto-association takes the token.
    let out = s
        .call(
            "transfer_fungible_token_tool",
            &json!({"tokenId": token, "transfers": [{"accountId": open, "amount": 12.5}]})
                .to_string(),
        )
        .unwrap();
    assert_eq!(out["raw"]["status"], "SUCCESS", "{out}");
    assert!(out["humanMessage"]
        .as_str()
        .unwrap()
        .starts_with("Fungible tokens successfully transferred.\nTransaction ID: 0.0.1001@"));
    assert_eq!(token_balance(&host, &open, &token), 1250);
    assert_eq!(token_balance(&host, "0.0.1001", &token), 100_000 - 1250);

    // A recipient that cannot take the token: the receipt's code, plus the kit's hint.
    let out = error(
        &mut s,
        "transfer_fungible_token_tool",
        json!({"tokenId": token, "transfers": [{"accountId": closed, "amount": 1}]}),
    );
    assert_eq!(
        out["raw"]["errorCode"], "TOKEN_NOT_ASSOCIATED_TO_ACCOUNT",
        "{out}"
    );
    assert!(out["raw"]["transactionId"]
        .as_str()
        .unwrap()
        .starts_with("0.0.1001@"));
    assert!(out["humanMessage"].as_str().unwrap().ends_with(
        " Use the associate_token_tool to associate the account first, or ensure the account has maxAutoAssociations set to -1."
    ), "{out}");

    // Airdrop: the associated account receives at once, the other gets a pending airdrop.
    let out = s
        .call(
            "airdrop_fungible_token_tool",
            &json!({"tokenId": token, "recipients": [{"accountId": open, "amount": 1}, {"accountId": closed, "amount": "2.5"}]}).to_string(),
        )
        .unwrap();
    assert_eq!(out["raw"]["status"], "SUCCESS", "{out}");
    assert!(out["humanMessage"]
        .as_str()
        .unwrap()
        .starts_with("Token successfully airdropped with transaction id 0.0.1001@"));
    assert_eq!(token_balance(&host, &open, &token), 1350);
    assert_eq!(token_balance(&host, &closed, &token), 0);
    let out = s
        .call(
            "get_pending_airdrop_tool",
            &json!({"accountId": closed}).to_string(),
        )
        .unwrap();
    assert_eq!(
        out["humanMessage"],
        format!(
            "Here are the pending airdrops for account **{closed}** (total: 1):\n\n- 2.50 **GLD**"
        ),
        "{out}"
    );
    assert_eq!(out["raw"]["pendingAirdrops"]["airdrops"][0]["amount"], 250);
    let out = s.call("get_pending_airdrop_tool", "{}").unwrap();
    assert_eq!(
        out["humanMessage"],
        "No pending airdrops found for account 0.0.1001"
    );
    let out = error(
        &mut s,
        "airdrop_fungible_token_tool",
        json!({"tokenId": token, "recipients": [{"accountId": open, "amount": 0}]}),
    );
    assert_eq!(
        out["raw"]["error"],
        "Failed to execute Airdrop Fungible Token: Invalid recipient amount: 0"
    );

    // Token allowance: `open` lets the user spend 5 GLD; the user spends 3 of them.
    ok(
        &mut s,
        "approve_token_allowance_tool",
        json!({"ownerAccountId": open, "spenderAccountId": "0.0.1001", "tokenApprovals": [{"tokenId": token, "amount": 5}]}),
    );
    let allowances = host
        .mirror_get(&format!("/accounts/{open}/allowances/tokens"))
        .unwrap();
    assert_eq!(allowances["allowances"][0]["amount"], 500, "{allowances}");
    let out = s
        .call(
            "transfer_fungible_token_with_allowance_tool",
            &json!({"tokenId": token, "sourceAccountId": open, "transfers": [{"accountId": "0.0.1001", "amount": 3}]}).to_string(),
        )
        .unwrap();
    assert_eq!(out["raw"]["status"], "SUCCESS", "{out}");
    assert!(out["humanMessage"].as_str().unwrap().starts_with(
        "Fungible tokens successfully transferred with allowance.\nTransaction ID: 0.0.1001@"
    ));
    assert_eq!(token_balance(&host, &open, &token), 1050);
    // More than what is left of the allowance.
    let out = error(
        &mut s,
        "transfer_fungible_token_with_allowance_tool",
        json!({"tokenId": token, "sourceAccountId": open, "transfers": [{"accountId": "0.0.1001", "amount": 3}]}),
    );
    assert_eq!(out["raw"]["errorCode"], "AMOUNT_EXCEEDS_ALLOWANCE", "{out}");
    let out = s
        .call(
            "delete_token_allowance_tool",
            &json!({"ownerAccountId": open, "spenderAccountId": "0.0.1001", "tokenIds": [token]})
                .to_string(),
        )
        .unwrap();
    assert_eq!(out["raw"]["status"], "SUCCESS", "{out}");
    assert!(out["humanMessage"]
        .as_str()
        .unwrap()
        .starts_with("Token allowance(s) deleted successfully. Transaction ID: "));
    let allowances = host
        .mirror_get(&format!("/accounts/{open}/allowances/tokens"))
        .unwrap();
    let left: i64 = allowances["allowances"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["amount"].as_i64().unwrap())
        .sum();
    assert_eq!(left, 0, "{allowances}");

    // A token the mirror does not know: its 404, after the kit's retries.
    let out = error(
        &mut s,
        "transfer_fungible_token_tool",
        json!({"tokenId": "0.0.999999", "transfers": [{"accountId": open, "amount": 1}]}),
    );
    assert_eq!(
        out["raw"]["error"],
        "Failed to execute Transfer Fungible Token: Failed to get token info for a token 0.0.999999: 404 Not Found"
    );
}

#[test]
fn hbar_is_spent_through_an_allowance() {
    let (host, _) = start(LOCAL);
    let mut s = host.default_session();
    let owner = account(&mut s, -1);
    ok(
        &mut s,
        "approve_hbar_allowance_tool",
        json!({"ownerAccountId": owner, "spenderAccountId": "0.0.1001", "amount": 2}),
    );
    let before = hbar_balance(&host, &owner);
    let out = s
        .call(
            "transfer_hbar_with_allowance_tool",
            &json!({"sourceAccountId": owner, "transfers": [{"accountId": "0.0.1002", "amount": 1.5}], "transactionMemo": "allowance"}).to_string(),
        )
        .unwrap();
    assert_eq!(out["raw"]["status"], "SUCCESS", "{out}");
    assert!(out["humanMessage"]
        .as_str()
        .unwrap()
        .starts_with("HBAR successfully transferred with allowance. Transaction ID: 0.0.1001@"));
    assert_eq!(hbar_balance(&host, &owner), before - 150_000_000);
    let out = error(
        &mut s,
        "transfer_hbar_with_allowance_tool",
        json!({"sourceAccountId": owner, "transfers": [{"accountId": "0.0.1002", "amount": 1}]}),
    );
    assert_eq!(out["raw"]["errorCode"], "AMOUNT_EXCEEDS_ALLOWANCE", "{out}");
    let out = error(
        &mut s,
        "transfer_hbar_with_allowance_tool",
        json!({"transfers": [{"accountId": "0.0.1002", "amount": 1}]}),
    );
    assert_eq!(
        out["raw"]["error"],
        "Failed to execute Transfer HBAR with allowance: Invalid parameters: Field \"sourceAccountId\" - Required: the account that granted the allowance"
    );
}

#[test]
fn nfts_are_transferred_and_spent_through_allowances() {
    let (host, _) = start(LOCAL);
    let mut s = host.default_session();
    let token = text(
        &ok(
            &mut s,
            "create_non_fungible_token_tool",
            json!({"tokenName": "Art", "tokenSymbol": "ART"}),
        ),
        "tokenId",
    );
    ok(
        &mut s,
        "mint_non_fungible_token_tool",
        json!({"tokenId": token, "uris": ["ipfs://1", "ipfs://2", "ipfs://3", "ipfs://4"]}),
    );
    let holder = account(&mut s, -1);
    let out = s
        .call(
            "transfer_non_fungible_token_tool",
            &json!({"tokenId": token, "recipients": [{"recipientId": holder, "serialNumber": 1}, {"recipientId": holder, "serialNumber": 2}, {"recipientId": holder, "serialNumber": 3}]}).to_string(),
        )
        .unwrap();
    assert_eq!(out["raw"]["status"], "SUCCESS", "{out}");
    assert!(out["humanMessage"]
        .as_str()
        .unwrap()
        .starts_with("Non-fungible tokens successfully transferred. Transaction ID: 0.0.1001@"));
    assert!(nft_owner(&host, &holder, &token, 1) && nft_owner(&host, &holder, &token, 3));
    let out = error(
        &mut s,
        "transfer_non_fungible_token_tool",
        json!({"tokenId": token, "recipients": [{"recipientId": holder, "serialNumber": 4}, {"recipientId": "0.0.1002", "serialNumber": 4}]}),
    );
    assert_eq!(
        out["raw"]["error"],
        "Failed to execute Transfer Non Fungible Token: Duplicate serial number: 4"
    );

    // Serial allowance: the user may move serials 1 and 2 of the holder's; moves serial 1 back.
    ok(
        &mut s,
        "approve_nft_allowance_tool",
        json!({"ownerAccountId": holder, "spenderAccountId": "0.0.1001", "tokenId": token, "serialNumbers": [1, 2]}),
    );
    let out = s
        .call(
            "transfer_non_fungible_token_with_allowance_tool",
            &json!({"sourceAccountId": holder, "tokenId": token, "recipients": [{"recipientId": "0.0.1001", "serialNumber": 1}]}).to_string(),
        )
        .unwrap();
    assert_eq!(out["raw"]["status"], "SUCCESS", "{out}");
    assert!(out["humanMessage"].as_str().unwrap().starts_with(
        "Non-fungible tokens successfully transferred with allowance. Transaction ID: 0.0.1001@"
    ));
    assert!(nft_owner(&host, "0.0.1001", &token, 1));
    // Serial 3 was never approved.
    let out = error(
        &mut s,
        "transfer_non_fungible_token_with_allowance_tool",
        json!({"sourceAccountId": holder, "tokenId": token, "recipients": [{"recipientId": "0.0.1001", "serialNumber": 3}]}),
    );
    assert_eq!(
        out["raw"]["errorCode"], "SPENDER_DOES_NOT_HAVE_ALLOWANCE",
        "{out}"
    );
    // Removing serial 2's allowance stops its transfer too.
    let out = s
        .call(
            "delete_non_fungible_token_allowance_tool",
            &json!({"ownerAccountId": holder, "tokenId": token, "serialNumbers": [2]}).to_string(),
        )
        .unwrap();
    assert_eq!(out["raw"]["status"], "SUCCESS", "{out}");
    assert!(out["humanMessage"]
        .as_str()
        .unwrap()
        .starts_with("NFT allowance(s) deleted successfully. Transaction ID: "));
    let out = error(
        &mut s,
        "transfer_non_fungible_token_with_allowance_tool",
        json!({"sourceAccountId": holder, "tokenId": token, "recipients": [{"recipientId": "0.0.1001", "serialNumber": 2}]}),
    );
    assert_eq!(
        out["raw"]["errorCode"], "SPENDER_DOES_NOT_HAVE_ALLOWANCE",
        "{out}"
    );

    // All-serials allowance: shows on the mirror, and serial 3 now moves.
    let out = s
        .call(
            "approve_nft_allowance_tool",
            &json!({"ownerAccountId": holder, "spenderAccountId": "0.0.1001", "tokenId": token, "allSerials": true}).to_string(),
        )
        .unwrap();
    assert_eq!(out["raw"]["status"], "SUCCESS", "{out}");
    assert!(out["humanMessage"]
        .as_str()
        .unwrap()
        .starts_with("NFT allowance approved successfully. Transaction ID: "));
    let allowances = host
        .mirror_get(&format!("/accounts/{holder}/allowances/nfts"))
        .unwrap();
    assert_eq!(
        allowances["allowances"][0]["approved_for_all"], true,
        "{allowances}"
    );
    ok(
        &mut s,
        "transfer_non_fungible_token_with_allowance_tool",
        json!({"sourceAccountId": holder, "tokenId": token, "recipients": [{"recipientId": "0.0.1001", "serialNumber": 3}]}),
    );
    assert!(nft_owner(&host, "0.0.1001", &token, 3));
    let out = error(
        &mut s,
        "approve_nft_allowance_tool",
        json!({"spenderAccountId": "0.0.1002", "tokenId": token, "allSerials": true, "serialNumbers": [1]}),
    );
    assert_eq!(
        out["raw"]["error"],
        "Failed to execute Approve NFT Allowance: When approving for all serials (allSerials=true), serialNumbers must not be provided."
    );
}

#[test]
fn tokens_are_updated_only_with_the_users_admin_key() {
    let (host, _) = start(LOCAL);
    let mut s = host.default_session();
    // The kit's token tools never set an admin key: such a token cannot be updated.
    let plain = text(
        &ok(
            &mut s,
            "create_fungible_token_tool",
            json!({"tokenName": "Plain", "tokenSymbol": "PL"}),
        ),
        "tokenId",
    );
    let out = error(
        &mut s,
        "update_token_tool",
        json!({"tokenId": plain, "tokenName": "New"}),
    );
    assert_eq!(
        out["raw"]["error"],
        "Failed to execute Update Token: You do not have permission to update this token. The adminKey does not match your public key."
    );
    // A token with the user's admin key, made with the SDK.
    let token = token_with_admin_key(&host, 0, false);
    let out = s
        .call(
            "update_token_tool",
            &json!({"tokenId": token, "tokenName": "Held 2", "tokenSymbol": "HL2", "tokenMemo": "renamed"}).to_string(),
        )
        .unwrap();
    assert_eq!(out["raw"]["status"], "SUCCESS", "{out}");
    assert!(out["humanMessage"]
        .as_str()
        .unwrap()
        .starts_with("Token successfully updated. Transaction ID: 0.0.1001@"));
    let info = host.mirror_get(&format!("/tokens/{token}")).unwrap();
    assert_eq!(info["name"], "Held 2", "{info}");
    assert_eq!(info["symbol"], "HL2");
    assert_eq!(info["memo"], "renamed");
    let out = error(
        &mut s,
        "update_token_tool",
        json!({"tokenId": token, "supplyKey": true}),
    );
    assert_eq!(
        out["raw"]["error"],
        "Failed to execute Update Token: Cannot update supplyKey: token was created without a supplyKey"
    );
    let out = error(
        &mut s,
        "update_token_tool",
        json!({"tokenId": token, "tokenName": "x".repeat(101)}),
    );
    assert!(
        out["raw"]["error"]
            .as_str()
            .unwrap()
            .contains("Field \"tokenName\""),
        "{out}"
    );
}

#[test]
fn contract_info_reports_the_mirrors_404() {
    let (host, _) = start(LOCAL);
    let mut s = host.default_session();
    let out = error(
        &mut s,
        "get_contract_info_query_tool",
        json!({"contractId": "0.0.4242"}),
    );
    assert_eq!(
        out["raw"]["error"],
        "Failed to execute Get Contract Info: Failed to get contract info for 0.0.4242: 404 Not Found"
    );
    let out = error(
        &mut s,
        "get_contract_info_query_tool",
        json!({"contractId": "../accounts/0.0.2"}),
    );
    assert!(
        out["raw"]["error"]
            .as_str()
            .unwrap()
            .contains("Field \"contractId\""),
        "{out}"
    );
}
