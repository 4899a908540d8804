//! Loading a plugin: read, size and sha256 checks, compile (or load the precompiled artifact),
//! type-check against the world (`InstancePre`), then `describe` with the operator's config in
//! a throw-away instance, and `inputs.reads` there when the plugin exports it. A `LoadedPlugin` is immutable and shared; instances come from it.

use super::bindings::{PluginInfo, Pre};
use super::engine::Runtime;
use super::instance::PluginInstance;
use super::member::stage_of;
use crate::capabilities::{Capability, CapabilityCounters, HederaActions, QuotaWindows};
use crate::manifest::{OnError, PluginSpec};
use crate::model::limits::{MAX_COMPILE_SECONDS, MAX_COMPONENT_BYTES};
use crate::model::stage::StageSet;
use crate::plugin::{PluginDescription, PluginFailure, ReadsTable};
use crate::state_store::StateHandle;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use wasmtime::component::Component;

/// Why a plugin was refused. Every variant names the plugin.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("plugin {plugin}: cannot read {path}: {source}")]
    Read {
        plugin: String,
        path: String,
        source: std::io::Error,
    },
    #[error("plugin {plugin}: {size} bytes exceeds the {MAX_COMPONENT_BYTES}-byte limit")]
    TooLarge { plugin: String, size: usize },
    #[error("plugin {plugin}: sha256 mismatch: manifest pins {expected}, file is {actual}")]
    HashMismatch {
        plugin: String,
        expected: String,
        actual: String,
    },
    #[error("plugin {plugin}: not a WebAssembly component: {reason}")]
    NotAComponent { plugin: String, reason: String },
    #[error(
        "plugin {plugin}: does not fit the hedera:agent-kit/agent-plugin@0.2.2 world (or 0.1.0-0.1.2): {reason}"
    )]
    WrongWorld { plugin: String, reason: String },
    #[error("plugin {plugin}: describe rejected its config: {message}")]
    Config { plugin: String, message: String },
    #[error("plugin {plugin}: invalid description: {message}")]
    Description { plugin: String, message: String },
    /// The failure itself, not wrapped: printed once in an error chain (`{:#}`).
    #[error(transparent)]
    Failed(#[from] PluginFailure),
}

/// What `describe` told the host, checked and in host types.
pub(crate) fn description_from_wit(info: PluginInfo) -> Result<PluginDescription, String> {
    if info.name.trim().is_empty() || info.name.len() > 256 {
        return Err("name must be 1 to 256 characters".into());
    }
    if info.description.len() > 4096 {
        return Err("description exceeds 4096 characters".into());
    }
    if info.relevant_tools.len() > 1024 {
        return Err("more than 1024 relevant tools".into());
    }
    Ok(PluginDescription {
        name: info.name,
        description: info.description,
        relevant_tools: info.relevant_tools,
        hook_stages: info.hook_stages.into_iter().map(stage_of).collect(),
        policy_stages: info.policy_stages.into_iter().map(stage_of).collect(),
    })
}

/// Counters of one loaded plugin, and its circuit breakers: a hook with `on_error = "skip"`
/// that failed [`PluginStats::TRIP_AFTER`] times in a row *in one agent context* is bypassed in
/// that context only (until it succeeds there again or is replaced), so no agent can switch a
/// hook off for the others. Policies never trip: they stay fail-closed.
#[derive(Debug, Default)]
pub struct PluginStats {
    pub calls: AtomicU64,
    /// Instances created and described (one at load, then one per context that needs one
    /// the load's could not serve, and one after each failure).
    pub instantiations: AtomicU64,
    pub blocks: AtomicU64,
    pub errors: AtomicU64,
    /// Network capability calls made, and refused by a quota.
    pub capability: Arc<CapabilityCounters>,
    /// Consecutive failures per context scope (only contexts whose last call failed).
    failing: Mutex<HashMap<String, u64>>,
    /// How many contexts `failing` holds: while none does, the call path takes no lock.
    failing_count: AtomicU64,
}

