//! Hedera's system contracts as far as the local network answers them, from the ledger, read
//! only:
//! - the Hedera Token Service (0x167) view `allowance(token, owner, spender)` →
//!   `(int64 responseCode, uint256 allowance)`;
//! - a token's own address as Hedera serves it (HIP-218, HIP-376): a fungible token answers
//!   the ERC-20 views (`name`, `symbol`, `decimals`, `totalSupply`, `balanceOf`,
//!   `allowance(owner, spender)`), an NFT collection the ERC-721 ones (`name`, `symbol`,
//!   `totalSupply`, `balanceOf`, `ownerOf`, `getApproved`, `isApprovedForAll`, `tokenURI`).
//!
//! So a contract reads back the allowance it was granted, or a holder's balance, as on the
//! network. A token that is not one, an owner that is no account and a serial that does not
//! exist revert with the status's name, as Hedera does; an account without a balance or an
//! allowance has 0. A view costs [`VIEW_GAS`] here (Hedera prices it from its fee schedule).
//! Anything else (a transfer through a token's address, other HTS functions) is not answered
//! ([`answer`] is `None`): the caller refuses it by name. What must not live here: running
//! the EVM, changing the ledger.

use super::{address_of, entity_of, long_zero_num};
use crate::state::ledger::{Ledger, Token};
use alloy_sol_types::{SolCall, SolValue};
use hedera_proto::services::ResponseCodeEnum as Code;
use revm::primitives::{Address, U256};

alloy_sol_types::sol! {
    /// IHederaTokenService's allowance view.
    function allowance(address token, address owner, address spender)
        external
        returns (int64 responseCode, uint256 allowance);

    /// The views a token's address answers (HIP-218, HIP-376).
    interface TokenFacade {
        function name() external view returns (string);
        function symbol() external view returns (string);
        function decimals() external view returns (uint8);
        function totalSupply() external view returns (uint256);
        function balanceOf(address account) external view returns (uint256);
        function allowance(address owner, address spender) external view returns (uint256);
        function ownerOf(uint256 serial) external view returns (address);
        function getApproved(uint256 serial) external view returns (address);
        function isApprovedForAll(address owner, address operator) external view returns (bool);
        function tokenURI(uint256 serial) external view returns (string);
    }
}

/// The code Hedera serves at a token's address (HIP-719: it hands the call to the token
/// service with `redirectForToken(address,bytes)`), with the token's address in place of the
/// twenty `fe` bytes: what `EXTCODESIZE`, `EXTCODEHASH` and `EXTCODECOPY` see there, so a
/// contract compiled to check that code exists before it calls finds it. Calls to the address
/// are answered here before it would run.
const TOKEN_PROXY_CODE: &str = "6080604052348015600f57600080fd5b506000610167905077618dc65efefefefefefefefefefefefefefefefefefefefe600052366000602037600080366018016008845af43d806000803e8160008114605857816000f35b816000fdfea2646970667358221220d8378feed472ba49a0005514ef7087017f707b45fb9bf56bb81bb93ff19a238b64736f6c634300080b0033";

/// The code at `address` when it is a token's: [`TOKEN_PROXY_CODE`] for that token.
pub fn token_code(ledger: &Ledger, address: &Address) -> Option<Vec<u8>> {
    let num = long_zero_num(address)?;
    ledger.tokens.get(&num).filter(|t| !t.deleted)?;
    let code = TOKEN_PROXY_CODE.replace(
        "fefefefefefefefefefefefefefefefefefefefe",
        &hex::encode(address.as_slice()),
    );
    hex::decode(code).ok()
}

/// The gas a system contract's view costs on the local network.
pub const VIEW_GAS: u64 = 100;

/// The Hedera Token Service system contract's entity number.
const HTS: u64 = 0x167;

/// What a system contract answered: its output, and whether it reverted.
pub struct Answer {
    pub output: Vec<u8>,
    pub reverted: bool,
}

/// The system contract a call reaches at `address`, named, when it is one: Hedera's system
/// contracts, and every token's address.
pub fn named(ledger: &Ledger, address: &Address) -> Option<String> {
    let num = long_zero_num(address)?;
    Some(match num {
        HTS => "the Hedera Token Service system contract (0x167)".into(),
        0x168 => "the exchange rate system contract (0x168)".into(),
        0x169 => "the PRNG system contract (0x169)".into(),
        0x16a => "the Hedera Account Service system contract (0x16a)".into(),
        _ if ledger.tokens.contains_key(&num) => format!("the token 0.0.{num}'s address"),
        _ => return None,
    })
}

/// The answer of the system contract at `address` to `input`, when the local network has
/// one.
pub fn answer(ledger: &Ledger, address: &Address, input: &[u8]) -> Option<Answer> {
    let num = long_zero_num(address)?;
    let selector: [u8; 4] = input.get(..4)?.try_into().ok()?;
    if num == HTS {
        return (selector == allowanceCall::SELECTOR).then(|| hts_allowance(ledger, input));
    }
    let token = ledger.tokens.get(&num)?;
    if token.deleted {
        return None;
    }
    facade(ledger, token, selector, input)
}

