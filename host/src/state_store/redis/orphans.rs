//! What processes that stopped mid-call left: their owners' lists found (every primary's
//! keyspace walked), and each reservation settled only if its owner is still gone and its
//! binding unchanged. What must not live here: deciding commit or release (the reconciler
//! does, from what the network knows).

use super::conn::Route;
use super::{binding_of, binding_text, keys, not_confirmed, split_id, RedisBackend, SCAN_BOUND};
use crate::state_store::{Orphan, ReservationId, StateError};
use keys::Keys;

impl RedisBackend {
    /// [`crate::state_store::StateBackend::orphans`].
    pub(super) fn find_orphans(&self) -> Result<Vec<Orphan>, StateError> {
        // The owners' lists (a few per replica ever started: each empties as it settles).
        // SCAN walks the whole keyspace (each primary's, on a cluster): a background pass,
        // bounded by more than one call's operation timeout.
        let mut lists: Vec<String> = Vec::new();
        for addr in self.pool.primaries()? {
            let found = self.pool.run_within(
                self.pool.timeout.max(SCAN_BOUND),
                Route::Node(&addr),
                |c| {
                    let mut lists = Vec::new();
                    let mut cursor = 0u64;
                    loop {
                        let (next, keys): (u64, Vec<String>) = redis::cmd("SCAN")
                            .arg(cursor)
                            .arg("MATCH")
                            .arg("hak:owned:*")
                            .arg("COUNT")
                            .arg(1000)
                            .query(c)?;
                        lists.extend(keys);
                        if next == 0 {
                            return Ok(lists);
                        }
                        cursor = next;
                    }
                },
            )?;
            lists.extend(found);
        }
        let mut orphans = Vec::new();
        for list in lists {
            let owner = Keys::owner_of_list(&list).to_owned();
            if owner == self.owner {
                continue;
            }
            let alive: bool = self.pool.run(Route::Key(&keys::alive(&owner)), |c| {
                redis::cmd("EXISTS").arg(keys::alive(&owner)).query(c)
            })?;
            if alive {
                continue;
            }
            let entries: Vec<(String, String)> = self.pool.run(Route::Key(&list), |c| {
                redis::cmd("HGETALL").arg(&list).query(c)
            })?;
            for (field, binding) in entries {
                let Some((number, base)) = field.split_once(':') else {
                    continue;
                };
                let reservations = format!("{base}:r");
                let entry: Option<String> = self.pool.run(Route::Key(&reservations), |c| {
                    redis::cmd("HGET").arg(&reservations).arg(number).query(c)
                })?;
                let Some(amount) = entry
                    .as_deref()
                    .and_then(|e| e.split_once(':'))
                    .and_then(|(_, a)| a.parse().ok())
                else {
                    // Settled or out of its window already: only the listing was left.
                    let _: i64 = self.pool.run(Route::Key(&list), |c| {
                        redis::cmd("HDEL").arg(&list).arg(&field).query(c)
                    })?;
                    continue;
                };
                orphans.push(Orphan {
                    id: ReservationId(format!("r:{field}")),
                    binding: binding_of(&binding),
                    amount,
                    budget: base.to_owned(),
                    owner: owner.clone(),
                });
            }
        }
        Ok(orphans)
    }

    /// [`crate::state_store::StateBackend::settle_orphan`].
    pub(super) fn settle_left(&self, orphan: &Orphan, commit: bool) -> Result<bool, StateError> {
        let Some((number, base)) = split_id(&orphan.id) else {
            return Ok(false);
        };
        let alive = keys::alive(&orphan.owner);
        if self.keys.sharded {
            // The `alive` key sits on its own slot: checked just before the script.
            let back: bool = self.pool.run(Route::Key(&alive), |c| {
                redis::cmd("EXISTS").arg(&alive).query(c)
            })?;
            if back {
                return Ok(false);
            }
        }
        let buckets = format!("{base}:b");
        let (settled, confirmed): (i64, bool) = self.pool.write(&buckets, |c| {
            let mut call = self.scripts.settle_orphan.key(&buckets);
            call.key(format!("{base}:r"))
                .key(self.keys.owned(&orphan.owner, base));
            if !self.keys.sharded {
                call.key(&alive);
            }
            call.arg(number)
                .arg(if commit { "1" } else { "0" })
                .arg(&orphan.id.0[2..])
                .arg(binding_text(&orphan.binding))
                .invoke(c)
        })?;
        if settled == 1 && !confirmed {
            return Err(not_confirmed(
                "an orphan's settlement",
                self.pool.wait_replicas(),
                self.pool.timeout,
            ));
        }
        Ok(settled == 1)
    }
}
