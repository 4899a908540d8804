//! Plugins shipped as OCI artifacts (issue "ship a policy like software"), against a real
//! registry on loopback (Debian's `docker-registry`, Distribution 2.8): push and pull by tag
//! and by digest, signatures bound to the manifest digest and checked before anything is
//! compiled, manifests naming plugins by reference (and starting offline from the cache), and
//! `hak serve` following a tag under load, unmoved by a registry that dies.

use hak_host::oci::artifact::{self, PluginAnnotations};
use hak_host::oci::client::Verify;
use hak_host::oci::signature::{self, SignatureDocument};
use hak_host::oci::{OciClient, OciError, OciRef};
use hak_tests::*;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const NEEDS: &str = "needs docker-registry (scripts/install-deps.sh); scripts/test.sh runs it";
const TRANSFER: &str = r#"{"transfers":[{"accountId":"0.0.1002","amount":1}]}"#;

fn hak() -> PathBuf {
    std::env::var_os("HAK_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/debug/hak"))
}

/// Run `hak args…` with `env`; its stdout as JSON, or its stderr as the error.
fn run(args: &[&str], env: &[(&str, &str)]) -> Result<serde_json::Value, String> {
    let out = std::process::Command::new(hak())
        .args(args)
        .envs(env.iter().copied())
        .output()
        .expect("hak runs");
    if out.status.success() {
        let text = String::from_utf8_lossy(&out.stdout);
        Ok(serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{e}: {text}")))
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// A key pair (private hex, public hex).
fn keys() -> (String, String) {
    hak_host::signing::generate()
}

fn scratch(name: &str) -> PathBuf {
    let dir = root().join(format!("target/test-tmp/oci-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Push `component` to `reference` through the library (any bytes: the registry does not care
/// whether they are a component), signed by `key` when given; the manifest digest.
fn push_bytes(reference: &str, component: &[u8], key: Option<&str>) -> String {
    let reference = OciRef::parse(reference).unwrap();
    let built = artifact::build(
        component,
        &PluginAnnotations {
            name: "pushed by a test".into(),
            ..Default::default()
        },
        &[],
        &[],
        "2026-12-06T00:00:00Z",
    );
    let client = OciClient::new(Vec::new());
    let digest = client.push(&reference, &built, component).unwrap();
    if let Some(key) = key {
        let key = hak_host::signing::signing_key(key).unwrap();
        client.sign(&reference.at_digest(&digest), &key).unwrap();
    }
    digest
}

/// PUT `body` as the manifest `tag` of `repo` on the registry (what anyone with push rights
/// to the repository can do).
fn put_manifest(registry: &OciRegistry, repo: &str, tag: &str, body: &[u8]) {
    let addr = ([127, 0, 0, 1], registry.port).into();
    let (status, head, _) = http_text(
        addr,
        "PUT",
        &format!("/v2/{repo}/manifests/{tag}"),
        &[("content-type", "application/vnd.oci.image.manifest.v1+json")],
        std::str::from_utf8(body).unwrap(),
    );
    assert_eq!(status, 201, "{head}");
}

/// The raw manifest `reference` (tag or digest) of `repo`.
fn get_manifest(registry: &OciRegistry, repo: &str, reference: &str) -> Vec<u8> {
    let addr = ([127, 0, 0, 1], registry.port).into();
    let (status, head, body) = http_text(
        addr,
        "GET",
        &format!("/v2/{repo}/manifests/{reference}"),
        &[("accept", "application/vnd.oci.image.manifest.v1+json")],
        "",
    );
    assert_eq!(status, 200, "{head}");
    body.into_bytes()
}

#[test]
#[ignore = "needs docker-registry (scripts/install-deps.sh); scripts/test.sh runs it"]
fn a_pushed_plugin_pulls_byte_identical_by_tag_and_by_digest_with_its_description() {
    let _ = NEEDS;
    let registry = OciRegistry::start();
    let dir = scratch("push-pull");
    let (private, public) = keys();
    let file = plugin("rust/max-recipients");
    let reference = registry.reference("policies/max-recipients:1.0");
    let pushed = run(
        &[
            "plugin",
            "push",
            file.to_str().unwrap(),
            &reference,
            "--config",
            r#"{"maxRecipients":2}"#,
            "--sign",
            "PUBLISHER_KEY",
        ],
        &[("PUBLISHER_KEY", &private)],
    )
    .unwrap();
    let digest = pushed["digest"].as_str().unwrap().to_owned();
    assert!(digest.starts_with("sha256:"), "{pushed}");

    // The CNCF Wasm OCI artifact layout, as the registry serves it.
    let manifest = get_manifest(&registry, "policies/max-recipients", "1.0");
    assert_eq!(artifact::sha256_digest(&manifest), digest);
    let manifest: serde_json::Value = serde_json::from_slice(&manifest).unwrap();
    assert_eq!(
        manifest["config"]["mediaType"],
        "application/vnd.wasm.config.v0+json"
    );
    assert_eq!(manifest["layers"].as_array().unwrap().len(), 1);
    assert_eq!(manifest["layers"][0]["mediaType"], "application/wasm");
    let notes = &manifest["annotations"];
    assert_eq!(notes["dev.hak.plugin.name"], "Max Recipients Policy");
    assert_eq!(
        notes["dev.hak.plugin.policy-stages"],
        "post-params-normalization"
    );
    assert!(notes["dev.hak.plugin.relevant-tools"]
        .as_str()
        .unwrap()
        .contains("transfer_hbar_tool"));
    assert!(!notes["dev.hak.plugin.contract"]
        .as_str()
        .unwrap()
        .is_empty());

    let original = std::fs::read(&file).unwrap();
    let by_tag = dir.join("by-tag.wasm");
    let pulled = run(
        &[
            "plugin",
            "pull",
            &reference,
            "-o",
            by_tag.to_str().unwrap(),
            "--public-key",
            &public,
        ],
        &[],
    )
    .unwrap();
    assert_eq!(pulled["digest"], digest.as_str());
    assert_eq!(pulled["verified"], true);
    assert_eq!(std::fs::read(&by_tag).unwrap(), original);

    let by_digest = dir.join("by-digest.wasm");
    let pinned = pushed["pinned"].as_str().unwrap();
    assert!(pinned.ends_with(&format!("@{digest}")));
    run(
        &["plugin", "pull", pinned, "-o", by_digest.to_str().unwrap()],
        &[],
    )
    .unwrap();
    assert_eq!(std::fs::read(&by_digest).unwrap(), original);

    // A tag pulled with no key to check is refused unless the operator says so.
    let err = run(&["plugin", "pull", &reference, "-o", "/dev/null"], &[]).unwrap_err();
    assert!(err.contains("--public-key"), "{err}");
    // Another key's signature does not count.
    let (_, stranger) = keys();
    let err = run(
        &[
            "plugin",
            "pull",
            &reference,
            "-o",
            "/dev/null",
            "--public-key",
            &stranger,
        ],
        &[],
    )
    .unwrap_err();
    assert!(err.contains("bad signature"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A manifest trusting `public` with one plugin from `source`, its OCI cache in `cache`.
fn manifest_with_source(source: &str, public: Option<&str>, cache: &Path, extra: &str) -> String {
    let trust = public.map_or(String::new(), |k| {
        format!("\n[trust]\npublic_keys = [{k:?}]\n")
    });
    format!(
        "{LOCAL}{trust}\n[oci]\ncache_dir = {:?}\npoll_seconds = 1\n\n[[plugins]]\nname = \"gate\"\nsource = {source:?}\n{extra}\n",
        cache.display().to_string()
    )
}

fn host_error(manifest: &str) -> String {
    match try_start(manifest) {
        Ok(_) => panic!("the host loaded the plugin"),
        Err(e) => e.to_string(),
    }
}

#[test]
#[ignore = "needs docker-registry (scripts/install-deps.sh); scripts/test.sh runs it"]
fn unsigned_wrongly_signed_retagged_and_tampered_artifacts_are_refused_before_compiling() {
    let registry = OciRegistry::start();
    let dir = scratch("refused");
    let (publisher, trusted) = keys();
    let (stranger, _) = keys();
    let good = std::fs::read(plugin("rust/reject-tool")).unwrap();
    // Not a component at all: compiling it would fail with "not a WebAssembly component". Every
    // refusal below must come first, naming the signature or the digest.
    let garbage = b"\0asm this is not a component".to_vec();
    let good_ref = registry.reference("p:good");
    let good_digest = push_bytes(&good_ref, &good, Some(&publisher));
    let unsigned_digest = push_bytes(&registry.reference("p:unsigned"), &garbage, None);
    let client = OciClient::new(Vec::new());
    let trust = [hak_host::signing::verifying_key(&trusted).unwrap()];
    let pull = |r: &str| client.pull(&OciRef::parse(r).unwrap(), Verify::Required(&trust));
    assert_eq!(pull(&good_ref).unwrap().component, good);

    // Unsigned.
    let err = pull(&registry.reference("p:unsigned")).unwrap_err();
    assert!(matches!(err, OciError::Unsigned { .. }), "{err}");
    let cache = dir.join("cache");
    let source = registry.reference(&format!("p@{unsigned_digest}"));
    let err = host_error(&manifest_with_source(&source, Some(&trusted), &cache, ""));
    assert!(err.contains("unsigned"), "{err}");
    assert!(
        !err.contains("component"),
        "compiled before refusing: {err}"
    );

    // Signed, by a key the operator does not trust.
    let stranger_digest = push_bytes(&registry.reference("p:stranger"), &garbage, Some(&stranger));
    assert_eq!(
        stranger_digest, unsigned_digest,
        "same bytes, same manifest"
    );
    let err = pull(&registry.reference("p:stranger")).unwrap_err();
    assert!(
        err.to_string()
            .contains("does not verify with any trusted key"),
        "{err}"
    );

    // A swapped tag: `good` re-pointed at the garbage manifest. Its digest is not the signed
    // one, and the signature copied beside it signs the other digest.
    let garbage_manifest = get_manifest(&registry, "p", &unsigned_digest);
    put_manifest(&registry, "p", "good", &garbage_manifest);
    let good_signature = get_manifest(&registry, "p", &signature::tag_for(&good_digest));
    put_manifest(
        &registry,
        "p",
        &signature::tag_for(&unsigned_digest),
        &good_signature,
    );
    let err = pull(&good_ref).unwrap_err();
    assert!(
        err.to_string()
            .contains(&format!("it signs {good_digest}, not this manifest")),
        "{err}"
    );
    let err = host_error(&manifest_with_source(&good_ref, Some(&trusted), &cache, ""));
    assert!(err.contains("bad signature"), "{err}");
    assert!(
        !err.contains("component"),
        "compiled before refusing: {err}"
    );
    // A signature document naming the right digest but made by another key.
    let forged = SignatureDocument {
        digest: unsigned_digest.clone(),
        ..SignatureDocument::sign(
            &hak_host::signing::signing_key(&stranger).unwrap(),
            &unsigned_digest,
        )
    };
    assert!(forged
        .verify(&unsigned_digest, &trust)
        .unwrap_err()
        .contains("does not verify"));

    // A tampered layer: the registry serves other bytes under the signed digest.
    put_manifest(
        &registry,
        "p",
        "good",
        &get_manifest(&registry, "p", &good_digest),
    );
    let layer = artifact::sha256_digest(&good);
    let mut bytes = std::fs::read(registry.blob_path(&layer)).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(registry.blob_path(&layer), &bytes).unwrap();
    let err = pull(&good_ref).unwrap_err();
    assert!(matches!(err, OciError::DigestMismatch { .. }), "{err}");
    let err = host_error(&manifest_with_source(
        &registry.reference(&format!("p@{good_digest}")),
        Some(&trusted),
        &dir.join("cache-2"),
        "config = { relevantTools = [\"transfer_hbar_tool\"] }",
    ));
    assert!(err.contains("digest mismatch"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[ignore = "needs docker-registry (scripts/install-deps.sh); scripts/test.sh runs it"]
fn a_manifest_names_a_plugin_by_reference_and_starts_offline_from_the_cache() {
    let mut registry = OciRegistry::start();
    let dir = scratch("manifest-source");
    let cache = dir.join("cache");
    let (publisher, trusted) = keys();
    let component = std::fs::read(plugin("rust/reject-tool")).unwrap();
    let tag = registry.reference("gates/reject:stable");
    let digest = push_bytes(&tag, &component, Some(&publisher));
    let config = "config = { relevantTools = [\"transfer_hbar_tool\"] }";
    let followed = manifest_with_source(&tag, Some(&trusted), &cache, config);
    let pinned_ref = registry.reference(&format!("gates/reject@{digest}"));
    let pinned = manifest_with_source(&pinned_ref, None, &cache, config);

    let blocked = |manifest: &str| {
        let (host, _) = start(manifest);
        let out = host
            .default_session()
            .call("transfer_hbar_tool", TRANSFER)
            .unwrap();
        assert!(
            out["humanMessage"]
                .as_str()
                .unwrap_or_default()
                .contains("blocked by policy: Reject Tool Call"),
            "{out}"
        );
        host
    };
    let host = blocked(&followed);
    let registry_view = hak_host::registry::Registry::new(host, None).unwrap();
    let listed = &registry_view.list()[0];
    assert_eq!(listed.reference.as_deref(), Some(tag.as_str()));
    assert_eq!(listed.digest.as_deref(), Some(digest.as_str()));
    blocked(&pinned);

    // A followed tag without a trusted key is refused at parse time.
    let no_key = manifest_with_source(&tag, None, &cache, config);
    let err = hak_host::manifest::Manifest::parse(&no_key, "m", root()).unwrap_err();
    assert!(err.to_string().contains("trust.public_keys"), "{err}");

    // The registry is gone: both start from the cache.
    registry.stop();
    blocked(&followed);
    blocked(&pinned);
    // A cache changed on disk is refused, not loaded (and nothing can be pulled again).
    let cached = cache
        .join("sha256")
        .join(digest.trim_start_matches("sha256:"))
        .join("plugin.wasm");
    let mut bytes = std::fs::read(&cached).unwrap();
    bytes[100] ^= 1;
    std::fs::write(&cached, &bytes).unwrap();
    let err = host_error(&pinned);
    assert!(err.contains("does not match its digest"), "{err}");
    // Nothing cached and nothing reachable.
    let empty = manifest_with_source(&tag, Some(&trusted), &dir.join("empty"), config);
    let err = host_error(&empty);
    assert!(err.contains("registry cannot be reached"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `hak serve` following `tag` (signatures by `trusted`) as the plugin "gate", relevant to
/// `transfer_hbar_tool`, its files in `dir`; and its log's path.
fn serve_following(tag: &str, trusted: &str, dir: &Path) -> (ServeProcess, PathBuf) {
    let manifest = dir.join("hak.toml");
    std::fs::write(
        &manifest,
        manifest_with_source(
            tag,
            Some(trusted),
            &dir.join("cache"),
            "config = { relevantTools = [\"transfer_hbar_tool\"] }",
        ),
    )
    .unwrap();
    let log = dir.join("serve.log");
    (ServeProcess::start(&manifest, &log), log)
}

/// A publisher pushes a manifest, then its signature: a follower that polls between the two
/// sees the new digest unsigned. It must swap once the signature is there (it used to refuse
/// that digest for good, until the tag moved on: a run of the test below hit the window).
#[test]
#[ignore = "needs docker-registry (scripts/install-deps.sh); scripts/test.sh runs it"]
fn a_tag_followed_before_its_signature_arrives_is_swapped_once_it_is_signed() {
    let registry = OciRegistry::start();
    let dir = scratch("late-signature");
    let (publisher, trusted) = keys();
    let tag = registry.reference("gates/late:prod");
    let v1 = push_bytes(
        &tag,
        &std::fs::read(plugin("rust/tx-timing-hook")).unwrap(),
        Some(&publisher),
    );
    let (server, log) = serve_following(&tag, &trusted, &dir);
    let digest = || {
        let (status, _, body) = http(server.addr, "GET", "/v1/plugins", &[], "");
        assert_eq!(status, 200, "{body}");
        body["plugins"][0]["digest"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    assert_eq!(digest(), v1);
    // v2's manifest, its signature not yet pushed: the follower says so and keeps v1.
    let v2 = push_bytes(
        &tag,
        &std::fs::read(plugin("rust/reject-tool")).unwrap(),
        None,
    );
    let deadline = Instant::now() + Duration::from_secs(40);
    while !std::fs::read_to_string(&log)
        .unwrap_or_default()
        .contains("unsigned")
    {
        assert!(Instant::now() < deadline, "never polled v2");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(digest(), v1);
    // The signature arrives; the tag still names v2.
    let key = hak_host::signing::signing_key(&publisher).unwrap();
    OciClient::new(Vec::new())
        .sign(&OciRef::parse(&tag).unwrap().at_digest(&v2), &key)
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(40);
    while digest() != v2 {
        assert!(
            Instant::now() < deadline,
            "not swapped once signed: {}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[ignore = "needs docker-registry (scripts/install-deps.sh); scripts/test.sh runs it"]
fn hak_serve_follows_a_tag_under_load_and_a_dead_registry_changes_nothing_loaded() {
    let mut registry = OciRegistry::start();
    let dir = scratch("follow");
    let (publisher, trusted) = keys();
    let tag = registry.reference("gates/live:prod");
    // v1: the timing hook, pushed with the CLI (calls go through, each timed).
    let pushed = run(
        &[
            "plugin",
            "push",
            plugin("rust/tx-timing-hook").to_str().unwrap(),
            &tag,
            "--sign",
            "PUBLISHER_KEY",
        ],
        &[("PUBLISHER_KEY", &publisher)],
    )
    .unwrap();
    let v1 = pushed["digest"].as_str().unwrap().to_owned();
    let (server, log) = serve_following(&tag, &trusted, &dir);
    let server = Arc::new(server);
    let plugins = || {
        let (status, _, body) = http(server.addr, "GET", "/v1/plugins", &[], "");
        assert_eq!(status, 200, "{body}");
        body["plugins"][0].clone()
    };
    assert_eq!(plugins()["digest"], v1.as_str());
    assert_eq!(plugins()["reference"], tag.as_str());

    // Load: calls back to back on two threads for the whole test; each answer is either a
    // transfer done or the policy's block, never an error.
    let stop = Arc::new(AtomicBool::new(false));
    // A failed assertion below must stop the load too: its threads hold the server, which
    // would otherwise keep serving them for the rest of the test run.
    struct StopOnDrop(Arc<AtomicBool>);
    impl Drop for StopOnDrop {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Relaxed);
        }
    }
    let _stop_on_drop = StopOnDrop(stop.clone());
    let load: Vec<_> = (0..2)
        .map(|_| {
            let (server, stop) = (server.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut answers = Vec::new();
                while !stop.load(Ordering::Relaxed) {
                    let (status, _, body) = http(
                        server.addr,
                        "POST",
                        "/v1/tools/transfer_hbar_tool",
                        &[],
                        TRANSFER,
                    );
                    let text = body["humanMessage"].as_str().unwrap_or_default();
                    let outcome = if status == 200 && body["raw"]["status"] == "SUCCESS" {
                        "passed".to_owned()
                    } else if status == 200 && text.contains("blocked by policy: Reject Tool Call")
                    {
                        "blocked".to_owned()
                    } else {
                        format!("FAILED {status}: {body}")
                    };
                    answers.push(outcome);
                }
                answers
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(500));

    // v2 behind the same tag: the reject-tool policy, signed. Followed within a few polls
    // and a compile: seconds on a quiet 2-core machine, past 15 s once while a release build
    // shared it.
    let component = std::fs::read(plugin("rust/reject-tool")).unwrap();
    let v2 = push_bytes(&tag, &component, Some(&publisher));
    let deadline = Instant::now() + Duration::from_secs(40);
    while plugins()["digest"] != v2.as_str() {
        assert!(Instant::now() < deadline, "not swapped: {}", plugins());
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(500));

    // An unsigned v3 behind the tag is refused; the registry then dies: v2 stays.
    push_bytes(
        &tag,
        &std::fs::read(plugin("rust/tx-timing-hook")).unwrap(),
        None,
    );
    std::thread::sleep(Duration::from_millis(2500));
    registry.stop();
    std::thread::sleep(Duration::from_millis(2500));
    assert_eq!(plugins()["digest"], v2.as_str());
    stop.store(true, Ordering::Relaxed);
    for answers in load.into_iter().map(|t| t.join().unwrap()) {
        let failed: Vec<_> = answers.iter().filter(|a| a.starts_with("FAILED")).collect();
        assert!(failed.is_empty(), "{failed:?}");
        // Each thread's calls: v1's first, then v2's, never back.
        let first_blocked = answers.iter().position(|a| a == "blocked").unwrap();
        assert!(first_blocked > 0, "v1 served calls first: {answers:?}");
        assert!(
            answers[first_blocked..].iter().all(|a| a == "blocked"),
            "once swapped, every call meets v2: {answers:?}"
        );
    }
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.contains("[tx-timing-hook] transfer_hbar_tool took "),
        "{text}"
    );
    assert!(text.contains("swapped in"), "{text}");
    assert!(text.contains("unsigned"), "{text}");
    assert!(text.contains("kept the running version"), "{text}");
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[ignore = "needs docker-registry (scripts/install-deps.sh); scripts/test.sh runs it"]
fn a_private_registry_takes_credentials_from_the_environment_or_the_docker_config() {
    let registry = OciRegistry::start_with_auth(Some(("publisher", "s3cret-pw")));
    let dir = scratch("private");
    let file = plugin("rust/reject-tool");
    let reference = registry.reference("private/reject:1");
    let push = |env: &[(&str, &str)]| {
        run(
            &[
                "plugin",
                "push",
                file.to_str().unwrap(),
                &reference,
                "--config",
                r#"{"relevantTools":["*"]}"#,
            ],
            env,
        )
    };
    // No credentials anywhere (an empty docker config): refused, naming the registry's answer.
    let no_config = dir.join("no-docker");
    std::fs::create_dir_all(&no_config).unwrap();
    let anonymous = [("DOCKER_CONFIG", no_config.to_str().unwrap())];
    let err = push(&anonymous).unwrap_err();
    assert!(err.to_lowercase().contains("authoriz"), "{err}");
    let wrong = [
        ("DOCKER_CONFIG", no_config.to_str().unwrap()),
        ("HAK_REGISTRY_USERNAME", "publisher"),
        ("HAK_REGISTRY_PASSWORD", "guess"),
    ];
    assert!(push(&wrong).is_err());
    let from_env = [
        ("DOCKER_CONFIG", no_config.to_str().unwrap()),
        ("HAK_REGISTRY_USERNAME", "publisher"),
        ("HAK_REGISTRY_PASSWORD", "s3cret-pw"),
    ];
    let pushed = push(&from_env).unwrap();

    // The docker config `docker login` writes: auths by registry, base64 user:password.
    let docker = dir.join("docker");
    std::fs::create_dir_all(&docker).unwrap();
    use base64::Engine;
    let auth = base64::engine::general_purpose::STANDARD.encode("publisher:s3cret-pw");
    std::fs::write(
        docker.join("config.json"),
        format!(
            r#"{{"auths": {{"127.0.0.1:{}": {{"auth": "{auth}"}}}}}}"#,
            registry.port
        ),
    )
    .unwrap();
    let out = dir.join("pulled.wasm");
    let pinned = pushed["pinned"].as_str().unwrap();
    let pull = |env: &[(&str, &str)]| {
        run(
            &["plugin", "pull", pinned, "-o", out.to_str().unwrap()],
            env,
        )
    };
    assert!(pull(&anonymous).is_err());
    pull(&[("DOCKER_CONFIG", docker.to_str().unwrap())]).unwrap();
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&file).unwrap());
    let _ = std::fs::remove_dir_all(&dir);
}
