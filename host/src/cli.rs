//! The `hak` command line: `call`, `tools`, `serve`, `mcp`, `emu`, `plugin
//! new|build|componentize|inspect|keygen|sign|verify`, `bench`. Argument parsing and printing only; everything it does goes through the library API.

use crate::context::{AgentContext, AgentMode};
use crate::host::{Host, HostBuilder};
use crate::manifest::{Manifest, PluginSpec};
use crate::runtime::{ArtifactCache, LoadedPlugin, Runtime, RuntimeConfig, TracingLogSink};
use clap::error::ErrorKind;
use clap::{Parser, Subcommand};
use hedera::AccountId;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::ExitCode;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Instant;

#[derive(Parser)]
#[command(
    name = "hak",
    version,
    about = "Hedera Agent Kit tools with sandboxed WebAssembly hooks and policies",
    after_help = "Logs go to stderr: HAK_LOG sets the level (error, warn (default), info, debug, trace); \
                  HAK_LOG_FORMAT=json writes one JSON object per line. A manifest's [decisions] \
                  section records every call as a JSON line (docs/OPERATIONS.md)."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Args)]
struct HostArgs {
    /// The manifest (default: the embedded one: the local network in-process, autonomous mode,
    /// no plugins).
    #[arg(long, short)]
    config: Option<PathBuf>,
    /// Agent mode: autonomous or return-bytes (the custom modes need a transaction strategy,
    /// which only the library API can supply).
    #[arg(long, value_parser = cli_mode)]
    mode: Option<AgentMode>,
    /// The agent context's account id (payer in return-bytes mode).
    #[arg(long, value_parser = account_id)]
    account_id: Option<AccountId>,
}

fn cli_mode(text: &str) -> Result<AgentMode, String> {
    let mode = AgentMode::parse(text)?;
    if mode.is_custom() {
        return Err(format!(
            "mode {mode} needs a transaction strategy, which only the library API can supply"
        ));
    }
    Ok(mode)
}

fn account_id(text: &str) -> Result<AccountId, String> {
    AccountId::from_str(text).map_err(|e| e.to_string())
}