/// HTS `allowance(token, owner, spender)`.
fn hts_allowance(ledger: &Ledger, input: &[u8]) -> Answer {
    let Ok(call) = allowanceCall::abi_decode(input) else {
        return revert(Code::InvalidTransactionBody);
    };
    let fungible = long_zero_num(&call.token)
        .filter(|num| ledger.tokens.get(num).is_some_and(|t| !t.nft && !t.deleted));
    let Some(token) = fungible else {
        return revert(Code::InvalidTokenId);
    };
    let Some(owner) = entity_of(ledger, &call.owner) else {
        return revert(Code::InvalidAllowanceOwnerId);
    };
    returns(allowanceCall::abi_encode_returns(&allowanceReturn {
        responseCode: Code::Success as i64,
        allowance: U256::from(granted(ledger, token, owner, &call.spender)),
    }))
}

/// Units of `token` that `owner` allowed the entity at `spender` (0 when none).
fn granted(ledger: &Ledger, token: u64, owner: u64, spender: &Address) -> u64 {
    entity_of(ledger, spender)
        .and_then(|spender| {
            ledger
                .token_allowances
                .get(&owner)?
                .get(&token)?
                .get(&spender)
                .copied()
        })
        .unwrap_or(0)
        .max(0) as u64
}

/// The ERC-20 or ERC-721 view `selector` of `token`'s address.
fn facade(ledger: &Ledger, token: &Token, selector: [u8; 4], input: &[u8]) -> Option<Answer> {
    use TokenFacade as F;
    macro_rules! args {
        ($call:ty) => {
            match <$call>::abi_decode(input) {
                Ok(call) => call,
                Err(_) => return Some(revert(Code::InvalidTransactionBody)),
            }
        };
    }
    let units = |account: &Address| -> u64 {
        entity_of(ledger, account)
            .and_then(|n| ledger.rels.get(&n)?.get(&token.num))
            .map_or(0, |rel| rel.balance.max(0) as u64)
    };
    let serial = |serial: U256| {
        i64::try_from(serial)
            .ok()
            .and_then(|s| ledger.nfts.get(&token.num)?.get(&s))
    };
    let output = match selector {
        F::nameCall::SELECTOR => token.name.abi_encode(),
        F::symbolCall::SELECTOR => token.symbol.abi_encode(),
        F::totalSupplyCall::SELECTOR => U256::from(token.total_supply.max(0) as u64).abi_encode(),
        F::balanceOfCall::SELECTOR => {
            U256::from(units(&args!(F::balanceOfCall).account)).abi_encode()
        }
        F::decimalsCall::SELECTOR if !token.nft => U256::from(token.decimals.min(255)).abi_encode(),
        F::allowanceCall::SELECTOR if !token.nft => {
            let call = args!(F::allowanceCall);
            let Some(owner) = entity_of(ledger, &call.owner) else {
                return Some(revert(Code::InvalidAllowanceOwnerId));
            };
            U256::from(granted(ledger, token.num, owner, &call.spender)).abi_encode()
        }
        F::ownerOfCall::SELECTOR if token.nft => match serial(args!(F::ownerOfCall).serial) {
            Some(nft) => address_of(ledger, nft.owner).abi_encode(),
            None => return Some(revert(Code::InvalidTokenNftSerialNumber)),
        },
        F::getApprovedCall::SELECTOR if token.nft => {
            match serial(args!(F::getApprovedCall).serial) {
                Some(nft) => nft
                    .spender
                    .map_or(Address::ZERO, |s| address_of(ledger, s))
                    .abi_encode(),
                None => return Some(revert(Code::InvalidTokenNftSerialNumber)),
            }
        }
        F::tokenURICall::SELECTOR if token.nft => match serial(args!(F::tokenURICall).serial) {
            Some(nft) => String::from_utf8_lossy(&nft.metadata)
                .into_owned()
                .abi_encode(),
            None => return Some(revert(Code::InvalidTokenNftSerialNumber)),
        },
        F::isApprovedForAllCall::SELECTOR if token.nft => {
            let call = args!(F::isApprovedForAllCall);
            let approved = entity_of(ledger, &call.owner)
                .zip(entity_of(ledger, &call.operator))
                .is_some_and(|(owner, operator)| {
                    ledger
                        .nft_approvals_for_all
                        .get(&owner)
                        .and_then(|tokens| tokens.get(&token.num))
                        .is_some_and(|spenders| spenders.contains(&operator))
                });
            approved.abi_encode()
        }
        _ => return None,
    };
    Some(returns(output))
}

fn returns(output: Vec<u8>) -> Answer {
    Answer {
        output,
        reverted: false,
    }
}

/// A revert whose data is the status's name, as Hedera's system contracts revert.
fn revert(code: Code) -> Answer {
    Answer {
        output: code.as_str_name().as_bytes().to_vec(),
        reverted: true,
    }
}
