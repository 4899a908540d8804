//! The local network's EVM (revm): `ContractCreate` runs the constructor and keeps the runtime
//! code, `ContractCall` runs a call with gas and HBAR value and applies its state, and
//! `ContractCallLocal` runs one without applying anything. Balances are tinybars (as on
//! Hedera's EVM). Addresses: an entity `0.0.N` is the long-zero address `0x00…N`; a contract
//! created inside the EVM (`CREATE`/`CREATE2`) becomes a new entity answering to the address
//! the EVM derived. Hedera's system contracts (HTS 0x167, exchange rate 0x168, PRNG 0x169,
//! account service 0x16a) and a token's own address answer what [`system`] answers from the
//! ledger (read-only views: allowances, balances, a token's ERC-20 / ERC-721 facade); any other
//! call to one fails the run, naming it.
//! What must not live here: transaction bodies and their checks (`handlers::contract`).

mod system;

use crate::state::ledger::{ContractResult, EvmLog, Ledger};
use hedera_proto::services::ResponseCodeEnum as Code;
use revm::context::TxEnv;
use revm::context_interface::result::{ExecutionResult, Output};
use revm::context_interface::ContextTr;
use revm::database_interface::{DBErrorMarker, DatabaseRef, WrapDatabaseRef};
use revm::interpreter::{
    CallInputs, CallOutcome, CreateInputs, CreateOutcome, CreateScheme, Gas, InstructionResult,
    InterpreterResult,
};
use revm::primitives::{Address, Bytes, StorageKey, StorageValue, TxKind, B256, U256};
use revm::state::{AccountInfo, Bytecode};
use revm::{Context, InspectEvm, Inspector, MainBuilder, MainContext};
use std::collections::BTreeMap;

/// The highest gas a transaction or local call may ask for (Hedera's per-transaction limit).
pub const MAX_GAS: u64 = 15_000_000;

/// The long-zero EVM address of entity `0.0.num`.
pub fn long_zero(num: u64) -> Address {
    let mut bytes = [0u8; 20];
    bytes[12..].copy_from_slice(&num.to_be_bytes());
    Address::from(bytes)
}

/// The entity number of a long-zero address.
pub fn long_zero_num(address: &Address) -> Option<u64> {
    let bytes = address.as_slice();
    if bytes[..12].iter().any(|b| *b != 0) {
        return None;
    }
    Some(u64::from_be_bytes(bytes[12..].try_into().ok()?))
}

/// The entity an address names: a long-zero address of an account or contract, or a
/// contract's EVM alias.
pub fn entity_of(ledger: &Ledger, address: &Address) -> Option<u64> {
    if let Some(num) = long_zero_num(address) {
        if ledger.accounts.contains_key(&num) || ledger.contracts.contains_key(&num) {
            return Some(num);
        }
    }
    let alias = hex::encode(address.as_slice());
    let alias = Some(alias.as_str());
    ledger
        .contracts
        .values()
        .find(|c| c.evm_address.as_deref() == alias)
        .map(|c| c.num)
        .or_else(|| {
            ledger
                .accounts
                .values()
                .find(|a| a.evm_address.as_deref() == alias)
                .map(|a| a.num)
        })
}

/// The EVM address of an entity: its alias (a contract created inside the EVM, an account
/// with an EVM address), or its long-zero address.
pub fn address_of(ledger: &Ledger, num: u64) -> Address {
    ledger
        .contracts
        .get(&num)
        .and_then(|c| c.evm_address.as_deref())
        .or_else(|| {
            ledger
                .accounts
                .get(&num)
                .and_then(|a| a.evm_address.as_deref())
        })
        .and_then(|a| hex::decode(a).ok())
        .filter(|b| b.len() == 20)
        .map_or_else(|| long_zero(num), |b| Address::from_slice(&b))
}

fn slot_key(key: &U256) -> String {
    hex::encode(key.to_be_bytes::<32>())
}

/// What a call asks the EVM to do.
pub enum Target {
    /// Run `initcode` (constructor parameters appended) as entity `num`'s constructor.
    Create { num: u64, initcode: Vec<u8> },
    /// Call entity `num` with `data`.
    Call { num: u64, data: Vec<u8> },
}

