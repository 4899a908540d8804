//! What every EVM tool shares: the kit's `assertEcdsaOperator`, its factory contracts per
//! network (`getERC20FactoryAddress`, …), its gas limits, and the `ContractExecuteTransaction`
//! it builds (`HederaBuilder.executeTransaction`), scheduled when asked.

use crate::manifest::NetworkName;
use crate::tools::scheduling::Scheduling;
use crate::tools::{BuiltTransaction, CoreOutput, ToolContext, ToolError};
use hedera::{ContractExecuteTransaction, ContractId};
use serde_json::{Map, Value};

/// Gas for a factory's `deployToken` (the kit's `gas: 3e6`).
pub const FACTORY_GAS: u64 = 3_000_000;
/// Gas for a token's `transfer`, `transferFrom` and `safeMint` (the kit's `gas: 1e5`).
pub const TOKEN_GAS: u64 = 100_000;

/// The kit's `assertEcdsaOperator`, for the modes that sign with the operator. In
/// return-bytes modes the user's wallet signs, not the operator: hak does not check the
/// operator there (the kit does; docs/CONFORMANCE.md).
pub fn assert_ecdsa_operator(ctx: &ToolContext<'_>) -> Result<(), ToolError> {
    if ctx.context.mode.is_return_bytes() {
        return Ok(());
    }
    let Some(key) = &ctx.operator_public_key else {
        return Err(ToolError::message(
            "EVM tools require a client with an operator key set. None is configured on the provided client.",
        ));
    };
    if key.is_ecdsa() {
        return Ok(());
    }
    Err(ToolError::message(
        "EVM tools require an ECDSA (secp256k1) operator key. The configured operator key is \"ED25519\", which the network will reject with INVALID_SIGNATURE on contract execution. Use an ECDSA key (recommended: raw hex 0x + 64 chars).",
    ))
}

/// Which factory the kit uses.
#[derive(Clone, Copy)]
pub enum Factory {
    Erc20,
    Erc721,
}

/// The kit's factory for `network` (`getERC20FactoryAddress` / `getERC721FactoryAddress`):
/// testnet's, or the local node's (which hak's local network deploys at genesis).
pub fn factory(factory: Factory, network: NetworkName) -> Result<ContractId, ToolError> {
    let (testnet, local, name) = match factory {
        Factory::Erc20 => (6_471_814, hak_emu::genesis::ERC20_FACTORY, "ERC20"),
        Factory::Erc721 => (6_510_666, hak_emu::genesis::ERC721_FACTORY, "ERC721"),
    };
    let num = match network {
        NetworkName::Testnet => testnet,
        NetworkName::Local => local,
        other => {
            return Err(ToolError::message(format!(
                "Network type {} not supported for {name} factory",
                other.ledger_name()
            )))
        }
    };
    Ok(ContractId::new(0, 0, num))
}

/// The `ContractExecuteTransaction` of `data` on `contract` with `gas`, wrapped in a schedule
/// when the params ask.
pub fn execute(
    contract: ContractId,
    gas: u64,
    data: Vec<u8>,
    scheduling: &Scheduling,
    details: Map<String, Value>,
    ctx: &ToolContext<'_>,
) -> Result<BuiltTransaction, ToolError> {
    let mut tx = ContractExecuteTransaction::new();
    tx.contract_id(contract).gas(gas).function_parameters(data);
    ctx.pin_nodes(&mut tx);
    scheduling.wrap(BuiltTransaction::new(
        tx,
        "ContractExecuteTransaction",
        details,
    ))
}

/// [`execute`] as a core action's output.
pub fn output(built: BuiltTransaction) -> CoreOutput {
    CoreOutput::Transaction(Box::new(built))
}

/// The kit's message after a scheduled EVM call (`Scheduled <what> of <ERC20|ERC721>
/// successfully.`).
pub fn scheduled_message(what: &str, raw: &crate::tools::RawTransactionResponse) -> Option<String> {
    raw.schedule_id.as_ref().map(|schedule| {
        format!(
            "Scheduled {what} successfully.\nTransaction ID: {}\nSchedule ID: {schedule}",
            raw.transaction_id
        )
    })
}

/// The address a factory's `deployToken` returned, when the record was read.
pub fn created_address(raw: &crate::tools::RawTransactionResponse) -> Option<String> {
    raw.contract_output
        .as_deref()
        .and_then(super::abi::first_address)
        .map(|a| super::address::text(&a))
}

/// `{<key>: <address>}` beside `raw` when the address is known (the kit's `erc20Address` /
/// `erc721Address`; it writes `0xundefined` when it is not, hak leaves the field out).
pub fn created_address_field(
    key: &str,
    raw: &crate::tools::RawTransactionResponse,
) -> Map<String, Value> {
    let mut fields = Map::new();
    if let Some(address) = created_address(raw) {
        fields.insert(key.into(), address.into());
    }
    fields
}
