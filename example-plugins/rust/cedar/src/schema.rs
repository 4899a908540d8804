//! The built-in Cedar schema: the entity types a request names (`Agent`, `Network`), the
//! context every call carries (`Call`, from the host's facts) and one action per tool, each
//! in `Action::"transaction"` or `Action::"query"`. What must not live here: reading a call
//! (`request`) or checking policies (`load`).

/// The schema policies are validated against when the config gives none (Cedar's schema
/// syntax). `docs/OPERATIONS.md` ("Cedar policies") explains every attribute.
pub const BUILTIN_HEAD: &str = r#"// An agent: its name under [[agents]], else its account id.
entity Agent = {
  // The account the agent acts for ("" when the context has none).
  account: String,
  // autonomous, returnBytes, customExecuteTx or customReturnBytes.
  mode: String,
};
// The network the host runs on: mainnet, testnet, previewnet or custom.
entity Network;
// What a call does, as the host states it.
type Call = {
  // Tinybars the call moves or makes spendable to others (transfers, allowances, a new
  // account's initial balance, a deleted account's balance), summed; 9223372036854775807
  // when it moves "all of it".
  hbarOut: Long,
  // The most tinybars any one recipient receives or may spend.
  maxHbarToOne: Long,
  // Every existing account receiving value or an allowance (HBAR, tokens, NFTs).
  recipients: Set<String>,
  // Every existing token the call names.
  tokens: Set<String>,
  // The account the value comes from, when the tool names one ("" otherwise).
  source: String,
  // Every entity (account, token, topic) the call updates or deletes.
  changes: Set<String>,
  // Whether the call grants, changes or removes an allowance.
  allowance: Bool,
  // The transaction memo ("" when none).
  memo: String,
  // Whether the call is wrapped in a scheduled transaction.
  scheduled: Bool,
  // The host clock's hour (0-23) and weekday (mon, tue, wed, thu, fri, sat, sun) in UTC.
  hourUtc: Long,
  weekdayUtc: String,
};
action transaction, query;
"#;

/// The query tools: each an action in `Action::"query"`.
pub const QUERIES: [&str; 10] = [
    "get_account_query_tool",
    "get_account_token_balances_query_tool",
    "get_contract_info_query_tool",
    "get_exchange_rate_tool",
    "get_hbar_balance_query_tool",
    "get_pending_airdrop_tool",
    "get_token_info_query_tool",
    "get_topic_info_query_tool",
    "get_topic_messages_query_tool",
    "get_transaction_record_query_tool",
];

/// The transaction tools: each an action in `Action::"transaction"`.
pub const TRANSACTIONS: [&str; 34] = [
    "airdrop_fungible_token_tool",
    "approve_hbar_allowance_tool",
    "approve_nft_allowance_tool",
    "approve_token_allowance_tool",
    "associate_token_tool",
    "create_account_tool",
    "create_erc20_tool",
    "create_erc721_tool",
    "create_fungible_token_tool",
    "create_non_fungible_token_tool",
    "create_topic_tool",
    "delete_account_tool",
    "delete_hbar_allowance_tool",
    "delete_non_fungible_token_allowance_tool",
    "delete_token_allowance_tool",
    "delete_topic_tool",
    "dissociate_token_tool",
    "mint_erc721_tool",
    "mint_fungible_token_tool",
    "mint_non_fungible_token_tool",
    "schedule_delete_tool",
    "sign_schedule_transaction_tool",
    "submit_topic_message_tool",
    "transfer_erc20_tool",
    "transfer_erc721_tool",
    "transfer_fungible_token_tool",
    "transfer_fungible_token_with_allowance_tool",
    "transfer_hbar_tool",
    "transfer_hbar_with_allowance_tool",
    "transfer_non_fungible_token_tool",
    "transfer_non_fungible_token_with_allowance_tool",
    "update_account_tool",
    "update_token_tool",
    "update_topic_tool",
];

/// The built-in schema's text: [`BUILTIN_HEAD`] and one action per tool.
pub fn builtin() -> String {
    let mut text = String::from(BUILTIN_HEAD);
    for (group, tools) in [("query", &QUERIES[..]), ("transaction", &TRANSACTIONS[..])] {
        for tool in tools {
            text.push_str(&format!(
                "action \"{tool}\" in [{group}] appliesTo {{ principal: [Agent], resource: [Network], context: Call }};\n"
            ));
        }
    }
    text
}
