//! The kit's `core-token-plugin` tools; shared: token-amount conversion in [`units`], token
//! creation defaults and message in [`creation`].

mod create_fungible_token;
mod create_non_fungible_token;
pub mod creation;
pub mod units;

pub use create_fungible_token::CreateFungibleToken;
pub use create_non_fungible_token::CreateNonFungibleToken;

pub(super) fn register(add: &mut impl FnMut(Box<dyn super::DynTool>)) {
    add(super::erase(CreateFungibleToken));
    add(super::erase(CreateNonFungibleToken));
}
