//! The kit's `core-evm-plugin` tools: ERC-20 and ERC-721 tokens through the kit's factory
//! contracts and the token contracts they deploy, each call a `ContractExecuteTransaction`
//! with an ABI-encoded payload. Shared: the contracts' ABI in [`abi`], EVM addresses and
//! contract ids in [`address`], the operator check, factories and the transaction in
//! [`call`]. Policies see each call's facts (who receives which ERC-20 amount or ERC-721
//! serial) from the typed normalised params, never from the encoded payload.

pub mod abi;
pub mod address;
pub mod call;
mod create_erc20;
mod create_erc721;
mod mint_erc721;
mod transfer_erc20;
mod transfer_erc721;

pub use create_erc20::CreateErc20;
pub use create_erc721::CreateErc721;
pub use mint_erc721::MintErc721;
pub use transfer_erc20::TransferErc20;
pub use transfer_erc721::TransferErc721;

pub(super) fn register(add: &mut impl FnMut(Box<dyn super::DynTool>)) {
    add(super::erase(CreateErc20));
    add(super::erase(TransferErc20));
    add(super::erase(TransferErc721));
    add(super::erase(MintErc721));
    add(super::erase(CreateErc721));
}
