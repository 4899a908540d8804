//! Precompiled plugin artifacts on disk, so a restart compiles nothing. An artifact is keyed by
//! the component's sha256 and the engine's compatibility hash; only files this cache wrote are
//! deserialized, and one that fails to load (stale, foreign, truncated) is recompiled.

use sha2::{Digest, Sha256};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use wasmtime::component::Component;
use wasmtime::Engine;

pub struct ArtifactCache {
    dir: Option<PathBuf>,
    engine_key: String,
    hits: AtomicU64,
    compiles: AtomicU64,
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
    use std::io::Write;
    let dir = path.parent().expect("artifact paths have a parent");
    std::fs::create_dir_all(dir)?;
    let bytes = component.serialize()?;
    let tmp = dir.join(format!(
        ".{}.tmp{}",
        path.file_name().unwrap().to_string_lossy(),
        std::process::id()
    ));
    let mut file = std::fs::File::create(&tmp)?;
    file.write_all(&bytes)?;
    file.sync_all()?;
    std::fs::rename(&tmp, path)?;
    Ok(())
}
