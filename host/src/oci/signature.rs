//! What an OCI plugin's publisher signs, and where the signature lives: cosign's format, so
//! `cosign verify --key cosign.pub` accepts what hak signs and hak accepts what
//! `cosign sign --key cosign.key` made.
//!
//! The signed message is a simple-signing payload (JSON) that names the repository
//! (`critical.identity.docker-reference` = `REGISTRY/REPO`), the manifest digest
//! (`critical.image.docker-manifest-digest`) and the type (`cosign container image
//! signature`), with optional claims; hak reads one of them, the release's version
//! ([`super::version::CLAIM`]). The manifest names the component layer by its digest, so the
//! signature covers the component, its config and annotations; a copy of the manifest and its
//! signature into another repository names the wrong repository and is refused.
//!
//! The signatures are an OCI image tagged `sha256-<hex>.sig` beside the manifest: one layer
//! per signature (media type `application/vnd.dev.cosign.simplesigning.v1+json`, the payload
//! as its blob, the base64 ECDSA signature in its `dev.cosignproject.cosign/signature`
//! annotation). Keys and the signature primitive are [`crate::signing::cosign`]'s.

use super::artifact::{descriptor, sha256_digest};
use super::reference::OciRef;
use super::version::{self, PluginVersion};
use super::OciError;
use crate::signing::cosign;
use oci_client::manifest::{OciDescriptor, OciImageManifest, OCI_IMAGE_MEDIA_TYPE};
use p256::ecdsa::{SigningKey, VerifyingKey};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub const LAYER_MEDIA_TYPE: &str = "application/vnd.dev.cosign.simplesigning.v1+json";
pub const SIGNATURE_ANNOTATION: &str = "dev.cosignproject.cosign/signature";
pub const CONFIG_MEDIA_TYPE: &str = "application/vnd.oci.image.config.v1+json";
pub const PAYLOAD_TYPE: &str = "cosign container image signature";
/// The layer type of hak's own signature documents before it wrote cosign's (recognised
/// only to say so).
const FORMER_LAYER_MEDIA_TYPE: &str = "application/vnd.hak.plugin.signature.v1+json";
/// At most this many signatures are read, each payload at most this many bytes.
pub const MAX_SIGNERS: usize = 16;
pub const MAX_PAYLOAD_BYTES: usize = 16 * 1024;
/// A signature annotation longer than this is not an ECDSA P-256 signature.
const MAX_SIGNATURE_CHARS: usize = 256;

/// The tag the signatures of `digest` (`sha256:<hex>`) are stored under.
pub fn tag_for(digest: &str) -> String {
    format!("{}.sig", digest.replacen(':', "-", 1))
}

/// The signed manifest's reference, from its signature image's (`…:sha256-<hex>.sig`).
fn subject_of(sig_ref: &OciRef) -> String {
    match sig_ref
        .tag()
        .and_then(|t| t.strip_suffix(".sig"))
        .and_then(|t| t.strip_prefix("sha256-"))
    {
        Some(hex) => sig_ref.at_digest(&format!("sha256:{hex}")).to_string(),
        None => sig_ref.to_string(),
    }
}

/// The repository name a payload binds, as cosign writes it: `REGISTRY/REPO` (Docker Hub's
/// two spellings are one registry).
pub fn docker_reference(reference: &OciRef) -> String {
    format!("{}/{}", reference.registry(), reference.repository())
}

fn same_repository(a: &str, b: &str) -> bool {
    let hub = |s: &str| {
        s.strip_prefix("index.docker.io/")
            .map(|rest| format!("docker.io/{rest}"))
            .unwrap_or_else(|| s.to_owned())
    };
    hub(a) == hub(b)
}

#[derive(Serialize, Deserialize)]
struct Payload {
    critical: Critical,
    #[serde(default)]
    optional: Option<BTreeMap<String, serde_json::Value>>,
}

#[derive(Serialize, Deserialize)]
struct Critical {
    identity: Identity,
    image: Image,
    #[serde(rename = "type")]
    kind: String,
}

#[derive(Serialize, Deserialize)]
struct Identity {
    #[serde(rename = "docker-reference")]
    docker_reference: String,
}

#[derive(Serialize, Deserialize)]
struct Image {
    #[serde(rename = "docker-manifest-digest")]
    docker_manifest_digest: String,
}

