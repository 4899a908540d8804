//! Plugins shipped as OCI artifacts, against a real registry on loopback (Debian's
//! `docker-registry`, Distribution 2.8): push and pull by tag and by digest, cosign
//! signatures bound to the manifest digest and the repository and checked before anything is
//! compiled (and checked against an independent implementation of cosign's formats, both
//! ways), manifests naming plugins by reference (and starting offline from the cache),
//! `hak serve` following a tag under load, unmoved by a registry that dies, by a signature
//! copied from another repository or by a tag moved back to an older release; and hostile
//! registries (a 512 MiB manifest, one that drips a byte a second, one that never answers)
//! bounded in memory and time.

use hak_host::oci::artifact::{self, PluginAnnotations};
use hak_host::oci::client::Verify;
use hak_host::oci::signature;
use hak_host::oci::version::PluginVersion;
use hak_host::oci::{OciClient, OciError, OciRef};
use hak_host::signing::cosign;
use hak_tests::*;
use p256::ecdsa::{SigningKey, VerifyingKey};
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
    run_in(Path::new("."), args, env)
}

/// A publisher's cosign key pair, as files (`cosign.key` sealed with an empty password, as
/// [`COSIGN_ENV`] says to the CLI; `cosign.pub`) and as keys.
struct Publisher {
    key_file: PathBuf,
    pub_file: PathBuf,
    key: SigningKey,
    public: VerifyingKey,
}

const COSIGN_ENV: (&str, &str) = ("COSIGN_PASSWORD", "");

impl Publisher {
    fn new(dir: &Path, name: &str) -> Self {
        let dir = dir.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        let (private, public) = cosign::generate(b"").unwrap();
        let (key_file, pub_file) = (dir.join("cosign.key"), dir.join("cosign.pub"));
        std::fs::write(&key_file, &private).unwrap();
        std::fs::write(&pub_file, &public).unwrap();
        Publisher {
            key: cosign::open(private.as_bytes(), b"").unwrap(),
            public: cosign::read_public(public.as_bytes()).unwrap(),
            key_file,
            pub_file,
        }
    }

    fn key_arg(&self) -> &str {
        self.key_file.to_str().unwrap()
    }

    fn pub_arg(&self) -> &str {
        self.pub_file.to_str().unwrap()
    }
}

/// The bytes of the built plugin `name` (`rust/reject-tool`).
fn component(name: &str) -> Vec<u8> {
    std::fs::read(plugin(name)).unwrap()
}

