//! SmartContractService bodies: contract creation only, and without an EVM. A contract is an
//! entity with the body's memo, keys and renewal settings and its initcode kept as bytecode, so
//! the mirror can answer `/api/v1/contracts/{id}`; nothing is executed and gas is not charged.

use super::{auto_renew_account, Ctx, Outcome};
use crate::ledger::{Contract, KeyBytes, Ledger};
use hedera_proto::services as proto;
use proto::contract_create_transaction_body::InitcodeSource;
use proto::ResponseCodeEnum as Code;

/// The default auto-renew period of a new contract (90 days).
const DEFAULT_AUTO_RENEW_SECONDS: i64 = 7_776_000;

pub fn create(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    body: &proto::ContractCreateTransactionBody,
) -> Result<Outcome, Code> {
    if body.memo.len() > 100 {
        return Err(Code::MemoTooLong);
    }
    let initcode = match &body.initcode_source {
        Some(InitcodeSource::Initcode(code)) if !code.is_empty() => code.clone(),
        Some(InitcodeSource::Initcode(_)) => return Err(Code::ContractBytecodeEmpty),
        // The emulator has no file service: a file id never names a file here.
        Some(InitcodeSource::FileId(_)) => return Err(Code::InvalidFileId),
        None => return Err(Code::InvalidFileId),
    };
    if body.gas <= 0 {
        return Err(Code::InsufficientGas);
    }
    if body.initial_balance != 0 {
        // Moving HBAR into a contract needs a payable constructor, which needs an EVM.
        return Err(Code::ContractRevertExecuted);
    }
    if let Some(admin) = &body.admin_key {
        if !ctx.active.satisfies(admin) {
            return Err(Code::InvalidSignature);
        }
    }
    let auto_renew_account = auto_renew_account(ledger, ctx, body.auto_renew_account_id.as_ref())?;
    let num = ledger.allocate();
    ledger.contracts.insert(
        num,
        Contract {
            num,
            memo: body.memo.clone(),
            admin_key: body.admin_key.as_ref().map(KeyBytes::from_proto),
            auto_renew_account,
            auto_renew_period: body
                .auto_renew_period
                .map_or(DEFAULT_AUTO_RENEW_SECONDS, |d| d.seconds),
            max_automatic_token_associations: body.max_automatic_token_associations,
            created: ctx.consensus,
            deleted: false,
            initcode,
        },
    );
    let mut outcome = Outcome::success();
    outcome.receipt.contract_id = Some(num);
    Ok(outcome.entity(num))
}
