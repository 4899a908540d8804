//! The shared backend: Redis, so several `hak serve` replicas behind a load balancer hold one
//! budget. Connections are pooled (a handful of sync connections: a call takes one and gives
//! it back; written here because r2d2 would PING on every checkout and run a reaper thread,
//! and neither bounds connecting and answering by one deadline), every operation is bounded
//! by `[state] timeout_ms` (50 ms: a frozen server is unavailable, not a stall), and at start
//! the server must persist (`appendonly yes`) unless the manifest acknowledges otherwise. Each operation is one Lua script (Redis runs a script atomically), with the time
//! taken from the Redis server (`TIME`), so replicas with drifting clocks still agree on the
//! windows. Amounts are Lua numbers there: reservations above 2^53 base units are refused
//! (fail closed) rather than rounded.
//!
//! Key layout (`<s>`/`<p>`/`<k>` length-prefixed, so no two tuples share a key):
//! `hak:pad:<s><p>` (hash key → value) and `…:bytes` (the pad's size); `hak:budgets:<s><p>`
//! (the set of budget keys, capped); `hak:b:<s><p><k>:<window>:b` (committed amounts per
//! bucket) and `…:r` (unsettled reservations, `bucket:amount` by id), both expiring with
//! their window; `hak:reservation-ids` (the id counter).
//!
//! Processes that stop mid-call: each open store is an owner (a random id) that keeps
//! `hak:alive:<owner>` set (30 s expiry, renewed every 5 s) and lists its unsettled
//! reservations in `hak:owned:<owner>` (`<n>:<budget base>` → what its call sent: `0`
//! nothing, `1|<until ms>|<transaction id>`, `2` opaque). The reservations of an owner whose
//! `alive` key has expired are orphans for any replica's reconciler, settled by a script that
//! first checks the owner is still gone and the binding unchanged.

use super::window::width_ms;
use super::{
    Binding, Orphan, PadKey, ReservationId, Reserved, StateBackend, StateError, ENTRY_OVERHEAD,
    MAX_BUDGET_KEYS,
};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The largest amount a Lua number holds exactly.
const MAX_EXACT: u64 = 1 << 53;

pub struct RedisBackend {
    client: redis::Client,
    /// Connections not in use (a call takes one, or opens one, and gives it back): calls on
    /// several threads do not wait for each other.
    idle: Mutex<Vec<redis::Connection>>,
    url: String,
    scripts: Scripts,
    /// Each operation, connecting included, within this.
    timeout: Duration,
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

/// Bytes held per plugin (scratchpad entries and budget keys, every context), and in all.
const USAGE: &str = "hak:usage";
const USAGE_TOTAL: &str = "hak:usage:total";

fn alive_key(owner: &str) -> String {
    format!("hak:alive:{owner}")
}

fn owned_key(owner: &str) -> String {
    format!("hak:owned:{owner}")
}

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

/// Connections kept open for later calls.
const MAX_IDLE: usize = 32;

/// How the operator vouches for the server's persistence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Persistence {
    /// Check it at start (`CONFIG GET appendonly`): refuse a server that would forget budgets.
    Check,
    /// The operator vouches for it (a managed Redis that disables `CONFIG`, or a deliberate
    /// volatile store): not checked.
    Acknowledged,
}

struct Scripts {
    set: redis::Script,
    delete: redis::Script,
    reserve: redis::Script,
    spent: redis::Script,
    settle: redis::Script,
    bind: redis::Script,
    settle_orphan: redis::Script,
}

const PRUNE_AND_TOTAL: &str = r"
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function total(buckets, reservations, oldest)
  local sum = 0
  local b = redis.call('HGETALL', buckets)
  for i = 1, #b, 2 do
    if tonumber(b[i]) < oldest then redis.call('HDEL', buckets, b[i])
    else sum = sum + tonumber(b[i + 1]) end
  end
  local r = redis.call('HGETALL', reservations)
  for i = 1, #r, 2 do
    local bucket, amount = string.match(r[i + 1], '^(%d+):(%d+)$')
    if tonumber(bucket) < oldest then redis.call('HDEL', reservations, r[i])
    else sum = sum + tonumber(amount) end
  end
  return sum
end
";

