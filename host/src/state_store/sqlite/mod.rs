//! The embedded durable backend: one SQLite file (rusqlite, bundled) under the state
//! directory, shared by every hak process on the machine — `hak call` runs and `hak serve`
//! alike — so budgets and scratchpads survive restarts and hold across processes.
//!
//! Atomicity: every reservation is one `BEGIN IMMEDIATE` transaction (SQLite's write lock,
//! across processes; waiters retry for up to 5 s, then the plugin is told the store is
//! unavailable and blocks). Durability: WAL with `synchronous = NORMAL`, i.e. group commit —
//! no fsync per call; a committed transaction survives the process being killed (`kill -9`),
//! and the WAL is synced at checkpoints, so an OS crash or power loss can lose only the last
//! moments. Windows are bucketed sums ([`super::window`]): a budget is at most 61 rows.
//!
//! Processes that stop mid-call: each open store is an owner (a random id in `owners`, its
//! `seen_ms` refreshed every 5 s by a heartbeat thread); a reservation names its owner and,
//! once its call sends a transaction, the transaction (`bound`, `tx`, `until_ms`). A
//! reservation whose owner has not been seen for 30 s is an orphan, for any process's
//! reconciler to settle — only if it is still as listed, so an owner that was merely paused
//! and comes back either finds its reservation gone (its bind fails: nothing is sent) or
//! keeps it. Files of an earlier hak get the new columns at open; their rows have no owner and
//! stay counted until their window passes.

use super::window::{bucket, oldest_counted};
use super::{
    entry_bytes, Binding, Orphan, PadKey, Quota, ReservationId, Reserved, StateBackend, StateError,
    ENTRY_OVERHEAD, MAX_BUDGET_KEYS,
};
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

mod schema;
use schema::*;

pub struct SqliteBackend {
    conn: Arc<Mutex<Local>>,
    path: PathBuf,
    /// This store's owner id (random, per open).
    owner: Arc<str>,
    /// How long an owner may go unseen before its reservations are orphans.
    presumed_stopped_ms: i64,
    /// Bytes one plugin (over every context) and the whole file may hold.
    quota: Quota,
}

/// The connection, and what this process already knows about the file (only ever facts that
/// no other process can make false: a budget key once recorded stays recorded; a bucket
/// pruned stays pruned).
struct Local {
    conn: Connection,
    known: HashSet<BudgetKey>,
    pruned: HashMap<BudgetKey, u64>,
}

impl SqliteBackend {
    /// Open (or create) `dir/state.sqlite3`.
    pub fn open(dir: &Path) -> Result<Self, String> {
        Self::open_with(dir, Quota::default(), super::PRESUMED_STOPPED)
    }

