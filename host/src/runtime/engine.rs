//! The one wasmtime `Engine` of a host: component model, pooling allocator, fuel, epoch
//! interruption driven by a single ticker thread, and the linker every plugin is checked
//! against (minimal WASI + the `hedera:agent-kit` imports).

use super::cache::ArtifactCache;
use super::function_cache::FunctionCache;
use super::sandbox::{LogSink, PluginState};
use super::ticker::Ticker;
use crate::model::limits::{MAX_MEMORY_MIB, MAX_WASM_STACK_BYTES, POOL_INSTANCES};
use std::path::PathBuf;
use std::sync::Arc;
use wasmtime::component::{HasSelf, Linker};
use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

/// How the engine is built.
#[derive(Clone, Debug, Default)]
pub struct RuntimeConfig {
    /// Directory of precompiled artifacts (`None`: compile in memory every start).
    pub cache_dir: Option<PathBuf>,
    /// Count instructions so plugins can have a `fuel` budget. Costs ~10-15 % of guest speed,
    /// so it is off unless the manifest asks for it (`[engine] fuel = true`).
    pub fuel: bool,
    /// Where compiles find and leave compiled functions (`None`: the process's store,
    /// [`super::function_cache::shared`]).
    pub function_cache: Option<Arc<FunctionCache>>,
}

/// Engine, linker, artifact cache and the epoch ticker, shared by every plugin of a host.
pub struct Runtime {
    pub(crate) engine: Engine,
    pub(crate) linker: Linker<PluginState>,
    pub(crate) cache: ArtifactCache,
    pub(crate) sink: Arc<dyn LogSink>,
    pub(crate) fuel: bool,
    pub(crate) ticker: Ticker,
}

impl Runtime {
    /// Build the engine (pooling allocator when the machine allows it, on-demand otherwise),
    /// start the ticker and link the world.
    pub fn new(config: RuntimeConfig, sink: Arc<dyn LogSink>) -> anyhow::Result<Arc<Self>> {
        let fuel = config.fuel;
        let functions = config
            .function_cache
            .clone()
            .unwrap_or_else(super::function_cache::shared);
        // `HAK_POOLING=0`: on-demand allocation from the start, never the pooling allocator
        // (a process whose address space is capped: `ulimit -v`, valgrind). The engine's
        // settings key the artifact cache, so the instruction gate precompiles its plugins
        // this way and its counted run, under valgrind, finds them.
        let pooling = std::env::var_os("HAK_POOLING").is_none_or(|v| v != "0");
        let engine = match pooling.then(|| Engine::new(&Self::config(true, fuel, &functions))) {
            Some(Ok(engine)) => engine,
            Some(Err(e)) => {
                tracing::warn!("pooling allocator unavailable ({e:#}); using on-demand allocation");
                Engine::new(&Self::config(false, fuel, &functions))?
            }
            None => Engine::new(&Self::config(false, fuel, &functions))?,
        };
        let mut linker = Linker::<PluginState>::new(&engine);
        link_minimal_wasi(&mut linker)?;
        super::bindings::add_to_linker(&mut linker)?;
        let cache = ArtifactCache::new(config.cache_dir, &engine);
        let ticker = Ticker::start(engine.clone());
        Ok(Arc::new(Runtime {
            engine,
            linker,
            cache,
            sink,
            fuel,
            ticker,
        }))
    }

