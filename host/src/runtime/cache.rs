//! Precompiled plugin artifacts on disk, so a restart compiles nothing. An artifact is keyed by
//! the component's sha256 and the engine's compatibility hash; only files this cache wrote are
//! deserialized, and one that fails to load (stale, foreign, truncated) is recompiled.
//!
//! Beside them, a digest index (`digests.json`): the sha256 of each component file the cache
//! has read, keyed by the file's identity (device, inode, size, mtime and ctime — ctime is set
//! by the kernel on every write and cannot be set back by a user), so a restart loads an
//! unchanged file's artifact without reading or hashing the file. Anyone who can write the
//! cache directory can already replace the artifacts (native code), so the index adds no trust.
//!
//! In memory, the compiled components in use by sha256 ([`ArtifactCache::share`]): plugins of
//! one file (five policies of one component with different configs, a reload) run one copy of
//! its machine code, not one each — separate copies cost every call through a chain
//! instruction-cache and TLB misses, and each copy its memory.

use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use wasmtime::component::Component;
use wasmtime::Engine;

pub struct ArtifactCache {
    dir: Option<PathBuf>,
    engine_key: String,
    hits: AtomicU64,
    compiles: AtomicU64,
    shared: AtomicU64,
    copies: AtomicU64,
    /// File identity → sha256, loaded from `digests.json` on first use.
    digests: Mutex<Option<HashMap<String, String>>>,
    /// sha256 → a compiled component in use and the token its users hold (gone with the last).
    live: Mutex<HashMap<String, (Weak<()>, Component)>>,
}

/// Held by each user of a shared compiled component ([`ArtifactCache::share`]); the cache
/// forgets the component once no user holds one.
#[derive(Clone, Debug)]
pub struct ShareToken {
    _held: Arc<()>,
}

/// The digest index keeps at most this many files (the oldest-looking are not tracked: any
/// entry may go, which only costs one hash on the next load).
const MAX_DIGESTS: usize = 4096;

/// Who a file is, as far as the kernel can tell without reading it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileIdentity(String);

impl FileIdentity {
    #[cfg(unix)]
    pub fn of(metadata: &std::fs::Metadata) -> Option<Self> {
        use std::os::unix::fs::MetadataExt;
        metadata.is_file().then(|| {
            FileIdentity(format!(
                "{}:{}:{}:{}.{}:{}.{}",
                metadata.dev(),
                metadata.ino(),
                metadata.size(),
                metadata.mtime(),
                metadata.mtime_nsec(),
                metadata.ctime(),
                metadata.ctime_nsec()
            ))
        })
    }

    #[cfg(not(unix))]
    pub fn of(_metadata: &std::fs::Metadata) -> Option<Self> {
        None
    }
}

/// Feeds `Hash` output into sha256, giving a stable key for the engine's compatibility hash.
struct ShaHasher(Sha256);
impl Hasher for ShaHasher {
    fn finish(&self) -> u64 {
        0
    }
    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
}

impl ArtifactCache {
    pub fn new(dir: Option<PathBuf>, engine: &Engine) -> Self {
        let mut hasher = ShaHasher(Sha256::new());
        // Covers target, compiler flags, tunables, features and wasmtime's own version.
        engine.precompile_compatibility_hash().hash(&mut hasher);
        let engine_key = hex::encode(&hasher.0.finalize()[..12]);
        ArtifactCache {
            dir,
            engine_key,
            hits: AtomicU64::new(0),
            compiles: AtomicU64::new(0),
            shared: AtomicU64::new(0),
            copies: AtomicU64::new(0),
            digests: Mutex::new(None),
            live: Mutex::new(HashMap::new()),
        }
    }

    /// The compiled component with this sha256 that a loaded plugin already uses (hand it to
    /// [`Self::share`] to keep it shared).
    pub fn live(&self, sha256: &str) -> Option<Component> {
        let live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        let (token, component) = live.get(sha256)?;
        if token.strong_count() == 0 {
            return None;
        }
        self.shared.fetch_add(1, Ordering::Relaxed);
        Some(component.clone())
    }

    /// Share `component` (compiled from the bytes with this sha256) with later loads of the
    /// same bytes: returns the copy to use — one already in use if another load got there
    /// first — and the token to hold while using it. Components nobody holds are forgotten.
    pub fn share(&self, sha256: &str, component: Component) -> (Component, ShareToken) {
        let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        live.retain(|_, (token, _)| token.strong_count() > 0);
        if let Some((token, existing)) = live.get(sha256) {
            if let Some(token) = token.upgrade() {
                return (existing.clone(), ShareToken { _held: token });
            }
        }
        let token = Arc::new(());
        self.copies.fetch_add(1, Ordering::Relaxed);
        live.insert(
            sha256.to_owned(),
            (Arc::downgrade(&token), component.clone()),
        );
        (component, ShareToken { _held: token })
    }

    /// Copies of machine code handed to loaded plugins since start: one per distinct
    /// component in use (a component forgotten by its last user and loaded again counts again).
    pub fn copies(&self) -> u64 {
        self.copies.load(Ordering::Relaxed)
    }

    fn digests_path(&self) -> Option<PathBuf> {
        self.dir.as_ref().map(|d| d.join("digests.json"))
    }

    fn with_digests<T>(&self, work: impl FnOnce(&mut HashMap<String, String>) -> T) -> T {
        let mut digests = self.digests.lock().unwrap_or_else(|e| e.into_inner());
        let map = digests.get_or_insert_with(|| {
            self.digests_path()
                .and_then(|p| std::fs::read(p).ok())
                .and_then(|bytes| serde_json::from_slice(&bytes).ok())
                .unwrap_or_default()
        });
        work(map)
    }

