//! The operator's manifest, `hak.toml`: network, operator, agent context and the ordered
//! plugin list with configs, capabilities and limits. Parsing and validation only: loading
//! plugins is `runtime`'s job, building clients is `network`'s.

use crate::capabilities::Capability;
use crate::model::context::AgentMode;
use crate::model::limits::PluginLimits;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;

mod validate;

/// The manifest used when no `--config` is given: the local network emulated inside hak,
/// autonomous mode for its operator account 0.0.1001, no plugins. Needs no key and no
/// connection to anything outside the process.
pub const EMBEDDED_DEFAULT: &str = r#"
[network]
name = "local"

[context]
account_id = "0.0.1001"
"#;

#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    #[error("cannot read manifest {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("invalid manifest {path}: {message}")]
    Invalid { path: String, message: String },
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    #[serde(default)]
    pub network: NetworkSection,
    pub operator: Option<OperatorSection>,
    #[serde(default)]
    pub context: ContextSection,
    #[serde(default)]
    pub engine: EngineSection,
    #[serde(default)]
    pub plugins: Vec<PluginSpec>,
    #[serde(default)]
    pub trust: TrustSection,
    #[serde(default)]
    pub state: StateSection,
    /// Who may call tools through `hak serve`, each bound to its context.
    #[serde(default)]
    pub agents: Vec<AgentSpec>,
    #[serde(default)]
    pub server: ServerSection,
    /// The decision log: one JSON line per call (off when absent).
    pub decisions: Option<crate::observe::decisions::DecisionSettings>,
    /// How long calls parked on a needs-approval verdict wait, how many may, and how many
    /// approvers must approve one.
    #[serde(default)]
    pub approvals: crate::approvals::ApprovalSettings,
    /// The people who approve parked calls (`[[approvers]]`), each by a bearer key of their
    /// own: they read and decide the calls awaiting approval, nothing else.
    #[serde(default)]
    pub approvers: Vec<ApproverSpec>,
    /// Plugins named by `oci://` references: the cache, plain-HTTP registries, how often a
    /// followed tag is checked.
    #[serde(default)]
    pub oci: crate::oci::resolve::OciSettings,
    /// Directory the manifest was read from; relative plugin paths resolve against it.
    #[serde(skip)]
    pub base_dir: PathBuf,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum NetworkName {
    /// The local network: hak's emulator, inside hak (default) or a running `hak emu`.
    #[default]
    Local,
    Testnet,
    Mainnet,
    Previewnet,
    Custom,
}

impl NetworkName {
    /// The JS SDK's `LedgerId.toString()` for the network (`local-node`, `testnet`, …).
    pub fn ledger_name(self) -> &'static str {
        match self {
            NetworkName::Local => "local-node",
            NetworkName::Testnet => "testnet",
            NetworkName::Mainnet => "mainnet",
            NetworkName::Previewnet => "previewnet",
            NetworkName::Custom => "custom",
        }
    }
}

#[derive(Clone, Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct NetworkSection {
    #[serde(default)]
    pub name: NetworkName,
    /// `custom` only: gRPC address → node account id, e.g. `"127.0.0.1:50211" = "0.0.3"`.
    #[serde(default)]
    pub nodes: BTreeMap<String, String>,
    /// Mirror node REST base URL (`custom`; overrides the named network's default).
    pub mirror_url: Option<String>,
    /// Nodes that return-bytes transactions are frozen for (default: the network's nodes).
    #[serde(default)]
    pub node_account_ids: Vec<String>,
    /// `local` only: the gRPC address of a running `hak emu` (e.g. `127.0.0.1:50211`). Unset,
    /// hak starts the emulator inside its own process on free loopback ports.
    pub grpc: Option<String>,
    /// `local`, inside hak: keep the emulated ledger in this directory between runs
    /// (relative to the manifest). Unset, every run starts from genesis.
    pub state_dir: Option<PathBuf>,
    /// How long the SDK keeps trying one transaction or receipt before giving up (an unknown
    /// outcome: the call answers `OUTCOME_UNKNOWN` and budgets count it). Default: the SDK's.
    pub request_timeout_ms: Option<u64>,
    /// How long the exchange rate read from the mirror for the `rates` capability is kept at
    /// most, 1–3600 s (it is never kept past its expiry). Default 60.
    pub rates_refresh_seconds: Option<u32>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OperatorSection {
    pub account_id: String,
    /// Name of the environment variable holding the operator's private key (DER or hex).
    /// The key itself is never written in the manifest.
    pub key_env: String,
}

