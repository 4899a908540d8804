//! The HBAR exchange rate in force: the genesis rate (12 ¢ per ℏ, its current rate expiring
//! at every hour) until a transaction writes the exchange-rate file 0.0.112; from then on the
//! file's current rate until its expiry and its next rate after, as the network rolls them.
//! Fees, receipts and the mirror's `/network/exchangerate` all read it here.

use super::Ledger;
use hedera_proto::services as proto;
use prost::Message;
use serde::{Deserialize, Serialize};

/// The genesis rate: 30,000 ℏ = 360,000 ¢ (12 ¢ per ℏ). The fee schedule (0.0.111) prices
/// every kind in tinycents at this rate, so charges in tinybars follow the rate in force.
pub const HBAR_EQUIVALENT: i32 = 30_000;
pub const CENT_EQUIVALENT: i32 = 360_000;

/// The exchange-rate file.
pub const EXCHANGE_RATE_FILE: u64 = 112;

/// One rate: `cent_equiv` US cents buy `hbar_equiv` HBAR until `expiration` (seconds).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rate {
    pub hbar_equiv: i32,
    pub cent_equiv: i32,
    pub expiration: i64,
}

/// The current and next rate, as the file and every receipt state them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RateSet {
    pub current: Rate,
    pub next: Rate,
}

impl Rate {
    fn genesis(expiration: i64) -> Self {
        Rate {
            hbar_equiv: HBAR_EQUIVALENT,
            cent_equiv: CENT_EQUIVALENT,
            expiration,
        }
    }

    fn from_proto(rate: Option<&proto::ExchangeRate>) -> Option<Self> {
        let rate = rate?;
        (rate.hbar_equiv > 0 && rate.cent_equiv > 0).then_some(Rate {
            hbar_equiv: rate.hbar_equiv,
            cent_equiv: rate.cent_equiv,
            expiration: rate.expiration_time.as_ref()?.seconds,
        })
    }

    fn to_proto(self) -> proto::ExchangeRate {
        proto::ExchangeRate {
            hbar_equiv: self.hbar_equiv,
            cent_equiv: self.cent_equiv,
            expiration_time: Some(proto::TimestampSeconds {
                seconds: self.expiration,
            }),
        }
    }

    /// `tinybars` priced at the genesis rate, charged at this one: the same tinycents, in
    /// tinybars at this rate (rounded down, as the network converts).
    pub fn charge(self, tinybars: i64) -> i64 {
        let tinycents = i128::from(tinybars) * i128::from(CENT_EQUIVALENT);
        let charged = tinycents * i128::from(self.hbar_equiv)
            / (i128::from(HBAR_EQUIVALENT) * i128::from(self.cent_equiv));
        i64::try_from(charged).unwrap_or(i64::MAX)
    }

    /// Whether `other` differs from this rate (in cents per HBAR) by at most `percent`.
    pub fn within(self, other: Rate, percent: i128) -> bool {
        let (c, h) = (i128::from(self.cent_equiv), i128::from(self.hbar_equiv));
        let (oc, oh) = (i128::from(other.cent_equiv), i128::from(other.hbar_equiv));
        // |oc/oh - c/h| <= percent/100 * c/h
        (oc * h - c * oh).abs() * 100 <= percent * c * oh
    }
}

impl RateSet {
    /// The genesis set at `seconds`: the current rate expiring at the next hour, the next one
    /// the hour after.
    pub fn genesis(seconds: i64) -> Self {
        let expiry = (seconds / 3600 + 1) * 3600;
        RateSet {
            current: Rate::genesis(expiry),
            next: Rate::genesis(expiry + 3600),
        }
    }

    /// The file's contents, when they hold both rates with positive equivalents and expiries
    /// (what the network accepts in 0.0.112).
    pub fn from_file(contents: &[u8]) -> Option<Self> {
        let set = proto::ExchangeRateSet::decode(contents).ok()?;
        Some(RateSet {
            current: Rate::from_proto(set.current_rate.as_ref())?,
            next: Rate::from_proto(set.next_rate.as_ref())?,
        })
    }

    pub fn to_proto(self) -> proto::ExchangeRateSet {
        proto::ExchangeRateSet {
            current_rate: Some(self.current.to_proto()),
            next_rate: Some(self.next.to_proto()),
        }
    }

    /// The set as it stands at `seconds`: once the current rate expired, the next is current.
    fn at(self, seconds: i64) -> Self {
        if seconds >= self.current.expiration {
            RateSet {
                current: self.next,
                next: self.next,
            }
        } else {
            self
        }
    }
}

impl Ledger {
    /// The rates in force at `seconds`.
    pub fn exchange_rates(&self, seconds: i64) -> RateSet {
        self.files
            .get(&EXCHANGE_RATE_FILE)
            .and_then(|file| RateSet::from_file(&file.contents))
            .map_or_else(|| RateSet::genesis(seconds), |set| set.at(seconds))
    }

    /// The rate fees are charged at, at `seconds`.
    pub fn rate(&self, seconds: i64) -> Rate {
        self.exchange_rates(seconds).current
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_follow_the_rate_and_limits_compare_cents_per_hbar() {
        let genesis = Rate::genesis(0);
        assert_eq!(genesis.charge(100_000), 100_000);
        // HBAR at twice the price: half the tinybars for the same tinycents.
        let dearer = Rate {
            hbar_equiv: 1,
            cent_equiv: 24,
            expiration: 0,
        };
        assert_eq!(dearer.charge(100_000), 50_000);
        assert!(genesis.within(
            Rate {
                hbar_equiv: 1,
                cent_equiv: 15,
                expiration: 0
            },
            25
        ));
        assert!(!genesis.within(dearer, 25));
    }
}