#[derive(Subcommand)]
enum Command {
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
        shapes: Option<crate::codegen::ShapesFormat>,
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
    /// --listen (the first stdout line is then `{"listen": "http://…/mcp"}`). Plugins as in
    /// `hak serve`, hot-swapped from --plugins-dir; blocked calls tell the agent the policy's
    /// reason unless `[context] explain_blocks = false`.
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
    },
    /// Calls a running `hak serve` holds for approval (a policy answered needs-approval):
    /// list them, approve or deny one. Sends `$HAK_ADMIN_TOKEN` as the admin bearer.
    Approvals {
        #[command(subcommand)]
        command: ApprovalsCommand,
        /// The server's address.
        #[arg(long, default_value = "http://127.0.0.1:8787", global = true)]
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
enum ApprovalsCommand {
    /// Print the calls awaiting approval as JSON (oldest first).
    List,
    /// Approve the call parked under ID: its chain goes on.
    Approve {
        id: String,
        /// Your name, kept in the decision log (default `admin`).
        #[arg(long)]
        by: Option<String>,
        /// A note for the log.
        #[arg(long)]
        note: Option<String>,
    },
    /// Deny the call parked under ID: it ends blocked with the policy's reason and the note.
    Deny {
        id: String,
        #[arg(long)]
        by: Option<String>,
        #[arg(long)]
        note: Option<String>,
    },
}

#[derive(clap::Args)]
struct EmuArgs {
    /// gRPC address of the node (account 0.0.3).
    #[arg(long, default_value = "127.0.0.1:50211")]
    grpc: std::net::SocketAddr,
    /// Address of the mirror REST API (served under /api/v1).
    #[arg(long, default_value = "127.0.0.1:5551")]
    mirror: std::net::SocketAddr,
    /// Address of the mirror gRPC API (topic subscriptions, the address book).
    #[arg(long, default_value = "127.0.0.1:5600")]
    mirror_grpc: std::net::SocketAddr,
    /// A second address of the mirror REST API: the local node's web3 port, where the SDKs
    /// post contract calls (`MirrorNodeContractQuery`).
    #[arg(long, default_value = "127.0.0.1:8545")]
    mirror_web3: std::net::SocketAddr,
    /// A third address of the mirror REST API: the local node's Java REST port, where the
    /// SDKs read registered nodes (`RegisteredNodeAddressBookQuery`).
    #[arg(long, default_value = "127.0.0.1:8084")]
    mirror_java: std::net::SocketAddr,
    /// Keep the ledger in this directory across restarts.
    #[arg(long)]
    state: Option<PathBuf>,
}

#[derive(Subcommand)]
enum PluginCommand {
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
        #[arg(long)]
        config: Option<String>,
    },
    /// Make an ed25519 key pair for signing plugins: {"privateKey", "publicKey"} (hex).
    Keygen,
    /// Build a Go or Python plugin directory into a component. Go (a main package using
    /// hak.local/guest): `go build` for GOOS=wasip1, then `componentize`; Go is `$HAK_GO` or
    /// `go`. Python (an `app.py` registering a plugin with hak_guest): componentize-py
    /// (`$HAK_COMPONENTIZE_PY` or `componentize-py`) with the SDK embedded in this hak.
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
        lang: crate::scaffold::Lang,
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
    /// settings must be signed too): writes `<file>.sig` with the key in the named variable.
    /// Given an `oci://` reference, signs the manifest it names in the registry instead
    /// (the `sha256-<hex>.sig` tag beside it).
    Sign {
        file: PathBuf,
        #[arg(long)]
        plain_http: bool,
        /// Environment variable holding the private key (hex).
        #[arg(long, default_value = "HAK_SIGNING_KEY")]
        key_env: String,
    },
    /// Push a component to an OCI registry as a Wasm artifact (config
    /// `application/vnd.wasm.config.v0+json`, one `application/wasm` layer) with its
    /// description as annotations; with --sign, sign the pushed manifest digest too. Plain
    /// HTTP only for loopback registries or with --plain-http.
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
        /// Sign the pushed manifest with the private key (hex) in this environment variable.
        #[arg(long, value_name = "KEY_ENV")]
        sign: Option<String>,
        /// Reach this registry over plain HTTP although it is not on loopback.
        #[arg(long)]
        plain_http: bool,
    },
    /// Pull a plugin from an OCI registry: `oci://REGISTRY/REPO[:TAG|@sha256:…]`. Its
    /// signature is checked against --public-key before the component is downloaded; a tag
    /// pull without a key needs --no-verify.
    Pull {
        reference: String,
        /// Where to write the component (default: `<last part of REPO>.wasm`).
        #[arg(long, short)]
        out: Option<PathBuf>,
        /// A trusted publisher key (hex; repeat).
        #[arg(long = "public-key")]
        public_keys: Vec<String>,
        /// Take a tag's component without checking a signature.
        #[arg(long, conflicts_with = "public_keys")]
        no_verify: bool,
        #[arg(long)]
        plain_http: bool,
    },
    /// Check `<file>.sig` against a public key (hex).
    Verify {
        file: PathBuf,
        #[arg(long)]
        public_key: String,
    },
}