    /// The sha256 of the file `identity` names, if this cache read it before.
    pub fn known_digest(&self, identity: &FileIdentity) -> Option<String> {
        self.dir.as_ref()?;
        self.with_digests(|map| map.get(&identity.0).cloned())
    }

    /// Remember the sha256 of the file `identity` names (written through to `digests.json`
    /// atomically; a failed write only costs a hash next time).
    pub fn remember_digest(&self, identity: FileIdentity, sha256: &str) {
        let Some(path) = self.digests_path() else {
            return;
        };
        // Written under the lock, so parallel loads never interleave their versions.
        self.with_digests(|map| {
            if map.get(&identity.0).map(String::as_str) == Some(sha256) {
                return;
            }
            if map.len() >= MAX_DIGESTS {
                let drop: Vec<String> = map.keys().take(map.len() / 2).cloned().collect();
                for key in drop {
                    map.remove(&key);
                }
            }
            map.insert(identity.0, sha256.to_owned());
            let written = serde_json::to_vec(map)
                .map_err(anyhow::Error::from)
                .and_then(|text| write_atomically(&path, &text));
            if let Err(e) = written {
                tracing::debug!("cannot write the digest index {}: {e:#}", path.display());
            }
        });
    }

    /// The precompiled artifact of the component with this sha256, if one is on disk and
    /// loads (no compiling here).
    pub fn artifact(&self, engine: &Engine, sha256: &str) -> Option<Component> {
        let path = self.artifact_path(sha256)?;
        if !path.exists() {
            return None;
        }
        // SAFETY: as in `load_or_compile`: written by `store` from this engine's own
        // compilation, named by the engine's compatibility hash, re-checked by wasmtime.
        match unsafe { Component::deserialize_file(engine, &path) } {
            Ok(component) => {
                self.hits.fetch_add(1, Ordering::Relaxed);
                Some(component)
            }
            Err(e) => {
                tracing::warn!(
                    "discarding unusable precompiled artifact {}: {e:#}",
                    path.display()
                );
                None
            }
        }
    }

    /// Where artifacts live by default: `$HAK_CACHE_DIR`, `$XDG_CACHE_HOME/hak`, `~/.cache/hak`.
    pub fn default_dir() -> Option<PathBuf> {
        if let Some(dir) = std::env::var_os("HAK_CACHE_DIR") {
            return Some(dir.into());
        }
        if let Some(dir) = std::env::var_os("XDG_CACHE_HOME") {
            return Some(PathBuf::from(dir).join("hak"));
        }
        std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache").join("hak"))
    }

    /// Artifacts loaded from disk since start.
    pub fn hits(&self) -> u64 {
        self.hits.load(Ordering::Relaxed)
    }

    /// Loads served by a compiled component already in use (no disk, no compiling).
    pub fn shared(&self) -> u64 {
        self.shared.load(Ordering::Relaxed)
    }

    /// Components compiled since start.
    pub fn compiles(&self) -> u64 {
        self.compiles.load(Ordering::Relaxed)
    }

    fn artifact_path(&self, sha256: &str) -> Option<PathBuf> {
        self.dir
            .as_ref()
            .map(|d| d.join(format!("{sha256}-{}.cwasm", self.engine_key)))
    }

    /// The compiled component for `bytes` (whose hash is `sha256`), from disk when possible.
    /// `precheck` runs only when there is no usable artifact, before compiling.
    pub fn load_or_compile(
        &self,
        engine: &Engine,
        bytes: &[u8],
        sha256: &str,
        precheck: impl FnOnce() -> Result<(), String>,
    ) -> wasmtime::Result<Component> {
        let path = self.artifact_path(sha256);
        if let Some(path) = &path {
            if path.exists() {
                // SAFETY: the file was written by `store` below from this engine's own
                // compilation, under a name that includes the engine's compatibility hash;
                // wasmtime re-checks compatibility and we recompile on any error.
                match unsafe { Component::deserialize_file(engine, path) } {
                    Ok(component) => {
                        self.hits.fetch_add(1, Ordering::Relaxed);
                        return Ok(component);
                    }
                    Err(e) => tracing::warn!(
                        "discarding unusable precompiled artifact {}: {e:#}",
                        path.display()
                    ),
                }
            }
        }
        precheck().map_err(wasmtime::Error::msg)?;
        let component = Component::from_binary(engine, bytes)?;
        self.compiles.fetch_add(1, Ordering::Relaxed);
        if let Some(path) = &path {
            if let Err(e) = store(&component, path) {
                tracing::warn!(
                    "cannot write precompiled artifact {}: {e:#}",
                    path.display()
                );
            }
        }
        Ok(component)
    }
}

/// Write atomically: temp file, fsync, rename. A reader never sees a half-written artifact.
fn store(component: &Component, path: &Path) -> anyhow::Result<()> {
    write_atomically(path, &component.serialize()?)
}

/// `bytes` to `path` through a temp file, fsync and rename.
fn write_atomically(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    use std::io::Write;
    let dir = path.parent().expect("cache paths have a parent");
    std::fs::create_dir_all(dir)?;
    // Unique per process and per write: threads loading plugins in parallel may write the
    // same artifact at once.
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let tmp = dir.join(format!(
        ".{}.tmp{}-{}",
        path.file_name().unwrap().to_string_lossy(),
        std::process::id(),
        WRITES.fetch_add(1, Ordering::Relaxed)
    ));
    let mut file = std::fs::File::create(&tmp)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    std::fs::rename(&tmp, path)?;
    Ok(())
}