    /// [`SqliteBackend::open`], keeping `quota` and presuming a process that went unseen for
    /// `presumed_stopped` stopped.
    pub fn open_with(dir: &Path, quota: Quota, presumed_stopped: Duration) -> Result<Self, String> {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("state directory {}: {e}", dir.display()))?;
        let path = dir.join("state.sqlite3");
        let conn = Connection::open(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        // Several processes may open the file at once (`hak call` runs): switching to WAL
        // does not wait for other connections, so it is retried briefly.
        let mut attempt = 0;
        loop {
            let setup = conn
                .busy_timeout(Duration::from_secs(5))
                .and_then(|_| {
                    let mode: String =
                        conn.pragma_query_value(None, "journal_mode", |r| r.get(0))?;
                    if mode.eq_ignore_ascii_case("wal") {
                        Ok(())
                    } else {
                        conn.pragma_update(None, "journal_mode", "WAL")
                    }
                })
                .and_then(|_| conn.pragma_update(None, "synchronous", "NORMAL"))
                .and_then(|_| conn.execute_batch(SCHEMA))
                // An earlier hak's file: owners of reservations, then what each plugin holds.
                .and_then(|_| {
                    migrate_once(
                        &conn,
                        "SELECT 1 FROM pragma_table_info('reservations') WHERE name = 'owner'",
                        RESERVATION_OWNERS,
                    )
                })
                .and_then(|_| {
                    migrate_once(
                        &conn,
                        "SELECT 1 WHERE EXISTS (SELECT 1 FROM usage)
                            OR NOT EXISTS (SELECT 1 FROM pads UNION ALL SELECT 1 FROM budgets)",
                        COUNT_USAGE,
                    )
                });
            match setup {
                Ok(()) => break,
                Err(e) if attempt < 50 && is_busy(&e) => {
                    attempt += 1;
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(e) => return Err(format!("{}: {e}", path.display())),
            }
        }
        let owner: Arc<str> = {
            let mut bytes = [0u8; 16];
            rand_core::RngCore::fill_bytes(&mut rand_core::OsRng, &mut bytes);
            hex::encode(bytes).into()
        };
        conn.execute(
            "INSERT INTO owners (owner, seen_ms) VALUES (?1, ?2)",
            params![&*owner, now_ms()],
        )
        .map_err(|e| format!("{}: {e}", path.display()))?;
        let conn = Arc::new(Mutex::new(Local {
            conn,
            known: HashSet::new(),
            pruned: HashMap::new(),
        }));
        spawn_heartbeat(Arc::downgrade(&conn), owner.clone(), presumed_stopped / 6);
        Ok(SqliteBackend {
            conn,
            path,
            owner,
            presumed_stopped_ms: presumed_stopped.as_millis() as i64,
            quota,
        })
    }

    fn local(&self) -> std::sync::MutexGuard<'_, Local> {
        self.conn.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for SqliteBackend {
    fn drop(&mut self) {
        // A clean stop: what this store still holds is an orphan for the others at once.
        let local = self.local();
        let _ = local
            .conn
            .execute("DELETE FROM owners WHERE owner=?1", params![&*self.owner]);
    }
}

/// Drop what left the window (when a bucket has left it since this process last looked) and
/// total the rest, inside an open transaction.
fn window_total(
    tx: &rusqlite::Transaction<'_>,
    pruned: &mut HashMap<BudgetKey, u64>,
    pad: &PadKey,
    key: &str,
    window: u32,
    now_ms: u64,
) -> rusqlite::Result<u64> {
    let oldest = oldest_counted(now_ms, window);
    let who = (
        pad.scope.to_string(),
        pad.plugin.to_string(),
        key.to_owned(),
        window,
    );
    if pruned.get(&who) != Some(&oldest) {
        let args = params![&*pad.scope, &*pad.plugin, key, window, oldest as i64];
        tx.prepare_cached(
            "DELETE FROM buckets WHERE scope=?1 AND plugin=?2 AND key=?3 AND window=?4 AND bucket<?5",
        )?
        .execute(args)?;
        tx.prepare_cached(
            "DELETE FROM reservations WHERE scope=?1 AND plugin=?2 AND key=?3 AND window=?4 AND bucket<?5",
        )?
        .execute(args)?;
        if pruned.len() > 10_000 {
            pruned.clear();
        }
        pruned.insert(who, oldest);
    }
    let total: Option<i64> = tx
        .prepare_cached(
            "SELECT SUM(amount) FROM (
                SELECT amount FROM buckets WHERE scope=?1 AND plugin=?2 AND key=?3 AND window=?4 AND bucket>=?5
                UNION ALL
                SELECT amount FROM reservations WHERE scope=?1 AND plugin=?2 AND key=?3 AND window=?4 AND bucket>=?5)",
        )?
        .query_row(
            params![&*pad.scope, &*pad.plugin, key, window, oldest as i64],
            |r| r.get(0),
        )?;
    Ok(total.unwrap_or(0).max(0) as u64)
}

/// (scope, plugin, key, window)
type BudgetKey = (String, String, String, u32);

impl StateBackend for SqliteBackend {
    fn get(&self, pad: &PadKey, key: &str) -> Result<Option<String>, StateError> {
        self.local()
            .conn
            .prepare_cached("SELECT value FROM pads WHERE scope=?1 AND plugin=?2 AND key=?3")
            .and_then(|mut s| {
                s.query_row(params![&*pad.scope, &*pad.plugin, key], |r| r.get(0))
                    .optional()
            })
            .map_err(unavailable)
    }

