//! Token tools: `create_fungible_token_tool` in return-bytes mode (decoded body with the JS
//! SDK's defaults) and autonomously on the local network (the token as the mirror shows it).

use hak_tests::*;
use hedera::{TokenCreateTransaction, TokenSupplyType};

#[test]
fn fungible_token_bytes_carry_base_units_and_js_sdk_defaults() {
    let (host, _) = start(RETURN_BYTES_HEADER);
    let mut session = host.default_session();
    let out = session
        .call(
            "create_fungible_token_tool",
            r#"{"tokenName":"Gold","tokenSymbol":"GLD","initialSupply":250,"decimals":2}"#,
        )
        .unwrap();
    assert_eq!(out["raw"]["type"], "TokenCreateTransaction", "{out}");
    let tx: TokenCreateTransaction = decode_bytes(&out).downcast().unwrap();
    assert_eq!(tx.get_name(), "Gold");
    assert_eq!(tx.get_symbol(), "GLD");
    assert_eq!(tx.get_decimals(), 2);
    assert_eq!(tx.get_initial_supply(), 25_000);
    // The kit's defaults: finite, 1,000,000 display units.
    assert_eq!(tx.get_token_supply_type(), TokenSupplyType::Finite);
    assert_eq!(tx.get_max_supply(), 100_000_000);
    let user = hedera::AccountId::new(0, 0, 1001);
    assert_eq!(tx.get_treasury_account_id(), Some(user));
    assert_eq!(tx.get_auto_renew_account_id(), Some(user));
    assert_eq!(tx.get_supply_key(), None);
    assert_eq!(
        tx.get_auto_renew_period(),
        Some(time::Duration::seconds(7_776_000))
    );
    let expiry = tx.get_expiration_time().unwrap().unix_timestamp();
    let expected = time::OffsetDateTime::now_utc().unix_timestamp() + 7_776_000;
    assert!((expected - expiry).abs() <= 5, "{expiry} vs {expected}");
    assert_eq!(tx.get_max_transaction_fee(), Some(hedera::Hbar::new(30)));

    let out = session
        .call(
            "create_fungible_token_tool",
            r#"{"tokenName":"G","tokenSymbol":"G","initialSupply":20,"maxSupply":10}"#,
        )
        .unwrap();
    assert_eq!(
        out["raw"]["error"],
        "Failed to execute Create Fungible Token: Initial supply (20) cannot exceed max supply (10)"
    );
    let out = session
        .call(
            "create_fungible_token_tool",
            r#"{"tokenName":"G","tokenSymbol":"G","initialSupply":1000000000000000000,"decimals":2,"supplyType":"infinite"}"#,
        )
        .unwrap();
    assert_eq!(
        out["raw"]["error"],
        "Failed to execute Create Fungible Token: Initial supply in base units (100000000000000000000) exceeds the HTS int64 maximum of 9223372036854775807. HTS token amounts are stored as int64; use a smaller display-unit value."
    );
}

#[test]
fn fungible_token_is_created_with_the_users_supply_key() {
    let (host, _) = start(LOCAL);
    let mut session = host.default_session();
    let out = session
        .call(
            "create_fungible_token_tool",
            r#"{"tokenName":"Silver","tokenSymbol":"SLV","initialSupply":5,"decimals":1,"supplyType":"infinite","isSupplyKey":true}"#,
        )
        .unwrap();
    assert_eq!(out["raw"]["status"], "SUCCESS", "{out}");
    let token = out["raw"]["tokenId"].as_str().unwrap().to_owned();
    let message = out["humanMessage"].as_str().unwrap();
    assert!(
        message.starts_with("Token created successfully.\nTransaction ID: 0.0.1001@"),
        "{message}"
    );
    assert!(
        message.ends_with(&format!("\nToken ID: {token}")),
        "{message}"
    );

    let info = host.mirror_get(&format!("/tokens/{token}")).unwrap();
    assert_eq!(info["name"], "Silver", "{info}");
    assert_eq!(info["decimals"], "1");
    assert_eq!(info["initial_supply"], "50");
    assert_eq!(info["supply_type"], "INFINITE");
    assert_eq!(info["treasury_account_id"], "0.0.1001");
    assert!(info["supply_key"]["key"].is_string(), "{info}");
    let balances = host
        .mirror_get(&format!("/accounts/0.0.1001/tokens?token.id={token}"))
        .unwrap();
    assert_eq!(balances["tokens"][0]["balance"], 50, "{balances}");
}