/// Entry point of the `hak` binary.
pub fn main() -> ExitCode {
    crate::logging::init();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // A bad value gets the one-line error every other failure gets; help, version and
        // usage mistakes keep clap's own output.
        Err(e)
            if matches!(
                e.kind(),
                ErrorKind::InvalidValue | ErrorKind::ValueValidation
            ) =>
        {
            let text = e.render().to_string();
            let line = text.lines().next().unwrap_or_default();
            eprintln!("hak: {}", line.strip_prefix("error: ").unwrap_or(line));
            return ExitCode::from(2);
        }
        Err(e) => e.exit(),
    };
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            // Errors quote plugins (a config error is the plugin's own text): no terminal
            // escapes or forged lines reach the operator's terminal.
            let text = format!("{e:#}").replace('\n', " ");
            eprintln!("hak: {}", crate::logging::one_line(&text));
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Call {
            tool,
            params,
            host,
            record,
        } => {
            let (host, context) = build_host(&host)?;
            let mut session = host.session(context);
            if record.is_some() {
                session.record_stages();
            }
            let result = session.call(&tool, &params)?;
            if let Some(dir) = record {
                write_recorded(&dir, &session.take_recorded())?;
            }
            println!("{}", serde_json::to_string_pretty(&result)?);
        }
        Command::Replay { log, host } => return replay(&log, &host),
        Command::Approvals { command, server } => {
            let answer = match command {
                ApprovalsCommand::List => {
                    crate::admin_client::request(&server, "GET", "/v1/approvals", None)?
                }
                ApprovalsCommand::Approve { id, by, note } => {
                    decide_approval(&server, &id, "approve", by, note)?
                }
                ApprovalsCommand::Deny { id, by, note } => {
                    decide_approval(&server, &id, "deny", by, note)?
                }
            };
            println!("{}", serde_json::to_string_pretty(&answer)?);
        }
        Command::Plugin {
            command:
                PluginCommand::Test {
                    file,
                    input,
                    cases,
                    config,
                },
        } => {
            if let Some(cases) = cases {
                return plugin_cases(&file, &cases, config.as_deref());
            }
            let input = input.ok_or_else(|| anyhow::anyhow!("give --input or --cases"))?;
            let text = std::fs::read_to_string(&input)
                .map_err(|e| anyhow::anyhow!("--input {}: {e}", input.display()))?;
            let trial = crate::trial::TrialInput::parse(&text)
                .map_err(|e| anyhow::anyhow!("--input {}: {e}", input.display()))?;
            let plugin = load_standalone(&file, config.as_deref())?;
            let member = crate::runtime::WasmPlugin::member(plugin);
            let out = crate::trial::run(member.as_ref(), &trial);
            println!("{}", serde_json::to_string_pretty(&out)?);
        }
        Command::Tools {
            shapes: Some(format),
            ..
        } => print!("{}", crate::codegen::render(format)),
        Command::Tools { json, host, .. } => print_tools(json, &host)?,
        Command::Mcp {
            host,
            listen,
            plugins_dir,
            insecure,
        } => mcp(&host, listen, plugins_dir, insecure)?,
        Command::Emu(args) => run_emulator(args)?,
        Command::Serve {
            host,
            listen,
            plugins_dir,
            insecure,
            admin_without_token,
        } => serve(&host, listen, plugins_dir, insecure, admin_without_token)?,
        Command::Plugin {
            command:
                PluginCommand::New {
                    name,
                    lang,
                    dir,
                    sdk,
                },
        } => {
            let sdk = match sdk {
                Some(sdk) => sdk,
                None => crate::scaffold::embedded_sdk_root(None)?,
            };
            let made = crate::scaffold::new_plugin(lang, &name, &dir, &sdk)?;
            println!(
                "{}",
                json!({"files": made.files, "build": made.build, "check": made.check})
            );
        }
        Command::Plugin {
            command: PluginCommand::Componentize { core, out },
        } => {
            let bytes = std::fs::read(&core)?;
            let component = crate::componentize::componentize(&bytes)?;
            std::fs::write(&out, &component)?;
            println!("{}", json!({"built": out, "bytes": component.len()}));
        }
        Command::Plugin {
            command: PluginCommand::Build { dir, out },
        } => {
            let started = Instant::now();
            let size = if crate::python_plugin::is_project(&dir) {
                let tool = std::env::var("HAK_COMPONENTIZE_PY")
                    .unwrap_or_else(|_| "componentize-py".into());
                let sdk = crate::scaffold::embedded_sdk_root(None)?;
                let root = sdk.parent().unwrap_or(&sdk).to_owned();
                crate::python_plugin::build(&tool, &dir, &out, &root)?
            } else {
                let go = std::env::var("HAK_GO").unwrap_or_else(|_| "go".into());
                crate::go_plugin::build(&go, &dir, &out)?
            };
            println!(
                "{}",
                json!({"built": out, "bytes": size, "ms": started.elapsed().as_millis() as u64})
            );
        }
        Command::Plugin {
            command: PluginCommand::Keygen,
        } => {
            let (private, public) = crate::signing::generate();
            println!("{}", json!({"privateKey": private, "publicKey": public}));
        }
        Command::Plugin {
            command:
                PluginCommand::Push {
                    file,
                    reference,
                    config,
                    capabilities,
                    sign,
                    plain_http,
                },
        } => push(
            &file,
            &reference,
            config.as_deref(),
            capabilities,
            sign.as_deref(),
            plain_http,
        )?,
        Command::Plugin {
            command:
                PluginCommand::Pull {
                    reference,
                    out,
                    public_keys,
                    no_verify,
                    plain_http,
                },
        } => pull(&reference, out, &public_keys, no_verify, plain_http)?,
        Command::Plugin {
            command:
                PluginCommand::Sign {
                    file,
                    key_env,
                    plain_http,
                },
        } => {
            let key = std::env::var(&key_env)
                .map_err(|_| anyhow::anyhow!("${key_env} is not set (the private key, hex)"))?;
            let key = crate::signing::signing_key(&key)?;
            if let Some(text) = file
                .to_str()
                .filter(|t| t.starts_with(crate::oci::reference::SCHEME))
            {
                let reference = crate::oci::OciRef::parse(text)?;
                let client = crate::oci::OciClient::new(plain_list(&reference, plain_http));
                let at = client.sign(&reference, &key)?;
                println!("{}", json!({"signature": at}));
                return Ok(ExitCode::SUCCESS);
            }
            let bytes = std::fs::read(&file)?;
            let sig_path = PathBuf::from(format!("{}.sig", file.display()));
            std::fs::write(&sig_path, crate::signing::sign(&key, &bytes))?;
            println!("{}", json!({"signature": sig_path}));
        }
        Command::Plugin {
            command: PluginCommand::Verify { file, public_key },
        } => {
            let bytes = std::fs::read(&file)?;
            let sig_path = PathBuf::from(format!("{}.sig", file.display()));
            let sig = std::fs::read_to_string(&sig_path)
                .map_err(|e| anyhow::anyhow!("{}: {e}", sig_path.display()))?;
            let key = crate::signing::verifying_key(&public_key)?;
            crate::signing::verify(&[key], &bytes, &sig)?;
            println!(
                "{}",
                json!({"verified": true, "sha256": hex::encode(crate::signing::digest(&bytes))})
            );
        }
        Command::Plugin {
            command: PluginCommand::Inspect { file, config },
        } => inspect(&file, config.as_deref())?,
        Command::Bench {
            tool,
            params,
            host,
            calls,
        } => {
            let mode_given = host.mode.is_some();
            let (host, mut context) = build_host(&host)?;
            // Benchmarks measure hak, not the network: return-bytes unless the config or
            // --mode asks for a mode explicitly.
            if !mode_given && host.manifest_mode_is_default() {
                context.mode = AgentMode::ReturnBytes;
            }
            let report = bench(&host, context, &tool, &params, calls.max(1))?;
            println!("{}", serde_json::to_string(&report)?);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `POST /v1/approvals/{id}/{verb}` on `server`.
fn decide_approval(
    server: &str,
    id: &str,
    verb: &str,
    by: Option<String>,
    note: Option<String>,
) -> anyhow::Result<serde_json::Value> {
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_alphanumeric()) {
        anyhow::bail!("approval id {id:?} is not an id `hak approvals list` printed");
    }
    let body = json!({"by": by, "note": note});
    crate::admin_client::request(
        server,
        "POST",
        &format!("/v1/approvals/{id}/{verb}"),
        Some(&body),
    )
}

