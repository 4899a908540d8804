//! What every EVM tool shares: the kit's `assertEcdsaOperator`, its factory contracts per
//! network (`getERC20FactoryAddress`, …), its gas limits, and the `ContractExecuteTransaction`
//! it builds (`HederaBuilder.executeTransaction`), scheduled when asked.

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

/// The kit's ERC-20 and ERC-721 factory contracts on the configured network
/// (`getERC20FactoryAddress` / `getERC721FactoryAddress`), given to the tools by their
/// context: testnet's deployments, or those hak's local network deploys at genesis; none on
/// other networks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EvmFactories {
    pub erc20: Option<ContractId>,
    pub erc721: Option<ContractId>,
}

impl EvmFactories {
    /// Testnet's factories (the kit's constants).
    pub const TESTNET: EvmFactories = EvmFactories {
        erc20: Some(ContractId::new(0, 0, 6_471_814)),
        erc721: Some(ContractId::new(0, 0, 6_510_666)),
    };
}

/// The kit's factory of this kind on the call's network, or the kit's refusal naming it.
pub fn factory(factory: Factory, ctx: &ToolContext<'_>) -> Result<ContractId, ToolError> {
    let (id, name) = match factory {
        Factory::Erc20 => (ctx.evm_factories.erc20, "ERC20"),
        Factory::Erc721 => (ctx.evm_factories.erc721, "ERC721"),
    };
    id.ok_or_else(|| {
        ToolError::message(format!(
            "Network type {} not supported for {name} factory",
            ctx.network.ledger_name()
        ))
    })
}

/// One EVM tool call's transaction: `data` on `contract` with `gas`, wrapped in a schedule
/// when the params ask, as the core action's output. When a plugin will see the summary it
/// names the contract, the tool's `fields` and the encoded `functionParameters`.
pub fn execute(
    contract: ContractId,
    gas: u64,
    data: Vec<u8>,
    scheduling: &Scheduling,
    fields: impl FnOnce() -> Vec<(&'static str, Value)>,
    ctx: &ToolContext<'_>,
) -> Result<BuiltTransaction, ToolError> {
    let mut details = Map::new();
    if ctx.wants_summary {
        details.insert("contractId".into(), contract.to_string().into());
        details.extend(fields().into_iter().map(|(k, v)| (k.to_owned(), v)));
        details.insert(
            "functionParameters".into(),
            format!("0x{}", hex::encode(&data)).into(),
        );
    }
    let mut tx = ContractExecuteTransaction::new();
    tx.contract_id(contract).gas(gas).function_parameters(data);
    ctx.pin_nodes(&mut tx);
    scheduling.wrap(BuiltTransaction::new(
        tx,
        "ContractExecuteTransaction",
        details,
    ))
}

/// A factory's `deployToken` call as a core action's output: the executing strategy reads
/// the new token's address from the record (unless the call is scheduled: its record is the
/// schedule's).
pub fn deploy(
    factory: ContractId,
    gas: u64,
    data: Vec<u8>,
    scheduling: &Scheduling,
    ctx: &ToolContext<'_>,
) -> Result<CoreOutput, ToolError> {
    let built = execute(factory, gas, data, scheduling, Vec::new, ctx)?;
    Ok(output(if scheduling.is_scheduled {
        built
    } else {
        built.reading_call_result()
    }))
}

/// The kit's message after a factory call: `<ERC20|ERC721> token created successfully at
/// address <address|unknown>`, or the scheduled one.
pub fn created_message(erc: &str, raw: &crate::tools::RawTransactionResponse) -> String {
    scheduled_message(&format!("creation of {erc}"), raw).unwrap_or_else(|| {
        format!(
            "{erc} token created successfully at address {}",
            created_address(raw).unwrap_or_else(|| "unknown".into())
        )
    })
}

/// [`execute`] as a core action's output.
pub fn output(built: BuiltTransaction) -> CoreOutput {
    CoreOutput::Transaction(Box::new(built))
}

/// The kit's message after an executed ERC-721 mint or transfer (its four-space indent too),
/// or after a scheduled one.
pub fn done_message(
    scheduled_what: &str,
    done: &str,
    raw: &crate::tools::RawTransactionResponse,
) -> String {
    scheduled_message(scheduled_what, raw).unwrap_or_else(|| {
        format!(
            "{done} successfully.\n    Transaction ID: {}",
            raw.transaction_id
        )
    })
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::NetworkName;
    use crate::mirror::{Mirror, MirrorClient};
    use crate::tools::schema::UnknownKeys;
    use crate::AgentContext;
    use std::time::Duration;

    /// The factory a tool gets is the one its context names; a network without one is the
    /// kit's refusal, naming it.
    #[test]
    fn the_factory_comes_from_the_context_and_its_absence_is_refused() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let client =
            MirrorClient::new("http://127.0.0.1:9/api/v1", Duration::from_millis(1)).unwrap();
        let mirror = Mirror::new(client, runtime.handle().clone());
        let context = AgentContext {
            account_id: None,
            mode: crate::AgentMode::ReturnBytes,
        };
        let ctx = |network, evm_factories| ToolContext {
            context: &context,
            operator_account_id: None,
            operator_public_key: None,
            node_account_ids: &[],
            wants_summary: false,
            mirror: &mirror,
            unknown_keys: UnknownKeys::Strip,
            network,
            evm_factories,
        };
        let testnet = ctx(NetworkName::Testnet, &EvmFactories::TESTNET);
        assert_eq!(
            factory(Factory::Erc721, &testnet).unwrap(),
            ContractId::new(0, 0, 6_510_666)
        );
        let none = EvmFactories::default();
        let mainnet = ctx(NetworkName::Mainnet, &none);
        assert_eq!(
            factory(Factory::Erc20, &mainnet).unwrap_err().message,
            "Network type mainnet not supported for ERC20 factory"
        );
    }
}
