//! The long-running commands: `hak serve`, `hak mcp` (the registry they share, its watchers,
//! the listen address check) and `hak emu`. What must not live here: argument parsing.

use super::*;
use crate::host::Host;
use crate::model::context::AgentContext;
use serde_json::json;
use std::path::PathBuf;
use std::sync::Arc;

/// What keeps a registry in line with where its plugins come from, while it lives.
pub(super) struct Watchers {
    pub(super) _dir: Option<crate::registry::watch::DirWatcher>,
    pub(super) _tags: Option<crate::registry::watch::TagFollower>,
}

/// The host's registry of plugins, synced with `plugins_dir` and kept in sync (and the
/// manifest's followed OCI tags followed) while the returned watchers live.
pub(super) fn open_registry(
    host: Host,
    plugins_dir: Option<PathBuf>,
) -> anyhow::Result<(Arc<crate::registry::Registry>, Watchers)> {
    let registry = Arc::new(crate::registry::Registry::new(host, plugins_dir.clone())?);
    let report = registry.sync_dir();
    for (name, reason) in &report.rejected {
        tracing::warn!("plugin {name} not loaded: {reason}");
    }
    let watcher = match plugins_dir {
        Some(_) => Some(
            crate::registry::watch::watch(registry.clone(), |report| {
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
    let tags = crate::registry::watch::follow_tags(&registry, |event| match event {
        crate::registry::watch::FollowEvent::Swapped {
            plugin,
            reference,
            digest,
            chain_version,
        } => tracing::info!(
            "plugin {plugin}: {reference} now names {digest}; swapped in (chain v{chain_version})"
        ),
        crate::registry::watch::FollowEvent::Kept {
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
pub(super) fn refuse_open_listen(
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

/// What `hak serve` and `hak mcp` start with: the host and its context, refused on an address
/// off loopback without the keys that guard it (`admin_token_missing`: the admin token is
/// one of them and is not set), and its registry of plugins with the watchers that keep it in
/// line while they live.
fn start_up(
    args: &HostArgs,
    plugins_dir: Option<PathBuf>,
    listen: Option<std::net::SocketAddr>,
    insecure: bool,
    admin_token_missing: bool,
) -> anyhow::Result<(Arc<crate::registry::Registry>, Watchers, AgentContext)> {
    let (host, context) = build_host(args)?;
    if let Some(addr) = listen {
        let mut missing = Vec::new();
        if host.manifest().agents.is_empty() {
            missing.push("agent keys ([[agents]] in the manifest)");
        }
        if admin_token_missing {
            missing.push("an admin token ($HAK_ADMIN_TOKEN)");
        }
        refuse_open_listen(addr, insecure, missing)?;
    }
    let (registry, watchers) = open_registry(host, plugins_dir)?;
    Ok((registry, watchers, context))
}

/// Run a server to its end on a runtime of two workers. The host (and the network runtime
/// inside it) is dropped here, outside the server's runtime: the last reference stays with
/// this thread.
fn run_server(
    registry: &Arc<crate::registry::Registry>,
    server: impl std::future::Future<Output = anyhow::Result<()>>,
) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let keep = registry.clone();
    let served = runtime.block_on(server);
    runtime.shutdown_timeout(std::time::Duration::from_secs(5));
    drop(keep);
    served
}

/// The first line on stdout: where the server listens, and its chain version.
fn announce(url: String, registry: &crate::registry::Registry) -> anyhow::Result<()> {
    use std::io::Write;
    println!(
        "{}",
        json!({"listen": url, "chainVersion": registry.host().chain_version()})
    );
    std::io::stdout().flush()?;
    Ok(())
}

pub(super) fn mcp(
    args: &HostArgs,
    listen: Option<std::net::SocketAddr>,
    plugins_dir: Option<PathBuf>,
    insecure: bool,
    admin_without_token: bool,
) -> anyhow::Result<()> {
    let admin_token = listen.and(admin_token());
    let (registry, _watchers, context) = start_up(args, plugins_dir, listen, insecure, false)?;
    let options = crate::serve::ServeOptions::from_manifest(&registry, admin_token.as_deref())
        .map_err(anyhow::Error::msg)?;
    let served = registry.clone();
    run_server(&registry, async move {
        let registry = served;
        match listen {
            None => {
                let identity = crate::mcp::Identity::Local(context);
                let server = crate::mcp::McpServer::new(registry, identity, &options, false);
                crate::mcp::serve_stdio(server, shutdown_signal()).await
            }
            Some(addr) => {
                let callers = admin_callers(
                    options.callers.clone().with_default_context(context),
                    admin_without_token,
                );
                // Parked calls wait for whoever may decide them at the approvals routes.
                let operator = !callers.admin_closed() || callers.has_approvers();
                let identity = crate::mcp::Identity::Agents(callers.clone());
                let server =
                    crate::mcp::McpServer::new(registry.clone(), identity, &options, operator);
                let admin = crate::serve::Admin::new(registry.clone(), callers, server.pool());
                let stop = tokio_util::sync::CancellationToken::new();
                let app = crate::mcp::router(server, admin, options.guard.clone(), stop.clone());
                let listener = tokio::net::TcpListener::bind(addr).await?;
                let bound = listener.local_addr()?;
                announce(format!("http://{bound}{}", crate::mcp::MCP_PATH), &registry)?;
                crate::serve::http(listener, app, async move {
                    shutdown_signal().await;
                    stop.cancel();
                })
                .await?;
                Ok(())
            }
        }
    })
}

/// `$HAK_ADMIN_TOKEN`, when set and not empty.
fn admin_token() -> Option<String> {
    std::env::var("HAK_ADMIN_TOKEN")
        .ok()
        .filter(|t| !t.is_empty())
}

/// A server's callers with `--admin-without-token` applied, said once when the admin routes
/// are off.
fn admin_callers(
    callers: crate::serve::auth::Callers,
    admin_without_token: bool,
) -> crate::serve::auth::Callers {
    let callers = if admin_without_token {
        callers.admin_without_token()
    } else {
        callers
    };
    if callers.admin_closed() {
        let approvals = if callers.has_approvers() {
            "; held calls are decided by the [[approvers]] alone"
        } else {
            ", so no agent key can decide held calls"
        };
        tracing::warn!(
            "admin routes (plugins, metrics, pause) are off: [[agents]] are configured and $HAK_ADMIN_TOKEN is not set{approvals}; set HAK_ADMIN_TOKEN (hak approvals and a metrics scraper send it), or pass --admin-without-token"
        );
    }
    callers
}

pub(super) fn serve(
    args: &HostArgs,
    listen: std::net::SocketAddr,
    plugins_dir: Option<PathBuf>,
    insecure: bool,
    admin_without_token: bool,
) -> anyhow::Result<()> {
    let admin_token = admin_token();
    let (registry, _watchers, context) = start_up(
        args,
        plugins_dir,
        Some(listen),
        insecure,
        admin_token.is_none(),
    )?;
    let mut options = crate::serve::ServeOptions::from_manifest(&registry, admin_token.as_deref())
        .map_err(anyhow::Error::msg)?;
    options.callers = admin_callers(
        options.callers.with_default_context(context),
        admin_without_token,
    );
    let served = registry.clone();
    run_server(&registry, async move {
        let registry = served;
        let listener = tokio::net::TcpListener::bind(listen).await?;
        let addr = listener.local_addr()?;
        announce(format!("http://{addr}"), &registry)?;
        let drained = crate::serve::serve(listener, registry, options, shutdown_signal()).await?;
        if drained {
            tracing::info!("stopped: every call in flight finished");
        } else {
            tracing::warn!("stopped: the drain time ran out with calls still in flight");
        }
        Ok(())
    })
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

pub(super) fn run_emulator(args: EmuArgs) -> anyhow::Result<()> {
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
