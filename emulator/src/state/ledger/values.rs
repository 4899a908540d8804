//! The ledger's small value types: a consensus timestamp, key bytes (hex in JSON) and a
//! transaction id.

use super::ids::{account_id, account_num};
use hedera_proto::services as proto;
use prost::Message;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A consensus timestamp.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct Ts {
    pub seconds: i64,
    pub nanos: u32,
}

impl Ts {
    pub fn now() -> Self {
        let d = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        Ts {
            seconds: d.as_secs() as i64,
            nanos: d.subsec_nanos(),
        }
    }

    pub fn from_proto(t: &proto::Timestamp) -> Self {
        Ts {
            seconds: t.seconds,
            nanos: t.nanos.max(0) as u32,
        }
    }

    pub fn to_proto(self) -> proto::Timestamp {
        proto::Timestamp {
            seconds: self.seconds,
            nanos: self.nanos as i32,
        }
    }

    /// The next nanosecond.
    pub fn succ(self) -> Self {
        if self.nanos >= 999_999_999 {
            Ts {
                seconds: self.seconds + 1,
                nanos: 0,
            }
        } else {
            Ts {
                seconds: self.seconds,
                nanos: self.nanos + 1,
            }
        }
    }

    pub fn as_nanos(self) -> i128 {
        i128::from(self.seconds) * 1_000_000_000 + i128::from(self.nanos)
    }
}

/// The mirror node's `seconds.nanoseconds` form.
impl fmt::Display for Ts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:09}", self.seconds, self.nanos)
    }
}

/// A protobuf-encoded `Key`, kept as bytes (hex in the persisted state).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyBytes(#[serde(with = "hex_bytes")] pub Vec<u8>);

impl KeyBytes {
    pub fn from_proto(key: &proto::Key) -> Self {
        KeyBytes(key.encode_to_vec())
    }

    pub fn to_proto(&self) -> proto::Key {
        proto::Key::decode(self.0.as_slice()).unwrap_or_default()
    }
}

pub(super) mod hex_bytes {
    use serde::{Deserialize, Deserializer, Serializer};
    pub fn serialize<S: Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&hex::encode(v))
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        hex::decode(String::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

/// A transaction id: payer, valid start, scheduled flag, nonce.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct TxId {
    pub payer: u64,
    pub valid_start: Ts,
    pub scheduled: bool,
    pub nonce: i32,
}

impl TxId {
    pub fn from_proto(id: &proto::TransactionId) -> Option<Self> {
        let payer = account_num(id.account_id.as_ref()?)?;
        let valid_start = Ts::from_proto(id.transaction_valid_start.as_ref()?);
        Some(TxId {
            payer,
            valid_start,
            scheduled: id.scheduled,
            nonce: id.nonce,
        })
    }

    pub fn to_proto(self) -> proto::TransactionId {
        proto::TransactionId {
            transaction_valid_start: Some(self.valid_start.to_proto()),
            account_id: Some(account_id(self.payer)),
            scheduled: self.scheduled,
            nonce: self.nonce,
        }
    }

    /// The mirror's path form, `0.0.1001-1700000000-000000123`.
    pub fn mirror_form(self) -> String {
        format!(
            "0.0.{}-{}-{:09}",
            self.payer, self.valid_start.seconds, self.valid_start.nanos
        )
    }
}

impl fmt::Display for TxId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "0.0.{}@{}", self.payer, self.valid_start)?;
        if self.scheduled {
            f.write_str("?scheduled")?;
        }
        if self.nonce != 0 {
            write!(f, "/{}", self.nonce)?;
        }
        Ok(())
    }
}
