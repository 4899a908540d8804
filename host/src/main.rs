//! `hak`: the command line over hak-host. See `hak --help`.

/// mimalloc (`hak_host::alloc`): the many small, short-lived allocations of a call (JSON
/// values, strings, the transaction's protobufs) cost about half of what glibc's malloc
/// charges, on every thread.
#[global_allocator]
static ALLOCATOR: hak_host::alloc::Allocator = hak_host::alloc::Allocator;

fn main() -> std::process::ExitCode {
    hak_host::cli::main()
}
