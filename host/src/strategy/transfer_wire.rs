//! The return-bytes `TransactionList` of an HBAR-only `TransferTransaction` for one node,
//! written straight from the transaction's header and its ordered transfers: the same bytes,
//! byte for byte, as the SDK's own encoding that [`super::wire`] lays out for every other
//! transaction (held to it by a differential test over generated transfers; the wallet tests
//! have the JS and Rust SDKs read, sign and submit what it writes). Not checked per call in
//! debug builds: the instruction gate counts a debug build, and would count the SDK's
//! encoding on top of this one.
//!
//! Why by hand: `transfer_hbar_tool` is the call most agents make, and the SDK spends ~6,000
//! instructions on its bytes (a quarter of a call without plugins): it builds the body per
//! node with two throwaway transaction ids (`TransactionId::generate` for chunk info a
//! transfer has no use for), encodes it through prost's nested length passes, then wraps it
//! in a `SignedTransaction` and a `Transaction` that also carries a copy of the body. This
//! writer measures each nested message once with arithmetic and writes it once. It knows only
//! the fields such a body has and declines (`None`) anything else — an account alias, several
//! nodes, custom fee limits, a batch key — which then takes the SDK's
//! path. Nothing here signs: return-bytes transactions carry an empty signature map.
//!
//! The varint, key and ZigZag helpers are written here too: prost has them, but in its
//! `encoding` module, which it hides from its documentation as not part of its API.
//!
//! Field numbers are those of the Hedera protobufs (`transaction.proto`,
//! `basic_types.proto`, `crypto_transfer.proto`, `transaction_contents.proto`,
//! `transaction_list.proto`), in the order prost writes them.

use crate::tools::transfer_order::HbarMove;
use hedera::{AccountId, AnyTransaction};

/// Protobuf wire types used here.
const VARINT: u64 = 0;
const LEN: u64 = 2;

/// The `TransactionList` (one entry, one node) of the frozen `tx` whose data is the HBAR
/// transfers `transfers` (account, tinybars, approved) in the order the SDK holds them;
/// `None` when `tx` has anything this writer does not write.
pub fn transaction_list(tx: &AnyTransaction, transfers: &[HbarMove]) -> Option<Vec<u8>> {
    let header = Header::of(tx)?;
    if transfers.iter().any(|(account, ..)| !plain(account)) {
        return None;
    }
    let lens = Lens::of(&header, transfers);
    // SignedTransaction { bodyBytes = 1, sigMap = 2 (present, empty) }
    let signed_len = field_len(1, lens.body) + 2;
    // Transaction { signedTransactionBytes = 5 }
    let entry_len = field_len(5, signed_len);
    // Measured first, so the list is written once into a buffer of its exact size.
    let mut out = Vec::with_capacity(field_len(1, entry_len));
    // TransactionList { transactionList = 1 }
    key(&mut out, 1, LEN);
    varint(&mut out, entry_len as u64);
    key(&mut out, 5, LEN);
    varint(&mut out, signed_len as u64);
    key(&mut out, 1, LEN);
    varint(&mut out, lens.body as u64);
    write_body(&mut out, &header, transfers, &lens);
    key(&mut out, 2, LEN);
    out.push(0);
    Some(out)
}

/// What the body takes from the transaction besides its data.
struct Header<'a> {
    id: hedera::TransactionId,
    node: AccountId,
    fee: u64,
    valid_seconds: i64,
    memo: &'a str,
}

impl<'a> Header<'a> {
    fn of(tx: &'a AnyTransaction) -> Option<Self> {
        let node = match tx.get_node_account_ids()? {
            [node] => *node,
            _ => return None,
        };
        let id = tx.get_transaction_id()?;
        let plain_id = plain(&id.account_id) && plain(&node);
        let nothing_else = tx.get_custom_fee_limits().is_empty() && tx.get_batch_key().is_none();
        if !(plain_id && nothing_else) {
            return None;
        }
        Some(Header {
            id,
            node,
            // The SDK writes `to_tinybars() as u64`.
            fee: tx.get_max_transaction_fee()?.to_tinybars() as u64,
            valid_seconds: tx
                .get_transaction_valid_duration()
                .unwrap_or(time::Duration::seconds(120))
                .whole_seconds(),
            memo: tx.get_transaction_memo(),
        })
    }
}

