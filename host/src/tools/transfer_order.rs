//! The order and shape in which the JS SDK encodes transfer lists, so hak's bodies equal the
//! kit's: `addHbarTransfer` / `addTokenTransfer` merge amounts to the same account (keeping the
//! first entry's approval flag) and the lists are sorted by ID when the body is built; NFT
//! transfers sort by sender, receiver and serial. The Rust SDK keeps entries as given, so the
//! tools add them in the order these functions return.
//! Only ordering lives here; amounts and ids are normalised in `normalise`.

use hedera::{AccountId, NftId, TokenId};
use std::collections::hash_map::{Entry, HashMap};

/// An HBAR movement: account, tinybars, approved (spending an allowance).
pub type HbarMove = (AccountId, i64, bool);
/// A fungible token movement: token, account, base units, approved.
pub type TokenMove = (TokenId, AccountId, i64, bool);
/// An NFT movement: the NFT, sender, receiver, approved.
pub type NftMove = (NftId, AccountId, AccountId, bool);

fn account_key(a: &AccountId) -> (u64, u64, u64) {
    (a.shard, a.realm, a.num)
}

fn token_key(t: &TokenId) -> (u64, u64, u64) {
    (t.shard, t.realm, t.num)
}

/// Up to this many distinct ids, merging compares them one by one (a transfer has a handful
/// of entries: hashing each id with SipHash cost more than the comparisons); past it, an index.
const LINEAR_MERGE_MAX: usize = 16;

/// Merge `moves` by their ids (`same` compares two moves' ids in place, `key` copies them out
/// for the index: equal keys exactly when `same`; amounts added, the first entry's other
/// fields kept), in first-seen order: one pass, comparing with the entries so far while there
/// are few of them, then with an index, so a list of n moves costs O(n), not O(n²). The
/// comparisons borrow: an `AccountId` is 256 bytes, and copying one out per comparison was
/// most of the memory a transfer's merge moved.
fn merge_by<T, K: std::hash::Hash + Eq>(
    moves: impl IntoIterator<Item = T>,
    same: impl Fn(&T, &T) -> bool,
    key: impl Fn(&T) -> K,
    amount: impl Fn(&mut T) -> &mut i64,
) -> Vec<T> {
    let mut moves = moves.into_iter();
    let mut merged: Vec<T> = Vec::with_capacity(moves.size_hint().0);
    let add = |into: &mut T, mut m: T| {
        let added = *amount(&mut m);
        let total = amount(into);
        *total = total.saturating_add(added);
    };
    while merged.len() < LINEAR_MERGE_MAX {
        let Some(m) = moves.next() else {
            return merged;
        };
        match merged.iter_mut().find(|e| same(e, &m)) {
            Some(into) => add(into, m),
            None => merged.push(m),
        }
    }
    let mut index: HashMap<K, usize> = HashMap::with_capacity(merged.len() * 2);
    for (at, m) in merged.iter().enumerate() {
        index.insert(key(m), at);
    }
    for m in moves {
        match index.entry(key(&m)) {
            Entry::Occupied(at) => add(&mut merged[*at.get()], m),
            Entry::Vacant(slot) => {
                slot.insert(merged.len());
                merged.push(m);
            }
        }
    }
    merged
}

/// HBAR transfers merged per account and sorted by account ID.
pub fn js_hbar_transfer_order(transfers: impl IntoIterator<Item = HbarMove>) -> Vec<HbarMove> {
    let mut merged = merge_by(
        transfers,
        |(a, ..), (b, ..)| a == b,
        |(a, ..)| *a,
        |(_, amount, _)| amount,
    );
    // Stable, like `Array.prototype.sort`.
    merged.sort_by_key(|(a, ..)| account_key(a));
    merged
}

/// Token transfers merged per (token, account) and sorted by token, then account.
pub fn js_token_transfer_order(transfers: impl IntoIterator<Item = TokenMove>) -> Vec<TokenMove> {
    let mut merged = merge_by(
        transfers,
        |(t, a, ..), (u, b, ..)| t == u && a == b,
        |(t, a, ..)| (*t, *a),
        |(_, _, amount, _)| amount,
    );
    merged.sort_by_key(|(t, a, ..)| (token_key(t), account_key(a)));
    merged
}

/// NFT transfers sorted by token, sender, receiver and serial.
pub fn js_nft_transfer_order(transfers: impl IntoIterator<Item = NftMove>) -> Vec<NftMove> {
    let mut moves: Vec<NftMove> = transfers.into_iter().collect();
    moves.sort_by_key(|(nft, from, to, _)| {
        (
            token_key(&nft.token_id),
            account_key(from),
            account_key(to),
            nft.serial,
        )
    });
    moves
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u64) -> AccountId {
        AccountId::new(0, 0, n)
    }

    #[test]
    fn hbar_transfers_merge_per_account_and_sort() {
        let order = js_hbar_transfer_order([
            (id(9), 5, false),
            (id(2), -7, true),
            (id(9), 2, true),
            (id(1000), 0, false),
        ]);
        assert_eq!(
            order,
            [(id(2), -7, true), (id(9), 7, false), (id(1000), 0, false)]
        );
    }

    #[test]
    fn long_lists_merge_the_same_past_the_linear_part() {
        // 40 accounts, each named three times (spread so repeats fall on both sides of the
        // switch from comparisons to the index).
        let moves: Vec<HbarMove> = (0..120u64)
            .map(|i| (id(100 + (i * 7) % 40), 1 + i as i64, i % 2 == 0))
            .collect();
        let order = js_hbar_transfer_order(moves.clone());
        assert_eq!(order.len(), 40);
        for (account, total, approved) in order {
            let mine: Vec<&HbarMove> = moves.iter().filter(|m| m.0 == account).collect();
            assert_eq!(total, mine.iter().map(|m| m.1).sum::<i64>());
            assert_eq!(
                approved, mine[0].2,
                "the first entry's other fields are kept"
            );
        }
    }

    #[test]
    fn token_transfers_merge_per_token_and_account_and_sort() {
        let t = |n| TokenId::new(0, 0, n);
        let order = js_token_transfer_order([
            (t(7), id(9), 5, false),
            (t(5), id(9), 1, false),
            (t(7), id(2), -6, true),
            (t(7), id(9), 1, false),
        ]);
        assert_eq!(
            order,
            [
                (t(5), id(9), 1, false),
                (t(7), id(2), -6, true),
                (t(7), id(9), 6, false)
            ]
        );
    }

    #[test]
    fn nft_transfers_sort_by_sender_receiver_serial() {
        let nft = |s| NftId {
            token_id: TokenId::new(0, 0, 7),
            serial: s,
        };
        let order = js_nft_transfer_order([
            (nft(3), id(1), id(9), false),
            (nft(1), id(1), id(9), false),
            (nft(2), id(1), id(4), false),
        ]);
        let serials: Vec<u64> = order.iter().map(|(n, ..)| n.serial).collect();
        assert_eq!(serials, [2, 1, 3]);
    }
}
