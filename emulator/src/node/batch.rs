//! Atomic batches (HIP-551): the checks of an `AtomicBatch`'s inner transactions. Each is a
//! signed transaction of its own — node 0.0.0, a batch key the outer transaction's signatures
//! satisfy, its payer's signature — that is neither a batch nor a freeze. Running them, all or
//! nothing, is `ingest::Node::run_batch`; this module only reads.

use crate::fees;
use crate::handlers;
use crate::kind::Kind;
use crate::state::keys::{self, ActiveKeys};
use crate::state::ledger::{account_num, Ledger, TxId};
use hedera_proto::services as proto;
use prost::Message;
use proto::transaction_body::Data;
use proto::ResponseCodeEnum as Code;

/// Most inner transactions of one batch (`atomicBatch.maxNumberOfTransactions`).
pub const MAX_INNER_TRANSACTIONS: usize = 50;

/// One checked inner transaction.
pub struct Inner {
    pub body: proto::TransactionBody,
    pub id: TxId,
    pub kind: Kind,
    pub active: ActiveKeys,
    /// Its fee, and the high-volume multiplier when that applied.
    pub fee: (i64, Option<u64>),
    pub hash: Vec<u8>,
}

/// Check every inner transaction of `batch`, whose outer transaction's signatures are
/// `outer`; the inner transactions in order, or the status that refuses the batch.
pub fn inner_transactions(
    ledger: &Ledger,
    batch: &proto::AtomicBatchTransactionBody,
    outer: &ActiveKeys,
) -> Result<Vec<Inner>, Code> {
    if batch.transactions.is_empty() {
        return Err(Code::BatchListEmpty);
    }
    if batch.transactions.len() > MAX_INNER_TRANSACTIONS {
        return Err(Code::BatchSizeLimitExceeded);
    }
    let mut inners: Vec<Inner> = Vec::with_capacity(batch.transactions.len());
    for bytes in &batch.transactions {
        let signed = proto::SignedTransaction::decode(bytes.as_slice())
            .map_err(|_| Code::InvalidTransaction)?;
        let body = proto::TransactionBody::decode(signed.body_bytes.as_slice())
            .map_err(|_| Code::InvalidTransactionBody)?;
        let id = body
            .transaction_id
            .as_ref()
            .and_then(TxId::from_proto)
            .ok_or(Code::InvalidTransactionId)?;
        let data = body.data.as_ref().ok_or(Code::InvalidTransactionBody)?;
        if matches!(data, Data::AtomicBatch(_) | Data::Freeze(_)) {
            return Err(Code::BatchTransactionInBlacklist);
        }
        let kind = Kind::of(data).ok_or(Code::NotSupported)?;
        let batch_key = body.batch_key.as_ref().ok_or(Code::MissingBatchKey)?;
        if body.node_account_id.as_ref().and_then(account_num) != Some(0) {
            return Err(Code::InvalidNodeAccountId);
        }
        if inners.iter().any(|i| i.id == id) {
            return Err(Code::BatchListContainsDuplicates);
        }
        if ledger.receipts.contains_key(&id.to_string()) {
            return Err(Code::DuplicateTransaction);
        }
        // The batch's signers vouch for each inner transaction; its payer signs its own.
        if !outer.satisfies(batch_key) {
            return Err(Code::InvalidSignature);
        }
        let active = keys::verify(&signed.body_bytes, signed.sig_map.as_ref());
        let payer = ledger
            .accounts
            .get(&id.payer)
            .ok_or(Code::PayerAccountNotFound)?;
        if payer.deleted {
            return Err(Code::AccountDeleted);
        }
        if !active.satisfies(&payer.key.to_proto()) {
            return Err(Code::InvalidSignature);
        }
        handlers::pure_check(data)?;
        let signatures = signed.sig_map.as_ref().map_or(0, |m| m.sig_pair.len());
        let (base, multiplier) = fees::transaction_fee(kind, &body, data, bytes.len(), signatures);
        let fee = (
            ledger.rate(ledger.last_consensus.seconds).charge(base),
            multiplier,
        );
        // Each inner transaction's payer bounds its own fee, as outside a batch.
        if body.transaction_fee < fee.0 as u64 {
            return Err(Code::InsufficientTxFee);
        }
        let hash = <sha2::Sha384 as sha2::Digest>::digest(bytes).to_vec();
        inners.push(Inner {
            body,
            id,
            kind,
            active,
            fee,
            hash,
        });
    }
    Ok(inners)
}
