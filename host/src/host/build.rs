//! Building a [`Host`] from its manifest: the network, the state store, the plugins (OCI
//! sources resolved, components loaded in parallel) and the chain. What must not live here:
//! what a built host does.

use super::*;
use crate::capabilities::HederaActions;
use crate::lifecycle::chain::Chain;
use crate::lifecycle::native::NativePlugin;
use crate::manifest::Manifest;
use crate::manifest::StateBackendKind;
use crate::model::context::AgentContext;
use crate::network::Network;
use crate::observe::decisions::DecisionLog;
use crate::observe::metrics::{Metrics, TimedBackend};
use crate::runtime::{
    ArtifactCache, LoadError, LoadedPlugin, LogSink, Runtime, RuntimeConfig, TracingLogSink,
    WasmPlugin,
};
use crate::state_store::{MemoryBackend, StateBackend};
use crate::strategy::TransactionStrategy;
use crate::tools::ToolRegistry;
use arc_swap::ArcSwap;
use hedera::AccountId;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;

/// Builds a [`Host`] from a manifest.
pub struct HostBuilder {
    manifest: Manifest,
    sink: Arc<dyn LogSink>,
    strategy: Option<Arc<dyn TransactionStrategy>>,
    cache_dir: Option<Option<PathBuf>>,
    natives: Vec<Arc<dyn NativePlugin>>,
    state: StateChoice,
}

/// Where plugin state goes when the manifest has no `[state] backend`.
pub(super) enum StateChoice {
    /// In memory (the library's default).
    Memory,
    /// The journal under this directory (`hak call` and `hak serve`: `.hak/state`).
    DefaultDir(PathBuf),
    /// This backend, whatever the manifest says (tests sharing one store between hosts).
    Given(Arc<dyn StateBackend>),
}

impl HostBuilder {
    pub fn new(manifest: Manifest) -> Self {
        HostBuilder {
            manifest,
            sink: Arc::new(TracingLogSink),
            strategy: None,
            cache_dir: None,
            natives: Vec::new(),
            state: StateChoice::Memory,
        }
    }

    /// Keep plugin state in a journal under `dir` unless the manifest's `[state]` says otherwise
    /// (what `hak call` and `hak serve` do, with `.hak/state`).
    pub fn default_state_dir(mut self, dir: PathBuf) -> Self {
        self.state = StateChoice::DefaultDir(dir);
        self
    }

    /// Use `backend` for plugin state (overrides the manifest's `[state]`).
    pub fn state_backend(mut self, backend: Arc<dyn StateBackend>) -> Self {
        self.state = StateChoice::Given(backend);
        self
    }

    /// Where plugin logs go (default: `tracing`).
    pub fn log_sink(mut self, sink: Arc<dyn LogSink>) -> Self {
        self.sink = sink;
        self
    }

    /// The strategy for the custom modes (the kit's `context.transactionStrategy`).
    pub fn transaction_strategy(mut self, strategy: Arc<dyn TransactionStrategy>) -> Self {
        self.strategy = Some(strategy);
        self
    }

    /// Append a trusted native plugin to the chain (after the manifest's plugins).
    pub fn native_plugin(mut self, plugin: Arc<dyn NativePlugin>) -> Self {
        self.natives.push(plugin);
        self
    }

    /// Override the precompiled-artifact directory (`None` disables the disk cache).
    pub fn cache_dir(mut self, dir: Option<PathBuf>) -> Self {
        self.cache_dir = Some(dir);
        self
    }

