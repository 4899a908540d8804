//! `hak tools` and the plugin commands that touch files and registries: loading a plugin
//! alone, its trial cases, `inspect`, `push`, `pull`, `replay`. What must not live here:
//! argument parsing.

use super::*;
use crate::host::HostBuilder;
use crate::manifest::PluginSpec;
use crate::model::context::AgentContext;
use crate::runtime::{ArtifactCache, LoadedPlugin, Runtime, RuntimeConfig, TracingLogSink};
use hedera::AccountId;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::ExitCode;
use std::str::FromStr;
use std::sync::Arc;

pub(super) fn print_tools(as_json: bool, args: &HostArgs) -> anyhow::Result<()> {
    let tools = crate::tools::ToolRegistry::native();
    if as_json {
        let manifest = load_manifest(args)?;
        let account_id = match &manifest.context.account_id {
            Some(text) => Some(
                AccountId::from_str(text)
                    .map_err(|e| anyhow::anyhow!("context.account_id {text:?}: {e}"))?,
            ),
            None => None,
        };
        let mut context = AgentContext {
            account_id,
            mode: manifest.context.mode.unwrap_or_default(),
        };
        context = context_of(args, context);
        let list: Vec<_> = tools.specs().map(|s| s.listing(&context)).collect();
        println!("{}", serde_json::to_string_pretty(&list)?);
    } else {
        for spec in tools.specs() {
            let ty = serde_json::to_value(spec.tool_type)?;
            println!(
                "{:<45} {:<12} {}",
                spec.method,
                ty.as_str().unwrap_or_default(),
                spec.name
            );
        }
    }
    Ok(())
}

/// A component loaded on its own (no host, no capabilities), described with `config` (JSON).
pub(super) fn load_standalone(
    file: &std::path::Path,
    config: Option<&str>,
) -> anyhow::Result<Arc<LoadedPlugin>> {
    let config: toml::Table = match config {
        Some(text) => {
            let value: Value = serde_json::from_str(text)
                .map_err(|e| anyhow::anyhow!("--config is not JSON: {e}"))?;
            serde_json::from_value(value)
                .map_err(|e| anyhow::anyhow!("--config must be a JSON object without nulls: {e}"))?
        }
        None => toml::Table::new(),
    };
    let name = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "plugin".into());
    let spec = PluginSpec {
        name,
        path: file.to_owned(),
        source: None,
        oci_digest: None,
        sha256: None,
        config,
        capabilities: Vec::new(),
        limits: Default::default(),
        on_error: Default::default(),
        enforce: true,
    };
    let config = RuntimeConfig {
        cache_dir: ArtifactCache::default_dir(),
        fuel: false,
        function_cache: None,
    };
    let runtime = Runtime::new(config, Arc::new(TracingLogSink))?;
    Ok(LoadedPlugin::load(&runtime, spec, file, None)?)
}

/// `hak plugin test FILE --cases CASES`: every case through the plugin (loaded once per
/// config), `ok` or `FAIL` with the difference, then a summary; exit 1 when any case failed.
/// The `config` of a plugin settings file (a plugins folder's `<name>.toml`), as JSON text.
pub(super) fn settings_config(path: &std::path::Path) -> anyhow::Result<String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow::anyhow!("--settings {}: {e}", path.display()))?;
    let settings: crate::manifest::PluginSidecar = toml::from_str(&text)
        .map_err(|e| anyhow::anyhow!("--settings {}", crate::intake::toml_error(path, &e)))?;
    Ok(serde_json::to_string(&settings.config)?)
}