/// An account written as shard, realm and number (no alias, no EVM address).
fn plain(account: &AccountId) -> bool {
    account.alias.is_none() && account.evm_address.is_none()
}

/// The lengths of the body's nested messages (protobuf writes each one's length first).
struct Lens {
    timestamp: usize,
    id: usize,
    duration: usize,
    /// `TransferList`.
    list: usize,
    /// `CryptoTransferTransactionBody`.
    transfer: usize,
    body: usize,
}

impl Lens {
    fn of(header: &Header<'_>, transfers: &[HbarMove]) -> Lens {
        let start = header.id.valid_start;
        // Timestamp { seconds = 1, nanos = 2 }
        let timestamp =
            int_len(1, start.unix_timestamp() as u64) + int_len(2, u64::from(start.nanosecond()));
        // TransactionID { transactionValidStart = 1, accountID = 2, scheduled = 3, nonce = 4 }
        let id = field_len(1, timestamp)
            + field_len(2, account_len(&header.id.account_id))
            + int_len(3, u64::from(header.id.scheduled))
            + int_len(4, nonce(header) as u64);
        // Duration { seconds = 1 }
        let duration = int_len(1, header.valid_seconds as u64);
        // CryptoTransferTransactionBody { transfers = 1 (absent when empty) }
        let list: usize = transfers.iter().map(|t| field_len(1, amount_len(t))).sum();
        let transfer = if transfers.is_empty() {
            0
        } else {
            field_len(1, list)
        };
        // TransactionBody: transactionID = 1, nodeAccountID = 2, transactionFee = 3,
        // transactionValidDuration = 4, memo = 6, cryptoTransfer = 14.
        let body = field_len(1, id)
            + field_len(2, account_len(&header.node))
            + int_len(3, header.fee)
            + field_len(4, duration)
            + bytes_len(6, header.memo.len())
            + field_len(14, transfer);
        Lens {
            timestamp,
            id,
            duration,
            list,
            transfer,
            body,
        }
    }
}

/// The transaction id's nonce as written (`int32`, sign-extended like every protobuf int).
fn nonce(header: &Header<'_>) -> i64 {
    i64::from(header.id.nonce.unwrap_or_default())
}

/// TransferList { accountAmounts = 1 };
/// AccountAmount { accountID = 1, amount = 2 (sint64), is_approval = 3 }
fn amount_len((account, amount, approved): &HbarMove) -> usize {
    field_len(1, account_len(account))
        + int_len(2, zigzag(*amount))
        + int_len(3, u64::from(*approved))
}

/// `TransactionBody` (field numbers in [`Lens::of`]), `lens` measured from the same values.
fn write_body(out: &mut Vec<u8>, header: &Header<'_>, transfers: &[HbarMove], lens: &Lens) {
    let start = header.id.valid_start;
    key(out, 1, LEN);
    varint(out, lens.id as u64);
    key(out, 1, LEN);
    varint(out, lens.timestamp as u64);
    int(out, 1, start.unix_timestamp() as u64);
    int(out, 2, u64::from(start.nanosecond()));
    account_field(out, 2, &header.id.account_id);
    int(out, 3, u64::from(header.id.scheduled));
    int(out, 4, nonce(header) as u64);
    account_field(out, 2, &header.node);
    int(out, 3, header.fee);
    key(out, 4, LEN);
    varint(out, lens.duration as u64);
    int(out, 1, header.valid_seconds as u64);
    if !header.memo.is_empty() {
        key(out, 6, LEN);
        varint(out, header.memo.len() as u64);
        out.extend_from_slice(header.memo.as_bytes());
    }
    key(out, 14, LEN);
    varint(out, lens.transfer as u64);
    if !transfers.is_empty() {
        key(out, 1, LEN);
        varint(out, lens.list as u64);
        for transfer in transfers {
            key(out, 1, LEN);
            varint(out, amount_len(transfer) as u64);
            account_field(out, 1, &transfer.0);
            int(out, 2, zigzag(transfer.1));
            int(out, 3, u64::from(transfer.2));
        }
    }
}

