//! The kit's `core-token-query-plugin` tools (mirror node queries).

mod get_pending_airdrop;
mod get_token_info;

pub use get_pending_airdrop::GetPendingAirdrop;
pub use get_token_info::GetTokenInfo;

pub(super) fn register(add: &mut impl FnMut(Box<dyn super::DynTool>)) {
    add(super::erase(GetTokenInfo));
    add(super::erase(GetPendingAirdrop));
}
