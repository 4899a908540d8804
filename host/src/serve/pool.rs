//! The sessions of `hak serve`: one per agent context per concurrent caller, kept while idle
//! so the next call of that context reuses its plugin instances — but bounded. Idle sessions
//! are evicted (oldest first) past an idle timeout and whenever keeping them would pass the
//! pool's size: what the instance allocator has room for beside the calls in flight, and
//! what the idle instances' memory limits may add up to (`[server] idle_memory_mib`). A new
//! context never fails for lack of room; it makes room.

use crate::host::Host;
use crate::lifecycle::Session;
use crate::model::context::AgentContext;
use crate::model::limits::POOL_INSTANCES;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Idle sessions hak keeps at most, whatever the plugins.
const MAX_IDLE: usize = 4096;

pub struct SessionPool {
    host: Host,
    idle: Mutex<Idle>,
    idle_timeout: Duration,
    idle_memory_bytes: u64,
    max_concurrent: usize,
    /// Idle sessions dropped to make room or for being idle too long.
    pub evicted: AtomicU64,
}

struct Idle {
    /// Keyed by the context itself, no key text made per call; foldhash (seeded per process)
    /// rather than SipHash: an account id hashes as several words, twice per call.
    by_scope: HashMap<AgentContext, Vec<(Session, Instant)>, foldhash::fast::RandomState>,
    count: usize,
    last_sweep: Instant,
    /// (chain version, the idle-session cap for it)
    cap: (u64, usize),
}

impl SessionPool {
    pub fn new(
        host: Host,
        idle_timeout: Duration,
        idle_memory_mib: u64,
        max_concurrent: usize,
    ) -> Self {
        SessionPool {
            host,
            idle: Mutex::new(Idle {
                by_scope: HashMap::default(),
                count: 0,
                last_sweep: Instant::now(),
                cap: (0, 0),
            }),
            idle_timeout,
            idle_memory_bytes: idle_memory_mib * 1024 * 1024,
            max_concurrent,
            evicted: AtomicU64::new(0),
        }
    }

    pub fn host(&self) -> &Host {
        &self.host
    }

    /// An idle session of `context`, or a new one.
    pub fn take(&self, context: AgentContext) -> Session {
        let pooled = {
            let mut idle = self.lock();
            let found = idle.by_scope.get_mut(&context).and_then(Vec::pop);
            if found.is_some() {
                idle.count -= 1;
                if idle.by_scope.get(&context).is_some_and(Vec::is_empty) {
                    idle.by_scope.remove(&context);
                }
            }
            found
        };
        match pooled {
            Some((session, _)) => session,
            None => self.host.session(context),
        }
    }

    /// Keep `session` for its context's next call, evicting what no longer fits.
    pub fn give_back(&self, session: Session) {
        let version = self.host.chain_version();
        if session.chain_version() != version {
            return; // its instances belong to a replaced chain
        }
        let cap = self.cap(version);
        let mut evicted = Vec::new();
        {
            let mut idle = self.lock();
            let now = Instant::now();
            if now.duration_since(idle.last_sweep) > Duration::from_secs(1) {
                idle.last_sweep = now;
                let timeout = self.idle_timeout;
                let mut dropped = 0;
                for sessions in idle.by_scope.values_mut() {
                    let before = sessions.len();
                    sessions.retain(|(_, since)| now.duration_since(*since) < timeout);
                    dropped += before - sessions.len();
                }
                idle.by_scope.retain(|_, s| !s.is_empty());
                idle.count -= dropped;
                self.evicted.fetch_add(dropped as u64, Ordering::Relaxed);
            }
            if cap == 0 {
                evicted.push(session);
            } else {
                while idle.count >= cap {
                    let Some(oldest) = idle
                        .by_scope
                        .iter()
                        .filter_map(|(k, s)| s.first().map(|(_, t)| (k.clone(), *t)))
                        .min_by_key(|(_, t)| *t)
                        .map(|(k, _)| k)
                    else {
                        break;
                    };
                    let sessions = idle.by_scope.get_mut(&oldest).expect("just found");
                    evicted.push(sessions.remove(0).0);
                    if sessions.is_empty() {
                        idle.by_scope.remove(&oldest);
                    }
                    idle.count -= 1;
                }
                let key = session.context().clone();
                idle.by_scope.entry(key).or_default().push((session, now));
                idle.count += 1;
            }
        }
        self.evicted
            .fetch_add(evicted.len() as u64, Ordering::Relaxed);
        drop(evicted); // instances are freed outside the lock
    }

    /// Idle sessions kept now.
    pub fn idle_count(&self) -> usize {
        self.lock().count
    }

    /// How many idle sessions fit beside the calls in flight, for chain `version`.
    fn cap(&self, version: u64) -> usize {
        let known = self.lock().cap;
        if known.0 == version {
            return known.1;
        }
        let plugins = self.host.plugins();
        let per_session = plugins.len();
        // No wasm plugin: sessions hold no instances, only the count cap applies.
        let cap = match (POOL_INSTANCES as usize)
            .saturating_sub(self.max_concurrent * per_session)
            .checked_div(per_session)
        {
            None => MAX_IDLE,
            Some(slots) => {
                let memory: u64 = plugins
                    .iter()
                    .map(|p| p.spec.limits.memory_bytes() as u64)
                    .sum();
                let by_memory = (self.idle_memory_bytes / memory.max(1)) as usize;
                slots.min(by_memory).min(MAX_IDLE)
            }
        };
        self.lock().cap = (version, cap);
        cap
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Idle> {
        self.idle.lock().unwrap_or_else(|e| e.into_inner())
    }
}