impl PluginStats {
    pub const TRIP_AFTER: u64 = 5;
    /// Contexts whose failures are tracked at once; past it a new failing context is not
    /// tracked (its hook keeps being called, which is the safe side).
    const MAX_TRACKED: usize = 10_000;

    pub(crate) fn record(&self, scope: &str, blocked: bool, failed: bool) {
        self.calls.fetch_add(1, Ordering::Relaxed);
        if blocked {
            self.blocks.fetch_add(1, Ordering::Relaxed);
        }
        if !failed && self.failing_count.load(Ordering::Acquire) == 0 {
            return; // the common case: nothing failing anywhere, no lock
        }
        let mut failing = self.failing.lock().unwrap_or_else(|e| e.into_inner());
        if failed {
            self.errors.fetch_add(1, Ordering::Relaxed);
            if let Some(n) = failing.get_mut(scope) {
                *n += 1;
                if *n == Self::TRIP_AFTER {
                    tracing::warn!(
                        context = scope,
                        "circuit open after {} failures in a row in this context; a skippable hook is bypassed here until it is replaced",
                        Self::TRIP_AFTER
                    );
                }
            } else if failing.len() < Self::MAX_TRACKED {
                failing.insert(scope.to_owned(), 1);
            }
        } else {
            failing.remove(scope);
        }
        self.failing_count
            .store(failing.len() as u64, Ordering::Release);
    }

    /// Whether the plugin failed [`Self::TRIP_AFTER`] times in a row in the context `scope`.
    pub fn tripped(&self, scope: &str) -> bool {
        if self.failing_count.load(Ordering::Acquire) == 0 {
            return false;
        }
        self.failing
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(scope)
            .is_some_and(|n| *n >= Self::TRIP_AFTER)
    }

    /// The contexts (scope keys) whose circuit is open, sorted.
    pub fn tripped_contexts(&self) -> Vec<String> {
        let failing = self.failing.lock().unwrap_or_else(|e| e.into_inner());
        let mut open: Vec<String> = failing
            .iter()
            .filter(|(_, n)| **n >= Self::TRIP_AFTER)
            .map(|(scope, _)| scope.clone())
            .collect();
        open.sort();
        open
    }
}

/// Compile (or load the precompiled artifact) on a thread of its own, waiting at most
/// [`MAX_COMPILE_SECONDS`]: a component that takes longer is refused and the caller (a hot
/// swap, a load) goes on; the compilation itself runs to its end in the background, bounded
/// in effort by the shape check before it (`runtime::structure`). A compilation that takes
/// more than a couple of seconds (a JS component's first load) says so every few seconds
/// at INFO, naming the plugin, so a first start is not silent.
fn compile_bounded(
    runtime: &Arc<Runtime>,
    plugin: &str,
    bytes: &[u8],
    sha256: &str,
) -> Result<Component, String> {
    let (done, answer) = std::sync::mpsc::channel();
    let (rt, owned, sha) = (runtime.clone(), bytes.to_vec(), sha256.to_owned());
    std::thread::Builder::new()
        .name("hak-compile".into())
        .spawn(move || {
            let compiled = rt
                .cache
                .load_or_compile(&rt.engine, &owned, &sha, || {
                    super::structure::check(&owned).map(drop)
                })
                .map_err(|e| format!("{e:#}"));
            let _ = done.send(compiled);
        })
        .map_err(|e| format!("cannot start compiling: {e}"))?;
    let started = std::time::Instant::now();
    let limit = std::time::Duration::from_secs(MAX_COMPILE_SECONDS);
    let every = std::time::Duration::from_secs(PROGRESS_SECONDS);
    loop {
        let left = limit.saturating_sub(started.elapsed());
        match answer.recv_timeout(left.min(every)) {
            Ok(compiled) => {
                if started.elapsed() >= every {
                    tracing::info!(
                        plugin,
                        "compiled in {:.1} s; later loads use the precompiled artifact",
                        started.elapsed().as_secs_f64()
                    );
                }
                return compiled;
            }
            Err(_) if started.elapsed() >= limit => {
                return Err(format!(
                    "compiling took longer than {MAX_COMPILE_SECONDS} s; refused"
                ))
            }
            Err(_) => tracing::info!(
                plugin,
                "still compiling ({:.1} MB, {} s so far; first load only)",
                bytes.len() as f64 / 1e6,
                started.elapsed().as_secs()
            ),
        }
    }
}

