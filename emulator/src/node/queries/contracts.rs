//! Contract info, bytecode and local (read-only) calls through the EVM.

use super::{header, payment_payer, response_type};
use crate::node::ingest::Node;
use crate::state::ledger::{
    account_id, account_num, contract_id, ContractResult, KeyBytes, Ledger,
};
use hedera_proto::services as proto;
use proto::ResponseCodeEnum as Code;

/// `ContractGetInfo`: the contract entity (its admin key, or its own id when it has none),
/// balance, expiry and storage in bytes (64 a slot, key and value).
pub(super) fn contract_info(
    node: &Node,
    q: &proto::ContractGetInfoQuery,
) -> proto::ContractGetInfoResponse {
    let t = response_type(q.header.as_ref());
    let ledger = node.ledger();
    let num = match crate::handlers::contract::contract_num(&ledger, q.contract_id.as_ref()) {
        Ok(num) => num,
        Err(code) => {
            return proto::ContractGetInfoResponse {
                header: header(code, t),
                ..Default::default()
            }
        }
    };
    let c = &ledger.contracts[&num];
    let own_id = proto::Key {
        key: Some(proto::key::Key::ContractId(contract_id(num))),
    };
    let info = proto::contract_get_info_response::ContractInfo {
        contract_id: Some(contract_id(num)),
        account_id: Some(account_id(num)),
        contract_account_id: c
            .evm_address
            .clone()
            .unwrap_or_else(|| format!("{num:040x}")),
        admin_key: Some(c.admin_key.as_ref().map_or(own_id, KeyBytes::to_proto)),
        expiration_time: Some(proto::Timestamp {
            seconds: c.expiration(),
            nanos: 0,
        }),
        auto_renew_period: Some(proto::Duration {
            seconds: c.auto_renew_period,
        }),
        storage: c.storage.len() as i64 * 64,
        memo: c.memo.clone(),
        balance: c.balance.max(0) as u64,
        deleted: c.deleted,
        ledger_id: vec![3],
        auto_renew_account_id: c.auto_renew_account.map(account_id),
        max_automatic_token_associations: c.max_automatic_token_associations,
        ..Default::default()
    };
    proto::ContractGetInfoResponse {
        header: header(Code::Ok, t),
        contract_info: Some(info),
    }
}

/// `ContractGetBytecode`: the runtime bytecode the constructor returned.
pub(super) fn contract_bytecode(
    node: &Node,
    q: &proto::ContractGetBytecodeQuery,
) -> proto::ContractGetBytecodeResponse {
    let t = response_type(q.header.as_ref());
    let ledger = node.ledger();
    match crate::handlers::contract::contract_num(&ledger, q.contract_id.as_ref()) {
        Ok(num) => proto::ContractGetBytecodeResponse {
            header: header(Code::Ok, t),
            bytecode: ledger.contracts[&num].runtime_code.clone(),
        },
        Err(code) => proto::ContractGetBytecodeResponse {
            header: header(code, t),
            ..Default::default()
        },
    }
}

/// A record's (or a local call's) `ContractFunctionResult`.
pub(super) fn function_result(
    ledger: &Ledger,
    c: &ContractResult,
) -> proto::ContractFunctionResult {
    proto::ContractFunctionResult {
        contract_id: Some(contract_id(c.contract)),
        contract_call_result: c.output.clone(),
        error_message: c.error.clone(),
        gas_used: c.gas_used,
        log_info: c
            .logs
            .iter()
            .map(|log| proto::ContractLoginfo {
                contract_id: Some(contract_id(log.contract)),
                topic: log
                    .topics
                    .iter()
                    .filter_map(|t| hex::decode(t).ok())
                    .collect(),
                data: log.data.clone(),
                ..Default::default()
            })
            .collect(),
        evm_address: Some(crate::evm::address_of(ledger, c.contract).to_vec()),
        gas: c.gas_limit as i64,
        amount: c.amount,
        function_parameters: c.function_parameters.clone(),
        sender_id: Some(account_id(c.sender)),
        ..Default::default()
    }
}

/// `ContractCallLocal`: run a call in the EVM without applying anything.
pub(super) fn call_local(
    node: &Node,
    q: &proto::ContractCallLocalQuery,
) -> proto::ContractCallLocalResponse {
    let t = response_type(q.header.as_ref());
    let mut ledger = node.ledger();
    let failed = |code: Code| proto::ContractCallLocalResponse {
        header: header(code, t),
        ..Default::default()
    };
    let num = match crate::handlers::contract::contract_num(&ledger, q.contract_id.as_ref()) {
        Ok(num) => num,
        Err(code) => return failed(code),
    };
    if q.gas <= 0 {
        return failed(Code::InsufficientGas);
    }
    if q.gas as u64 > crate::evm::MAX_GAS {
        return failed(Code::MaxGasLimitExceeded);
    }
    // The sender the query names, else the query's payer (its payment's), else 0.0.2.
    let sender = q
        .sender_id
        .as_ref()
        .and_then(account_num)
        .or_else(|| payment_payer(q.header.as_ref()))
        .unwrap_or(2);
    let run = crate::evm::run(
        &mut ledger,
        sender,
        crate::evm::Target::Call {
            num,
            data: q.function_parameters.clone(),
        },
        0,
        q.gas as u64,
        false,
    );
    let result = function_result(&ledger, &run.result);
    // A query answers OK when the call succeeded; a failed one names why in the precheck code.
    let status = if run.status == Code::Success {
        Code::Ok
    } else {
        run.status
    };
    proto::ContractCallLocalResponse {
        header: header(status, t),
        function_result: Some(result),
    }
}