impl Scripts {
    fn new() -> Self {
        let with_total = |body: &str| redis::Script::new(&format!("{PRUNE_AND_TOTAL}{body}"));
        Scripts {
            // KEYS: pad, bytes, usage, usage total. ARGV: key, value, cap, plugin, plugin
            // quota, total quota. Each entry counts ENTRY_OVERHEAD bytes beyond its key and
            // value.
            set: redis::Script::new(&format!(
                r"{CHARGE}
local old = redis.call('HGET', KEYS[1], ARGV[1])
local oldlen = 0
if old then oldlen = string.len(ARGV[1]) + string.len(old) + {ENTRY_OVERHEAD} end
local newlen = string.len(ARGV[1]) + string.len(ARGV[2]) + {ENTRY_OVERHEAD}
local total = math.max(0, tonumber(redis.call('GET', KEYS[2]) or '0') - oldlen) + newlen
if total > tonumber(ARGV[3]) then return {{0, total}} end
local refused, held = charge(KEYS[3], KEYS[4], ARGV[4], newlen - oldlen, ARGV[5], ARGV[6])
if refused then return {{refused, held}} end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('SET', KEYS[2], total)
return {{1, total}}
"
            )),
            // KEYS: pad, bytes, usage, usage total. ARGV: key, plugin.
            delete: redis::Script::new(&format!(
                r"{CHARGE}
local old = redis.call('HGET', KEYS[1], ARGV[1])
if old then
  redis.call('HDEL', KEYS[1], ARGV[1])
  local freed = string.len(ARGV[1]) + string.len(old) + {ENTRY_OVERHEAD}
  local left = redis.call('DECRBY', KEYS[2], freed)
  if left < 0 then redis.call('SET', KEYS[2], 0) end
  charge(KEYS[3], KEYS[4], ARGV[2], -freed, 0, 0)
end
return 1
"
            )),
            // KEYS: buckets, reservations, budget set, id counter, owner's list, usage,
            // usage total. ARGV: amount, limit, window ms, bucket width ms, budget name, max
            // budget keys, budget base, plugin, plugin quota, total quota, a new key's bytes.
            reserve: with_total(&format!(
                r"{CHARGE}
local now = now_ms()
local width = tonumber(ARGV[4])
local oldest = math.floor((now - tonumber(ARGV[3])) / width)
if redis.call('SISMEMBER', KEYS[3], ARGV[5]) == 0 then
  if redis.call('SCARD', KEYS[3]) >= tonumber(ARGV[6]) then return {{-1, 0, 0}} end
  local refused, held = charge(KEYS[6], KEYS[7], ARGV[8], tonumber(ARGV[11]), ARGV[9], ARGV[10])
  if refused then return {{-refused, held, 0}} end
  redis.call('SADD', KEYS[3], ARGV[5])
end
local sum = total(KEYS[1], KEYS[2], oldest)
local amount = tonumber(ARGV[1])
if sum + amount > tonumber(ARGV[2]) then return {{0, sum, 0}} end
local id = redis.call('INCR', KEYS[4])
redis.call('HSET', KEYS[2], id, math.floor(now / width) .. ':' .. ARGV[1])
redis.call('HSET', KEYS[5], id .. ':' .. ARGV[7], '0')
local keep = tonumber(ARGV[3]) + 2 * width
redis.call('PEXPIRE', KEYS[1], keep)
redis.call('PEXPIRE', KEYS[2], keep)
return {{1, sum + amount, id}}
"
            )),
            // KEYS: buckets, reservations. ARGV: window ms, bucket width ms.
            spent: with_total(
                r"
local oldest = math.floor((now_ms() - tonumber(ARGV[1])) / tonumber(ARGV[2]))
return total(KEYS[1], KEYS[2], oldest)
",
            ),
            // KEYS: buckets, reservations, owner's list. ARGV: id, commit (1/0), owned field.
            settle: redis::Script::new(&format!("{SETTLE}return settle()")),
            // KEYS: reservations, owner's list. ARGV: id, owned field, binding.
            bind: redis::Script::new(
                r"
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 or redis.call('HEXISTS', KEYS[2], ARGV[2]) == 0 then
  return 0
end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
return 1
",
            ),
            // KEYS: buckets, reservations, owner's list, owner's alive key.
            // ARGV: id, commit (1/0), owned field, binding as listed.
            settle_orphan: redis::Script::new(&format!(
                r"{SETTLE}
if redis.call('EXISTS', KEYS[4]) == 1 then return 0 end
if redis.call('HGET', KEYS[3], ARGV[3]) ~= ARGV[4] then return 0 end
return settle()
"
            )),
        }
    }
}