/// Where `hak call`, `hak serve` and `hak bench` keep plugin state when the manifest has no
/// `[state]`: `$HAK_STATE_DIR`, else `.hak/state` in the working directory (SQLite).
fn default_state_dir() -> std::path::PathBuf {
    std::env::var_os("HAK_STATE_DIR")
        .map(Into::into)
        .unwrap_or_else(|| std::path::PathBuf::from(".hak/state"))
}

fn load_manifest(args: &HostArgs) -> anyhow::Result<Manifest> {
    Ok(match &args.config {
        Some(path) => Manifest::load(path)?,
        None => Manifest::embedded_default(),
    })
}

fn build_host(args: &HostArgs) -> anyhow::Result<(Host, AgentContext)> {
    let host = HostBuilder::new(load_manifest(args)?)
        .default_state_dir(default_state_dir())
        .build()?;
    let context = context_of(args, host.default_context().clone());
    Ok((host, context))
}

/// The manifest's context with --mode / --account-id applied.
fn context_of(args: &HostArgs, mut context: AgentContext) -> AgentContext {
    if let Some(mode) = args.mode {
        context.mode = mode;
    }
    if let Some(id) = args.account_id {
        context.account_id = Some(id);
    }
    context
}

/// What keeps a registry in line with where its plugins come from, while it lives.
struct Watchers {
    _dir: Option<crate::watch::DirWatcher>,
    _tags: Option<crate::watch::TagFollower>,
}

/// The host's registry of plugins, synced with `plugins_dir` and kept in sync (and the
/// manifest's followed OCI tags followed) while the returned watchers live.
fn open_registry(
    host: Host,
    plugins_dir: Option<PathBuf>,
) -> anyhow::Result<(Arc<crate::registry::Registry>, Watchers)> {
    let registry = Arc::new(
        crate::registry::Registry::new(host, plugins_dir.clone()).map_err(anyhow::Error::msg)?,
    );
    let report = registry.sync_dir();
    for (name, reason) in &report.rejected {
        tracing::warn!("plugin {name} not loaded: {reason}");
    }
    let watcher = match plugins_dir {
        Some(_) => Some(
            crate::watch::watch(registry.clone(), |report| {
                for name in &report.loaded {
                    tracing::info!("loaded plugin {name} (chain v{})", report.chain_version);
                }
                for name in &report.removed {
                    tracing::warn!(
                        "plugin {name} removed: its file left the plugins directory (chain v{})",
                        report.chain_version
                    );
                }
                for (name, reason) in &report.rejected {
                    tracing::warn!("plugin {name} refused: {reason}");
                }
            })
            .map_err(anyhow::Error::msg)?,
        ),
        None => None,
    };
    let tags = crate::watch::follow_tags(&registry, |event| match event {
        crate::watch::FollowEvent::Swapped {
            plugin,
            reference,
            digest,
            chain_version,
        } => tracing::info!(
            "plugin {plugin}: {reference} now names {digest}; swapped in (chain v{chain_version})"
        ),
        crate::watch::FollowEvent::Kept {
            plugin,
            reference,
            reason,
        } => tracing::warn!("plugin {plugin}: {reference}: kept the running version: {reason}"),
    });
    Ok((
        registry,
        Watchers {
            _dir: watcher,
            _tags: tags,
        },
    ))
}