#[test]
fn nft_collection_is_finite_by_default_with_the_users_supply_key() {
    let (host, _) = start(LOCAL);
    let mut session = host.default_session();
    let out = session
        .call(
            "create_non_fungible_token_tool",
            r#"{"tokenName":"Art","tokenSymbol":"ART"}"#,
        )
        .unwrap();
    assert_eq!(out["raw"]["status"], "SUCCESS", "{out}");
    let token = out["raw"]["tokenId"].as_str().unwrap().to_owned();
    assert!(out["humanMessage"]
        .as_str()
        .unwrap()
        .ends_with(&format!("\nToken ID: {token}")));
    let info = host.mirror_get(&format!("/tokens/{token}")).unwrap();
    assert_eq!(info["type"], "NON_FUNGIBLE_UNIQUE", "{info}");
    assert_eq!(info["supply_type"], "FINITE");
    assert_eq!(info["max_supply"], "100");
    assert_eq!(info["auto_renew_period"], 7_776_000);
    assert!(info["supply_key"]["key"].is_string(), "{info}");

    // supplyType "infinite" wins only without a maxSupply.
    let out = session
        .call(
            "create_non_fungible_token_tool",
            r#"{"tokenName":"Art","tokenSymbol":"ART","supplyType":"infinite","maxSupply":7}"#,
        )
        .unwrap();
    let token = out["raw"]["tokenId"].as_str().unwrap().to_owned();
    let info = host.mirror_get(&format!("/tokens/{token}")).unwrap();
    assert_eq!(info["max_supply"], "7", "{info}");
    let out = session
        .call(
            "create_non_fungible_token_tool",
            r#"{"tokenName":"Art","tokenSymbol":"ART","supplyType":"infinite"}"#,
        )
        .unwrap();
    let token = out["raw"]["tokenId"].as_str().unwrap().to_owned();
    let info = host.mirror_get(&format!("/tokens/{token}")).unwrap();
    assert_eq!(info["supply_type"], "INFINITE", "{info}");
}

