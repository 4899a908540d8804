//! Building a Go plugin from its source directory: `go build` for `GOOS=wasip1` as a c-shared
//! module (offline: the local toolchain, no module proxy), then [`crate::authoring::componentize`]. Used
//! by `hak plugin build`; nothing else lives here.

use std::path::Path;

/// Build the Go plugin in `dir` with the Go binary `go` into the component `out`; returns the
/// component's size in bytes. The core module is written next to `out` and removed after.
pub fn build(go: &str, dir: &Path, out: &Path) -> anyhow::Result<usize> {
    let core = out.with_extension("core.wasm");
    let status = std::process::Command::new(go)
        .args(["build", "-buildmode=c-shared", "-ldflags=-s -w", "-o"])
        .arg(std::path::absolute(&core)?)
        .arg(".")
        .current_dir(dir)
        .env("GOOS", "wasip1")
        .env("GOARCH", "wasm")
        .env("GOTOOLCHAIN", "local")
        .env("GOPROXY", "off")
        .env("GOFLAGS", "-mod=mod")
        .status()
        .map_err(|e| anyhow::anyhow!("cannot run {go}: {e} (set $HAK_GO to the Go binary)"))?;
    anyhow::ensure!(status.success(), "go build failed in {}", dir.display());
    let bytes = std::fs::read(&core)?;
    let component = crate::authoring::componentize::componentize(&bytes)?;
    std::fs::write(out, &component)?;
    let _ = std::fs::remove_file(&core);
    Ok(component.len())
}