    pub fn build(self) -> Result<Host, HostError> {
        let manifest = self.manifest;
        let cache_dir = self.cache_dir.unwrap_or_else(|| {
            manifest
                .engine
                .cache_dir
                .clone()
                .or_else(ArtifactCache::default_dir)
        });
        let oci = open_oci(&manifest, cache_dir.clone())?;
        let config = RuntimeConfig {
            cache_dir,
            fuel: manifest.engine.fuel,
            function_cache: None,
        };
        let runtime = Runtime::new(config, self.sink).map_err(HostError::Runtime)?;
        let network = Network::from_manifest(&manifest)?;
        let account_id = match &manifest.context.account_id {
            Some(text) => Some(AccountId::from_str(text).map_err(|e| {
                HostError::Config(format!(
                    "context.account_id: invalid account id {text:?}: {e}"
                ))
            })?),
            None => None,
        };
        let default_context = AgentContext {
            account_id,
            mode: manifest.context.mode.unwrap_or_default(),
        };
        let mode_is_default = manifest.context.mode.is_none();
        if default_context.mode.is_custom() && self.strategy.is_none() {
            return Err(HostError::Config(
                crate::strategy::CUSTOM_NEEDS_STRATEGY.into(),
            ));
        }
        // Every network has a mirror (the `rates` capability); the `hedera` actions refuse
        // without the operator's key.
        let actions = Arc::new(crate::network::OperatorActions::new(&network));
        let rates = crate::capabilities::Capability::Rates.as_str();
        if manifest
            .plugins
            .iter()
            .any(|p| p.capabilities.iter().any(|c| c == rates))
        {
            // Read before the first call needs it: no call waits for the mirror.
            actions.read_rates_in_background();
        }
        let capability = Some(actions as Arc<dyn HederaActions>);
        let mut manifest = manifest;
        let pulled = match &oci {
            Some(resolver) => resolve_sources(resolver, &mut manifest)?,
            None => Vec::new(),
        };
        let mut plugins = Vec::with_capacity(manifest.plugins.len() + self.natives.len());
        for loaded in load_in_parallel(&runtime, &manifest, &pulled, capability.as_ref()) {
            plugins.push(WasmPlugin::member(loaded?));
        }
        plugins.extend(
            self.natives
                .into_iter()
                .map(crate::lifecycle::native::member),
        );
        let metrics = Arc::new(Metrics::new());
        let state: Arc<dyn StateBackend> = Arc::new(TimedBackend::new(
            open_state(&manifest, self.state)?,
            metrics.clone(),
        ));
        let decisions = match &manifest.decisions {
            Some(settings) => {
                let mut settings = settings.clone();
                settings.path = manifest.resolve(&settings.path);
                Some(
                    DecisionLog::open(&settings, metrics.clone())
                        .map_err(|e| HostError::Config(e.to_string()))?,
                )
            }
            None => None,
        };
        let tools = ToolRegistry::native();
        let chain = ArcSwap::from_pointee(Chain::new(plugins, tools.methods()));
        let pause = crate::pause::Switch::open(state.clone());
        let host = Host {
            inner: Arc::new(HostInner {
                runtime,
                chain,
                capability,
                manifest,
                tools,
                network,
                state,
                custom_strategy: self.strategy,
                default_context,
                mode_is_default,
                metrics,
                decisions,
                approvals: std::sync::OnceLock::new(),
                oci,
                pause,
            }),
        };
        host.watch_orphans();
        host.watch_pause();
        Ok(host)
    }
}

/// The OCI resolver, when a manifest plugin names an `oci://` source.
pub(super) fn open_oci(
    manifest: &Manifest,
    cache_dir: Option<PathBuf>,
) -> Result<Option<Arc<crate::oci::resolve::Resolver>>, HostError> {
    if manifest.plugins.iter().all(|p| p.source.is_none()) {
        return Ok(None);
    }
    let trusted = manifest.trusted_keys().map_err(HostError::Config)?;
    Ok(Some(Arc::new(crate::oci::resolve::Resolver::new(
        &manifest.oci,
        &manifest.base_dir,
        cache_dir,
        trusted.cosign,
    ))))
}

/// The component bytes of every `oci://` plugin (verified, from the cache or the registry),
/// by manifest index; each such spec learns its manifest digest, and is pinned to the
/// component's sha256 it was verified with.
pub(super) fn resolve_sources(
    resolver: &crate::oci::resolve::Resolver,
    manifest: &mut Manifest,
) -> Result<Vec<Option<Vec<u8>>>, HostError> {
    let mut pulled = Vec::with_capacity(manifest.plugins.len());
    for spec in &mut manifest.plugins {
        let Some(source) = &spec.source else {
            pulled.push(None);
            continue;
        };
        let oci = |source| HostError::Oci {
            plugin: spec.name.clone(),
            source,
        };
        let reference = crate::oci::OciRef::parse(source).map_err(oci)?;
        let plugin = resolver.resolve(&reference).map_err(oci)?;
        spec.oci_digest = Some(plugin.digest.clone());
        pulled.push(Some(plugin.component));
    }
    Ok(pulled)
}

