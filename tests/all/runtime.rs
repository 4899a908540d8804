//! The engine side: precompiled artifacts survive a restart (the second start compiles
//! nothing), a corrupt artifact is recompiled rather than trusted, trusted native plugins
//! run in the same chain as sandboxed ones, and loading describes a plugin once (the first
//! context gets the instance `describe` ran in, unless describe depended on its context).

use hak_host::lifecycle::native::NativePlugin;
use hak_host::manifest::Manifest;
use hak_host::model::stage::{Stage, StageSet};
use hak_host::plugin::{BlockReason, PluginDescription, StageCall, Verdict};
use hak_host::tools::ToolType;
use hak_host::{Host, HostBuilder};
use hak_tests::*;
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn fresh_dir(tag: &str) -> PathBuf {
    let dir = root().join(format!("target/test-tmp/{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn three_plugins() -> String {
    format!(
        "{RETURN_BYTES_HEADER}{}{}{}",
        plugin_entry(
            "max",
            "rust/max-recipients",
            "config = { maxRecipients = 3 }"
        ),
        plugin_entry(
            "reject",
            "rust/reject-tool",
            "config = { relevantTools = [\"get_hbar_balance_query_tool\"] }"
        ),
        plugin_entry("rec", "fixtures/recorder", "config = { tag = \"R\" }"),
    )
}

fn build(manifest: &str, cache: &Path) -> Host {
    let manifest = Manifest::parse(manifest, "test", root()).unwrap();
    HostBuilder::new(manifest)
        .cache_dir(Some(cache.to_owned()))
        .build()
        .unwrap()
}

#[test]
fn a_second_start_loads_every_plugin_precompiled_and_compiles_nothing() {
    let dir = fresh_dir("cache-restart");
    let first = build(&three_plugins(), &dir);
    assert_eq!(
        (
            first.runtime().cache().compiles(),
            first.runtime().cache().hits()
        ),
        (3, 0)
    );
    drop(first);
    let second = build(&three_plugins(), &dir);
    assert_eq!(
        (
            second.runtime().cache().compiles(),
            second.runtime().cache().hits()
        ),
        (0, 3)
    );
    let out = second
        .default_session()
        .call("transfer_hbar_tool", &transfer(2))
        .unwrap();
    assert_eq!(out["raw"]["status"], "SUCCESS", "{out}");
}

#[test]
fn a_corrupt_or_truncated_artifact_is_recompiled_not_trusted() {
    let dir = fresh_dir("cache-corrupt");
    drop(build(&three_plugins(), &dir));
    let artifacts: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "cwasm"))
        .collect();
    assert_eq!(artifacts.len(), 3);
    std::fs::write(&artifacts[0], b"not an artifact").unwrap();
    let bytes = std::fs::read(&artifacts[1]).unwrap();
    std::fs::write(&artifacts[1], &bytes[..bytes.len() / 3]).unwrap();
    let host = build(&three_plugins(), &dir);
    assert_eq!(
        (
            host.runtime().cache().compiles(),
            host.runtime().cache().hits()
        ),
        (2, 1)
    );
    let out = host
        .default_session()
        .call("transfer_hbar_tool", &transfer(2))
        .unwrap();
    assert_eq!(out["raw"]["status"], "SUCCESS", "{out}");
}

/// A trusted in-process policy: blocks transfers with more than one recipient.
struct OneRecipient(PluginDescription);

impl NativePlugin for OneRecipient {
    fn description(&self) -> &PluginDescription {
        &self.0
    }
    fn policy(&self, call: &StageCall<'_>) -> Result<Verdict, String> {
        assert_eq!(
            (call.stage, call.method, call.tool_type),
            (
                Stage::PostParamsNormalization,
                "transfer_hbar_tool",
                ToolType::Transaction
            )
        );
        let v: serde_json::Value = serde_json::from_str(call.input).map_err(|e| e.to_string())?;
        let positive = v["normalisedParams"]["hbarTransfers"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| !t["amount"].as_str().unwrap().starts_with('-'))
            .count();
        Ok(if positive > 1 {
            Verdict::Block(BlockReason {
                message: format!("{positive} recipients"),
                code: None,
                details_json: None,
            })
        } else {
            Verdict::Allow
        })
    }
}

