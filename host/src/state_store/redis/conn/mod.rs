//! Where the Redis backend's commands go, and how long they may take: one server (`url`), the
//! primary that Sentinel names (`sentinel` + `service`), or the primary of a key's hash slot
//! in a cluster (`cluster`, seed nodes; the rest discovered). Connections are pooled per
//! server (a call takes one, or opens one, and gives it back: calls on several threads do
//! not wait for each other); every operation, connecting included, is bounded by one
//! deadline; a connection that failed is dropped, and on a failover the next one follows
//! the new primary. After a write, `WAIT` asks that the replicas have it ([`Pool::write`]).
//!
//! Hand-written beside the redis crate's clients, because none bounds connecting, routing
//! and answering by one deadline over a pool: r2d2 would PING on every checkout and run a
//! reaper thread; the crate's Sentinel client asks the sentinels without a timeout (a frozen
//! sentinel would stall a call); its synchronous cluster connection is one object per
//! thread that connects to every node when it opens (64 concurrent calls opened 64 × 6
//! connections and missed the plugins' deadline) and retries with sleeps of its own. Here
//! a cluster is a slot table (`CLUSTER SLOTS`, refreshed on `MOVED` or a failed node) over
//! per-node pools of plain connections; `ASK` is followed once. What must not live here:
//! key names and scripts.

use crate::state_store::StateError;
use std::collections::HashMap;
use std::sync::{Mutex, RwLock};
use std::time::{Duration, Instant};

mod sentinel;
mod slots;

/// Which Redis deployment, as the manifest names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Topology {
    /// One server.
    Single { url: String },
    /// A primary with replicas, found through these sentinels under `service`. The primary
    /// is reached with the first sentinel URL's database, username and password.
    Sentinel {
        sentinels: Vec<String>,
        service: String,
    },
    /// A Redis Cluster, from these seed nodes.
    Cluster { seeds: Vec<String> },
}

impl Topology {
    /// For logs and errors: `redis://…`, `sentinel NAME via …`, `cluster via …`.
    pub fn describe(&self) -> String {
        match self {
            Topology::Single { url } => url.clone(),
            Topology::Sentinel { sentinels, service } => {
                format!("sentinel {service:?} via {}", sentinels.join(", "))
            }
            Topology::Cluster { seeds } => format!("cluster via {}", seeds.join(", ")),
        }
    }
}