/// Hold `delta` more bytes for `plugin` in the `usage` hash and the `total` key; growth past
/// `quota` (the plugin's) or `total_quota` is refused: `2, held` or `3, held in all`.
const CHARGE: &str = r"
local function charge(usage, total, plugin, delta, quota, total_quota)
  if delta > 0 then
    local used = tonumber(redis.call('HGET', usage, plugin) or '0')
    if used + delta > tonumber(quota) then return 2, used end
    local all = tonumber(redis.call('GET', total) or '0')
    if all + delta > tonumber(total_quota) then return 3, all end
  end
  if redis.call('HINCRBY', usage, plugin, delta) < 0 then redis.call('HSET', usage, plugin, 0) end
  if redis.call('INCRBY', total, delta) < 0 then redis.call('SET', total, 0) end
  return nil, 0
end
";

/// Settle reservation ARGV[1] of KEYS[2] into KEYS[1] (commit when ARGV[2] is `1`) and take
/// it off its owner's list (KEYS[3], field ARGV[3]).
const SETTLE: &str = r"
local function settle()
  redis.call('HDEL', KEYS[3], ARGV[3])
  local entry = redis.call('HGET', KEYS[2], ARGV[1])
  if not entry then return 0 end
  redis.call('HDEL', KEYS[2], ARGV[1])
  if ARGV[2] == '1' then
    local bucket, amount = string.match(entry, '^(%d+):(%d+)$')
    redis.call('HINCRBY', KEYS[1], bucket, amount)
  end
  return 1
end
";

/// `<len>:<text>`: a component of a key no other tuple can produce.
fn part(text: &str) -> String {
    format!("{}:{text}", text.len())
}

fn pad_base(pad: &PadKey) -> String {
    format!("{}{}", part(&pad.scope), part(&pad.plugin))
}

fn budget_base(pad: &PadKey, key: &str, window: u32) -> String {
    format!("hak:b:{}{}:{window}", pad_base(pad), part(key))
}

fn unavailable(e: redis::RedisError) -> StateError {
    StateError::Unavailable(e.to_string())
}

fn timed_out(timeout: Duration) -> StateError {
    StateError::Unavailable(format!(
        "redis did not answer within {} ms",
        timeout.as_millis()
    ))
}

