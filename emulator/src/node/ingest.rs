//! The node's ingest path: decode a submitted transaction, run the precheck in the real
//! node's order (parse and syntax, node account, time box, duplicates, support, pure checks,
//! payer, payer signature, fee and solvency), and when it passes, handle it at once: charge
//! the fee, run the handler (all-or-nothing), store the receipt and the mirror record.

use crate::fees;
use crate::handlers::settle::{charge_fee, settle, RecordMeta};
use crate::handlers::{self, Ctx, Outcome};
use crate::kind::Kind;
use crate::node::faults::Faults;
use crate::state::keys;
use crate::state::ledger::{account_num, Ledger, Ts, TxId};
use hedera_proto::services as proto;
use prost::Message;
use proto::ResponseCodeEnum as Code;
use sha2::{Digest, Sha384};
use std::sync::{Mutex, MutexGuard};

/// Largest accepted signed transaction (the node's 6 KiB).
pub const MAX_TRANSACTION_BYTES: usize = 6 * 1024;
/// What the privileged payers (the treasury 0.0.2 and the system admin 0.0.50) may submit
/// (HIP-1300).
pub const MAX_PRIVILEGED_TRANSACTION_BYTES: usize = 130 * 1024;
/// Longest transaction memo, in bytes.
pub const MAX_MEMO_BYTES: usize = 100;

/// One emulated consensus node over the shared ledger.
pub struct Node {
    pub ledger: Mutex<Ledger>,
    pub faults: Mutex<Faults>,
    /// This node's account number (0.0.3).
    pub account: u64,
    /// Where the ledger is saved after every transaction, when persistent.
    pub state: Option<crate::state::persist::StateDir>,
    /// Bumped after every transaction that reaches consensus: topic subscriptions wait on it.
    pub consensus: tokio::sync::watch::Sender<u64>,
}

impl Node {
    /// The ledger, locked. A poisoned lock is taken over: a handler changes the ledger only
    /// after every check passed (all-or-nothing), so one panicking call must not stop the node.
    pub fn ledger(&self) -> MutexGuard<'_, Ledger> {
        self.ledger.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The scripted faults, locked (taken over when poisoned, as the ledger is).
    pub fn faults(&self) -> MutexGuard<'_, Faults> {
        self.faults.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Submit a transaction; the answer is the precheck code (OK when it was handled).
    pub fn submit(&self, tx: &proto::Transaction) -> Code {
        if let Some(code) = self.faults().take_precheck() {
            return code;
        }
        let bytes = &tx.signed_transaction_bytes;
        if bytes.is_empty() {
            return Code::InvalidTransaction;
        }
        if bytes.len() > MAX_PRIVILEGED_TRANSACTION_BYTES {
            return Code::TransactionOversize;
        }
        let Ok(signed) = proto::SignedTransaction::decode(bytes.as_slice()) else {
            return Code::InvalidTransaction;
        };
        let Ok(body) = proto::TransactionBody::decode(signed.body_bytes.as_slice()) else {
            return Code::InvalidTransactionBody;
        };
        let Some(id) = body.transaction_id.as_ref().and_then(TxId::from_proto) else {
            return Code::InvalidTransactionId;
        };
        if bytes.len() > MAX_TRANSACTION_BYTES && ![2, 50].contains(&id.payer) {
            return Code::TransactionOversize;
        }
        if id.scheduled || id.nonce != 0 {
            return Code::TransactionIdFieldNotAllowed;
        }
        if body.memo.len() > MAX_MEMO_BYTES {
            return Code::MemoTooLong;
        }
        if body.memo.contains('\0') {
            return Code::InvalidZeroByteInString;
        }
        let Some(data) = body.data.as_ref() else {
            return Code::InvalidTransactionBody;
        };
        if body.node_account_id.as_ref().and_then(account_num) != Some(self.account) {
            return Code::InvalidNodeAccount;
        }
        let duration = body.transaction_valid_duration.map_or(0, |d| d.seconds);
        if !(15..=180).contains(&duration) {
            return Code::InvalidTransactionDuration;
        }
        let now = Ts::now();
        if id.valid_start > now {
            return Code::InvalidTransactionStart;
        }
        if id.valid_start.seconds + duration <= now.seconds {
            return Code::TransactionExpired;
        }
        // Signatures are verified before taking the ledger lock; the checks below still run
        // in the node's order.
        let active = keys::verify(&signed.body_bytes, signed.sig_map.as_ref());
        let hash = Sha384::digest(bytes).to_vec();

        let mut ledger = self.ledger();
        if ledger.receipts.contains_key(&id.to_string()) {
            return Code::DuplicateTransaction;
        }
        let Some(kind) = Kind::of(data) else {
            return Code::NotSupported;
        };
        if let Err(code) = handlers::pure_check(data) {
            return code;
        }
        // A batch key belongs to a batch's inner transactions only (HIP-551).
        if body.batch_key.is_some() {
            return Code::BatchKeySetOnNonInnerTransaction;
        }
        if let proto::transaction_body::Data::AtomicBatch(batch) = data {
            if let Err(code) = crate::node::batch::inner_transactions(&ledger, batch, &active) {
                return code;
            }
        }
        let submit = kind == Kind::TopicSubmit;
        if let Err(code) = handlers::custom_fees::pure_check_limits(&body.max_custom_fees, submit) {
            return code;
        }
        let Some(payer) = ledger.accounts.get(&id.payer) else {
            return Code::PayerAccountNotFound;
        };
        if payer.deleted {
            return Code::AccountDeleted;
        }
        // A hollow payer signed by the ECDSA key of its address is completed (in `apply`).
        let completes = handlers::alias::completing_key(payer, active.keys()).is_some();
        if !completes && !active.satisfies(&payer.key.to_proto()) {
            return Code::InvalidSignature;
        }
        let signatures = signed.sig_map.as_ref().map_or(0, |m| m.sig_pair.len());
        let (base, multiplier) = fees::transaction_fee(kind, &body, data, bytes.len(), signatures);
        // Priced in tinycents, charged in tinybars at the rate in force.
        let fee = ledger.rate(ledger.last_consensus.seconds).charge(base);
        if body.transaction_fee < fee as u64 {
            return Code::InsufficientTxFee;
        }
        if payer.balance < fee {
            return Code::InsufficientPayerBalance;
        }

        // Precheck passed: the transaction reaches consensus now. It is journaled before the
        // node answers, so a restart replays it (`persist`).
        let consensus = ledger.next_consensus();
        let fee = ledger.rate(consensus.seconds).charge(base);
        if let Some(state) = &self.state {
            if let Err(e) = state.append(consensus, bytes) {
                tracing::error!("hak-emu: cannot journal the transaction: {e}");
                return Code::Busy;
            }
        }
        self.apply(
            &mut ledger,
            &body,
            id,
            consensus,
            active,
            hash,
            (fee, multiplier),
            duration,
        );
        self.consensus.send_modify(|n| *n += 1);
        if let Some(state) = &self.state {
            if state.wants_snapshot() {
                if let Err(e) = state.snapshot(&ledger) {
                    tracing::error!("hak-emu: cannot snapshot the ledger: {e}");
                }
            }
        }
        Code::Ok
    }

