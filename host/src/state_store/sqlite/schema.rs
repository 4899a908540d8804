//! The SQLite file's schema and the row-level steps every operation shares: migrations run
//! once, byte quotas charged, bindings written and read, a reservation settled, the
//! heartbeat. What must not live here: the store's operations.

use super::*;

pub(super) const SCHEMA: &str = "
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
CREATE TABLE IF NOT EXISTS owners (owner TEXT PRIMARY KEY, seen_ms INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS usage (plugin TEXT PRIMARY KEY, bytes INTEGER NOT NULL);
";

/// What each plugin holds, counted from the file (scratchpad entries and budget keys, each
/// [`ENTRY_OVERHEAD`] bytes beyond its text): for a file an earlier hak wrote without `usage`
/// (run when `usage` is empty and the file holds state).
pub(super) const COUNT_USAGE: &str = "
INSERT INTO usage (plugin, bytes)
SELECT plugin, SUM(b) FROM (
    SELECT plugin, bytes AS b FROM pads
    UNION ALL
    SELECT plugin, length(CAST(key AS BLOB)) + 64 AS b FROM budgets)
GROUP BY plugin;
";

/// Run `migration` once, whoever opens the file first: skipped when the query `done` finds a
/// row, and checked again under the write lock (another process may have just run it).
pub(super) fn migrate_once(conn: &Connection, done: &str, migration: &str) -> rusqlite::Result<()> {
    let is_done = |conn: &Connection| conn.prepare(done)?.exists([]);
    if is_done(conn)? {
        return Ok(());
    }
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let ran = (|| {
        if !is_done(conn)? {
            conn.execute_batch(migration)?;
        }
        Ok(())
    })();
    match ran {
        Ok(()) => conn.execute_batch("COMMIT"),
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

/// Hold `delta` more bytes for `plugin` (inside an open transaction); growth past a quota is
/// refused, for that plugin alone.
pub(super) fn charge(
    tx: &rusqlite::Transaction<'_>,
    plugin: &str,
    delta: i64,
    quota: &Quota,
) -> Result<(), StateError> {
    if delta > 0 {
        let used: i64 = tx
            .prepare_cached("SELECT COALESCE((SELECT bytes FROM usage WHERE plugin=?1), 0)")
            .and_then(|mut s| s.query_row(params![plugin], |r| r.get(0)))
            .map_err(unavailable)?;
        if used + delta > quota.plugin_bytes as i64 {
            return Err(StateError::Full(format!(
                "plugin {plugin:?} holds {used} bytes of state over all agent contexts; its quota is {} bytes",
                quota.plugin_bytes
            )));
        }
        let total: i64 = tx
            .prepare_cached("SELECT COALESCE(SUM(bytes), 0) FROM usage")
            .and_then(|mut s| s.query_row([], |r| r.get(0)))
            .map_err(unavailable)?;
        if total + delta > quota.total_bytes as i64 {
            return Err(StateError::Full(format!(
                "the state store holds {total} bytes; the host's quota is {} bytes",
                quota.total_bytes
            )));
        }
    }
    tx.prepare_cached(
        "INSERT INTO usage (plugin, bytes) VALUES (?1, MAX(?2, 0))
         ON CONFLICT (plugin) DO UPDATE SET bytes = MAX(bytes + ?2, 0)",
    )
    .and_then(|mut s| s.execute(params![plugin, delta]))
    .map(drop)
    .map_err(unavailable)
}

/// Columns an earlier hak's `reservations` table lacks: whose it is and what its call sent
/// (`bound`: 0 nothing, 1 the transaction `tx` valid until `until_ms`, 2 opaque).
pub(super) const RESERVATION_OWNERS: &str = "
ALTER TABLE reservations ADD COLUMN owner TEXT;
ALTER TABLE reservations ADD COLUMN bound INTEGER NOT NULL DEFAULT 0;
ALTER TABLE reservations ADD COLUMN tx TEXT;
ALTER TABLE reservations ADD COLUMN until_ms INTEGER;
";

pub(super) fn now_ms() -> i64 {
    crate::state_store::now_ms() as i64
}

/// Say `owner` is alive every `every` for as long as its store is open.
pub(super) fn spawn_heartbeat(
    local: std::sync::Weak<Mutex<Local>>,
    owner: Arc<str>,
    every: Duration,
) {
    let _ = std::thread::Builder::new()
        .name("hak-sqlite-alive".into())
        .spawn(move || loop {
            std::thread::sleep(every);
            let Some(local) = local.upgrade() else { return };
            let local = local.lock().unwrap_or_else(|e| e.into_inner());
            let seen = local.conn.execute(
                "INSERT INTO owners (owner, seen_ms) VALUES (?1, ?2)
                 ON CONFLICT (owner) DO UPDATE SET seen_ms = excluded.seen_ms",
                params![&*owner, now_ms()],
            );
            if let Err(e) = seen {
                tracing::warn!("state store: cannot say this process is alive: {e}");
            }
        });
}

pub(super) fn binding_columns(binding: &Binding) -> (i64, Option<&str>, Option<i64>) {
    match binding {
        Binding::Unbound => (0, None, None),
        Binding::Transaction { id, until_ms } => (
            1,
            Some(id.as_str()),
            Some(i64::try_from(*until_ms).unwrap_or(i64::MAX)),
        ),
        Binding::Opaque => (2, None, None),
    }
}

pub(super) fn binding_of(bound: i64, tx: Option<String>, until: Option<i64>) -> Binding {
    match (bound, tx) {
        (0, _) => Binding::Unbound,
        (1, Some(id)) => Binding::Transaction {
            id,
            until_ms: until.map_or(u64::MAX, |u| u.max(0) as u64),
        },
        _ => Binding::Opaque,
    }
}

/// Commit (into its bucket) or release reservation `rowid`, inside an open transaction.
pub(super) fn settle_row(
    tx: &rusqlite::Transaction<'_>,
    rowid: i64,
    commit: bool,
) -> Result<(), StateError> {
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
        .map(drop)
        .map_err(unavailable)
}

pub(super) fn row_id(id: &ReservationId) -> Option<i64> {
    id.0.strip_prefix("s:").and_then(|n| n.parse().ok())
}

pub(super) fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

pub(super) fn unavailable(e: rusqlite::Error) -> StateError {
    StateError::Unavailable(e.to_string())
}

/// Amounts are int64 in SQLite; Hedera amounts are int64 too.
pub(super) fn to_sql(amount: u64) -> Result<i64, StateError> {
    i64::try_from(amount)
        .map_err(|_| StateError::Full(format!("amount {amount} is larger than int64")))
}