/// The simple-signing payload for manifest `digest` of `reference`'s repository, claiming
/// `version` when given.
pub fn payload(reference: &OciRef, digest: &str, version: Option<&PluginVersion>) -> Vec<u8> {
    let optional = version.map(|v| {
        BTreeMap::from([(
            version::CLAIM.to_owned(),
            serde_json::Value::String(v.to_string()),
        )])
    });
    serde_json::to_vec(&Payload {
        critical: Critical {
            identity: Identity {
                docker_reference: docker_reference(reference),
            },
            image: Image {
                docker_manifest_digest: digest.to_owned(),
            },
            kind: PAYLOAD_TYPE.to_owned(),
        },
        optional,
    })
    .expect("a payload serializes")
}

/// One signature as stored: the payload's exact bytes and the base64 signature over them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Signed {
    #[serde(with = "crate::signing::cosign::b64")]
    pub payload: Vec<u8>,
    pub signature: String,
}

impl Signed {
    /// `payload` signed with `key`.
    pub fn sign(key: &SigningKey, payload: Vec<u8>) -> Self {
        let signature = cosign::sign(key, &payload);
        Signed { payload, signature }
    }

    /// The signature as the cache keeps it (JSON).
    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("a signature serializes")
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<Self, String> {
        serde_json::from_slice(bytes).map_err(|e| e.to_string())
    }
}

/// What a verified signature binds: the repository, the manifest digest, the version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verified {
    pub signed: Signed,
    pub version: Option<PluginVersion>,
}

/// Why `signed` is not a signature of manifest `digest` in `repository` by one of `trusted`,
/// or its version claim.
fn check(
    signed: &Signed,
    repository: &str,
    digest: &str,
    trusted: &[VerifyingKey],
) -> Result<Option<PluginVersion>, String> {
    cosign::verify(trusted, &signed.payload, &signed.signature).map_err(|e| e.to_string())?;
    let payload: Payload = serde_json::from_slice(&signed.payload)
        .map_err(|e| format!("the signed payload is not cosign's simple-signing JSON: {e}"))?;
    let critical = &payload.critical;
    if critical.kind != PAYLOAD_TYPE {
        return Err(format!(
            "the signed payload's type is {:?}, not {PAYLOAD_TYPE:?}",
            critical.kind
        ));
    }
    if critical.image.docker_manifest_digest != digest {
        return Err(format!(
            "it signs {}, not this manifest",
            critical.image.docker_manifest_digest
        ));
    }
    if !same_repository(&critical.identity.docker_reference, repository) {
        return Err(format!(
            "it is signed for repository {}, not {repository} (a signature counts only for the repository it names)",
            critical.identity.docker_reference
        ));
    }
    match payload
        .optional
        .as_ref()
        .and_then(|o| o.get(version::CLAIM))
    {
        None => Ok(None),
        Some(serde_json::Value::String(text)) => PluginVersion::parse(text)
            .map(Some)
            .ok_or_else(|| format!("its {} claim {text:?} is not a version", version::CLAIM)),
        Some(other) => Err(format!(
            "its {} claim {other} is not a version",
            version::CLAIM
        )),
    }
}

/// The signature among `signatures` that a trusted key made for manifest `digest` of
/// `reference`'s repository (the highest version when several do), or why none is.
pub fn verify(
    reference: &OciRef,
    digest: &str,
    signatures: &[Signed],
    trusted: &[VerifyingKey],
) -> Result<Verified, OciError> {
    if signatures.is_empty() {
        return Err(OciError::Unsigned {
            reference: reference.to_string(),
            digest: digest.to_owned(),
        });
    }
    let repository = docker_reference(reference);
    let mut best: Option<Verified> = None;
    let mut reasons = Vec::new();
    for signed in signatures {
        match check(signed, &repository, digest, trusted) {
            Ok(version) => {
                if best.as_ref().is_none_or(|b| version > b.version) {
                    best = Some(Verified {
                        signed: signed.clone(),
                        version,
                    });
                }
            }
            Err(reason) => reasons.push(reason),
        }
    }
    best.ok_or_else(|| {
        reasons.dedup();
        OciError::BadSignature {
            reference: reference.to_string(),
            digest: digest.to_owned(),
            reason: reasons.join("; "),
        }
    })
}