/// Load the manifest's plugins on up to as many threads as there are cores (reading,
/// deserializing or compiling, type-checking and describing are independent per plugin); the
/// results in manifest order, so the first error reported is the first entry's.
pub(super) fn load_in_parallel(
    runtime: &Arc<Runtime>,
    manifest: &Manifest,
    pulled: &[Option<Vec<u8>>],
    capability: Option<&Arc<dyn HederaActions>>,
) -> Vec<Result<Arc<LoadedPlugin>, LoadError>> {
    let specs = &manifest.plugins;
    let load = |i: usize| {
        let spec = &specs[i];
        match pulled.get(i).and_then(Option::as_ref) {
            Some(bytes) => {
                LoadedPlugin::from_bytes(runtime, spec.clone(), bytes, capability.cloned())
            }
            None => LoadedPlugin::load(
                runtime,
                spec.clone(),
                &manifest.plugin_path(spec),
                capability.cloned(),
            ),
        }
    };
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(specs.len());
    if workers <= 1 {
        return (0..specs.len()).map(load).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut results: Vec<Option<Result<Arc<LoadedPlugin>, LoadError>>> =
        (0..specs.len()).map(|_| None).collect();
    let done = std::sync::Mutex::new(&mut results);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= specs.len() {
                    break;
                }
                let loaded = load(i);
                done.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(loaded);
            });
        }
    });
    results
        .into_iter()
        .map(|r| r.expect("every index is loaded by a worker"))
        .collect()
}

/// The state backend: the manifest's `[state]`, else the builder's default.
pub(super) fn open_state(
    manifest: &Manifest,
    choice: StateChoice,
) -> Result<Arc<dyn StateBackend>, HostError> {
    use crate::state_store::redis::{Persistence, RedisBackend};
    use crate::state_store::{journal::JournalBackend, sqlite::SqliteBackend};
    let config = |e: String| HostError::Config(format!("state: {e}"));
    let section = &manifest.state;
    Ok(match (section.backend, choice) {
        (_, StateChoice::Given(backend)) => backend,
        (Some(StateBackendKind::Memory), _) | (None, StateChoice::Memory) => {
            Arc::new(MemoryBackend::with_quota(section.quota()))
        }
        (Some(kind @ (StateBackendKind::Journal | StateBackendKind::Sqlite)), _) => {
            let dir = section
                .dir
                .clone()
                .unwrap_or_else(|| PathBuf::from(".hak/state"));
            let dir = manifest.resolve(&dir);
            if kind == StateBackendKind::Journal {
                Arc::new(JournalBackend::open_with(&dir, section.quota()).map_err(config)?)
            } else {
                Arc::new(
                    SqliteBackend::open_with(&dir, section.quota(), section.presumed_stopped())
                        .map_err(config)?,
                )
            }
        }
        (None, StateChoice::DefaultDir(dir)) => {
            Arc::new(JournalBackend::open_with(&dir, section.quota()).map_err(config)?)
        }
        (Some(StateBackendKind::Redis), _) => {
            use crate::state_store::redis::{RedisOptions, Topology};
            let (topology, default_wait) = match (&section.cluster, &section.sentinel) {
                (Some(seeds), _) => (
                    Topology::Cluster {
                        seeds: seeds.clone(),
                    },
                    1,
                ),
                (None, Some(sentinels)) => (
                    Topology::Sentinel {
                        sentinels: sentinels.clone(),
                        service: section.service.clone().unwrap_or_default(),
                    },
                    1,
                ),
                (None, None) => (
                    Topology::Single {
                        url: section.url.clone().unwrap_or_default(),
                    },
                    0,
                ),
            };
            let timeout = std::time::Duration::from_millis(section.timeout_ms.unwrap_or(50));
            let persistence = match section.redis_persistence {
                Some(crate::manifest::RedisPersistence::Acknowledged) => Persistence::Acknowledged,
                _ => Persistence::Check,
            };
            Arc::new(
                RedisBackend::open_with(RedisOptions {
                    topology,
                    timeout,
                    persistence,
                    quota: section.quota(),
                    presumed_stopped: section.presumed_stopped(),
                    wait_replicas: section.wait_replicas.unwrap_or(default_wait),
                })
                .map_err(config)?,
            )
        }
    })
}
