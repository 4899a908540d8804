//! RETURN_BYTES: a transaction id for the context account, frozen for the configured nodes,
//! serialised. Nothing is signed or submitted.

use super::{SecondaryResult, StrategyEnv, StrategyError, TransactionStrategy};
use crate::tools::normalise::iso_millis;
use crate::tools::transaction::{kit_transaction_id, unique_transaction_id};
use crate::tools::{BuiltTransaction, ToolError};
use serde::Serialize;

/// The kit's `ReturnBytesResult` (bytes as 0x-hex).
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ReturnBytesResult {
    pub bytes: String,
    pub status: String,
    pub transaction_id: String,
    pub payer_account_id: String,
    #[serde(rename = "type")]
    pub type_name: String,
    pub expires_at: String,
    pub memo: String,
}

impl ReturnBytesResult {
    /// The result as a JSON object, its strings moved rather than copied (the hex bytes are
    /// the longest string of a call).
    pub fn into_json(self) -> serde_json::Value {
        // Sized once: growing an index map rehashes every key it holds.
        let mut raw = serde_json::Map::with_capacity(7);
        raw.insert("bytes".into(), self.bytes.into());
        raw.insert("status".into(), self.status.into());
        raw.insert("transactionId".into(), self.transaction_id.into());
        raw.insert("payerAccountId".into(), self.payer_account_id.into());
        raw.insert("type".into(), self.type_name.into());
        raw.insert("expiresAt".into(), self.expires_at.into());
        raw.insert("memo".into(), self.memo.into());
        raw.into()
    }
}

pub struct ReturnBytesStrategy;

impl TransactionStrategy for ReturnBytesStrategy {
    fn handle(
        &self,
        built: BuiltTransaction,
        env: &StrategyEnv<'_>,
    ) -> Result<SecondaryResult, StrategyError> {
        let payer = env.context.account_id.ok_or_else(|| {
            ToolError::message("Account ID is required in context for RETURN_BYTES mode")
        })?;
        let BuiltTransaction {
            mut tx,
            type_name,
            hbar_transfers,
            ..
        } = built;
        // The lifecycle may have fixed the id already (to record it with the call's budget
        // reservations); one for another payer is replaced, as the kit does.
        let id = match tx.get_transaction_id() {
            Some(id) if id.account_id == payer => id,
            _ => {
                let id = unique_transaction_id(payer);
                tx.transaction_id(id);
                id
            }
        };
        if tx.get_node_account_ids().is_none() {
            if env.node_account_ids.is_empty() {
                return Err(ToolError::message(
                    "no node account ids configured to freeze the transaction for",
                )
                .into());
            }
            tx.node_account_ids(env.node_account_ids.iter().copied());
        }
        tx.freeze()
            .map_err(|e| ToolError::message(format!("cannot freeze transaction: {e}")))?;
        let bytes = super::wire::wallet_bytes(&tx, type_name, hbar_transfers.as_deref())
            .map_err(ToolError::message)?;
        let valid_for = tx
            .get_transaction_valid_duration()
            .unwrap_or(time::Duration::seconds(120));
        Ok(SecondaryResult::Bytes(ReturnBytesResult {
            bytes: crate::tools::normalise::hex_0x(&bytes),
            status: "SUCCESS".into(),
            transaction_id: kit_transaction_id(&id),
            payer_account_id: {
                let mut text = String::with_capacity(24);
                crate::tools::normalise::push_account(&mut text, &payer);
                text
            },
            type_name: type_name.into(),
            expires_at: iso_millis(id.valid_start + valid_for),
            memo: tx.get_transaction_memo().to_owned(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transaction_ids_pad_nanoseconds_like_the_js_sdk() {
        let payer = hedera::AccountId::new(0, 0, 1001);
        let start =
            time::OffsetDateTime::from_unix_timestamp_nanos(1_796_046_811_000_012_345).unwrap();
        let mut id = hedera::TransactionId {
            account_id: payer,
            valid_start: start,
            nonce: None,
            scheduled: false,
        };
        assert_eq!(kit_transaction_id(&id), "0.0.1001@1796046811.000012345");
        for account in [
            hedera::AccountId::new(0, 0, 1001),
            hedera::AccountId::new(3, 17, u64::MAX),
            <hedera::AccountId as std::str::FromStr>::from_str("0.0.302a300506032b6570032100e0c8ec2758a5879ffac226a13c0c516b799e72e35141a0dd828f94d37988a4b7").unwrap(),
        ] {
            let mut other = hedera::TransactionId { account_id: account, ..id };
            other.scheduled = false;
            other.nonce = None;
            assert_eq!(
                kit_transaction_id(&other),
                format!("{account}@1796046811.000012345"),
                "{account}"
            );
        }
        id.scheduled = true;
        id.nonce = Some(3);
        assert_eq!(
            kit_transaction_id(&id),
            "0.0.1001@1796046811.000012345?scheduled/3"
        );
    }
}
