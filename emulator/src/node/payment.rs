//! Paying for queries, as the node's query workflow does: a paid query carries a signed
//! `CryptoTransfer` that credits the node at least the query's cost (`INSUFFICIENT_TX_FEE`
//! otherwise, a missing payment included), from a payer who can afford the cost and the
//! transfer's fee (`INSUFFICIENT_PAYER_BALANCE`). The payment is then submitted as any
//! transaction (the same precheck, fee and handling), and only then is the query answered.
//!
//! Also the plumbing every query type shares: its header, and an empty response of the
//! matching type.

use crate::node::ingest::Node;
use crate::state::ledger::account_num;
use hedera_proto::services as proto;
use prost::Message;
use proto::query::Query as Q;
use proto::response::Response as R;
use proto::ResponseCodeEnum as Code;

macro_rules! every_query {
    ($m:ident) => {
        $m!(
            GetByKey => GetByKey(GetByKeyResponse),
            GetBySolidityId => GetBySolidityId(GetBySolidityIdResponse),
            ContractCallLocal => ContractCallLocal(ContractCallLocalResponse),
            ContractGetInfo => ContractGetInfo(ContractGetInfoResponse),
            ContractGetBytecode => ContractGetBytecodeResponse(ContractGetBytecodeResponse),
            ContractGetRecords => ContractGetRecordsResponse(ContractGetRecordsResponse),
            CryptogetAccountBalance => CryptogetAccountBalance(CryptoGetAccountBalanceResponse),
            CryptoGetAccountRecords => CryptoGetAccountRecords(CryptoGetAccountRecordsResponse),
            CryptoGetInfo => CryptoGetInfo(CryptoGetInfoResponse),
            CryptoGetLiveHash => CryptoGetLiveHash(CryptoGetLiveHashResponse),
            CryptoGetProxyStakers => CryptoGetProxyStakers(CryptoGetStakersResponse),
            FileGetContents => FileGetContents(FileGetContentsResponse),
            FileGetInfo => FileGetInfo(FileGetInfoResponse),
            TransactionGetReceipt => TransactionGetReceipt(TransactionGetReceiptResponse),
            TransactionGetRecord => TransactionGetRecord(TransactionGetRecordResponse),
            TransactionGetFastRecord => TransactionGetFastRecord(TransactionGetFastRecordResponse),
            ConsensusGetTopicInfo => ConsensusGetTopicInfo(ConsensusGetTopicInfoResponse),
            NetworkGetVersionInfo => NetworkGetVersionInfo(NetworkGetVersionInfoResponse),
            TokenGetInfo => TokenGetInfo(TokenGetInfoResponse),
            ScheduleGetInfo => ScheduleGetInfo(ScheduleGetInfoResponse),
            TokenGetAccountNftInfos => TokenGetAccountNftInfos(TokenGetAccountNftInfosResponse),
            TokenGetNftInfo => TokenGetNftInfo(TokenGetNftInfoResponse),
            TokenGetNftInfos => TokenGetNftInfos(TokenGetNftInfosResponse),
            NetworkGetExecutionTime => NetworkGetExecutionTime(NetworkGetExecutionTimeResponse),
            AccountDetails => AccountDetails(GetAccountDetailsResponse),
        )
    };
}

/// The header of any query.
pub fn query_header(query: &Q) -> Option<&proto::QueryHeader> {
    macro_rules! get {
        ($($q:ident => $r:ident($t:ident)),* $(,)?) => {
            match query {
                $(Q::$q(q) => q.header.as_ref(),)*
            }
        };
    }
    every_query!(get)
}

/// An answer of the query's own response type with only a header.
pub fn empty_response(query: &Q, header: Option<proto::ResponseHeader>) -> Option<R> {
    macro_rules! empty {
        ($($q:ident => $r:ident($t:ident)),* $(,)?) => {
            match query {
                $(Q::$q(_) => Some(R::$r(proto::$t { header, ..Default::default() })),)*
            }
        };
    }
    every_query!(empty)
}

/// The header of any response.
pub fn response_header(response: &R) -> Option<&proto::ResponseHeader> {
    macro_rules! get {
        ($($q:ident => $r:ident($t:ident)),* $(,)?) => {
            match response {
                $(R::$r(r) => r.header.as_ref(),)*
            }
        };
    }
    every_query!(get)
}

pub fn response_header_mut(response: &mut R) -> Option<&mut proto::ResponseHeader> {
    macro_rules! get {
        ($($q:ident => $r:ident($t:ident)),* $(,)?) => {
            match response {
                $(R::$r(r) => r.header.as_mut(),)*
            }
        };
    }
    every_query!(get)
}

/// Check a paid query's payment and submit it.
pub fn pay(node: &Node, header: Option<&proto::QueryHeader>, cost: u64) -> Result<(), Code> {
    use proto::transaction_body::Data;
    let payment = header
        .and_then(|h| h.payment.as_ref())
        .ok_or(Code::InsufficientTxFee)?;
    let signed = proto::SignedTransaction::decode(payment.signed_transaction_bytes.as_slice())
        .map_err(|_| Code::InvalidTransaction)?;
    let body = proto::TransactionBody::decode(signed.body_bytes.as_slice())
        .map_err(|_| Code::InvalidTransactionBody)?;
    let Some(Data::CryptoTransfer(transfer)) = &body.data else {
        return Err(Code::InsufficientTxFee);
    };
    let payer = body
        .transaction_id
        .as_ref()
        .and_then(|id| id.account_id.as_ref())
        .and_then(account_num)
        .ok_or(Code::InvalidTransactionId)?;
    let amounts = transfer
        .transfers
        .as_ref()
        .map_or(&[][..], |t| t.account_amounts.as_slice());
    let to_node: i64 = amounts
        .iter()
        .filter(|a| a.account_id.as_ref().and_then(account_num) == Some(node.account))
        .map(|a| a.amount)
        .filter(|a| *a > 0)
        .sum();
    if to_node < cost as i64 {
        return Err(Code::InsufficientTxFee);
    }
    {
        let ledger = node.ledger();
        let fee = crate::kind::Kind::CryptoTransfer.fee();
        if let Some(account) = ledger.accounts.get(&payer) {
            if account.balance < fee + to_node {
                return Err(Code::InsufficientPayerBalance);
            }
        }
    }
    match node.submit(payment) {
        Code::Ok => Ok(()),
        code => Err(code),
    }
}
