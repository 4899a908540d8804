//! SmartContractService bodies: `ContractCreate` (the constructor runs in the EVM, `evm`) and
//! `ContractCall`. Checks come first in the network's order; the EVM's result, failed or not,
//! goes into the record as its contract function result.

use super::{auto_renew_account, Ctx, Outcome};
use crate::evm::{self, Target};
use crate::state::ledger::{Contract, KeyBytes, Ledger};
use hedera_proto::services as proto;
use proto::contract_create_transaction_body::InitcodeSource;
use proto::ResponseCodeEnum as Code;

/// The default auto-renew period of a new contract (90 days).
const DEFAULT_AUTO_RENEW_SECONDS: i64 = 7_776_000;

/// Gas and value checks shared by creates and calls.
fn check_gas_and_value(ledger: &Ledger, ctx: &Ctx<'_>, gas: i64, value: i64) -> Result<u64, Code> {
    if gas <= 0 {
        return Err(Code::InsufficientGas);
    }
    let gas = gas as u64;
    if gas > evm::MAX_GAS {
        return Err(Code::MaxGasLimitExceeded);
    }
    if value < 0 {
        return Err(Code::ContractNegativeValue);
    }
    let balance = ledger.accounts.get(&ctx.payer).map_or(0, |a| a.balance);
    if value > balance {
        return Err(Code::InsufficientPayerBalance);
    }
    Ok(gas)
}

/// The outcome of an EVM run: its status and result in the record, its value movements.
fn outcome_of(run: evm::Run, contract: u64, created: bool) -> Outcome {
    let mut outcome = Outcome::failed(run.status);
    if run.status == Code::Success {
        outcome.transfers = run.transfers;
        if created {
            outcome = outcome.entity(contract);
        }
    }
    outcome.receipt.contract_id = Some(contract);
    outcome.contract_result = Some(run.result);
    outcome
}

/// The initcode a file holds: hex digits (an optional `0x`, surrounding whitespace allowed).
fn initcode_from_file(ledger: &Ledger, id: &proto::FileId) -> Result<Vec<u8>, Code> {
    let file = crate::state::ledger::file_num(id)
        .and_then(|n| super::file::file(ledger, n))
        .ok_or(Code::InvalidFileId)?;
    if file.deleted {
        return Err(Code::FileDeleted);
    }
    if file.contents.is_empty() {
        return Err(Code::ContractFileEmpty);
    }
    let text = std::str::from_utf8(&file.contents).map_err(|_| Code::ErrorDecodingBytestring)?;
    let text = text.trim();
    let text = text.strip_prefix("0x").unwrap_or(text);
    hex::decode(text).map_err(|_| Code::ErrorDecodingBytestring)
}

pub fn create(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    body: &proto::ContractCreateTransactionBody,
) -> Result<Outcome, Code> {
    if body.memo.len() > 100 {
        return Err(Code::MemoTooLong);
    }
    let mut initcode = match &body.initcode_source {
        Some(InitcodeSource::Initcode(code)) if !code.is_empty() => code.clone(),
        Some(InitcodeSource::Initcode(_)) => return Err(Code::ContractBytecodeEmpty),
        // A file holds the initcode as hex text (what `ContractCreateFlow` uploads).
        Some(InitcodeSource::FileId(id)) => initcode_from_file(ledger, id)?,
        None => return Err(Code::InvalidFileId),
    };
    let gas = check_gas_and_value(ledger, ctx, body.gas, body.initial_balance)?;
    if let Some(admin) = &body.admin_key {
        if !ctx.active.satisfies(admin) {
            return Err(Code::InvalidSignature);
        }
    }
    let auto_renew_account = auto_renew_account(ledger, ctx, body.auto_renew_account_id.as_ref())?;
    initcode.extend_from_slice(&body.constructor_parameters);
    let num = ledger.allocate();
    let mut contract = Contract::constructing(num, ctx.consensus, initcode.clone());
    contract.memo = body.memo.clone();
    contract.admin_key = body.admin_key.as_ref().map(KeyBytes::from_proto);
    contract.auto_renew_account = auto_renew_account;
    contract.auto_renew_period = body
        .auto_renew_period
        .map_or(DEFAULT_AUTO_RENEW_SECONDS, |d| d.seconds);
    contract.max_automatic_token_associations = body.max_automatic_token_associations;
    ledger.contracts.insert(num, contract);
    let run = evm::run(
        ledger,
        ctx.payer,
        Target::Create { num, initcode },
        body.initial_balance,
        gas,
        true,
    );
    if run.status == Code::Success {
        if let Some(contract) = ledger.contracts.get_mut(&num) {
            contract.runtime_code = run.runtime_code.clone();
        }
    } else {
        // A failed constructor leaves no contract behind.
        ledger.contracts.remove(&num);
    }
    Ok(outcome_of(run, num, true))
}

