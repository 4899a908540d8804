//! The shared backend: Redis, so several `hak serve` replicas behind a load balancer hold one
//! budget — on one server, on a primary with replicas that Sentinel follows, or on a Redis
//! Cluster ([`conn::Topology`]). Every operation is bounded by `[state] timeout_ms` (50 ms:
//! a frozen server is unavailable, not a stall), and at start the servers must persist
//! (`appendonly yes`) unless the manifest acknowledges otherwise. Each operation is one Lua
//! script (Redis runs a script atomically, `scripts`), over keys of one hash slot (`keys`),
//! with the time taken from the Redis server (`TIME`), so replicas with drifting clocks
//! still agree on the windows. Amounts are Lua numbers there: reservations above 2^53 base
//! units are refused (fail closed) rather than rounded.
//!
//! Replication is asynchronous: a write a primary acknowledged and lost before its replica
//! had it would be forgotten on a failover (a spend spent again). With `wait_replicas` (1 by
//! default with Sentinel or a cluster) every write is followed by `WAIT` on its server, and
//! a write no replica confirmed within the bound does not count as done: a reservation is
//! given back and refused (the policy blocks), a commit or binding is an error (a
//! return-bytes call does not hand out its bytes; an autonomous call's reservation stays
//! counted as spent until its window passes).
//!
//! Processes that stop mid-call: each open store is an owner (a random id) that keeps
//! `hak:alive:<owner>` set (30 s expiry, renewed every 5 s) and lists its unsettled
//! reservations in its owner's list (`<n>:<budget base>` → what its call sent: `0`
//! nothing, `1|<until ms>|<transaction id>`, `2` opaque). The reservations of an owner whose
//! `alive` key has expired are orphans for any replica's reconciler, settled by a script that
//! first checks the owner is still gone (on a cluster: just before, on the `alive` key's own
//! slot) and the binding unchanged.

mod conn;
mod keys;
mod orphans;
mod scripts;
mod startup;

pub use conn::Topology;

use super::window::width_ms;
use super::{
    Binding, Orphan, PadKey, ReservationId, Reserved, StateBackend, StateError, ENTRY_OVERHEAD,
    MAX_BUDGET_KEYS,
};
use conn::{Pool, Route};
use keys::Keys;
use scripts::Scripts;
use std::sync::Arc;
use std::time::Duration;

/// The largest amount a Lua number holds exactly.
const MAX_EXACT: u64 = 1 << 53;

pub struct RedisBackend {
    pool: Pool,
    topology: Topology,
    keys: Keys,
    scripts: Scripts,
    /// This store's owner id (random, per open).
    owner: String,
    /// Held while the store is open: its heartbeat stops with it.
    _alive: Arc<()>,
    /// How long the `alive` key lives (renewed every sixth of it).
    alive_ms: u64,
    /// Bytes one plugin (over every context) and the whole store may hold.
    quota: super::Quota,
}

/// How long the reconciler's walk over the keyspace may take.
const SCAN_BOUND: Duration = Duration::from_secs(5);

fn binding_text(binding: &Binding) -> String {
    match binding {
        Binding::Unbound => "0".into(),
        Binding::Transaction { id, until_ms } => format!("1|{until_ms}|{id}"),
        Binding::Opaque => "2".into(),
    }
}

fn binding_of(text: &str) -> Binding {
    let mut parts = text.splitn(3, '|');
    match (parts.next(), parts.next(), parts.next()) {
        (Some("0"), _, _) => Binding::Unbound,
        (Some("1"), Some(until), Some(id)) => Binding::Transaction {
            id: id.to_owned(),
            until_ms: until.parse().unwrap_or(u64::MAX),
        },
        _ => Binding::Opaque,
    }
}

/// How the operator vouches for the server's persistence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Persistence {
    /// Check it at start (`CONFIG GET appendonly`): refuse a server that would forget budgets.
    Check,
    /// The operator vouches for it (a managed Redis that disables `CONFIG`, or a deliberate
    /// volatile store): not checked.
    Acknowledged,
}

/// How to reach Redis and what to ask of it.
#[derive(Clone, Debug)]
pub struct RedisOptions {
    pub topology: Topology,
    /// Each operation, connecting included, within this.
    pub timeout: Duration,
    pub persistence: Persistence,
    pub quota: super::Quota,
    /// How long a process may go unseen before its reservations are orphans.
    pub presumed_stopped: Duration,
    /// Replicas that must confirm each write (`WAIT`); 0: none.
    pub wait_replicas: u32,
}

/// The id's number and budget base: `r:<n>:<base>`.
fn split_id(id: &ReservationId) -> Option<(&str, &str)> {
    id.0.strip_prefix("r:").and_then(|r| r.split_once(':'))
}

