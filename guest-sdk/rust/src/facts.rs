//! What a tool call does, read from its normalised params: the value it moves (HBAR, token
//! base units, NFTs; to whom; by transfer or by allowance), the tokens it names, the accounts and
//! tokens it changes. Policies that decide on "who gets what" share these readers instead of
//! knowing every tool's shape. Shapes are hak's normalised params (see `wit/README.md`); the
//! readers are total: unknown tools and missing fields give empty answers, never errors.

use serde_json::Value;

/// What moves.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Asset {
    Hbar,
    /// A fungible token, by id.
    Token(String),
    /// An NFT collection, by token id (`amount` counts serials).
    Nft(String),
}

/// How the value reaches the recipient.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Via {
    /// Moved now (a transfer, an airdrop, a new account's initial balance, a deleted account's
    /// remaining balance).
    Transfer,
    /// Made spendable by the recipient (an allowance; `amount` is the allowance, 0 removes it).
    Allowance,
}

/// One recipient's share of a call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Movement {
    pub asset: Asset,
    /// The receiving account (`"0.0.x"`); `None` when it does not exist yet (a new account).
    pub to: Option<String>,
    /// Tinybars, token base units, or a number of NFTs (`u64::MAX` for "all serials").
    pub amount: u128,
    pub via: Via,
}

fn text(v: &Value) -> Option<String> {
    v.as_str().map(str::to_owned)
}

/// A signed 64-bit amount written as a decimal string (or a number).
fn amount(v: &Value) -> Option<i128> {
    match v {
        Value::String(s) => s.trim().parse().ok(),
        Value::Number(n) => n.as_i64().map(i128::from),
        _ => None,
    }
}

fn list(v: &Value) -> &[Value] {
    v.as_array().map(Vec::as_slice).unwrap_or_default()
}

/// Positive credits of a `[{accountId, amount}]` list (debits and zeros are the sender's).
fn credits(out: &mut Vec<Movement>, entries: &Value, asset: &Asset) {
    for e in list(entries) {
        if let Some(a) = amount(&e["amount"]).filter(|a| *a > 0) {
            out.push(Movement {
                asset: asset.clone(),
                to: text(&e["accountId"]),
                amount: a as u128,
                via: Via::Transfer,
            });
        }
    }
}

/// The value a call moves to others, by recipient. Empty for tools that move none.
pub fn movements(method: &str, normalised: &Value) -> Vec<Movement> {
    let n = normalised;
    let mut out = Vec::new();
    let token = || text(&n["tokenId"]).unwrap_or_default();
    match method {
        "transfer_hbar_tool" | "transfer_hbar_with_allowance_tool" => {
            credits(&mut out, &n["hbarTransfers"], &Asset::Hbar)
        }
        "transfer_fungible_token_tool"
        | "transfer_fungible_token_with_allowance_tool"
        | "airdrop_fungible_token_tool" => {
            credits(&mut out, &n["tokenTransfers"], &Asset::Token(token()))
        }
        "transfer_non_fungible_token_tool" | "transfer_non_fungible_token_with_allowance_tool" => {
            for r in list(&n["recipients"]) {
                out.push(Movement {
                    asset: Asset::Nft(token()),
                    to: text(&r["recipientId"]),
                    amount: 1,
                    via: Via::Transfer,
                });
            }
        }
        "approve_hbar_allowance_tool" | "delete_hbar_allowance_tool" => {
            for a in list(&n["hbarApprovals"]) {
                out.push(Movement {
                    asset: Asset::Hbar,
                    to: text(&a["spenderAccountId"]),
                    amount: amount(&a["amount"]).unwrap_or(0).max(0) as u128,
                    via: Via::Allowance,
                });
            }
        }
        "approve_token_allowance_tool" | "delete_token_allowance_tool" => {
            for a in list(&n["tokenApprovals"]) {
                out.push(Movement {
                    asset: Asset::Token(text(&a["tokenId"]).unwrap_or_default()),
                    to: text(&a["spenderAccountId"]),
                    amount: amount(&a["amount"]).unwrap_or(0).max(0) as u128,
                    via: Via::Allowance,
                });
            }
        }
        "approve_nft_allowance_tool" => {
            let count = if n["allSerials"].as_bool() == Some(true) {
                u64::MAX as u128
            } else {
                list(&n["serialNumbers"]).len() as u128
            };
            out.push(Movement {
                asset: Asset::Nft(token()),
                to: text(&n["spenderAccountId"]),
                amount: count,
                via: Via::Allowance,
            });
        }
        "create_account_tool" => {
            if let Some(a) = amount(&n["initialBalance"]).filter(|a| *a > 0) {
                out.push(Movement {
                    asset: Asset::Hbar,
                    to: None,
                    amount: a as u128,
                    via: Via::Transfer,
                });
            }
        }
        "delete_account_tool" => out.push(Movement {
            asset: Asset::Hbar,
            to: text(&n["transferAccountId"]),
            // The whole remaining balance, unknown here.
            amount: u64::MAX as u128,
            via: Via::Transfer,
        }),
        _ => {}
    }
    out
}