fn scratch(name: &str) -> PathBuf {
    let dir = root().join(format!("target/test-tmp/oci-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Push `component` to `reference` through the library (any bytes: the registry does not care
/// whether they are a component), signed by `key` when given (claiming no version); the
/// manifest digest.
fn push_bytes(reference: &str, component: &[u8], key: Option<&SigningKey>) -> String {
    push_version(reference, component, key, None)
}

/// [`push_bytes`], the signature claiming `version`.
fn push_version(
    reference: &str,
    component: &[u8],
    key: Option<&SigningKey>,
    version: Option<&str>,
) -> String {
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
        let version = version.map(|v| PluginVersion::parse(v).unwrap());
        client
            .sign(&reference.at_digest(&digest), key, version.as_ref())
            .unwrap();
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
    let publisher = Publisher::new(&dir, "publisher");
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
            "--sign-key",
            publisher.key_arg(),
        ],
        &[COSIGN_ENV],
    )
    .unwrap();
    let digest = pushed["digest"].as_str().unwrap().to_owned();
    assert!(digest.starts_with("sha256:"), "{pushed}");
    // The tag is a version: the signature claims it.
    assert_eq!(pushed["version"], "1.0.0", "{pushed}");

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
            publisher.pub_arg(),
        ],
        &[],
    )
    .unwrap();
    assert_eq!(pulled["digest"], digest.as_str());
    assert_eq!(pulled["verified"], true);
    assert_eq!(pulled["version"], "1.0.0");
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
    let stranger = Publisher::new(&dir, "stranger");
    let err = run(
        &[
            "plugin",
            "pull",
            &reference,
            "-o",
            "/dev/null",
            "--public-key",
            stranger.pub_arg(),
        ],
        &[],
    )
    .unwrap_err();
    assert!(err.contains("bad signature"), "{err}");
    // An ed25519 key (hak's file signatures) says what OCI needs instead.
    let (_, hex) = hak_host::signing::generate();
    let err = run(
        &[
            "plugin",
            "pull",
            &reference,
            "-o",
            "/dev/null",
            "--public-key",
            &hex,
        ],
        &[],
    )
    .unwrap_err();
    assert!(err.contains("cosign.pub"), "{err}");
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
    let publisher = Publisher::new(&dir, "publisher");
    let stranger = Publisher::new(&dir, "stranger");
    let trusted = publisher.pub_arg();
    let good = std::fs::read(plugin("rust/reject-tool")).unwrap();
    // Not a component at all: compiling it would fail with "not a WebAssembly component". Every
    // refusal below must come first, naming the signature or the digest.
    let garbage = b"\0asm this is not a component".to_vec();
    let good_ref = registry.reference("p:good");
    let good_digest = push_bytes(&good_ref, &good, Some(&publisher.key));
    let unsigned_digest = push_bytes(&registry.reference("p:unsigned"), &garbage, None);
    let client = OciClient::new(Vec::new());
    let trust = [publisher.public];
    let pull = |r: &str| client.pull(&OciRef::parse(r).unwrap(), Verify::Required(&trust));
    assert_eq!(pull(&good_ref).unwrap().component, good);

    // Unsigned.
    let err = pull(&registry.reference("p:unsigned")).unwrap_err();
    assert!(matches!(err, OciError::Unsigned { .. }), "{err}");
    let cache = dir.join("cache");
    let source = registry.reference(&format!("p@{unsigned_digest}"));
    let err = host_error(&manifest_with_source(&source, Some(trusted), &cache, ""));
    assert!(err.contains("unsigned"), "{err}");
    assert!(
        !err.contains("component"),
        "compiled before refusing: {err}"
    );

    // Signed, by a key the operator does not trust.
    let stranger_digest = push_bytes(
        &registry.reference("p:stranger"),
        &garbage,
        Some(&stranger.key),
    );
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
    let err = host_error(&manifest_with_source(&good_ref, Some(trusted), &cache, ""));
    assert!(err.contains("bad signature"), "{err}");
    assert!(
        !err.contains("component"),
        "compiled before refusing: {err}"
    );

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
        Some(trusted),
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
    let publisher = Publisher::new(&dir, "publisher");
    let trusted = publisher.pub_arg();
    let tag = registry.reference("gates/reject:stable");
    let digest = push_bytes(&tag, &component("rust/reject-tool"), Some(&publisher.key));
    let config = "config = { relevantTools = [\"transfer_hbar_tool\"] }";
    let followed = manifest_with_source(&tag, Some(trusted), &cache, config);
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
    let empty = manifest_with_source(&tag, Some(trusted), &dir.join("empty"), config);
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
    let publisher = Publisher::new(&dir, "publisher");
    let tag = registry.reference("gates/late:prod");
    let v1 = push_bytes(
        &tag,
        &component("rust/tx-timing-hook"),
        Some(&publisher.key),
    );
    let (server, log) = serve_following(&tag, publisher.pub_arg(), &dir);
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
    let v2 = push_bytes(&tag, &component("rust/reject-tool"), None);
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
    OciClient::new(Vec::new())
        .sign(
            &OciRef::parse(&tag).unwrap().at_digest(&v2),
            &publisher.key,
            None,
        )
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
    let publisher = Publisher::new(&dir, "publisher");
    let tag = registry.reference("gates/live:prod");
    // v1: the timing hook, pushed with the CLI (calls go through, each timed).
    let pushed = run(
        &[
            "plugin",
            "push",
            plugin("rust/tx-timing-hook").to_str().unwrap(),
            &tag,
            "--sign-key",
            publisher.key_arg(),
        ],
        &[COSIGN_ENV],
    )
    .unwrap();
    let v1 = pushed["digest"].as_str().unwrap().to_owned();
    let (server, log) = serve_following(&tag, publisher.pub_arg(), &dir);
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
    let v2 = push_bytes(&tag, &component("rust/reject-tool"), Some(&publisher.key));
    let deadline = Instant::now() + Duration::from_secs(40);
    while plugins()["digest"] != v2.as_str() {
        assert!(Instant::now() < deadline, "not swapped: {}", plugins());
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(500));

    // An unsigned v3 behind the tag is refused; the registry then dies: v2 stays.
    push_bytes(&tag, &component("rust/tx-timing-hook"), None);
    // Refused at the next poll (a loaded machine may take a while to get there).
    let deadline = Instant::now() + Duration::from_secs(40);
    while !std::fs::read_to_string(&log)
        .unwrap_or_default()
        .contains("unsigned")
    {
        assert!(Instant::now() < deadline, "v3 never refused");
        std::thread::sleep(Duration::from_millis(100));
    }
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

