//! The `rates` capability's answer: the network's HBAR exchange rate, as the mirror's
//! `/network/exchangerate` states it, kept for every plugin of the host. The mirror states
//! the current rate and the next, each with its expiry: the kept answer serves the current
//! rate until it expires and the next one after, with no read. A kept answer older than
//! `[network] rates_refresh_seconds` still serves (its rates are in force by their own
//! expiry) while one background read replaces it, so a rate file written before its rate
//! expired is seen within about that period, and no call waits for the mirror but one that
//! finds no rate in force (the first, or after every rate expired). Which rate is in force
//! and when to read again is decided here; reading the mirror is the actions'
//! (`network::OperatorActions`).

use serde_json::Value;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long an answer is kept before it is read again when the manifest does not say
/// (`[network] rates_refresh_seconds`).
pub const DEFAULT_REFRESH_SECONDS: u32 = 60;

/// `cent_equivalent` US cents buy `hbar_equivalent` HBAR until `expiration_seconds`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExchangeRate {
    pub hbar_equivalent: u32,
    pub cent_equivalent: u32,
    pub expiration_seconds: u64,
}

impl ExchangeRate {
    /// One of the mirror's rates (`{cent_equivalent, hbar_equivalent, expiration_time}`).
    fn from_mirror(rate: &Value, which: &str) -> Result<Self, String> {
        let field = |name: &str| {
            rate.get(name)
                .and_then(Value::as_u64)
                .ok_or_else(|| format!("the mirror's {which}.{name} is not a non-negative integer"))
        };
        let equivalent = |name: &str| -> Result<u32, String> {
            u32::try_from(field(name)?)
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| format!("the mirror's {which}.{name} is not between 1 and 2^32-1"))
        };
        Ok(ExchangeRate {
            hbar_equivalent: equivalent("hbar_equivalent")?,
            cent_equivalent: equivalent("cent_equivalent")?,
            expiration_seconds: field("expiration_time")?,
        })
    }
}

/// The mirror's answer: the current rate and the next (when it states one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateSet {
    pub current: ExchangeRate,
    pub next: Option<ExchangeRate>,
}

impl RateSet {
    /// The mirror's `{current_rate, next_rate}`; a field it cannot have stated is refused by
    /// name.
    pub fn from_mirror(answer: &Value) -> Result<Self, String> {
        let current = ExchangeRate::from_mirror(&answer["current_rate"], "current_rate")?;
        let next = match answer.get("next_rate") {
            None | Some(Value::Null) => None,
            Some(rate) => Some(ExchangeRate::from_mirror(rate, "next_rate")?),
        };
        Ok(RateSet { current, next })
    }

    /// The rate in force at `now` (Unix seconds): the current one until it expires, then the
    /// next; none once both expired.
    pub fn in_force(&self, now: u64) -> Option<ExchangeRate> {
        if now < self.current.expiration_seconds {
            return Some(self.current);
        }
        self.next.filter(|next| now < next.expiration_seconds)
    }

    /// Why [`RateSet::in_force`] found none.
    pub fn expired(&self) -> String {
        let last = self
            .next
            .map_or(self.current.expiration_seconds, |n| n.expiration_seconds);
        format!("the mirror states only expired rates (the last expired at {last})")
    }
}

/// What the kept answer gives at a moment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kept {
    /// A rate in force, read within the refresh period.
    Fresh(ExchangeRate),
    /// A rate in force, read longer ago: serve it, and read again.
    Stale(ExchangeRate),
    /// No answer, or none of its rates is in force: read before answering.
    Nothing,
}

/// The answer read last, shared by every plugin of a host.
pub struct RateCache {
    refresh: Duration,
    kept: Mutex<Option<(RateSet, Instant)>>,
    /// A background read is under way (at most one).
    reading: AtomicBool,
}

impl RateCache {
    pub fn new(refresh: Duration) -> Self {
        RateCache {
            refresh,
            kept: Mutex::new(None),
            reading: AtomicBool::new(false),
        }
    }