/// How an EVM run ended, in the network's words.
pub struct Run {
    pub status: Code,
    pub result: ContractResult,
    /// HBAR movements of an applied run (value sent, by entity).
    pub transfers: Vec<(u64, i64)>,
    /// The runtime code a constructor returned.
    pub runtime_code: Vec<u8>,
}

#[derive(Debug)]
struct NoState;
impl std::fmt::Display for NoState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the ledger has no such state")
    }
}
impl std::error::Error for NoState {}
impl DBErrorMarker for NoState {}

/// The ledger, read by the EVM.
struct LedgerDb<'a> {
    ledger: &'a Ledger,
    /// The contract being constructed (its code is not in the ledger yet).
    creating: Option<u64>,
}

impl DatabaseRef for LedgerDb<'_> {
    type Error = NoState;

    fn basic_ref(&self, address: Address) -> Result<Option<AccountInfo>, NoState> {
        if self.creating.is_some_and(|n| long_zero(n) == address) {
            return Ok(None);
        }
        let Some(num) = entity_of(self.ledger, &address) else {
            return Ok(system::token_code(self.ledger, &address).map(|code| {
                let code = Bytecode::new_raw(Bytes::from(code));
                AccountInfo {
                    code_hash: code.hash_slow(),
                    code: Some(code),
                    ..Default::default()
                }
            }));
        };
        if let Some(c) = self.ledger.contracts.get(&num) {
            let code = Bytecode::new_raw(Bytes::from(c.runtime_code.clone()));
            return Ok(Some(AccountInfo {
                balance: U256::from(c.balance.max(0) as u64),
                nonce: c.nonce.max(1),
                code_hash: code.hash_slow(),
                code: Some(code),
                ..Default::default()
            }));
        }
        let account = &self.ledger.accounts[&num];
        Ok(Some(AccountInfo {
            balance: U256::from(account.balance.max(0) as u64),
            ..Default::default()
        }))
    }

    fn code_by_hash_ref(&self, code_hash: B256) -> Result<Bytecode, NoState> {
        self.ledger
            .contracts
            .values()
            .map(|c| Bytecode::new_raw(Bytes::from(c.runtime_code.clone())))
            .find(|code| code.hash_slow() == code_hash)
            .ok_or(NoState)
    }

    fn storage_ref(&self, address: Address, index: StorageKey) -> Result<StorageValue, NoState> {
        let Some(contract) =
            entity_of(self.ledger, &address).and_then(|n| self.ledger.contracts.get(&n))
        else {
            return Ok(U256::ZERO);
        };
        Ok(contract
            .storage
            .get(&slot_key(&index))
            .and_then(|v| hex::decode(v).ok())
            .map_or(U256::ZERO, |b| U256::from_be_slice(&b)))
    }

    fn block_hash_ref(&self, number: u64) -> Result<B256, NoState> {
        Ok(revm::primitives::keccak256(number.to_be_bytes()))
    }
}

/// Puts a `ContractCreate`'s contract at its entity's long-zero address, answers the system
/// contracts' calls the local network has ([`system`]), and refuses the others.
struct HederaRules<'a> {
    ledger: &'a Ledger,
    create_at: Option<Address>,
    refused: Option<String>,
}

impl<CTX: ContextTr> Inspector<CTX> for HederaRules<'_> {
    fn create(&mut self, _ctx: &mut CTX, inputs: &mut CreateInputs) -> Option<CreateOutcome> {
        if let Some(address) = self.create_at.take() {
            inputs.set_scheme(CreateScheme::Custom { address });
        }
        None
    }

    fn call(&mut self, ctx: &mut CTX, inputs: &mut CallInputs) -> Option<CallOutcome> {
        let name = system::named(self.ledger, &inputs.bytecode_address)?;
        let answer = {
            let input = inputs.input.as_bytes(ctx);
            system::answer(self.ledger, &inputs.bytecode_address, &input)
        };
        let mut gas = Gas::new(inputs.gas_limit);
        let (result, output) = match answer {
            Some(_) if inputs.gas_limit < system::VIEW_GAS => {
                gas.spend_all();
                (InstructionResult::OutOfGas, Bytes::new())
            }
            Some(answer) => {
                gas.set_remaining(inputs.gas_limit - system::VIEW_GAS);
                let result = if answer.reverted {
                    InstructionResult::Revert
                } else {
                    InstructionResult::Return
                };
                (result, Bytes::from(answer.output))
            }
            None => {
                self.refused = Some(name);
                (InstructionResult::Revert, Bytes::new())
            }
        };
        Some(CallOutcome::new(
            InterpreterResult::new(result, output, gas),
            inputs.return_memory_offset.clone(),
        ))
    }
}