/// How often a long compilation reports that it is still running.
const PROGRESS_SECONDS: u64 = 2;

/// A compiled, type-checked, described plugin. Cheap to share; instances come from `pre`.
pub struct LoadedPlugin {
    pub spec: PluginSpec,
    pub sha256: String,
    pub size: usize,
    pub description: PluginDescription,
    pub(crate) config_json: String,
    pub(crate) component: Component,
    /// Keeps `component` shared with later loads of the same bytes (`ArtifactCache::share`).
    _shared: super::cache::ShareToken,
    pub(crate) pre: Pre,
    /// `events.on-tool-failure`, when the plugin exports it (contract 0.1.1 and later).
    pub(crate) on_tool_failure: Option<wasmtime::component::ComponentExportIndex>,
    /// `inputs.reads`, when the component exports it (contract 0.2.1).
    pub(crate) reads_func: Option<wasmtime::component::ComponentExportIndex>,
    /// `hak:fast/judge.should-block`, when the component exports it.
    pub(crate) judge_func: Option<wasmtime::component::ComponentExportIndex>,
    /// What the plugin reads of the stage input, per tool (everything when it does not say).
    pub reads: ReadsTable,
    pub stats: Arc<PluginStats>,
    /// Capability-call windows per context scope (`limits.capability_calls_per_minute`).
    pub(crate) quota_windows: QuotaWindows,
    pub(crate) runtime: Arc<Runtime>,
    pub(crate) hedera: Option<Arc<dyn HederaActions>>,
    /// The instance `describe` ran in at load, kept for the first context that calls the
    /// plugin (so loading describes once); `None` once taken or when it cannot be moved.
    spare: Mutex<Option<PluginInstance>>,
}

impl LoadedPlugin {
    /// Load the plugin file at `path` for `spec`. A file this cache has seen (same device,
    /// inode, size, mtime and ctime — the kernel changes ctime on every write) whose
    /// precompiled artifact is on disk is loaded without reading or hashing it; otherwise (or
    /// if that artifact is unusable) the file is read, hashed and checked as usual.
    pub fn load(
        runtime: &Arc<Runtime>,
        spec: PluginSpec,
        path: &Path,
        hedera: Option<Arc<dyn HederaActions>>,
    ) -> Result<Arc<Self>, LoadError> {
        let read = |source| LoadError::Read {
            plugin: spec.name.clone(),
            path: path.display().to_string(),
            source,
        };
        let metadata = std::fs::metadata(path).map_err(read)?;
        let size = metadata.len() as usize;
        if size > MAX_COMPONENT_BYTES {
            return Err(LoadError::TooLarge {
                plugin: spec.name.clone(),
                size,
            });
        }
        let identity = super::cache::FileIdentity::of(&metadata);
        if let Some(sha256) = identity
            .as_ref()
            .and_then(|i| runtime.cache.known_digest(i))
        {
            let pinned_elsewhere = spec
                .sha256
                .as_ref()
                .is_some_and(|pin| !pin.eq_ignore_ascii_case(&sha256));
            if !pinned_elsewhere {
                let component = runtime
                    .cache
                    .live(&sha256)
                    .or_else(|| runtime.cache.artifact(&runtime.engine, &sha256));
                if let Some(component) = component {
                    return Self::from_component(runtime, spec, component, sha256, size, hedera);
                }
            }
        }
        let bytes = std::fs::read(path).map_err(read)?;
        let loaded = Self::from_bytes(runtime, spec, &bytes, hedera)?;
        if let Some(identity) = identity {
            runtime.cache.remember_digest(identity, &loaded.sha256);
        }
        Ok(loaded)
    }

