//! The in-memory backend: one process, gone at exit (the library default; tests). One lock
//! makes every operation atomic.

use super::window::{bucket, oldest_counted, saturating_sum};
use super::{PadKey, ReservationId, Reserved, StateBackend, StateError, MAX_BUDGET_KEYS};
use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

#[derive(Default)]
pub struct MemoryBackend {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    pads: HashMap<PadKey, Pad>,
    next_id: u64,
    /// Unsettled reservations: id → where they are.
    pending: HashMap<u64, (PadKey, BudgetKey)>,
}

type BudgetKey = (String, u32);

#[derive(Default)]
struct Pad {
    entries: HashMap<String, String>,
    bytes: usize,
    budgets: HashMap<BudgetKey, Budget>,
}

#[derive(Default)]
struct Budget {
    /// Committed amounts per bucket.
    buckets: BTreeMap<u64, u64>,
    /// Unsettled reservations: id → (bucket, amount). They count like committed ones.
    pending: BTreeMap<u64, (u64, u64)>,
}

impl Budget {
    /// Forget what left the window; the total of what is left.
    fn total(&mut self, now_ms: u64, window: u32, forgotten: &mut Vec<u64>) -> u64 {
        let oldest = oldest_counted(now_ms, window);
        self.buckets = self.buckets.split_off(&oldest);
        self.pending.retain(|id, (b, _)| {
            let keep = *b >= oldest;
            if !keep {
                forgotten.push(*id);
            }
            keep
        });
        saturating_sum(
            self.buckets
                .values()
                .copied()
                .chain(self.pending.values().map(|(_, a)| *a)),
        )
    }
}

/// One committed bucket or unsettled reservation, as [`MemoryBackend::dump`] lists them.
pub enum Row {
    Entry {
        pad: PadKey,
        key: String,
        value: String,
    },
    Bucket {
        pad: PadKey,
        key: String,
        window: u32,
        bucket: u64,
        amount: u64,
    },
    Pending {
        id: u64,
        pad: PadKey,
        key: String,
        window: u32,
        bucket: u64,
        amount: u64,
    },
}

impl MemoryBackend {
    /// Put back a reservation as it was recorded (replaying a journal).
    pub fn restore_pending(
        &self,
        id: u64,
        pad: PadKey,
        key: String,
        window: u32,
        bucket: u64,
        amount: u64,
    ) {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner.next_id = inner.next_id.max(id);
        let budget_key = (key, window);
        inner
            .pad(&pad)
            .budgets
            .entry(budget_key.clone())
            .or_default()
            .pending
            .insert(id, (bucket, amount));
        inner.pending.insert(id, (pad, budget_key));
    }

    /// Put back a committed bucket as it was recorded (replaying a journal).
    pub fn restore_bucket(&self, pad: PadKey, key: String, window: u32, bucket: u64, amount: u64) {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let slot = inner
            .pad(&pad)
            .budgets
            .entry((key, window))
            .or_default()
            .buckets
            .entry(bucket)
            .or_default();
        *slot = slot.saturating_add(amount);
    }

    /// Every scratchpad entry, committed bucket and unsettled reservation (a snapshot).
    pub fn dump(&self) -> Vec<Row> {
        let inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let mut rows = Vec::new();
        for (pad, p) in &inner.pads {
            for (key, value) in &p.entries {
                rows.push(Row::Entry {
                    pad: pad.clone(),
                    key: key.clone(),
                    value: value.clone(),
                });
            }
            for ((key, window), b) in &p.budgets {
                for (bucket, amount) in &b.buckets {
                    rows.push(Row::Bucket {
                        pad: pad.clone(),
                        key: key.clone(),
                        window: *window,
                        bucket: *bucket,
                        amount: *amount,
                    });
                }
                for (id, (bucket, amount)) in &b.pending {
                    rows.push(Row::Pending {
                        id: *id,
                        pad: pad.clone(),
                        key: key.clone(),
                        window: *window,
                        bucket: *bucket,
                        amount: *amount,
                    });
                }
            }
        }
        rows
    }

    /// Budget rows held: committed buckets plus unsettled reservations, over every pad (what
    /// bounds the store's size, whatever the traffic).
    pub fn rows(&self) -> usize {
        let inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner
            .pads
            .values()
            .flat_map(|p| p.budgets.values())
            .map(|b| b.buckets.len() + b.pending.len())
            .sum()
    }
}

impl Inner {
    fn pad(&mut self, pad: &PadKey) -> &mut Pad {
        self.pads.entry(pad.clone()).or_default()
    }
}

fn parse_id(id: &ReservationId) -> Option<u64> {
    id.0.strip_prefix("m:")?.parse().ok()
}

impl StateBackend for MemoryBackend {
    fn get(&self, pad: &PadKey, key: &str) -> Result<Option<String>, StateError> {
        let inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        Ok(inner
            .pads
            .get(pad)
            .and_then(|p| p.entries.get(key).cloned()))
    }

    fn set(&self, pad: &PadKey, key: &str, value: &str, cap: usize) -> Result<(), StateError> {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let pad = inner.pad(pad);
        let old = pad.entries.get(key).map_or(0, |v| key.len() + v.len());
        let new_total = pad.bytes - old + key.len() + value.len();
        if new_total > cap {
            return Err(StateError::Full(format!(
                "state limit of {cap} bytes exceeded (would be {new_total})"
            )));
        }
        pad.bytes = new_total;
        pad.entries.insert(key.to_owned(), value.to_owned());
        Ok(())
    }

