//! Hot-swapping plugins in a running host (issue "hot-swap"): swaps under concurrent load never
//! mix chains, half-written and badly signed files never load, a restart loads from the
//! precompiled cache, and the HTTP API serves calls and admin changes.

use base64::Engine;
use hak_host::manifest::PluginSidecar;
use hak_host::registry::{Registry, Source};
use hak_host::{Host, HostBuilder};
use hak_tests::*;
use serde_json::json;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const TRANSFER: &str = r#"{"transfers":[{"accountId":"0.0.1002","amount":1}]}"#;

fn wasm(rel: &str) -> Vec<u8> {
    std::fs::read(plugin(rel)).unwrap()
}

fn tmp_dir(name: &str) -> PathBuf {
    let dir = root()
        .join("target/test-tmp")
        .join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn settings(toml_text: &str) -> PluginSidecar {
    toml::from_str(toml_text).unwrap()
}

const BLOCK: &str = "config = { relevantTools = [\"transfer_hbar_tool\"] }";
const ALLOW: &str = "config = { maxRecipients = 5 }";

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Gate {
    Absent,
    Allow,
    Block,
}

#[test]
fn swaps_under_load_never_mix_chains() {
    let (host, _) = start(RETURN_BYTES_HEADER);
    let registry = Arc::new(Registry::new(host.clone(), None).unwrap());
    let reject = wasm("rust/reject-tool");
    let max = wasm("rust/max-recipients");
    // What each chain version does to a transfer.
    let expected: Arc<Mutex<Vec<(u64, Gate)>>> =
        Arc::new(Mutex::new(vec![(host.chain_version(), Gate::Absent)]));
    let stop = Arc::new(AtomicBool::new(false));
    let calls = Arc::new(AtomicUsize::new(0));
    let mut callers = Vec::new();
    for _ in 0..3 {
        let (host, stop, calls) = (host.clone(), stop.clone(), calls.clone());
        callers.push(std::thread::spawn(move || {
            let mut session = host.default_session();
            let mut seen = Vec::new();
            while !stop.load(Ordering::Relaxed) || calls.load(Ordering::Relaxed) < 10_000 {
                let out = session.call("transfer_hbar_tool", TRANSFER).unwrap();
                let version = session.chain_version();
                let outcome = match (
                    out["raw"]["status"].as_str(),
                    out["raw"]["errorCode"].as_str(),
                ) {
                    (Some("SUCCESS"), _) => Gate::Allow,
                    (_, Some("POLICY_BLOCKED")) => Gate::Block,
                    _ => panic!("unexpected result on chain v{version}: {out}"),
                };
                seen.push((version, outcome));
                calls.fetch_add(1, Ordering::Relaxed);
            }
            seen
        }));
    }
    // An operator's view under the same load: every snapshot of the plugin list must be the
    // one of the chain version it is labelled with (GET /v1/plugins reads this).
    let lister = {
        let (registry, stop) = (registry.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut seen = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                let snapshot = registry.snapshot();
                let gate = snapshot
                    .plugins
                    .iter()
                    .find(|p| p.name == "gate")
                    .map(|p| p.plugin_name.clone());
                seen.push((snapshot.chain_version, gate));
            }
            seen
        })
    };
    // The swapper: allow ↔ block, add/remove, broken uploads, rollbacks. The model mirrors
    // the registry: a put keeps the replaced version, a remove keeps the removed one, a
    // rollback swaps the current and the kept version.
    let (mut current, mut previous): (Option<Gate>, Option<Gate>) = (None, None);
    let mut swaps = 0;
    let mut refused = 0;
    let mut round = 0usize;
    while swaps < 120 || calls.load(Ordering::Relaxed) < 10_000 {
        round += 1;
        let op = round % 6;
        let result = match op {
            0 | 3 => registry.put(
                "gate",
                &reject,
                settings(BLOCK),
                BLOCK.into(),
                None,
                Source::Api,
            ),
            1 => registry.put(
                "gate",
                &max,
                settings(ALLOW),
                ALLOW.into(),
                None,
                Source::Api,
            ),
            2 => registry.remove("gate"),
            4 => registry.put(
                "gate",
                b"\0asm broken upload",
                settings(""),
                String::new(),
                None,
                Source::Api,
            ),
            _ => registry.rollback("gate"),
        };
        match result {
            Ok(version) => {
                match op {
                    0 | 1 | 3 => {
                        if current.is_some() {
                            previous = current;
                        }
                        current = Some(if op == 1 { Gate::Allow } else { Gate::Block });
                    }
                    2 => {
                        previous = current;
                        current = None;
                    }
                    _ => {
                        let back = previous.take();
                        if current.is_some() {
                            previous = current;
                        }
                        current = back;
                    }
                }
                expected
                    .lock()
                    .unwrap()
                    .push((version, current.unwrap_or(Gate::Absent)));
                swaps += 1;
            }
            Err(e) => {
                assert_eq!(op, 4, "only the broken upload is refused: {e}");
                refused += 1;
            }
        }
        std::thread::sleep(Duration::from_micros(300));
    }
    stop.store(true, Ordering::Relaxed);
    let expected: std::collections::HashMap<u64, Gate> =
        expected.lock().unwrap().iter().copied().collect();
    let mut total = 0;
    let mut versions = std::collections::HashSet::new();
    for caller in callers {
        for (version, outcome) in caller.join().unwrap() {
            let want = expected
                .get(&version)
                .copied()
                .unwrap_or_else(|| panic!("a call ran on unknown chain v{version}"));
            let want = if want == Gate::Absent {
                Gate::Allow
            } else {
                want
            };
            assert_eq!(outcome, want, "chain v{version}");
            versions.insert(version);
            total += 1;
        }
    }
    let snapshots = lister.join().unwrap();
    for (version, gate) in &snapshots {
        let want = match expected.get(version) {
            Some(Gate::Absent) => None,
            Some(Gate::Allow) => Some("Max Recipients Policy"),
            Some(Gate::Block) => Some("Reject Tool Call"),
            None => panic!("a snapshot labelled with unknown chain v{version}"),
        };
        assert_eq!(gate.as_deref(), want, "the plugin list labelled v{version}");
    }
    assert!(snapshots.len() >= 100, "{} snapshots", snapshots.len());
    assert!(total >= 10_000, "{total} calls");
    assert!(swaps >= 100, "{swaps} swaps");
    assert!(refused >= 10, "the broken uploads were refused ({refused})");
    assert!(
        versions.len() > 20,
        "calls ran on {} chain versions",
        versions.len()
    );
}

