//! The kit's `core-account-plugin` tools.

mod transfer_hbar;

pub use transfer_hbar::TransferHbar;

pub(super) fn register(add: &mut impl FnMut(Box<dyn super::DynTool>)) {
    add(super::erase(TransferHbar));
}