/// Tools that move value or grant allowances (what [`movements`] reads).
pub const VALUE_TOOLS: [&str; 15] = [
    "transfer_hbar_tool",
    "transfer_hbar_with_allowance_tool",
    "transfer_fungible_token_tool",
    "transfer_fungible_token_with_allowance_tool",
    "airdrop_fungible_token_tool",
    "transfer_non_fungible_token_tool",
    "transfer_non_fungible_token_with_allowance_tool",
    "approve_hbar_allowance_tool",
    "delete_hbar_allowance_tool",
    "approve_token_allowance_tool",
    "delete_token_allowance_tool",
    "approve_nft_allowance_tool",
    "create_account_tool",
    "delete_account_tool",
    // Deleting NFT allowances names no recipient; listed so allowlists see every allowance tool.
    "delete_non_fungible_token_allowance_tool",
];

/// Tools whose params name one or more existing tokens (what [`tokens`] reads).
pub const TOKEN_TOOLS: [&str; 15] = [
    "transfer_fungible_token_tool",
    "transfer_fungible_token_with_allowance_tool",
    "airdrop_fungible_token_tool",
    "transfer_non_fungible_token_tool",
    "transfer_non_fungible_token_with_allowance_tool",
    "approve_token_allowance_tool",
    "delete_token_allowance_tool",
    "approve_nft_allowance_tool",
    "delete_non_fungible_token_allowance_tool",
    "mint_fungible_token_tool",
    "mint_non_fungible_token_tool",
    "associate_token_tool",
    "dissociate_token_tool",
    "update_token_tool",
    "get_token_info_query_tool",
];

/// Tools that take a `transactionMemo`.
pub const MEMO_TOOLS: [&str; 13] = [
    "transfer_hbar_tool",
    "transfer_hbar_with_allowance_tool",
    "transfer_fungible_token_tool",
    "transfer_fungible_token_with_allowance_tool",
    "airdrop_fungible_token_tool",
    "transfer_non_fungible_token_tool",
    "transfer_non_fungible_token_with_allowance_tool",
    "approve_hbar_allowance_tool",
    "delete_hbar_allowance_tool",
    "approve_token_allowance_tool",
    "delete_token_allowance_tool",
    "approve_nft_allowance_tool",
    "delete_non_fungible_token_allowance_tool",
];

/// Whether `s` is an entity id `shard.realm.num` (what hak writes for accounts and tokens).
pub fn is_entity_id(s: &str) -> bool {
    let parts: Vec<&str> = s.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.len() <= 20 && p.bytes().all(|b| b.is_ascii_digit()))
}

/// Every token id a call's params name (creation excluded: no id yet).
pub fn tokens(params: &Value) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut add = |v: &Value| {
        if let Some(t) = v.as_str() {
            if !out.iter().any(|o| o == t) {
                out.push(t.to_owned());
            }
        }
    };
    add(&params["tokenId"]);
    for t in list(&params["tokenIds"]) {
        add(t);
    }
    for a in list(&params["tokenApprovals"]) {
        add(&a["tokenId"]);
    }
    for t in list(&params["tokenTransfers"]) {
        add(&t["tokenId"]);
    }
    out
}

