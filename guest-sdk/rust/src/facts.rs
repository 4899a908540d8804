//! What a tool call does. Since contract 0.2.0 the host states it: the value it moves (HBAR,
//! token base units, NFTs; to whom; by transfer or by allowance), the tokens it names, the
//! entities it changes, its memo — [`crate::StageInput::facts`], typed, no JSON to read. Here:
//! the fact types under their old path, the lists of tools each fact concerns (for
//! `relevant-tools`), entity-id checks for configs, and [`pretty_json`] for audit text.

pub use crate::{Asset, Entity, Facts, Movement, Via};

/// A movement's amount meaning "all of it": a deleted account's whole balance, an allowance
/// for every serial.
pub const ALL: u64 = u64::MAX;

/// Tools that move value or grant allowances (those with `movements`).
pub const VALUE_TOOLS: [&str; 20] = [
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
    // ERC-20/721 through their contracts: the token is the contract's id, recipients the
    // accounts holding the EVM addresses (or the addresses, when no account holds them).
    "transfer_erc20_tool",
    "transfer_erc721_tool",
    "mint_erc721_tool",
    // Signing a schedule may execute it: its facts are what the scheduled body moves, read
    // from the network by the host (a body it cannot state refuses the call).
    "sign_schedule_transaction_tool",
    // A new treasury receives the old treasury's whole balance of the token (all of it).
    "update_token_tool",
];

/// Tools whose params name one or more existing tokens (those with `tokens`).
pub const TOKEN_TOOLS: [&str; 18] = [
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
    "transfer_erc20_tool",
    "transfer_erc721_tool",
    "mint_erc721_tool",
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