    fn delete(&self, pad: &PadKey, key: &str) -> Result<(), StateError> {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let pad = inner.pad(pad);
        if let Some(v) = pad.entries.remove(key) {
            pad.bytes -= key.len() + v.len();
        }
        Ok(())
    }

    fn reserve(
        &self,
        pad_key: &PadKey,
        key: &str,
        amount: u64,
        limit: u64,
        window_seconds: u32,
        now_ms: u64,
    ) -> Result<Reserved, StateError> {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let id = inner.next_id + 1;
        let budget_key = (key.to_owned(), window_seconds);
        let pad = inner.pad(pad_key);
        if !pad.budgets.contains_key(&budget_key) && pad.budgets.len() >= MAX_BUDGET_KEYS {
            return Err(StateError::Full(format!(
                "at most {MAX_BUDGET_KEYS} budget keys per plugin and agent context"
            )));
        }
        let budget = pad.budgets.entry(budget_key.clone()).or_default();
        let mut forgotten = Vec::new();
        let total = budget.total(now_ms, window_seconds, &mut forgotten);
        let answer = if total.saturating_add(amount) > limit {
            Reserved::OverLimit { spent: total }
        } else {
            budget
                .pending
                .insert(id, (bucket(now_ms, window_seconds), amount));
            Reserved::Granted {
                id: ReservationId(format!("m:{id}")),
                total: total.saturating_add(amount),
            }
        };
        for old in forgotten {
            inner.pending.remove(&old);
        }
        if matches!(answer, Reserved::Granted { .. }) {
            inner.next_id = id;
            inner.pending.insert(id, (pad_key.clone(), budget_key));
        }
        Ok(answer)
    }

    fn spent(
        &self,
        pad: &PadKey,
        key: &str,
        window_seconds: u32,
        now_ms: u64,
    ) -> Result<u64, StateError> {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let budget_key = (key.to_owned(), window_seconds);
        let mut forgotten = Vec::new();
        let total = match inner
            .pads
            .get_mut(pad)
            .and_then(|p| p.budgets.get_mut(&budget_key))
        {
            Some(budget) => budget.total(now_ms, window_seconds, &mut forgotten),
            None => 0,
        };
        for old in forgotten {
            inner.pending.remove(&old);
        }
        Ok(total)
    }

    fn settle(&self, ids: &[ReservationId], commit: bool) -> Result<(), StateError> {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        for id in ids.iter().filter_map(parse_id) {
            let Some((pad, budget_key)) = inner.pending.remove(&id) else {
                continue; // already settled, or left the window
            };
            let Some(budget) = inner
                .pads
                .get_mut(&pad)
                .and_then(|p| p.budgets.get_mut(&budget_key))
            else {
                continue;
            };
            if let Some((b, amount)) = budget.pending.remove(&id) {
                if commit {
                    let slot = budget.buckets.entry(b).or_default();
                    *slot = slot.saturating_add(amount);
                }
            }
        }
        Ok(())
    }

    fn describe(&self) -> String {
        "memory".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pad(scope: &str) -> PadKey {
        PadKey {
            scope: scope.into(),
            plugin: "p".into(),
        }
    }

    #[test]
    fn scratchpad_cap_counts_keys_and_values_and_contexts_are_separate() {
        let m = MemoryBackend::default();
        m.set(&pad("a"), "ab", "cdef", 10).unwrap();
        m.set(&pad("a"), "ab", "cdefghij", 10).unwrap();
        assert!(matches!(
            m.set(&pad("a"), "x", "y", 10),
            Err(StateError::Full(_))
        ));
        m.delete(&pad("a"), "ab").unwrap();
        m.set(&pad("a"), "x", "y", 10).unwrap();
        assert_eq!(m.get(&pad("b"), "x").unwrap(), None);
        assert_eq!(m.get(&pad("a"), "x").unwrap().as_deref(), Some("y"));
    }

    #[test]
    fn reservations_count_until_released_and_stay_when_committed() {
        let m = MemoryBackend::default();
        let p = pad("a");
        let r = |m: &MemoryBackend, amount| m.reserve(&p, "hbar", amount, 10, 60, 1_000_000);
        let Reserved::Granted { id: first, total } = r(&m, 6).unwrap() else {
            panic!()
        };
        assert_eq!(total, 6);
        assert_eq!(r(&m, 5).unwrap(), Reserved::OverLimit { spent: 6 });
        m.settle(std::slice::from_ref(&first), false).unwrap();
        let Reserved::Granted { id: second, .. } = r(&m, 5).unwrap() else {
            panic!()
        };
        m.settle(&[second], true).unwrap();
        assert_eq!(r(&m, 6).unwrap(), Reserved::OverLimit { spent: 5 });
        // After the window the spend is forgotten.
        assert!(matches!(
            m.reserve(&p, "hbar", 10, 10, 60, 1_000_000 + 62_000)
                .unwrap(),
            Reserved::Granted { total: 10, .. }
        ));
    }
}
