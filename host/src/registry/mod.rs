//! The plugin registry of a running host: the manifest's plugins, then plugins added from a
//! watched directory or the admin API (in name order), then native ones. Every change is
//! validated off the hot path — name, settings, signature, sha256 pin, compile (or the cached
//! artifact), type-check against the world, `describe` with its config — and only then swapped
//! in atomically as a new chain version; a rejected change leaves the running chain untouched.
//! The previous version of each plugin is kept for a one-step rollback.
//! What must not live here: the HTTP API (`serve`). `directory` reads the plugins directory's
//! files into changes; [`watch`] (a submodule, above the registry) re-syncs it from the plugins
//! directory and the OCI references it watches.

mod directory;
pub mod watch;

use crate::host::Host;
use crate::lifecycle::chain::Member;
use crate::lifecycle::native::is_native;
use crate::manifest::PluginSidecar;
use crate::runtime::{LoadedPlugin, WasmPlugin};
use crate::signing;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// Why a change was refused (the running chain is unchanged).
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error("plugin {0:?}: names are 1–64 of [A-Za-z0-9_-]")]
    BadName(String),
    #[error("plugin {0}: the manifest owns this name")]
    ManifestOwned(String),
    #[error("plugin {0}: not loaded")]
    NotFound(String),
    #[error("plugin {0}: no previous version to roll back to")]
    NoPrevious(String),
    #[error("plugin {plugin}: {message}")]
    Settings { plugin: String, message: String },
    #[error("plugin {plugin}: unsigned, and the manifest requires signatures")]
    Unsigned { plugin: String },
    #[error("plugin {plugin}: bad signature: {source}")]
    BadSignature {
        plugin: String,
        source: crate::signing::SigningError,
    },
    #[error("plugin {plugin}: its settings must be signed too (a `<name>.toml.sig` beside the sidecar, `settingsSignature` in an upload): {message}")]
    UnsignedSettings { plugin: String, message: String },
    #[error(transparent)]
    Load(#[from] crate::runtime::LoadError),
    #[error("{0}")]
    TrustedKey(String),
}

/// Where a registry entry came from.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    Manifest,
    Directory,
    Api,
}

#[derive(Clone)]
struct Entry {
    plugin: Arc<LoadedPlugin>,
    /// The settings as given (file text or API JSON), to tell whether a file changed.
    settings_text: String,
    source: Source,
    loaded_at_ms: u64,
    load_ms: f64,
}

/// The plugin list of one chain version.
#[derive(Debug)]
pub struct PluginsSnapshot {
    pub chain_version: u64,
    pub plugins: Vec<PluginStatus>,
}

/// One plugin as `GET /v1/plugins` shows it.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PluginStatus {
    pub name: String,
    pub plugin_name: String,
    pub version: String,
    pub sha256: String,
    pub source: Source,
    pub relevant_tools: Vec<String>,
    pub hook_stages: Vec<&'static str>,
    pub policy_stages: Vec<&'static str>,
    pub loaded_at_ms: u64,
    pub load_ms: f64,
    pub calls: u64,
    /// Calls it blocked (an enforcing plugin; 0 in shadow mode).
    pub blocks: u64,
    pub errors: u64,
    /// false: shadow mode (`enforce = false`): it runs on real calls, its answers recorded
    /// but never applied.
    pub enforce: bool,
    /// Calls a shadow plugin would have blocked (0 for an enforcing one).
    pub would_block: u64,
    /// Agent contexts (scope keys) in which a skippable hook's circuit is open.
    pub tripped_contexts: Vec<String>,
    /// Network capability calls made, and refused by a quota.
    pub capability_calls: u64,
    pub capability_refusals: u64,
    pub can_roll_back: bool,
    /// The `oci://` reference a manifest plugin is loaded from (pinned or followed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// The OCI manifest digest it was loaded from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
}

/// What a directory scan did.
#[derive(Debug, Default, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SyncReport {
    pub loaded: Vec<String>,
    pub removed: Vec<String>,
    pub rejected: Vec<(String, String)>,
    pub chain_version: u64,
}

