//! The kit's `core-token-plugin` tools; shared: token-amount conversion in [`units`], token
//! creation defaults and message in [`creation`].

mod associate_token;
mod create_fungible_token;
mod create_non_fungible_token;
pub mod creation;
mod dissociate_token;
mod mint_fungible_token;
mod mint_non_fungible_token;
pub mod units;

pub use associate_token::AssociateToken;
pub use create_fungible_token::CreateFungibleToken;
pub use create_non_fungible_token::CreateNonFungibleToken;
pub use dissociate_token::DissociateToken;
pub use mint_fungible_token::MintFungibleToken;
pub use mint_non_fungible_token::MintNonFungibleToken;

pub(super) fn register(add: &mut impl FnMut(Box<dyn super::DynTool>)) {
    add(super::erase(CreateFungibleToken));
    add(super::erase(CreateNonFungibleToken));
    add(super::erase(AssociateToken));
    add(super::erase(DissociateToken));
    add(super::erase(MintFungibleToken));
    add(super::erase(MintNonFungibleToken));
}
