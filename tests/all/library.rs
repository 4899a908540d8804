//! The plugin library's policies (`example-plugins/rust/`) through the real host: allowed and
//! blocked calls for the tools each covers (autonomously on the local network where the state
//! matters), budgets and rate limits accumulating and resetting in the host state store,
//! contexts that never see each other's state, and configs refused with the field named.

use hak_host::{AgentContext, AgentMode, Host};
use hak_tests::*;
use serde_json::{json, Value};

fn with_plugin(header: &str, plugin: &str, config: &str) -> Host {
    let entry = plugin_entry(
        plugin,
        &format!("rust/{plugin}"),
        &format!("config = {config}"),
    );
    start(&format!("{header}{entry}")).0
}

fn call(host: &Host, tool: &str, params: Value) -> Value {
    host.default_session()
        .call(tool, &params.to_string())
        .unwrap()
}

pub(crate) fn allowed(out: &Value) {
    assert_eq!(out["raw"]["status"], "SUCCESS", "{out}");
}

/// Blocked by the policy with this reason code; returns the reason.
pub(crate) fn blocked(out: &Value, code: &str) -> String {
    assert_eq!(out["raw"]["errorCode"], "POLICY_BLOCKED", "{out}");
    assert_eq!(out["raw"]["policyBlock"]["reasonCode"], code, "{out}");
    out["raw"]["policyBlock"]["reason"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn refused(plugin: &str, config: &str, needle: &str) {
    let entry = plugin_entry(
        plugin,
        &format!("rust/{plugin}"),
        &format!("config = {config}"),
    );
    let err = match try_start(&format!("{RETURN_BYTES_HEADER}{entry}")) {
        Ok(_) => panic!("{plugin} {config} should be refused"),
        Err(e) => e.to_string(),
    };
    assert!(err.contains(&format!("plugin {plugin}")), "{err}");
    assert!(err.contains(needle), "{plugin} {config}: {err}");
}

fn hbar(to: &str, amount: f64) -> Value {
    json!({"transfers": [{"accountId": to, "amount": amount}]})
}

fn created(out: &Value, field: &str) -> String {
    allowed(out);
    out["raw"][field].as_str().unwrap().to_owned()
}

#[test]
fn read_only_lets_only_queries_through() {
    let host = with_plugin(LOCAL, "read-only", "{}");
    allowed(&call(
        &host,
        "get_hbar_balance_query_tool",
        json!({"accountId": "0.0.1002"}),
    ));
    let reason = blocked(
        &call(&host, "transfer_hbar_tool", hbar("0.0.1002", 1.0)),
        "READ_ONLY",
    );
    assert_eq!(
        reason,
        "transfer_hbar_tool is not a query tool: the agent is read-only"
    );
    blocked(&call(&host, "create_topic_tool", json!({})), "READ_ONLY");
    let host = with_plugin(
        LOCAL,
        "read-only",
        "{ allowTools = [\"create_topic_tool\"] }",
    );
    allowed(&call(&host, "create_topic_tool", json!({})));
    refused("read-only", "{ allow = [] }", "unknown field `allow`");
}

#[test]
fn required_memo_needs_a_memo_on_value_moving_calls() {
    let host = with_plugin(LOCAL, "required-memo", "{ minLength = 3 }");
    blocked(
        &call(&host, "transfer_hbar_tool", hbar("0.0.1002", 1.0)),
        "MEMO_REQUIRED",
    );
    let mut params = hbar("0.0.1002", 1.0);
    params["transactionMemo"] = json!(" ab ");
    blocked(
        &call(&host, "transfer_hbar_tool", params.clone()),
        "MEMO_REQUIRED",
    );
    params["transactionMemo"] = json!("rent");
    allowed(&call(&host, "transfer_hbar_tool", params));
    blocked(
        &call(
            &host,
            "approve_hbar_allowance_tool",
            json!({"spenderAccountId": "0.0.1002", "amount": 1}),
        ),
        "MEMO_REQUIRED",
    );
    // Not relevant: no memo parameter.
    allowed(&call(&host, "create_topic_tool", json!({})));
    refused(
        "required-memo",
        "{ relevantTools = [\"create_topic_tool\"] }",
        "relevantTools.0: create_topic_tool takes no transactionMemo",
    );
    refused("required-memo", "{ minLength = 0 }", "minLength");
}

#[test]
fn no_infinite_supply_blocks_unbounded_tokens() {
    let host = with_plugin(LOCAL, "no-infinite-supply", "{}");
    let out = call(
        &host,
        "create_fungible_token_tool",
        json!({"tokenName": "Inf", "tokenSymbol": "INF", "supplyType": "infinite"}),
    );
    assert_eq!(
        blocked(&out, "INFINITE_SUPPLY"),
        "tokens must have a finite supply"
    );
    blocked(
        &call(
            &host,
            "create_non_fungible_token_tool",
            json!({"tokenName": "N", "tokenSymbol": "N", "supplyType": "infinite"}),
        ),
        "INFINITE_SUPPLY",
    );
    allowed(&call(
        &host,
        "create_fungible_token_tool",
        json!({"tokenName": "Fin", "tokenSymbol": "FIN"}),
    ));
    allowed(&call(
        &host,
        "create_non_fungible_token_tool",
        json!({"tokenName": "N", "tokenSymbol": "N"}),
    ));
    refused(
        "no-infinite-supply",
        "{ strict = true }",
        "unknown field `strict`",
    );
}

#[test]
fn immutable_entities_cannot_be_updated_or_deleted() {
    let host = with_plugin(
        LOCAL,
        "immutable-entities",
        "{ accounts = [\"0.0.1001\"], tokens = [\"0.0.5005\"] }",
    );
    let out = call(
        &host,
        "update_account_tool",
        json!({"accountMemo": "changed"}),
    );
    assert_eq!(
        blocked(&out, "IMMUTABLE_ENTITY"),
        "account 0.0.1001 is immutable"
    );
    blocked(
        &call(
            &host,
            "delete_account_tool",
            json!({"accountId": "0.0.1001", "transferAccountId": "0.0.1002"}),
        ),
        "IMMUTABLE_ENTITY",
    );
    blocked(
        &call(
            &host,
            "update_token_tool",
            json!({"tokenId": "0.0.5005", "tokenName": "x"}),
        ),
        "IMMUTABLE_ENTITY",
    );
    let other = created(
        &call(&host, "create_account_tool", json!({"initialBalance": 1})),
        "accountId",
    );
    allowed(&call(
        &host,
        "update_account_tool",
        json!({"accountId": other, "accountMemo": "ok"}),
    ));
    allowed(&call(
        &host,
        "delete_account_tool",
        json!({"accountId": other, "transferAccountId": "0.0.1001"}),
    ));
    refused(
        "immutable-entities",
        "{ accounts = [\"alice\"] }",
        "accounts.0: \"alice\" is not an entity id",
    );
    refused("immutable-entities", "{}", "list at least one entity");
}

#[test]
fn recipient_allowlist_covers_transfers_allowances_and_deletions() {
    let host = with_plugin(
        LOCAL,
        "recipient-allowlist",
        "{ accounts = [\"0.0.1002\"] }",
    );
    allowed(&call(&host, "transfer_hbar_tool", hbar("0.0.1002", 1.0)));
    let out = call(
        &host,
        "transfer_hbar_tool",
        json!({"transfers": [{"accountId": "0.0.1002", "amount": 1}, {"accountId": "0.0.1003", "amount": 1}]}),
    );
    assert_eq!(
        blocked(&out, "RECIPIENT_NOT_ALLOWED"),
        "0.0.1003 is not an allowlisted recipient"
    );
    blocked(
        &call(
            &host,
            "approve_hbar_allowance_tool",
            json!({"spenderAccountId": "0.0.1003", "amount": 1}),
        ),
        "RECIPIENT_NOT_ALLOWED",
    );
    allowed(&call(
        &host,
        "approve_hbar_allowance_tool",
        json!({"spenderAccountId": "0.0.1002", "amount": 1}),
    ));
    let token = created(
        &call(
            &host,
            "create_fungible_token_tool",
            json!({"tokenName": "G", "tokenSymbol": "G", "initialSupply": 10}),
        ),
        "tokenId",
    );
    blocked(
        &call(
            &host,
            "transfer_fungible_token_tool",
            json!({"tokenId": token, "transfers": [{"accountId": "0.0.1003", "amount": 1}]}),
        ),
        "RECIPIENT_NOT_ALLOWED",
    );
    blocked(
        &call(
            &host,
            "airdrop_fungible_token_tool",
            json!({"tokenId": token, "recipients": [{"accountId": "0.0.1003", "amount": 1}]}),
        ),
        "RECIPIENT_NOT_ALLOWED",
    );
    // A new account is the user's own (allowed by default); its deletion sends the rest away.
    let other = created(
        &call(&host, "create_account_tool", json!({"initialBalance": 1})),
        "accountId",
    );
    blocked(
        &call(
            &host,
            "delete_account_tool",
            json!({"accountId": other, "transferAccountId": "0.0.1003"}),
        ),
        "RECIPIENT_NOT_ALLOWED",
    );
    let strict = with_plugin(
        LOCAL,
        "recipient-allowlist",
        "{ accounts = [\"0.0.1002\"], allowNewAccounts = false }",
    );
    blocked(
        &call(&strict, "create_account_tool", json!({"initialBalance": 1})),
        "RECIPIENT_NOT_ALLOWED",
    );
    refused(
        "recipient-allowlist",
        "{ accounts = [\"0.0.x\"] }",
        "accounts.0",
    );
    refused("recipient-allowlist", "{}", "missing field `accounts`");
}

#[test]
fn recipient_denylist_blocks_listed_recipients_of_any_asset() {
    let host = with_plugin(LOCAL, "recipient-denylist", "{ accounts = [\"0.0.1003\"] }");
    allowed(&call(&host, "transfer_hbar_tool", hbar("0.0.1002", 1.0)));
    let out = call(&host, "transfer_hbar_tool", hbar("0.0.1003", 1.0));
    assert_eq!(
        blocked(&out, "RECIPIENT_DENIED"),
        "0.0.1003 is a denylisted recipient"
    );
    let nft = created(
        &call(
            &host,
            "create_non_fungible_token_tool",
            json!({"tokenName": "A", "tokenSymbol": "A"}),
        ),
        "tokenId",
    );
    allowed(&call(
        &host,
        "mint_non_fungible_token_tool",
        json!({"tokenId": nft, "uris": ["ipfs://1"]}),
    ));
    blocked(
        &call(
            &host,
            "transfer_non_fungible_token_tool",
            json!({"tokenId": nft, "recipients": [{"recipientId": "0.0.1003", "serialNumber": 1}]}),
        ),
        "RECIPIENT_DENIED",
    );
    blocked(
        &call(
            &host,
            "approve_nft_allowance_tool",
            json!({"spenderAccountId": "0.0.1003", "tokenId": nft, "allSerials": true}),
        ),
        "RECIPIENT_DENIED",
    );
    allowed(&call(
        &host,
        "transfer_non_fungible_token_tool",
        json!({"tokenId": nft, "recipients": [{"recipientId": "0.0.1002", "serialNumber": 1}]}),
    ));
}

#[test]
fn token_allowlist_covers_every_tool_that_names_a_token() {
    let setup = start(LOCAL).0;
    let ok_token = created(
        &call(
            &setup,
            "create_fungible_token_tool",
            json!({"tokenName": "A", "tokenSymbol": "A", "initialSupply": 10}),
        ),
        "tokenId",
    );
    let other = created(
        &call(
            &setup,
            "create_fungible_token_tool",
            json!({"tokenName": "B", "tokenSymbol": "B", "initialSupply": 10}),
        ),
        "tokenId",
    );
    // A second host on the same network, with the policy.
    let header = same_network(&setup);
    let host = with_plugin(
        &header,
        "token-allowlist",
        &format!("{{ tokens = [\"{ok_token}\"] }}"),
    );
    allowed(&call(
        &host,
        "transfer_fungible_token_tool",
        json!({"tokenId": ok_token, "transfers": [{"accountId": "0.0.1002", "amount": 1}]}),
    ));
    let out = call(
        &host,
        "transfer_fungible_token_tool",
        json!({"tokenId": other, "transfers": [{"accountId": "0.0.1002", "amount": 1}]}),
    );
    assert_eq!(
        blocked(&out, "TOKEN_NOT_ALLOWED"),
        format!("token {other} is not allowlisted")
    );
    blocked(
        &call(
            &host,
            "associate_token_tool",
            json!({"accountId": "0.0.1003", "tokenIds": [ok_token, other]}),
        ),
        "TOKEN_NOT_ALLOWED",
    );
    blocked(
        &call(
            &host,
            "get_token_info_query_tool",
            json!({"tokenId": other}),
        ),
        "TOKEN_NOT_ALLOWED",
    );
    allowed(&call(
        &host,
        "get_token_info_query_tool",
        json!({"tokenId": ok_token}),
    ));
    blocked(
        &call(
            &host,
            "approve_token_allowance_tool",
            json!({"spenderAccountId": "0.0.1002", "tokenApprovals": [{"tokenId": other, "amount": 1}]}),
        ),
        "TOKEN_NOT_ALLOWED",
    );
    blocked(
        &call(
            &host,
            "mint_fungible_token_tool",
            json!({"tokenId": other, "amount": 1}),
        ),
        "TOKEN_NOT_ALLOWED",
    );
    // Tools that name no token are not its business.
    allowed(&call(&host, "transfer_hbar_tool", hbar("0.0.1002", 1.0)));
}

#[test]
fn time_window_follows_the_host_clock() {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let hour = (now / 3600) % 24;
    let day = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"][((now / 86_400 + 4) % 7) as usize];
    let open = with_plugin(
        RETURN_BYTES_HEADER,
        "time-window",
        &format!(
            "{{ weekdays = [\"{day}\"], fromHour = {hour}, toHour = {} }}",
            hour + 1
        ),
    );
    allowed(&call(&open, "transfer_hbar_tool", hbar("0.0.1002", 1.0)));
    let closed = with_plugin(
        RETURN_BYTES_HEADER,
        "time-window",
        &format!(
            "{{ fromHour = {}, toHour = {} }}",
            (hour + 1) % 24,
            (hour + 2) % 24
        ),
    );
    let out = call(&closed, "transfer_hbar_tool", hbar("0.0.1002", 1.0));
    assert_eq!(
        blocked(&out, "OUTSIDE_TIME_WINDOW"),
        "transfer_hbar_tool is outside the allowed time window"
    );
    refused(
        "time-window",
        "{ weekdays = [\"funday\"] }",
        "weekdays.0: \"funday\" is not a weekday",
    );
    refused("time-window", "{ fromHour = 25 }", "fromHour");
}

fn session_for(host: &Host, account: u64) -> hak_host::Session {
    host.session(AgentContext {
        account_id: Some(hedera::AccountId::new(0, 0, account)),
        mode: AgentMode::ReturnBytes,
    })
}

#[test]
fn rate_limit_counts_per_tool_per_context_and_slides() {
    let host = with_plugin(
        RETURN_BYTES_HEADER,
        "rate-limit",
        "{ limit = 2, windowSeconds = 1 }",
    );
    let mut a = session_for(&host, 1001);
    let transfer = hbar("0.0.1002", 1.0).to_string();
    allowed(&a.call("transfer_hbar_tool", &transfer).unwrap());
    allowed(&a.call("transfer_hbar_tool", &transfer).unwrap());
    let out = a.call("transfer_hbar_tool", &transfer).unwrap();
    assert_eq!(
        blocked(&out, "RATE_LIMITED"),
        "rate limit reached: 2 calls per 1 s for transfer_hbar_tool"
    );
    // Another tool has its own count; another context its own state.
    allowed(&a.call("create_topic_tool", "{}").unwrap());
    let mut b = session_for(&host, 1005);
    allowed(&b.call("transfer_hbar_tool", &transfer).unwrap());
    // The window slides.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    allowed(&a.call("transfer_hbar_tool", &transfer).unwrap());

    let host = with_plugin(
        RETURN_BYTES_HEADER,
        "rate-limit",
        "{ limit = 1, windowSeconds = 60, per = \"toolType\" }",
    );
    let mut s = session_for(&host, 1001);
    allowed(&s.call("transfer_hbar_tool", &transfer).unwrap());
    blocked(&s.call("create_topic_tool", "{}").unwrap(), "RATE_LIMITED");
    refused("rate-limit", "{ limit = 0, windowSeconds = 1 }", "limit");
    refused(
        "rate-limit",
        "{ limit = 1, windowSeconds = 1, per = \"agent\" }",
        "unknown variant `agent`",
    );
}

#[test]
fn spend_limit_caps_recipients_transactions_and_a_rolling_budget() {
    let config = "{ maxHbarPerRecipient = 2, maxHbarPerTransaction = \"3.5\", dailyHbarBudget = 5, budgetWindowSeconds = 1 }";
    let host = with_plugin(RETURN_BYTES_HEADER, "spend-limit", config);
    let mut a = session_for(&host, 1001);
    let send = |s: &mut hak_host::Session, params: Value| {
        s.call("transfer_hbar_tool", &params.to_string()).unwrap()
    };
    let out = send(&mut a, hbar("0.0.1002", 2.5));
    assert_eq!(
        blocked(&out, "SPEND_LIMIT_RECIPIENT"),
        "2.5 HBAR to 0.0.1002 exceeds the per-recipient limit of 2 HBAR"
    );
    let two_by_two = json!({"transfers": [{"accountId": "0.0.1002", "amount": 2}, {"accountId": "0.0.1003", "amount": 2}]});
    let out = send(&mut a, two_by_two);
    assert_eq!(
        blocked(&out, "SPEND_LIMIT_TRANSACTION"),
        "4 HBAR in one call exceeds the per-transaction limit of 3.5 HBAR"
    );
    // Budget 5: 2 + 2 pass, the next 2 would make 6. Blocked calls above did not count.
    allowed(&send(&mut a, hbar("0.0.1002", 2.0)));
    allowed(&send(&mut a, hbar("0.0.1002", 2.0)));
    let out = send(&mut a, hbar("0.0.1002", 2.0));
    assert_eq!(
        blocked(&out, "SPEND_LIMIT_BUDGET"),
        "2 HBAR would exceed the budget of 5 HBAR per 1 s (4 HBAR already spent)"
    );
    assert_eq!(out["raw"]["policyBlock"]["details"]["spent"], "400000000");
    allowed(&send(&mut a, hbar("0.0.1002", 1.0)));
    // Another context has its own budget.
    let mut b = session_for(&host, 1005);
    allowed(&send(&mut b, hbar("0.0.1002", 2.0)));
    // The window rolls over.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    allowed(&send(&mut a, hbar("0.0.1002", 2.0)));
    // Allowances count as value handed over.
    let out = a
        .call(
            "approve_hbar_allowance_tool",
            r#"{"spenderAccountId":"0.0.1002","amount":3}"#,
        )
        .unwrap();
    blocked(&out, "SPEND_LIMIT_RECIPIENT");

    refused("spend-limit", "{}", "set at least one cap");
    refused(
        "spend-limit",
        "{ maxHbarPerRecipient = \"lots\" }",
        "maxHbarPerRecipient: \"lots\" is not a non-negative amount",
    );
    refused(
        "spend-limit",
        "{ tokens = { \"0.0.7\" = { maxPerRecipient = 1.5 } } }",
        "tokens.0.0.7.maxPerRecipient",
    );
}

#[test]
fn spend_limit_counts_only_successful_calls_and_caps_tokens() {
    let setup = start(LOCAL).0;
    let token = created(
        &call(
            &setup,
            "create_fungible_token_tool",
            json!({"tokenName": "G", "tokenSymbol": "G", "initialSupply": 1000}),
        ),
        "tokenId",
    );
    let header = same_network(&setup);
    let config = format!("{{ dailyHbarBudget = 3, tokens = {{ \"{token}\" = {{ maxPerRecipient = 100, dailyBudget = \"150\" }} }} }}");
    let host = with_plugin(&header, "spend-limit", &config);
    let mut s = host.default_session();
    // A transfer the network refuses (no such account) spends nothing.
    let out = s
        .call("transfer_hbar_tool", &hbar("0.0.999999", 2.0).to_string())
        .unwrap();
    assert_eq!(out["raw"]["status"], "ERROR", "{out}");
    assert_ne!(out["raw"]["errorCode"], "POLICY_BLOCKED", "{out}");
    allowed(
        &s.call("transfer_hbar_tool", &hbar("0.0.1002", 2.0).to_string())
            .unwrap(),
    );
    blocked(
        &s.call("transfer_hbar_tool", &hbar("0.0.1002", 1.5).to_string())
            .unwrap(),
        "SPEND_LIMIT_BUDGET",
    );
    let tokens = |amount: u64| {
        json!({"tokenId": token, "transfers": [{"accountId": "0.0.1002", "amount": amount}]})
            .to_string()
    };
    let out = s
        .call("transfer_fungible_token_tool", &tokens(101))
        .unwrap();
    assert_eq!(blocked(&out, "SPEND_LIMIT_RECIPIENT"), format!("101 units of {token} to 0.0.1002 exceeds the per-recipient limit of 100 units of {token}"));
    allowed(
        &s.call("transfer_fungible_token_tool", &tokens(100))
            .unwrap(),
    );
    blocked(
        &s.call("transfer_fungible_token_tool", &tokens(60)).unwrap(),
        "SPEND_LIMIT_BUDGET",
    );
    allowed(&s.call("transfer_fungible_token_tool", &tokens(50)).unwrap());
}
