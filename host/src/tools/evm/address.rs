//! EVM addresses and contract ids as the kit's EVM tools take them: a text starting `0.` is a
//! Hedera id (the kit's `isHederaAddress`), looked up in the mirror for its EVM address
//! (`getHederaEVMAddress`); an EVM address names a contract through the mirror's account
//! for it (`getHederaAccountId`). Addresses are 20 bytes of hex, `0x` optional, and carry a
//! valid EIP-55 checksum when written in mixed case (what ethers accepts).
//!
//! A [`Party`] is one end of a token movement: the EVM address the call encodes and the
//! account the mirror says holds it. Facts name the account, so a recipient list of `0.0.N`
//! ids applies whether the agent wrote the id, its alias or its long-zero address. The pair
//! is resolved by the host; one a hook supplied is checked against the mirror before the call
//! is built, so what policies judged is what the payload encodes.

use crate::tools::{ToolContext, ToolError};
use alloy_primitives::Address;
use hedera::{AccountId, ContractId};
use serde::{Deserialize, Serialize};
use std::str::FromStr;

/// One end of an ERC-20/721 movement.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Party {
    /// The EVM address the call encodes (lowercase `0x` hex).
    pub evm_address: String,
    /// The account or contract that holds the address, `None` when none does yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account_id: Option<String>,
    /// Whether the host resolved this pair itself (a hook's pair is checked before use).
    #[serde(skip)]
    #[schemars(skip)]
    resolved: bool,
}

impl Party {
    /// The kit's `getHederaEVMAddress` for `given` (a Hedera id → the mirror's EVM address for
    /// it; an EVM address as it is), with the account that holds the address.
    pub fn resolve(field: &str, given: &str, ctx: &ToolContext<'_>) -> Result<Self, ToolError> {
        if is_hedera_id(given) {
            let id = crate::tools::normalise::account_id(field, given)?;
            let account = ctx
                .mirror
                .account(id)
                .map_err(|e| ToolError::from(e).in_field(field))?;
            let evm = account.evm_address().ok_or_else(|| {
                ToolError::invalid_field(field, format!("the mirror knows no EVM address for {id}"))
            })?;
            return Ok(Party {
                evm_address: text(&parse(field, evm)?),
                account_id: Some(account.id().map_or_else(|| id.to_string(), str::to_owned)),
                resolved: true,
            });
        }
        let evm_address = text(&parse(field, given)?);
        let account = ctx
            .mirror
            .account_by_address(&evm_address)
            .map_err(|e| ToolError::from(e).in_field(field))?;
        Ok(Party {
            account_id: account.as_ref().and_then(|a| a.id()).map(str::to_owned),
            evm_address,
            resolved: true,
        })
    }

    /// The address to encode: checked, and, for a pair a hook supplied, checked against the
    /// mirror (the account must hold exactly this address).
    pub fn address(&self, field: &str, ctx: &ToolContext<'_>) -> Result<Address, ToolError> {
        let address = parse(field, &self.evm_address)?;
        if !self.resolved {
            let held_by = Party::resolve(field, &self.evm_address, ctx)?.account_id;
            if held_by != self.account_id {
                return Err(ToolError::invalid_field(
                    field,
                    format!(
                        "{} is held by {}, not {}",
                        self.evm_address,
                        held_by.as_deref().unwrap_or("no account"),
                        self.account_id.as_deref().unwrap_or("no account")
                    ),
                ));
            }
        }
        Ok(address)
    }

    /// Offline checks of a pair (the address parses, the id is an entity id).
    pub fn check(&self, field: &str) -> Result<(), ToolError> {
        parse(field, &self.evm_address)?;
        if let Some(id) = &self.account_id {
            crate::tools::normalise::account_id(field, id)?;
        }
        Ok(())
    }

    /// How facts name this end: the account holding the address, else the address itself
    /// (a long-zero address as the `0.0.N` it encodes).
    pub fn holder(&self) -> String {
        self.account_id
            .clone()
            .unwrap_or_else(|| holder(&self.evm_address))
    }
}

/// The kit's `isHederaAddress`.
pub fn is_hedera_id(text: &str) -> bool {
    text.starts_with("0.")
}

