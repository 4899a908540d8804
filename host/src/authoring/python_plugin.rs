//! Building a Python plugin from its project directory (an `app.py` registering a hook or
//! policy with `hak_guest`): componentize-py (PyPI) against the contract and the Python guest
//! SDK unpacked from this binary (`guest_sources`). Used by `hak plugin build`; nothing else
//! lives here.

use std::path::Path;

/// The module a Python plugin project's component is built from.
pub const APP_MODULE: &str = "app";

/// Whether `dir` is a Python plugin project (it has `app.py`).
pub fn is_project(dir: &Path) -> bool {
    dir.join(format!("{APP_MODULE}.py")).is_file()
}

/// Build the Python plugin in `dir` with the `componentize_py` binary into the component
/// `out`, against the contract and SDK under `sdk_root` (holding `wit/` and
/// `guest-sdk/python/`); the component's size in bytes.
pub fn build(
    componentize_py: &str,
    dir: &Path,
    out: &Path,
    sdk_root: &Path,
) -> anyhow::Result<usize> {
    let output = std::process::Command::new(componentize_py)
        .arg("-d")
        .arg(sdk_root.join("wit"))
        .args(["-w", "agent-plugin", "componentize", APP_MODULE])
        .arg("-p")
        .arg(dir)
        .arg("-p")
        .arg(sdk_root.join("guest-sdk/python"))
        .arg("-o")
        .arg(std::path::absolute(out)?)
        .output()
        .map_err(|e| {
            anyhow::anyhow!(
                "cannot run {componentize_py}: {e} (pip install componentize-py==0.25.1, or set $HAK_COMPONENTIZE_PY)"
            )
        })?;
    if !output.status.success() {
        let text = String::from_utf8_lossy(&output.stderr);
        // componentize-py ends with the Python traceback's last line; the Rust backtrace
        // around it says nothing to a plugin author.
        let reason = text
            .lines()
            .filter(|l| !l.starts_with("  ") && !l.trim().is_empty())
            .filter(|l| !l.contains("stack backtrace") && !l.starts_with("note:"))
            .collect::<Vec<_>>()
            .join(" | ");
        anyhow::bail!("componentize-py failed in {}: {reason}", dir.display());
    }
    Ok(std::fs::metadata(out)?.len() as usize)
}
