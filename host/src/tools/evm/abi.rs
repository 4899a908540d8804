//! The functions the kit's EVM tools call, declared as the kit declares them
//! (`ERC20_FACTORY_ABI`, `ERC20_TRANSFER_FUNCTION_ABI`, …) and encoded by alloy's `sol!`; plus
//! `decimals()`, which the kit reads through the mirror before an ERC-20 transfer, and the
//! one decoding the kit does of a result (`getAddress(0)`). No hand-written ABI code.

use alloy_primitives::Address;

alloy_sol_types::sol! {
    interface Erc20Factory {
        function deployToken(string memory name_, string memory symbol_, uint8 decimals_, uint256 initialSupply_) external returns (address);
    }

    interface Erc721Factory {
        function deployToken(string memory name_, string memory symbol_, string memory baseURI_) external returns (address);
    }

    interface Erc20 {
        function transfer(address to, uint256 amount) external returns (bool);
        function decimals() external view returns (uint8);
    }

    interface Erc721 {
        function transferFrom(address from, address to, uint256 tokenId) external returns (bool);
        function safeMint(address to) external returns (bool);
    }
}

/// The JS SDK's `ContractFunctionResult.getAddress(0)`: the address in the first 32-byte word
/// of a call's return value (a factory's `deployToken`), when there is one.
pub fn first_address(output: &[u8]) -> Option<Address> {
    output.get(12..32).map(Address::from_slice)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy_sol_types::SolCall;

    #[test]
    fn selectors_are_the_kits() {
        // ethers' `Interface.getFunction(...).selector` for the kit's ABI strings.
        assert_eq!(Erc20::transferCall::SELECTOR, [0xa9, 0x05, 0x9c, 0xbb]);
        assert_eq!(Erc20::decimalsCall::SELECTOR, [0x31, 0x3c, 0xe5, 0x67]);
        assert_eq!(Erc721::transferFromCall::SELECTOR, [0x23, 0xb8, 0x72, 0xdd]);
        assert_eq!(Erc721::safeMintCall::SELECTOR, [0x40, 0xd0, 0x97, 0xc3]);
    }

    #[test]
    fn a_deployed_address_is_read_from_the_first_word() {
        let mut word = [0u8; 32];
        word[12..].copy_from_slice(&[0xab; 20]);
        assert_eq!(first_address(&word), Some(Address::from([0xab; 20])));
        assert_eq!(first_address(&word[..31]), None);
    }
}
