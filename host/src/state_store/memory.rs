//! The in-memory backend: one process, gone at exit (the library default; tests), and the
//! journal backend's state. One lock makes every operation atomic. It keeps the [`Quota`]s:
//! bytes per plugin over all contexts, and in all.

use super::window::{bucket, oldest_counted, saturating_sum};
use super::{
    entry_bytes, Binding, Orphan, PadKey, Quota, ReservationId, Reserved, StateBackend, StateError,
    ENTRY_OVERHEAD, MAX_BUDGET_KEYS,
};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

#[derive(Default)]
pub struct MemoryBackend {
    inner: Mutex<Inner>,
    /// A fixed time instead of the system clock (a trial case's `now`).
    clock: Option<u64>,
}

#[derive(Default)]
struct Inner {
    pads: HashMap<PadKey, Pad>,
    next_id: u64,
    /// Unsettled reservations: id → where they are, what their call did with its
    /// transaction, and whether their process is gone (replayed from a journal).
    pending: HashMap<u64, Pending>,
    quota: Quota,
    /// Bytes held per plugin (scratchpad entries and budget keys, every context).
    usage: HashMap<Arc<str>, usize>,
    /// Bytes held in all.
    total: usize,
}

type BudgetKey = (String, u32);

struct Pending {
    pad: PadKey,
    budget_key: BudgetKey,
    binding: Binding,
    orphan: bool,
}

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
        binding: Binding,
    },
}

impl MemoryBackend {
    /// An empty store that keeps `quota`.
    pub fn with_quota(quota: Quota) -> Self {
        let backend = MemoryBackend::default();
        backend.lock().quota = quota;
        backend
    }

    /// An empty store whose time stands still at `now_ms` (a trial's clock: what its plugin
    /// reads and its budget windows count at).
    pub fn at(now_ms: u64) -> Self {
        MemoryBackend {
            clock: Some(now_ms),
            ..MemoryBackend::default()
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Bytes held by `plugin` over every context, and by the whole store.
    pub fn usage(&self, plugin: &str) -> (usize, usize) {
        let inner = self.lock();
        (inner.usage.get(plugin).copied().unwrap_or(0), inner.total)
    }

    /// Put back a scratchpad entry as it was recorded (replaying a journal: no cap, no quota).
    pub fn restore_entry(&self, pad: &PadKey, key: &str, value: &str) {
        let _ = self.lock().set(pad, key, value, usize::MAX, false);
    }

    /// Put back a reservation as it was recorded (replaying a journal): an orphan, whose
    /// process is gone, until a reconciler settles it.
    pub fn restore_pending(
        &self,
        id: u64,
        pad: PadKey,
        key: String,
        window: u32,
        bucket: u64,
        amount: u64,
    ) {
        let mut inner = self.lock();
        inner.next_id = inner.next_id.max(id);
        let budget_key = (key, window);
        inner.restore_budget_key(&pad, &budget_key);
        inner
            .pad(&pad)
            .budgets
            .entry(budget_key.clone())
            .or_default()
            .pending
            .insert(id, (bucket, amount));
        inner.pending.insert(
            id,
            Pending {
                pad,
                budget_key,
                binding: Binding::Unbound,
                orphan: true,
            },
        );
    }

    /// Put back a committed bucket as it was recorded (replaying a journal).
    pub fn restore_bucket(&self, pad: PadKey, key: String, window: u32, bucket: u64, amount: u64) {
        let mut inner = self.lock();
        let budget_key = (key, window);
        inner.restore_budget_key(&pad, &budget_key);
        let slot = inner
            .pad(&pad)
            .budgets
            .entry(budget_key)
            .or_default()
            .buckets
            .entry(bucket)
            .or_default();
        *slot = slot.saturating_add(amount);
    }

    /// Every scratchpad entry, committed bucket and unsettled reservation (a snapshot).
    pub fn dump(&self) -> Vec<Row> {
        let inner = self.lock();
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
                        binding: inner
                            .pending
                            .get(id)
                            .map(|p| p.binding.clone())
                            .unwrap_or_default(),
                    });
                }
            }
        }
        rows
    }

    /// Budget rows held: committed buckets plus unsettled reservations, over every pad (what
    /// bounds the store's size, whatever the traffic).
    pub fn rows(&self) -> usize {
        let inner = self.lock();
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

    /// Hold `add` more bytes for `plugin` after giving back `remove`; growth past a quota is
    /// refused when `enforce` (replay never refuses what was once accepted).
    fn charge(
        &mut self,
        plugin: &Arc<str>,
        add: usize,
        remove: usize,
        enforce: bool,
    ) -> Result<(), StateError> {
        let used = self.usage.get(plugin).copied().unwrap_or(0);
        let plugin_after = (used + add).saturating_sub(remove);
        let total_after = (self.total + add).saturating_sub(remove);
        if enforce && add > remove {
            if plugin_after > self.quota.plugin_bytes {
                return Err(StateError::Full(format!(
                    "plugin {plugin:?} holds {used} bytes of state over all agent contexts; its quota is {} bytes",
                    self.quota.plugin_bytes
                )));
            }
            if total_after > self.quota.total_bytes {
                return Err(StateError::Full(format!(
                    "the state store holds {} bytes; the host's quota is {} bytes",
                    self.total, self.quota.total_bytes
                )));
            }
        }
        self.usage.insert(plugin.clone(), plugin_after);
        self.total = total_after;
        Ok(())
    }

    fn set(
        &mut self,
        pad_key: &PadKey,
        key: &str,
        value: &str,
        cap: usize,
        enforce: bool,
    ) -> Result<(), StateError> {
        let pad = self.pad(pad_key);
        let old = pad.entries.get(key).map_or(0, |v| entry_bytes(key, v));
        let new = entry_bytes(key, value);
        let new_total = pad.bytes - old + new;
        if new_total > cap {
            return Err(StateError::Full(format!(
                "state limit of {cap} bytes exceeded (would be {new_total}; each entry counts {ENTRY_OVERHEAD} bytes beyond its key and value)"
            )));
        }
        self.charge(&pad_key.plugin, new, old, enforce)?;
        let pad = self.pad(pad_key);
        pad.bytes = new_total;
        pad.entries.insert(key.to_owned(), value.to_owned());
        Ok(())
    }

    /// Count a budget key the store did not hold yet (replaying).
    fn restore_budget_key(&mut self, pad: &PadKey, budget_key: &BudgetKey) {
        if !self.pad(pad).budgets.contains_key(budget_key) {
            let _ = self.charge(&pad.plugin, budget_key.0.len() + ENTRY_OVERHEAD, 0, false);
        }
    }
}