impl RedisBackend {
    /// Connect to `url` (`redis://127.0.0.1:6379/0`), check that it answers and, unless
    /// `persistence` is acknowledged, that it keeps what it is told across a restart. Each
    /// later operation is bounded by `timeout`: past it the store is unavailable (the policy
    /// blocks) and the call goes on within the plugin's deadline.
    pub fn open(
        url: &str,
        timeout: Duration,
        persistence: Persistence,
        quota: super::Quota,
        presumed_stopped: Duration,
    ) -> Result<Self, String> {
        use redis::IntoConnectionInfo;
        let info = url
            .into_connection_info()
            .map_err(|e| format!("state.url {url:?}: {e}"))?;
        // No CLIENT SETINFO at connect: its answers are ignored, so each would wait out the
        // read timeout on a frozen server and connecting would take twice the bound.
        let settings = info.redis_settings().clone().set_skip_set_lib_name();
        let info = info.set_redis_settings(settings);
        let client = redis::Client::open(info).map_err(|e| format!("state.url {url:?}: {e}"))?;
        let owner = {
            let mut bytes = [0u8; 16];
            rand_core::RngCore::fill_bytes(&mut rand_core::OsRng, &mut bytes);
            hex::encode(bytes)
        };
        let alive = Arc::new(());
        let backend = RedisBackend {
            client,
            idle: Mutex::new(Vec::new()),
            url: url.to_owned(),
            scripts: Scripts::new(),
            timeout,
            owner,
            _alive: alive.clone(),
            alive_ms: presumed_stopped.as_millis() as u64,
            quota,
        };
        // The first answer may take longer than a call's bound (a server just started).
        let started = backend.with_conn_within(Duration::from_secs(2), |c| {
            redis::cmd("PING").query::<String>(c)
        });
        started.map_err(|e| format!("state.url {url:?}: {e}"))?;
        if persistence == Persistence::Check {
            backend.check_persistence()?;
        }
        backend
            .say_alive()
            .map_err(|e| format!("state.url {url:?}: {e}"))?;
        backend.spawn_heartbeat(Arc::downgrade(&alive));
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

    fn say_alive(&self) -> Result<(), StateError> {
        let key = alive_key(&self.owner);
        self.with_conn(|c| {
            redis::cmd("SET")
                .arg(&key)
                .arg("1")
                .arg("PX")
                .arg(self.alive_ms)
                .query::<()>(c)
        })
    }

    /// Renew the `alive` key every sixth of its life while the store is open, on a
    /// connection of its own.
    fn spawn_heartbeat(&self, open: std::sync::Weak<()>) {
        let (client, key, timeout) = (self.client.clone(), alive_key(&self.owner), self.timeout);
        let (alive_ms, every) = (self.alive_ms, Duration::from_millis(self.alive_ms / 6));
        let _ = std::thread::Builder::new()
            .name("hak-redis-alive".into())
            .spawn(move || {
                let mut conn: Option<redis::Connection> = None;
                loop {
                    std::thread::sleep(every);
                    if open.strong_count() == 0 {
                        return;
                    }
                    let bound = timeout.max(Duration::from_secs(1));
                    if conn.is_none() {
                        conn = client.get_connection_with_timeout(bound).ok();
                    }
                    let Some(c) = conn.as_mut() else { continue };
                    let _ = c.set_read_timeout(Some(bound));
                    let _ = c.set_write_timeout(Some(bound));
                    let renewed = redis::cmd("SET")
                        .arg(&key)
                        .arg("1")
                        .arg("PX")
                        .arg(alive_ms)
                        .query::<()>(c);
                    if let Err(e) = renewed {
                        tracing::warn!("state store: cannot say this process is alive: {e}");
                        conn = None;
                    }
                }
            });
    }

    /// Refuse a server that forgets budgets when it restarts: without the append-only file a
    /// restart loses every spend since the last snapshot (all of them without snapshots).
    fn check_persistence(&self) -> Result<(), String> {
        let url = &self.url;
        let answer = self.with_conn_within(Duration::from_secs(2), |c| {
            redis::cmd("CONFIG")
                .arg("GET")
                .arg("appendonly")
                .query::<Vec<String>>(c)
        });
        let values = answer.map_err(|e| {
            format!(
                "state.url {url:?}: cannot check that the server persists budgets (CONFIG GET appendonly: {e}); a managed Redis often refuses CONFIG: if it persists (append-only file on), say so with [state] redis_persistence = \"acknowledged\""
            )
        })?;
        match values.get(1).map(String::as_str) {
            Some("yes") => Ok(()),
            other => Err(format!(
                "state.url {url:?}: the server runs with appendonly {}: a restart would forget the budgets spent since its last snapshot (all of them without snapshots) and let them be spent again. Turn the append-only file on (appendonly yes, appendfsync everysec or always), or, to run without it knowingly, set [state] redis_persistence = \"acknowledged\"",
                other.unwrap_or("(no answer)")
            )),
        }
    }

    fn with_conn<T>(
        &self,
        op: impl Fn(&mut redis::Connection) -> redis::RedisResult<T>,
    ) -> Result<T, StateError> {
        self.with_conn_within(self.timeout, op)
    }

    /// Run `op` on an idle connection (or a new one), connecting and answering within
    /// `timeout` in all; a connection that broke is replaced once while time is left. A
    /// connection that timed out is dropped (its answer may still come).
    fn with_conn_within<T>(
        &self,
        timeout: Duration,
        op: impl Fn(&mut redis::Connection) -> redis::RedisResult<T>,
    ) -> Result<T, StateError> {
        let deadline = Instant::now() + timeout;
        let left = || deadline.saturating_duration_since(Instant::now());
        for attempt in 0..2 {
            let idle = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
            let mut conn = match idle {
                Some(conn) => conn,
                None => {
                    if left().is_zero() {
                        return Err(timed_out(timeout));
                    }
                    self.client
                        .get_connection_with_timeout(left())
                        .map_err(|e| {
                            if e.is_timeout() {
                                timed_out(timeout)
                            } else {
                                unavailable(e)
                            }
                        })?
                }
            };
            let remaining = left();
            if remaining.is_zero() {
                return Err(timed_out(timeout));
            }
            conn.set_read_timeout(Some(remaining))
                .and_then(|()| conn.set_write_timeout(Some(remaining)))
                .map_err(unavailable)?;
            match op(&mut conn) {
                Ok(v) => {
                    let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
                    if idle.len() < MAX_IDLE {
                        idle.push(conn);
                    }
                    return Ok(v);
                }
                Err(e) if e.is_timeout() => return Err(timed_out(timeout)),
                Err(e) if attempt == 0 && (e.is_io_error() || e.is_connection_dropped()) => {
                    // The server went away: the other idle connections are as stale.
                    self.idle.lock().unwrap_or_else(|e| e.into_inner()).clear();
                    continue;
                }
                Err(e) => {
                    if !e.is_io_error() && !e.is_connection_dropped() {
                        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
                        if idle.len() < MAX_IDLE {
                            idle.push(conn);
                        }
                    }
                    return Err(unavailable(e));
                }
            }
        }
        Err(StateError::Unavailable("redis connection lost".into()))
    }
}

impl StateBackend for RedisBackend {
    fn get(&self, pad: &PadKey, key: &str) -> Result<Option<String>, StateError> {
        let hash = format!("hak:pad:{}", pad_base(pad));
        self.with_conn(|c| redis::cmd("HGET").arg(&hash).arg(key).query(c))
    }