fn not_confirmed(what: &str, wait: u32, timeout: Duration) -> StateError {
    StateError::Unavailable(format!(
        "{what} was not confirmed by {wait} replica(s) within {} ms (a failover could lose it, so it does not count)",
        timeout.as_millis()
    ))
}

impl RedisBackend {
    /// Connect to one server at `url` (`redis://127.0.0.1:6379/0`); see [`Self::open_with`].
    pub fn open(
        url: &str,
        timeout: Duration,
        persistence: Persistence,
        quota: super::Quota,
        presumed_stopped: Duration,
    ) -> Result<Self, String> {
        Self::open_with(RedisOptions {
            topology: Topology::Single {
                url: url.to_owned(),
            },
            timeout,
            persistence,
            quota,
            presumed_stopped,
            wait_replicas: 0,
        })
    }

    /// Connect, check that the servers answer and, unless `persistence` is acknowledged, that
    /// they keep what they are told across a restart, and that every primary has the
    /// replicas `wait_replicas` asks for. Each later operation is bounded by `timeout`: past
    /// it the store is unavailable (the policy blocks) and the call goes on within the
    /// plugin's deadline.
    pub fn open_with(options: RedisOptions) -> Result<Self, String> {
        let where_ = options.topology.describe();
        let pool = Pool::open(&options.topology, options.timeout, options.wait_replicas)?;
        let owner = {
            let mut bytes = [0u8; 16];
            rand_core::RngCore::fill_bytes(&mut rand_core::OsRng, &mut bytes);
            hex::encode(bytes)
        };
        let alive = Arc::new(());
        let backend = RedisBackend {
            keys: Keys {
                sharded: pool.is_cluster(),
            },
            pool,
            topology: options.topology,
            scripts: Scripts::new(),
            owner,
            _alive: alive.clone(),
            alive_ms: options.presumed_stopped.as_millis() as u64,
            quota: options.quota,
        };
        // The first answer may take longer than a call's bound (a server just started).
        let started =
            backend
                .pool
                .run_within(Duration::from_secs(2), Route::Key("hak:usage"), |c| {
                    redis::cmd("PING").query::<String>(c)
                });
        started.map_err(|e| format!("{where_}: {e}"))?;
        if options.persistence == Persistence::Check {
            backend.check_persistence()?;
        }
        backend.check_replicas()?;
        backend.warn_full_coverage();
        backend.say_alive().map_err(|e| format!("{where_}: {e}"))?;
        backend
            .spawn_heartbeat(Arc::downgrade(&alive))
            .map_err(|e| format!("{where_}: {e}"))?;
        Ok(backend)
    }

    /// A write refused by a quota (`2`: the plugin's, `3`: the store's), `held` as counted.
    fn over_quota(&self, plugin: &str, refused: i64, held: i64) -> StateError {
        StateError::Full(match refused {
            2 => format!(
                "plugin {plugin:?} holds {held} bytes of state over all agent contexts; its quota is {} bytes",
                self.quota.plugin_bytes
            ),
            _ => format!(
                "the state store holds {held} bytes; the host's quota is {} bytes",
                self.quota.total_bytes
            ),
        })
    }

    /// A cluster's quota charge (`delta` may be negative: a refund), on the quota keys' own
    /// slot: `Ok(())`, or the refusal.
    fn charge(&self, plugin: &str, delta: i64) -> Result<(), StateError> {
        let (usage, total) = self.keys.usage();
        let (refused, held): (i64, i64) = self.pool.run(Route::Key(usage), |c| {
            self.scripts
                .charge
                .key(usage)
                .key(total)
                .arg(plugin)
                .arg(delta)
                .arg(self.quota.plugin_bytes)
                .arg(self.quota.total_bytes)
                .invoke(c)
        })?;
        match refused {
            0 => Ok(()),
            refused => Err(self.over_quota(plugin, refused, held)),
        }
    }

    /// Give back a cluster's charge; a refund that fails leaves the bytes counted (the
    /// quota errs on the side of refusing).
    fn refund(&self, plugin: &str, bytes: i64) {
        if bytes > 0 {
            if let Err(e) = self.charge(plugin, -bytes) {
                tracing::warn!(
                    "state store: {bytes} bytes of plugin {plugin:?}'s quota stay counted: {e}"
                );
            }
        }
    }

