//! Rolling windows as bucketed sums, shared by every backend: a window of W seconds is kept as
//! at most 61 buckets of width W/60. A spend counts from the moment it
//! is reserved until its bucket has left the window, which is at least W and at most W plus
//! one bucket later: a window never forgets a spend early, and no amount of traffic makes a
//! budget larger than its buckets.

/// Buckets per window.
pub const BUCKETS: u64 = 60;

/// The width of one bucket of a `window_seconds` window, in milliseconds.
pub fn width_ms(window_seconds: u32) -> u64 {
    (u64::from(window_seconds) * 1000 / BUCKETS).max(1)
}

/// The bucket `now_ms` falls in.
pub fn bucket(now_ms: u64, window_seconds: u32) -> u64 {
    now_ms / width_ms(window_seconds)
}

/// The oldest bucket that still counts at `now_ms`.
pub fn oldest_counted(now_ms: u64, window_seconds: u32) -> u64 {
    bucket(
        now_ms.saturating_sub(u64::from(window_seconds) * 1000),
        window_seconds,
    )
}

/// A sum of amounts, saturating at `u64::MAX` (a window can never hold more than that).
pub fn saturating_sum(amounts: impl IntoIterator<Item = u64>) -> u64 {
    amounts.into_iter().fold(0u64, u64::saturating_add)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spend_counts_for_at_least_the_window_and_at_most_one_bucket_more() {
        let window = 3600; // one hour: 60 s buckets
        assert_eq!(width_ms(window), 60_000);
        let spent_at = 10_000_000_123u64;
        let b = bucket(spent_at, window);
        for after in [0, 1, 3_599_999, 3_600_000] {
            assert!(b >= oldest_counted(spent_at + after, window), "{after}");
        }
        assert!(b < oldest_counted(spent_at + 3_600_000 + 60_000, window));
        assert_eq!(width_ms(1), 16);
    }
}