    fn set(&self, pad: &PadKey, key: &str, value: &str, cap: usize) -> Result<(), StateError> {
        let mut local = self.local();
        let tx = local
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(unavailable)?;
        let others: i64 = tx
            .query_row(
                "SELECT COALESCE(SUM(bytes), 0) FROM pads WHERE scope=?1 AND plugin=?2 AND key<>?3",
                params![&*pad.scope, &*pad.plugin, key],
                |r| r.get(0),
            )
            .map_err(unavailable)?;
        let bytes = entry_bytes(key, value);
        let new_total = others as usize + bytes;
        if new_total > cap {
            return Err(StateError::Full(format!(
                "state limit of {cap} bytes exceeded (would be {new_total})"
            )));
        }
        let old: i64 = tx
            .prepare_cached(
                "SELECT COALESCE((SELECT bytes FROM pads WHERE scope=?1 AND plugin=?2 AND key=?3), 0)",
            )
            .and_then(|mut s| {
                s.query_row(params![&*pad.scope, &*pad.plugin, key], |r| r.get(0))
            })
            .map_err(unavailable)?;
        charge(&tx, &pad.plugin, bytes as i64 - old, &self.quota)?;
        tx.execute(
            "INSERT INTO pads (scope, plugin, key, value, bytes) VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (scope, plugin, key) DO UPDATE SET value=excluded.value, bytes=excluded.bytes",
            params![&*pad.scope, &*pad.plugin, key, value, bytes as i64],
        )
        .and_then(|_| tx.commit())
        .map_err(unavailable)
    }

    fn delete(&self, pad: &PadKey, key: &str) -> Result<(), StateError> {
        let mut local = self.local();
        let tx = local
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(unavailable)?;
        let old: Option<i64> = tx
            .prepare_cached(
                "DELETE FROM pads WHERE scope=?1 AND plugin=?2 AND key=?3 RETURNING bytes",
            )
            .and_then(|mut s| {
                s.query_row(params![&*pad.scope, &*pad.plugin, key], |r| r.get(0))
                    .optional()
            })
            .map_err(unavailable)?;
        if let Some(old) = old {
            charge(&tx, &pad.plugin, -old, &self.quota)?;
        }
        tx.commit().map_err(unavailable)
    }

