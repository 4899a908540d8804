//! The kit's `core-transaction-query-plugin` tools (mirror node queries).

mod get_transaction_record;

pub use get_transaction_record::GetTransactionRecord;

pub(super) fn register(add: &mut impl FnMut(Box<dyn super::DynTool>)) {
    add(super::erase(GetTransactionRecord));
}
