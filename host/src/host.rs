//! [`Host`]: a manifest turned into a running host: runtime, loaded plugin chain, tools,
//! network and state store. Cheap to clone; [`Host::session`] gives a per-context runner.
//! Loading and validation happen in [`HostBuilder::build`], never on the call path.

use crate::capabilities::HederaActions;
use crate::context::{AgentContext, AgentMode};
use crate::decisions::DecisionLog;
use crate::lifecycle::chain::{Chain, Member};
use crate::lifecycle::native::NativePlugin;
use crate::lifecycle::{CallEnv, Session};
use crate::manifest::StateBackendKind;
use crate::manifest::{Manifest, NetworkName};
use crate::metrics::{Metrics, Snapshot, TimedBackend};
use crate::network::Network;
use crate::runtime::{
    ArtifactCache, LoadError, LoadedPlugin, LogSink, Runtime, RuntimeConfig, TracingLogSink,
    WasmPlugin,
};
use crate::state_store::{MemoryBackend, StateBackend};
use crate::strategy::{StrategyEnv, TransactionStrategy};
use crate::tools::schema::UnknownKeys;
use crate::tools::{ToolContext, ToolRegistry};
use arc_swap::ArcSwap;
use hedera::AccountId;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;

#[derive(Debug, thiserror::Error)]
pub enum HostError {
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error("{0}")]
    Config(String),
    #[error("cannot start the runtime: {0:#}")]
    Runtime(anyhow::Error),
    #[error("plugin {plugin}: {source}")]
    Oci {
        plugin: String,
        source: crate::oci::OciError,
    },
}

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
enum StateChoice {
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
        };
        let runtime = Runtime::new(config, self.sink).map_err(HostError::Runtime)?;
        let network =
            Network::from_manifest(&manifest).map_err(|e| HostError::Config(format!("{e:#}")))?;
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
        let capability = network.has_operator_key.then(|| {
            Arc::new(crate::network::OperatorActions::new(&network)) as Arc<dyn HederaActions>
        });
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
            }),
        };
        host.watch_orphans();
        Ok(host)
    }
}

/// The OCI resolver, when a manifest plugin names an `oci://` source.
fn open_oci(
    manifest: &Manifest,
    cache_dir: Option<PathBuf>,
) -> Result<Option<Arc<crate::oci::resolve::Resolver>>, HostError> {
    if manifest.plugins.iter().all(|p| p.source.is_none()) {
        return Ok(None);
    }
    let trusted = manifest
        .trust
        .public_keys
        .iter()
        .map(|k| crate::signing::verifying_key(k))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| HostError::Config(format!("trust.public_keys: {e}")))?;
    Ok(Some(Arc::new(crate::oci::resolve::Resolver::new(
        &manifest.oci,
        &manifest.base_dir,
        cache_dir,
        trusted,
    ))))
}

