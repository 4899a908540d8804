//! Loading a plugin: read, size and sha256 checks, compile (or load the precompiled artifact),
//! type-check against the world (`InstancePre`), then `describe` with the operator's config in
//! a throw-away instance. A `LoadedPlugin` is immutable and shared; instances come from it.

use super::bindings::{AgentPluginPre, PluginInfo};
use super::engine::Runtime;
use super::failure::PluginFailure;
use super::hedera_api::{HederaCapability, HEDERA_CAPABILITIES};
use super::instance::PluginInstance;
use crate::limits::MAX_COMPONENT_BYTES;
use crate::manifest::{OnError, PluginSpec};
use crate::stage::{Stage, StageSet};
use crate::state_store::Scratchpad;
use serde::Serialize;
use sha2::{Digest, Sha256};
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
        "plugin {plugin}: does not fit the hedera:agent-kit/agent-plugin@0.1.1 world (or 0.1.0): {reason}"
    )]
    WrongWorld { plugin: String, reason: String },
    #[error("plugin {plugin}: describe rejected its config: {message}")]
    Config { plugin: String, message: String },
    #[error("plugin {plugin}: invalid description: {message}")]
    Description { plugin: String, message: String },
    #[error("{0}")]
    Failed(#[from] PluginFailure),
}

/// What `describe` told the host, checked and in host types.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PluginDescription {
    pub name: String,
    pub description: String,
    pub relevant_tools: Vec<String>,
    #[serde(skip)]
    pub hook_stages: StageSet,
    #[serde(skip)]
    pub policy_stages: StageSet,
}

impl PluginDescription {
    /// The kit's `appliesToMethod`: `'*'` or an exact method name.
    pub fn applies_to(&self, method: &str) -> bool {
        self.relevant_tools.iter().any(|t| t == "*" || t == method)
    }

    pub(crate) fn from_wit(info: PluginInfo) -> Result<Self, String> {
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
            hook_stages: info.hook_stages.into_iter().map(Stage::from_wit).collect(),
            policy_stages: info
                .policy_stages
                .into_iter()
                .map(Stage::from_wit)
                .collect(),
        })
    }
}

/// Calls, blocks and failures of one loaded plugin, and its circuit breaker: after
/// [`PluginStats::TRIP_AFTER`] failures in a row the plugin is reported as tripped, and a hook
/// with `on_error = "skip"` is bypassed until it is replaced (policies stay fail-closed).
#[derive(Debug, Default)]
pub struct PluginStats {
    pub calls: AtomicU64,
    pub blocks: AtomicU64,
    pub errors: AtomicU64,
    consecutive_failures: AtomicU64,
}

impl PluginStats {
    pub const TRIP_AFTER: u64 = 5;

    pub(crate) fn record(&self, blocked: bool, failed: bool) {
        self.calls.fetch_add(1, Ordering::Relaxed);
        if blocked {
            self.blocks.fetch_add(1, Ordering::Relaxed);
        }
        if failed {
            self.errors.fetch_add(1, Ordering::Relaxed);
            self.consecutive_failures.fetch_add(1, Ordering::Relaxed);
        } else {
            self.consecutive_failures.store(0, Ordering::Relaxed);
        }
    }

    /// Whether the plugin failed [`Self::TRIP_AFTER`] times in a row.
    pub fn tripped(&self) -> bool {
        self.consecutive_failures.load(Ordering::Relaxed) >= Self::TRIP_AFTER
    }
}

/// A compiled, type-checked, described plugin. Cheap to share; instances come from `pre`.
pub struct LoadedPlugin {
    pub spec: PluginSpec,
    pub sha256: String,
    pub size: usize,
    pub description: PluginDescription,
    pub(crate) config_json: String,
    pub(crate) component: Component,
    pub(crate) pre: AgentPluginPre<super::sandbox::PluginState>,
    /// `events.on-tool-failure`, when the plugin exports it (contract 0.1.1 and later).
    pub(crate) on_tool_failure: Option<wasmtime::component::ComponentExportIndex>,
    pub stats: PluginStats,
    pub(crate) runtime: Arc<Runtime>,
    pub(crate) hedera: Option<Arc<HederaCapability>>,
}