#[test]
fn tokens_are_associated_and_dissociated() {
    let (host, _) = start(LOCAL);
    let mut session = host.default_session();
    let token = session
        .call(
            "create_fungible_token_tool",
            r#"{"tokenName":"Copper","tokenSymbol":"CU"}"#,
        )
        .unwrap()["raw"]["tokenId"]
        .as_str()
        .unwrap()
        .to_owned();
    // An account with the user's key, so the user can sign for it.
    let account = session
        .call("create_account_tool", r#"{"initialBalance":1}"#)
        .unwrap()["raw"]["accountId"]
        .as_str()
        .unwrap()
        .to_owned();
    let held = |host: &hak_host::host::Host| {
        host.mirror_get(&format!("/accounts/{account}/tokens"))
            .unwrap()["tokens"]
            .as_array()
            .unwrap()
            .len()
    };
    assert_eq!(held(&host), 0);
    let out = session
        .call(
            "associate_token_tool",
            &format!(r#"{{"accountId":"{account}","tokenIds":["{token}"]}}"#),
        )
        .unwrap();
    assert_eq!(out["raw"]["status"], "SUCCESS", "{out}");
    assert!(out["humanMessage"]
        .as_str()
        .unwrap()
        .starts_with("Tokens successfully associated with transaction id 0.0.1001@"));
    assert_eq!(held(&host), 1);
    let out = session
        .call(
            "dissociate_token_tool",
            &format!(r#"{{"accountId":"{account}","tokenIds":["{token}"]}}"#),
        )
        .unwrap();
    assert_eq!(out["raw"]["status"], "SUCCESS", "{out}");
    assert_eq!(held(&host), 0);

    let out = session
        .call("associate_token_tool", r#"{"tokenIds":["0.0.1","nope"]}"#)
        .unwrap();
    assert_eq!(
        out["raw"]["error"],
        "Failed to execute Associate Token(s): failed to parse entity id: nope"
    );
}

#[test]
fn fungible_and_nft_supplies_are_minted() {
    let (host, _) = start(LOCAL);
    let mut session = host.default_session();
    let created = |session: &mut hak_host::Session, tool: &str, params: &str| {
        let out = session.call(tool, params).unwrap();
        assert_eq!(out["raw"]["status"], "SUCCESS", "{out}");
        out["raw"]["tokenId"].as_str().unwrap().to_owned()
    };
    let coin = created(
        &mut session,
        "create_fungible_token_tool",
        r#"{"tokenName":"Coin","tokenSymbol":"C","decimals":2,"initialSupply":1,"isSupplyKey":true}"#,
    );
    let out = session
        .call(
            "mint_fungible_token_tool",
            &format!(r#"{{"tokenId":"{coin}","amount":1.5}}"#),
        )
        .unwrap();
    assert_eq!(out["raw"]["status"], "SUCCESS", "{out}");
    assert!(out["humanMessage"]
        .as_str()
        .unwrap()
        .starts_with("Tokens successfully minted.\nTransaction ID: 0.0.1001@"));
    let info = host.mirror_get(&format!("/tokens/{coin}")).unwrap();
    assert_eq!(info["total_supply"], "250", "{info}");
    // Less than one base unit: said as such, not "must be greater than 0".
    let out = session
        .call(
            "mint_fungible_token_tool",
            &format!(r#"{{"tokenId":"{coin}","amount":5e-9}}"#),
        )
        .unwrap();
    assert_eq!(
        out["raw"]["error"],
        format!("Failed to execute Mint Fungible Token: Invalid parameters: Field \"amount\" - 5e-9 is less than one base unit of token {coin} (2 decimals)"),
        "{out}"
    );
    let out = session
        .call(
            "get_token_info_query_tool",
            &format!(r#"{{"tokenId":"{coin}"}}"#),
        )
        .unwrap();
    assert_eq!(out["raw"]["tokenInfo"]["symbol"], "C", "{out}");
    let message = out["humanMessage"].as_str().unwrap();
    assert!(
        message.starts_with(&format!("Here are the details for token **{coin}**:\n\n- **Token Name**: Coin\n- **Token Symbol**: C\n- **Token Type**: FUNGIBLE_COMMON\n- **Decimals**: 2\n- **Max Supply**: 1,000,000\n- **Current Supply**: 2.5\n- **Supply Type**: Finite\n- **Treasury Account ID**: 0.0.1001\n")),
        "{message}"
    );
    assert!(
        message.contains("\n- Admin Key: Not Set\n- Supply Key: "),
        "{message}"
    );
    let out = session
        .call(
            "get_account_token_balances_query_tool",
            &format!(r#"{{"tokenId":"{coin}"}}"#),
        )
        .unwrap();
    assert_eq!(
        out["humanMessage"],
        format!("Details for 0.0.1001\n--- Token Balances ---\n Token: {coin}, Symbol: C  Balance: 2.5, Decimals: 2\n\nThe token balances are returned in display units!\n").as_str(),
        "{out}"
    );
    let out = session
        .call(
            "get_account_token_balances_query_tool",
            r#"{"accountId":"0.0.1002"}"#,
        )
        .unwrap();
    assert_eq!(
        out["humanMessage"], "No token balances found for account 0.0.1002",
        "{out}"
    );

    let art = created(
        &mut session,
        "create_non_fungible_token_tool",
        r#"{"tokenName":"Art","tokenSymbol":"ART"}"#,
    );
    let out = session
        .call(
            "mint_non_fungible_token_tool",
            &format!(r#"{{"tokenId":"{art}","uris":["ipfs://a","ipfs://b"]}}"#),
        )
        .unwrap();
    assert_eq!(out["raw"]["status"], "SUCCESS", "{out}");
    assert!(
        out["humanMessage"]
            .as_str()
            .unwrap()
            .ends_with("\nSerial(s): 1, 2"),
        "{out}"
    );
    let nfts = host.mirror_get("/accounts/0.0.1001/nfts").unwrap();
    assert!(nfts.to_string().contains(&art), "{nfts}");

    let out = session
        .call(
            "mint_fungible_token_tool",
            r#"{"tokenId":"0.0.424242","amount":1}"#,
        )
        .unwrap();
    assert_eq!(
        out["raw"]["error"],
        "Failed to execute Mint Fungible Token: Failed to get token info for a token 0.0.424242: 404 Not Found"
    );
    let long = "x".repeat(101);
    let out = session
        .call(
            "mint_non_fungible_token_tool",
            &format!(r#"{{"tokenId":"{art}","uris":["ok","{long}"]}}"#),
        )
        .unwrap();
    assert!(
        out["raw"]["error"]
            .as_str()
            .unwrap()
            .contains("Field \"uris.1\""),
        "{out}"
    );
}

/// A new treasury receives the old treasury's whole balance of the token: `update_token_tool`
/// with `treasuryAccountId` moves value, so a recipient policy must judge it. Before, its
/// facts named only the token changed and no value policy listed the tool, so a denylisted
/// account could be handed every token of the treasury.
#[test]
fn a_treasury_change_is_judged_as_moving_the_whole_balance() {
    let deny = plugin_entry(
        "deny",
        "rust/recipient-denylist",
        "config = { accounts = [\"0.0.1005\"] }",
    );
    let (host, _) = start(&format!("{LOCAL}{deny}"));
    let mut session = host.default_session();
    // A token the agent may update (the user's admin key), the agent its treasury.
    let token = token_with_admin_key(&host, 0, false);
    let out = session
        .call(
            "update_token_tool",
            &format!(r#"{{"tokenId":"{token}","treasuryAccountId":"0.0.1005"}}"#),
        )
        .unwrap();
    assert_eq!(out["raw"]["errorCode"], "POLICY_BLOCKED", "{out}");
    assert_eq!(
        out["raw"]["policyBlock"]["reason"], "0.0.1005 is a denylisted recipient",
        "{out}"
    );
    let info = host.mirror_get(&format!("/tokens/{token}")).unwrap();
    assert_eq!(
        info["treasury_account_id"], "0.0.1001",
        "nothing moved: {info}"
    );
    // Another treasury, or no treasury change, is judged and let through by the policy.
    for params in [
        format!(r#"{{"tokenId":"{token}","treasuryAccountId":"0.0.1006"}}"#),
        format!(r#"{{"tokenId":"{token}","tokenMemo":"m"}}"#),
    ] {
        let out = session.call("update_token_tool", &params).unwrap();
        assert_ne!(out["raw"]["errorCode"], "POLICY_BLOCKED", "{out}");
    }
}
