//! The kit's `core-evm-query-plugin` tools (mirror node queries about contracts). The EVM
//! transaction tools are out of hak's scope.

mod get_contract_info;

pub use get_contract_info::GetContractInfo;

pub(super) fn register(add: &mut impl FnMut(Box<dyn super::DynTool>)) {
    add(super::erase(GetContractInfo));
}