impl LoadedPlugin {
    /// Load the plugin file at `path` for `spec`.
    pub fn load(
        runtime: &Arc<Runtime>,
        spec: PluginSpec,
        path: &Path,
        hedera: Option<Arc<HederaCapability>>,
    ) -> Result<Arc<Self>, LoadError> {
        let read = |source| LoadError::Read {
            plugin: spec.name.clone(),
            path: path.display().to_string(),
            source,
        };
        let size = std::fs::metadata(path).map_err(read)?.len() as usize;
        if size > MAX_COMPONENT_BYTES {
            return Err(LoadError::TooLarge {
                plugin: spec.name.clone(),
                size,
            });
        }
        let bytes = std::fs::read(path).map_err(read)?;
        Self::from_bytes(runtime, spec, &bytes, hedera)
    }

    /// Load a plugin from its component bytes.
    pub fn from_bytes(
        runtime: &Arc<Runtime>,
        spec: PluginSpec,
        bytes: &[u8],
        hedera: Option<Arc<HederaCapability>>,
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
        let component = runtime
            .cache
            .load_or_compile(&runtime.engine, bytes, &sha256)
            .map_err(|e| LoadError::NotAComponent {
                plugin: plugin.clone(),
                reason: format!("{e:#}"),
            })?;
        let instance_pre =
            runtime
                .linker
                .instantiate_pre(&component)
                .map_err(|e| LoadError::WrongWorld {
                    plugin: plugin.clone(),
                    reason: format!("{e:#}"),
                })?;
        let pre = AgentPluginPre::new(instance_pre).map_err(|e| LoadError::WrongWorld {
            plugin: plugin.clone(),
            reason: format!("{e:#}"),
        })?;

        let on_tool_failure = component
            .get_export_index(None, super::bindings::EVENTS_INTERFACE)
            .and_then(|events| {
                component.get_export_index(Some(&events), super::bindings::ON_TOOL_FAILURE)
            });
        let config_json = spec.config_json();
        let mut loaded = LoadedPlugin {
            spec,
            sha256,
            size: bytes.len(),
            description: PluginDescription {
                name: String::new(),
                description: String::new(),
                relevant_tools: Vec::new(),
                hook_stages: StageSet::default(),
                policy_stages: StageSet::default(),
            },
            config_json,
            component,
            pre,
            on_tool_failure,
            stats: PluginStats::default(),
            runtime: runtime.clone(),
            hedera,
        };
        // Describe in a throw-away instance with a throw-away scratchpad.
        let pad = Arc::new(Mutex::new(Scratchpad::with_cap(
            loaded.spec.limits.max_state_bytes,
        )));
        let (_, info) = PluginInstance::instantiate(&loaded, pad)?;
        let info = info.map_err(|message| LoadError::Config {
            plugin: plugin.clone(),
            message,
        })?;
        loaded.description =
            PluginDescription::from_wit(info).map_err(|message| LoadError::Description {
                plugin: plugin.clone(),
                message,
            })?;
        if loaded.spec.on_error == OnError::Skip && !loaded.description.policy_stages.is_empty() {
            return Err(LoadError::Description {
                plugin,
                message: "on_error = \"skip\" is allowed for hooks only; this plugin is a policy (policies fail closed)".into(),
            });
        }
        Ok(Arc::new(loaded))
    }

    /// Whether the operator granted this plugin any `hedera` capability.
    pub fn hedera_granted(&self) -> bool {
        HEDERA_CAPABILITIES.iter().any(|c| self.spec.grants(c))
    }

    /// A described instance of its own, with a fresh scratchpad, outside any host: for running
    /// a plugin's stages directly (differential tests, tooling).
    pub fn standalone_instance(&self) -> Result<super::PluginInstance, String> {
        let pad = Arc::new(Mutex::new(Scratchpad::with_cap(
            self.spec.limits.max_state_bytes,
        )));
        let (instance, described) =
            super::PluginInstance::instantiate(self, pad).map_err(|f| f.to_string())?;
        described.map(|_| instance)
    }

    /// Whether the plugin exports `events` (and so wants failure notifications).
    pub fn observes_failures(&self) -> bool {
        self.on_tool_failure.is_some()
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