    /// Replay a journaled transaction at its recorded consensus time (restart).
    pub fn replay(&self, ledger: &mut Ledger, bytes: &[u8], consensus: Ts) -> Result<(), String> {
        let signed = proto::SignedTransaction::decode(bytes).map_err(|e| e.to_string())?;
        let body = proto::TransactionBody::decode(signed.body_bytes.as_slice())
            .map_err(|e| e.to_string())?;
        let id = body
            .transaction_id
            .as_ref()
            .and_then(TxId::from_proto)
            .ok_or("no transaction id")?;
        let data = body.data.as_ref().ok_or("no body")?;
        let kind = Kind::of(data).ok_or("not supported")?;
        let active = keys::verify(&signed.body_bytes, signed.sig_map.as_ref());
        let hash = Sha384::digest(bytes).to_vec();
        let duration = body.transaction_valid_duration.map_or(0, |d| d.seconds);
        if consensus > ledger.last_consensus {
            ledger.last_consensus = consensus;
        }
        let signatures = signed.sig_map.as_ref().map_or(0, |m| m.sig_pair.len());
        let (base, multiplier) = fees::transaction_fee(kind, &body, data, bytes.len(), signatures);
        let fee = ledger.rate(consensus.seconds).charge(base);
        self.apply(
            ledger,
            &body,
            id,
            consensus,
            active,
            hash,
            (fee, multiplier),
            duration,
        );
        Ok(())
    }