    /// Load a plugin from its component bytes.
    pub fn from_bytes(
        runtime: &Arc<Runtime>,
        spec: PluginSpec,
        bytes: &[u8],
        hedera: Option<Arc<dyn HederaActions>>,
    ) -> Result<Arc<Self>, LoadError> {
        let plugin = spec.name.clone();
        if bytes.len() > MAX_COMPONENT_BYTES {
            return Err(LoadError::TooLarge {
                plugin,
                size: bytes.len(),
            });
        }
        let sha256 = hex::encode(Sha256::digest(bytes));
        if let Some(expected) = &spec.sha256 {
            if !expected.eq_ignore_ascii_case(&sha256) {
                return Err(LoadError::HashMismatch {
                    plugin,
                    expected: expected.clone(),
                    actual: sha256,
                });
            }
        }
        check_component_header(bytes).map_err(|reason| LoadError::NotAComponent {
            plugin: plugin.clone(),
            reason,
        })?;
        let component = match runtime.cache.live(&sha256) {
            Some(component) => component,
            None => compile_bounded(runtime, &plugin, bytes, &sha256).map_err(|reason| {
                LoadError::NotAComponent {
                    plugin: plugin.clone(),
                    reason,
                }
            })?,
        };
        Self::from_component(runtime, spec, component, sha256, bytes.len(), hedera)
    }

    /// Type-check, link and describe a compiled component.
    fn from_component(
        runtime: &Arc<Runtime>,
        spec: PluginSpec,
        component: Component,
        sha256: String,
        size: usize,
        hedera: Option<Arc<dyn HederaActions>>,
    ) -> Result<Arc<Self>, LoadError> {
        let plugin = spec.name.clone();
        // One copy of the machine code for every plugin of these bytes.
        let (component, shared) = runtime.cache.share(&sha256, component);
        let instance_pre =
            runtime
                .linker
                .instantiate_pre(&component)
                .map_err(|e| LoadError::WrongWorld {
                    plugin: plugin.clone(),
                    reason: format!("{e:#}"),
                })?;
        let pre = Pre::new(&component, instance_pre).map_err(|e| LoadError::WrongWorld {
            plugin: plugin.clone(),
            reason: format!("{e:#}"),
        })?;

        let on_tool_failure = super::bindings::EVENTS_INTERFACES
            .iter()
            .find_map(|name| component.get_export_index(None, name))
            .and_then(|events| {
                component.get_export_index(Some(&events), super::bindings::ON_TOOL_FAILURE)
            });
        let reads_func = component
            .get_export_index(None, super::bindings::INPUTS_INTERFACE)
            .and_then(|inputs| component.get_export_index(Some(&inputs), super::bindings::READS));
        let judge_func = component
            .get_export_index(None, super::bindings::JUDGE_INTERFACE)
            .and_then(|judge| {
                component.get_export_index(Some(&judge), super::bindings::SHOULD_BLOCK)
            });
        let config_json = spec.config_json();
        let mut loaded = LoadedPlugin {
            spec,
            sha256,
            size,
            description: PluginDescription {
                name: String::new(),
                description: String::new(),
                relevant_tools: Vec::new(),
                hook_stages: StageSet::default(),
                policy_stages: StageSet::default(),
            },
            config_json,
            component,
            _shared: shared,
            pre,
            on_tool_failure,
            reads_func,
            judge_func,
            reads: ReadsTable::default(),
            stats: Arc::default(),
            quota_windows: QuotaWindows::default(),
            runtime: runtime.clone(),
            hedera,
            spare: Mutex::default(),
        };
        // Describe in a throw-away instance with a throw-away scratchpad.
        let pad = StateHandle::scratch(&loaded.spec.name, loaded.spec.limits.max_state_bytes);
        let (mut instance, info) = PluginInstance::instantiate(&loaded, pad)?;
        if loaded.judge_func.is_some() && !instance.has_judge() {
            tracing::warn!(
                plugin = loaded.spec.name,
                "its {} export does not fit wit/ext/judge.wit: not called; the plugin is judged through policy",
                super::bindings::JUDGE_INTERFACE
            );
            loaded.judge_func = None;
        }
        let info = info.map_err(|message| LoadError::Config {
            plugin: plugin.clone(),
            message,
        })?;
        loaded.description =
            description_from_wit(info).map_err(|message| LoadError::Description {
                plugin: plugin.clone(),
                message,
            })?;
        if loaded.spec.on_error == OnError::Skip && !loaded.description.policy_stages.is_empty() {
            return Err(LoadError::Description {
                plugin,
                message: "on_error = \"skip\" is allowed for hooks only; this plugin is a policy (policies fail closed)".into(),
            });
        }
        if let Some(entries) = instance.reads(loaded.reads_func.as_ref())? {
            loaded.reads = ReadsTable::new(entries);
        }
        *loaded.spare.get_mut().unwrap_or_else(|e| e.into_inner()) = Some(instance);
        Ok(Arc::new(loaded))
    }