/// Refuse a non-loopback address unless the callers are authenticated (or `insecure`).
fn refuse_open_listen(
    listen: std::net::SocketAddr,
    insecure: bool,
    missing: Vec<&str>,
) -> anyhow::Result<()> {
    if !listen.ip().is_loopback() && !insecure && !missing.is_empty() {
        anyhow::bail!(
            "refusing to listen on {listen} without {}: anyone who can reach it could call tools or change plugins (pass --insecure to do it anyway)",
            missing.join(" and ")
        );
    }
    Ok(())
}

fn mcp(
    args: &HostArgs,
    listen: Option<std::net::SocketAddr>,
    plugins_dir: Option<PathBuf>,
    insecure: bool,
) -> anyhow::Result<()> {
    let (host, context) = build_host(args)?;
    if let Some(addr) = listen {
        let mut missing = Vec::new();
        if host.manifest().agents.is_empty() {
            missing.push("agent keys ([[agents]] in the manifest)");
        }
        refuse_open_listen(addr, insecure, missing)?;
    }
    let (registry, _watcher) = open_registry(host, plugins_dir)?;
    let options =
        crate::serve::ServeOptions::from_manifest(&registry, None).map_err(anyhow::Error::msg)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let keep = registry.clone();
    let served = runtime.block_on(async move {
        match listen {
            None => {
                let identity = crate::mcp::Identity::Local(context);
                let server = crate::mcp::McpServer::new(registry, identity, &options);
                crate::mcp::serve_stdio(server, shutdown_signal()).await
            }
            Some(addr) => {
                let callers = options.callers.clone().with_default_context(context);
                let guard = options.guard.clone();
                let identity = crate::mcp::Identity::Agents(callers);
                let server = crate::mcp::McpServer::new(registry.clone(), identity, &options);
                let stop = tokio_util::sync::CancellationToken::new();
                let app = crate::mcp::router(server, guard, stop.clone());
                let listener = tokio::net::TcpListener::bind(addr).await?;
                let bound = listener.local_addr()?;
                println!(
                    "{}",
                    json!({"listen": format!("http://{bound}{}", crate::mcp::MCP_PATH), "chainVersion": registry.host().chain_version()})
                );
                use std::io::Write;
                std::io::stdout().flush()?;
                axum::serve(listener, app)
                    .with_graceful_shutdown(async move {
                        shutdown_signal().await;
                        stop.cancel();
                    })
                    .await?;
                Ok(())
            }
        }
    });
    runtime.shutdown_timeout(std::time::Duration::from_secs(5));
    drop(keep);
    served
}

fn serve(
    args: &HostArgs,
    listen: std::net::SocketAddr,
    plugins_dir: Option<PathBuf>,
    insecure: bool,
    admin_without_token: bool,
) -> anyhow::Result<()> {
    let (host, context) = build_host(args)?;
    let admin_token = std::env::var("HAK_ADMIN_TOKEN")
        .ok()
        .filter(|t| !t.is_empty());
    let mut missing = Vec::new();
    if host.manifest().agents.is_empty() {
        missing.push("agent keys ([[agents]] in the manifest)");
    }
    if admin_token.is_none() {
        missing.push("an admin token ($HAK_ADMIN_TOKEN)");
    }
    refuse_open_listen(listen, insecure, missing)?;
    let (registry, _watcher) = open_registry(host, plugins_dir)?;
    let mut options = crate::serve::ServeOptions::from_manifest(&registry, admin_token.as_deref())
        .map_err(anyhow::Error::msg)?;
    options.callers = options.callers.with_default_context(context);
    if admin_without_token {
        options.callers = options.callers.admin_without_token();
    }
    if options.callers.admin_closed() {
        tracing::warn!(
            "admin routes (approvals, plugins, metrics) are off: [[agents]] are configured and $HAK_ADMIN_TOKEN is not set, so no agent key can decide held calls or change policies; set HAK_ADMIN_TOKEN (hak approvals and a metrics scraper send it), or pass --admin-without-token"
        );
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    // The host (and the network runtime inside it) must be dropped here, outside the server's
    // runtime: the last reference stays with this thread.
    let keep = registry.clone();
    let served = runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(listen).await?;
        let addr = listener.local_addr()?;
        println!("{}", json!({"listen": format!("http://{addr}"), "chainVersion": registry.host().chain_version()}));
        use std::io::Write;
        std::io::stdout().flush()?;
        let drained = crate::serve::serve(listener, registry, options, shutdown_signal()).await?;
        if drained {
            tracing::info!("stopped: every call in flight finished");
        } else {
            tracing::warn!("stopped: the drain time ran out with calls still in flight");
        }
        Ok::<_, anyhow::Error>(())
    });
    runtime.shutdown_timeout(std::time::Duration::from_secs(5));
    drop(keep);
    served
}

