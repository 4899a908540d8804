//! `hak plugin new` scaffolds a plugin that builds and loads, in Rust, JavaScript and Go, with
//! an installed `hak` in an empty directory: the binary carries the contract and the guest
//! SDKs, so nothing reads the source tree. The scaffolded policy blocks a large transfer and
//! lets a small one through.

use hak_host::authoring::scaffold::{embedded_sdk_root, new_plugin, Lang, ScaffoldError};
use hak_tests::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn check_loads(wasm: &Path, name: &str) {
    let manifest = format!(
        "{RETURN_BYTES_HEADER}\n[[plugins]]\nname = \"{name}\"\npath = {:?}\nconfig = {{ maxTinybars = \"100000000\" }}\n",
        wasm.display().to_string()
    );
    let (host, _) = start(&manifest);
    let mut s = host.default_session();
    let small = s
        .call(
            "transfer_hbar_tool",
            r#"{"transfers":[{"accountId":"0.0.1002","amount":1}]}"#,
        )
        .unwrap();
    assert_eq!(small["raw"]["status"], "SUCCESS", "{small}");
    let big = s
        .call(
            "transfer_hbar_tool",
            r#"{"transfers":[{"accountId":"0.0.1002","amount":2}]}"#,
        )
        .unwrap();
    assert_eq!(
        big["raw"]["policyBlock"]["reason"], "200000000 tinybars to one recipient is too much",
        "{big}"
    );
}

fn fresh(dir: &str) -> PathBuf {
    let dir = root().join("target/test-tmp").join(dir);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `hak` installed into `prefix`: the binary the workspace built (`HAK_BIN` or
/// target/debug/hak), copied away from the checkout, as an installation leaves it. (Not
/// `cargo install --path host`: that resolves the host's features alone, unlike the
/// workspace's build, and so compiled most of the dependency tree a second time, ~4 minutes
/// of CI; what is tested here is the binary, not cargo.)
fn install_hak(prefix: &Path) -> PathBuf {
    let built = std::env::var_os("HAK_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/debug/hak"));
    let bin = prefix.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let installed = bin.join("hak");
    std::fs::copy(&built, &installed)
        .unwrap_or_else(|e| panic!("cannot copy {} (build it first): {e}", built.display()));
    installed
}

/// Run the installed `hak` in `dir` with its own home and nothing of the checkout around.
fn hak_in(hak: &Path, dir: &Path, home: &Path, args: &[&str]) -> Value {
    let out = Command::new(hak)
        .args(args)
        .current_dir(dir)
        .env("HOME", home)
        .env_remove("HAK_HOME")
        .env_remove("XDG_DATA_HOME")
        .env("HAK_GO", go())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "hak {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

pub(crate) fn go() -> String {
    let out = Command::new(root().join("scripts/go-path.sh"))
        .output()
        .unwrap();
    let go = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    assert!(
        !go.is_empty(),
        "no Go toolchain: run scripts/install-deps.sh"
    );
    go
}

fn shell(command: &str, dir: &Path) {
    let status = Command::new("sh")
        .args(["-c", command])
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "{command}");
}

/// Run a printed `command` in `dir` with `home`, the toolchain variable `unset` removed and
/// the toolchain's directory `tools` on a PATH otherwise bare (an installed hak that is not
/// beside a checkout's target/tools finds its toolchain there).
fn as_printed(command: &str, dir: &Path, home: &Path, unset: &str, tools: &Path) {
    let status = Command::new("sh")
        .args(["-c", command])
        .current_dir(dir)
        .env_remove(unset)
        .env("HOME", home)
        .env(
            "PATH",
            format!("{}:/usr/local/bin:/usr/bin:/bin", tools.display()),
        )
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "{command}");
}