    /// Reach consensus on a prechecked transaction: charge the fee, run the body, record it.
    #[allow(clippy::too_many_arguments)]
    fn apply(
        &self,
        ledger: &mut Ledger,
        body: &proto::TransactionBody,
        id: TxId,
        consensus: Ts,
        active: keys::ActiveKeys,
        hash: Vec<u8>,
        (fee, high_volume_multiplier): (i64, Option<u64>),
        duration: i64,
    ) {
        let Some(data) = body.data.as_ref() else {
            return;
        };
        let Some(kind) = Kind::of(data) else {
            return;
        };
        // A hollow payer that signed with the ECDSA key of its address gets that key now
        // (HIP-583's completion), before its transaction runs; replays do the same.
        let completion = ledger
            .accounts
            .get(&id.payer)
            .and_then(|payer| handlers::alias::completing_key(payer, active.keys()));
        if let Some(key) = completion {
            let payer = ledger.accounts.get_mut(&id.payer).expect("found");
            payer.key = crate::state::ledger::KeyBytes::from_proto(&key);
        }
        let fee_legs = charge_fee(ledger, id.payer, self.account, fee);
        let ctx = Ctx {
            payer: id.payer,
            active: &active,
            consensus,
            id,
            node: self.account,
            max_custom_fees: &body.max_custom_fees,
        };
        let outcome = match data {
            proto::transaction_body::Data::AtomicBatch(batch) => {
                self.run_batch(ledger, batch, &active)
            }
            _ => handlers::handle(ledger, &ctx, data).unwrap_or_else(Outcome::failed),
        };
        let meta = RecordMeta {
            max_fee: body.transaction_fee,
            memo: body.memo.clone(),
            node: self.account,
            valid_duration_seconds: duration,
            hash,
            high_volume_multiplier,
        };
        settle(ledger, id, consensus, kind, fee, fee_legs, outcome, meta);
    }
}

impl Node {
    /// Run a batch's inner transactions in order, each with its own consensus time, fee and
    /// receipt. The first that fails undoes them all: the ledger returns to before the batch,
    /// then every inner transaction that ran is charged its fee again and keeps a receipt (its
    /// own status for the failed one, `REVERTED_SUCCESS` for those before it), and the batch
    /// is `INNER_TRANSACTION_FAILED`.
    fn run_batch(
        &self,
        ledger: &mut Ledger,
        batch: &proto::AtomicBatchTransactionBody,
        outer: &keys::ActiveKeys,
    ) -> Outcome {
        let inners = match crate::node::batch::inner_transactions(ledger, batch, outer) {
            Ok(inners) => inners,
            Err(code) => return Outcome::failed(code),
        };
        let before = ledger.clone();
        let mut ran: Vec<(usize, Ts, i32)> = Vec::with_capacity(inners.len());
        for (i, inner) in inners.iter().enumerate() {
            let consensus = ledger.next_consensus();
            let status = self.apply_inner(ledger, inner, consensus);
            ran.push((i, consensus, status));
            if status != Code::Success as i32 {
                let last = ledger.last_consensus;
                *ledger = before;
                ledger.last_consensus = last;
                for &(i, consensus, status) in &ran {
                    let inner = &inners[i];
                    let kept = if status == Code::Success as i32 {
                        Code::RevertedSuccess
                    } else {
                        Code::try_from(status).unwrap_or(Code::Unknown)
                    };
                    let (fee, multiplier) = inner.fee;
                    let legs = charge_fee(ledger, inner.id.payer, self.account, fee);
                    let meta = inner_meta(inner, self.account, multiplier);
                    let outcome = Outcome::failed(kept);
                    settle(
                        ledger, inner.id, consensus, inner.kind, fee, legs, outcome, meta,
                    );
                }
                return Outcome::failed(Code::InnerTransactionFailed);
            }
        }
        Outcome::success()
    }

    /// One inner transaction of a batch, as `apply` runs a transaction: its status.
    fn apply_inner(
        &self,
        ledger: &mut Ledger,
        inner: &crate::node::batch::Inner,
        consensus: Ts,
    ) -> i32 {
        let (fee, multiplier) = inner.fee;
        let meta = inner_meta(inner, self.account, multiplier);
        let Some(data) = inner.body.data.as_ref() else {
            return Code::InvalidTransactionBody as i32;
        };
        if ledger
            .accounts
            .get(&inner.id.payer)
            .is_none_or(|p| p.balance < fee)
        {
            let outcome = Outcome::failed(Code::InsufficientPayerBalance);
            settle(
                ledger,
                inner.id,
                consensus,
                inner.kind,
                0,
                Vec::new(),
                outcome,
                meta,
            );
            return Code::InsufficientPayerBalance as i32;
        }
        let legs = charge_fee(ledger, inner.id.payer, self.account, fee);
        let ctx = Ctx {
            payer: inner.id.payer,
            active: &inner.active,
            consensus,
            id: inner.id,
            node: self.account,
            max_custom_fees: &inner.body.max_custom_fees,
        };
        let outcome = handlers::handle(ledger, &ctx, data).unwrap_or_else(Outcome::failed);
        let status = outcome.receipt.status;
        settle(
            ledger, inner.id, consensus, inner.kind, fee, legs, outcome, meta,
        );
        status
    }
}

fn inner_meta(inner: &crate::node::batch::Inner, node: u64, multiplier: Option<u64>) -> RecordMeta {
    RecordMeta {
        max_fee: inner.body.transaction_fee,
        memo: inner.body.memo.clone(),
        node,
        valid_duration_seconds: inner
            .body
            .transaction_valid_duration
            .map_or(0, |d| d.seconds),
        hash: inner.hash.clone(),
        high_volume_multiplier: multiplier,
    }
}