/// The entity a call updates or deletes: `("account", id)` or `("token", id)`.
pub fn changed_entity(method: &str, normalised: &Value) -> Option<(&'static str, String)> {
    match method {
        "update_account_tool" | "delete_account_tool" => {
            text(&normalised["accountId"]).map(|a| ("account", a))
        }
        "update_token_tool" => text(&normalised["tokenId"]).map(|t| ("token", t)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn transfers_count_credits_only() {
        let n = json!({"hbarTransfers": [
            {"accountId": "0.0.2001", "amount": "150000000"},
            {"accountId": "0.0.2002", "amount": "0"},
            {"accountId": "0.0.1001", "amount": "-150000000"}
        ]});
        let m = movements("transfer_hbar_tool", &n);
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].to.as_deref(), Some("0.0.2001"));
        assert_eq!(m[0].amount, 150_000_000);
        assert_eq!(m[0].asset, Asset::Hbar);
    }

    #[test]
    fn allowances_and_nfts_are_movements_too() {
        let n = json!({"tokenApprovals": [{"ownerAccountId": "0.0.1001", "spenderAccountId": "0.0.5", "tokenId": "0.0.7", "amount": "500"}]});
        let m = movements("approve_token_allowance_tool", &n);
        assert_eq!(m[0].via, Via::Allowance);
        assert_eq!(m[0].asset, Asset::Token("0.0.7".into()));
        let n = json!({"tokenId": "0.0.9", "recipients": [{"recipientId": "0.0.5", "serialNumber": 1}]});
        assert_eq!(
            movements("transfer_non_fungible_token_tool", &n)[0].asset,
            Asset::Nft("0.0.9".into())
        );
        assert!(movements("get_hbar_balance_query_tool", &json!({})).is_empty());
        assert!(movements("transfer_hbar_tool", &json!("garbage")).is_empty());
    }

    #[test]
    fn tokens_are_collected_once() {
        let p = json!({"tokenId": "0.0.7", "tokenIds": ["0.0.7", "0.0.8"]});
        assert_eq!(tokens(&p), ["0.0.7", "0.0.8"]);
        assert!(is_entity_id("0.0.1001") && !is_entity_id("0.0.x") && !is_entity_id("1.2"));
    }
}

/// JSON text re-indented like JavaScript's `JSON.stringify(value, null, 2)`, keeping the key
/// order of the input (audit messages render params exactly as the kit does).
pub fn pretty_json(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 2);
    let mut indent = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let mut chars = text.trim().chars().peekable();
    let newline = |out: &mut String, indent: usize| {
        out.push('\n');
        out.extend(std::iter::repeat_n(' ', indent * 2));
    };
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                out.push(c);
            }
            '{' | '[' => {
                let close = if c == '{' { '}' } else { ']' };
                while chars.peek().is_some_and(|n| n.is_whitespace()) {
                    chars.next();
                }
                if chars.peek() == Some(&close) {
                    chars.next();
                    out.push(c);
                    out.push(close);
                } else {
                    out.push(c);
                    indent += 1;
                    newline(&mut out, indent);
                }
            }
            '}' | ']' => {
                indent = indent.saturating_sub(1);
                newline(&mut out, indent);
                out.push(c);
            }
            ',' => {
                out.push(c);
                newline(&mut out, indent);
            }
            ':' => out.push_str(": "),
            c if c.is_whitespace() => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod pretty_tests {
    use super::pretty_json;

    #[test]
    fn indents_like_json_stringify_keeping_key_order() {
        let text = r#"{"z":[{"a":"1,2"},{}],"b":[],"c":"q\"}"}"#;
        assert_eq!(
            pretty_json(text),
            "{\n  \"z\": [\n    {\n      \"a\": \"1,2\"\n    },\n    {}\n  ],\n  \"b\": [],\n  \"c\": \"q\\\"}\"\n}"
        );
    }
}
