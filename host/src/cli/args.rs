//! The command line's arguments (clap): the commands, their options and how a mode or an
//! account id is read. What must not live here: what a command does.

use crate::model::context::AgentMode;
use clap::{Parser, Subcommand};
use hedera::AccountId;
use std::path::PathBuf;
use std::str::FromStr;

#[derive(Parser)]
#[command(
    name = "hak",
    version,
    about = "Hedera Agent Kit tools with sandboxed WebAssembly hooks and policies",
    after_help = "Logs go to stderr: HAK_LOG sets the level (error, warn (default), info, debug, trace); \
                  HAK_LOG_FORMAT=json writes one JSON object per line. A manifest's [decisions] \
                  section records every call as a JSON line (docs/OPERATIONS.md)."
)]
pub(super) struct Cli {
    #[command(subcommand)]
    pub(super) command: Command,
}

#[derive(clap::Args)]
pub(super) struct HostArgs {
    /// The manifest (default: the embedded one: the local network in-process, autonomous mode,
    /// no plugins).
    #[arg(long, short)]
    pub(super) config: Option<PathBuf>,
    /// Agent mode: autonomous or return-bytes (the custom modes need a transaction strategy,
    /// which only the library API can supply).
    #[arg(long, value_parser = cli_mode)]
    pub(super) mode: Option<AgentMode>,
    /// The agent context's account id (payer in return-bytes mode).
    #[arg(long, value_parser = account_id)]
    pub(super) account_id: Option<AccountId>,
}

pub(super) fn cli_mode(text: &str) -> Result<AgentMode, String> {
    let mode = AgentMode::parse(text)?;
    if mode.is_custom() {
        return Err(format!(
            "mode {mode} needs a transaction strategy, which only the library API can supply"
        ));
    }
    Ok(mode)
}

pub(super) fn account_id(text: &str) -> Result<AccountId, String> {
    AccountId::from_str(text).map_err(|e| e.to_string())
}