#[test]
fn native_plugins_run_after_the_manifest_plugins_in_the_same_chain() {
    let manifest = format!(
        "{RETURN_BYTES_HEADER}{}",
        plugin_entry(
            "rec",
            "fixtures/recorder",
            "config = { tag = \"R\", stages = [\"post-params-normalization\"] }"
        )
    );
    let logs = Arc::new(Logs::default());
    let description = PluginDescription {
        name: "One Recipient".into(),
        description: "Only one recipient per transfer".into(),
        relevant_tools: vec!["transfer_hbar_tool".into()],
        hook_stages: StageSet::default(),
        policy_stages: [Stage::PostParamsNormalization].into_iter().collect(),
    };
    let host = HostBuilder::new(Manifest::parse(&manifest, "test", root()).unwrap())
        .cache_dir(Some(cache_dir()))
        .log_sink(logs.clone())
        .native_plugin(Arc::new(OneRecipient(description)))
        .build()
        .unwrap();
    let mut session = host.default_session();
    assert_eq!(
        session.call("transfer_hbar_tool", &transfer(1)).unwrap()["raw"]["status"],
        "SUCCESS"
    );
    let out = session.call("transfer_hbar_tool", &transfer(2)).unwrap();
    assert_eq!(
        out["raw"]["error"],
        "Failed to execute Transfer HBAR: Action transfer_hbar_tool blocked by policy: One Recipient (Only one recipient per transfer)"
    );
    assert_eq!(out["raw"]["policyBlock"]["reason"], "2 recipients");
    // The wasm recorder ran first at that stage, both times.
    assert_eq!(
        logs.take()
            .iter()
            .filter(|l| l.starts_with("R policy post-params-normalization"))
            .count(),
        2
    );
}

fn instantiations(host: &Host, name: &str) -> u64 {
    let plugin = host
        .plugins()
        .into_iter()
        .find(|p| p.spec.name == name)
        .unwrap();
    plugin
        .stats
        .instantiations
        .load(std::sync::atomic::Ordering::Relaxed)
}

#[test]
fn loading_describes_once_and_the_first_context_reuses_that_instance() {
    let manifest = format!(
        "{RETURN_BYTES_HEADER}{}{}",
        plugin_entry(
            "max",
            "rust/max-recipients",
            "config = { maxRecipients = 3 }"
        ),
        plugin_entry(
            "stateful",
            "fixtures/hostile",
            "config = { mode = \"state-describe\" }"
        ),
    );
    let (host, _) = start(&manifest);
    assert_eq!(instantiations(&host, "max"), 1, "load describes once");
    assert_eq!(instantiations(&host, "stateful"), 1);
    let mut first = host.default_session();
    let out = first.call("transfer_hbar_tool", &transfer(2)).unwrap();
    assert_eq!(out["raw"]["status"], "SUCCESS", "{out}");
    assert_eq!(
        instantiations(&host, "max"),
        1,
        "the first context got the instance described at load"
    );
    assert_eq!(
        instantiations(&host, "stateful"),
        2,
        "a describe that read its state runs again in the context it serves"
    );
    let mut other = host.default_session();
    other.call("transfer_hbar_tool", &transfer(2)).unwrap();
    assert_eq!(
        instantiations(&host, "max"),
        2,
        "a second session needs its own"
    );
    // Both sessions still decide on their own.
    let blocked = other.call("transfer_hbar_tool", &transfer(4)).unwrap();
    assert_eq!(blocked["raw"]["errorCode"], "POLICY_BLOCKED", "{blocked}");
    let blocked = first.call("transfer_hbar_tool", &transfer(4)).unwrap();
    assert_eq!(blocked["raw"]["errorCode"], "POLICY_BLOCKED", "{blocked}");
}

