//! The artifact layout: the CNCF Wasm OCI artifact (an OCI image manifest whose config is
//! `application/vnd.wasm.config.v0+json` and whose one layer is the component,
//! `application/wasm`) — what wasm-pkg-tools and other Wasm registries read — with the
//! plugin's description as `dev.hak.plugin.*` annotations. Pulled manifests are checked here
//! before anything is downloaded: media types, one Wasm layer, sizes within the limits.

use super::OciError;
use oci_client::manifest::{OciDescriptor, OciImageManifest, OCI_IMAGE_MEDIA_TYPE};
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

pub const CONFIG_MEDIA_TYPE: &str = "application/vnd.wasm.config.v0+json";
pub const LAYER_MEDIA_TYPE: &str = "application/wasm";
/// The OCI manifest's `artifactType` for a component (what the Wasm registries write).
pub const ARTIFACT_TYPE: &str = "application/vnd.wasm.component.v1+wasm";
/// The older wasm-to-oci layout, also read.
const LEGACY_CONFIG_MEDIA_TYPE: &str = "application/vnd.wasm.config.v1+json";
const LEGACY_LAYER_MEDIA_TYPE: &str = "application/vnd.wasm.content.layer.v1+wasm";
/// Largest manifest read (a plugin's manifest is well under 4 KiB).
pub const MAX_MANIFEST_BYTES: usize = 64 * 1024;

/// Annotation keys of the plugin's description.
pub mod keys {
    pub const TITLE: &str = "org.opencontainers.image.title";
    pub const DESCRIPTION: &str = "org.opencontainers.image.description";
    pub const CREATED: &str = "org.opencontainers.image.created";
    pub const NAME: &str = "dev.hak.plugin.name";
    pub const HOOK_STAGES: &str = "dev.hak.plugin.hook-stages";
    pub const POLICY_STAGES: &str = "dev.hak.plugin.policy-stages";
    pub const RELEVANT_TOOLS: &str = "dev.hak.plugin.relevant-tools";
    pub const CAPABILITIES: &str = "dev.hak.plugin.capabilities";
    pub const CONTRACT: &str = "dev.hak.plugin.contract";
}

/// What the publisher's component says about itself (from `describe`), and what it asks.
#[derive(Clone, Debug, Default)]
pub struct PluginAnnotations {
    pub name: String,
    pub description: String,
    pub hook_stages: Vec<String>,
    pub policy_stages: Vec<String>,
    pub relevant_tools: Vec<String>,
    /// Capabilities the plugin needs the operator to grant (`hedera:submit-topic-message`, …).
    pub capabilities: Vec<String>,
    /// The contract line, e.g. `hedera:agent-kit/agent-plugin@0.2.2`.
    pub contract: String,
}

impl PluginAnnotations {
    fn to_map(&self, created: &str) -> BTreeMap<String, String> {
        let list = |v: &[String]| v.join(",");
        BTreeMap::from([
            (keys::TITLE.into(), self.name.clone()),
            (keys::DESCRIPTION.into(), self.description.clone()),
            (keys::CREATED.into(), created.to_owned()),
            (keys::NAME.into(), self.name.clone()),
            (keys::HOOK_STAGES.into(), list(&self.hook_stages)),
            (keys::POLICY_STAGES.into(), list(&self.policy_stages)),
            (keys::RELEVANT_TOOLS.into(), list(&self.relevant_tools)),
            (keys::CAPABILITIES.into(), list(&self.capabilities)),
            (keys::CONTRACT.into(), self.contract.clone()),
        ])
    }
}

/// The config blob of the Wasm OCI artifact layout.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WasmConfig<'a> {
    created: &'a str,
    architecture: &'static str,
    os: &'static str,
    layer_digests: [&'a str; 1],
    component: ComponentConfig<'a>,
}

#[derive(Serialize)]
struct ComponentConfig<'a> {
    exports: &'a [String],
    imports: &'a [String],
    target: Option<&'a str>,
}