/// Run `target` for `sender` with `value` tinybars and `gas`; with `apply`, write its state
/// (balances, storage, contracts it created) into the ledger. The caller has checked the
/// entities and charged the fee.
pub fn run(
    ledger: &mut Ledger,
    sender: u64,
    target: Target,
    value: i64,
    gas: u64,
    apply: bool,
) -> Run {
    let caller = address_of(ledger, sender);
    let (kind, data, contract, create_at, creating) = match target {
        Target::Create { num, initcode } => (
            TxKind::Create,
            initcode,
            num,
            Some(long_zero(num)),
            Some(num),
        ),
        Target::Call { num, data } => {
            (TxKind::Call(address_of(ledger, num)), data, num, None, None)
        }
    };
    let mut result = ContractResult {
        contract,
        gas_limit: gas,
        amount: value,
        function_parameters: if creating.is_some() {
            Vec::new()
        } else {
            data.clone()
        },
        sender,
        ..Default::default()
    };
    let outcome = {
        let db = WrapDatabaseRef(LedgerDb { ledger, creating });
        let ctx = Context::mainnet().with_db(db).modify_cfg_chained(|cfg| {
            cfg.disable_nonce_check = true;
            cfg.disable_base_fee = true;
        });
        let mut evm = ctx.build_mainnet_with_inspector(HederaRules {
            ledger,
            create_at,
            refused: None,
        });
        let tx = TxEnv::builder()
            .caller(caller)
            .kind(kind)
            .data(Bytes::from(data))
            .value(U256::from(value.max(0) as u64))
            .gas_limit(gas)
            .gas_price(0)
            .build_fill();
        let out = evm.inspect_tx(tx);
        (out, evm.inspector.refused)
    };
    let (out, refused) = outcome;
    let out = match out {
        Ok(out) => out,
        Err(e) => {
            use revm::context_interface::result::{EVMError, InvalidTransaction};
            // Less gas than the intrinsic cost (21,000, 53,000 for a create, plus data).
            let status = match &e {
                EVMError::Transaction(
                    InvalidTransaction::CallGasCostMoreThanGasLimit { .. }
                    | InvalidTransaction::GasFloorMoreThanGasLimit { .. },
                ) => Code::InsufficientGas,
                _ => Code::ContractExecutionException,
            };
            result.error = format!("the EVM refused the transaction: {e}");
            return Run {
                status,
                result,
                transfers: Vec::new(),
                runtime_code: Vec::new(),
            };
        }
    };
    let mut runtime_code = Vec::new();
    let mut status = match &out.result {
        ExecutionResult::Success { gas, output, .. } => {
            result.gas_used = gas.tx_gas_used();
            match output {
                Output::Create(code, _) => runtime_code = code.to_vec(),
                Output::Call(bytes) => result.output = bytes.to_vec(),
            }
            Code::Success
        }
        ExecutionResult::Revert { gas, output, .. } => {
            result.gas_used = gas.tx_gas_used();
            result.output = output.to_vec();
            result.error = revert_reason(output);
            Code::ContractRevertExecuted
        }
        ExecutionResult::Halt { reason, gas, .. } => {
            result.gas_used = gas.tx_gas_used();
            result.error = format!("{reason:?}");
            if format!("{reason:?}").starts_with("OutOfGas") {
                Code::InsufficientGas
            } else {
                Code::ContractExecutionException
            }
        }
    };
    // A run that reached a system contract fails as a whole: what it would have done there
    // did not happen, so neither may the rest.
    if let Some(name) = refused {
        status = Code::NotSupported;
        result.error = format!("{name} is not available on the local network");
    }
    // Value sent to a long-zero address no entity holds has nowhere to go: the run fails
    // rather than lose it (value to any other unknown address creates a hollow account).
    if status == Code::Success {
        let lost = out.state.iter().find(|(address, account)| {
            account.is_touched()
                && !account.info.balance.is_zero()
                && entity_of(ledger, address).is_none()
                && creating.is_none_or(|n| long_zero(n) != **address)
                && long_zero_num(address).is_some()
        });
        if let Some((address, _)) = lost {
            status = Code::InvalidSolidityAddress;
            result.error = format!("no entity has the long-zero address {address:#x}");
        }
    }
    if status != Code::Success || !apply {
        return Run {
            status,
            result,
            transfers: Vec::new(),
            runtime_code,
        };
    }
    let mut transfers = Vec::new();
    // Logs, then state: balances, storage, and contracts created inside the EVM.
    let mut created = Vec::new();
    let mut nums: BTreeMap<Address, u64> = BTreeMap::new();
    for (address, account) in &out.state {
        if !account.is_touched() {
            continue;
        }
        let num = match entity_of(ledger, address) {
            Some(num) => num,
            None if creating.is_some_and(|n| long_zero(n) == *address) => contract,
            None if account.is_created() => {
                let num = ledger.allocate();
                let mut born = ledger.contracts[&contract].clone();
                born.num = num;
                born.memo = String::new();
                born.admin_key = None;
                born.initcode = Vec::new();
                born.storage.clear();
                born.balance = 0;
                born.nonce = 1;
                born.evm_address = Some(hex::encode(address.as_slice()));
                born.runtime_code = account
                    .info
                    .code
                    .as_ref()
                    .map(|c| c.original_bytes().to_vec())
                    .unwrap_or_default();
                ledger.contracts.insert(num, born);
                created.push(num);
                num
            }
            // Value sent to an EVM address no entity holds: a hollow account now holds it
            // (as on Hedera), keyless until completed.
            None if !account.info.balance.is_zero() => {
                let num = ledger.allocate();
                ledger.accounts.insert(
                    num,
                    crate::state::ledger::Account {
                        num,
                        key: crate::state::ledger::KeyBytes::from_proto(
                            &hedera_proto::services::Key {
                                key: Some(hedera_proto::services::key::Key::KeyList(
                                    hedera_proto::services::KeyList { keys: Vec::new() },
                                )),
                            },
                        ),
                        balance: 0,
                        deleted: false,
                        memo: "lazy-created account".into(),
                        receiver_sig_required: false,
                        max_automatic_token_associations: -1,
                        auto_renew_period: 7_776_000,
                        created: ledger.last_consensus,
                        decline_reward: false,
                        evm_address: Some(hex::encode(address.as_slice())),
                        key_alias: None,
                    },
                );
                num
            }
            None => continue,
        };
        nums.insert(*address, num);
        let balance = i64::try_from(account.info.balance).unwrap_or(i64::MAX);
        let before = ledger
            .contracts
            .get(&num)
            .map(|c| c.balance)
            .or_else(|| ledger.accounts.get(&num).map(|a| a.balance))
            .unwrap_or_default();
        if balance != before {
            transfers.push((num, balance - before));
        }
        if let Some(c) = ledger.contracts.get_mut(&num) {
            c.balance = balance;
            c.nonce = account.info.nonce;
            for (key, slot) in &account.storage {
                if !slot.is_changed() {
                    continue;
                }
                if slot.present_value.is_zero() {
                    c.storage.remove(&slot_key(key));
                } else {
                    c.storage
                        .insert(slot_key(key), slot_key(&slot.present_value));
                }
            }
        } else if let Some(a) = ledger.accounts.get_mut(&num) {
            a.balance = balance;
        }
    }
    if let ExecutionResult::Success { logs, .. } = &out.result {
        result.logs = logs
            .iter()
            .map(|log| EvmLog {
                contract: nums
                    .get(&log.address)
                    .copied()
                    .or_else(|| entity_of(ledger, &log.address))
                    .unwrap_or_default(),
                topics: log
                    .topics()
                    .iter()
                    .map(|t| hex::encode(t.as_slice()))
                    .collect(),
                data: log.data.data.to_vec(),
            })
            .collect();
    }
    result.created = created;
    Run {
        status,
        result,
        transfers,
        runtime_code,
    }
}

/// The reason in Solidity's `Error(string)` revert data, or the data in hex.
fn revert_reason(output: &Bytes) -> String {
    use alloy_sol_types::{Revert, SolError};
    match Revert::abi_decode(output) {
        Ok(revert) => revert.reason,
        Err(_) if output.is_empty() => "reverted".into(),
        Err(_) => format!("reverted: 0x{}", hex::encode(output)),
    }
}