#[derive(Subcommand)]
pub(super) enum Command {
    /// Run one tool call and print the result envelope as JSON.
    Call {
        tool: String,
        params: String,
        #[command(flatten)]
        host: HostArgs,
        /// Write every stage input the call produced to this directory
        /// (`<n>-<stage>.json`, the input of `hak plugin test`).
        #[arg(long)]
        record: Option<PathBuf>,
    },
    /// Re-run recorded calls (a decision log written with `[decisions] params = "full"`)
    /// through --config's chain, in return-bytes mode on a scratch state store (nothing is
    /// submitted, no budget spent), and print each call whose verdict differs as a JSON line,
    /// then a summary `{"calls", "same", "changed", "skipped"}`. Exits 1 when any changed.
    Replay {
        /// The decision log (JSON lines).
        log: PathBuf,
        #[command(flatten)]
        host: HostArgs,
    },
    /// List the tools; with --json, each with method, name, the kit's description for the
    /// context (the manifest's, or --mode / --account-id), type and JSON schema; with
    /// --shapes, every tool's stage JSON (raw params, normalised params, coreActionResult) as
    /// JSON Schemas, TypeScript declarations, Go structs or Python TypedDicts.
    Tools {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
        /// Print the stage JSON shapes instead: json (JSON Schemas), ts, go or py.
        #[arg(long, value_enum, conflicts_with = "json")]
        shapes: Option<crate::authoring::codegen::ShapesFormat>,
        #[command(flatten)]
        host: HostArgs,
    },
    /// Run the local Hedera network until interrupted; the first stdout line is a JSON object
    /// with the addresses and the operator's credentials.
    Emu(EmuArgs),
    /// Serve tool calls over a local HTTP API, with plugins hot-swapped from a watched
    /// directory or the admin routes; the first stdout line is `{"listen": "http://…"}`.
    Serve {
        #[command(flatten)]
        host: HostArgs,
        /// Address to bind (loopback by default).
        #[arg(long, default_value = "127.0.0.1:8787")]
        listen: std::net::SocketAddr,
        /// Directory of hot-loaded plugins (`<name>.wasm`, optional `<name>.toml` settings and
        /// `<name>.wasm.sig` signature), loaded after the manifest's in file-name order.
        #[arg(long)]
        plugins_dir: Option<PathBuf>,
        /// Listen on a non-loopback address without agent keys ([[agents]]) or without
        /// HAK_ADMIN_TOKEN (refused otherwise: anyone on the network could call tools or
        /// remove a policy).
        #[arg(long)]
        insecure: bool,
        /// With [[agents]] and no HAK_ADMIN_TOKEN, serve the admin routes (approvals, plugins,
        /// metrics) anyway, to every caller — agents included. Without it they are off.
        #[arg(long)]
        admin_without_token: bool,
    },
    /// Serve the tools to AI agents over the Model Context Protocol: on stdin/stdout (for a
    /// client that starts hak), or over streamable HTTP at `http://<listen>/mcp` with
    /// --listen (the first stdout line is then `{"listen": "http://…/mcp"}`), beside `hak
    /// serve`'s admin routes and console (`/console`, HAK_ADMIN_TOKEN as for `hak serve`).
    /// Plugins as in `hak serve`, hot-swapped from --plugins-dir; blocked calls tell the
    /// agent the policy's reason unless `[context] explain_blocks = false`.
    Mcp {
        #[command(flatten)]
        host: HostArgs,
        /// Serve streamable HTTP on this address instead of stdio.
        #[arg(long)]
        listen: Option<std::net::SocketAddr>,
        /// Directory of hot-loaded plugins, as for `hak serve`.
        #[arg(long)]
        plugins_dir: Option<PathBuf>,
        /// With --listen on a non-loopback address: serve without agent keys ([[agents]]).
        #[arg(long)]
        insecure: bool,
        /// With --listen, [[agents]] and no HAK_ADMIN_TOKEN: serve the admin routes and the
        /// console anyway, to every caller — agents included. Without it they are off.
        #[arg(long, requires = "listen")]
        admin_without_token: bool,
    },
    /// Calls a running `hak serve` (or `hak mcp --listen`) holds for approval (a policy
    /// answered needs-approval): list them, approve or deny one, as the approver whose bearer
    /// key `$KEY_ENV` holds (`[[approvers]]`; the admin token approves as `admin`).
    Approvals {
        #[command(subcommand)]
        command: ApprovalsCommand,
        /// The server's address.
        #[arg(long, default_value = "http://127.0.0.1:8787", global = true)]
        server: String,
        /// The env var holding your key: an approver's, or the admin token.
        #[arg(long, default_value = "HAK_ADMIN_TOKEN", global = true)]
        key_env: String,
    },
    /// The kill switch of a running `hak serve` (or `hak mcp --listen`): block every tool
    /// that changes the ledger at once, with REASON (queries still answer; calls parked for
    /// approval are denied); kept in the state store, so replicas sharing it and a restart
    /// stay paused. Without --reason, print whether it is paused. Sends `$HAK_ADMIN_TOKEN`.
    Pause {
        /// What the agents are told.
        #[arg(long)]
        reason: Option<String>,
        /// The server's address.
        #[arg(long, default_value = "http://127.0.0.1:8787")]
        server: String,
    },
    /// Undo `hak pause` (recorded in the state store first). Sends `$HAK_ADMIN_TOKEN`.
    Resume {
        /// The server's address.
        #[arg(long, default_value = "http://127.0.0.1:8787")]
        server: String,
    },
    /// Work with plugin components.
    Plugin {
        #[command(subcommand)]
        command: PluginCommand,
    },
    /// Run a tool N times in one process and print {calls, usPerCall, p50Us, p99Us}.
    Bench {
        tool: String,
        params: String,
        #[command(flatten)]
        host: HostArgs,
        #[arg(long, default_value_t = 1000)]
        calls: u32,
    },
}

#[derive(Subcommand)]
pub(super) enum ApprovalsCommand {
    /// Print the calls awaiting approval as JSON (oldest first), each with the approvers
    /// that approved it so far and the quorum.
    List,
    /// Approve the call parked under ID: it goes on once the quorum approved it.
    Approve {
        id: String,
        /// A note for the log.
        #[arg(long)]
        note: Option<String>,
    },
    /// Deny the call parked under ID: it ends blocked with the policy's reason and the note.
    Deny {
        id: String,
        #[arg(long)]
        note: Option<String>,
    },
}

