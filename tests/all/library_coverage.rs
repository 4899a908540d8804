//! Every tool each list policy covers, allowed and blocked: the recipient allow/deny lists over
//! all 13 tools that name a recipient, the token allowlist over all 15 tools that name a token,
//! the memo policy over all 13 tools that take a memo. Return-bytes mode against the mirror of
//! a seeded local network (for token decimals), so "allowed" means the bytes were built.

use hak_host::Host;
use hak_tests::*;
use serde_json::{json, Value};

struct Seeded {
    _base: Host,
    mirror: String,
    ft: String,
    other_ft: String,
    nft: String,
}

fn seeded() -> Seeded {
    let base = start("[network]\nname = \"local\"\n\n[context]\naccount_id = \"0.0.1001\"\n").0;
    let mut s = base.default_session();
    let mut create = |tool: &str, params: Value| {
        let out = s.call(tool, &params.to_string()).unwrap();
        assert_eq!(out["raw"]["status"], "SUCCESS", "{out}");
        out["raw"]["tokenId"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    let ft = create(
        "create_fungible_token_tool",
        json!({"tokenName": "A", "tokenSymbol": "A", "initialSupply": 100}),
    );
    let other_ft = create(
        "create_fungible_token_tool",
        json!({"tokenName": "B", "tokenSymbol": "B", "initialSupply": 100}),
    );
    let nft = create(
        "create_non_fungible_token_tool",
        json!({"tokenName": "N", "tokenSymbol": "N"}),
    );
    create(
        "mint_non_fungible_token_tool",
        json!({"tokenId": nft, "uris": ["ipfs://1", "ipfs://2"]}),
    );
    let mirror = base.local_network().unwrap().mirror_url();
    Seeded {
        _base: base,
        mirror,
        ft,
        other_ft,
        nft,
    }
}

fn host(seed: &Seeded, plugin: &str, config: &str) -> Host {
    let header = RETURN_BYTES_HEADER.replacen(
        "[network]\n",
        &format!("[network]\nmirror_url = {:?}\n", seed.mirror),
        1,
    );
    let entry = plugin_entry(
        plugin,
        &format!("rust/{plugin}"),
        &format!("config = {config}"),
    );
    start(&format!("{header}{entry}")).0
}

/// A call of each recipient-naming tool sending to `to`.
fn to_recipient(seed: &Seeded, to: &str) -> Vec<(&'static str, Value)> {
    let (ft, nft) = (&seed.ft, &seed.nft);
    vec![
        (
            "transfer_hbar_tool",
            json!({"transfers": [{"accountId": to, "amount": 1}]}),
        ),
        (
            "transfer_hbar_with_allowance_tool",
            json!({"sourceAccountId": "0.0.1002", "transfers": [{"accountId": to, "amount": 1}]}),
        ),
        (
            "transfer_fungible_token_tool",
            json!({"tokenId": ft, "transfers": [{"accountId": to, "amount": 1}]}),
        ),
        (
            "transfer_fungible_token_with_allowance_tool",
            json!({"tokenId": ft, "sourceAccountId": "0.0.1002", "transfers": [{"accountId": to, "amount": 1}]}),
        ),
        (
            "airdrop_fungible_token_tool",
            json!({"tokenId": ft, "recipients": [{"accountId": to, "amount": 1}]}),
        ),
        (
            "transfer_non_fungible_token_tool",
            json!({"tokenId": nft, "recipients": [{"recipientId": to, "serialNumber": 1}]}),
        ),
        (
            "transfer_non_fungible_token_with_allowance_tool",
            json!({"sourceAccountId": "0.0.1002", "tokenId": nft, "recipients": [{"recipientId": to, "serialNumber": 1}]}),
        ),
        (
            "approve_hbar_allowance_tool",
            json!({"spenderAccountId": to, "amount": 1}),
        ),
        (
            "delete_hbar_allowance_tool",
            json!({"spenderAccountId": to}),
        ),
        (
            "approve_token_allowance_tool",
            json!({"spenderAccountId": to, "tokenApprovals": [{"tokenId": ft, "amount": 1}]}),
        ),
        (
            "delete_token_allowance_tool",
            json!({"spenderAccountId": to, "tokenIds": [ft]}),
        ),
        (
            "approve_nft_allowance_tool",
            json!({"spenderAccountId": to, "tokenId": nft, "serialNumbers": [1]}),
        ),
        (
            "delete_account_tool",
            json!({"accountId": "0.0.1005", "transferAccountId": to}),
        ),
    ]
}

/// A call of each token-naming tool naming `token` (an NFT id for the NFT tools).
fn naming_token(token: &str, nft: &str) -> Vec<(&'static str, Value)> {
    vec![
        (
            "transfer_fungible_token_tool",
            json!({"tokenId": token, "transfers": [{"accountId": "0.0.1002", "amount": 1}]}),
        ),
        (
            "transfer_fungible_token_with_allowance_tool",
            json!({"tokenId": token, "sourceAccountId": "0.0.1002", "transfers": [{"accountId": "0.0.1003", "amount": 1}]}),
        ),
        (
            "airdrop_fungible_token_tool",
            json!({"tokenId": token, "recipients": [{"accountId": "0.0.1002", "amount": 1}]}),
        ),
        (
            "transfer_non_fungible_token_tool",
            json!({"tokenId": nft, "recipients": [{"recipientId": "0.0.1002", "serialNumber": 1}]}),
        ),
        (
            "transfer_non_fungible_token_with_allowance_tool",
            json!({"sourceAccountId": "0.0.1002", "tokenId": nft, "recipients": [{"recipientId": "0.0.1003", "serialNumber": 1}]}),
        ),
        (
            "approve_token_allowance_tool",
            json!({"spenderAccountId": "0.0.1002", "tokenApprovals": [{"tokenId": token, "amount": 1}]}),
        ),
        (
            "delete_token_allowance_tool",
            json!({"spenderAccountId": "0.0.1002", "tokenIds": [token]}),
        ),
        (
            "approve_nft_allowance_tool",
            json!({"spenderAccountId": "0.0.1002", "tokenId": nft, "serialNumbers": [1]}),
        ),
        (
            "delete_non_fungible_token_allowance_tool",
            json!({"tokenId": nft, "serialNumbers": [1]}),
        ),
        (
            "mint_fungible_token_tool",
            json!({"tokenId": token, "amount": 1}),
        ),
        (
            "mint_non_fungible_token_tool",
            json!({"tokenId": nft, "uris": ["ipfs://3"]}),
        ),
        (
            "associate_token_tool",
            json!({"accountId": "0.0.1002", "tokenIds": [token]}),
        ),
        (
            "dissociate_token_tool",
            json!({"accountId": "0.0.1002", "tokenIds": [token]}),
        ),
        (
            "update_token_tool",
            json!({"tokenId": token, "tokenMemo": "x"}),
        ),
        ("get_token_info_query_tool", json!({"tokenId": token})),
    ]
}

fn code(out: &Value) -> Option<&str> {
    out["raw"]["policyBlock"]["reasonCode"].as_str()
}

/// Run the calls: each must be blocked with `blocked_code`, or (with `None`) pass the policy
/// (and, with `must_build`, succeed).
fn check(host: &Host, calls: &[(&str, Value)], blocked_code: Option<&str>, must_build: bool) {
    let mut s = host.default_session();
    for (tool, params) in calls {
        let out = s.call(tool, &params.to_string()).unwrap();
        match blocked_code {
            Some(want) => assert_eq!(code(&out), Some(want), "{tool} {params}: {out}"),
            None => {
                assert_eq!(
                    out["raw"]["errorCode"]
                        .as_str()
                        .filter(|c| *c == "POLICY_BLOCKED"),
                    None,
                    "{tool} {params}: {out}"
                );
                if must_build {
                    assert_eq!(out["raw"]["status"], "SUCCESS", "{tool} {params}: {out}");
                }
            }
        }
    }
}

#[test]
fn recipient_lists_cover_every_recipient_naming_tool() {
    let seed = seeded();
    let deny = host(&seed, "recipient-denylist", "{ accounts = [\"0.0.1666\"] }");
    check(
        &deny,
        &to_recipient(&seed, "0.0.1666"),
        Some("RECIPIENT_DENIED"),
        false,
    );
    check(&deny, &to_recipient(&seed, "0.0.1003"), None, true);
    let allow = host(
        &seed,
        "recipient-allowlist",
        "{ accounts = [\"0.0.1003\"] }",
    );
    check(
        &allow,
        &to_recipient(&seed, "0.0.1666"),
        Some("RECIPIENT_NOT_ALLOWED"),
        false,
    );
    check(&allow, &to_recipient(&seed, "0.0.1003"), None, true);
}

#[test]
fn token_allowlist_covers_every_token_naming_tool() {
    let seed = seeded();
    let allow = host(
        &seed,
        "token-allowlist",
        &format!("{{ tokens = [\"{}\", \"{}\"] }}", seed.ft, seed.nft),
    );
    let blocked = naming_token(&seed.other_ft, &seed.other_ft);
    assert_eq!(blocked.len(), 15);
    check(&allow, &blocked, Some("TOKEN_NOT_ALLOWED"), false);
    // update_token fails its own mirror check (no admin key), but not on the policy.
    check(&allow, &naming_token(&seed.ft, &seed.nft), None, false);
}

#[test]
fn required_memo_covers_every_tool_that_takes_a_memo() {
    let seed = seeded();
    let memo = host(&seed, "required-memo", "{}");
    let mut calls: Vec<(&str, Value)> = to_recipient(&seed, "0.0.1003")
        .into_iter()
        .filter(|(t, _)| *t != "delete_account_tool")
        .collect();
    calls.push((
        "delete_non_fungible_token_allowance_tool",
        json!({"tokenId": seed.nft, "serialNumbers": [1]}),
    ));
    assert_eq!(calls.len(), 13);
    check(&memo, &calls, Some("MEMO_REQUIRED"), false);
    for (_, params) in &mut calls {
        params["transactionMemo"] = json!("why");
    }
    check(&memo, &calls, None, true);
}