/// cosign's config blob for a signature image whose layers are `payloads`.
fn config(layers: &[OciDescriptor]) -> Vec<u8> {
    let diff_ids: Vec<&str> = layers.iter().map(|l| l.digest.as_str()).collect();
    serde_json::to_vec(&serde_json::json!({
        "architecture": "",
        "created": "0001-01-01T00:00:00Z",
        "history": [{"created": "0001-01-01T00:00:00Z"}],
        "os": "",
        "rootfs": {"type": "layers", "diff_ids": diff_ids},
        "config": {}
    }))
    .expect("the config serializes")
}

/// The signature image for `signatures`: its manifest's exact bytes and its config blob (the
/// payloads are the layer blobs, pushed first).
pub fn manifest(signatures: &[Signed]) -> (Vec<u8>, Vec<u8>) {
    let layers: Vec<OciDescriptor> = signatures
        .iter()
        .map(|s| OciDescriptor {
            annotations: Some(BTreeMap::from([(
                SIGNATURE_ANNOTATION.to_owned(),
                s.signature.clone(),
            )])),
            ..descriptor(
                LAYER_MEDIA_TYPE,
                &sha256_digest(&s.payload),
                s.payload.len(),
            )
        })
        .collect();
    let config = config(&layers);
    let manifest = OciImageManifest {
        schema_version: 2,
        media_type: Some(OCI_IMAGE_MEDIA_TYPE.into()),
        config: descriptor(CONFIG_MEDIA_TYPE, &sha256_digest(&config), config.len()),
        layers,
        subject: None,
        artifact_type: None,
        annotations: None,
    };
    (
        serde_json::to_vec(&manifest).expect("the manifest serializes"),
        config,
    )
}

/// The signature layers of a signature image's manifest (checked: count, sizes), each with
/// its signature annotation. Layers of other types, and ones without a signature, are skipped.
pub fn layers(sig_ref: &OciRef, manifest: &[u8]) -> Result<Vec<(OciDescriptor, String)>, OciError> {
    let bad = |reason: String| OciError::BadSignature {
        reference: sig_ref.to_string(),
        digest: String::new(),
        reason,
    };
    let parsed: OciImageManifest = serde_json::from_slice(manifest).map_err(|e| {
        bad(format!(
            "the signature manifest is not an OCI manifest: {e}"
        ))
    })?;
    let former = parsed
        .layers
        .iter()
        .filter(|l| l.media_type == FORMER_LAYER_MEDIA_TYPE)
        .count();
    let layers: Vec<(OciDescriptor, String)> = parsed
        .layers
        .into_iter()
        .filter(|l| l.media_type == LAYER_MEDIA_TYPE)
        .filter_map(|mut l| {
            let sig = l
                .annotations
                .as_mut()
                .and_then(|a| a.remove(SIGNATURE_ANNOTATION))?;
            Some((l, sig))
        })
        .collect();
    if layers.is_empty() && former > 0 {
        return Err(bad(format!(
            "signed in hak's former format ({FORMER_LAYER_MEDIA_TYPE}), which is no longer read: sign it again with cosign's (hak plugin sign {} --sign-key cosign.key)",
            subject_of(sig_ref)
        )));
    }
    if layers.len() > MAX_SIGNERS {
        return Err(bad(format!(
            "{} signatures (at most {MAX_SIGNERS} are read)",
            layers.len()
        )));
    }
    Ok(layers
        .into_iter()
        .filter(|(l, sig)| {
            l.size >= 0 && l.size as usize <= MAX_PAYLOAD_BYTES && sig.len() <= MAX_SIGNATURE_CHARS
        })
        .collect())
}