    /// The instance described at load, moved to the context of `state`, if it is still there
    /// and can move (see [`PluginInstance::rebind`]).
    pub(crate) fn take_spare(&self, state: StateHandle) -> Option<PluginInstance> {
        let spare = self
            .spare
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()?;
        spare.rebind(self, state)
    }

    /// Whether the operator granted this plugin any network capability.
    pub fn hedera_granted(&self) -> bool {
        Capability::ALL
            .into_iter()
            .any(|c| c.uses_network() && self.spec.grants(c))
    }

    /// A described instance of its own, with a fresh scratchpad, outside any host: for running
    /// a plugin's stages directly (differential tests, tooling).
    pub fn standalone_instance(&self) -> Result<super::PluginInstance, String> {
        let pad = StateHandle::scratch(&self.spec.name, self.spec.limits.max_state_bytes);
        let (instance, described) =
            super::PluginInstance::instantiate(self, pad).map_err(|f| f.to_string())?;
        described.map(|_| instance)
    }

    /// Whether the plugin exports `events` (and so wants failure notifications).
    pub fn observes_failures(&self) -> bool {
        self.on_tool_failure.is_some()
    }

    /// The contract line the component was built for (`0.1` or `0.2`).
    pub fn contract(&self) -> &'static str {
        self.pre.contract()
    }

    /// Names of the component's imports and exports, for `hak plugin inspect`.
    pub fn imports_and_exports(&self) -> (Vec<String>, Vec<String>) {
        let ty = self.component.component_type();
        let engine = &self.runtime.engine;
        let imports = ty
            .imports(engine)
            .map(|(name, _)| name.to_owned())
            .collect();
        let exports = ty
            .exports(engine)
            .map(|(name, _)| name.to_owned())
            .collect();
        (imports, exports)
    }
}

/// Tell garbage, core modules and components apart before handing bytes to the compiler.
fn check_component_header(bytes: &[u8]) -> Result<(), String> {
    if bytes.len() < 8 || &bytes[..4] != b"\0asm" {
        return Err("the file does not start with the WebAssembly magic bytes".into());
    }
    match bytes[4..8] {
        [_, _, 1, 0] => Ok(()),
        [1, 0, 0, 0] => {
            Err("it is a core wasm module; build a component (e.g. --target wasm32-wasip2)".into())
        }
        _ => Err("unknown WebAssembly version or layer".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::LoadError;
    use crate::plugin::{FailureCause, PluginFailure};

    #[test]
    fn a_failure_while_loading_is_named_once_in_an_error_chain() {
        let failure = PluginFailure {
            plugin: "p".into(),
            phase: "describe".into(),
            cause: FailureCause::Trap,
            detail: "unreachable executed".into(),
        };
        let shown = failure.to_string();
        let chain = format!("{:#}", anyhow::Error::from(LoadError::from(failure)));
        assert_eq!(chain, shown);
    }
}