/// The component bytes of every `oci://` plugin (verified, from the cache or the registry),
/// by manifest index; each such spec learns its manifest digest, and is pinned to the
/// component's sha256 it was verified with.
fn resolve_sources(
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
fn load_in_parallel(
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
fn open_state(
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

struct HostInner {
    runtime: Arc<Runtime>,
    /// The current chain; a swap replaces it atomically, calls keep the one they started with.
    chain: ArcSwap<Chain>,
    /// The `hedera` capability plugins may be granted (when an operator can sign).
    capability: Option<Arc<dyn HederaActions>>,
    manifest: Manifest,
    tools: ToolRegistry,
    network: Network,
    state: Arc<dyn StateBackend>,
    custom_strategy: Option<Arc<dyn TransactionStrategy>>,
    default_context: AgentContext,
    /// The manifest did not name a mode (so the kit's default, autonomous, applies).
    mode_is_default: bool,
    metrics: Arc<Metrics>,
    /// The manifest's `[decisions]` log, when it has one.
    decisions: Option<DecisionLog>,
    /// Where needs-approval verdicts park, once a server face turned them on.
    approvals: std::sync::OnceLock<Arc<crate::approvals::Approvals>>,
    /// Resolves the manifest's `oci://` plugins (and follows their tags in `hak serve`).
    oci: Option<Arc<crate::oci::resolve::Resolver>>,
}

/// A running host. Clone it freely; each agent context gets its own [`Session`].
#[derive(Clone)]
pub struct Host {
    inner: Arc<HostInner>,
}

impl Host {
    /// A session for `context` (plugin instances and scratchpads scoped to it).
    pub fn session(&self, context: AgentContext) -> Session {
        Session::new(Arc::new(self.clone()), context)
    }

    /// A session for the manifest's `[context]`.
    pub fn default_session(&self) -> Session {
        self.session(self.inner.default_context.clone())
    }

    /// Whether the manifest left `[context] mode` unset.
    pub fn manifest_mode_is_default(&self) -> bool {
        self.inner.mode_is_default
    }

    pub fn default_context(&self) -> &AgentContext {
        &self.inner.default_context
    }

    pub fn tools(&self) -> &ToolRegistry {
        &self.inner.tools
    }

    /// The sandboxed plugins of the current chain, in order.
    pub fn plugins(&self) -> Vec<Arc<LoadedPlugin>> {
        self.inner
            .chain
            .load()
            .members()
            .iter()
            .filter_map(|m| m.as_any().downcast_ref::<WasmPlugin>())
            .map(|w| w.loaded().clone())
            .collect()
    }

    /// The current chain's version (1 at start, +1 per swap).
    pub fn chain_version(&self) -> u64 {
        self.inner.chain.load().version()
    }

    /// The manifest the host was built from.
    pub fn manifest(&self) -> &Manifest {
        &self.inner.manifest
    }

    /// The resolver of the manifest's `oci://` plugins (none when no plugin names one).
    pub fn oci(&self) -> Option<&Arc<crate::oci::resolve::Resolver>> {
        self.inner.oci.as_ref()
    }

    /// Replace the chain's members atomically; returns the new version. Calls in flight finish
    /// on the chain they started with; the next call of every session uses the new one.
    pub(crate) fn swap_members(&self, members: Vec<Member>) -> u64 {
        let mut version = 0;
        self.inner.chain.rcu(|current| {
            version = current.version() + 1;
            Chain::versioned(version, members.clone(), self.inner.tools.methods())
        });
        version
    }

    /// The `hedera` capability to hand to plugins loaded later (hot-swapped).
    pub(crate) fn capability(&self) -> Option<Arc<dyn HederaActions>> {
        self.inner.capability.clone()
    }

    pub fn runtime(&self) -> &Arc<Runtime> {
        &self.inner.runtime
    }

    /// GET a path from the configured mirror node (`/accounts/0.0.1002`), as the query tools do.
    pub fn mirror_get(&self, path: &str) -> Result<serde_json::Value, crate::mirror::MirrorError> {
        self.inner.network.mirror.get(path)
    }

    /// The local network, when it runs inside this host.
    pub fn local_network(&self) -> Option<&hak_emu::Emulator> {
        self.inner.network.emulator()
    }

    pub(crate) fn chain(&self) -> Arc<Chain> {
        self.inner.chain.load_full()
    }

    pub(crate) fn network_name(&self) -> &'static str {
        match self.inner.network.name {
            NetworkName::Local => "local",
            NetworkName::Testnet => "testnet",
            NetworkName::Mainnet => "mainnet",
            NetworkName::Previewnet => "previewnet",
            NetworkName::Custom => "custom",
        }
    }

    /// Settle now what can be settled of the budget reservations stopped processes left
    /// (the host also does it in the background: at start, then every 30 s for a shared
    /// store).
    pub fn reconcile_reservations(
        &self,
    ) -> Result<crate::reconcile::Report, crate::state_store::StateError> {
        crate::reconcile::reconcile(
            &*self.inner.state,
            Some(&self.inner.network.mirror),
            crate::state_store::now_ms(),
        )
    }

    /// Reconcile in the background for as long as the host lives: a store shared with
    /// other processes every [`crate::reconcile::EVERY`] (or `[state] presumed_stopped_ms`,
    /// if shorter), a store of this process's own until its orphans from the last run are
    /// settled.
    fn watch_orphans(&self) {
        let shared = self.inner.state.shared();
        let orphans = self.inner.state.orphans().map_or(true, |o| !o.is_empty());
        if !shared && !orphans {
            return;
        }
        // A shared store: as often as a process may be presumed stopped.
        let every = match shared {
            true => crate::reconcile::EVERY.min(self.inner.manifest.state.presumed_stopped()),
            false => crate::reconcile::EVERY,
        };
        let host = Arc::downgrade(&self.inner);
        let spawned = std::thread::Builder::new()
            .name("hak-reconcile".into())
            .spawn(move || loop {
                let Some(inner) = host.upgrade() else { return };
                match (Host { inner }).reconcile_reservations() {
                    Ok(report) if !shared && report.waiting == 0 => return,
                    Ok(_) => {}
                    Err(e) => tracing::warn!("reconciling budget reservations: {e}"),
                }
                let started = std::time::Instant::now();
                while started.elapsed() < every {
                    std::thread::sleep(std::time::Duration::from_secs(1));
                    if host.strong_count() == 0 {
                        return;
                    }
                }
            });
        if let Err(e) = spawned {
            tracing::error!("cannot start reconciling budget reservations: {e}");
        }
    }

    /// Where plugin state lives (scratchpads and budgets).
    pub fn state_backend(&self) -> &Arc<dyn StateBackend> {
        &self.inner.state
    }

    /// The host's metrics (what `GET /metrics` renders).
    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.inner.metrics
    }

    /// Let calls park on needs-approval verdicts until an approver decides (`hak serve`,
    /// `hak mcp`); without it such a verdict blocks at once. Idempotent.
    pub fn approvals(&self) -> &Arc<crate::approvals::Approvals> {
        self.inner.approvals.get_or_init(|| {
            Arc::new(crate::approvals::Approvals::new(
                self.inner.manifest.approvals,
            ))
        })
    }

    /// The decision log, when the manifest has a `[decisions]` section.
    pub fn decision_log(&self) -> Option<&DecisionLog> {
        self.inner.decisions.as_ref()
    }

    /// The metrics text, with what the host holds now (`sessions`: idle sessions kept and
    /// evicted so far, from the server's pool).
    pub fn render_metrics(&self, sessions: (u64, u64)) -> String {
        let chain = self.inner.chain.load();
        let wasm = self.plugins();
        self.inner.metrics.render(&Snapshot {
            chain_version: chain.version(),
            chain_plugins: chain.members().len() as u64,
            instances_live: crate::runtime::live_instances(),
            instances_created: wasm
                .iter()
                .map(|p| {
                    p.stats
                        .instantiations
                        .load(std::sync::atomic::Ordering::Relaxed)
                })
                .sum(),
            sessions_idle: sessions.0,
            sessions_evicted: sessions.1,
        })
    }
}

/// The host is where sessions run: every [`CallEnv`] answer comes from its manifest, network
/// and chain. The tool context and the strategy env are built here and nowhere else.
impl CallEnv for Host {
    fn tools(&self) -> &ToolRegistry {
        Host::tools(self)
    }

    fn chain(&self) -> Arc<Chain> {
        Host::chain(self)
    }

    fn chain_version(&self) -> u64 {
        Host::chain_version(self)
    }

    fn state_backend(&self) -> &Arc<dyn StateBackend> {
        Host::state_backend(self)
    }

    fn network_name(&self) -> &'static str {
        Host::network_name(self)
    }

    fn explain_blocks(&self) -> bool {
        self.inner.manifest.context.explain_blocks.unwrap_or(false)
    }

    fn call_budget(&self) -> std::time::Duration {
        self.inner.manifest.engine.call_budget()
    }

    fn tool_context<'a>(
        &'a self,
        context: &'a AgentContext,
        wants_summary: bool,
    ) -> ToolContext<'a> {
        let network = &self.inner.network;
        ToolContext {
            context,
            operator_account_id: network.operator_account_id,
            operator_public_key: network.client.get_operator_public_key(),
            node_account_ids: &network.node_account_ids,
            wants_summary,
            mirror: &network.mirror,
            network: network.name,
            unknown_keys: if self.inner.manifest.context.strict_params {
                UnknownKeys::Refuse
            } else {
                UnknownKeys::Strip
            },
        }
    }

    fn strategy(&self, mode: AgentMode) -> Result<&dyn TransactionStrategy, String> {
        crate::strategy::for_mode(mode, self.inner.custom_strategy.as_deref())
    }

    fn metrics(&self) -> &Arc<Metrics> {
        &self.inner.metrics
    }

    fn decision_log(&self) -> Option<&DecisionLog> {
        self.inner.decisions.as_ref()
    }

    fn approver(&self) -> Option<Arc<dyn crate::approvals::Approver>> {
        self.inner
            .approvals
            .get()
            .map(|a| a.clone() as Arc<dyn crate::approvals::Approver>)
    }

    fn strategy_env<'a>(&'a self, context: &'a AgentContext) -> StrategyEnv<'a> {
        let network = &self.inner.network;
        StrategyEnv {
            context,
            client: &network.client,
            node_account_ids: &network.node_account_ids,
            runtime: network.runtime(),
            has_operator_key: network.has_operator_key,
            mirror: Some(&network.mirror),
        }
    }
}