pub fn call(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    body: &proto::ContractCallTransactionBody,
) -> Result<Outcome, Code> {
    let num = contract_num(ledger, body.contract_id.as_ref())?;
    let gas = check_gas_and_value(ledger, ctx, body.gas, body.amount)?;
    let run = evm::run(
        ledger,
        ctx.payer,
        Target::Call {
            num,
            data: body.function_parameters.clone(),
        },
        body.amount,
        gas,
        true,
    );
    Ok(outcome_of(run, num, false))
}

/// The contract a body names (by number or EVM address), existing and not deleted.
pub fn contract_num(ledger: &Ledger, id: Option<&proto::ContractId>) -> Result<u64, Code> {
    use proto::contract_id::Contract as C;
    let id = id.ok_or(Code::InvalidContractId)?;
    let num = match &id.contract {
        Some(C::ContractNum(n)) if *n >= 0 => Some(*n as u64),
        Some(C::EvmAddress(bytes)) if bytes.len() == 20 => {
            evm::entity_of(ledger, &revm::primitives::Address::from_slice(bytes))
        }
        _ => None,
    }
    .ok_or(Code::InvalidContractId)?;
    match ledger.contracts.get(&num) {
        Some(c) if c.deleted => Err(Code::ContractDeleted),
        Some(_) => Ok(num),
        None => Err(Code::InvalidContractId),
    }
}

/// An entity's lifetime bounds, seconds (`ledger.autoRenewPeriod.minDuration` / `maxDuration`).
const AUTO_RENEW_RANGE: std::ops::RangeInclusive<i64> = 2_592_000..=8_000_001;

/// The admin key a contract answers to: `MODIFYING_IMMUTABLE_CONTRACT` without one.
fn admin_key(contract: &Contract) -> Result<&KeyBytes, Code> {
    contract
        .admin_key
        .as_ref()
        .ok_or(Code::ModifyingImmutableContract)
}

