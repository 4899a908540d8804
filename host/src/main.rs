//! `hak`: the command line over hak-host. See `hak --help`.

/// mimalloc: the many small, short-lived allocations of a call (JSON values, strings, the
/// transaction's protobufs) cost about half of what glibc's malloc charges, on every thread.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    hak_host::cli::main()
}
