//! The bytes a wallet gets in return-bytes mode: a `TransactionList` laid out exactly as the
//! JS SDK (`@hiero-ledger/sdk`, the kit's own) writes it, so any Hedera SDK's
//! `Transaction.fromBytes` reads it back:
//! - one entry per (chunk, node), chunk-major (every node of chunk 1, then of chunk 2, …);
//! - each entry carries only `signedTransactionBytes`: a `SignedTransaction` of the body and an
//!   empty signature map. The deprecated `bodyBytes` / `sigMap` of `Transaction` stay empty
//!   (the Rust SDK fills both as well, and the JS SDK then counts every body twice and refuses
//!   the list with "failed to validate transaction bodies");
//! - a topic message longer than one chunk (1,024 bytes) is cut into chunks as the JS SDK cuts
//!   it: chunk `i` gets the transaction id of chunk 1 plus `i` nanoseconds and the chunk info
//!   `{initial id, total, number}`; a one-chunk message carries the trivial chunk info too.
//!   (The Rust SDK's `to_bytes` writes only the first chunk.)
//!
//! This is the one place return-bytes output is serialised. It starts from the SDK's encoded
//! signed transactions (whose data encoding the SDK owns) and only lays them out; the list is
//! written once and hex-encoded once (by the strategy).

use crate::tools::consensus::chunking::{chunk_count, too_many_chunks, CHUNK_SIZE};
use hedera::{AnyTransaction, TopicMessageSubmitTransaction};
use hedera_proto::services;
use prost::Message;

/// Serialise a frozen transaction as the JS SDK would (see the module doc). `hbar_transfers`,
/// when the tool stated them ([`crate::tools::BuiltTransaction::hbar_transfers`]), are all
/// the data of a `TransferTransaction`, in the SDK's order: for one node its bytes are then
/// written by [`super::transfer_wire`] without the SDK's encoding (the same bytes: its
/// differential test, and the wallet tests that have the SDKs read, sign and submit them).
pub fn wallet_bytes(
    tx: &AnyTransaction,
    type_name: &str,
    hbar_transfers: Option<&[crate::tools::transfer_order::HbarMove]>,
) -> Result<Vec<u8>, String> {
    if let Some(transfers) = hbar_transfers.filter(|_| type_name == "TransferTransaction") {
        if let Some(bytes) = super::transfer_wire::transaction_list(tx, transfers) {
            return Ok(bytes);
        }
    }
    sdk_wallet_bytes(tx, type_name)
}

/// [`wallet_bytes`] from the SDK's encoding of each node's `SignedTransaction`, kept as it is
/// (never decoded and re-encoded); for one node the SDK builds and encodes the body exactly
/// once. Only a topic message's bodies are read back, to lay out its chunks.
pub fn sdk_wallet_bytes(tx: &AnyTransaction, type_name: &str) -> Result<Vec<u8>, String> {
    let message = if type_name == "TopicMessageSubmitTransaction" {
        tx.clone()
            .downcast::<TopicMessageSubmitTransaction>()
            .ok()
            .and_then(|t| t.get_message().map(<[u8]>::to_vec))
    } else {
        None
    };
    let signed = signed_per_node(tx)?;
    let signed = match message {
        Some(message) => chunked(&signed, &message)?,
        None => signed,
    };
    Ok(transaction_list(signed))
}

/// A frozen topic message cut as the JS SDK cuts it, one `TransactionList` per chunk (each
/// with that chunk's transaction for every node), in order: for sending the chunks one by one
/// (the Rust SDK reads a list of several chunks back wrongly: it indexes its nodes across
/// chunks).
pub fn message_chunks(tx: &AnyTransaction) -> Result<Vec<Vec<u8>>, String> {
    let message = tx
        .clone()
        .downcast::<TopicMessageSubmitTransaction>()
        .ok()
        .and_then(|t| t.get_message().map(<[u8]>::to_vec))
        .ok_or("not a topic message")?;
    let signed = signed_per_node(tx)?;
    let nodes = signed.len().max(1);
    let all = chunked(&signed, &message)?;
    Ok(all
        .chunks(nodes)
        .map(|chunk| transaction_list(chunk.to_vec()))
        .collect())
}

