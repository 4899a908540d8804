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

use super::window::{bucket, oldest_counted};
use super::{
    entry_bytes, PadKey, ReservationId, Reserved, StateBackend, StateError, MAX_BUDGET_KEYS,
};
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

pub struct SqliteBackend {
    conn: Mutex<Local>,
    path: PathBuf,
}

/// The connection, and what this process already knows about the file (only ever facts that
/// no other process can make false: a budget key once recorded stays recorded; a bucket
/// pruned stays pruned).
struct Local {
    conn: Connection,
    known: HashSet<BudgetKey>,
    pruned: HashMap<BudgetKey, u64>,
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS pads (
    scope TEXT NOT NULL, plugin TEXT NOT NULL, key TEXT NOT NULL,
    value TEXT NOT NULL, bytes INTEGER NOT NULL,
    PRIMARY KEY (scope, plugin, key));
CREATE TABLE IF NOT EXISTS budgets (
    scope TEXT NOT NULL, plugin TEXT NOT NULL, key TEXT NOT NULL, window INTEGER NOT NULL,
    PRIMARY KEY (scope, plugin, key, window));
CREATE TABLE IF NOT EXISTS buckets (
    scope TEXT NOT NULL, plugin TEXT NOT NULL, key TEXT NOT NULL, window INTEGER NOT NULL,
    bucket INTEGER NOT NULL, amount INTEGER NOT NULL,
    PRIMARY KEY (scope, plugin, key, window, bucket));
CREATE TABLE IF NOT EXISTS reservations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    scope TEXT NOT NULL, plugin TEXT NOT NULL, key TEXT NOT NULL, window INTEGER NOT NULL,
    bucket INTEGER NOT NULL, amount INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS reservations_by_budget ON reservations (scope, plugin, key, window);
";

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

fn unavailable(e: rusqlite::Error) -> StateError {
    StateError::Unavailable(e.to_string())
}

/// Amounts are int64 in SQLite; Hedera amounts are int64 too.
fn to_sql(amount: u64) -> Result<i64, StateError> {
    i64::try_from(amount)
        .map_err(|_| StateError::Full(format!("amount {amount} is larger than int64")))
}

impl SqliteBackend {
    /// Open (or create) `dir/state.sqlite3`.
    pub fn open(dir: &Path) -> Result<Self, String> {
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
                .and_then(|_| conn.execute_batch(SCHEMA));
            match setup {
                Ok(()) => break,
                Err(e) if attempt < 50 && is_busy(&e) => {
                    attempt += 1;
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(e) => return Err(format!("{}: {e}", path.display())),
            }
        }
        Ok(SqliteBackend {
            conn: Mutex::new(Local {
                conn,
                known: HashSet::new(),
                pruned: HashMap::new(),
            }),
            path,
        })
    }

    fn local(&self) -> std::sync::MutexGuard<'_, Local> {
        self.conn.lock().unwrap_or_else(|e| e.into_inner())
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
        tx.execute(
            "INSERT INTO pads (scope, plugin, key, value, bytes) VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (scope, plugin, key) DO UPDATE SET value=excluded.value, bytes=excluded.bytes",
            params![&*pad.scope, &*pad.plugin, key, value, bytes as i64],
        )
        .and_then(|_| tx.commit())
        .map_err(unavailable)
    }

    fn delete(&self, pad: &PadKey, key: &str) -> Result<(), StateError> {
        self.local()
            .conn
            .execute(
                "DELETE FROM pads WHERE scope=?1 AND plugin=?2 AND key=?3",
                params![&*pad.scope, &*pad.plugin, key],
            )
            .map(drop)
            .map_err(unavailable)
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
                "INSERT INTO reservations (scope, plugin, key, window, bucket, amount)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )
            .and_then(|mut s| {
                s.execute(params![
                    &*pad.scope,
                    &*pad.plugin,
                    key,
                    window_seconds,
                    bucket(now_ms, window_seconds) as i64,
                    amount_sql
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
            let Some(rowid) = id.0.strip_prefix("s:").and_then(|n| n.parse::<i64>().ok()) else {
                continue;
            };
            if commit {
                tx.prepare_cached(
                    "INSERT INTO buckets (scope, plugin, key, window, bucket, amount)
                     SELECT scope, plugin, key, window, bucket, amount FROM reservations WHERE id=?1
                     ON CONFLICT (scope, plugin, key, window, bucket)
                     DO UPDATE SET amount = amount + excluded.amount",
                )
                .and_then(|mut s| s.execute(params![rowid]))
                .map_err(unavailable)?;
            }
            tx.prepare_cached("DELETE FROM reservations WHERE id=?1")
                .and_then(|mut s| s.execute(params![rowid]))
                .map_err(unavailable)?;
        }
        tx.commit().map_err(unavailable)
    }

    fn bind(&self, _ids: &[ReservationId], _binding: &super::Binding) -> Result<(), StateError> {
        // Not reconciled yet: a stopped process's reservations stay counted until their window passes.
        Ok(())
    }

    fn orphans(&self) -> Result<Vec<super::Orphan>, StateError> {
        Ok(Vec::new())
    }

    fn shared(&self) -> bool {
        true
    }

    fn describe(&self) -> String {
        format!("sqlite {}", self.path.display())
    }
}