pub(super) fn plugin_cases(
    file: &std::path::Path,
    cases_path: &std::path::Path,
    config: Option<&str>,
    now_ms: Option<u64>,
) -> anyhow::Result<ExitCode> {
    let text = std::fs::read_to_string(cases_path)
        .map_err(|e| anyhow::anyhow!("--cases {}: {e}", cases_path.display()))?;
    let dir = cases_path.parent().unwrap_or(std::path::Path::new("."));
    let cases = crate::authoring::trial::parse_cases(&text, dir)
        .map_err(|e| anyhow::anyhow!("--cases {}: {e}", cases_path.display()))?;
    let mut loaded: std::collections::HashMap<Option<String>, Arc<dyn crate::plugin::ChainPlugin>> =
        std::collections::HashMap::new();
    let mut failed = 0;
    for case in &cases {
        let config = case.config.as_deref().or(config).map(str::to_owned);
        let member = match loaded.get(&config) {
            Some(member) => Ok(member.clone()),
            None => load_standalone(file, config.as_deref()).map(|plugin| {
                let member = crate::runtime::WasmPlugin::member(plugin);
                loaded.insert(config.clone(), member.clone());
                member
            }),
        };
        let verdict = member
            .map_err(|e| format!("the plugin did not load with this config: {e:#}"))
            .and_then(|member| {
                crate::authoring::trial::check(
                    case,
                    &crate::authoring::trial::run(
                        member.as_ref(),
                        &case.input,
                        case.now_ms.or(now_ms),
                    ),
                )
            });
        let name = crate::logging::one_line(&case.name);
        match verdict {
            Ok(()) => println!("ok   {name}"),
            Err(diff) => {
                failed += 1;
                // The diff quotes the plugin's words with `{:?}`: escaped, one line each.
                println!("FAIL {name}\n  {diff}");
            }
        }
    }
    println!(
        "{} cases: {} passed, {failed} failed",
        cases.len(),
        cases.len() - failed
    );
    Ok(if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

pub(super) fn inspect(file: &std::path::Path, config: Option<&str>) -> anyhow::Result<()> {
    let plugin = load_standalone(file, config)?;
    let (imports, exports) = plugin.imports_and_exports();
    let d = &plugin.description;
    let out = json!({
        "name": d.name,
        "description": d.description,
        "relevantTools": d.relevant_tools,
        "hookStages": d.hook_stages.iter().map(|s| s.wit_name()).collect::<Vec<_>>(),
        "policyStages": d.policy_stages.iter().map(|s| s.wit_name()).collect::<Vec<_>>(),
        "imports": imports,
        "exports": exports,
        "size": plugin.size,
        "sha256": plugin.sha256,
        "contract": plugin.contract(),
        "reads": plugin
            .reads
            .entries()
            .map(|(tool, reads)| (tool.to_owned(), json!(reads.names())))
            .collect::<serde_json::Map<_, _>>(),
    });
    println!("{}", serde_json::to_string_pretty(&out)?);
    Ok(())
}

/// The registries reached over plain HTTP: this one if the operator said so.
impl RegistryArgs {
    fn client(&self, reference: &crate::oci::OciRef) -> anyhow::Result<crate::oci::OciClient> {
        if !(1..=3_600).contains(&self.timeout) {
            anyhow::bail!("--timeout must be 1 to 3600 seconds");
        }
        let plain = if self.plain_http {
            vec![reference.registry().to_owned()]
        } else {
            Vec::new()
        };
        Ok(crate::oci::OciClient::new(plain)
            .with_deadline(std::time::Duration::from_secs(self.timeout)))
    }
}

impl SignArgs {
    /// The cosign private key, opened with `$COSIGN_PASSWORD`.
    fn cosign_key(&self) -> anyhow::Result<Option<p256::ecdsa::SigningKey>> {
        let Some(path) = &self.sign_key else {
            return Ok(None);
        };
        let password = cosign_password()?;
        let text = std::fs::read(path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        let key = crate::signing::cosign::open(&text, password.as_bytes())
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        Ok(Some(key))
    }

    /// The version an OCI signature of `reference` claims: --version, else the tag when it
    /// is a version.
    fn version(
        &self,
        reference: &crate::oci::OciRef,
    ) -> anyhow::Result<Option<crate::oci::version::PluginVersion>> {
        use crate::oci::version::PluginVersion;
        match &self.version {
            Some(text) => PluginVersion::parse(text).map(Some).ok_or_else(|| {
                anyhow::anyhow!("--version {text:?}: not a version (1.2, 1.2.3, v1.2.3-rc.1)")
            }),
            None => Ok(reference.tag().and_then(PluginVersion::parse)),
        }
    }
}

fn cosign_password() -> anyhow::Result<String> {
    use crate::signing::cosign::PASSWORD_ENV;
    std::env::var(PASSWORD_ENV).map_err(|_| {
        anyhow::anyhow!("${PASSWORD_ENV} is not set (cosign.key's password; it may be empty)")
    })
}

/// `hak plugin keygen --cosign`: `cosign.key` and `cosign.pub` in `dir` (never over
/// existing files); what was written.
pub(super) fn keygen_cosign(dir: &std::path::Path) -> anyhow::Result<serde_json::Value> {
    let password = cosign_password()?;
    let (private, public) = crate::signing::cosign::generate(password.as_bytes())?;
    let key_path = dir.join("cosign.key");
    let pub_path = dir.join("cosign.pub");
    for path in [&key_path, &pub_path] {
        if path.exists() {
            anyhow::bail!("{}: exists; not overwritten", path.display());
        }
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    std::io::Write::write_all(
        &mut options
            .open(&key_path)
            .map_err(|e| anyhow::anyhow!("{}: {e}", key_path.display()))?,
        private.as_bytes(),
    )?;
    std::fs::write(&pub_path, public.as_bytes())
        .map_err(|e| anyhow::anyhow!("{}: {e}", pub_path.display()))?;
    Ok(json!({"privateKey": key_path, "publicKey": pub_path}))
}

/// `hak plugin sign`: a file (`<file>.sig`), or the manifest an `oci://` reference names.
pub(super) fn sign(
    file: &std::path::Path,
    key_env: &str,
    signing: &SignArgs,
    registry: &RegistryArgs,
) -> anyhow::Result<()> {
    if let Some(text) = file
        .to_str()
        .filter(|t| t.starts_with(crate::oci::reference::SCHEME))
    {
        let reference = crate::oci::OciRef::parse(text)?;
        let key = signing.cosign_key()?.ok_or_else(|| {
            anyhow::anyhow!(
                "{reference}: OCI signatures are cosign's: --sign-key cosign.key (hak plugin keygen --cosign makes one)"
            )
        })?;
        let version = signing.version(&reference)?;
        let at = registry
            .client(&reference)?
            .sign(&reference, &key, version.as_ref())?;
        println!(
            "{}",
            json!({"signature": at, "version": version.map(|v| v.to_string())})
        );
        return Ok(());
    }
    if signing.version.is_some() {
        anyhow::bail!("--version is claimed by OCI signatures only");
    }
    let bytes = std::fs::read(file).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
    let signature = match signing.cosign_key()? {
        Some(key) => crate::signing::cosign::sign(&key, &bytes),
        None => {
            let key = std::env::var(key_env).map_err(|_| {
                anyhow::anyhow!(
                    "${key_env} is not set (the ed25519 private key, hex), and no --sign-key"
                )
            })?;
            crate::signing::sign(&crate::signing::signing_key(&key)?, &bytes)
        }
    };
    let sig_path = PathBuf::from(format!("{}.sig", file.display()));
    std::fs::write(&sig_path, signature)
        .map_err(|e| anyhow::anyhow!("{}: {e}", sig_path.display()))?;
    println!("{}", json!({"signature": sig_path}));
    Ok(())
}

/// `hak plugin push`: describe the component (it must load as a plugin), lay it out as a
/// Wasm OCI artifact, push it, and sign it when asked.
pub(super) fn push(
    file: &std::path::Path,
    reference: &str,
    config: Option<&str>,
    capabilities: Vec<String>,
    signing: &SignArgs,
    registry: &RegistryArgs,
) -> anyhow::Result<()> {
    let reference = crate::oci::OciRef::parse(reference)?;
    if !reference.is_followed() {
        anyhow::bail!("{reference}: push to a tag (oci://REGISTRY/REPO:TAG); the digest is the registry's answer");
    }
    for c in &capabilities {
        if crate::capabilities::Capability::parse(c).is_none() {
            anyhow::bail!(
                "--capability {c:?}: unknown (known: {})",
                crate::capabilities::Capability::known()
            );
        }
    }
    let key = signing.cosign_key()?;
    let version = signing.version(&reference)?;
    let bytes = std::fs::read(file).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
    let plugin = load_standalone(file, config)?;
    let (imports, exports) = plugin.imports_and_exports();
    let d = &plugin.description;
    let stages =
        |s: &crate::model::stage::StageSet| s.iter().map(|s| s.wit_name().to_owned()).collect();
    let annotations = crate::oci::artifact::PluginAnnotations {
        name: d.name.clone(),
        description: d.description.clone(),
        hook_stages: stages(&d.hook_stages),
        policy_stages: stages(&d.policy_stages),
        relevant_tools: d.relevant_tools.clone(),
        capabilities,
        contract: plugin.contract().to_owned(),
    };
    let created = time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default();
    let built = crate::oci::artifact::build(&bytes, &annotations, &imports, &exports, &created);
    let client = registry.client(&reference)?;
    let digest = client.push(&reference, &built, &bytes)?;
    let signature = match &key {
        Some(key) => Some(client.sign(&reference.at_digest(&digest), key, version.as_ref())?),
        None => None,
    };
    println!(
        "{}",
        json!({
            "pushed": reference.to_string(),
            "digest": digest,
            "pinned": reference.at_digest(&digest).to_string(),
            "sha256": plugin.sha256,
            "signature": signature,
            "version": key.and(version).map(|v| v.to_string()),
        })
    );
    Ok(())
}

/// `hak plugin pull`: the component behind a reference, verified, written to a file.
pub(super) fn pull(
    reference: &str,
    out: Option<PathBuf>,
    public_keys: &[String],
    no_verify: bool,
    registry: &RegistryArgs,
) -> anyhow::Result<()> {
    let reference = crate::oci::OciRef::parse(reference)?;
    let keys = crate::signing::TrustedKeys::parse(public_keys, std::path::Path::new("."))
        .map_err(|(i, e)| anyhow::anyhow!("--public-key {:?}: {e}", public_keys[i]))?;
    if !keys.ed25519.is_empty() {
        anyhow::bail!("--public-key: an ed25519 key (hex) verifies plugin files only; OCI signatures are cosign's (ECDSA P-256): name the publisher's cosign.pub");
    }
    let trusted = keys.cosign;
    if trusted.is_empty() && reference.is_followed() && !no_verify {
        anyhow::bail!("{reference}: a tag can point anywhere; name the publisher's key (--public-key), pin a digest (@sha256:…), or pass --no-verify");
    }
    let verify = if trusted.is_empty() {
        crate::oci::client::Verify::Unchecked
    } else {
        crate::oci::client::Verify::Required(&trusted)
    };
    let pulled = registry.client(&reference)?.pull(&reference, verify)?;
    let out = out.unwrap_or_else(|| {
        let last = reference
            .repository()
            .rsplit('/')
            .next()
            .unwrap_or("plugin");
        PathBuf::from(format!("{last}.wasm"))
    });
    std::fs::write(&out, &pulled.component)
        .map_err(|e| anyhow::anyhow!("{}: {e}", out.display()))?;
    println!(
        "{}",
        json!({
            "pulled": out,
            "digest": pulled.digest,
            "pinned": reference.at_digest(&pulled.digest).to_string(),
            "sha256": pulled.layer_digest.trim_start_matches("sha256:"),
            "bytes": pulled.component.len(),
            "verified": pulled.signature.is_some(),
            "version": pulled.version().map(|v| v.to_string()),
            "annotations": pulled.annotations,
        })
    );
    Ok(())
}

/// `hak call --record DIR`: one file per stage input, `<n>-<stage>.json`.
pub(super) fn write_recorded(
    dir: &std::path::Path,
    stages: &[crate::lifecycle::RecordedStage],
) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| anyhow::anyhow!("--record {}: {e}", dir.display()))?;
    for (i, stage) in stages.iter().enumerate() {
        let path = dir.join(format!("{}-{}.json", i + 1, stage.stage.as_str()));
        let text = serde_json::to_string_pretty(&stage.to_json())?;
        std::fs::write(&path, text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    }
    Ok(())
}

/// `hak replay`: the host of --config with a scratch store and no decision log of its own.
pub(super) fn replay(log: &std::path::Path, args: &HostArgs) -> anyhow::Result<ExitCode> {
    let mut manifest = load_manifest(args)?;
    manifest.decisions = None;
    let host = HostBuilder::new(manifest)
        .state_backend(Arc::new(crate::state_store::MemoryBackend::default()))
        .build()?;
    let file = std::fs::File::open(log).map_err(|e| anyhow::anyhow!("{}: {e}", log.display()))?;
    let report = crate::authoring::replay::replay(&host, std::io::BufReader::new(file), |change| {
        println!("{change}");
    })
    .map_err(|e| anyhow::anyhow!("{}: {e}", log.display()))?;
    println!("{}", serde_json::to_string(&report)?);
    Ok(if report.changed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