    /// What the kept answer gives at `now` (Unix seconds).
    pub fn get(&self, now: u64) -> Kept {
        let kept = *self.kept.lock().unwrap_or_else(|e| e.into_inner());
        match kept.and_then(|(set, read)| set.in_force(now).map(|rate| (rate, read))) {
            Some((rate, read)) if read.elapsed() < self.refresh => Kept::Fresh(rate),
            Some((rate, _)) => Kept::Stale(rate),
            None => Kept::Nothing,
        }
    }

    /// Keep `set`, read now.
    pub fn keep(&self, set: RateSet) {
        *self.kept.lock().unwrap_or_else(|e| e.into_inner()) = Some((set, Instant::now()));
    }

    /// Claim the one background read; false when another is under way.
    pub fn begin_read(&self) -> bool {
        self.reading
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// The background read ended (kept or not).
    pub fn end_read(&self) {
        self.reading.store(false, Ordering::Release);
    }
}

/// Unix seconds now.
pub fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rate(cents: u64, hbars: u64, expiry: u64) -> Value {
        json!({"cent_equivalent": cents, "hbar_equivalent": hbars, "expiration_time": expiry})
    }

    #[test]
    fn the_current_rate_until_it_expires_then_the_next_then_none() {
        let answer = json!({"current_rate": rate(12, 1, 100), "next_rate": rate(24, 1, 200)});
        let set = RateSet::from_mirror(&answer).unwrap();
        assert_eq!(set.in_force(99).unwrap().cent_equivalent, 12);
        assert_eq!(set.in_force(100).unwrap().cent_equivalent, 24);
        assert_eq!(set.in_force(200), None);
        assert!(
            set.expired().contains("expired at 200"),
            "{}",
            set.expired()
        );
        let alone = RateSet::from_mirror(&json!({"current_rate": rate(12, 1, 100)})).unwrap();
        assert_eq!(alone.in_force(100), None);
    }

    #[test]
    fn a_rate_the_network_could_not_state_is_refused_by_name() {
        for (answer, field) in [
            (json!({}), "current_rate.hbar_equivalent"),
            (
                json!({"current_rate": rate(12, 0, 100)}),
                "current_rate.hbar_equivalent",
            ),
            (
                json!({"current_rate": rate(1 << 40, 1, 100)}),
                "current_rate.cent_equivalent",
            ),
            (
                json!({"current_rate": {"cent_equivalent": "12", "hbar_equivalent": 1, "expiration_time": 100}}),
                "current_rate.cent_equivalent",
            ),
            (
                json!({"current_rate": rate(12, 1, 100), "next_rate": {"hbar_equivalent": 1}}),
                "next_rate.cent_equivalent",
            ),
        ] {
            let why = RateSet::from_mirror(&answer).unwrap_err();
            assert!(why.contains(field), "{why} should name {field}");
        }
    }

    #[test]
    fn a_kept_answer_serves_until_its_rates_expire_and_is_read_again_after_the_period() {
        let set = RateSet::from_mirror(
            &json!({"current_rate": rate(12, 1, 1_000), "next_rate": rate(24, 1, 2_000)}),
        )
        .unwrap();
        let cache = RateCache::new(Duration::from_secs(60));
        assert_eq!(cache.get(10), Kept::Nothing);
        cache.keep(set);
        assert_eq!(cache.get(999), Kept::Fresh(set.current));
        assert_eq!(cache.get(1_000), Kept::Fresh(set.next.unwrap()));
        assert_eq!(cache.get(2_000), Kept::Nothing, "every rate expired");
        let brief = RateCache::new(Duration::ZERO);
        brief.keep(set);
        assert_eq!(brief.get(10), Kept::Stale(set.current));
        assert!(brief.begin_read());
        assert!(!brief.begin_read(), "one read at a time");
        brief.end_read();
        assert!(brief.begin_read());
    }
}