/// SIGTERM or SIGINT.
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

fn run_emulator(args: EmuArgs) -> anyhow::Result<()> {
    use std::io::Write;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let config = hak_emu::EmulatorConfig {
            grpc: args.grpc,
            mirror: args.mirror,
            mirror_grpc: args.mirror_grpc,
            mirror_web3: Some(args.mirror_web3),
            mirror_java: Some(args.mirror_java),
            state_dir: args.state,
        };
        let emu = hak_emu::Emulator::start(config).await?;
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "{}", emu.connection_json())?;
        stdout.flush()?;
        drop(stdout);
        tokio::signal::ctrl_c().await?;
        emu.shutdown();
        Ok(())
    })
}

fn print_tools(as_json: bool, args: &HostArgs) -> anyhow::Result<()> {
    let tools = crate::tools::ToolRegistry::native();
    if as_json {
        let manifest = load_manifest(args)?;
        let account_id = match &manifest.context.account_id {
            Some(text) => Some(
                AccountId::from_str(text)
                    .map_err(|e| anyhow::anyhow!("context.account_id {text:?}: {e}"))?,
            ),
            None => None,
        };
        let mut context = AgentContext {
            account_id,
            mode: manifest.context.mode.unwrap_or_default(),
        };
        context = context_of(args, context);
        let list: Vec<_> = tools.specs().map(|s| s.listing(&context)).collect();
        println!("{}", serde_json::to_string_pretty(&list)?);
    } else {
        for spec in tools.specs() {
            let ty = serde_json::to_value(spec.tool_type)?;
            println!(
                "{:<45} {:<12} {}",
                spec.method,
                ty.as_str().unwrap_or_default(),
                spec.name
            );
        }
    }
    Ok(())
}

/// A component loaded on its own (no host, no capabilities), described with `config` (JSON).
fn load_standalone(
    file: &std::path::Path,
    config: Option<&str>,
) -> anyhow::Result<Arc<LoadedPlugin>> {
    let config: toml::Table = match config {
        Some(text) => {
            let value: Value = serde_json::from_str(text)
                .map_err(|e| anyhow::anyhow!("--config is not JSON: {e}"))?;
            serde_json::from_value(value)
                .map_err(|e| anyhow::anyhow!("--config must be a JSON object without nulls: {e}"))?
        }
        None => toml::Table::new(),
    };
    let name = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "plugin".into());
    let spec = PluginSpec {
        name,
        path: file.to_owned(),
        source: None,
        oci_digest: None,
        sha256: None,
        config,
        capabilities: Vec::new(),
        limits: Default::default(),
        on_error: Default::default(),
        enforce: true,
    };
    let config = RuntimeConfig {
        cache_dir: ArtifactCache::default_dir(),
        fuel: false,
    };
    let runtime = Runtime::new(config, Arc::new(TracingLogSink))?;
    Ok(LoadedPlugin::load(&runtime, spec, file, None)?)
}