#[derive(clap::Args)]
pub(super) struct EmuArgs {
    /// gRPC address of the node (account 0.0.3).
    #[arg(long, default_value = "127.0.0.1:50211")]
    pub(super) grpc: std::net::SocketAddr,
    /// Address of the mirror REST API (served under /api/v1).
    #[arg(long, default_value = "127.0.0.1:5551")]
    pub(super) mirror: std::net::SocketAddr,
    /// Address of the mirror gRPC API (topic subscriptions, the address book).
    #[arg(long, default_value = "127.0.0.1:5600")]
    pub(super) mirror_grpc: std::net::SocketAddr,
    /// A second address of the mirror REST API: the local node's web3 port, where the SDKs
    /// post contract calls (`MirrorNodeContractQuery`).
    #[arg(long, default_value = "127.0.0.1:8545")]
    pub(super) mirror_web3: std::net::SocketAddr,
    /// A third address of the mirror REST API: the local node's Java REST port, where the
    /// SDKs read registered nodes (`RegisteredNodeAddressBookQuery`).
    #[arg(long, default_value = "127.0.0.1:8084")]
    pub(super) mirror_java: std::net::SocketAddr,
    /// Keep the ledger in this directory across restarts.
    #[arg(long)]
    pub(super) state: Option<PathBuf>,
}