    /// Settle one reservation (`r:<number>:<base>`). A release of a reservation no replica
    /// confirmed is not confirmed either (`confirm` false): lost on a failover, it gives
    /// back nothing that the replica holds.
    fn settle_one(
        &self,
        id: &ReservationId,
        commit: bool,
        confirm: bool,
    ) -> Result<(), StateError> {
        let Some((number, base)) = split_id(id) else {
            return Ok(());
        };
        let buckets = format!("{base}:b");
        let settle = |c: &mut redis::Connection| {
            self.scripts
                .settle
                .key(&buckets)
                .key(format!("{base}:r"))
                .key(self.keys.owned(&self.owner, base))
                .arg(number)
                .arg(if commit { "1" } else { "0" })
                .arg(&id.0[2..])
                .invoke::<i64>(c)
        };
        if !confirm {
            return self.pool.run(Route::Key(&buckets), settle).map(drop);
        }
        let (_, confirmed) = self.pool.write(&buckets, settle)?;
        if !confirmed {
            let what = if commit { "a commit" } else { "a release" };
            return Err(not_confirmed(
                what,
                self.pool.wait_replicas(),
                self.pool.timeout,
            ));
        }
        Ok(())
    }
}

impl StateBackend for RedisBackend {
    fn get(&self, pad: &PadKey, key: &str) -> Result<Option<String>, StateError> {
        let hash = self.keys.pad(pad);
        self.pool.run(Route::Key(&hash), |c| {
            redis::cmd("HGET").arg(&hash).arg(key).query(c)
        })
    }

    fn set(&self, pad: &PadKey, key: &str, value: &str, cap: usize) -> Result<(), StateError> {
        let hash = self.keys.pad(pad);
        let bytes = format!("{hash}:bytes");
        let (usage, total_key) = self.keys.usage();
        // A cluster charges the entry's bytes first (on the quota's own slot) and refunds
        // what the write did not use.
        let precharged = if self.keys.sharded {
            let newlen = (key.len() + value.len() + ENTRY_OVERHEAD) as i64;
            self.charge(&pad.plugin, newlen)?;
            newlen
        } else {
            0
        };
        let written = self.pool.write(&hash, |c| {
            let mut call = self.scripts.set.key(&hash);
            call.key(&bytes);
            if !self.keys.sharded {
                call.key(usage).key(total_key);
            }
            call.arg(key)
                .arg(value)
                .arg(cap)
                .arg(&*pad.plugin)
                .arg(self.quota.plugin_bytes)
                .arg(self.quota.total_bytes)
                .invoke::<(i64, i64, i64)>(c)
        });
        let ((ok, total, oldlen), confirmed) = match written {
            Ok(answer) => answer,
            Err(e) => {
                self.refund(&pad.plugin, precharged);
                return Err(e);
            }
        };
        // A cluster gives back what the write did not use: the replaced entry's bytes when it
        // was written (the delta was new - old), the whole charge when it was refused.
        if self.keys.sharded {
            self.refund(&pad.plugin, if ok == 1 { oldlen } else { precharged });
        }
        match ok {
            1 if confirmed => Ok(()),
            1 => Err(not_confirmed(
                "a state write",
                self.pool.wait_replicas(),
                self.pool.timeout,
            )),
            0 => Err(StateError::Full(format!(
                "state limit of {cap} bytes exceeded (would be {total})"
            ))),
            refused => Err(self.over_quota(&pad.plugin, refused, total)),
        }
    }

    fn delete(&self, pad: &PadKey, key: &str) -> Result<(), StateError> {
        let hash = self.keys.pad(pad);
        let bytes = format!("{hash}:bytes");
        let (usage, total_key) = self.keys.usage();
        let (freed, confirmed) = self.pool.write(&hash, |c| {
            let mut call = self.scripts.delete.key(&hash);
            call.key(&bytes);
            if !self.keys.sharded {
                call.key(usage).key(total_key);
            }
            call.arg(key).arg(&*pad.plugin).invoke::<i64>(c)
        })?;
        if self.keys.sharded {
            self.refund(&pad.plugin, freed);
        }
        if !confirmed {
            return Err(not_confirmed(
                "a state delete",
                self.pool.wait_replicas(),
                self.pool.timeout,
            ));
        }
        Ok(())
    }