/// `AccountID { shardNum = 1, realmNum = 2, accountNum = 3 }`: the number is a oneof member,
/// written even when 0. The SDK's `u64`s are written as `int64`s (`as i64`), the same bits.
fn account_len(account: &AccountId) -> usize {
    int_len(1, account.shard) + int_len(2, account.realm) + 1 + varint_len(account.num)
}

fn account_field(out: &mut Vec<u8>, field: u64, account: &AccountId) {
    key(out, field, LEN);
    varint(out, account_len(account) as u64);
    int(out, 1, account.shard);
    int(out, 2, account.realm);
    key(out, 3, VARINT);
    varint(out, account.num);
}

/// A varint scalar field, absent when 0 (proto3).
fn int(out: &mut Vec<u8>, field: u64, value: u64) {
    if value != 0 {
        key(out, field, VARINT);
        varint(out, value);
    }
}

fn int_len(field: u64, value: u64) -> usize {
    if value == 0 {
        0
    } else {
        varint_len(field << 3) + varint_len(value)
    }
}

/// A length-delimited field of `len` bytes, present however long.
fn field_len(field: u64, len: usize) -> usize {
    varint_len(field << 3) + varint_len(len as u64) + len
}

/// A string or bytes field, absent when empty (proto3).
fn bytes_len(field: u64, len: usize) -> usize {
    if len == 0 {
        0
    } else {
        field_len(field, len)
    }
}

fn key(out: &mut Vec<u8>, field: u64, wire: u64) {
    varint(out, field << 3 | wire);
}

fn varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn varint_len(value: u64) -> usize {
    // 1 byte per started 7 bits; 0 takes one byte.
    (64 - (value | 1).leading_zeros() as usize).div_ceil(7)
}