/// `existing` with `new` added: one signature per payload and key (a re-signature replaces
/// the same signer's old one), the newest last, at most [`MAX_SIGNERS`] kept.
pub fn merged(existing: Vec<Signed>, new: Signed, trusted_new: &VerifyingKey) -> Vec<Signed> {
    let mut out: Vec<Signed> = existing
        .into_iter()
        .filter(|s| {
            s.payload != new.payload
                || cosign::verify(std::slice::from_ref(trusted_new), &s.payload, &s.signature)
                    .is_err()
        })
        .collect();
    out.push(new);
    let excess = out.len().saturating_sub(MAX_SIGNERS);
    out.drain(..excess);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys() -> (SigningKey, VerifyingKey) {
        let (private, public) = cosign::generate(b"").unwrap();
        (
            cosign::open(private.as_bytes(), b"").unwrap(),
            cosign::read_public(public.as_bytes()).unwrap(),
        )
    }

    #[test]
    fn a_signature_counts_for_its_digest_its_repository_and_trusted_keys_only() {
        let (key, public) = keys();
        let trusted = [public];
        let guard = OciRef::parse("oci://127.0.0.1:5000/acme/guard:1.0").unwrap();
        let hook = OciRef::parse("oci://127.0.0.1:5000/acme/hook:1.0").unwrap();
        let digest = sha256_digest(b"manifest");
        let v = PluginVersion::parse("1.0").unwrap();
        let signed = Signed::sign(&key, payload(&guard, &digest, Some(&v)));
        let ok = verify(&guard, &digest, std::slice::from_ref(&signed), &trusted).unwrap();
        assert_eq!(ok.version, Some(v));
        // The payload is cosign's, byte for byte in its field order.
        let text = String::from_utf8(signed.payload.clone()).unwrap();
        assert_eq!(
            text,
            format!(
                r#"{{"critical":{{"identity":{{"docker-reference":"127.0.0.1:5000/acme/guard"}},"image":{{"docker-manifest-digest":"{digest}"}},"type":"cosign container image signature"}},"optional":{{"dev.hak.plugin.version":"1.0.0"}}}}"#
            )
        );
        // Another repository of the same registry and publisher.
        let err = verify(&hook, &digest, std::slice::from_ref(&signed), &trusted).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("127.0.0.1:5000/acme/guard"), "{text}");
        assert!(text.contains("not 127.0.0.1:5000/acme/hook"), "{text}");
        // Another digest.
        let other = sha256_digest(b"other");
        let err = verify(&guard, &other, std::slice::from_ref(&signed), &trusted).unwrap_err();
        assert!(err.to_string().contains("not this manifest"), "{err}");
        // Another key.
        let (_, stranger) = keys();
        let err = verify(&guard, &digest, std::slice::from_ref(&signed), &[stranger]).unwrap_err();
        assert!(err.to_string().contains("any trusted key"), "{err}");
        // A payload changed after signing.
        let mut changed = signed.clone();
        changed.payload[10] ^= 1;
        assert!(verify(&guard, &digest, &[changed], &trusted).is_err());
        assert!(matches!(
            verify(&guard, &digest, &[], &trusted),
            Err(OciError::Unsigned { .. })
        ));
        assert_eq!(tag_for(&digest), format!("sha256-{}.sig", &digest[7..]));
    }

    #[test]
    fn of_several_valid_signatures_the_highest_version_counts() {
        let (key, public) = keys();
        let r = OciRef::parse("oci://reg.example.com/p:stable").unwrap();
        let d = sha256_digest(b"m");
        let sigs = [
            Signed::sign(&key, payload(&r, &d, PluginVersion::parse("1.2").as_ref())),
            Signed::sign(&key, payload(&r, &d, None)),
            Signed::sign(&key, payload(&r, &d, PluginVersion::parse("1.10").as_ref())),
        ];
        let ok = verify(&r, &d, &sigs, &[public]).unwrap();
        assert_eq!(ok.version, PluginVersion::parse("1.10"));
    }

    #[test]
    fn the_signature_image_is_cosigns_layout() {
        let (key, public) = keys();
        let r = OciRef::parse("oci://reg.example.com/p:1").unwrap();
        let d = sha256_digest(b"m");
        let signed = Signed::sign(&key, payload(&r, &d, None));
        let (manifest, config) = manifest(std::slice::from_ref(&signed));
        let m: serde_json::Value = serde_json::from_slice(&manifest).unwrap();
        assert_eq!(m["config"]["mediaType"], CONFIG_MEDIA_TYPE);
        assert_eq!(m["config"]["digest"], sha256_digest(&config).as_str());
        assert_eq!(m["layers"][0]["mediaType"], LAYER_MEDIA_TYPE);
        assert_eq!(
            m["layers"][0]["digest"],
            sha256_digest(&signed.payload).as_str()
        );
        assert_eq!(
            m["layers"][0]["annotations"][SIGNATURE_ANNOTATION],
            signed.signature.as_str()
        );
        let read = layers(&r, &manifest).unwrap();
        assert_eq!(read.len(), 1);
        assert_eq!(read[0].1, signed.signature);
        // A re-signature of the same payload by the same key replaces the old one.
        let again = Signed::sign(&key, payload(&r, &d, None));
        assert_eq!(
            merged(vec![signed.clone()], again.clone(), &public),
            [again]
        );
    }
}
