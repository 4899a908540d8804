//! `hak`: the command line over hak-host. See `hak --help`.

fn main() -> std::process::ExitCode {
    hak_host::cli::main()
}