#[derive(Clone, Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct ContextSection {
    pub account_id: Option<String>,
    /// Unset means the kit's default, autonomous.
    pub mode: Option<AgentMode>,
    /// Refuse params with keys a tool's schema does not name (`Field "x" - Unrecognized
    /// key`) instead of ignoring them as the kit's zod schemas do (default false).
    #[serde(default)]
    pub strict_params: bool,
    /// Append a blocking policy's reason to `humanMessage` (`… Reason: <reason>`), so the agent
    /// learns why; off keeps the kit's exact envelope text. Unset: off for `hak call` / `hak
    /// serve` and the library (the kit's text), on for `hak mcp` (an agent reads it).
    #[serde(default)]
    pub explain_blocks: Option<bool>,
}

#[derive(Clone, Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct EngineSection {
    /// Where precompiled plugin artifacts are kept (default: `$HAK_CACHE_DIR`, else
    /// `$XDG_CACHE_HOME/hak`, else `~/.cache/hak`).
    pub cache_dir: Option<PathBuf>,
    /// Count guest instructions so plugins may set `limits.fuel` (slower guests; default off).
    #[serde(default)]
    pub fuel: bool,
    /// Wall-clock milliseconds all plugins of one tool call may take together — their guest
    /// calls, the host calls those make (network capabilities, state) and clock waits; not
    /// the wait for an approver (default [`crate::model::limits::DEFAULT_CALL_BUDGET_MS`]).
    pub call_budget_ms: Option<u64>,
}

impl EngineSection {
    /// `call_budget_ms`, or its default.
    pub fn call_budget(&self) -> std::time::Duration {
        std::time::Duration::from_millis(
            self.call_budget_ms
                .unwrap_or(crate::model::limits::DEFAULT_CALL_BUDGET_MS),
        )
    }
}

/// Where plugin state (scratchpads and budgets) lives: `[state]`.
#[derive(Clone, Debug, Deserialize, Default, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct StateSection {
    /// `memory` (one process), `journal` (durable under `dir`, owned by one process at a
    /// time), `sqlite` (durable under `dir`, shared by processes at once) or `redis` (shared
    /// by replicas, at `url`). Unset: the caller's default (`hak call` and `hak serve`:
    /// journal under `.hak/state`; the library: memory).
    pub backend: Option<StateBackendKind>,
    /// The journal or sqlite backend's directory (relative to the manifest; default `.hak/state`).
    pub dir: Option<PathBuf>,
    /// The redis backend on one server: its URL, e.g. `redis://127.0.0.1:6379/0`.
    pub url: Option<String>,
    /// The redis backend on a Redis Cluster: seed nodes (`redis://host:port`), the rest
    /// discovered. Every key of one (agent context, plugin) shares a hash slot.
    pub cluster: Option<Vec<String>>,
    /// The redis backend on a primary with replicas that Sentinel follows: the sentinels
    /// (`redis://host:26379`), with `service` naming the primary. The primary is reached with
    /// the first sentinel URL's database, username and password.
    pub sentinel: Option<Vec<String>>,
    /// The Sentinel service (`sentinel monitor NAME …`) whose primary holds the state.
    pub service: Option<String>,
    /// The redis backend: how many replicas must confirm each write (`WAIT`) before it
    /// counts (default 1 with `cluster` or `sentinel`, 0 with `url`). A write acknowledged by
    /// a primary that fails before its replica has it would be forgotten by the promoted
    /// replica; unconfirmed, a reservation is refused (the policy blocks) instead.
    pub wait_replicas: Option<u32>,
    /// Bytes one plugin may hold over all agent contexts (scratchpad entries and budget
    /// keys, each counting 64 bytes beyond its text; default 16 MiB). Past it that plugin's
    /// writes are refused (its policy blocks), no one else's.
    pub max_plugin_bytes: Option<usize>,
    /// Bytes the whole store may hold (default 256 MiB).
    pub max_total_bytes: Option<usize>,
    /// The redis backend: each operation (connecting included) within this many ms (default
    /// 50, inside the default 100 ms plugin deadline); past it the store is unavailable and
    /// the policy blocks.
    pub timeout_ms: Option<u64>,
    /// The redis backend: `"checked"` (default: at start the server must run with
    /// `appendonly yes`, or hak refuses to start) or `"acknowledged"` (the operator vouches
    /// for persistence, e.g. a managed Redis that refuses `CONFIG`).
    pub redis_persistence: Option<RedisPersistence>,
    /// The sqlite and redis backends (shared by processes): how long a process may go unseen
    /// (it says it is alive every sixth of this) before its unsettled budget reservations are
    /// settled by the others' reconcilers (default 30000 ms; the same on every process of
    /// one store).
    pub presumed_stopped_ms: Option<u64>,
}

