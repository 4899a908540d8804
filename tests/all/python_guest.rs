//! Hooks and policies in Python (componentize-py, `guest-sdk/python`): the SDK's own tests, a
//! scaffolded policy built and served that blocks with the kit's message, the Python twins
//! deciding like the Rust ones over the generated corpus, and the hostile basics (an endless
//! loop, a memory bomb, an exception in `describe`) contained like in the other languages.

use hak_tests::*;
use std::path::{Path, PathBuf};
use std::process::Command;

/// componentize-py as scripts/install-deps.sh installs it (or `$HAK_COMPONENTIZE_PY`).
fn componentize_py() -> String {
    std::env::var("HAK_COMPONENTIZE_PY").unwrap_or_else(|_| {
        root()
            .join("target/tools/componentize-py-venv/bin/componentize-py")
            .display()
            .to_string()
    })
}

fn hak() -> PathBuf {
    std::env::var_os("HAK_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/debug/hak"))
}

/// `hak plugin build <dir> -o <out>` with componentize-py.
fn build(dir: &Path, out: &Path) {
    let done = Command::new(hak())
        .args(["plugin", "build"])
        .arg(dir)
        .arg("-o")
        .arg(out)
        .env("HAK_COMPONENTIZE_PY", componentize_py())
        .output()
        .unwrap();
    assert!(
        done.status.success(),
        "hak plugin build {}: {}",
        dir.display(),
        String::from_utf8_lossy(&done.stderr)
    );
}

