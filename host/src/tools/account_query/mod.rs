//! The kit's `core-account-query-plugin` tools (mirror node queries).

mod get_account;
mod get_account_token_balances;
mod get_hbar_balance;

pub use get_account::GetAccount;
pub use get_account_token_balances::GetAccountTokenBalances;
pub use get_hbar_balance::GetHbarBalance;

pub(super) fn register(add: &mut impl FnMut(Box<dyn super::DynTool>)) {
    add(super::erase(GetHbarBalance));
    add(super::erase(GetAccount));
    add(super::erase(GetAccountTokenBalances));
}