/// `hak args…` run in `dir` with `env` (see [`run`]).
fn run_in(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Result<serde_json::Value, String> {
    let out = std::process::Command::new(hak())
        .args(args)
        .envs(env.iter().copied())
        .current_dir(dir)
        .output()
        .expect("hak runs");
    if out.status.success() {
        let text = String::from_utf8_lossy(&out.stdout);
        Ok(serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{e}: {text}")))
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// `tests/cosign_interop.py args…` (an independent implementation of cosign's formats, with
/// Python's cryptography and PyNaCl), `$COSIGN_PASSWORD` = `password`: its stdout, or stderr.
fn independent(args: &[&str], password: &str) -> Result<String, String> {
    let out = std::process::Command::new(root().join("target/tools/py-venv/bin/python"))
        .arg(root().join("tests/cosign_interop.py"))
        .args(args)
        .env("COSIGN_PASSWORD", password)
        .output()
        .expect("the py-venv's python runs (scripts/install-deps.sh)");
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

#[test]
#[ignore = "needs docker-registry and the py-venv (scripts/install-deps.sh); scripts/test.sh runs it"]
fn cosign_key_files_and_signatures_agree_with_an_independent_implementation_both_ways() {
    let registry = OciRegistry::start();
    let host_port = format!("127.0.0.1:{}", registry.port);
    let dir = scratch("cosign-interop");
    let (hak_dir, other_dir) = (dir.join("hak"), dir.join("other"));
    std::fs::create_dir_all(&hak_dir).unwrap();
    std::fs::create_dir_all(&other_dir).unwrap();
    let file = plugin("rust/reject-tool");
    let pw = [("COSIGN_PASSWORD", "pw")];

    // hak's key files, opened by the other implementation.
    let written = run_in(&hak_dir, &["plugin", "keygen", "--cosign"], &pw).unwrap();
    assert_eq!(written["publicKey"], "./cosign.pub", "{written}");
    let hak_key = hak_dir.join("cosign.key");
    let hak_pub = hak_dir.join("cosign.pub");
    let opened = independent(&["public", hak_key.to_str().unwrap()], "pw").unwrap();
    assert_eq!(
        opened.trim(),
        std::fs::read_to_string(&hak_pub).unwrap().trim()
    );
    assert!(independent(&["public", hak_key.to_str().unwrap()], "guess").is_err());
    // keygen never writes over a key.
    let err = run_in(&hak_dir, &["plugin", "keygen", "--cosign"], &pw).unwrap_err();
    assert!(err.contains("exists"), "{err}");

    // hak signs an image; the other verifies it as `cosign verify --key` does.
    let guard = registry.reference("interop/guard:2.1");
    let pushed = run(
        &[
            "plugin",
            "push",
            file.to_str().unwrap(),
            &guard,
            "--config",
            r#"{"relevantTools":["*"]}"#,
            "--sign-key",
            hak_key.to_str().unwrap(),
        ],
        &pw,
    )
    .unwrap();
    let digest = pushed["digest"].as_str().unwrap();
    let verified = independent(
        &[
            "verify",
            &host_port,
            "interop/guard",
            digest,
            hak_pub.to_str().unwrap(),
        ],
        "",
    )
    .unwrap();
    let verified: serde_json::Value = serde_json::from_str(&verified).unwrap();
    let claims = &verified[0];
    assert_eq!(
        claims["critical"]["identity"]["docker-reference"],
        format!("{host_port}/interop/guard")
    );
    assert_eq!(
        claims["critical"]["image"]["docker-manifest-digest"],
        digest
    );
    assert_eq!(claims["optional"]["dev.hak.plugin.version"], "2.1.0");
    // A file signature, as `cosign verify-blob --key` checks it.
    let blob = dir.join("blob.wasm");
    std::fs::copy(&file, &blob).unwrap();
    run(
        &[
            "plugin",
            "sign",
            blob.to_str().unwrap(),
            "--sign-key",
            hak_key.to_str().unwrap(),
        ],
        &pw,
    )
    .unwrap();
    let sig = format!("{}.sig", blob.display());
    independent(
        &[
            "verify-blob",
            blob.to_str().unwrap(),
            &sig,
            hak_pub.to_str().unwrap(),
        ],
        "",
    )
    .unwrap();

    // The other implementation's key files, used by hak.
    independent(&["keygen", other_dir.to_str().unwrap()], "pw").unwrap();
    let other_key = other_dir.join("cosign.key");
    let other_pub = other_dir.join("cosign.pub");
    let unsigned = run(
        &[
            "plugin",
            "push",
            file.to_str().unwrap(),
            &registry.reference("interop/other:latest"),
            "--config",
            r#"{"relevantTools":["*"]}"#,
        ],
        &[],
    )
    .unwrap();
    let pinned = unsigned["pinned"].as_str().unwrap();
    run(
        &[
            "plugin",
            "sign",
            pinned,
            "--sign-key",
            other_key.to_str().unwrap(),
        ],
        &pw,
    )
    .unwrap();
    independent(
        &[
            "verify",
            &host_port,
            "interop/other",
            unsigned["digest"].as_str().unwrap(),
            other_pub.to_str().unwrap(),
        ],
        "",
    )
    .unwrap();
    let pulled = run(
        &[
            "plugin",
            "pull",
            pinned,
            "-o",
            "/dev/null",
            "--public-key",
            other_pub.to_str().unwrap(),
        ],
        &[],
    )
    .unwrap();
    assert_eq!(pulled["verified"], true);
    assert_eq!(pulled["version"], serde_json::Value::Null);
    run(
        &[
            "plugin",
            "verify",
            blob.to_str().unwrap(),
            "--public-key",
            hak_pub.to_str().unwrap(),
        ],
        &[],
    )
    .unwrap();

    // The other implementation signs an image as `cosign sign --key -a …` does; hak pulls it.
    let third = registry.reference("interop/third:1");
    let third_digest = push_bytes(&third, &std::fs::read(&file).unwrap(), None);
    independent(
        &[
            "sign",
            &host_port,
            "interop/third",
            &third_digest,
            other_key.to_str().unwrap(),
            "--claim",
            "dev.hak.plugin.version=3.0.0",
        ],
        "pw",
    )
    .unwrap();
    let pulled = run(
        &[
            "plugin",
            "pull",
            &third,
            "-o",
            "/dev/null",
            "--public-key",
            other_pub.to_str().unwrap(),
        ],
        &[],
    )
    .unwrap();
    assert_eq!(pulled["verified"], true);
    assert_eq!(pulled["version"], "3.0.0");
    // The same key's signature made for another repository does not count here.
    let fourth = registry.reference("interop/fourth:1");
    let fourth_digest = push_bytes(&fourth, b"\0asm fourth", None);
    independent(
        &[
            "sign",
            &host_port,
            "interop/fourth",
            &fourth_digest,
            other_key.to_str().unwrap(),
            "--identity",
            &format!("{host_port}/interop/third"),
        ],
        "pw",
    )
    .unwrap();
    let err = run(
        &[
            "plugin",
            "pull",
            &fourth,
            "-o",
            "/dev/null",
            "--public-key",
            other_pub.to_str().unwrap(),
        ],
        &[],
    )
    .unwrap_err();
    assert!(
        err.contains(&format!(
            "signed for repository {host_port}/interop/third, not {host_port}/interop/fourth"
        )),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Make `digest` of repository `from` a blob of `to` too (the registry's cross-repository
/// mount: what anyone who may push to `to` and pull from `from` can do).
fn mount_blob(registry: &OciRegistry, to: &str, from: &str, digest: &str) {
    let addr = ([127, 0, 0, 1], registry.port).into();
    let (status, head, _) = http_text(
        addr,
        "POST",
        &format!("/v2/{to}/blobs/uploads/?mount={digest}&from={from}"),
        &[],
        "",
    );
    assert_eq!(status, 201, "{head}");
}

/// Copy manifest `digest` of `from`, and its signature image, into `to` (blobs mounted) and
/// point `to`'s `tag` at it: a re-tag by someone with write access to the registry.
fn copy_signed(registry: &OciRegistry, from: &str, to: &str, digest: &str, tag: &str) {
    for reference in [digest.to_owned(), signature::tag_for(digest)] {
        let manifest = get_manifest(registry, from, &reference);
        let parsed: serde_json::Value = serde_json::from_slice(&manifest).unwrap();
        let layers = parsed["layers"].as_array().unwrap();
        for blob in layers.iter().chain([&parsed["config"]]) {
            mount_blob(registry, to, from, blob["digest"].as_str().unwrap());
        }
        let at = if reference == digest { tag } else { &reference };
        put_manifest(registry, to, at, &manifest);
    }
}

/// Wait (≤ 40 s) until `log` contains `text`; the log.
fn wait_for_log(log: &Path, text: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(40);
    loop {
        let now = std::fs::read_to_string(log).unwrap_or_default();
        if now.contains(text) {
            return now;
        }
        assert!(Instant::now() < deadline, "no {text:?} in the log: {now}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The digest `hak serve` at `server` runs as its first plugin, and whether a transfer passes.
fn running(server: &ServeProcess) -> (String, bool) {
    let (status, _, body) = http(server.addr, "GET", "/v1/plugins", &[], "");
    assert_eq!(status, 200, "{body}");
    let digest = body["plugins"][0]["digest"].as_str().unwrap().to_owned();
    let (status, _, out) = http(
        server.addr,
        "POST",
        "/v1/tools/transfer_hbar_tool",
        &[],
        TRANSFER,
    );
    assert_eq!(status, 200, "{out}");
    (digest, out["raw"]["status"] == "SUCCESS")
}

#[test]
#[ignore = "needs docker-registry (scripts/install-deps.sh); scripts/test.sh runs it"]
fn a_signed_plugin_copied_from_another_repository_of_the_publisher_is_not_followed() {
    let registry = OciRegistry::start();
    let dir = scratch("copied");
    let acme = Publisher::new(&dir, "acme");
    // The guard blocks every transfer; the hook of another repository lets them through.
    let guard_tag = registry.reference("acme/guard:1.0");
    let guard = push_bytes(&guard_tag, &component("rust/reject-tool"), Some(&acme.key));
    let hook = push_bytes(
        &registry.reference("acme/hook:1.0"),
        &component("rust/tx-timing-hook"),
        Some(&acme.key),
    );
    let (server, log) = serve_following(&guard_tag, acme.pub_arg(), &dir);
    assert_eq!(running(&server), (guard.clone(), false));

    copy_signed(&registry, "acme/hook", "acme/guard", &hook, "1.0");
    let refusal = format!(
        "signed for repository 127.0.0.1:{port}/acme/hook, not 127.0.0.1:{port}/acme/guard",
        port = registry.port
    );
    wait_for_log(&log, &refusal);
    // Polled again and again: still the guard, and the refusal said once.
    std::thread::sleep(Duration::from_millis(3000));
    assert_eq!(running(&server), (guard.clone(), false));
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(text.matches(&refusal).count(), 1, "{text}");
    // A pull by the tag says the same.
    let err = run(
        &[
            "plugin",
            "pull",
            &guard_tag,
            "-o",
            "/dev/null",
            "--public-key",
            acme.pub_arg(),
        ],
        &[],
    )
    .unwrap_err();
    assert!(err.contains(&refusal), "{err}");
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[ignore = "needs docker-registry (scripts/install-deps.sh); scripts/test.sh runs it"]
fn a_followed_tag_never_rolls_back_not_even_across_a_restart() {
    let registry = OciRegistry::start();
    let dir = scratch("rollback");
    let acme = Publisher::new(&dir, "acme");
    let tag = registry.reference("acme/guard:stable");
    // 1.0.0 lets transfers through; 1.1.0 blocks them.
    let v1 = push_version(
        &tag,
        &component("rust/tx-timing-hook"),
        Some(&acme.key),
        Some("1.0.0"),
    );
    let (server, log) = serve_following(&tag, acme.pub_arg(), &dir);
    assert_eq!(running(&server), (v1.clone(), true));
    let v2 = push_version(
        &tag,
        &component("rust/reject-tool"),
        Some(&acme.key),
        Some("1.1.0"),
    );
    wait_for_log(&log, "swapped in");
    assert_eq!(running(&server), (v2.clone(), false));

    // The tag moved back to 1.0.0, whose signature is still the publisher's and still valid.
    put_manifest(
        &registry,
        "acme/guard",
        "stable",
        &get_manifest(&registry, "acme/guard", &v1),
    );
    let refusal = "a rollback: version 1.0.0 is older than 1.1.0";
    wait_for_log(&log, refusal);
    std::thread::sleep(Duration::from_millis(3000));
    assert_eq!(running(&server), (v2.clone(), false));
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(text.matches(refusal).count(), 1, "{text}");

    // A signed release that names no version, after versioned ones.
    push_bytes(&tag, b"\0asm unversioned", Some(&acme.key));
    wait_for_log(
        &log,
        "its signature names no version, and version 1.1.0 has run",
    );
    assert_eq!(running(&server), (v2.clone(), false));

    // Restarted while the tag names 1.0.0: it starts with 1.1.0 from its cache.
    drop(server);
    put_manifest(
        &registry,
        "acme/guard",
        "stable",
        &get_manifest(&registry, "acme/guard", &v1),
    );
    std::fs::remove_file(&log).unwrap();
    let (server, log) = serve_following(&tag, acme.pub_arg(), &dir);
    assert_eq!(running(&server), (v2.clone(), false));
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("not rolled back"), "{text}");
    drop(server);

    // An operator who means it pins the older digest.
    let pinned = registry.reference(&format!("acme/guard@{v1}"));
    let manifest = manifest_with_source(
        &pinned,
        Some(acme.pub_arg()),
        &dir.join("cache"),
        "config = { relevantTools = [\"transfer_hbar_tool\"] }",
    );
    let (host, _) = start(&manifest);
    let out = host
        .default_session()
        .call("transfer_hbar_tool", TRANSFER)
        .unwrap();
    assert_eq!(out["raw"]["status"], "SUCCESS", "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// How a [`HostileRegistry`] answers a manifest request.
#[derive(Clone, Copy, PartialEq)]
enum Hostility {
    /// 512 MiB of manifest, its length declared (`Content-Length`) or not (chunked).
    Huge { declared: bool },
    /// A manifest of 1,000 bytes, one byte a second.
    Drip,
    /// Accepts the connection, reads the request, never answers.
    Silent,
}

/// An HTTP server on loopback that speaks just enough of the Distribution API (`/v2/`) to be
/// asked for a manifest, and then misbehaves; it counts the manifest bytes it got written.
/// Every connection it holds ends within two minutes, whatever the client does.
struct HostileRegistry {
    port: u16,
    sent: Arc<std::sync::atomic::AtomicU64>,
}

impl HostileRegistry {
    fn start(hostility: Hostility) -> Self {
        use std::io::{BufRead, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let sent = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let counter = sent.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let counter = counter.clone();
                std::thread::spawn(move || {
                    let until = Instant::now() + Duration::from_secs(120);
                    stream
                        .set_write_timeout(Some(Duration::from_secs(20)))
                        .unwrap();
                    let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
                    let mut request = String::new();
                    loop {
                        let mut line = String::new();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        if line == "\r\n" {
                            break;
                        }
                        request += &line;
                    }
                    let mut out = stream;
                    if request.starts_with("GET /v2/ ") {
                        let _ = out.write_all(
                            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}",
                        );
                        return;
                    }
                    let head = |length: &str| {
                        format!("HTTP/1.1 200 OK\r\nContent-Type: application/vnd.oci.image.manifest.v1+json\r\n{length}Connection: close\r\n\r\n")
                    };
                    match hostility {
                        Hostility::Silent => {
                            while Instant::now() < until {
                                std::thread::sleep(Duration::from_millis(200));
                            }
                        }
                        Hostility::Drip => {
                            if out
                                .write_all(head("Content-Length: 1000\r\n").as_bytes())
                                .is_err()
                            {
                                return;
                            }
                            while Instant::now() < until && out.write_all(b" ").is_ok() {
                                counter.fetch_add(1, Ordering::Relaxed);
                                std::thread::sleep(Duration::from_secs(1));
                            }
                        }
                        Hostility::Huge { declared } => {
                            let total: u64 = 512 << 20;
                            let length = if declared {
                                format!("Content-Length: {total}\r\n")
                            } else {
                                "Transfer-Encoding: chunked\r\n".to_owned()
                            };
                            if out.write_all(head(&length).as_bytes()).is_err() {
                                return;
                            }
                            let chunk = vec![b' '; 1 << 20];
                            let mut written = 0;
                            while written < total && Instant::now() < until {
                                let ok = if declared {
                                    out.write_all(&chunk)
                                } else {
                                    out.write_all(format!("{:x}\r\n", chunk.len()).as_bytes())
                                        .and_then(|_| out.write_all(&chunk))
                                        .and_then(|_| out.write_all(b"\r\n"))
                                };
                                if ok.is_err() {
                                    return;
                                }
                                written += chunk.len() as u64;
                                counter.fetch_add(chunk.len() as u64, Ordering::Relaxed);
                            }
                            if !declared {
                                let _ = out.write_all(b"0\r\n\r\n");
                            }
                        }
                    }
                });
            }
        });
        HostileRegistry { port, sent }
    }

    fn reference(&self, path: &str) -> String {
        format!("oci://127.0.0.1:{}/{path}", self.port)
    }
}

/// Run `hak args…` to its end: (stderr, peak resident memory in KiB, wall time). The peak is
/// the kernel's high-water mark (`VmHWM`), sampled until the process exits.
fn run_measured(args: &[&str]) -> (bool, String, u64, Duration) {
    let started = Instant::now();
    let mut child = std::process::Command::new(hak())
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let status = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    let exit = loop {
        if let Some(hwm) = std::fs::read_to_string(&status).ok().and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        }) {
            peak = peak.max(hwm);
        }
        if let Some(exit) = child.try_wait().unwrap() {
            break exit;
        }
        assert!(
            started.elapsed() < Duration::from_secs(150),
            "hak {args:?} still running"
        );
        std::thread::sleep(Duration::from_millis(5));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    (exit.success(), stderr, peak, started.elapsed())
}

#[test]
fn a_512_mib_manifest_is_refused_at_the_limit_without_being_buffered() {
    for declared in [true, false] {
        let registry = HostileRegistry::start(Hostility::Huge { declared });
        let reference = registry.reference("evil/huge:1");
        let (ok, stderr, peak_kib, _) = run_measured(&[
            "plugin",
            "pull",
            &reference,
            "-o",
            "/dev/null",
            "--no-verify",
        ]);
        assert!(!ok, "pulled a 512 MiB manifest");
        assert!(
            stderr.contains(&reference) && stderr.contains("exceeds the 65536-byte limit"),
            "declared {declared}: {stderr}"
        );
        // What the client took before it stopped reading: the socket buffers, not the body.
        let sent = registry.sent.load(Ordering::Relaxed);
        assert!(sent < 64 << 20, "declared {declared}: {sent} bytes taken");
        assert!(
            peak_kib < 256 * 1024,
            "declared {declared}: peak resident memory {peak_kib} KiB"
        );
    }
}

#[test]
fn a_registry_that_drips_or_stalls_fails_the_pull_at_its_deadline() {
    for hostility in [Hostility::Drip, Hostility::Silent] {
        let registry = HostileRegistry::start(hostility);
        let reference = registry.reference("evil/slow:1");
        let (ok, stderr, _, took) = run_measured(&[
            "plugin",
            "pull",
            &reference,
            "-o",
            "/dev/null",
            "--no-verify",
            "--timeout",
            "3",
        ]);
        assert!(!ok);
        assert!(
            stderr.contains(&reference) && stderr.contains("took longer than 3 s"),
            "{stderr}"
        );
        // The deadline, not the registry's two minutes (generous: a loaded machine).
        assert!(took < Duration::from_secs(60), "{took:?}");
    }
}

#[test]
fn a_host_whose_registry_stalls_and_whose_cache_is_empty_fails_to_start_within_the_deadline() {
    let registry = HostileRegistry::start(Hostility::Silent);
    let dir = scratch("stalled-start");
    let acme = Publisher::new(&dir, "acme");
    let reference = registry.reference("acme/guard:1.0");
    let manifest = format!(
        "{LOCAL}\n[trust]\npublic_keys = [{:?}]\n\n[oci]\ncache_dir = {:?}\ntimeout_seconds = 2\n\n[[plugins]]\nname = \"gate\"\nsource = {reference:?}\n",
        acme.pub_arg(),
        dir.join("cache").display().to_string()
    );
    let started = Instant::now();
    let err = host_error(&manifest);
    assert!(
        err.contains(&reference) && err.contains("took longer than 2 s"),
        "{err}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
    let _ = std::fs::remove_dir_all(&dir);
}