/// A sync of `registry`'s directory loads `gate`, and the next transfer meets its block.
fn assert_loaded_and_blocking(registry: &Registry, host: &Host) {
    let report = registry.sync_dir();
    assert_eq!(report.loaded, ["gate"], "{report:?}");
    let out = host
        .default_session()
        .call("transfer_hbar_tool", TRANSFER)
        .unwrap();
    assert_eq!(out["raw"]["errorCode"], "POLICY_BLOCKED", "{out}");
}

fn trust_manifest(public_key: &str) -> String {
    format!("{RETURN_BYTES_HEADER}\n[trust]\npublic_keys = [\"{public_key}\"]\nrequire_signatures = true\n")
}

/// A plugin file and its sidecar signed as `cosign sign-blob --key cosign.key` does (base64
/// ECDSA P-256 over the bytes), with the publisher's `cosign.pub` trusted beside an ed25519 key.
#[test]
fn files_signed_with_cosign_keys_load_and_another_cosign_key_does_not_count() {
    use hak_host::signing::cosign;
    let dir = tmp_dir("cosign-signed");
    let (private, public) = cosign::generate(b"").unwrap();
    let key = cosign::open(private.as_bytes(), b"").unwrap();
    let pub_file = dir.join("..").join("cosign-signed.pub");
    std::fs::write(&pub_file, &public).unwrap();
    let (_, ed25519) = hak_host::signing::generate();
    let (host, _) = start(&format!(
        "{RETURN_BYTES_HEADER}\n[trust]\npublic_keys = [{:?}, \"{ed25519}\"]\nrequire_signatures = true\n",
        pub_file.display().to_string()
    ));
    let registry = Registry::new(host.clone(), Some(dir.clone())).unwrap();
    let bytes = wasm("rust/reject-tool");
    std::fs::write(dir.join("gate.wasm"), &bytes).unwrap();
    std::fs::write(dir.join("gate.toml"), BLOCK).unwrap();
    std::fs::write(
        dir.join("gate.toml.sig"),
        cosign::sign(&key, BLOCK.as_bytes()),
    )
    .unwrap();
    let (stranger, _) = cosign::generate(b"").unwrap();
    let stranger = cosign::open(stranger.as_bytes(), b"").unwrap();
    std::fs::write(dir.join("gate.wasm.sig"), cosign::sign(&stranger, &bytes)).unwrap();
    let report = registry.sync_dir();
    assert!(
        report.rejected[0]
            .1
            .contains("does not verify with any trusted key"),
        "{report:?}"
    );
    std::fs::write(dir.join("gate.wasm.sig"), cosign::sign(&key, &bytes)).unwrap();
    assert_loaded_and_blocking(&registry, &host);
    let _ = std::fs::remove_file(&pub_file);
}

