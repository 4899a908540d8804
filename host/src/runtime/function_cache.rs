//! Machine code shared between components: Cranelift's incremental cache (wasmtime's
//! `CacheStore`), in memory, one per process, bounded in bytes.
//!
//! Components built by one toolchain carry the same engine: every JS plugin embeds
//! StarlingMonkey, every Python one CPython, every Go one Go's runtime. Compiled one after
//! the other, the second plugin of a toolchain takes the first one's machine code for every
//! function whose Cranelift IR is the same: the key is a SHA-256 of the function's IR and of
//! the target's settings (so engines of other settings never share an entry), computed and
//! checked by Cranelift. Entries are written only by this process's compiler; a hostile
//! component can fill the store up to its cap (later compiles then run uncached), not put
//! code under another function's key. A JS plugin compiled from scratch costs ~12 s of CPU in a debug host; the
//! second costs a fraction of that. The precompiled artifacts on disk (`cache`) are a separate,
//! per-component cache; this one only makes compiling cheaper and never changes its output.
//!
//! Only the store lives here; the engine (`engine`) installs it.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock, RwLock};
use wasmtime::CacheStore;

/// The process's store: shared by every engine of the process (tests and `hak` commands
/// that build several hosts compile their plugins once per toolchain, not once per host).
pub fn shared() -> Arc<FunctionCache> {
    static SHARED: OnceLock<Arc<FunctionCache>> = OnceLock::new();
    SHARED
        .get_or_init(|| {
            Arc::new(FunctionCache::new(
                crate::model::limits::FUNCTION_CACHE_BYTES,
            ))
        })
        .clone()
}

/// Cranelift's key → the compiled function it stored.
type Entries = HashMap<Box<[u8]>, Box<[u8]>, foldhash::fast::RandomState>;

/// Compiled functions by Cranelift's key, at most `cap` bytes of them (keys and values):
/// when full, new functions are compiled as without a cache and not kept.
#[derive(Debug)]
pub struct FunctionCache {
    entries: RwLock<Entries>,
    bytes: AtomicUsize,
    cap: usize,
    hits: AtomicU64,
    misses: AtomicU64,
}

/// What a cache has served and holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub hits: u64,
    pub misses: u64,
    pub bytes: usize,
}

impl FunctionCache {
    pub fn new(cap: usize) -> Self {
        FunctionCache {
            entries: RwLock::default(),
            bytes: AtomicUsize::new(0),
            cap,
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    pub fn stats(&self) -> Stats {
        Stats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            bytes: self.bytes.load(Ordering::Relaxed),
        }
    }
}

impl CacheStore for FunctionCache {
    fn get(&self, key: &[u8]) -> Option<Cow<'_, [u8]>> {
        let entries = self.entries.read().unwrap_or_else(|e| e.into_inner());
        let found = entries.get(key).map(|value| Cow::Owned(value.to_vec()));
        let counter = if found.is_some() {
            &self.hits
        } else {
            &self.misses
        };
        counter.fetch_add(1, Ordering::Relaxed);
        found
    }

    fn insert(&self, key: &[u8], value: Vec<u8>) -> bool {
        let size = key.len() + value.len();
        let mut entries = self.entries.write().unwrap_or_else(|e| e.into_inner());
        if entries.contains_key(key) {
            return true;
        }
        if self.bytes.load(Ordering::Relaxed) + size > self.cap {
            return false;
        }
        self.bytes.fetch_add(size, Ordering::Relaxed);
        entries.insert(key.into(), value.into_boxed_slice());
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_kept_up_to_the_cap_and_counted() {
        let cache = FunctionCache::new(100);
        assert!(cache.get(b"a").is_none());
        assert!(cache.insert(b"a", vec![1; 40]));
        assert_eq!(cache.get(b"a").as_deref(), Some(&[1; 40][..]));
        // 41 + 60 bytes would pass the cap: not kept, and what is kept stays.
        assert!(!cache.insert(b"b", vec![2; 60]));
        assert!(cache.get(b"b").is_none());
        assert!(cache.insert(b"a", vec![3; 40]));
        assert_eq!(cache.get(b"a").as_deref(), Some(&[1; 40][..]));
        assert_eq!(
            cache.stats(),
            Stats {
                hits: 2,
                misses: 2,
                bytes: 41
            }
        );
    }
}