/// `[state] redis_persistence`.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum RedisPersistence {
    Checked,
    Acknowledged,
}

impl StateSection {
    /// The quotas this section sets, over the defaults.
    /// `presumed_stopped_ms`, or its default.
    pub fn presumed_stopped(&self) -> std::time::Duration {
        std::time::Duration::from_millis(
            self.presumed_stopped_ms
                .unwrap_or(crate::state_store::PRESUMED_STOPPED.as_millis() as u64),
        )
    }

    pub fn quota(&self) -> crate::state_store::Quota {
        let default = crate::state_store::Quota::default();
        crate::state_store::Quota {
            plugin_bytes: self.max_plugin_bytes.unwrap_or(default.plugin_bytes),
            total_bytes: self.max_total_bytes.unwrap_or(default.total_bytes),
        }
    }
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum StateBackendKind {
    Memory,
    Journal,
    Sqlite,
    Redis,
}

/// One agent allowed to call tools through `hak serve` (`[[agents]]`). When any is configured,
/// every tool call needs `Authorization: Bearer <key>`, and the key decides the context.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentSpec {
    /// Used in logs.
    pub name: String,
    /// The NAME of the env var holding the agent's key (never the key itself)…
    pub key_env: Option<String>,
    /// …or the sha256 (hex) of the key, so the server never holds the key at all.
    pub key_sha256: Option<String>,
    /// The context's account (default: `[context] account_id`).
    pub account_id: Option<String>,
    /// The context's mode (default: `[context] mode`); the custom modes need the library API.
    pub mode: Option<AgentMode>,
    /// The tools it may call (default: all).
    #[serde(default)]
    pub tools: Vec<String>,
    /// Let this agent pick its account per request with `x-hak-account-id` (default: no).
    #[serde(default)]
    pub allow_account_header: bool,
}

/// One approver of parked calls (`[[approvers]]`): named in every decision it takes, known
/// by its bearer key.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApproverSpec {
    /// What the decision log, the listing and the agent read (`admin` is the admin token's).
    pub name: String,
    /// The NAME of the env var holding the approver's key…
    pub key_env: Option<String>,
    /// …or the sha256 (hex) of the key.
    pub key_sha256: Option<String>,
}

