//! Ids and integers written the way their `Display` writes them, without `core::fmt`: on the
//! call path a formatter per value costs more than the rest of writing a short id (ids and
//! amounts are written into every normalised-params JSON and every call's facts). What lives
//! here: decimal digits, `shard.realm.num`, a stack buffer for them. What must not: JSON, or
//! anything about tools.

use hedera::{AccountId, ScheduleId, TokenId, TopicId};
use std::any::Any;
use std::fmt::Display;

/// Append `n` in decimal, zero-padded to at least `width` digits (at most 20).
pub fn push_padded(out: &mut String, n: u64, width: usize) {
    let mut digits = itoa::Buffer::new();
    let digits = digits.format(n);
    for _ in digits.len()..width.min(20) {
        out.push('0');
    }
    out.push_str(digits);
}

/// Append `id` as its `Display` writes it (`shard.realm.num`, or the alias / EVM address
/// form), the plain form by hand, straight into `out`.
pub fn push_account(out: &mut String, id: &AccountId) {
    if id.alias.is_some() || id.evm_address.is_some() {
        with_display(id, |text| out.push_str(text));
    } else {
        entity(id.shard, id.realm, id.num, |piece| out.push_str(piece));
    }
}

/// `shard.realm.num`, piece by piece into `push`: `0.0.` as one piece (nearly every id).
fn entity(shard: u64, realm: u64, num: u64, mut push: impl FnMut(&str)) {
    let mut digits = itoa::Buffer::new();
    if shard == 0 && realm == 0 {
        push("0.0.");
    } else {
        push(digits.format(shard));
        push(".");
        push(digits.format(realm));
        push(".");
    }
    push(digits.format(num));
}

/// Append `n` as its `Display` writes it.
pub fn push_i64(out: &mut String, n: i64) {
    out.push_str(itoa::Buffer::new().format(n));
}

/// `f` of `v` as its `Display` writes it: account, token, topic and schedule ids and the
/// integers by hand on the stack, anything else through `fmt`.
pub fn with_display<T: Display + 'static, R>(v: &T, f: impl FnOnce(&str) -> R) -> R {
    let mut stack = Stack::default();
    if stack.known(v) {
        f(stack.as_str())
    } else {
        f(&v.to_string())
    }
}

/// `v` as its `Display` writes it ([`with_display`]), owned.
pub fn display<T: Display + 'static>(v: &T) -> String {
    with_display(v, str::to_owned)
}

/// Up to three numbers and two separators: `u64::MAX.u64::MAX.u64::MAX` fits (and a
/// number padded to 20 digits). Pieces go in as `&str`, so the text is never validated
/// again on the way out (`str::from_utf8` was about a fifth of writing an id).
#[derive(Default)]
struct Stack {
    text: arrayvec::ArrayString<64>,
}

impl Stack {
    fn push(&mut self, piece: &str) {
        self.text.push_str(piece);
    }

    fn number(&mut self, n: u64) {
        self.push(itoa::Buffer::new().format(n));
    }

    fn entity(&mut self, shard: u64, realm: u64, num: u64) {
        entity(shard, realm, num, |piece| self.push(piece));
    }

    /// Write `v` if it is one of the types written by hand.
    fn known<T: 'static>(&mut self, v: &T) -> bool {
        let v = v as &dyn Any;
        if let Some(id) = v.downcast_ref::<AccountId>() {
            if id.alias.is_some() || id.evm_address.is_some() {
                return false;
            }
            self.entity(id.shard, id.realm, id.num);
        } else if let Some(id) = v.downcast_ref::<TokenId>() {
            self.entity(id.shard, id.realm, id.num);
        } else if let Some(id) = v.downcast_ref::<TopicId>() {
            self.entity(id.shard, id.realm, id.num);
        } else if let Some(id) = v.downcast_ref::<ScheduleId>() {
            self.entity(id.shard, id.realm, id.num);
        } else if let Some(n) = v.downcast_ref::<i64>() {
            if *n < 0 {
                self.push("-");
            }
            self.number(n.unsigned_abs());
        } else if let Some(n) = v.downcast_ref::<u64>() {
            self.number(*n);
        } else if let Some(n) = v.downcast_ref::<u32>() {
            self.number(u64::from(*n));
        } else {
            return false;
        }
        true
    }

    fn as_str(&self) -> &str {
        &self.text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    #[test]
    fn ids_and_integers_read_as_their_display_writes_them() {
        let account = AccountId::from_str("0.0.1001").unwrap();
        let with_checksum = AccountId::from_str("0.0.123-vfmkw").unwrap();
        let evm = AccountId::from_str("0.0.302a300506032b6570032100114e6abc371b82dab5c15ea149f02d34a012087b163516dd70f44acafabf7777").unwrap();
        assert_eq!(display(&account), account.to_string());
        assert_eq!(display(&with_checksum), with_checksum.to_string());
        assert_eq!(display(&evm), evm.to_string());
        let big = AccountId::new(u64::MAX, u64::MAX, u64::MAX);
        assert_eq!(display(&big), big.to_string());
        let token = TokenId::from_str("1.2.3").unwrap();
        assert_eq!(display(&token), "1.2.3");
        assert_eq!(display(&TopicId::from_str("0.0.5005").unwrap()), "0.0.5005");
        assert_eq!(display(&ScheduleId::from_str("0.0.7").unwrap()), "0.0.7");
        for n in [0i64, 7, -7, i64::MIN, i64::MAX, 100_000_000] {
            assert_eq!(display(&n), n.to_string());
        }
        assert_eq!(display(&u64::MAX), u64::MAX.to_string());
        assert_eq!(display(&42u32), "42");
        assert_eq!(display(&"text"), "text", "anything else goes through fmt");
        let mut out = String::new();
        push_padded(&mut out, 7, 3);
        push_padded(&mut out, 1234, 2);
        assert_eq!(out, "0071234");
        for id in [
            account,
            with_checksum,
            evm,
            big,
            AccountId::new(0, 0, 0),
            AccountId::new(0, 5, 1),
            AccountId::new(3, 0, 1),
            AccountId::from_str("0x302a300506032b6570032100114e6abc371b82da").unwrap(),
        ] {
            let mut out = String::from("x");
            push_account(&mut out, &id);
            assert_eq!(out, format!("x{id}"), "{id:?}");
        }
    }
}