    fn set(&self, pad: &PadKey, key: &str, value: &str, cap: usize) -> Result<(), StateError> {
        let hash = format!("hak:pad:{}", pad_base(pad));
        let bytes = format!("{hash}:bytes");
        let (ok, total): (i64, i64) = self.with_conn(|c| {
            self.scripts
                .set
                .key(&hash)
                .key(&bytes)
                .key(USAGE)
                .key(USAGE_TOTAL)
                .arg(key)
                .arg(value)
                .arg(cap)
                .arg(&*pad.plugin)
                .arg(self.quota.plugin_bytes)
                .arg(self.quota.total_bytes)
                .invoke(c)
        })?;
        match ok {
            1 => Ok(()),
            0 => Err(StateError::Full(format!(
                "state limit of {cap} bytes exceeded (would be {total})"
            ))),
            refused => Err(self.over_quota(&pad.plugin, refused, total)),
        }
    }

    fn delete(&self, pad: &PadKey, key: &str) -> Result<(), StateError> {
        let hash = format!("hak:pad:{}", pad_base(pad));
        let bytes = format!("{hash}:bytes");
        self.with_conn(|c| {
            self.scripts
                .delete
                .key(&hash)
                .key(&bytes)
                .key(USAGE)
                .key(USAGE_TOTAL)
                .arg(key)
                .arg(&*pad.plugin)
                .invoke::<i64>(c)
        })
        .map(drop)
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
        let base = budget_base(pad, key, window_seconds);
        let set = format!("hak:budgets:{}", pad_base(pad));
        let name = format!("{}:{window_seconds}", part(key));
        let (state, total, id): (i64, i64, i64) = self.with_conn(|c| {
            self.scripts
                .reserve
                .key(format!("{base}:b"))
                .key(format!("{base}:r"))
                .key(&set)
                .key("hak:reservation-ids")
                .key(owned_key(&self.owner))
                .key(USAGE)
                .key(USAGE_TOTAL)
                .arg(amount)
                .arg(limit.min(MAX_EXACT))
                .arg(u64::from(window_seconds) * 1000)
                .arg(width_ms(window_seconds))
                .arg(&name)
                .arg(MAX_BUDGET_KEYS)
                .arg(&base)
                .arg(&*pad.plugin)
                .arg(self.quota.plugin_bytes)
                .arg(self.quota.total_bytes)
                .arg(key.len() + ENTRY_OVERHEAD)
                .invoke(c)
        })?;
        match state {
            1 => Ok(Reserved::Granted {
                id: ReservationId(format!("r:{id}:{base}")),
                total: total.max(0) as u64,
            }),
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
        let base = budget_base(pad, key, window_seconds);
        let total: i64 = self.with_conn(|c| {
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
            let Some((number, base)) = id.0.strip_prefix("r:").and_then(|r| r.split_once(':'))
            else {
                continue;
            };
            self.with_conn(|c| {
                self.scripts
                    .settle
                    .key(format!("{base}:b"))
                    .key(format!("{base}:r"))
                    .key(owned_key(&self.owner))
                    .arg(number)
                    .arg(if commit { "1" } else { "0" })
                    .arg(&id.0[2..])
                    .invoke::<i64>(c)
            })?;
        }
        Ok(())
    }

    fn bind(&self, ids: &[ReservationId], binding: &Binding) -> Result<(), StateError> {
        let text = binding_text(binding);
        for id in ids {
            let Some((number, base)) = id.0.strip_prefix("r:").and_then(|r| r.split_once(':'))
            else {
                continue;
            };
            let bound: i64 = self.with_conn(|c| {
                self.scripts
                    .bind
                    .key(format!("{base}:r"))
                    .key(owned_key(&self.owner))
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
        }
        Ok(())
    }

    fn orphans(&self) -> Result<Vec<Orphan>, StateError> {
        // The owners' lists (a few per replica ever started: each empties as it settles).
        // SCAN walks the whole keyspace: a background pass, bounded by more than one call's
        // operation timeout.
        let lists: Vec<String> = self.with_conn_within(self.timeout.max(SCAN_BOUND), |c| {
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
        })?;
        let mut orphans = Vec::new();
        for list in lists {
            let owner = list.trim_start_matches("hak:owned:").to_owned();
            if owner == self.owner {
                continue;
            }
            let (alive, entries): (bool, Vec<(String, String)>) = self.with_conn(|c| {
                redis::pipe()
                    .cmd("EXISTS")
                    .arg(alive_key(&owner))
                    .cmd("HGETALL")
                    .arg(&list)
                    .query(c)
            })?;
            if alive {
                continue;
            }
            for (field, binding) in entries {
                let Some((number, base)) = field.split_once(':') else {
                    continue;
                };
                let entry: Option<String> = self.with_conn(|c| {
                    redis::cmd("HGET")
                        .arg(format!("{base}:r"))
                        .arg(number)
                        .query(c)
                })?;
                let Some(amount) = entry
                    .as_deref()
                    .and_then(|e| e.split_once(':'))
                    .and_then(|(_, a)| a.parse().ok())
                else {
                    // Settled or out of its window already: only the listing was left.
                    let _: i64 =
                        self.with_conn(|c| redis::cmd("HDEL").arg(&list).arg(&field).query(c))?;
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

    fn settle_orphan(&self, orphan: &Orphan, commit: bool) -> Result<bool, StateError> {
        let Some((number, base)) = orphan
            .id
            .0
            .strip_prefix("r:")
            .and_then(|r| r.split_once(':'))
        else {
            return Ok(false);
        };
        let settled: i64 = self.with_conn(|c| {
            self.scripts
                .settle_orphan
                .key(format!("{base}:b"))
                .key(format!("{base}:r"))
                .key(owned_key(&orphan.owner))
                .key(alive_key(&orphan.owner))
                .arg(number)
                .arg(if commit { "1" } else { "0" })
                .arg(&orphan.id.0[2..])
                .arg(binding_text(&orphan.binding))
                .invoke(c)
        })?;
        Ok(settled == 1)
    }

    fn shared(&self) -> bool {
        true
    }

    fn describe(&self) -> String {
        format!("redis {}", self.url)
    }
}

impl Drop for RedisBackend {
    fn drop(&mut self) {
        // A clean stop: what this store still holds is an orphan for the others at once.
        let key = alive_key(&self.owner);
        let _ = self.with_conn(|c| redis::cmd("DEL").arg(&key).query::<i64>(c));
    }
}