#[test]
fn half_written_unsigned_and_badly_signed_files_never_load() {
    let (private, public) = hak_host::signing::generate();
    let key = hak_host::signing::signing_key(&private).unwrap();
    let (host, _) = start(&trust_manifest(&public));
    let dir = tmp_dir("signed");
    let registry = Registry::new(host.clone(), Some(dir.clone())).unwrap();
    let bytes = wasm("rust/reject-tool");
    let start_version = host.chain_version();
    std::fs::write(dir.join("gate.toml"), BLOCK).unwrap();
    // Half a file: refused, the chain untouched.
    std::fs::write(dir.join("gate.wasm"), &bytes[..bytes.len() / 2]).unwrap();
    std::fs::write(
        dir.join("gate.wasm.sig"),
        hak_host::signing::sign(&key, &bytes),
    )
    .unwrap();
    let report = registry.sync_dir();
    assert_eq!(report.rejected.len(), 1, "{report:?}");
    assert_eq!(host.chain_version(), start_version);
    // Unsigned: refused.
    std::fs::write(dir.join("gate.wasm"), &bytes).unwrap();
    std::fs::remove_file(dir.join("gate.wasm.sig")).unwrap();
    let report = registry.sync_dir();
    assert!(
        report.rejected[0]
            .1
            .contains("unsigned, and the manifest requires signatures"),
        "{report:?}"
    );
    // Signed by someone else: refused.
    let (other, _) = hak_host::signing::generate();
    let other = hak_host::signing::signing_key(&other).unwrap();
    std::fs::write(
        dir.join("gate.wasm.sig"),
        hak_host::signing::sign(&other, &bytes),
    )
    .unwrap();
    let report = registry.sync_dir();
    assert!(report.rejected[0].1.contains("bad signature"), "{report:?}");
    assert_eq!(host.chain_version(), start_version);
    let out = host
        .default_session()
        .call("transfer_hbar_tool", TRANSFER)
        .unwrap();
    assert_eq!(out["raw"]["status"], "SUCCESS");
    // Properly signed: loads, and the next call is blocked.
    std::fs::write(
        dir.join("gate.wasm.sig"),
        hak_host::signing::sign(&key, &bytes),
    )
    .unwrap();
    // …but its sidecar is not: a signed plugin's settings are signed too.
    let report = registry.sync_dir();
    assert!(
        report.rejected[0].1.contains("settings must be signed too"),
        "{report:?}"
    );
    std::fs::write(
        dir.join("gate.toml.sig"),
        hak_host::signing::sign(&key, BLOCK.as_bytes()),
    )
    .unwrap();
    assert_loaded_and_blocking(&registry, &host);
    // Editing only the sidecar (loosening the policy) is refused; the signed version stays.
    std::fs::write(dir.join("gate.toml"), ALLOW).unwrap();
    let report = registry.sync_dir();
    assert!(
        report.rejected[0].1.contains("settings must be signed too"),
        "{report:?}"
    );
    let out = host
        .default_session()
        .call("transfer_hbar_tool", TRANSFER)
        .unwrap();
    assert_eq!(out["raw"]["errorCode"], "POLICY_BLOCKED", "{out}");
    std::fs::write(dir.join("gate.toml"), BLOCK).unwrap();
    // The API refuses unsigned uploads alike.
    let err = registry
        .put(
            "other",
            &bytes,
            settings(BLOCK),
            BLOCK.into(),
            None,
            Source::Api,
        )
        .unwrap_err();
    assert!(err.to_string().contains("unsigned"), "{err}");
    // Removing the file removes the plugin.
    std::fs::remove_file(dir.join("gate.wasm")).unwrap();
    assert_eq!(registry.sync_dir().removed, ["gate"]);
    let out = host
        .default_session()
        .call("transfer_hbar_tool", TRANSFER)
        .unwrap();
    assert_eq!(out["raw"]["status"], "SUCCESS");
}