/// `hak serve`'s HTTP settings (`[server]`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServerSection {
    /// Host names (with port) requests may address besides IP literals and `localhost`
    /// (any other `Host` is refused: DNS rebinding).
    pub hosts: Vec<String>,
    /// Browser origins allowed to call (default none: a request with an `Origin` is refused).
    pub allowed_origins: Vec<String>,
    /// Tool calls running at once; more wait their turn.
    pub max_concurrent_calls: usize,
    /// Idle agent contexts (with their plugin instances) are evicted after this long.
    pub idle_session_seconds: u64,
    /// The memory limits of the plugin instances kept by idle contexts may add up to this much.
    pub idle_memory_mib: u64,
    /// On SIGTERM/SIGINT, how long in-flight calls may take to finish.
    pub drain_seconds: u64,
}

impl Default for ServerSection {
    fn default() -> Self {
        ServerSection {
            hosts: Vec::new(),
            allowed_origins: Vec::new(),
            max_concurrent_calls: 32,
            idle_session_seconds: 300,
            idle_memory_mib: 1024,
            drain_seconds: 30,
        }
    }
}

/// Who may sign plugins that a running host loads from its plugins directory or admin API.
#[derive(Clone, Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct TrustSection {
    /// Trusted publisher keys: a cosign public key (the path of a `cosign.pub` PEM file,
    /// relative to the manifest, or its text), which verifies OCI signatures and plugin files
    /// signed as `cosign sign-blob` does; or an ed25519 key (64 hex digits), which verifies
    /// plugin files signed by `hak plugin sign --key-env` only.
    #[serde(default)]
    pub public_keys: Vec<String>,
    /// Refuse every hot-loaded plugin without a valid signature by one of `public_keys`.
    #[serde(default)]
    pub require_signatures: bool,
}

/// A watched plugin's settings, in `<name>.toml` beside `<name>.wasm`: the keys of a
/// `[[plugins]]` entry but `name` (the file name) and `path`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginSidecar {
    pub sha256: Option<String>,
    #[serde(default = "empty_table")]
    pub config: toml::Table,
    #[serde(default)]
    pub capabilities: Vec<String>,
    #[serde(default)]
    pub limits: PluginLimits,
    #[serde(default)]
    pub on_error: OnError,
    /// false: shadow mode (runs on real calls, its answers recorded, never applied).
    #[serde(default = "enforce_default")]
    pub enforce: bool,
}

fn enforce_default() -> bool {
    true
}

impl PluginSidecar {
    /// The full spec for plugin `name` at `path`.
    pub fn into_spec(self, name: &str, path: PathBuf) -> PluginSpec {
        PluginSpec {
            name: name.to_owned(),
            path,
            source: None,
            oci_digest: None,
            sha256: self.sha256,
            config: self.config,
            capabilities: self.capabilities,
            limits: self.limits,
            on_error: self.on_error,
            enforce: self.enforce,
        }
    }
}

