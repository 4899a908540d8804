//! What every handled transaction ends with: the fee charged (the payer debited, the node
//! and the fee collector credited), then its receipt and mirror record stored, the transfer
//! legs merged per account. Used by the node's ingest and by a schedule executing its inner
//! transaction.

use super::Outcome;
use crate::kind::Kind;
use crate::state::ledger::{Ledger, Ts, TxId, TxRecord};
use hedera_proto::services::ResponseCodeEnum as Code;

/// What the mirror record of a transaction keeps besides its outcome.
pub struct RecordMeta {
    pub max_fee: u64,
    pub memo: String,
    pub node: u64,
    pub valid_duration_seconds: i64,
    pub hash: Vec<u8>,
    /// The high-volume price multiplier (×1000), when it applied.
    pub high_volume_multiplier: Option<u64>,
}

/// Store a handled transaction's receipt and mirror record.
#[allow(clippy::too_many_arguments)]
pub fn settle(
    ledger: &mut Ledger,
    id: TxId,
    consensus: Ts,
    kind: Kind,
    fee: i64,
    mut transfers: Vec<(u64, i64)>,
    outcome: Outcome,
    meta: RecordMeta,
) {
    transfers.extend(outcome.transfers);
    let result = Code::try_from(outcome.receipt.status)
        .map_or("UNKNOWN", |c| c.as_str_name())
        .to_owned();
    let mut receipt = outcome.receipt;
    receipt.consensus_seconds = consensus.seconds;
    receipt.exchange_rates = Some(ledger.exchange_rates(consensus.seconds));
    ledger.receipts.insert(id.to_string(), receipt);
    ledger.records.push(TxRecord {
        id,
        new_pending_airdrops: outcome.new_pending_airdrops,
        automatic_associations: outcome.automatic_associations,
        consensus,
        name: kind.mirror_name().to_owned(),
        result,
        charged_fee: fee,
        max_fee: meta.max_fee,
        memo: meta.memo,
        node: meta.node,
        transfers: merge(transfers),
        entity_id: outcome.entity,
        token_transfers: outcome.token_transfers,
        nft_transfers: outcome.nft_transfers,
        valid_duration_seconds: meta.valid_duration_seconds,
        hash: meta.hash,
        contract_result: outcome.contract_result,
        assessed_custom_fees: outcome.assessed_custom_fees,
        high_volume_multiplier: meta.high_volume_multiplier,
    });
}

/// Debit the payer and credit the node (a tenth) and the fee collector (the rest).
pub fn charge_fee(ledger: &mut Ledger, payer: u64, node: u64, fee: i64) -> Vec<(u64, i64)> {
    let node_share = fee / 10;
    let collector_share = fee - node_share;
    let mut legs = vec![(payer, -fee)];
    for (num, amount) in [
        (node, node_share),
        (
            crate::state::genesis::FEE_COLLECTOR_ACCOUNT,
            collector_share,
        ),
    ] {
        if let Some(account) = ledger.accounts.get_mut(&num) {
            account.balance += amount;
            legs.push((num, amount));
        }
    }
    if let Some(account) = ledger.accounts.get_mut(&payer) {
        account.balance -= fee;
    }
    legs
}

/// Sum the legs per account (the mirror lists one entry per account), ordered by account.
fn merge(legs: Vec<(u64, i64)>) -> Vec<(u64, i64)> {
    let mut by_account = std::collections::BTreeMap::new();
    for (account, amount) in legs {
        *by_account.entry(account).or_insert(0i64) += amount;
    }
    by_account.into_iter().filter(|(_, a)| *a != 0).collect()
}