#[test]
fn the_watcher_loads_a_file_that_lands_in_the_directory() {
    let (host, _) = start(RETURN_BYTES_HEADER);
    let dir = tmp_dir("watched");
    let registry = Arc::new(Registry::new(host.clone(), Some(dir.clone())).unwrap());
    let _watcher = hak_host::registry::watch::watch(registry.clone(), |_| {}).unwrap();
    let before = host.chain_version();
    std::fs::write(dir.join("gate.toml"), BLOCK).unwrap();
    // Written elsewhere, then renamed in: the file appears whole.
    let staged = dir.join(".gate.wasm.partial");
    std::fs::write(&staged, wasm("rust/reject-tool")).unwrap();
    let landed = Instant::now();
    std::fs::rename(&staged, dir.join("gate.wasm")).unwrap();
    let mut session = host.default_session();
    loop {
        let out = session.call("transfer_hbar_tool", TRANSFER).unwrap();
        if out["raw"]["errorCode"] == "POLICY_BLOCKED" {
            break;
        }
        assert!(
            landed.elapsed() < Duration::from_secs(20),
            "not loaded: {out}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    eprintln!(
        "swap effective {} ms after the file landed",
        landed.elapsed().as_millis()
    );
    assert!(host.chain_version() > before);
}

#[test]
fn a_restart_with_20_plugins_loads_from_the_precompiled_cache() {
    let cache = tmp_dir("cache20");
    let mut manifest = RETURN_BYTES_HEADER.to_owned();
    for i in 0..20 {
        let rel = if i % 2 == 0 {
            "rust/max-recipients"
        } else {
            "rust/reject-tool"
        };
        let config = if i % 2 == 0 {
            ALLOW
        } else {
            "config = { relevantTools = [\"delete_account_tool\"] }"
        };
        manifest += &plugin_entry(&format!("p{i}"), rel, config);
    }
    let build = || {
        let m = hak_host::manifest::Manifest::parse(&manifest, "test", root()).unwrap();
        let started = Instant::now();
        let host: Host = HostBuilder::new(m)
            .cache_dir(Some(cache.clone()))
            .build()
            .unwrap();
        (host, started.elapsed())
    };
    let (first, cold) = build();
    assert!(first.runtime().cache().compiles() >= 2);
    drop(first);
    let (second, warm) = build();
    assert_eq!(
        second.runtime().cache().compiles(),
        0,
        "a restart compiles nothing"
    );
    // Each of the 20 loads is served from disk or, for a file already loaded, by its
    // compiled component in memory: the 20 plugins run 2 copies of machine code, not 20.
    let cache_of = second.runtime().cache();
    assert_eq!(cache_of.hits() + cache_of.shared(), 20);
    assert!(cache_of.hits() >= 2, "{}", cache_of.hits());
    assert_eq!(cache_of.copies(), 2);
    eprintln!(
        "20 plugins: cold start {} ms, from the cache {} ms",
        cold.as_millis(),
        warm.as_millis()
    );
    let out = second
        .default_session()
        .call("transfer_hbar_tool", TRANSFER)
        .unwrap();
    assert_eq!(out["raw"]["status"], "SUCCESS");
}

#[test]
fn the_http_api_serves_calls_and_admin_changes() {
    let server = serve_dir(RETURN_BYTES_HEADER, None);
    let addr = server.addr;
    let auth = [("authorization", "Bearer s3cret")];

    let (status, head, out) = http(addr, "POST", "/v1/tools/transfer_hbar_tool", &[], TRANSFER);
    assert_eq!(status, 200);
    assert_eq!(out["raw"]["status"], "SUCCESS", "{out}");
    assert!(
        head.to_ascii_lowercase().contains("x-hak-chain-version: 1"),
        "{head}"
    );
    let (status, _, tools) = http(addr, "GET", "/v1/tools", &[], "");
    assert_eq!((status, tools.as_array().unwrap().len()), (200, 44));
    let (status, _, _) = http(addr, "GET", "/v1/plugins", &[], "");
    assert_eq!(status, 401, "admin routes need the token");

    let upload = json!({
        "component": base64::engine::general_purpose::STANDARD.encode(wasm("rust/reject-tool")),
        "settings": {"config": {"relevantTools": ["transfer_hbar_tool"]}},
    })
    .to_string();
    let (status, _, body) = http(addr, "PUT", "/v1/plugins/gate", &auth, &upload);
    assert_eq!(
        (status, body["chainVersion"].as_u64()),
        (200, Some(2)),
        "{body}"
    );
    let (_, head, out) = http(addr, "POST", "/v1/tools/transfer_hbar_tool", &[], TRANSFER);
    assert_eq!(out["raw"]["errorCode"], "POLICY_BLOCKED", "{out}");
    assert!(
        head.to_ascii_lowercase().contains("x-hak-chain-version: 2"),
        "{head}"
    );
    let (status, _, list) = http(addr, "GET", "/v1/plugins", &auth, "");
    assert_eq!(status, 200);
    let gate = &list["plugins"][0];
    assert_eq!(
        (
            gate["name"].as_str(),
            gate["blocks"].as_u64(),
            gate["source"].as_str()
        ),
        (Some("gate"), Some(1), Some("api")),
        "{list}"
    );
    assert_eq!(gate["sha256"].as_str().unwrap().len(), 64);
    // A broken upload is refused and changes nothing.
    let broken = json!({"component": "AGFzbQ=="}).to_string();
    let (status, _, body) = http(addr, "PUT", "/v1/plugins/gate", &auth, &broken);
    assert_eq!(status, 422, "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("plugin gate"),
        "{body}"
    );
    let (status, _, body) = http(addr, "DELETE", "/v1/plugins/gate", &auth, "");
    assert_eq!((status, body["chainVersion"].as_u64()), (200, Some(3)));
    let (_, _, out) = http(addr, "POST", "/v1/tools/transfer_hbar_tool", &[], TRANSFER);
    assert_eq!(out["raw"]["status"], "SUCCESS");
    let (status, _, body) = http(addr, "POST", "/v1/plugins/gate/rollback", &auth, "");
    assert_eq!((status, body["chainVersion"].as_u64()), (200, Some(4)));
    let (_, _, out) = http(addr, "POST", "/v1/tools/transfer_hbar_tool", &[], TRANSFER);
    assert_eq!(out["raw"]["errorCode"], "POLICY_BLOCKED");
    let (status, _, _) = http(addr, "POST", "/v1/tools/no_such_tool", &[], "{}");
    assert_eq!(status, 404);
}

#[test]
fn hostile_directory_entries_are_refused_clearly_and_unread() {
    let (host, _) = start(RETURN_BYTES_HEADER);
    let dir = tmp_dir("hostile-entries");
    // A 1 GiB file (sparse: nothing is written, nothing may be read).
    std::fs::File::create(dir.join("huge.wasm"))
        .unwrap()
        .set_len(1 << 30)
        .unwrap();
    // A FIFO: opening it would block the server forever.
    assert!(std::process::Command::new("mkfifo")
        .arg(dir.join("fifo.wasm"))
        .status()
        .unwrap()
        .success());
    // Symlinks out of the directory: a component and a sidecar pointing at a secret.
    let outside = tmp_dir("hostile-outside");
    std::fs::write(outside.join("secret.txt"), "root:hunter2").unwrap();
    std::fs::write(outside.join("real.wasm"), wasm("rust/reject-tool")).unwrap();
    std::os::unix::fs::symlink(outside.join("real.wasm"), dir.join("linked.wasm")).unwrap();
    std::fs::write(dir.join("gate.wasm"), wasm("rust/reject-tool")).unwrap();
    std::os::unix::fs::symlink(outside.join("secret.txt"), dir.join("gate.toml")).unwrap();

    let started = Instant::now();
    let registry = Registry::new(host.clone(), Some(dir.clone())).unwrap();
    let report = registry.sync_dir();
    assert!(started.elapsed() < Duration::from_secs(10));
    let why = |name: &str| {
        report
            .rejected
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, w)| w.clone())
            .unwrap_or_else(|| panic!("{name} not rejected: {report:?}"))
    };
    assert!(why("huge").contains("more than the 67108864-byte limit; refused unread"));
    assert!(why("fifo").contains("not a regular file"));
    assert!(why("linked").contains("symlink out of the plugins directory"));
    assert!(why("gate").contains("symlink out of the plugins directory"));
    assert!(
        !format!("{report:?}").contains("hunter2"),
        "a file's content leaked: {report:?}"
    );
    assert!(report.loaded.is_empty(), "{report:?}");
}

#[test]
fn a_slow_describe_never_holds_up_other_changes() {
    let (host, _) = start(RETURN_BYTES_HEADER);
    let registry = Arc::new(Registry::new(host.clone(), None).unwrap());
    // A plugin whose describe takes 5 s (a sleep within its 6 s deadline).
    let slow_settings = "config = { mode = \"sleep-describe\" }\n[limits]\ndeadline_ms = 6000";
    let slow = {
        let registry = registry.clone();
        std::thread::spawn(move || {
            registry.put(
                "slow",
                &wasm("fixtures/hostile"),
                settings(slow_settings),
                slow_settings.into(),
                None,
                Source::Api,
            )
        })
    };
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    registry
        .put(
            "gate",
            &wasm("rust/reject-tool"),
            settings(BLOCK),
            BLOCK.into(),
            None,
            Source::Api,
        )
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "the fast change waited {:?} for the slow one",
        started.elapsed()
    );
    assert!(!slow.is_finished(), "the slow describe is still running");
    slow.join().unwrap().unwrap();
    let names: Vec<String> = registry.list().into_iter().map(|p| p.name).collect();
    assert!(names.contains(&"slow".to_owned()) && names.contains(&"gate".to_owned()));
}