/// Parse a 20-byte EVM address (`0x` optional; mixed case must be EIP-55 checksummed).
pub fn parse(field: &str, text: &str) -> Result<Address, ToolError> {
    let hex = text.strip_prefix("0x").unwrap_or(text);
    let invalid = || ToolError::invalid_field(field, format!("Invalid EVM address: {text}"));
    if hex.len() != 40 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(invalid());
    }
    let address = Address::from_str(hex).map_err(|_| invalid())?;
    let mixed =
        hex.bytes().any(|b| b.is_ascii_lowercase()) && hex.bytes().any(|b| b.is_ascii_uppercase());
    if mixed && address.to_checksum(None)[2..] != *hex {
        return Err(ToolError::invalid_field(
            field,
            format!("Invalid EVM address: {text} (bad EIP-55 checksum)"),
        ));
    }
    Ok(address)
}

/// Lowercase `0x` text of an address (how normalised params hold it).
pub fn text(address: &Address) -> String {
    format!("{address:#x}")
}

/// The kit's `getHederaAccountId` for a contract: a Hedera id as it is; an EVM address → the
/// id the mirror's account for it names.
pub fn contract_id(
    field: &str,
    given: &str,
    ctx: &ToolContext<'_>,
) -> Result<ContractId, ToolError> {
    let id = if is_hedera_id(given) {
        given.to_owned()
    } else {
        let address = parse(field, given)?;
        let account = ctx
            .mirror
            .account(text(&address))
            .map_err(|e| ToolError::from(e).in_field(field))?;
        account
            .id()
            .ok_or_else(|| {
                ToolError::invalid_field(field, format!("no entity has the EVM address {given}"))
            })?
            .to_owned()
    };
    // The JS SDK's grammar and words (`failed to parse entity id: 0.0.x`).
    let (shard, realm, num) =
        crate::tools::normalise::entity_id(&id).map_err(|e| e.in_field(field))?;
    Ok(ContractId::new(shard, realm, num))
}

/// How facts name the holder of an address: `0.0.N` for a long-zero address (exactly that
/// entity), otherwise the lowercase `0x` address itself (an alias or a contract's address,
/// which only the network can map to an id).
pub fn holder(address: &str) -> String {
    match Address::from_str(address.trim_start_matches("0x")) {
        Ok(a) if a.0[..12].iter().all(|b| *b == 0) => {
            let num = u64::from_be_bytes(a.0[12..].try_into().expect("8 bytes"));
            AccountId::new(0, 0, num).to_string()
        }
        Ok(a) => text(&a),
        Err(_) => address.to_ascii_lowercase(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_checked_like_ethers_checks_them() {
        let lower = "0xd94dc7f82f103757f715514e4a37186be6e4580b";
        assert_eq!(text(&parse("to", lower).unwrap()), lower);
        assert_eq!(text(&parse("to", &lower[2..]).unwrap()), lower);
        let checksummed = parse("to", lower).unwrap().to_checksum(None);
        assert!(parse("to", &checksummed).is_ok());
        let mut bad: Vec<char> = checksummed.chars().collect();
        let flip = bad
            .iter()
            .rposition(|c| c.is_ascii_alphabetic() && *c != 'x')
            .unwrap();
        bad[flip] = if bad[flip].is_ascii_uppercase() {
            bad[flip].to_ascii_lowercase()
        } else {
            bad[flip].to_ascii_uppercase()
        };
        let bad: String = bad.into_iter().collect();
        assert!(parse("to", &bad).unwrap_err().message.contains("checksum"));
        let short = parse("toAddress", "0x1234").unwrap_err();
        assert_eq!(short.field.as_deref(), Some("toAddress"));
    }

    #[test]
    fn long_zero_addresses_name_their_entity_and_others_stay_addresses() {
        assert_eq!(
            holder("0x00000000000000000000000000000000000003eb"),
            "0.0.1003"
        );
        assert_eq!(
            holder("0xD94DC7F82F103757F715514E4A37186BE6E4580B"),
            "0xd94dc7f82f103757f715514e4a37186be6e4580b"
        );
    }
}