/// What a plugin does when it fails (trap, deadline, memory, bad output).
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum OnError {
    /// Fail the tool call (fail-closed). The only choice for policies.
    #[default]
    Block,
    /// Log and continue as if the hook had proceeded. Hooks only.
    Skip,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginSpec {
    /// The operator's name for this plugin; used in failure messages and logs.
    pub name: String,
    /// The component file (relative to the manifest). Exactly one of `path` and `source`.
    #[serde(default)]
    pub path: PathBuf,
    /// The component as an OCI artifact: `oci://REGISTRY/REPO@sha256:<hex>` (pinned) or
    /// `oci://REGISTRY/REPO:TAG` (followed: `hak serve` swaps in what the tag names next).
    pub source: Option<String>,
    /// The manifest digest an OCI plugin was loaded from (set when it is resolved).
    #[serde(skip)]
    pub oci_digest: Option<String>,
    /// Optional pin: the component's sha256 (hex). A mismatch refuses the plugin.
    pub sha256: Option<String>,
    /// Any TOML table; handed to `describe` as JSON.
    #[serde(default = "empty_table")]
    pub config: toml::Table,
    /// Capabilities granted to this plugin, e.g. `hedera:submit-topic-message`.
    #[serde(default)]
    pub capabilities: Vec<String>,
    #[serde(default)]
    pub limits: PluginLimits,
    #[serde(default)]
    pub on_error: OnError,
    /// `false` runs the plugin in shadow mode: called on real calls, its blocks,
    /// replacements and failures recorded (decision log, metrics, `GET /v1/plugins`) but never
    /// changing a call. Promote it by setting `true` (a hot-swapped settings change).
    #[serde(default = "enforce_default")]
    pub enforce: bool,
}

fn empty_table() -> toml::Table {
    toml::Table::new()
}

impl PluginSpec {
    /// The plugin's config as the JSON text handed to `describe`.
    pub fn config_json(&self) -> String {
        serde_json::to_string(&self.config).unwrap_or_else(|_| "{}".into())
    }

    pub fn grants(&self, capability: Capability) -> bool {
        self.capabilities.iter().any(|c| c == capability.as_str())
    }

    /// Checks of one entry that need no file (`at` names it in errors).
    pub fn validate(&self, at: &str, fuel_enabled: bool) -> Result<(), String> {
        if self.name.trim().is_empty() {
            return Err(format!("{at}: name must not be empty"));
        }
        self.limits.validate().map_err(|e| format!("{at}: {e}"))?;
        if self.limits.fuel.is_some() && !fuel_enabled {
            return Err(format!("{at}: limits.fuel needs [engine] fuel = true"));
        }
        match (&self.source, self.path.as_os_str().is_empty()) {
            (Some(source), true) => {
                crate::oci::OciRef::parse(source).map_err(|e| format!("{at}: source: {e}"))?;
            }
            (None, false) => {}
            _ => return Err(format!("{at}: set exactly one of path and source")),
        }
        if let Some(pin) = &self.sha256 {
            if pin.len() != 64 || !pin.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(format!("{at}: sha256 must be 64 hex digits"));
            }
        }
        for cap in &self.capabilities {
            if Capability::parse(cap).is_none() {
                return Err(format!(
                    "{at}: unknown capability {cap:?} (known: {})",
                    Capability::known()
                ));
            }
        }
        Ok(())
    }
}

impl Manifest {
    /// Read and validate a manifest file.
    pub fn load(path: &Path) -> Result<Self, ManifestError> {
        let text = std::fs::read_to_string(path).map_err(|source| ManifestError::Read {
            path: path.to_owned(),
            source,
        })?;
        let base = path.parent().map(Path::to_owned).unwrap_or_default();
        Self::parse(&text, &path.display().to_string(), base)
    }

    /// The embedded default manifest.
    pub fn embedded_default() -> Self {
        Self::parse(EMBEDDED_DEFAULT, "<embedded default>", PathBuf::from("."))
            .expect("the embedded default manifest is valid")
    }

    /// Parse and validate manifest text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str, base_dir: PathBuf) -> Result<Self, ManifestError> {
        let invalid = |message: String| ManifestError::Invalid {
            path: origin.into(),
            message,
        };
        let mut manifest: Manifest = toml::from_str(text).map_err(|e| invalid(e.to_string()))?;
        manifest.base_dir = base_dir;
        manifest.validate().map_err(invalid)?;
        Ok(manifest)
    }

    /// The keys `[trust] public_keys` names (key files read now); the error names the entry.
    pub fn trusted_keys(&self) -> Result<crate::signing::TrustedKeys, String> {
        crate::signing::TrustedKeys::parse(&self.trust.public_keys, &self.base_dir)
            .map_err(|(i, e)| format!("trust.public_keys[{i}]: {e}"))
    }

    /// A path from the manifest, resolved against the manifest's directory.
    pub fn resolve(&self, path: &Path) -> PathBuf {
        if path.is_absolute() {
            path.to_owned()
        } else {
            self.base_dir.join(path)
        }
    }

    /// A plugin's path, resolved against the manifest's directory.
    pub fn plugin_path(&self, spec: &PluginSpec) -> PathBuf {
        if spec.path.is_absolute() {
            spec.path.clone()
        } else {
            self.base_dir.join(&spec.path)
        }
    }
}

#[cfg(test)]
mod tests;
