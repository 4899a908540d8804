//! The kit's `core-misc-queries-plugin` tools.

mod get_exchange_rate;

pub use get_exchange_rate::GetExchangeRate;

pub(super) fn register(add: &mut impl FnMut(Box<dyn super::DynTool>)) {
    add(super::erase(GetExchangeRate));
}
