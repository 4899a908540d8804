//! The `hak` command line: `call`, `tools`, `serve`, `mcp`, `emu`, `plugin
//! new|build|componentize|inspect|keygen|sign|verify`, `bench`. Argument parsing and printing only; everything it does goes through the library API.

pub mod admin_client;
mod args;
mod bench;
mod plugins;
mod servers;

use args::*;
pub use bench::bench;
use plugins::*;
use servers::*;

use crate::host::{Host, HostBuilder};
use crate::manifest::Manifest;
use crate::model::context::{AgentContext, AgentMode};
use clap::error::ErrorKind;
use clap::Parser;
use serde_json::json;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

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
        Command::Pause { reason, server } => {
            let answer = match reason {
                Some(reason) => crate::cli::admin_client::request(
                    &server,
                    "POST",
                    "/v1/pause",
                    Some(&serde_json::json!({ "reason": reason })),
                )?,
                None => crate::cli::admin_client::request(&server, "GET", "/v1/pause", None)?,
            };
            println!("{}", serde_json::to_string_pretty(&answer)?);
        }
        Command::Resume { server } => {
            let answer = crate::cli::admin_client::request(&server, "POST", "/v1/resume", None)?;
            println!("{}", serde_json::to_string_pretty(&answer)?);
        }
        Command::Approvals {
            command,
            server,
            key_env,
        } => {
            let answer = match command {
                ApprovalsCommand::List => crate::cli::admin_client::request_as(
                    &key_env,
                    &server,
                    "GET",
                    "/v1/approvals",
                    None,
                )?,
                ApprovalsCommand::Approve { id, note } => {
                    decide_approval(&server, &id, "approve", &key_env, note)?
                }
                ApprovalsCommand::Deny { id, note } => {
                    decide_approval(&server, &id, "deny", &key_env, note)?
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
                    settings,
                    now,
                },
        } => {
            let config = match settings {
                Some(path) => Some(settings_config(&path)?),
                None => config,
            };
            let now_ms = now
                .as_deref()
                .map(crate::authoring::trial::parse_now)
                .transpose()
                .map_err(|e| anyhow::anyhow!("--now: {e}"))?;
            if let Some(cases) = cases {
                return plugin_cases(&file, &cases, config.as_deref(), now_ms);
            }
            let input = input.ok_or_else(|| anyhow::anyhow!("give --input or --cases"))?;
            let text = std::fs::read_to_string(&input)
                .map_err(|e| anyhow::anyhow!("--input {}: {e}", input.display()))?;
            let trial = crate::authoring::trial::TrialInput::parse(&text)
                .map_err(|e| anyhow::anyhow!("--input {}: {e}", input.display()))?;
            let plugin = load_standalone(&file, config.as_deref())?;
            let member = crate::runtime::WasmPlugin::member(plugin);
            let out = crate::authoring::trial::run(member.as_ref(), &trial, now_ms);
            println!("{}", serde_json::to_string_pretty(&out)?);
        }
        Command::Tools {
            shapes: Some(format),
            ..
        } => print!("{}", crate::authoring::codegen::render(format)),
        Command::Tools { json, host, .. } => print_tools(json, &host)?,
        Command::Mcp {
            host,
            listen,
            plugins_dir,
            insecure,
            admin_without_token,
        } => mcp(&host, listen, plugins_dir, insecure, admin_without_token)?,
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
                None => crate::authoring::scaffold::embedded_sdk_root(None)?,
            };
            let made = crate::authoring::scaffold::new_plugin(lang, &name, &dir, &sdk)?;
            let mut out = json!({"files": made.files, "build": made.build, "check": made.check});
            if !made.needs.is_empty() {
                out["needs"] = json!(made.needs);
            }
            println!("{out}");
        }
        Command::Plugin {
            command: PluginCommand::Componentize { core, out },
        } => {
            let bytes = std::fs::read(&core)?;
            let component = crate::authoring::componentize::componentize(&bytes)?;
            std::fs::write(&out, &component)?;
            println!("{}", json!({"built": out, "bytes": component.len()}));
        }
        Command::Plugin {
            command: PluginCommand::Build { dir, out },
        } => {
            let started = Instant::now();
            let size = if crate::authoring::python_plugin::is_project(&dir) {
                let tool = crate::authoring::toolchains::componentize_py()?;
                let sdk = crate::authoring::scaffold::embedded_sdk_root(None)?;
                let root = sdk.parent().unwrap_or(&sdk).to_owned();
                crate::authoring::python_plugin::build(&tool.to_string_lossy(), &dir, &out, &root)?
            } else {
                let go = crate::authoring::toolchains::go()?;
                crate::authoring::go_plugin::build(&go.to_string_lossy(), &dir, &out)?
            };
            println!(
                "{}",
                json!({"built": out, "bytes": size, "ms": started.elapsed().as_millis() as u64})
            );
        }
        Command::Plugin {
            command: PluginCommand::Keygen { cosign },
        } => {
            if cosign {
                let written = keygen_cosign(std::path::Path::new("."))?;
                println!("{written}");
            } else {
                let (private, public) = crate::signing::generate();
                println!("{}", json!({"privateKey": private, "publicKey": public}));
            }
        }
        Command::Plugin {
            command:
                PluginCommand::Push {
                    file,
                    reference,
                    config,
                    capabilities,
                    signing,
                    registry,
                },
        } => push(
            &file,
            &reference,
            config.as_deref(),
            capabilities,
            &signing,
            &registry,
        )?,
        Command::Plugin {
            command:
                PluginCommand::Pull {
                    reference,
                    out,
                    public_keys,
                    no_verify,
                    registry,
                },
        } => pull(&reference, out, &public_keys, no_verify, &registry)?,
        Command::Plugin {
            command:
                PluginCommand::Sign {
                    file,
                    key_env,
                    signing,
                    registry,
                },
        } => sign(&file, &key_env, &signing, &registry)?,
        Command::Plugin {
            command: PluginCommand::Verify { file, public_key },
        } => {
            let bytes = std::fs::read(&file)?;
            let sig_path = PathBuf::from(format!("{}.sig", file.display()));
            let sig = std::fs::read_to_string(&sig_path)
                .map_err(|e| anyhow::anyhow!("{}: {e}", sig_path.display()))?;
            let trusted = crate::signing::TrustedKeys::parse(
                std::slice::from_ref(&public_key),
                std::path::Path::new("."),
            )
            .map_err(|(_, e)| anyhow::anyhow!("--public-key: {e}"))?;
            trusted.verify(&bytes, &sig)?;
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

/// `POST /v1/approvals/{id}/{verb}` on `server`, as the approver whose key `$key_env` holds.
fn decide_approval(
    server: &str,
    id: &str,
    verb: &str,
    key_env: &str,
    note: Option<String>,
) -> anyhow::Result<serde_json::Value> {
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_alphanumeric()) {
        anyhow::bail!("approval id {id:?} is not an id `hak approvals list` printed");
    }
    let body = json!({ "note": note });
    crate::cli::admin_client::request_as(
        key_env,
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