    fn reserve(
        &self,
        pad: &PadKey,
        key: &str,
        amount: u64,
        limit: u64,
        window_seconds: u32,
        _now_ms: u64,
    ) -> Result<Reserved, StateError> {
        if amount > MAX_EXACT {
            return Err(StateError::Full(format!(
                "amounts above 2^53 cannot be reserved on the redis backend (got {amount})"
            )));
        }
        let base = self.keys.budget_base(pad, key, window_seconds);
        let set = self.keys.budgets(pad);
        let name = Keys::budget_name(key, window_seconds);
        let buckets = format!("{base}:b");
        let (usage, total_key) = self.keys.usage();
        let key_bytes = (key.len() + ENTRY_OVERHEAD) as i64;
        let attempt = |precharged: bool| {
            self.pool.write(&buckets, |c| {
                let mut call = self.scripts.reserve.key(&buckets);
                call.key(format!("{base}:r"))
                    .key(&set)
                    .key(self.keys.ids(&base))
                    .key(self.keys.owned(&self.owner, &base));
                if !self.keys.sharded {
                    call.key(usage).key(total_key);
                }
                call.arg(amount)
                    .arg(limit.min(MAX_EXACT))
                    .arg(u64::from(window_seconds) * 1000)
                    .arg(width_ms(window_seconds))
                    .arg(&name)
                    .arg(MAX_BUDGET_KEYS)
                    .arg(&base)
                    .arg(&*pad.plugin)
                    .arg(self.quota.plugin_bytes)
                    .arg(self.quota.total_bytes)
                    .arg(key_bytes)
                    .arg(if precharged { "1" } else { "0" })
                    .invoke::<(i64, i64, i64, i64)>(c)
            })
        };
        let mut answer = attempt(false)?;
        if answer.0 .0 == -4 {
            // A cluster's new budget key: its bytes are charged on the quota's slot first.
            self.charge(&pad.plugin, key_bytes)?;
            answer = match attempt(true) {
                Ok(answer) => answer,
                Err(e) => {
                    self.refund(&pad.plugin, key_bytes);
                    return Err(e);
                }
            };
            if answer.0 .3 == 0 {
                // Another call added the key meanwhile (and charged it).
                self.refund(&pad.plugin, key_bytes);
            }
        }
        let ((state, total, id, _), confirmed) = answer;
        match state {
            1 => {
                let id = ReservationId(format!("r:{id}:{base}"));
                if !confirmed {
                    // Not on a replica: a failover could forget it and let it be spent
                    // again. Give it back (best effort: unreleased, it stays counted) and
                    // refuse.
                    let _ = self.settle_one(&id, false, false);
                    return Err(not_confirmed(
                        "the reservation",
                        self.pool.wait_replicas(),
                        self.pool.timeout,
                    ));
                }
                Ok(Reserved::Granted {
                    id,
                    total: total.max(0) as u64,
                })
            }
            0 => Ok(Reserved::OverLimit {
                spent: total.max(0) as u64,
            }),
            -2 | -3 => Err(self.over_quota(&pad.plugin, -state, total)),
            _ => Err(StateError::Full(format!(
                "at most {MAX_BUDGET_KEYS} budget keys per plugin and agent context"
            ))),
        }
    }

    fn spent(
        &self,
        pad: &PadKey,
        key: &str,
        window_seconds: u32,
        _now_ms: u64,
    ) -> Result<u64, StateError> {
        let base = self.keys.budget_base(pad, key, window_seconds);
        let buckets = format!("{base}:b");
        let total: i64 = self.pool.run(Route::Key(&buckets), |c| {
            self.scripts
                .spent
                .key(format!("{base}:b"))
                .key(format!("{base}:r"))
                .arg(u64::from(window_seconds) * 1000)
                .arg(width_ms(window_seconds))
                .invoke(c)
        })?;
        Ok(total.max(0) as u64)
    }

    fn settle(&self, ids: &[ReservationId], commit: bool) -> Result<(), StateError> {
        for id in ids {
            self.settle_one(id, commit, true)?;
        }
        Ok(())
    }

    fn bind(&self, ids: &[ReservationId], binding: &Binding) -> Result<(), StateError> {
        let text = binding_text(binding);
        for id in ids {
            let Some((number, base)) = split_id(id) else {
                continue;
            };
            let reservations = format!("{base}:r");
            let (bound, confirmed): (i64, bool) = self.pool.write(&reservations, |c| {
                self.scripts
                    .bind
                    .key(&reservations)
                    .key(self.keys.owned(&self.owner, base))
                    .arg(number)
                    .arg(&id.0[2..])
                    .arg(&text)
                    .invoke(c)
            })?;
            if bound == 0 {
                return Err(StateError::Unavailable(format!(
                    "budget reservation r:{number} is no longer held (its window passed, or this process went unseen for {} s and another settled it)",
                    self.alive_ms / 1000
                )));
            }
            if !confirmed {
                return Err(not_confirmed(
                    "the transaction's record",
                    self.pool.wait_replicas(),
                    self.pool.timeout,
                ));
            }
        }
        Ok(())
    }

    fn orphans(&self) -> Result<Vec<Orphan>, StateError> {
        self.find_orphans()
    }

    fn settle_orphan(&self, orphan: &Orphan, commit: bool) -> Result<bool, StateError> {
        self.settle_left(orphan, commit)
    }

    fn shared(&self) -> bool {
        true
    }

    fn describe(&self) -> String {
        format!("redis {}", self.topology.describe())
    }
}

impl Drop for RedisBackend {
    fn drop(&mut self) {
        // A clean stop: what this store still holds is an orphan for the others at once.
        let key = keys::alive(&self.owner);
        let _ = self.pool.run(Route::Key(&key), |c| {
            redis::cmd("DEL").arg(&key).query::<i64>(c)
        });
    }
}