#[derive(Subcommand)]
pub(super) enum PluginCommand {
    /// Load a component, describe it with a config, and print what it is.
    Inspect {
        file: PathBuf,
        /// The plugin config as JSON (default `{}`).
        #[arg(long)]
        config: Option<String>,
    },
    /// Run a plugin on one recorded stage input (a file of `hak call --record`): its policy,
    /// then its hook, at that stage; print what each answered as JSON. With --cases, check
    /// it against a cases file instead: one line per case, a diff for each mismatch, exit 1
    /// when any case fails.
    Test {
        file: PathBuf,
        /// The recorded stage input: `{"stage", "method", "toolType", "input"}`.
        #[arg(long, required_unless_present = "cases", conflicts_with = "cases")]
        input: Option<PathBuf>,
        /// A cases file: `[{"name", "input": <recorded stage input or its path>, "config"?,
        /// "expect": "allow" | "block" | "needs-approval", "reason"?, "code"?}]`.
        #[arg(long)]
        cases: Option<PathBuf>,
        /// The plugin config as JSON (default `{}`).
        #[arg(long, conflicts_with = "settings")]
        config: Option<String>,
        /// The plugin config from a settings file: the `config` of a plugins folder's
        /// `<name>.toml` (what `hak serve --plugins-dir` loads with the plugin).
        #[arg(long)]
        settings: Option<PathBuf>,
        /// The time the plugin reads (`host.now-unix-ms`), RFC 3339 (`2026-11-30T12:00:00Z`);
        /// with --cases, of the cases without their own `now`. Default: the system clock.
        #[arg(long)]
        now: Option<String>,
    },
    /// Make a key pair for signing plugins. With --cosign: cosign's `cosign.key` (encrypted
    /// with $COSIGN_PASSWORD, which may be empty) and `cosign.pub` in the current directory,
    /// for OCI and file signatures that cosign reads too. Without: an ed25519 pair for file
    /// signatures, printed as {"privateKey", "publicKey"} (hex).
    Keygen {
        #[arg(long)]
        cosign: bool,
    },
    /// Build a Go or Python plugin directory into a component. Go (a main package using
    /// hak.local/guest): `go build` for GOOS=wasip1, then `componentize`. Python (an `app.py`
    /// registering a plugin with hak_guest): componentize-py with the SDK embedded in this
    /// hak. The toolchain is `$HAK_GO` / `$HAK_COMPONENTIZE_PY`, else the one on the PATH,
    /// else the one scripts/install-deps.sh installed beside this hak (`target/tools` of the
    /// checkout whose `target/<profile>/hak` this is).
    Build {
        dir: PathBuf,
        #[arg(long, short)]
        out: PathBuf,
    },
    /// Make a component of the agent-plugin world from a core wasm module (e.g. Go's
    /// `-buildmode=c-shared` output), with the WASI reactor adapter.
    Componentize {
        core: PathBuf,
        #[arg(long, short)]
        out: PathBuf,
    },
    /// Scaffold a working plugin project `<dir>/<name>` in Rust, JavaScript, Go or Python.
    New {
        name: String,
        #[arg(long, value_enum)]
        lang: crate::authoring::scaffold::Lang,
        /// Where to create it (default: the current directory).
        #[arg(long, default_value = ".")]
        dir: PathBuf,
        /// The guest SDKs to use (a directory holding rust/, js/, go/). Default: the ones
        /// embedded in this hak, unpacked once under $HAK_HOME (or $XDG_DATA_HOME/hak,
        /// ~/.local/share/hak).
        #[arg(long)]
        sdk: Option<PathBuf>,
    },
    /// Sign a component, or a plugin's settings sidecar (`<name>.toml`; a signed plugin's
    /// settings must be signed too): writes `<file>.sig`, with --sign-key as `cosign
    /// sign-blob` would (base64), else with the ed25519 key in --key-env (hex). Given an
    /// `oci://` reference, signs the manifest it names in the registry with --sign-key, in
    /// cosign's format: a payload naming the repository, the digest and the version (the
    /// `sha256-<hex>.sig` image beside it).
    Sign {
        file: PathBuf,
        #[command(flatten)]
        signing: SignArgs,
        /// Environment variable holding an ed25519 private key (hex), for file signatures.
        #[arg(long, default_value = "HAK_SIGNING_KEY")]
        key_env: String,
        #[command(flatten)]
        registry: RegistryArgs,
    },
    /// Push a component to an OCI registry as a Wasm artifact (config
    /// `application/vnd.wasm.config.v0+json`, one `application/wasm` layer) with its
    /// description as annotations; with --sign-key, sign the pushed manifest for its
    /// repository and version too (cosign's format). Plain HTTP only for loopback registries
    /// or with --plain-http.
    Push {
        file: PathBuf,
        /// `oci://REGISTRY/REPO:TAG`.
        reference: String,
        /// The plugin config `describe` is called with (JSON; default `{}`).
        #[arg(long)]
        config: Option<String>,
        /// A capability the plugin needs granted (repeat), shown to operators as an annotation.
        #[arg(long = "capability")]
        capabilities: Vec<String>,
        #[command(flatten)]
        signing: SignArgs,
        #[command(flatten)]
        registry: RegistryArgs,
    },
    /// Pull a plugin from an OCI registry: `oci://REGISTRY/REPO[:TAG|@sha256:…]`. Its
    /// cosign signature is checked against --public-key (for this repository and digest)
    /// before the component is downloaded; a tag pull without a key needs --no-verify.
    Pull {
        reference: String,
        /// Where to write the component (default: `<last part of REPO>.wasm`).
        #[arg(long, short)]
        out: Option<PathBuf>,
        /// A trusted publisher's cosign public key: a `cosign.pub` file (repeat).
        #[arg(long = "public-key")]
        public_keys: Vec<String>,
        /// Take a tag's component without checking a signature.
        #[arg(long, conflicts_with = "public_keys")]
        no_verify: bool,
        #[command(flatten)]
        registry: RegistryArgs,
    },
    /// Check `<file>.sig` against a public key: a `cosign.pub` file, or ed25519 (hex).
    Verify {
        file: PathBuf,
        #[arg(long)]
        public_key: String,
    },
}

/// How a registry is reached (`hak plugin push`, `pull`, `sign`).
#[derive(clap::Args, Debug)]
pub struct RegistryArgs {
    /// Reach this registry over plain HTTP although it is not on loopback.
    #[arg(long)]
    pub plain_http: bool,
    /// Seconds one registry request may take in all (a registry that stalls or drips fails it).
    #[arg(long, default_value_t = 60)]
    pub timeout: u64,
}

/// How a plugin is signed (`hak plugin push`, `sign`).
#[derive(clap::Args, Debug)]
pub struct SignArgs {
    /// cosign's private key file (`cosign.key`; its password in $COSIGN_PASSWORD).
    #[arg(long, value_name = "COSIGN_KEY")]
    pub sign_key: Option<PathBuf>,
    /// The release's version an OCI signature claims (default: the tag, when it is a version
    /// such as 1.2 or v1.2.3). A followed tag never moves to a lower one.
    #[arg(long, requires = "sign_key")]
    pub version: Option<String>,
}
