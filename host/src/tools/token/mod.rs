//! The kit's `core-token-plugin` tools; shared: token-amount conversion in [`units`], token
//! creation defaults and message in [`creation`], transfer lists and NFT recipients in
//! [`transfers`].

mod airdrop_fungible_token;
mod approve_nft_allowance;
mod associate_token;
mod create_fungible_token;
mod create_non_fungible_token;
pub mod creation;
mod delete_nft_allowance;
mod dissociate_token;
mod mint_fungible_token;
mod mint_non_fungible_token;
mod transfer_fungible_token;
mod transfer_fungible_token_with_allowance;
mod transfer_non_fungible_token;
mod transfer_non_fungible_token_with_allowance;
pub mod transfers;
pub mod units;
mod update_token;

pub use airdrop_fungible_token::AirdropFungibleToken;
pub use approve_nft_allowance::ApproveNftAllowance;
pub use associate_token::AssociateToken;
pub use create_fungible_token::CreateFungibleToken;
pub use create_non_fungible_token::CreateNonFungibleToken;
pub use delete_nft_allowance::DeleteNftAllowance;
pub use dissociate_token::DissociateToken;
pub use mint_fungible_token::MintFungibleToken;
pub use mint_non_fungible_token::MintNonFungibleToken;
pub use transfer_fungible_token::TransferFungibleToken;
pub use transfer_fungible_token_with_allowance::TransferFungibleTokenWithAllowance;
pub use transfer_non_fungible_token::TransferNonFungibleToken;
pub use transfer_non_fungible_token_with_allowance::TransferNonFungibleTokenWithAllowance;
pub use update_token::UpdateToken;

pub(super) fn register(add: &mut impl FnMut(Box<dyn super::DynTool>)) {
    add(super::erase(CreateFungibleToken));
    add(super::erase(CreateNonFungibleToken));
    add(super::erase(AssociateToken));
    add(super::erase(DissociateToken));
    add(super::erase(MintFungibleToken));
    add(super::erase(MintNonFungibleToken));
    add(super::erase(TransferFungibleToken));
    add(super::erase(TransferFungibleTokenWithAllowance));
    add(super::erase(AirdropFungibleToken));
    add(super::erase(UpdateToken));
    add(super::erase(TransferNonFungibleToken));
    add(super::erase(TransferNonFungibleTokenWithAllowance));
    add(super::erase(ApproveNftAllowance));
    add(super::erase(DeleteNftAllowance));
}
