//! The kit's `core-token-plugin` tools; shared token-amount conversion in [`units`].

mod create_fungible_token;
pub mod units;

pub use create_fungible_token::CreateFungibleToken;

pub(super) fn register(add: &mut impl FnMut(Box<dyn super::DynTool>)) {
    add(super::erase(CreateFungibleToken));
}