#[test]
#[ignore = "needs Go and npm (scripts/install-deps.sh); scripts/test.sh runs it"]
fn an_installed_hak_scaffolds_and_builds_plugins_in_an_empty_directory() {
    let hak = install_hak(&fresh("installed-hak"));
    // Work and home outside the checkout, so a path into it cannot hide in one of theirs.
    let base = std::env::temp_dir().join(format!("hak-installed-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let (work, home) = (base.join("work"), base.join("home"));
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let checkout = root().display().to_string();
    // The scaffolded expectations (cases.json) hold for the component each language builds.
    let cases_pass = |wasm: &Path, project: &str| {
        let out = Command::new(&hak)
            .args(["plugin", "test"])
            .arg(wasm)
            .arg("--cases")
            .arg(work.join(project).join("cases.json"))
            .env("HOME", &home)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("3 cases: 3 passed, 0 failed"),
            "{project}: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let new = |lang: &str, name: &str| {
        let made = hak_in(&hak, &work, &home, &["plugin", "new", name, "--lang", lang]);
        assert!(
            made["check"]
                .as_str()
                .is_some_and(|c| c.contains("hak plugin test") && c.contains("--cases cases.json")),
            "{made}"
        );
        for file in made["files"].as_array().unwrap() {
            let text = std::fs::read_to_string(work.join(file.as_str().unwrap())).unwrap();
            assert!(!text.contains(&checkout), "{file} points into the checkout");
        }
        let build = made["build"].as_str().unwrap().to_owned();
        // The command names this hak and the toolchain it found; nothing else of the checkout.
        let rest = build
            .replace(hak.to_str().unwrap(), "hak")
            .replace(&go(), "go");
        assert!(!rest.contains(&checkout), "{build}");
        build
    };
    let build = new("rust", "rust-policy");
    assert!(
        build.contains("cargo build --release --target wasm32-wasip2"),
        "{build}"
    );
    // The scaffold ships with tests that run natively, host imports faked by the SDK.
    let status = Command::new(env!("CARGO"))
        .args(["test", "--quiet"])
        .current_dir(work.join("rust-policy"))
        .env("CARGO_TARGET_DIR", root().join("target/scaffold-target"))
        .status()
        .unwrap();
    assert!(status.success(), "cargo test in a fresh Rust plugin");
    let status = Command::new(env!("CARGO"))
        .args(["build", "--quiet", "--release", "--target", "wasm32-wasip2"])
        .current_dir(work.join("rust-policy"))
        // Shared across runs, apart from the workspace's own target dir.
        .env("CARGO_TARGET_DIR", root().join("target/scaffold-target"))
        .status()
        .unwrap();
    assert!(status.success());
    check_loads(
        &root().join("target/scaffold-target/wasm32-wasip2/release/rust_policy.wasm"),
        "rust-policy",
    );
    cases_pass(
        &root().join("target/scaffold-target/wasm32-wasip2/release/rust_policy.wasm"),
        "rust-policy",
    );

    let build = new("go", "go-policy");
    assert!(
        build.contains(" test . && ") && build.contains("hak plugin build"),
        "{build}"
    );
    // As printed: the scaffold's tests run natively (the SDK fakes the host imports off
    // wasm), then the build, with the Go the installed hak found.
    let go_bin = PathBuf::from(go());
    as_printed(&build, &work, &home, "HAK_GO", go_bin.parent().unwrap());
    check_loads(&work.join("go-policy/go-policy.wasm"), "go-policy");
    cases_pass(&work.join("go-policy/go-policy.wasm"), "go-policy");

    let build = new("js", "js-policy");
    assert!(
        build.contains("npm ci") && build.contains("test.js") && build.contains("build.js"),
        "{build}"
    );
    // The build command runs the scaffold's own tests (node's runner, host imports faked)
    // before it builds.
    shell(&build, &work);
    check_loads(&work.join("js-policy/js-policy.wasm"), "js-policy");
    cases_pass(&work.join("js-policy/js-policy.wasm"), "js-policy");

    // Python: this installed copy (not beside a checkout's target/tools) finds no
    // componentize-py on a bare PATH, and says in one line how to get it.
    // `hak plugin new NAME --lang python` by `bin` on a bare PATH, nothing named in the env.
    let new_bare = |bin: &Path, name: &str| -> Value {
        let out = Command::new(bin)
            .args(["plugin", "new", name, "--lang", "python"])
            .current_dir(&work)
            .env("HOME", &home)
            .env("PATH", "/usr/bin:/bin")
            .env_remove("HAK_COMPONENTIZE_PY")
            .output()
            .unwrap();
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let bare = new_bare(&hak, "py-bare");
    let needs = bare["needs"][0].as_str().unwrap_or_default();
    assert!(
        needs.starts_with("componentize-py not found: pip install componentize-py==0.25.1"),
        "{bare}"
    );
    // The checkout's own hak (target/debug/hak, as the README's set-up leaves it) finds the
    // one the set-up installed beside it, with nothing in the environment.
    let found = new_bare(&root().join("target/debug/hak"), "py-found");
    assert!(found.get("needs").is_none(), "{found}");
    // Built as printed by the installed copy, with componentize-py on the PATH.
    let made = hak_in(
        &hak,
        &work,
        &home,
        &["plugin", "new", "py-policy", "--lang", "python"],
    );
    let build = made["build"].as_str().unwrap();
    assert!(!build.contains('<'), "no placeholder: {build}");
    let venv_bin = root().join("target/tools/componentize-py-venv/bin");
    as_printed(build, &work, &home, "HAK_COMPONENTIZE_PY", &venv_bin);
    check_loads(&work.join("py-policy/py-policy.wasm"), "py-policy");
    cases_pass(&work.join("py-policy/py-policy.wasm"), "py-policy");

    let sdks: Vec<_> = std::fs::read_dir(home.join(".local/share/hak/sdk"))
        .unwrap()
        .collect();
    assert_eq!(sdks.len(), 1, "one unpacked copy for four projects");
    let _ = std::fs::remove_dir_all(&base);
}

#[test]
fn scaffolding_refuses_bad_names_and_existing_projects() {
    let dir = fresh("scaffold-refusals");
    let sdk = embedded_sdk_root(Some(&dir.join("home"))).unwrap();
    new_plugin(Lang::Rust, "my-policy", &dir, &sdk).unwrap();
    let err = new_plugin(Lang::Rust, "my-policy", &dir, &sdk).unwrap_err();
    assert!(matches!(err, ScaffoldError::Exists(_)), "{err}");
    assert!(err.to_string().contains("already exists"), "{err}");
    let err = new_plugin(Lang::Js, "Bad Name", &dir, &sdk).unwrap_err();
    assert!(matches!(err, ScaffoldError::BadName(_)), "{err}");
    assert!(err.to_string().contains("lowercase"), "{err}");
}

/// The JS SDK's own unit tests (`guest-sdk/js/test/*.test.mjs`, node's runner with the host
/// imports faked, as `hak-js-test` runs a plugin's).
#[test]
fn the_js_sdks_own_tests_pass() {
    let dir = root().join("guest-sdk/js/test");
    let mut tests: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".test.mjs"))
        .collect();
    tests.sort();
    assert!(!tests.is_empty(), "no tests in {}", dir.display());
    let out = Command::new("node")
        .arg(root().join("guest-sdk/js/bin/test.js"))
        .args(&tests)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Build `source` (a plugin module importing `@hak/guest`) with the checkout's JS SDK.
fn build_js(dir: &Path, name: &str, source: &str) -> PathBuf {
    let src = dir.join(format!("{name}.js"));
    std::fs::write(&src, source).unwrap();
    let wasm = dir.join(format!("{name}.wasm"));
    js_build(&src, &wasm, &[]);
    wasm
}

/// `hak-js-build src -o wasm` with `extra` arguments; panics with its stderr if it fails.
fn js_build(src: &Path, wasm: &Path, extra: &[&str]) {
    let out = Command::new("node")
        .arg(root().join("guest-sdk/js/bin/build.js"))
        .arg(src)
        .arg("-o")
        .arg(wasm)
        .args(extra)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "build {}: {}",
        src.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A return-bytes host with one plugin, `extra` manifest lines after its path.
fn host_with(wasm: &Path, extra: &str) -> hak_host::Host {
    let manifest = format!(
        "{RETURN_BYTES_HEADER}\n[[plugins]]\nname = \"p\"\npath = {:?}\n{extra}",
        wasm.display().to_string()
    );
    start(&manifest).0
}

/// JS exports are synchronous (the SDK's build rewrites componentize-js's async ones): a
/// stage function answers at once, its verdict lowered as before (message, code, details),
/// and an `async` one — whose promise is not a verdict — fails its call with words that say
/// why, instead of being awaited.
#[test]
fn js_stage_functions_answer_synchronously_and_an_async_one_is_refused_by_name() {
    let dir = fresh("js-sync-exports");
    let body = |asynchronous: &str| {
        format!(
            "import {{ definePlugin, Stage, block }} from '@hak/guest';\n\
             export default definePlugin({{\n\
               describe() {{ return {{ name: 'Sync', relevantTools: ['transfer_hbar_tool'], policyStages: [Stage.POST_PARAMS_NORMALIZATION] }}; }},\n\
               policy: {{ {asynchronous}postParamsNormalization(input) {{\n\
                 return block('no transfers today', {{ code: 'CLOSED', details: {{ recipients: input.normalisedParams.hbarTransfers.length - 1 }} }});\n\
               }} }},\n\
             }});\n"
        )
    };
    let call = |wasm: &Path| {
        host_with(wasm, "")
            .default_session()
            .call(
                "transfer_hbar_tool",
                r#"{"transfers":[{"accountId":"0.0.1002","amount":1}]}"#,
            )
            .unwrap()
    };
    let sync = call(&build_js(&dir, "sync", &body("")));
    let block = &sync["raw"]["policyBlock"];
    assert_eq!(block["reason"], "no transfers today", "{sync}");
    assert_eq!(block["reasonCode"], "CLOSED", "{sync}");
    assert_eq!(block["details"]["recipients"], 1, "{sync}");
    let refused = call(&build_js(&dir, "async", &body("async ")));
    assert_eq!(refused["raw"]["status"], "ERROR", "{refused}");
    assert!(
        refused["raw"]["error"]
            .as_str()
            .is_some_and(|e| e.contains("not a promise (it may not be async)")),
        "{refused}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A JS policy is reached three ways: `hak:fast/judge` (a tool it names, no facts read: the
/// SDK's `judge`, or the build's for a plugin made without the SDK), `policy` without facts
/// (the build's short path, bin/fast-stages.js) and `policy` with facts (componentize-js's
/// generated lifting); hooks take the last two. Each way must give the plugin the same fields
/// and the host the same answers: stage, method and tool type arrive, params only when read,
/// facts only when read, a hook's replacement reaches the policy, a block carries its words, a
/// throw fails the call with its message.
#[test]
fn js_stage_inputs_and_answers_are_the_same_on_the_fast_path_and_the_generated_one() {
    let dir = fresh("js-fast-stages");
    let source = |tools: &str, reads: &str| {
        format!(
            "import {{ definePlugin, Stage, allow, block, proceed, replace }} from '@hak/guest';\n\
             export default definePlugin({{\n\
               describe(config) {{ return {{ name: 'Echo', relevantTools: [{tools}],\n\
                 hookStages: [Stage.PRE_TOOL_EXECUTION], policyStages: [Stage.POST_PARAMS_NORMALIZATION],\n\
                 state: config, reads: {{ '*': {reads} }} }}; }},\n\
               hooks: {{ preToolExecution(input, config) {{\n\
                 if (!config.memo) return proceed;\n\
                 return replace({{ ...input.rawParams, transactionMemo: config.memo }});\n\
               }} }},\n\
               policy: {{ postParamsNormalization(input, config) {{\n\
                 if (config.fail) throw 'failing as asked';\n\
                 if (config.allow) return allow;\n\
                 return block(JSON.stringify({{ stage: input.stage, method: input.method, toolType: input.toolType,\n\
                   memo: input.paramsJson === '' ? null : input.normalisedParams.transactionMemo,\n\
                   movements: input.facts === undefined ? null : input.movements.map((m) => `${{m.to}}:${{m.amount}}`) }}));\n\
               }} }},\n\
             }});\n"
        )
    };
    let named = "'transfer_hbar_tool'";
    let none = build_js(&dir, "none", &source(named, "[]"));
    let params = build_js(&dir, "params", &source(named, "['params']"));
    let every = build_js(&dir, "every", &source("'*'", "['params']"));
    let facts = build_js(&dir, "facts", &source(named, "['params', 'facts']"));
    let call = |wasm: &Path, config: &str| {
        host_with(
            wasm,
            &format!("capabilities = [\"params:replace\"]\nconfig = {config}\n"),
        )
        .default_session()
            .call(
                "transfer_hbar_tool",
                r#"{"transfers":[{"accountId":"0.0.1002","amount":1},{"accountId":"0.0.1003","amount":2}],"transactionMemo":"sent"}"#,
            )
            .unwrap()
    };
    let echo = |wasm: &Path, config: &str| -> Value {
        let out = call(wasm, config);
        let reason = out["raw"]["policyBlock"]["reason"].as_str();
        serde_json::from_str(reason.unwrap_or_else(|| panic!("{out}"))).unwrap()
    };
    let seen = |memo: Value, movements: Value| {
        serde_json::json!({"stage": "post-params-normalization", "method": "transfer_hbar_tool",
            "toolType": "transaction", "memo": memo, "movements": movements})
    };
    // judge: nothing read, then params (a hook that proceeds, then one that replaces).
    assert_eq!(echo(&none, "{}"), seen(Value::Null, Value::Null));
    assert_eq!(echo(&params, "{}"), seen("sent".into(), Value::Null));
    assert_eq!(
        echo(&params, "{ memo = \"swapped\" }"),
        seen("swapped".into(), Value::Null)
    );
    // policy's short path: every tool ("*"), params read.
    assert_eq!(
        echo(&every, "{ memo = \"swapped\" }"),
        seen("swapped".into(), Value::Null)
    );
    // Generated lifting: the facts (both recipients, in tinybars).
    let movements = serde_json::json!(["0.0.1002:100000000", "0.0.1003:200000000"]);
    assert_eq!(
        echo(&facts, "{ memo = \"swapped\" }"),
        seen("swapped".into(), movements)
    );
    // `allow` written by the short paths, an error by the generated lowering, on all three.
    for wasm in [&none, &every, &facts] {
        let allowed = call(wasm, "{ allow = true }");
        assert_eq!(allowed["raw"]["status"], "SUCCESS", "{allowed}");
        let failed = call(wasm, "{ fail = true }");
        assert_eq!(failed["raw"]["status"], "ERROR", "{failed}");
        assert!(
            failed["raw"]["error"]
                .as_str()
                .is_some_and(|e| e.contains("failing as asked")),
            "{failed}"
        );
    }
    // A plugin written without the SDK, judged through its policy function with the record.
    let bare = build_js(
        &dir,
        "bare",
        "const none = () => ({ tag: 'proceed' });\n\
         const allow = () => ({ tag: 'allow' });\n\
         export default {\n\
           plugin: { describe: () => ({ name: 'Bare', description: '', relevantTools: ['transfer_hbar_tool'],\n\
             hookStages: [], policyStages: ['post-params-normalization'] }) },\n\
           hooks: { preToolExecution: none, postParamsNormalization: none, postCoreAction: none, postToolExecution: none },\n\
           policy: { shouldBlockPreToolExecution: allow, shouldBlockPostCoreAction: allow, shouldBlockPostSecondaryAction: allow,\n\
             shouldBlockPostParamsNormalization: (input) => ({ tag: 'block', val: { message: JSON.stringify({ stage: input.stage,\n\
               method: input.method, toolType: input.toolType, memo: input.params === '' ? null : JSON.parse(input.params).normalisedParams.transactionMemo,\n\
               movements: input.facts === undefined ? null : input.facts.movements.length }) } }) },\n\
           events: { onToolFailure() {} },\n\
           inputs: { reads: () => [{ tool: '*', reads: { params: true, facts: false } }] },\n\
         };\n",
    );
    assert_eq!(echo(&bare, "{}"), seen("sent".into(), Value::Null));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `hak-js-build --aot` (weval's ahead-of-time compiled engine) makes a component that loads
/// and decides as the interpreted build does: max-recipients over one to six recipients and
/// tools it does not count. Needs weval (scripts/install-weval.sh, ~13 minutes of compiling, or
/// HAK_WEVAL); without it the test says so and checks nothing.
#[test]
fn a_js_plugin_built_ahead_of_time_decides_as_the_interpreted_build() {
    let weval = std::env::var_os("HAK_WEVAL")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let cargo = std::env::var_os("CARGO_HOME")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cargo"));
            cargo.join("hak-tools/weval-0.5.1/bin/weval")
        });
    if !weval.is_file() {
        eprintln!(
            "skipped: no weval at {} (scripts/install-weval.sh)",
            weval.display()
        );
        return;
    }
    let dir = fresh("js-aot");
    let wasm = dir.join("max-recipients-aot.wasm");
    // build.js finds weval where this test did (HAK_WEVAL, inherited, or the cargo home).
    js_build(
        &root().join("example-plugins/js/max-recipients.js"),
        &wasm,
        &["--aot"],
    );
    let decisions = |wasm: &Path| -> Vec<Value> {
        let host = host_with(wasm, "config = { maxRecipients = 3 }\n");
        let mut session = host.default_session();
        let mut seen = Vec::new();
        for n in 1..=6 {
            let transfers: Vec<String> = (0..n)
                .map(|i| format!(r#"{{"accountId":"0.0.{}","amount":1}}"#, 2001 + i))
                .collect();
            let params = format!(r#"{{"transfers":[{}]}}"#, transfers.join(","));
            let out = session.call("transfer_hbar_tool", &params).unwrap();
            seen.push(serde_json::json!([
                out["raw"]["status"],
                out["raw"]["policyBlock"]["reason"]
            ]));
        }
        let other = session.call("get_hbar_balance_query_tool", "{}").unwrap();
        seen.push(other["raw"]["policyBlock"].clone());
        seen
    };
    let aot = decisions(&wasm);
    assert_eq!(aot, decisions(&plugin("js/max-recipients")));
    assert_eq!(aot[2][0], "SUCCESS", "{aot:?}");
    assert_eq!(aot[3][1], "4 recipients exceed the maximum of 3", "{aot:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The JS build reads a stage's facts straight into the SDK's shapes for a plugin made with
/// the SDK (bin/fast-stages.js), and leaves them to componentize-js's generated lifting for one
/// made without it (here made into the same shapes by the SDK's `StageInput`): both must see
/// the same facts for tools whose facts carry every field (an NFT, a token, allowances, an
/// account's whole balance, changes, a memo, no source).
#[test]
fn js_facts_read_for_the_sdk_match_componentize_jss_own_lifting() {
    let dir = fresh("js-fast-facts");
    let show = "JSON.stringify(facts ?? null, (k, v) => (typeof v === 'bigint' ? `${v}n` : v))";
    let sdk = build_js(
        &dir,
        "sdk",
        &format!(
            "import {{ definePlugin, Stage, block }} from '@hak/guest';\n\
             export default definePlugin({{\n\
               describe() {{ return {{ name: 'Facts', relevantTools: ['*'], policyStages: [Stage.POST_PARAMS_NORMALIZATION], reads: {{ '*': ['facts'] }} }}; }},\n\
               policy: {{ postParamsNormalization(input) {{ const facts = input.facts; return block({show}); }} }},\n\
             }});\n"
        ),
    );
    let bare = build_js(
        &dir,
        "bare",
        &format!(
            "import {{ StageInput }} from '@hak/guest';\n\
             const none = () => ({{ tag: 'proceed' }});\n\
             const allow = () => ({{ tag: 'allow' }});\n\
             export default {{\n\
               plugin: {{ describe: () => ({{ name: 'Bare', description: '', relevantTools: ['*'], hookStages: [], policyStages: ['post-params-normalization'] }}) }},\n\
               hooks: {{ preToolExecution: none, postParamsNormalization: none, postCoreAction: none, postToolExecution: none }},\n\
               policy: {{ shouldBlockPreToolExecution: allow, shouldBlockPostCoreAction: allow, shouldBlockPostSecondaryAction: allow,\n\
                 shouldBlockPostParamsNormalization: (record) => {{ const facts = new StageInput(record).facts; return {{ tag: 'block', val: {{ message: {show} }} }}; }} }},\n\
               events: {{ onToolFailure() {{}} }},\n\
               inputs: {{ reads: () => [{{ tool: '*', reads: {{ params: false, facts: true }} }}] }},\n\
             }};\n"
        ),
    );
    let facts = |wasm: &Path, tool: &str, params: &str| -> Value {
        let out = host_with(wasm, "")
            .default_session()
            .call(tool, params)
            .unwrap();
        let reason = out["raw"]["policyBlock"]["reason"].as_str();
        serde_json::from_str(reason.unwrap_or_else(|| panic!("{tool}: {out}"))).unwrap()
    };
    let calls = [
        (
            "transfer_hbar_tool",
            r#"{"transfers":[{"accountId":"0.0.2001","amount":1},{"accountId":"0.0.2002","amount":0.5}],"transactionMemo":"memo"}"#,
        ),
        (
            "delete_account_tool",
            r#"{"accountId":"0.0.2003","transferAccountId":"0.0.2004"}"#,
        ),
        (
            "transfer_non_fungible_token_tool",
            r#"{"tokenId":"0.0.6006","recipients":[{"recipientId":"0.0.2005","serialNumber":7}]}"#,
        ),
        (
            "approve_hbar_allowance_tool",
            r#"{"spenderAccountId":"0.0.2002","amount":1}"#,
        ),
        (
            "update_token_tool",
            r#"{"tokenId":"0.0.5005","treasuryAccountId":"0.0.2009"}"#,
        ),
    ];
    let mut seen = Vec::new();
    for (tool, params) in calls {
        let fast = facts(&sdk, tool, params);
        assert_eq!(fast, facts(&bare, tool, params), "{tool}");
        seen.push(fast);
    }
    assert_eq!(seen[0]["memo"], "memo");
    assert_eq!(seen[0]["movements"][1]["amount"], "50000000n");
    assert_eq!(
        seen[1]["changes"],
        serde_json::json!([{"kind": "account", "id": "0.0.2003"}])
    );
    assert_eq!(seen[1]["movements"][0]["amount"], "18446744073709551615n");
    assert_eq!(
        seen[2]["movements"][0]["asset"],
        serde_json::json!({"kind": "nft", "id": "0.0.6006"})
    );
    assert_eq!(seen[2]["tokens"], serde_json::json!(["0.0.6006"]));
    assert_eq!(seen[3]["movements"][0]["via"], "allowance");
    assert_eq!(seen[4]["movements"][0]["asset"]["kind"], "token");
    assert!(seen[4].get("source").is_none(), "{}", seen[4]);
    let _ = std::fs::remove_dir_all(&dir);
}
