//! What the token transfer tools share: recipients' credits in base units, NFT recipients with
//! the kit's duplicate-serial check, the association hint the kit appends to failed
//! transfers, and the JS SDK order of the lists (via `transfer_order`).

use super::units::to_base_units;
use crate::model::facts::{Asset, Facts};
use crate::tools::normalise::{self, serde_as};
use crate::tools::transfer_order::{js_nft_transfer_order, js_token_transfer_order};
use crate::tools::ToolError;
use hedera::{AccountId, NftId, TokenId, TransferTransaction};
use serde::{Deserialize, Serialize};

/// The kit's `appendTokenAssociationHint`, for `TOKEN_NOT_ASSOCIATED_TO_ACCOUNT`.
pub const ASSOCIATION_HINT: &str = "The recipient account has not associated this HTS token. Use the associate_token_tool to associate the account first, or ensure the account has maxAutoAssociations set to -1.";

/// The hint for an error code, if the kit gives one.
pub fn association_hint(error_code: &str) -> Option<&'static str> {
    (error_code == "TOKEN_NOT_ASSOCIATED_TO_ACCOUNT").then_some(ASSOCIATION_HINT)
}

/// One account's token movement in base units (negative for the debit).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TokenAmount {
    #[serde(with = "serde_as::string")]
    #[schemars(with = "String")]
    pub account_id: AccountId,
    #[serde(with = "serde_as::amount")]
    #[schemars(with = "String")]
    pub amount: i64,
}

/// Recipients' `(accountId, display amount)` → credits in base units and their total.
/// Account fields are named `<list>.<i>.accountId`.
pub fn credits(
    list: &str,
    recipients: impl IntoIterator<Item = (String, f64)>,
    decimals: u32,
    label: &str,
) -> Result<(Vec<TokenAmount>, i64), ToolError> {
    let mut out = Vec::new();
    let mut total: i64 = 0;
    for (i, (account, amount)) in recipients.into_iter().enumerate() {
        let amount = to_base_units(amount, decimals, label)?;
        total = total
            .checked_add(amount)
            .ok_or_else(|| ToolError::message(format!("{label}s add up beyond int64")))?;
        out.push(TokenAmount {
            account_id: normalise::account_id_in(|| format!("{list}.{i}.accountId"), &account)?,
            amount,
        });
    }
    Ok((out, total))
}

/// Movements that must balance: no negative credit, and the sum of all is zero.
pub fn check_balanced(list: &str, moves: &[TokenAmount]) -> Result<(), ToolError> {
    let sum = moves
        .iter()
        .try_fold(0i64, |acc, t| acc.checked_add(t.amount));
    if moves.is_empty() || sum != Some(0) {
        return Err(ToolError::message(format!(
            "{list} must not be empty and must sum to zero"
        )));
    }
    Ok(())
}

/// Add fungible movements of one token in the JS SDK's order; `approved` marks allowance debits.
pub fn add_token_moves(
    tx: &mut TransferTransaction,
    token: TokenId,
    moves: impl IntoIterator<Item = (AccountId, i64, bool)>,
) {
    let moves = moves
        .into_iter()
        .map(|(a, amount, ap)| (token, a, amount, ap));
    for (token, account, amount, approved) in js_token_transfer_order(moves) {
        if approved {
            tx.approved_token_transfer(token, account, amount);
        } else {
            tx.token_transfer(token, account, amount);
        }
    }
}

/// One NFT to one recipient (the kit's `recipients` item).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NftRecipient {
    #[serde(with = "serde_as::string")]
    #[schemars(with = "String")]
    pub recipient_id: AccountId,
    pub serial_number: u64,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawNftRecipient {
    recipient_id: String,
    #[serde(with = "serde_as::js_u64")]
    serial_number: u64,
}

/// The kit's NFT recipients: ids parsed (`recipients.<i>.recipientId`), serials unique.
pub fn nft_recipients(raw: &serde_json::Value) -> Result<Vec<NftRecipient>, ToolError> {
    let raw: Vec<RawNftRecipient> = Vec::deserialize(&raw["recipients"])
        .map_err(|e| ToolError::invalid_field("recipients", e))?;
    let mut out: Vec<NftRecipient> = Vec::with_capacity(raw.len());
    for (i, r) in raw.into_iter().enumerate() {
        let recipient = NftRecipient {
            recipient_id: normalise::account_id(
                &format!("recipients.{i}.recipientId"),
                &r.recipient_id,
            )?,
            serial_number: r.serial_number,
        };
        out.push(recipient);
    }
    check_unique_serials(&out)?;
    Ok(out)
}

/// At least one recipient, serials ≥ 1 and never twice (`Duplicate serial number: N`).
pub fn check_unique_serials(recipients: &[NftRecipient]) -> Result<(), ToolError> {
    if recipients.is_empty() {
        return Err(ToolError::invalid_field(
            "recipients",
            "Array must contain at least 1 element(s)",
        ));
    }
    let mut seen = std::collections::HashSet::with_capacity(recipients.len());
    for r in recipients {
        if r.serial_number == 0 {
            return Err(ToolError::invalid_field(
                "serialNumber",
                "Number must be greater than or equal to 1",
            ));
        }
        if !seen.insert(r.serial_number) {
            return Err(ToolError::message(format!(
                "Duplicate serial number: {}",
                r.serial_number
            )));
        }
    }
    Ok(())
}

/// Add NFT movements from `sender` in the JS SDK's order.
pub fn add_nft_moves(
    tx: &mut TransferTransaction,
    token: TokenId,
    sender: AccountId,
    recipients: &[NftRecipient],
    approved: bool,
) {
    let moves = recipients.iter().map(|r| {
        let nft = NftId {
            token_id: token,
            serial: r.serial_number,
        };
        (nft, sender, r.recipient_id, approved)
    });
    for (nft, from, to, approved) in js_nft_transfer_order(moves) {
        if approved {
            tx.approved_nft_transfer(nft, from, to);
        } else {
            tx.nft_transfer(nft, from, to);
        }
    }
}

/// The facts of a fungible token transfer list: each positive entry a credit, the negative
/// one the source, the token named.
pub fn token_credit_facts(token: &TokenId, transfers: &[TokenAmount]) -> Facts {
    let mut f = Facts::default();
    f.token(token);
    let asset = Asset::Token(token.to_string());
    for t in transfers {
        if t.amount < 0 {
            f.from(&t.account_id);
        }
        f.credit(asset.clone(), &t.account_id, t.amount);
    }
    f
}

/// The facts of an NFT transfer: one serial to each recipient, from `source`.
pub fn nft_facts(token: &TokenId, source: &AccountId, recipients: &[NftRecipient]) -> Facts {
    let mut f = Facts::default();
    f.token(token);
    f.from(source);
    let asset = Asset::Nft(token.to_string());
    for r in recipients {
        f.credit(asset.clone(), &r.recipient_id, 1);
    }
    f
}
