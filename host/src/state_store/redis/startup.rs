//! What a Redis store checks and starts when it opens: the servers persist, every primary
//! has the replicas `wait_replicas` asks for, a cluster keeps serving while one shard fails
//! over; and the heartbeat that says this process is alive. What must not live here: the
//! operations of calls.

use super::conn::{Pool, Route};
use super::{keys, RedisBackend};
use crate::state_store::StateError;
use std::time::Duration;

impl RedisBackend {
    pub(super) fn say_alive(&self) -> Result<(), StateError> {
        let key = keys::alive(&self.owner);
        self.pool.run(Route::Key(&key), |c| {
            redis::cmd("SET")
                .arg(&key)
                .arg("1")
                .arg("PX")
                .arg(self.alive_ms)
                .query::<()>(c)
        })
    }

    /// Renew the `alive` key every sixth of its life while the store is open, on a
    /// connection pool of its own (a call's operations never wait behind it).
    /// Without it the others would take this process for stopped after `presumed_stopped_ms`
    /// and settle its live calls' reservations: a store that cannot start it does not open.
    pub(super) fn spawn_heartbeat(&self, open: std::sync::Weak<()>) -> Result<(), String> {
        let bound = self.pool.timeout.max(Duration::from_secs(1));
        let pool = Pool::open(&self.topology, bound, 0)?;
        let (key, alive_ms) = (keys::alive(&self.owner), self.alive_ms);
        let every = Duration::from_millis(self.alive_ms / 6);
        std::thread::Builder::new()
            .name("hak-redis-alive".into())
            .spawn(move || loop {
                std::thread::sleep(every);
                if open.strong_count() == 0 {
                    return;
                }
                let renewed = pool.run(Route::Key(&key), |c| {
                    redis::cmd("SET")
                        .arg(&key)
                        .arg("1")
                        .arg("PX")
                        .arg(alive_ms)
                        .query::<()>(c)
                });
                if let Err(e) = renewed {
                    tracing::warn!("state store: cannot say this process is alive: {e}");
                }
            })
            .map(drop)
            .map_err(|e| format!("cannot start the heartbeat thread: {e}"))
    }

    /// Refuse servers that forget budgets when they restart: without the append-only file a
    /// restart loses every spend since the last snapshot (all of them without snapshots).
    /// On a cluster, every primary is asked.
    pub(super) fn check_persistence(&self) -> Result<(), String> {
        let where_ = self.topology.describe();
        let primaries = self
            .pool
            .primaries()
            .map_err(|e| format!("{where_}: {e}"))?;
        for addr in primaries {
            let answer = self
                .pool
                .run_within(Duration::from_secs(2), Route::Node(&addr), |c| {
                    redis::cmd("CONFIG")
                        .arg("GET")
                        .arg("appendonly")
                        .query::<Vec<String>>(c)
                });
            let server = if addr.is_empty() {
                where_.clone()
            } else {
                format!("{where_} (node {addr})")
            };
            let values = answer.map_err(|e| {
                format!(
                    "{server}: cannot check that the server persists budgets (CONFIG GET appendonly: {e}); a managed Redis often refuses CONFIG: if it persists (append-only file on), say so with [state] redis_persistence = \"acknowledged\""
                )
            })?;
            match values.get(1).map(String::as_str) {
                Some("yes") => {}
                other => return Err(format!(
                    "{server}: the server runs with appendonly {}: a restart would forget the budgets spent since its last snapshot (all of them without snapshots) and let them be spent again. Turn the append-only file on (appendonly yes, appendfsync everysec or always), or, to run without it knowingly, set [state] redis_persistence = \"acknowledged\"",
                    other.unwrap_or("(no answer)")
                )),
            }
        }
        Ok(())
    }

    /// A cluster whose nodes require full coverage refuses every key while one shard fails
    /// over: say so at start (a managed Redis that refuses `CONFIG` is not asked).
    pub(super) fn warn_full_coverage(&self) {
        if !self.keys.sharded {
            return;
        }
        for addr in self.pool.primaries().unwrap_or_default() {
            let answer = self
                .pool
                .run_within(Duration::from_secs(2), Route::Node(&addr), |c| {
                    redis::cmd("CONFIG")
                        .arg("GET")
                        .arg("cluster-require-full-coverage")
                        .query::<Vec<String>>(c)
                });
            if answer.is_ok_and(|v| v.get(1).is_some_and(|v| v == "yes")) {
                tracing::warn!(
                    "state {}: node {addr} runs with cluster-require-full-coverage yes: while one shard fails over, every budgeted call is refused, not only those on that shard (set it to no)",
                    self.topology.describe()
                );
                return;
            }
        }
    }

    /// With `wait_replicas`, every primary must have that many replicas connected: a write
    /// could never be confirmed otherwise, and every budgeted call would be refused.
    pub(super) fn check_replicas(&self) -> Result<(), String> {
        let wanted = self.pool.wait_replicas();
        if wanted == 0 {
            return Ok(());
        }
        let where_ = self.topology.describe();
        let counts = self
            .pool
            .replicas_of_primaries()
            .map_err(|e| format!("{where_}: {e}"))?;
        for (addr, replicas) in counts {
            if replicas < wanted {
                let node = if addr.is_empty() {
                    "the primary".to_owned()
                } else {
                    format!("primary {addr}")
                };
                return Err(format!(
                    "{where_}: {node} has {replicas} replica(s) connected, and state.wait_replicas = {wanted} asks each write to be confirmed by {wanted}: every budgeted call would be refused. Add replicas, or set wait_replicas = 0 to accept that a spend acknowledged just before a failover may be lost and spent again"
                ));
            }
        }
        Ok(())
    }
}