/// A reservation that no longer holds cannot cover a transaction (its window passed while
/// the call waited): the call is refused before anything is sent.
fn lapsed(id: u64) -> StateError {
    StateError::Unavailable(format!(
        "budget reservation m:{id} is no longer held (its window passed while the call waited)"
    ))
}

fn parse_id(id: &ReservationId) -> Option<u64> {
    id.0.strip_prefix("m:")?.parse().ok()
}

impl StateBackend for MemoryBackend {
    fn get(&self, pad: &PadKey, key: &str) -> Result<Option<String>, StateError> {
        let inner = self.lock();
        Ok(inner
            .pads
            .get(pad)
            .and_then(|p| p.entries.get(key).cloned()))
    }

    fn set(&self, pad: &PadKey, key: &str, value: &str, cap: usize) -> Result<(), StateError> {
        self.lock().set(pad, key, value, cap, true)
    }

    fn delete(&self, pad_key: &PadKey, key: &str) -> Result<(), StateError> {
        let mut inner = self.lock();
        let Some(pad) = inner.pads.get_mut(pad_key) else {
            return Ok(());
        };
        if let Some(v) = pad.entries.remove(key) {
            let freed = entry_bytes(key, &v);
            pad.bytes -= freed;
            let _ = inner.charge(&pad_key.plugin, 0, freed, false);
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
        let mut inner = self.lock();
        let id = inner.next_id + 1;
        let budget_key = (key.to_owned(), window_seconds);
        let pad = inner.pad(pad_key);
        if !pad.budgets.contains_key(&budget_key) {
            if pad.budgets.len() >= MAX_BUDGET_KEYS {
                return Err(StateError::Full(format!(
                    "at most {MAX_BUDGET_KEYS} budget keys per plugin and agent context"
                )));
            }
            inner.charge(&pad_key.plugin, key.len() + ENTRY_OVERHEAD, 0, true)?;
        }
        let pad = inner.pad(pad_key);
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
            inner.pending.insert(
                id,
                Pending {
                    pad: pad_key.clone(),
                    budget_key,
                    binding: Binding::Unbound,
                    orphan: false,
                },
            );
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
        let mut inner = self.lock();
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
        let mut inner = self.lock();
        for id in ids.iter().filter_map(parse_id) {
            let Some(Pending {
                pad, budget_key, ..
            }) = inner.pending.remove(&id)
            else {
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

    fn bind(&self, ids: &[ReservationId], binding: &Binding) -> Result<(), StateError> {
        let mut inner = self.lock();
        for id in ids.iter().filter_map(parse_id) {
            match inner.pending.get_mut(&id) {
                Some(pending) => pending.binding = binding.clone(),
                None => return Err(lapsed(id)),
            }
        }
        Ok(())
    }

    fn settle_orphan(&self, orphan: &Orphan, commit: bool) -> Result<bool, StateError> {
        let still = parse_id(&orphan.id).is_some_and(|id| {
            self.lock()
                .pending
                .get(&id)
                .is_some_and(|p| p.orphan && p.binding == orphan.binding)
        });
        if still {
            self.settle(std::slice::from_ref(&orphan.id), commit)?;
        }
        Ok(still)
    }

    fn orphans(&self) -> Result<Vec<Orphan>, StateError> {
        let inner = self.lock();
        let mut orphans: Vec<Orphan> = inner
            .pending
            .iter()
            .filter(|(_, p)| p.orphan)
            .map(|(id, p)| Orphan {
                id: ReservationId(format!("m:{id}")),
                binding: p.binding.clone(),
                amount: inner
                    .pads
                    .get(&p.pad)
                    .and_then(|pad| pad.budgets.get(&p.budget_key))
                    .and_then(|b| b.pending.get(id))
                    .map_or(0, |(_, amount)| *amount),
                budget: format!(
                    "plugin {:?} in context {:?}, key {:?}",
                    &*p.pad.plugin, &*p.pad.scope, p.budget_key.0
                ),
                owner: String::new(),
            })
            .collect();
        orphans.sort_by(|a, b| a.id.0.cmp(&b.id.0));
        Ok(orphans)
    }

    fn shared(&self) -> bool {
        false
    }

    fn describe(&self) -> String {
        "memory".into()
    }

    fn now_ms(&self) -> u64 {
        self.clock.unwrap_or_else(super::now_ms)
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
    fn scratchpad_cap_counts_keys_values_and_each_entry_and_contexts_are_separate() {
        let m = MemoryBackend::default();
        let cap = ENTRY_OVERHEAD + 10;
        m.set(&pad("a"), "ab", "cdef", cap).unwrap();
        m.set(&pad("a"), "ab", "cdefghij", cap).unwrap();
        assert!(matches!(
            m.set(&pad("a"), "x", "y", cap),
            Err(StateError::Full(_))
        ));
        m.delete(&pad("a"), "ab").unwrap();
        m.set(&pad("a"), "x", "y", cap).unwrap();
        assert_eq!(m.get(&pad("b"), "x").unwrap(), None);
        assert_eq!(m.get(&pad("a"), "x").unwrap().as_deref(), Some("y"));
        // Empty entries are not free: 1 KiB holds 16 of them, not 1,024.
        let held = (0..1024)
            .take_while(|i| m.set(&pad("c"), &format!("{i}"), "", 1024).is_ok())
            .count();
        assert!(held <= 1024 / ENTRY_OVERHEAD, "{held}");
        assert_eq!(
            m.usage("p").0,
            entry_bytes("x", "y")
                + (0..held)
                    .map(|i| entry_bytes(&i.to_string(), ""))
                    .sum::<usize>()
        );
    }

    #[test]
    fn budget_keys_count_against_the_plugins_quota() {
        let m = MemoryBackend::with_quota(Quota {
            plugin_bytes: 3 * (ENTRY_OVERHEAD + 2),
            total_bytes: 1 << 20,
        });
        for scope in ["a", "b", "c"] {
            assert!(matches!(
                m.reserve(&pad(scope), "k1", 1, 10, 60, 1_000_000).unwrap(),
                Reserved::Granted { .. }
            ));
        }
        assert!(matches!(
            m.reserve(&pad("d"), "k1", 1, 10, 60, 1_000_000),
            Err(StateError::Full(_))
        ));
        // A key it already holds still reserves.
        assert!(matches!(
            m.reserve(&pad("a"), "k1", 1, 10, 60, 1_000_000).unwrap(),
            Reserved::Granted { .. }
        ));
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
