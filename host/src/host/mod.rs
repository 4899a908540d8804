//! [`Host`]: a manifest turned into a running host: runtime, loaded plugin chain, tools,
//! network and state store. Cheap to clone; [`Host::session`] gives a per-context runner.
//! Loading and validation happen in [`HostBuilder::build`], never on the call path.

mod build;
mod kill_switch;

pub use build::HostBuilder;

use crate::capabilities::HederaActions;
use crate::lifecycle::chain::{Chain, Member};
use crate::lifecycle::{CallEnv, Session};
use crate::manifest::{Manifest, NetworkName};
use crate::model::context::{AgentContext, AgentMode};
use crate::network::Network;
use crate::observe::decisions::DecisionLog;
use crate::observe::metrics::{Metrics, Snapshot};
use crate::runtime::{LoadError, LoadedPlugin, Runtime, WasmPlugin};
use crate::state_store::StateBackend;
use crate::strategy::{StrategyEnv, TransactionStrategy};
use crate::tools::schema::UnknownKeys;
use crate::tools::{ToolContext, ToolRegistry};
use arc_swap::ArcSwap;
use std::sync::Arc;

#[derive(Debug, thiserror::Error)]
pub enum HostError {
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error("{0}")]
    Config(String),
    #[error(transparent)]
    Network(#[from] crate::network::NetworkError),
    #[error("cannot start the runtime: {0:#}")]
    Runtime(anyhow::Error),
    #[error("plugin {plugin}: {source}")]
    Oci {
        plugin: String,
        source: crate::oci::OciError,
    },
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
    /// The kill switch, kept in the state store ([`crate::pause`]).
    pause: crate::pause::Switch,
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
            paused: self.inner.pause.is_paused(),
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
            evm_factories: &network.evm_factories,
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

    fn paused(&self) -> Option<Arc<crate::pause::Paused>> {
        self.inner.pause.current()
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