/// `sha256:<hex>` of `bytes`.
pub fn sha256_digest(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

/// An artifact ready to push: the blobs and the manifest's exact bytes (its digest is theirs).
pub struct Built {
    pub config: Vec<u8>,
    pub config_digest: String,
    pub layer_digest: String,
    pub manifest: Vec<u8>,
    pub digest: String,
}

/// Lay out `component` as a Wasm OCI artifact.
pub fn build(
    component: &[u8],
    annotations: &PluginAnnotations,
    imports: &[String],
    exports: &[String],
    created: &str,
) -> Built {
    let layer_digest = sha256_digest(component);
    let config = serde_json::to_vec(&WasmConfig {
        created,
        architecture: "wasm",
        os: "wasip2",
        layer_digests: [&layer_digest],
        component: ComponentConfig {
            exports,
            imports,
            target: None,
        },
    })
    .expect("the config serializes");
    let config_digest = sha256_digest(&config);
    let manifest = OciImageManifest {
        schema_version: 2,
        media_type: Some(OCI_IMAGE_MEDIA_TYPE.into()),
        config: descriptor(CONFIG_MEDIA_TYPE, &config_digest, config.len()),
        layers: vec![descriptor(LAYER_MEDIA_TYPE, &layer_digest, component.len())],
        subject: None,
        artifact_type: Some(ARTIFACT_TYPE.into()),
        annotations: Some(annotations.to_map(created)),
    };
    let manifest = serde_json::to_vec(&manifest).expect("the manifest serializes");
    Built {
        digest: sha256_digest(&manifest),
        config,
        config_digest,
        layer_digest,
        manifest,
    }
}

pub(crate) fn descriptor(media_type: &str, digest: &str, size: usize) -> OciDescriptor {
    OciDescriptor {
        media_type: media_type.into(),
        digest: digest.into(),
        size: size as i64,
        urls: None,
        annotations: None,
        artifact_type: None,
    }
}

/// A pulled manifest checked to be a plugin: its one Wasm layer, and its annotations.
#[derive(Debug)]
pub struct Checked {
    pub layer: OciDescriptor,
    pub annotations: BTreeMap<String, String>,
}

/// Check manifest bytes before downloading anything they point to.
pub fn check(reference: &str, manifest: &[u8], max_layer: usize) -> Result<Checked, OciError> {
    let not = |reason: String| OciError::NotAPlugin {
        reference: reference.to_owned(),
        reason,
    };
    let parsed: OciImageManifest = serde_json::from_slice(manifest)
        .map_err(|e| not(format!("the manifest is not an OCI image manifest: {e}")))?;
    if parsed.schema_version != 2 {
        return Err(not(format!(
            "schemaVersion {} (expected 2)",
            parsed.schema_version
        )));
    }
    if let Some(media_type) = &parsed.media_type {
        if media_type != OCI_IMAGE_MEDIA_TYPE {
            return Err(not(format!("manifest media type {media_type}")));
        }
    }
    let config = &parsed.config.media_type;
    if config != CONFIG_MEDIA_TYPE && config != LEGACY_CONFIG_MEDIA_TYPE {
        return Err(not(format!(
            "config media type {config} (expected {CONFIG_MEDIA_TYPE})"
        )));
    }
    let [layer] = parsed.layers.as_slice() else {
        return Err(not(format!(
            "{} layers (expected one {LAYER_MEDIA_TYPE} layer)",
            parsed.layers.len()
        )));
    };
    if layer.media_type != LAYER_MEDIA_TYPE && layer.media_type != LEGACY_LAYER_MEDIA_TYPE {
        return Err(not(format!(
            "layer media type {} (expected {LAYER_MEDIA_TYPE})",
            layer.media_type
        )));
    }
    if layer.urls.as_ref().is_some_and(|u| !u.is_empty()) {
        return Err(not("a foreign layer (urls); refused".into()));
    }
    if layer.size < 0 || layer.size as u64 > max_layer as u64 {
        return Err(OciError::TooLarge {
            reference: reference.to_owned(),
            what: "the component layer",
            size: layer.size.max(0) as u64,
            limit: max_layer as u64,
        });
    }
    valid_digest(&layer.digest).map_err(|e| not(format!("layer digest: {e}")))?;
    Ok(Checked {
        layer: layer.clone(),
        annotations: parsed.annotations.unwrap_or_default(),
    })
}

/// `sha256:` and 64 lowercase hex digits.
pub fn valid_digest(digest: &str) -> Result<(), String> {
    let hex = digest
        .strip_prefix("sha256:")
        .ok_or_else(|| format!("{digest:?} is not a sha256 digest"))?;
    if hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        Ok(())
    } else {
        Err(format!("{digest:?} is not 64 lowercase hex digits"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_built_artifact_passes_its_own_checks_and_others_do_not() {
        let notes = PluginAnnotations {
            name: "Max Recipients Policy".into(),
            policy_stages: vec!["post-params-normalization".into()],
            ..Default::default()
        };
        let built = build(
            b"\0asm\x0d\0\x01\0",
            &notes,
            &[],
            &[],
            "2026-12-06T00:00:00Z",
        );
        assert_eq!(built.digest, sha256_digest(&built.manifest));
        let checked = check("r", &built.manifest, 1 << 20).unwrap();
        assert_eq!(checked.layer.digest, built.layer_digest);
        assert_eq!(checked.annotations[keys::NAME], "Max Recipients Policy");
        let err = check("r", &built.manifest, 4).unwrap_err();
        assert!(matches!(err, OciError::TooLarge { .. }), "{err}");
        let text = String::from_utf8(built.manifest.clone()).unwrap();
        let image = text.replace(
            CONFIG_MEDIA_TYPE,
            "application/vnd.oci.image.config.v1+json",
        );
        assert!(check("r", image.as_bytes(), 1 << 20)
            .unwrap_err()
            .to_string()
            .contains("config media type"));
        assert!(check("r", b"{}", 1 << 20).is_err());
    }
}