/// A restart loads an unchanged component from its artifact without reading or hashing it
/// (the digest index knows the file by identity); a file changed in place is read, hashed and
/// compiled again, and a sha256 pin is checked against what the file holds now.
#[test]
fn an_unchanged_file_loads_by_identity_and_a_changed_one_is_read_again() {
    use hak_host::runtime::{LoadError, LoadedPlugin, Runtime, RuntimeConfig, TracingLogSink};
    let dir = root().join(format!(
        "target/test-tmp/digest-index-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("p.wasm");
    let original = std::fs::read(plugin("rust/max-recipients")).unwrap();
    std::fs::write(&file, &original).unwrap();
    let runtime = || {
        Runtime::new(
            RuntimeConfig {
                cache_dir: Some(dir.join("cache")),
                fuel: false,
                function_cache: None,
            },
            Arc::new(TracingLogSink),
        )
        .unwrap()
    };
    let spec = |pin: Option<&str>| {
        let mut m = Manifest::parse(
            &format!(
                "[[plugins]]\nname = \"p\"\npath = {:?}\nconfig = {{ maxRecipients = 2 }}\n",
                file.display().to_string()
            ),
            "digest test",
            dir.clone(),
        )
        .unwrap();
        let mut spec = m.plugins.remove(0);
        spec.sha256 = pin.map(str::to_owned);
        spec
    };
    let first = runtime();
    let a = LoadedPlugin::load(&first, spec(None), &file, None).unwrap();
    assert_eq!(first.cache().compiles(), 1);
    assert!(dir.join("cache/digests.json").exists());

    let second = runtime();
    let again = LoadedPlugin::load(&second, spec(Some(&a.sha256)), &file, None).unwrap();
    assert_eq!(again.sha256, a.sha256);
    assert_eq!((second.cache().hits(), second.cache().compiles()), (1, 0));

    // Changed in place (a custom section appended): read, hashed and compiled again.
    let mut changed = original.clone();
    changed.extend_from_slice(b"\x00\x05\x04test");
    std::fs::write(&file, &changed).unwrap();
    let third = runtime();
    let b = LoadedPlugin::load(&third, spec(None), &file, None).unwrap();
    assert_ne!(b.sha256, a.sha256);
    assert_eq!(third.cache().compiles(), 1);
    // The old pin no longer matches what the file holds.
    match LoadedPlugin::load(&runtime(), spec(Some(&a.sha256)), &file, None) {
        Err(LoadError::HashMismatch { actual, .. }) => assert_eq!(actual, b.sha256),
        other => panic!(
            "expected a hash mismatch, got {:?}",
            other.map(|p| p.sha256.clone())
        ),
    }
}

/// Components of one toolchain share their engine's code: compiled after another JS plugin,
/// a JS plugin takes most of its functions from the compiled-function cache (every JS plugin
/// embeds StarlingMonkey). That such code decides as code compiled from scratch is what every
/// other JS, Python and Go test of this process checks: their hosts share the process's cache.
#[test]
#[ignore = "needs the JS plugins (scripts/build-plugins.sh js); scripts/test.sh runs it"]
fn a_second_js_plugin_reuses_the_first_ones_compiled_functions() {
    use hak_host::runtime::function_cache::FunctionCache;
    use hak_host::runtime::{LoadedPlugin, Runtime, RuntimeConfig, TracingLogSink};
    let dir = root().join(format!(
        "target/test-tmp/function-cache-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let functions = Arc::new(FunctionCache::new(1 << 30));
    // No artifact cache: every load compiles.
    let runtime = Runtime::new(
        RuntimeConfig {
            cache_dir: None,
            fuel: false,
            function_cache: Some(functions.clone()),
        },
        Arc::new(TracingLogSink),
    )
    .unwrap();
    let load = |name: &str, config: &str| {
        let file = plugin(&format!("js/{name}"));
        let mut m = Manifest::parse(
            &format!(
                "[[plugins]]\nname = {name:?}\npath = {:?}\nconfig = {config}\n",
                file.display().to_string()
            ),
            "function cache test",
            dir.clone(),
        )
        .unwrap();
        LoadedPlugin::load(&runtime, m.plugins.remove(0), &file, None).unwrap()
    };
    load("max-recipients", "{ maxRecipients = 1 }");
    let first = functions.stats();
    assert!(first.misses > 1_000 && first.bytes > 0, "{first:?}");
    load("spend-limit", "{ maxHbarPerTransaction = \"1\" }");
    let second = functions.stats();
    let (hits, lookups) = (
        second.hits - first.hits,
        second.hits + second.misses - first.hits - first.misses,
    );
    assert!(
        hits * 10 >= lookups * 9,
        "{hits} of {lookups} functions of the second JS plugin came from the cache ({first:?} → {second:?})"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