struct State {
    /// The chain's fixed part: manifest plugins and native ones, in order. Only a manifest
    /// plugin that follows an OCI tag is ever replaced (by the digest the tag names next).
    base: Vec<Member>,
    extra: BTreeMap<String, Entry>,
    previous: HashMap<String, Entry>,
    /// Directory files refused, by name: what was refused (a digest of the component, its
    /// settings and signatures, or the reason it could not be read). The same files are not
    /// validated or reported again until they change.
    refused: HashMap<String, String>,
}

pub struct Registry {
    host: Host,
    /// Names of the chain's fixed part (manifest and native plugins): not for the API.
    base_names: std::collections::HashSet<String>,
    trusted: signing::TrustedKeys,
    require_signatures: bool,
    plugins_dir: Option<PathBuf>,
    state: Mutex<State>,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or_default()
}

fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

impl Registry {
    /// A registry over `host`'s current chain; `plugins_dir` is scanned by [`Registry::sync_dir`].
    pub fn new(host: Host, plugins_dir: Option<PathBuf>) -> Result<Self, RegistryError> {
        let trust = &host.manifest().trust;
        let trusted = host
            .manifest()
            .trusted_keys()
            .map_err(RegistryError::TrustedKey)?;
        let base = host.chain().members().to_vec();
        Ok(Registry {
            require_signatures: trust.require_signatures,
            base_names: base.iter().map(|m| m.name().to_owned()).collect(),
            host,
            trusted,
            plugins_dir,
            state: Mutex::new(State {
                base,
                extra: BTreeMap::new(),
                previous: HashMap::new(),
                refused: HashMap::new(),
            }),
        })
    }

    pub fn host(&self) -> &Host {
        &self.host
    }

