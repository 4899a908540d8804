//! The kit's `core-account-plugin` tools.

mod create_account;
mod delete_account;
mod hbar_allowance;
mod schedule_ops;
mod scheduled_body;
mod token_allowance;
mod transfer_hbar;
mod transfer_hbar_with_allowance;
mod update_account;

pub use create_account::CreateAccount;
pub use delete_account::DeleteAccount;
pub use hbar_allowance::{ApproveHbarAllowance, DeleteHbarAllowance};
pub use schedule_ops::{DeleteSchedule, SignSchedule};
pub use token_allowance::{ApproveTokenAllowance, DeleteTokenAllowance};
pub use transfer_hbar::TransferHbar;
pub use transfer_hbar_with_allowance::TransferHbarWithAllowance;
pub use update_account::UpdateAccount;

pub(super) fn register(add: &mut impl FnMut(Box<dyn super::DynTool>)) {
    add(super::erase(TransferHbar));
    add(super::erase(DeleteAccount));
    add(super::erase(UpdateAccount));
    add(super::erase(CreateAccount));
    add(super::erase(SignSchedule));
    add(super::erase(DeleteSchedule));
    add(super::erase(ApproveHbarAllowance));
    add(super::erase(DeleteHbarAllowance));
    add(super::erase(ApproveTokenAllowance));
    add(super::erase(TransferHbarWithAllowance));
    add(super::erase(DeleteTokenAllowance));
}