pub fn update(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    body: &proto::ContractUpdateTransactionBody,
) -> Result<Outcome, Code> {
    use proto::contract_update_transaction_body::MemoField;
    let num = contract_num(ledger, body.contract_id.as_ref())?;
    let contract = &ledger.contracts[&num];
    let only_expiry = body.admin_key.is_none()
        && body.auto_renew_period.is_none()
        && body.memo_field.is_none()
        && body.max_automatic_token_associations.is_none()
        && body.auto_renew_account_id.is_none()
        && body.decline_reward.is_none()
        && body.staked_id.is_none();
    if !only_expiry {
        ctx.require(admin_key(contract)?)?;
    }
    if let Some(new_admin) = &body.admin_key {
        if !ctx.active.satisfies(new_admin) {
            return Err(Code::InvalidSignature);
        }
    }
    let memo = match &body.memo_field {
        Some(MemoField::Memo(m)) | Some(MemoField::MemoWrapper(m)) => Some(m.clone()),
        None => None,
    };
    if memo.as_ref().is_some_and(|m| m.len() > 100) {
        return Err(Code::MemoTooLong);
    }
    if let Some(period) = body.auto_renew_period {
        if !AUTO_RENEW_RANGE.contains(&period.seconds) {
            return Err(Code::AutorenewDurationNotInRange);
        }
    }
    let expiry = contract.expiration();
    if let Some(at) = &body.expiration_time {
        if at.seconds < expiry {
            return Err(Code::ExpirationReductionNotAllowed);
        }
    }
    // 0.0.0 removes the auto-renew account (the network keeps the 0.0.0 sentinel and
    // answers it in the contract's info); any other must exist and sign.
    let auto_renew = match body.auto_renew_account_id.as_ref() {
        Some(id) if is_zero_account(id) => Some(Some(0)),
        Some(id) => Some(auto_renew_account(ledger, ctx, Some(id))?),
        None => None,
    };
    let contract = ledger.contracts.get_mut(&num).expect("checked");
    if let Some(key) = &body.admin_key {
        contract.admin_key = Some(KeyBytes::from_proto(key));
    }
    if let Some(memo) = memo {
        contract.memo = memo;
    }
    if let Some(period) = body.auto_renew_period {
        contract.auto_renew_period = period.seconds;
    }
    if let Some(at) = &body.expiration_time {
        contract.expiration = Some(at.seconds);
    }
    if let Some(max) = body.max_automatic_token_associations {
        contract.max_automatic_token_associations = max;
    }
    if let Some(account) = auto_renew {
        contract.auto_renew_account = account;
    }
    let mut outcome = Outcome::success().entity(num);
    outcome.receipt.contract_id = Some(num);
    Ok(outcome)
}

/// `0.0.0`, however the SDK spells it (a number, or no account at all).
fn is_zero_account(id: &proto::AccountId) -> bool {
    use proto::account_id::Account;
    id.shard_num == 0
        && id.realm_num == 0
        && matches!(id.account, None | Some(Account::AccountNum(0)))
}

/// Checks answered at precheck: a contract and an obtainer are named, and only the system
/// removes a contract permanently.
pub fn pure_check_delete(body: &proto::ContractDeleteTransactionBody) -> Result<(), Code> {
    if body.contract_id.is_none() {
        return Err(Code::InvalidContractId);
    }
    if body.obtainers.is_none() {
        return Err(Code::ObtainerRequired);
    }
    if body.permanent_removal {
        return Err(Code::PermanentRemovalRequiresSystemInitiation);
    }
    Ok(())
}

pub fn delete(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    body: &proto::ContractDeleteTransactionBody,
) -> Result<Outcome, Code> {
    use proto::contract_delete_transaction_body::Obtainers;
    let num = contract_num(ledger, body.contract_id.as_ref())?;
    ctx.require(admin_key(&ledger.contracts[&num])?)?;
    // The obtainer: a live account or another live contract.
    let obtainer = match body.obtainers.as_ref().ok_or(Code::ObtainerRequired)? {
        Obtainers::TransferAccountId(id) => {
            let n = ledger
                .resolve_account(id)
                .ok_or(Code::ObtainerDoesNotExist)?;
            let account = ledger.accounts.get(&n).ok_or(Code::ObtainerDoesNotExist)?;
            if account.deleted {
                return Err(Code::ObtainerDoesNotExist);
            }
            if account.receiver_sig_required {
                ctx.require(&account.key)?;
            }
            n
        }
        Obtainers::TransferContractId(id) => {
            let n = contract_num(ledger, Some(id)).map_err(|_| Code::ObtainerDoesNotExist)?;
            if n == num {
                return Err(Code::ObtainerSameContractId);
            }
            n
        }
    };
    let contract = ledger.contracts.get_mut(&num).expect("checked");
    let balance = std::mem::take(&mut contract.balance);
    contract.deleted = true;
    let mut transfers = Vec::new();
    if balance > 0 {
        if let Some(account) = ledger.accounts.get_mut(&obtainer) {
            account.balance += balance;
        } else if let Some(other) = ledger.contracts.get_mut(&obtainer) {
            other.balance += balance;
        }
        transfers = vec![(num, -balance), (obtainer, balance)];
    }
    let mut outcome = Outcome::success().entity(num);
    outcome.receipt.contract_id = Some(num);
    outcome.transfers = transfers;
    Ok(outcome)
}