    pub fn plugins_dir(&self) -> Option<&Path> {
        self.plugins_dir.as_deref()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Swap in the chain for `state`; the new version. Called with the registry's lock held
    /// (`state` is its guard's), and the only place the chain is swapped: what holds the lock
    /// sees a chain version and the plugins of that version together.
    fn publish(&self, state: &State) -> u64 {
        let mut members: Vec<Member> = state
            .base
            .iter()
            .filter(|m| !is_native(m.as_ref()))
            .cloned()
            .collect();
        members.extend(
            state
                .extra
                .values()
                .map(|e| WasmPlugin::member(e.plugin.clone())),
        );
        members.extend(state.base.iter().filter(|m| is_native(m.as_ref())).cloned());
        let version = self.host.swap_members(members);
        self.host.metrics().plugin_change(true);
        version
    }

    /// Validate and load a plugin without touching the chain.
    #[allow(clippy::too_many_arguments)]
    fn validate(
        &self,
        name: &str,
        bytes: &[u8],
        settings: PluginSidecar,
        settings_text: &str,
        signature: Option<&str>,
        settings_signature: Option<&str>,
        path: PathBuf,
    ) -> Result<(Arc<LoadedPlugin>, f64), RegistryError> {
        if !valid_name(name) {
            return Err(RegistryError::BadName(name.to_owned()));
        }
        if self.base_names.contains(name) {
            return Err(RegistryError::ManifestOwned(name.to_owned()));
        }
        let spec = settings.into_spec(name, path);
        spec.validate(&format!("plugin {name}"), self.host.manifest().engine.fuel)
            .map_err(|message| RegistryError::Settings {
                plugin: name.to_owned(),
                message,
            })?;
        match signature {
            Some(sig) => {
                self.trusted
                    .verify(bytes, sig)
                    .map_err(|source| RegistryError::BadSignature {
                        plugin: name.to_owned(),
                        source,
                    })?
            }
            None if self.require_signatures => {
                return Err(RegistryError::Unsigned {
                    plugin: name.to_owned(),
                })
            }
            None => {}
        }
        // A signed plugin's settings (config, capabilities, limits) are signed too: otherwise
        // an unsigned sidecar could loosen a signed policy or widen what it may do.
        let trivial = matches!(settings_text.trim(), "" | "{}");
        if (signature.is_some() || self.require_signatures) && !trivial {
            let unsigned = |message: String| RegistryError::UnsignedSettings {
                plugin: name.to_owned(),
                message,
            };
            let sig = settings_signature.ok_or_else(|| unsigned("no signature".into()))?;
            self.trusted
                .verify(settings_text.as_bytes(), sig)
                .map_err(|e| unsigned(e.to_string()))?;
        }
        let started = Instant::now();
        let plugin =
            LoadedPlugin::from_bytes(self.host.runtime(), spec, bytes, self.host.capability())?;
        Ok((plugin, started.elapsed().as_secs_f64() * 1000.0))
    }

    /// Add or replace plugin `name`; the new chain version. The replaced version is kept for
    /// [`Registry::rollback`]. `settings_text` is what `settings` was parsed from.
    pub fn put(
        &self,
        name: &str,
        bytes: &[u8],
        settings: PluginSidecar,
        settings_text: String,
        signature: Option<&str>,
        source: Source,
    ) -> Result<u64, RegistryError> {
        self.put_signed(
            name,
            bytes,
            settings,
            settings_text,
            signature,
            None,
            source,
        )
    }

    /// [`Registry::put`] with a signature over the settings text too (required for a signed
    /// plugin whose settings are not empty).
    #[allow(clippy::too_many_arguments)]
    pub fn put_signed(
        &self,
        name: &str,
        bytes: &[u8],
        settings: PluginSidecar,
        settings_text: String,
        signature: Option<&str>,
        settings_signature: Option<&str>,
        source: Source,
    ) -> Result<u64, RegistryError> {
        let path = self
            .plugins_dir
            .as_ref()
            .map_or_else(|| PathBuf::from(name), |d| d.join(format!("{name}.wasm")));
        // Validation (compile, type-check, describe) runs before the lock: a slow or hostile
        // component never holds up other changes. The swap itself is atomic under the lock;
        // changes to one name apply in the order they finish validating. Calls never take it.
        let (plugin, load_ms) = self.validate(
            name,
            bytes,
            settings,
            &settings_text,
            signature,
            settings_signature,
            path,
        )?;
        let mut state = self.lock();
        let entry = Entry {
            plugin,
            settings_text,
            source,
            loaded_at_ms: now_ms(),
            load_ms,
        };
        if let Some(old) = state.extra.insert(name.to_owned(), entry) {
            state.previous.insert(name.to_owned(), old);
        }
        Ok(self.publish(&state))
    }

    /// Remove plugin `name` (kept for rollback); the new chain version.
    pub fn remove(&self, name: &str) -> Result<u64, RegistryError> {
        let mut state = self.lock();
        let old = state
            .extra
            .remove(name)
            .ok_or_else(|| RegistryError::NotFound(name.to_owned()))?;
        state.previous.insert(name.to_owned(), old);
        Ok(self.publish(&state))
    }

    /// Put back the previous version of `name` (undoing the last put or remove).
    pub fn rollback(&self, name: &str) -> Result<u64, RegistryError> {
        let mut state = self.lock();
        let previous = state
            .previous
            .remove(name)
            .ok_or_else(|| RegistryError::NoPrevious(name.to_owned()))?;
        if let Some(current) = state.extra.insert(name.to_owned(), previous) {
            state.previous.insert(name.to_owned(), current);
        }
        Ok(self.publish(&state))
    }

    /// The manifest plugins that follow an OCI tag: (name, reference, digest loaded now).
    pub fn followed(&self) -> Vec<(String, crate::oci::OciRef, String)> {
        self.lock()
            .base
            .iter()
            .filter_map(|m| m.as_any().downcast_ref::<WasmPlugin>())
            .filter_map(|p| {
                let spec = &p.loaded().spec;
                let reference = crate::oci::OciRef::parse(spec.source.as_deref()?).ok()?;
                let digest = spec.oci_digest.clone()?;
                reference
                    .is_followed()
                    .then(|| (spec.name.clone(), reference, digest))
            })
            .collect()
    }

    /// Replace manifest plugin `name` (one loaded from an OCI reference) with the component
    /// `bytes` of manifest `digest`, already verified by the caller: loaded with the same
    /// settings and checks as at start (pins, compile, type-check, describe), then swapped in
    /// atomically; a refusal leaves the running version. The new chain version.
    pub fn replace_pulled(
        &self,
        name: &str,
        bytes: &[u8],
        digest: &str,
    ) -> Result<u64, RegistryError> {
        let current = |state: &State| {
            state
                .base
                .iter()
                .position(|m| m.name() == name && m.as_any().downcast_ref::<WasmPlugin>().is_some())
        };
        let mut spec = {
            let state = self.lock();
            let at = current(&state).ok_or_else(|| RegistryError::NotFound(name.to_owned()))?;
            let member = state.base[at].as_any().downcast_ref::<WasmPlugin>();
            member
                .expect("found as a wasm plugin")
                .loaded()
                .spec
                .clone()
        };
        spec.oci_digest = Some(digest.to_owned());
        let plugin =
            LoadedPlugin::from_bytes(self.host.runtime(), spec, bytes, self.host.capability())?;
        let mut state = self.lock();
        let at = current(&state).ok_or_else(|| RegistryError::NotFound(name.to_owned()))?;
        state.base[at] = WasmPlugin::member(plugin);
        Ok(self.publish(&state))
    }

    /// Every plugin of the current chain, with counters, and that chain's version: one
    /// snapshot, never one chain's plugins under another's version. Every swap publishes
    /// under the registry's lock ([`Registry::publish`]), so the version read under it is the
    /// version of the plugins listed under it.
    pub fn snapshot(&self) -> PluginsSnapshot {
        let state = self.lock();
        PluginsSnapshot {
            chain_version: self.host.chain_version(),
            plugins: Self::list_of(&state),
        }
    }

    /// Every plugin of the current chain, with counters.
    pub fn list(&self) -> Vec<PluginStatus> {
        Self::list_of(&self.lock())
    }

    fn list_of(state: &State) -> Vec<PluginStatus> {
        let mut out = Vec::new();
        let status = |p: &LoadedPlugin, source, loaded_at_ms, load_ms, can_roll_back| {
            let d = &p.description;
            let blocks = p.stats.blocks.load(Ordering::Relaxed);
            PluginStatus {
                name: p.spec.name.clone(),
                plugin_name: d.name.clone(),
                version: p.sha256[..12].to_owned(),
                sha256: p.sha256.clone(),
                source,
                relevant_tools: d.relevant_tools.clone(),
                hook_stages: d.hook_stages.iter().map(|s| s.as_str()).collect(),
                policy_stages: d.policy_stages.iter().map(|s| s.as_str()).collect(),
                loaded_at_ms,
                load_ms,
                calls: p.stats.calls.load(Ordering::Relaxed),
                blocks: if p.spec.enforce { blocks } else { 0 },
                errors: p.stats.errors.load(Ordering::Relaxed),
                enforce: p.spec.enforce,
                would_block: if p.spec.enforce { 0 } else { blocks },
                tripped_contexts: p.stats.tripped_contexts(),
                capability_calls: p.stats.capability.calls.load(Ordering::Relaxed),
                capability_refusals: p.stats.capability.refusals.load(Ordering::Relaxed),
                can_roll_back,
                reference: p.spec.source.clone(),
                digest: p.spec.oci_digest.clone(),
            }
        };
        for m in &state.base {
            if let Some(p) = m.as_any().downcast_ref::<WasmPlugin>() {
                out.push(status(p.loaded(), Source::Manifest, 0, 0.0, false));
            }
        }
        for (name, e) in &state.extra {
            let back = state.previous.contains_key(name);
            out.push(status(&e.plugin, e.source, e.loaded_at_ms, e.load_ms, back));
        }
        out
    }
}