    fn config(pooling: bool, fuel: bool, functions: &Arc<FunctionCache>) -> Config {
        let mut config = Config::new();
        config
            .wasm_component_model(true)
            .epoch_interruption(true)
            .consume_fuel(fuel)
            .max_wasm_stack(MAX_WASM_STACK_BYTES)
            .parallel_compilation(true);
        // The second component of a toolchain reuses the first one's compiled functions.
        if let Err(e) = config.enable_incremental_compilation(functions.clone()) {
            tracing::warn!("the compiled-function cache is off: {e:#}");
        }
        // `HAK_PERFMAP=1`: write /tmp/perf-<pid>.map so `perf report` names the compiled
        // plugin functions (profiling hak and guests; costs nothing when unset).
        if std::env::var_os("HAK_PERFMAP").is_some_and(|v| v == "1") {
            config.profiler(wasmtime::ProfilingStrategy::PerfMap);
        }
        if std::env::var_os("HAK_PORTABLE_CODE").is_some_and(|v| v == "1") {
            portable(&mut config);
        }
        if pooling {
            let mut pool = PoolingAllocationConfig::default();
            pool.total_component_instances(POOL_INSTANCES)
                .total_core_instances(POOL_INSTANCES * 4)
                .total_memories(POOL_INSTANCES * 2)
                .total_tables(POOL_INSTANCES * 4)
                .max_memories_per_component(4)
                .max_tables_per_component(8)
                .max_core_instances_per_component(64)
                .max_memory_size(MAX_MEMORY_MIB as usize * 1024 * 1024)
                .table_elements(50_000)
                .max_unused_warm_slots(100);
            config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
        }
        config
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Whether instructions are counted (plugins may have a `fuel` limit).
    pub fn fuel_enabled(&self) -> bool {
        self.fuel
    }

    pub fn cache(&self) -> &ArtifactCache {
        &self.cache
    }

    /// Whether the epoch ticker is parked: no guest of this engine started or ran for a
    /// whole check period (~1 s); the next guest call wakes it (`runtime::ticker`).
    pub fn epoch_ticker_parked(&self) -> bool {
        self.ticker.parked()
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        self.ticker.stop();
    }
}

/// `HAK_PORTABLE_CODE=1`: compile for x86-64 with SSE4.2 and POPCNT only, not the features
/// detected on this CPU (AVX2, AVX-512): artifacts that every x86-64 CPU of a fleet sharing a
/// cache runs, and that valgrind's CPU runs too (its CPUID has no AVX-512, so natively
/// detected settings would never match there: the instruction gate compiles its plugins
/// natively this way and counts them under valgrind). Elsewhere it changes nothing.
fn portable(config: &mut Config) {
    if !cfg!(all(target_arch = "x86_64", target_os = "linux")) {
        return;
    }
    if let Err(e) = config.target("x86_64-unknown-linux-gnu") {
        tracing::warn!("HAK_PORTABLE_CODE: {e:#}");
        return;
    }
    for flag in [
        "has_sse3",
        "has_ssse3",
        "has_sse41",
        "has_sse42",
        "has_popcnt",
    ] {
        // SAFETY: each flag names an instruction-set extension every x86-64 CPU since 2008
        // has (and valgrind emulates); the engine checks at creation that this CPU has them.
        unsafe {
            config.cranelift_flag_enable(flag);
        }
    }
}

/// WASI 0.2 minus http: io, clocks, random, cli, filesystem (with no preopened directory, so
/// no file is reachable) and sockets with every use refused (no TCP, no UDP, no name lookup:
/// wasmtime-wasi checks before it makes an OS socket). Sockets are linked only because
/// runtimes such as CPython (componentize-py) import them whether or not a plugin opens one.
/// A plugin importing anything else fails to load.
fn link_minimal_wasi(linker: &mut Linker<PluginState>) -> anyhow::Result<()> {
    use super::sync_io::{HasSyncIo, SyncIo};
    use wasmtime_wasi::cli::{WasiCli, WasiCliView};
    use wasmtime_wasi::clocks::{WasiClocks, WasiClocksView};
    use wasmtime_wasi::filesystem::{WasiFilesystem, WasiFilesystemView};
    use wasmtime_wasi::p2::bindings::{cli, clocks, filesystem, random, sync};
    use wasmtime_wasi::random::{WasiRandom, WasiRandomView};
    use wasmtime_wasi::WasiView;
    let l = linker;
    clocks::wall_clock::add_to_linker::<PluginState, WasiClocks>(l, PluginState::clocks)?;
    // Our own monotonic clock: its subscriptions never outlast the call (`runtime::clock`).
    clocks::monotonic_clock::add_to_linker::<PluginState, HasSelf<PluginState>>(l, |s| s)?;
    random::random::add_to_linker::<PluginState, WasiRandom>(l, PluginState::random)?;
    random::insecure::add_to_linker::<PluginState, WasiRandom>(l, PluginState::random)?;
    random::insecure_seed::add_to_linker::<PluginState, WasiRandom>(l, PluginState::random)?;
    cli::exit::add_to_linker::<PluginState, WasiCli>(l, PluginState::cli)?;
    cli::environment::add_to_linker::<PluginState, WasiCli>(l, PluginState::cli)?;
    cli::stdin::add_to_linker::<PluginState, WasiCli>(l, PluginState::cli)?;
    cli::stdout::add_to_linker::<PluginState, WasiCli>(l, PluginState::cli)?;
    cli::stderr::add_to_linker::<PluginState, WasiCli>(l, PluginState::cli)?;
    cli::terminal_input::add_to_linker::<PluginState, WasiCli>(l, PluginState::cli)?;
    cli::terminal_output::add_to_linker::<PluginState, WasiCli>(l, PluginState::cli)?;
    cli::terminal_stdin::add_to_linker::<PluginState, WasiCli>(l, PluginState::cli)?;
    cli::terminal_stdout::add_to_linker::<PluginState, WasiCli>(l, PluginState::cli)?;
    cli::terminal_stderr::add_to_linker::<PluginState, WasiCli>(l, PluginState::cli)?;
    filesystem::preopens::add_to_linker::<PluginState, WasiFilesystem>(l, PluginState::filesystem)?;
    sync::filesystem::types::add_to_linker::<PluginState, WasiFilesystem>(
        l,
        PluginState::filesystem,
    )?;
    {
        use wasmtime_wasi::p2::bindings::sockets;
        use wasmtime_wasi::sockets::{WasiSockets, WasiSocketsView};
        let options = sockets::network::LinkOptions::default();
        sockets::network::add_to_linker::<PluginState, WasiSockets>(
            l,
            &options,
            PluginState::sockets,
        )?;
        sockets::instance_network::add_to_linker::<PluginState, WasiSockets>(
            l,
            PluginState::sockets,
        )?;
        sockets::ip_name_lookup::add_to_linker::<PluginState, WasiSockets>(
            l,
            PluginState::sockets,
        )?;
        sockets::tcp_create_socket::add_to_linker::<PluginState, WasiSockets>(
            l,
            PluginState::sockets,
        )?;
        sync::sockets::tcp::add_to_linker::<PluginState, WasiSockets>(l, PluginState::sockets)?;
        sync::sockets::udp_create_socket::add_to_linker::<PluginState, WasiSockets>(
            l,
            PluginState::sockets,
        )?;
        sync::sockets::udp::add_to_linker::<PluginState, WasiSockets>(l, PluginState::sockets)?;
    }
    wasmtime_wasi_io::bindings::wasi::io::error::add_to_linker::<PluginState, HasIo>(l, |t| {
        t.ctx().table
    })?;
    // Our own synchronous io: it waits off a server's worker thread only when it must
    // (`runtime::sync_io`).
    sync::io::poll::add_to_linker::<PluginState, HasSyncIo>(l, |t| SyncIo(t.ctx().table))?;
    sync::io::streams::add_to_linker::<PluginState, HasSyncIo>(l, |t| SyncIo(t.ctx().table))?;
    Ok(())
}

struct HasIo;
impl wasmtime::component::HasData for HasIo {
    type Data<'a> = &'a mut wasmtime::component::ResourceTable;
}
