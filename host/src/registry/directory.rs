//! The plugins directory as registry changes: `<name>.wasm` with optional `<name>.toml`
//! settings, `<name>.wasm.sig` and `<name>.toml.sig` signatures, each read within its size
//! limit (`intake`), loaded when changed, reported once per refused content, removed when its
//! file is gone. What must not live here: validating a plugin (the registry's `put_signed`),
//! watching the directory (`watch`).

use super::{Registry, Source, SyncReport};
use crate::intake;
use crate::manifest::PluginSidecar;
use crate::model::limits::MAX_COMPONENT_BYTES;
use crate::signing;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

impl Registry {
    /// Bring the directory's plugins in line with its files: `<name>.wasm` with optional
    /// `<name>.toml` settings and `<name>.wasm.sig` signature. Unchanged files are skipped;
    /// a file that does not validate is reported and its running version (if any) kept.
    pub fn sync_dir(&self) -> SyncReport {
        let mut report = SyncReport::default();
        let Some(dir) = &self.plugins_dir else {
            report.chain_version = self.host.chain_version();
            return report;
        };
        let mut on_disk: BTreeMap<String, PathBuf> = BTreeMap::new();
        if let Ok(entries) = std::fs::read_dir(dir) {
            for entry in entries.flatten() {
                let path = entry.path();
                let Some(file) = path.file_name().and_then(|f| f.to_str()) else {
                    continue;
                };
                if file.starts_with('.') {
                    continue;
                }
                if let Some(name) = file.strip_suffix(".wasm") {
                    on_disk.insert(name.to_owned(), path.clone());
                }
            }
        }
        for (name, path) in &on_disk {
            match self.sync_file(name, path) {
                Ok(true) => {
                    self.lock().refused.remove(name);
                    report.loaded.push(name.clone());
                }
                Ok(false) => {}
                Err((what, e)) => {
                    // Reported (and counted) once per refused content, however many times
                    // the directory is synced.
                    let first =
                        self.lock().refused.insert(name.clone(), what.clone()) != Some(what);
                    if first {
                        self.host.metrics().plugin_change(false);
                        report.rejected.push((name.clone(), e));
                    }
                }
            }
        }
        self.lock()
            .refused
            .retain(|name, _| on_disk.contains_key(name));
        let gone: Vec<String> = {
            let state = self.lock();
            state
                .extra
                .iter()
                .filter(|(n, e)| e.source == Source::Directory && !on_disk.contains_key(*n))
                .map(|(n, _)| n.clone())
                .collect()
        };
        for name in gone {
            if self.remove(&name).is_ok() {
                report.removed.push(name);
            }
        }
        report.chain_version = self.host.chain_version();
        report
    }

    /// Load one directory file if it changed; `Ok(true)` when the chain changed. A refusal
    /// comes with what was refused (see `State::refused`); files refused before and unchanged
    /// since are skipped.
    fn sync_file(&self, name: &str, path: &Path) -> Result<bool, (String, String)> {
        let unreadable = |e: String| (format!("unreadable: {e}"), e);
        let dir = self.plugins_dir.as_deref().unwrap_or(Path::new("."));
        let bytes = intake::read(dir, path, MAX_COMPONENT_BYTES)
            .map_err(unreadable)?
            .ok_or_else(|| unreadable("cannot read: it went away".to_owned()))?;
        let sha = hex::encode(signing::digest(&bytes));
        let settings_path = path.with_extension("toml");
        let text = |path: &Path, max| -> Result<Option<String>, String> {
            intake::read(dir, path, max)?
                .map(|b| {
                    String::from_utf8(b).map_err(|_| format!("{}: not UTF-8 text", path.display()))
                })
                .transpose()
        };
        let settings_text = text(&settings_path, intake::MAX_SIDECAR_BYTES)
            .map_err(unreadable)?
            .unwrap_or_default();
        let signature = text(
            &path.with_extension("wasm.sig"),
            intake::MAX_SIGNATURE_BYTES,
        )
        .map_err(unreadable)?;
        let settings_signature = text(
            &path.with_extension("toml.sig"),
            intake::MAX_SIGNATURE_BYTES,
        )
        .map_err(unreadable)?;
        let what = {
            let mut h = Sha256::new();
            for part in [
                sha.as_str(),
                &settings_text,
                signature.as_deref().unwrap_or("-"),
                settings_signature.as_deref().unwrap_or("-"),
            ] {
                h.update((part.len() as u64).to_le_bytes());
                h.update(part.as_bytes());
            }
            hex::encode(h.finalize())
        };
        {
            let state = self.lock();
            if let Some(e) = state.extra.get(name) {
                if e.plugin.sha256 == sha && e.settings_text == settings_text {
                    return Ok(false);
                }
            }
            if state.refused.get(name) == Some(&what) {
                return Ok(false);
            }
        }
        let settings: PluginSidecar = toml::from_str(&settings_text)
            .map_err(|e| (what.clone(), intake::toml_error(&settings_path, &e)))?;
        self.put_signed(
            name,
            &bytes,
            settings,
            settings_text,
            signature.as_deref(),
            settings_signature.as_deref(),
            Source::Directory,
        )
        .map(|_| true)
        .map_err(|e| (what, e.to_string()))
    }
}