/// `sint64`'s ZigZag encoding.
fn zigzag(value: i64) -> u64 {
    ((value << 1) ^ (value >> 63)) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use hedera::{Hbar, TransactionId, TransferTransaction};

    /// A small deterministic generator (xorshift), so a failure names its seed.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn pick<T: Copy>(&mut self, from: &[T]) -> T {
            from[(self.next() % from.len() as u64) as usize]
        }
    }

    fn account(rng: &mut Rng) -> AccountId {
        let edge = [
            0,
            1,
            2,
            3,
            127,
            128,
            1001,
            16_383,
            16_384,
            1 << 31,
            1 << 53,
            u64::MAX,
        ];
        let shard = if rng.next().is_multiple_of(4) {
            rng.pick(&edge)
        } else {
            0
        };
        let realm = if rng.next().is_multiple_of(4) {
            rng.pick(&edge)
        } else {
            0
        };
        let num = if rng.next().is_multiple_of(2) {
            rng.pick(&edge)
        } else {
            rng.next() >> (rng.next() % 64)
        };
        AccountId::new(shard, realm, num)
    }

    fn amount(rng: &mut Rng) -> i64 {
        let edge = [
            0,
            1,
            -1,
            63,
            64,
            -64,
            -65,
            i64::MAX,
            i64::MIN,
            50_000_000,
            -150_000_000,
        ];
        if rng.next().is_multiple_of(2) {
            rng.pick(&edge)
        } else {
            (rng.next() as i64) >> (rng.next() % 64)
        }
    }

    /// A frozen transfer as the tools and the return-bytes strategy build it, with its
    /// transfers in the order they were added.
    fn generated(rng: &mut Rng) -> (AnyTransaction, Vec<HbarMove>) {
        let mut tx = TransferTransaction::new();
        let transfers: Vec<HbarMove> = (0..rng.next() % 12)
            .map(|_| (account(rng), amount(rng), rng.next().is_multiple_of(3)))
            .collect();
        for &(account, tinybars, approved) in &transfers {
            if approved {
                tx.approved_hbar_transfer(account, Hbar::from_tinybars(tinybars));
            } else {
                tx.hbar_transfer(account, Hbar::from_tinybars(tinybars));
            }
        }
        let memos = ["", "bench", "é ü ✓ 🚀", "a\"b\\c\n", &"m".repeat(100)];
        tx.transaction_memo(rng.pick(&memos));
        let mut tx = AnyTransaction::from(tx);
        if !rng.next().is_multiple_of(5) {
            tx.max_transaction_fee(Hbar::from_tinybars(
                (rng.next() >> (rng.next() % 64)) as i64,
            ));
        } else {
            tx.max_transaction_fee(Hbar::new(1));
        }
        if rng.next().is_multiple_of(3) {
            let seconds = rng.pick(&[0, 1, 30, 120, 180, 1 << 40]);
            tx.transaction_valid_duration(time::Duration::seconds(seconds));
        }
        let start = time::OffsetDateTime::from_unix_timestamp_nanos(
            1_700_000_000_000_000_000 + i128::from(rng.next() % 100_000_000_000_000_000),
        )
        .unwrap();
        let start = if rng.next().is_multiple_of(4) {
            start.replace_nanosecond(0).unwrap()
        } else {
            start
        };
        tx.transaction_id(TransactionId {
            account_id: account(rng),
            valid_start: start,
            nonce: None,
            scheduled: false,
        });
        tx.node_account_ids([account(rng)]);
        tx.freeze().unwrap();
        (tx, transfers)
    }

    #[test]
    fn the_bytes_are_the_sdks_bytes() {
        for seed in 1..=3_000u64 {
            let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
            let (tx, transfers) = generated(&mut rng);
            let ours = transaction_list(&tx, &transfers).expect("a plain transfer is written");
            let sdk = super::super::wire::sdk_wallet_bytes(&tx, "TransferTransaction").unwrap();
            assert_eq!(ours, sdk, "seed {seed}: {transfers:?}");
        }
    }

    #[test]
    fn anything_else_is_declined() {
        let mut rng = Rng(7);
        let (tx, transfers) = generated(&mut rng);
        assert!(transaction_list(&tx, &transfers).is_some());
        let alias: AccountId = "0.0.302a300506032b6570032100e0c8ec2758a5879ffac226a13c0c516b799e72e35141a0dd828f94d37988a4b7"
            .parse()
            .unwrap();
        assert!(transaction_list(&tx, &[(alias, 5, false)]).is_none());
        let header = |nodes: &[AccountId]| {
            let mut t = AnyTransaction::from(TransferTransaction::new());
            t.node_account_ids(nodes.iter().copied());
            t.transaction_id(TransactionId::generate(AccountId::new(0, 0, 2)));
            t.max_transaction_fee(Hbar::new(1));
            t.freeze().unwrap();
            t
        };
        let one = [AccountId::new(0, 0, 3)];
        assert!(transaction_list(&header(&one), &[]).is_some());
        let two = [AccountId::new(0, 0, 3), AccountId::new(0, 0, 4)];
        assert!(transaction_list(&header(&two), &[]).is_none());
        assert!(transaction_list(&header(&[alias]), &[]).is_none());
    }

    #[test]
    fn varints_and_zigzag_follow_the_protobuf_rules() {
        for (value, len) in [
            (0, 1),
            (1, 1),
            (127, 1),
            (128, 2),
            (16_383, 2),
            (16_384, 3),
            (u64::MAX, 10),
        ] {
            assert_eq!(varint_len(value), len, "{value}");
            let mut out = Vec::new();
            varint(&mut out, value);
            assert_eq!(out.len(), len, "{value}");
        }
        assert_eq!(zigzag(0), 0);
        assert_eq!(zigzag(-1), 1);
        assert_eq!(zigzag(1), 2);
        assert_eq!(zigzag(i64::MIN), u64::MAX);
    }
}