fn fresh(name: &str) -> PathBuf {
    let dir = root().join(format!("target/test-tmp/python-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn the_python_sdk_passes_its_own_tests() {
    let out = Command::new("python3")
        .args(["-m", "unittest", "-q"])
        .current_dir(root().join("guest-sdk/python"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "python3 -m unittest in guest-sdk/python: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
#[ignore = "needs componentize-py (scripts/install-deps.sh); scripts/test.sh runs it"]
fn a_scaffolded_python_policy_built_and_served_blocks_with_the_kits_message() {
    let dir = fresh("scaffold");
    let sdk = hak_host::authoring::scaffold::embedded_sdk_root(None).unwrap();
    let made = hak_host::authoring::scaffold::new_plugin(
        hak_host::authoring::scaffold::Lang::Python,
        "py-policy",
        &dir,
        &sdk,
    )
    .unwrap();
    assert!(made.build.contains("python3 -m unittest"), "{}", made.build);
    // Its own tests, natively (the host's imports faked by the SDK).
    let project = dir.join("py-policy");
    let tests = Command::new("python3")
        .args(["-m", "unittest", "-q"])
        .current_dir(&project)
        .env("PYTHONPATH", sdk.join("python"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap();
    assert!(
        tests.status.success(),
        "{}",
        String::from_utf8_lossy(&tests.stderr)
    );
    let wasm = dir.join("py-policy.wasm");
    build(&project, &wasm);

    // The scaffolded cases hold for the component.
    let cases = Command::new(hak())
        .args(["plugin", "test"])
        .arg(&wasm)
        .arg("--cases")
        .arg(project.join("cases.json"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&cases.stdout);
    assert!(
        cases.status.success() && stdout.contains("3 cases: 3 passed, 0 failed"),
        "{stdout}{}",
        String::from_utf8_lossy(&cases.stderr)
    );

    // Served: a small transfer goes through, a large one is blocked with the kit's words.
    let manifest = format!(
        "{LOCAL}\n[[plugins]]\nname = \"py-policy\"\npath = {:?}\nconfig = {{ maxTinybars = \"100000000\" }}\n",
        wasm.display().to_string()
    );
    let (addr, _server) = serve(&manifest);
    let call = |amount: u32| {
        let body = format!(r#"{{"transfers":[{{"accountId":"0.0.1002","amount":{amount}}}]}}"#);
        http(addr, "POST", "/v1/tools/transfer_hbar_tool", &[], &body).2
    };
    let small = call(1);
    assert_eq!(small["raw"]["status"], "SUCCESS", "{small}");
    let big = call(2);
    assert_eq!(
        big["humanMessage"],
        "Failed to execute Transfer HBAR: Action transfer_hbar_tool blocked by policy: py-policy (Blocks large HBAR transfers)",
        "{big}"
    );
    assert_eq!(
        big["raw"]["policyBlock"]["reason"],
        "200000000 tinybars to one recipient is too much"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[ignore = "needs the Python plugins (scripts/build-plugins.sh python); scripts/test.sh runs it"]
fn the_python_twins_decide_like_the_rust_ones_over_the_generated_corpus() {
    for (name, config) in crate::differential::PAIRS {
        if !root()
            .join(format!("example-plugins/python/{name}"))
            .is_dir()
        {
            continue;
        }
        let rust = crate::differential::load(&format!("rust/{name}"), name, config);
        let python = crate::differential::load(&format!("python/{name}"), name, config);
        let (compared, blocks) = crate::differential::compare(name, &rust, &python);
        eprintln!("{name}: {compared} inputs compared, {blocks} blocked");
        assert!(
            compared >= 500 && blocks >= 50,
            "{name}: {compared} compared, {blocks} blocked"
        );
    }
}

const HOSTILE: &str = r#"
from hak_guest import AbstractPolicy, register
from hak_guest.exports import Events, Hooks, Inputs, Plugin, Policy  # noqa: F401


class Hostile(AbstractPolicy):
    def __init__(self, config):
        self.mode = config.get("mode")
        if self.mode == "raise":
            raise RuntimeError("describe blew up")

    @property
    def name(self):
        return "Hostile"

    @property
    def relevant_tools(self):
        return ["*"]

    async def should_block_pre_tool_execution(self, context, params, method):
        if self.mode == "loop":
            while True:
                pass
        if self.mode == "bomb":
            hoard = []
            while True:
                hoard.append(bytearray(1 << 20))
        return False


register(Hostile)
"#;

/// A host with the hostile component in `mode` (a 96 MiB memory cap, a 300 ms deadline —
/// 10 s for the memory bomb: filling 96 MiB a megabyte at a time took more than 300 ms once
/// on a busy 2-core machine, and the cap, not the clock, is what that mode tests).
fn hostile_host(wasm: &Path, mode: &str) -> Result<hak_host::Host, String> {
    let deadline_ms = if mode == "bomb" { 10_000 } else { 300 };
    try_start(&format!(
        "{LOCAL}\n[[plugins]]\nname = \"hostile\"\npath = {:?}\nconfig = {{ mode = {mode:?} }}\n[plugins.limits]\nmemory_mib = 96\ndeadline_ms = {deadline_ms}\n",
        wasm.display().to_string()
    ))
    .map(|(host, _)| host)
    .map_err(|e| e.to_string())
}

const TRANSFER: &str = r#"{"transfers":[{"accountId":"0.0.1002","amount":1}]}"#;

#[test]
#[ignore = "needs componentize-py (scripts/install-deps.sh); scripts/test.sh runs it"]
fn a_python_loop_memory_bomb_and_failing_describe_are_contained() {
    let dir = fresh("hostile");
    std::fs::create_dir_all(dir.join("project")).unwrap();
    std::fs::write(dir.join("project/app.py"), HOSTILE).unwrap();
    let wasm = dir.join("hostile.wasm");
    build(&dir.join("project"), &wasm);

    let err = hostile_host(&wasm, "raise").err().expect("refused at load");
    assert!(
        err.contains("plugin hostile") && err.contains("describe blew up"),
        "{err}"
    );
    for (mode, cause) in [("loop", "deadline"), ("bomb", "memory")] {
        let host = hostile_host(&wasm, mode).unwrap();
        let mut session = host.default_session();
        let out = session.call("transfer_hbar_tool", TRANSFER).unwrap();
        assert_eq!(out["raw"]["pluginFailure"]["cause"], cause, "{mode}: {out}");
        assert_eq!(out["raw"]["pluginFailure"]["plugin"], "hostile", "{out}");
        // Contained: the host answers the next call (the plugin fails again, on its own).
        let again = session.call("get_hbar_balance_query_tool", r#"{"accountId":"0.0.1001"}"#);
        assert!(again.is_ok());
    }
    // The same component with a harmless config lets calls through.
    let calm = hostile_host(&wasm, "calm").unwrap();
    let out = calm
        .default_session()
        .call("transfer_hbar_tool", TRANSFER)
        .unwrap();
    assert_eq!(out["raw"]["status"], "SUCCESS", "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}