/// `hak plugin test FILE --cases CASES`: every case through the plugin (loaded once per
/// config), `ok` or `FAIL` with the difference, then a summary; exit 1 when any case failed.
fn plugin_cases(
    file: &std::path::Path,
    cases_path: &std::path::Path,
    config: Option<&str>,
) -> anyhow::Result<ExitCode> {
    let text = std::fs::read_to_string(cases_path)
        .map_err(|e| anyhow::anyhow!("--cases {}: {e}", cases_path.display()))?;
    let dir = cases_path.parent().unwrap_or(std::path::Path::new("."));
    let cases = crate::trial::parse_cases(&text, dir)
        .map_err(|e| anyhow::anyhow!("--cases {}: {e}", cases_path.display()))?;
    let mut loaded: std::collections::HashMap<Option<String>, Arc<dyn crate::plugin::ChainPlugin>> =
        std::collections::HashMap::new();
    let mut failed = 0;
    for case in &cases {
        let config = case.config.as_deref().or(config).map(str::to_owned);
        let member = match loaded.get(&config) {
            Some(member) => Ok(member.clone()),
            None => load_standalone(file, config.as_deref()).map(|plugin| {
                let member = crate::runtime::WasmPlugin::member(plugin);
                loaded.insert(config.clone(), member.clone());
                member
            }),
        };
        let verdict = member
            .map_err(|e| format!("the plugin did not load with this config: {e:#}"))
            .and_then(|member| {
                crate::trial::check(case, &crate::trial::run(member.as_ref(), &case.input))
            });
        let name = crate::logging::one_line(&case.name);
        match verdict {
            Ok(()) => println!("ok   {name}"),
            Err(diff) => {
                failed += 1;
                // The diff quotes the plugin's words with `{:?}`: escaped, one line each.
                println!("FAIL {name}\n  {diff}");
            }
        }
    }
    println!(
        "{} cases: {} passed, {failed} failed",
        cases.len(),
        cases.len() - failed
    );
    Ok(if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn inspect(file: &std::path::Path, config: Option<&str>) -> anyhow::Result<()> {
    let plugin = load_standalone(file, config)?;
    let (imports, exports) = plugin.imports_and_exports();
    let d = &plugin.description;
    let out = json!({
        "name": d.name,
        "description": d.description,
        "relevantTools": d.relevant_tools,
        "hookStages": d.hook_stages.iter().map(|s| s.wit_name()).collect::<Vec<_>>(),
        "policyStages": d.policy_stages.iter().map(|s| s.wit_name()).collect::<Vec<_>>(),
        "imports": imports,
        "exports": exports,
        "size": plugin.size,
        "sha256": plugin.sha256,
        "contract": plugin.contract(),
        "reads": plugin
            .reads
            .entries()
            .map(|(tool, reads)| (tool.to_owned(), json!(reads.names())))
            .collect::<serde_json::Map<_, _>>(),
    });
    println!("{}", serde_json::to_string_pretty(&out)?);
    Ok(())
}

/// The registries reached over plain HTTP: this one if the operator said so.
fn plain_list(reference: &crate::oci::OciRef, plain_http: bool) -> Vec<String> {
    if plain_http {
        vec![reference.registry().to_owned()]
    } else {
        Vec::new()
    }
}

/// `hak plugin push`: describe the component (it must load as a plugin), lay it out as a
/// Wasm OCI artifact, push it, and sign it when asked.
fn push(
    file: &std::path::Path,
    reference: &str,
    config: Option<&str>,
    capabilities: Vec<String>,
    sign: Option<&str>,
    plain_http: bool,
) -> anyhow::Result<()> {
    let reference = crate::oci::OciRef::parse(reference)?;
    if !reference.is_followed() {
        anyhow::bail!("{reference}: push to a tag (oci://REGISTRY/REPO:TAG); the digest is the registry's answer");
    }
    for c in &capabilities {
        if crate::capabilities::Capability::parse(c).is_none() {
            anyhow::bail!(
                "--capability {c:?}: unknown (known: {})",
                crate::capabilities::Capability::known()
            );
        }
    }
    let key = sign
        .map(|var| {
            let text = std::env::var(var)
                .map_err(|_| anyhow::anyhow!("${var} is not set (the private key, hex)"))?;
            crate::signing::signing_key(&text).map_err(anyhow::Error::from)
        })
        .transpose()?;
    let bytes = std::fs::read(file).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
    let plugin = load_standalone(file, config)?;
    let (imports, exports) = plugin.imports_and_exports();
    let d = &plugin.description;
    let stages = |s: &crate::stage::StageSet| s.iter().map(|s| s.wit_name().to_owned()).collect();
    let annotations = crate::oci::artifact::PluginAnnotations {
        name: d.name.clone(),
        description: d.description.clone(),
        hook_stages: stages(&d.hook_stages),
        policy_stages: stages(&d.policy_stages),
        relevant_tools: d.relevant_tools.clone(),
        capabilities,
        contract: plugin.contract().to_owned(),
    };
    let created = time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default();
    let built = crate::oci::artifact::build(&bytes, &annotations, &imports, &exports, &created);
    let client = crate::oci::OciClient::new(plain_list(&reference, plain_http));
    let digest = client.push(&reference, &built, &bytes)?;
    let signature = match &key {
        Some(key) => Some(client.sign(&reference.at_digest(&digest), key)?),
        None => None,
    };
    println!(
        "{}",
        json!({
            "pushed": reference.to_string(),
            "digest": digest,
            "pinned": reference.at_digest(&digest).to_string(),
            "sha256": plugin.sha256,
            "signature": signature,
        })
    );
    Ok(())
}

/// `hak plugin pull`: the component behind a reference, verified, written to a file.
fn pull(
    reference: &str,
    out: Option<PathBuf>,
    public_keys: &[String],
    no_verify: bool,
    plain_http: bool,
) -> anyhow::Result<()> {
    let reference = crate::oci::OciRef::parse(reference)?;
    let trusted = public_keys
        .iter()
        .map(|k| crate::signing::verifying_key(k))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| anyhow::anyhow!("--public-key: {e}"))?;
    if trusted.is_empty() && reference.is_followed() && !no_verify {
        anyhow::bail!("{reference}: a tag can point anywhere; name the publisher's key (--public-key), pin a digest (@sha256:…), or pass --no-verify");
    }
    let verify = if trusted.is_empty() {
        crate::oci::client::Verify::Unchecked
    } else {
        crate::oci::client::Verify::Required(&trusted)
    };
    let client = crate::oci::OciClient::new(plain_list(&reference, plain_http));
    let pulled = client.pull(&reference, verify)?;
    let out = out.unwrap_or_else(|| {
        let last = reference
            .repository()
            .rsplit('/')
            .next()
            .unwrap_or("plugin");
        PathBuf::from(format!("{last}.wasm"))
    });
    std::fs::write(&out, &pulled.component)
        .map_err(|e| anyhow::anyhow!("{}: {e}", out.display()))?;
    println!(
        "{}",
        json!({
            "pulled": out,
            "digest": pulled.digest,
            "pinned": reference.at_digest(&pulled.digest).to_string(),
            "sha256": pulled.layer_digest.trim_start_matches("sha256:"),
            "bytes": pulled.component.len(),
            "verified": pulled.signature.is_some(),
            "annotations": pulled.annotations,
        })
    );
    Ok(())
}

/// `hak call --record DIR`: one file per stage input, `<n>-<stage>.json`.
fn write_recorded(
    dir: &std::path::Path,
    stages: &[crate::lifecycle::RecordedStage],
) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| anyhow::anyhow!("--record {}: {e}", dir.display()))?;
    for (i, stage) in stages.iter().enumerate() {
        let path = dir.join(format!("{}-{}.json", i + 1, stage.stage.as_str()));
        let text = serde_json::to_string_pretty(&stage.to_json())?;
        std::fs::write(&path, text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    }
    Ok(())
}