/// The encoded `SignedTransaction` of every node the SDK froze the transaction for.
fn signed_per_node(tx: &AnyTransaction) -> Result<Vec<Vec<u8>>, String> {
    let cannot = |e: hedera::Error| format!("cannot serialise transaction: {e}");
    if tx
        .get_node_account_ids()
        .is_some_and(|nodes| nodes.len() == 1)
    {
        return Ok(vec![tx.to_signed_transaction_bytes().map_err(cannot)?]);
    }
    let sdk_bytes = tx.to_bytes().map_err(cannot)?;
    let list = hedera_proto::sdk::TransactionList::decode(sdk_bytes.as_slice())
        .map_err(|e| format!("cannot read the SDK's transaction list: {e}"))?;
    list.transaction_list
        .into_iter()
        .map(|entry| {
            if entry.signed_transaction_bytes.is_empty() {
                Err("the SDK wrote a transaction without signed transaction bytes".to_owned())
            } else {
                Ok(entry.signed_transaction_bytes)
            }
        })
        .collect()
}

/// A `TransactionList` whose entries carry only `signedTransactionBytes`, each moved in.
fn transaction_list(signed: Vec<Vec<u8>>) -> Vec<u8> {
    let transaction_list = signed
        .into_iter()
        .map(|signed_transaction_bytes| services::Transaction {
            signed_transaction_bytes,
            ..Default::default()
        })
        .collect();
    hedera_proto::sdk::TransactionList { transaction_list }.encode_to_vec()
}

/// Every chunk of a topic message, for every node the SDK froze the transaction for.
fn chunked(per_node: &[Vec<u8>], message: &[u8]) -> Result<Vec<Vec<u8>>, String> {
    if let Some(refusal) = too_many_chunks(message.len()) {
        return Err(refusal);
    }
    let bodies: Vec<services::TransactionBody> = per_node
        .iter()
        .map(|signed| {
            let signed = services::SignedTransaction::decode(signed.as_slice())?;
            services::TransactionBody::decode(signed.body_bytes.as_slice())
        })
        .collect::<Result<_, _>>()
        .map_err(|e| format!("cannot read the SDK's transaction body: {e}"))?;
    let total = chunk_count(message.len()).max(1);
    let initial = bodies
        .first()
        .and_then(|b| b.transaction_id.clone())
        .ok_or("the frozen topic message has no transaction id")?;
    let mut out = Vec::with_capacity(total * bodies.len());
    for number in 0..total {
        let id = nth_transaction_id(&initial, number);
        let end = ((number + 1) * CHUNK_SIZE).min(message.len());
        let part = &message[(number * CHUNK_SIZE).min(end)..end];
        for body in &bodies {
            let mut body = body.clone();
            body.transaction_id = Some(id.clone());
            let Some(services::transaction_body::Data::ConsensusSubmitMessage(submit)) =
                &mut body.data
            else {
                return Err("the frozen topic message has no submit-message body".into());
            };
            submit.message = part.to_vec();
            submit.chunk_info = Some(services::ConsensusMessageChunkInfo {
                initial_transaction_id: Some(initial.clone()),
                total: total as i32,
                number: number as i32 + 1,
            });
            out.push(
                services::SignedTransaction {
                    body_bytes: body.encode_to_vec(),
                    sig_map: Some(services::SignatureMap::default()),
                    ..Default::default()
                }
                .encode_to_vec(),
            );
        }
    }
    Ok(out)
}

/// The id of chunk `n` (0-based): the first chunk's valid start plus `n` nanoseconds, carried
/// into the seconds (the JS SDK adds to the nanoseconds alone, which only differs when they
/// would pass 999,999,999 — a timestamp no network accepts).
fn nth_transaction_id(initial: &services::TransactionId, n: usize) -> services::TransactionId {
    let mut id = initial.clone();
    if let Some(start) = &mut id.transaction_valid_start {
        let nanos = i64::from(start.nanos) + n as i64;
        start.seconds += nanos / 1_000_000_000;
        start.nanos = (nanos % 1_000_000_000) as i32;
    }
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_ids_add_nanoseconds_with_carry() {
        let initial = services::TransactionId {
            transaction_valid_start: Some(services::Timestamp {
                seconds: 10,
                nanos: 999_999_999,
            }),
            ..Default::default()
        };
        let second = nth_transaction_id(&initial, 1);
        let start = second.transaction_valid_start.unwrap();
        assert_eq!((start.seconds, start.nanos), (11, 0));
        let same = nth_transaction_id(&initial, 0);
        assert_eq!(same, initial);
    }
}