    fn reserve(
        &self,
        pad: &PadKey,
        key: &str,
        amount: u64,
        limit: u64,
        window_seconds: u32,
        now_ms: u64,
    ) -> Result<Reserved, StateError> {
        let amount_sql = to_sql(amount)?;
        let mut local = self.local();
        let Local {
            conn,
            known,
            pruned,
        } = &mut *local;
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(unavailable)?;
        let who = (
            pad.scope.to_string(),
            pad.plugin.to_string(),
            key.to_owned(),
            window_seconds,
        );
        if !known.contains(&who) {
            let recorded = tx
                .prepare_cached(
                    "SELECT 1 FROM budgets WHERE scope=?1 AND plugin=?2 AND key=?3 AND window=?4",
                )
                .and_then(|mut s| {
                    s.query_row(
                        params![&*pad.scope, &*pad.plugin, key, window_seconds],
                        |_| Ok(()),
                    )
                    .optional()
                })
                .map_err(unavailable)?
                .is_some();
            if !recorded {
                let count: i64 = tx
                    .query_row(
                        "SELECT COUNT(*) FROM budgets WHERE scope=?1 AND plugin=?2",
                        params![&*pad.scope, &*pad.plugin],
                        |r| r.get(0),
                    )
                    .map_err(unavailable)?;
                if count as usize >= MAX_BUDGET_KEYS {
                    return Err(StateError::Full(format!(
                        "at most {MAX_BUDGET_KEYS} budget keys per plugin and agent context"
                    )));
                }
                charge(
                    &tx,
                    &pad.plugin,
                    (key.len() + ENTRY_OVERHEAD) as i64,
                    &self.quota,
                )?;
                tx.execute(
                    "INSERT INTO budgets (scope, plugin, key, window) VALUES (?1, ?2, ?3, ?4)",
                    params![&*pad.scope, &*pad.plugin, key, window_seconds],
                )
                .map_err(unavailable)?;
            }
            if known.len() > 10_000 {
                known.clear();
            }
            known.insert(who);
        }
        let total =
            window_total(&tx, pruned, pad, key, window_seconds, now_ms).map_err(unavailable)?;
        let answer = if total.saturating_add(amount) > limit {
            Reserved::OverLimit { spent: total }
        } else {
            tx.prepare_cached(
                "INSERT INTO reservations (scope, plugin, key, window, bucket, amount, owner)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )
            .and_then(|mut s| {
                s.execute(params![
                    &*pad.scope,
                    &*pad.plugin,
                    key,
                    window_seconds,
                    bucket(now_ms, window_seconds) as i64,
                    amount_sql,
                    &*self.owner
                ])
            })
            .map_err(unavailable)?;
            Reserved::Granted {
                id: ReservationId(format!("s:{}", tx.last_insert_rowid())),
                total: total.saturating_add(amount),
            }
        };
        tx.commit().map_err(unavailable)?;
        Ok(answer)
    }

    fn spent(
        &self,
        pad: &PadKey,
        key: &str,
        window_seconds: u32,
        now_ms: u64,
    ) -> Result<u64, StateError> {
        let mut local = self.local();
        let Local { conn, pruned, .. } = &mut *local;
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(unavailable)?;
        let total =
            window_total(&tx, pruned, pad, key, window_seconds, now_ms).map_err(unavailable)?;
        tx.commit().map_err(unavailable)?;
        Ok(total)
    }

    fn settle(&self, ids: &[ReservationId], commit: bool) -> Result<(), StateError> {
        if ids.is_empty() {
            return Ok(());
        }
        let mut local = self.local();
        let tx = local
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(unavailable)?;
        for id in ids {
            let Some(rowid) = row_id(id) else {
                continue;
            };
            settle_row(&tx, rowid, commit)?;
        }
        tx.commit().map_err(unavailable)
    }

    fn bind(&self, ids: &[ReservationId], binding: &Binding) -> Result<(), StateError> {
        let (bound, tx_id, until) = binding_columns(binding);
        let mut local = self.local();
        let tx = local
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(unavailable)?;
        for id in ids {
            let Some(rowid) = row_id(id) else { continue };
            let changed = tx
                .prepare_cached(
                    "UPDATE reservations SET bound=?2, tx=?3, until_ms=?4 WHERE id=?1 AND owner=?5",
                )
                .and_then(|mut s| s.execute(params![rowid, bound, tx_id, until, &*self.owner]))
                .map_err(unavailable)?;
            if changed == 0 {
                return Err(StateError::Unavailable(format!(
                    "budget reservation {} is no longer held (its window passed, or this process went unseen for {} s and another settled it)",
                    id.0,
                    self.presumed_stopped_ms / 1000
                )));
            }
        }
        tx.commit().map_err(unavailable)
    }

    fn orphans(&self) -> Result<Vec<Orphan>, StateError> {
        let local = self.local();
        let mut statement = local
            .conn
            .prepare_cached(
                "SELECT id, bound, tx, until_ms, amount, scope, plugin, key, owner FROM reservations
                 WHERE owner IS NOT NULL AND owner <> ?1
                   AND owner NOT IN (SELECT owner FROM owners WHERE seen_ms >= ?2)
                 ORDER BY id",
            )
            .map_err(unavailable)?;
        let rows = statement
            .query_map(
                params![&*self.owner, now_ms() - self.presumed_stopped_ms],
                |r| {
                    Ok(Orphan {
                        id: ReservationId(format!("s:{}", r.get::<_, i64>(0)?)),
                        binding: binding_of(r.get(1)?, r.get(2)?, r.get(3)?),
                        amount: r.get::<_, i64>(4)?.max(0) as u64,
                        budget: format!(
                            "plugin {:?} in context {:?}, key {:?}",
                            r.get::<_, String>(6)?,
                            r.get::<_, String>(5)?,
                            r.get::<_, String>(7)?
                        ),
                        owner: r.get(8)?,
                    })
                },
            )
            .map_err(unavailable)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(unavailable)
    }

    fn settle_orphan(&self, orphan: &Orphan, commit: bool) -> Result<bool, StateError> {
        let Some(rowid) = row_id(&orphan.id) else {
            return Ok(false);
        };
        let (bound, tx_id, until) = binding_columns(&orphan.binding);
        // One write transaction: its owner cannot bind it or come back in between.
        let mut local = self.local();
        let tx = local
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(unavailable)?;
        let still = tx
            .prepare_cached(
                "SELECT 1 FROM reservations WHERE id=?1 AND bound=?2 AND tx IS ?3 AND until_ms IS ?4
                   AND owner NOT IN (SELECT owner FROM owners WHERE seen_ms >= ?5)",
            )
            .and_then(|mut s| {
                s.exists(params![
                    rowid,
                    bound,
                    tx_id,
                    until,
                    now_ms() - self.presumed_stopped_ms
                ])
            })
            .map_err(unavailable)?;
        if !still {
            return Ok(false);
        }
        settle_row(&tx, rowid, commit)?;
        tx.commit().map_err(unavailable)?;
        Ok(true)
    }

    fn shared(&self) -> bool {
        true
    }

    fn describe(&self) -> String {
        format!("sqlite {}", self.path.display())
    }
}

#[cfg(test)]
mod tests;