/// Which server an operation goes to.
#[derive(Clone, Copy, Debug)]
pub(super) enum Route<'a> {
    /// The one holding this key (on a cluster: its slot's primary).
    Key(&'a str),
    /// This primary (`host:port`, from [`Pool::primaries`]; `""` on one server).
    Node(&'a str),
}

/// A key's hash slot (CRC16/XMODEM of its hash tag, or of the key without one, mod 16384).
pub(super) fn slot(key: &str) -> u16 {
    let bytes = key.as_bytes();
    let tagged = bytes.iter().position(|&b| b == b'{').and_then(|open| {
        let close = bytes[open + 1..].iter().position(|&b| b == b'}')?;
        (close > 0).then(|| &bytes[open + 1..open + 1 + close])
    });
    crc16::State::<crc16::XMODEM>::calculate(tagged.unwrap_or(bytes)) % 16384
}

/// Connections not in use, by server (`""`: the one server, or Sentinel's primary).
type Idle = Mutex<HashMap<String, Vec<redis::Connection>>>;

/// A cluster's slot table: which primary serves each slot range, and which replicas it
/// lists.
#[derive(Default)]
struct Table {
    /// `(first slot, last slot, primary host:port)`, sorted.
    ranges: Vec<(u16, u16, String)>,
    /// Bumped on each refresh, so that threads that saw one failure refresh once.
    epoch: u64,
}

enum Target {
    Single(redis::Client),
    Sentinel {
        sentinels: Vec<redis::Client>,
        service: String,
        /// The database, username and password the primary is reached with.
        node: redis::RedisConnectionInfo,
        /// The primary last found (until a connection to it fails).
        primary: Mutex<Option<redis::Client>>,
    },
    Cluster {
        seeds: Vec<String>,
        /// The database, username and password every node is reached with.
        node: redis::RedisConnectionInfo,
        table: RwLock<Table>,
        /// Held while the table is refreshed (one thread asks; the others use its answer).
        refreshing: Mutex<()>,
    },
}

pub(super) struct Pool {
    target: Target,
    idle: Idle,
    /// Each operation, connecting included, within this.
    pub timeout: Duration,
    /// Replicas that must have a write before it counts (`WAIT`); 0: none asked.
    wait_replicas: u32,
}

/// Connections kept open per server for later calls.
const MAX_IDLE: usize = 32;

pub(super) fn unavailable(e: redis::RedisError) -> StateError {
    StateError::Unavailable(e.to_string())
}

pub(super) fn timed_out(timeout: Duration) -> StateError {
    StateError::Unavailable(format!(
        "redis did not answer within {} ms",
        timeout.as_millis()
    ))
}

/// No `CLIENT SETINFO` at connect: its answers are ignored, so each would wait out the read
/// timeout on a frozen server and connecting would take twice the bound.
fn info_of(url: &str) -> Result<redis::ConnectionInfo, String> {
    use redis::IntoConnectionInfo;
    let info = url
        .into_connection_info()
        .map_err(|e| format!("{url:?}: {e}"))?;
    let settings = info.redis_settings().clone().set_skip_set_lib_name();
    Ok(info.set_redis_settings(settings))
}

/// A client for `host:port` with `node`'s database and credentials.
fn client_for(addr: &str, node: &redis::RedisConnectionInfo) -> redis::RedisResult<redis::Client> {
    let (host, port) = addr.rsplit_once(':').unwrap_or((addr, "6379"));
    let port = port.parse().unwrap_or(6379);
    let info = redis::IntoConnectionInfo::into_connection_info(redis::ConnectionAddr::Tcp(
        host.to_owned(),
        port,
    ))?
    .set_redis_settings(node.clone().set_skip_set_lib_name());
    redis::Client::open(info)
}

/// An error after which the connection (and the others to its server, and a sentinel's
/// primary) must not be used again: it broke, or its server is no longer the primary of
/// what was asked.
fn stale(e: &redis::RedisError) -> bool {
    use redis::{ErrorKind, ServerErrorKind};
    e.is_io_error()
        || e.is_connection_dropped()
        || e.is_connection_refusal()
        || matches!(
            e.kind(),
            ErrorKind::Server(
                ServerErrorKind::ReadOnly
                    | ServerErrorKind::ClusterDown
                    | ServerErrorKind::MasterDown
                    | ServerErrorKind::TryAgain
                    | ServerErrorKind::Moved
            )
        )
}

impl Pool {
    pub fn open(
        topology: &Topology,
        timeout: Duration,
        wait_replicas: u32,
    ) -> Result<Self, String> {
        let target = match topology {
            Topology::Single { url } => Target::Single(
                redis::Client::open(info_of(url)?).map_err(|e| format!("{url:?}: {e}"))?,
            ),
            Topology::Sentinel { sentinels, service } => {
                let clients = sentinels
                    .iter()
                    .map(|url| {
                        redis::Client::open(info_of(url)?).map_err(|e| format!("{url:?}: {e}"))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                let node = match sentinels.first() {
                    Some(url) => info_of(url)?.redis_settings().clone(),
                    None => redis::RedisConnectionInfo::default(),
                };
                Target::Sentinel {
                    sentinels: clients,
                    service: service.clone(),
                    node,
                    primary: Mutex::new(None),
                }
            }
            Topology::Cluster { seeds } => {
                let mut addrs = Vec::new();
                let mut node = None;
                for url in seeds {
                    let info = info_of(url)?;
                    match info.addr() {
                        redis::ConnectionAddr::Tcp(host, port) => {
                            addrs.push(format!("{host}:{port}"))
                        }
                        _ => return Err(format!("{url:?}: a cluster node is host:port over TCP")),
                    }
                    node.get_or_insert_with(|| info.redis_settings().clone());
                }
                Target::Cluster {
                    seeds: addrs,
                    node: node.unwrap_or_default(),
                    table: RwLock::new(Table::default()),
                    refreshing: Mutex::new(()),
                }
            }
        };
        Ok(Pool {
            target,
            idle: Mutex::new(HashMap::new()),
            timeout,
            wait_replicas,
        })
    }

    pub fn wait_replicas(&self) -> u32 {
        self.wait_replicas
    }

    pub fn is_cluster(&self) -> bool {
        matches!(self.target, Target::Cluster { .. })
    }

    /// An idle connection to `addr`, or a new one within `left`.
    fn take(
        &self,
        addr: &str,
        left: Duration,
        timeout: Duration,
    ) -> Result<redis::Connection, StateError> {
        let idle = self
            .idle
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_mut(addr)
            .and_then(Vec::pop);
        if let Some(conn) = idle {
            return Ok(conn);
        }
        if left.is_zero() {
            return Err(timed_out(timeout));
        }
        let client = match &self.target {
            Target::Single(client) => client.clone(),
            Target::Sentinel { primary, .. } => {
                let known = primary.lock().unwrap_or_else(|e| e.into_inner()).clone();
                match known {
                    Some(client) => client,
                    None => {
                        let found = self.find_primary(Instant::now() + left)?;
                        *primary.lock().unwrap_or_else(|e| e.into_inner()) = Some(found.clone());
                        found
                    }
                }
            }
            Target::Cluster { node, .. } => client_for(addr, node).map_err(unavailable)?,
        };
        let left = left.max(Duration::from_millis(1));
        client.get_connection_with_timeout(left).map_err(|e| {
            if e.is_timeout() {
                timed_out(timeout)
            } else {
                unavailable(e)
            }
        })
    }

    fn give_back(&self, addr: &str, conn: redis::Connection) {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        // The server's name is allocated once, not on every operation.
        match idle.get_mut(addr) {
            Some(list) if list.len() < MAX_IDLE => list.push(conn),
            Some(_) => {}
            None => {
                idle.insert(addr.to_owned(), vec![conn]);
            }
        }
    }

    /// Forget the idle connections to `addr` (and the primary a sentinel named): they reach
    /// a server that failed or stepped down.
    fn forget(&self, addr: &str) {
        self.idle
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(addr);
        if let Target::Sentinel { primary, .. } = &self.target {
            *primary.lock().unwrap_or_else(|e| e.into_inner()) = None;
        }
    }

    pub fn run<T>(
        &self,
        route: Route,
        op: impl Fn(&mut redis::Connection) -> redis::RedisResult<T>,
    ) -> Result<T, StateError> {
        self.run_within(self.timeout, route, op)
    }

    /// Run `op` on an idle connection to the server `route` names (or a new one),
    /// connecting and answering within `timeout` in all. A connection that broke is
    /// replaced, a `MOVED` slot looked up again and an `ASK` followed, while time is left.
    /// A connection that timed out is dropped (its answer may still come).
    pub fn run_within<T>(
        &self,
        timeout: Duration,
        route: Route,
        op: impl Fn(&mut redis::Connection) -> redis::RedisResult<T>,
    ) -> Result<T, StateError> {
        let deadline = Instant::now() + timeout;
        let left = || deadline.saturating_duration_since(Instant::now());
        let mut asked_at: Option<String> = None;
        let mut last = None;
        for _ in 0..3 {
            let (addr, epoch, asking) = match asked_at.take() {
                Some(addr) => (addr, 0, true),
                None => {
                    let (addr, epoch) = self.address(route, deadline)?;
                    (addr, epoch, false)
                }
            };
            let mut conn = match self.take(&addr, left(), timeout) {
                Ok(conn) => conn,
                Err(e) => {
                    self.forget(&addr);
                    if self.is_cluster() && !left().is_zero() {
                        // A node that is gone: the slots may have a new primary.
                        let _ = self.refresh(epoch, deadline);
                        last = Some(e);
                        continue;
                    }
                    return Err(e);
                }
            };
            let remaining = left();
            if remaining.is_zero() {
                return Err(timed_out(timeout));
            }
            conn.set_read_timeout(Some(remaining))
                .and_then(|()| conn.set_write_timeout(Some(remaining)))
                .map_err(unavailable)?;
            let answer = if asking {
                redis::cmd("ASKING")
                    .query::<()>(&mut conn)
                    .and_then(|()| op(&mut conn))
            } else {
                op(&mut conn)
            };
            match answer {
                Ok(v) => {
                    self.give_back(&addr, conn);
                    return Ok(v);
                }
                Err(e) if e.is_timeout() => return Err(timed_out(timeout)),
                Err(e) if e.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::Ask) => {
                    // The slot is moving: this one command goes to the new node.
                    self.give_back(&addr, conn);
                    match e.redirect_node() {
                        Some((to, _)) => asked_at = Some(to.to_owned()),
                        None => return Err(unavailable(e)),
                    }
                }
                Err(e) if stale(&e) => {
                    // Gone, stepped down, or the slot moved: the other idle connections
                    // there are as stale.
                    self.forget(&addr);
                    if self.is_cluster() {
                        let _ = self.refresh(epoch, deadline);
                    }
                    last = Some(unavailable(e));
                    if left().is_zero() {
                        break;
                    }
                }
                Err(e) => {
                    self.give_back(&addr, conn);
                    return Err(unavailable(e));
                }
            }
        }
        Err(last.unwrap_or_else(|| StateError::Unavailable("redis connection lost".into())))
    }

    /// Run a write, then (when replicas are asked for) `WAIT` on the same connection for
    /// that many replicas of its server, within what is left of the operation's bound.
    /// Returns the write's answer and whether the replicas have it: a write they do not
    /// have may be lost on a failover, so the caller must not count it as done.
    pub fn write<T>(
        &self,
        key: &str,
        op: impl Fn(&mut redis::Connection) -> redis::RedisResult<T>,
    ) -> Result<(T, bool), StateError> {
        let deadline = Instant::now() + self.timeout;
        self.run(Route::Key(key), |c| {
            let value = op(c)?;
            if self.wait_replicas == 0 {
                return Ok((value, true));
            }
            // What is left, less a fifth (at least 5 ms) for the answer to come back
            // within the connection's read timeout (`WAIT 0` would block for ever).
            let left = deadline
                .saturating_duration_since(Instant::now())
                .as_millis() as u64;
            let ms = left.saturating_sub((left / 5).max(5)).max(1);
            let acked: i64 = redis::cmd("WAIT")
                .arg(self.wait_replicas)
                .arg(ms)
                .query(c)?;
            Ok((value, acked >= i64::from(self.wait_replicas)))
        })
    }

    /// The primaries' addresses (`host:port`) of a cluster, from its slot table; `[""]` (the
    /// connection's own server) otherwise.
    pub fn primaries(&self) -> Result<Vec<String>, StateError> {
        let Target::Cluster { table, .. } = &self.target else {
            return Ok(vec![String::new()]);
        };
        let deadline = Instant::now() + self.timeout.max(Duration::from_secs(2));
        let epoch = table.read().unwrap_or_else(|e| e.into_inner()).epoch;
        self.refresh(epoch, deadline)?;
        let mut addrs: Vec<String> = table
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .ranges
            .iter()
            .map(|(_, _, addr)| addr.clone())
            .collect();
        addrs.sort();
        addrs.dedup();
        Ok(addrs)
    }

    /// How many replicas each primary has connected (`INFO replication`), by address.
    pub fn replicas_of_primaries(&self) -> Result<Vec<(String, u32)>, StateError> {
        let mut out = Vec::new();
        for addr in self.primaries()? {
            let info: String = self.run_within(
                self.timeout.max(Duration::from_secs(2)),
                Route::Node(&addr),
                |c| redis::cmd("INFO").arg("replication").query(c),
            )?;
            let replicas = info
                .lines()
                .find_map(|l| l.trim().strip_prefix("connected_slaves:"))
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
            out.push((addr, replicas));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::slot;

    #[test]
    fn slots_are_redis_own() {
        // From the Redis Cluster specification's examples and `CLUSTER KEYSLOT`.
        assert_eq!(slot("123456789"), 12739);
        assert_eq!(slot("foo"), 12182);
        assert_eq!(slot("{user1000}.following"), slot("user1000"));
        assert_eq!(slot("foo{}{bar}"), slot("foo{}{bar}"));
        assert_eq!(slot("{}bar"), slot("{}bar"));
    }
}