/// `hak replay`: the host of --config with a scratch store and no decision log of its own.
fn replay(log: &std::path::Path, args: &HostArgs) -> anyhow::Result<ExitCode> {
    let mut manifest = load_manifest(args)?;
    manifest.decisions = None;
    let host = HostBuilder::new(manifest)
        .state_backend(Arc::new(crate::state_store::MemoryBackend::default()))
        .build()?;
    let file = std::fs::File::open(log).map_err(|e| anyhow::anyhow!("{}: {e}", log.display()))?;
    let report = crate::replay::replay(&host, std::io::BufReader::new(file), |change| {
        println!("{change}");
    })
    .map_err(|e| anyhow::anyhow!("{}: {e}", log.display()))?;
    println!("{}", serde_json::to_string(&report)?);
    Ok(if report.changed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Per-call timings of `calls` calls on one session, after a short warm-up.
pub fn bench(
    host: &Host,
    context: AgentContext,
    tool: &str,
    params: &str,
    calls: u32,
) -> anyhow::Result<Value> {
    let mut session = host.session(context);
    let first = session.call(tool, params)?;
    if first["raw"]["status"] != "SUCCESS" {
        anyhow::bail!(
            "the benchmarked call does not succeed: {}",
            first["raw"]["error"]
        );
    }
    for _ in 0..calls.min(100) {
        session.call(tool, params)?;
    }
    let mut samples = Vec::with_capacity(calls as usize);
    let started = Instant::now();
    for _ in 0..calls {
        let t = Instant::now();
        session.call(tool, params)?;
        samples.push(t.elapsed().as_secs_f64() * 1e6);
    }
    let total = started.elapsed().as_secs_f64() * 1e6;
    samples.sort_by(f64::total_cmp);
    let pct = |p: f64| samples[((samples.len() - 1) as f64 * p).round() as usize];
    Ok(json!({
        "calls": calls,
        "usPerCall": round2(total / f64::from(calls)),
        "p50Us": round2(pct(0.50)),
        "p99Us": round2(pct(0.99)),
    }))
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}
