//! What an OCI plugin's publisher signs, and where the signature lives. The signed message is
//! the manifest digest under a domain prefix (`hak-plugin-oci-v1:sha256:<hex>`), with the same
//! ed25519 keys as `hak plugin sign`: the manifest names the component layer by its digest, so
//! the signature covers the component, its config and annotations; a re-tag or a swapped layer
//! is another digest and has no signature. The prefix keeps an OCI signature from ever
//! verifying as a file signature (and back).
//!
//! The signature is an OCI artifact of its own, tagged `sha256-<hex>.sig` beside the manifest
//! (registries without a referrers API, such as Distribution 2.8, find it by that tag), with
//! the signed manifest as its `subject` (registries with the referrers API list it there).
//! Its layers are signature documents, one per signer.

use super::artifact::{descriptor, sha256_digest};
use super::OciError;
use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};
use oci_client::manifest::{OciImageManifest, OCI_IMAGE_MEDIA_TYPE};
use serde::{Deserialize, Serialize};

pub const ARTIFACT_TYPE: &str = "application/vnd.hak.plugin.signature.v1+json";
pub const LAYER_MEDIA_TYPE: &str = "application/vnd.hak.plugin.signature.v1+json";
/// The OCI empty config (`{}`), for artifacts whose config says nothing.
pub const EMPTY_MEDIA_TYPE: &str = "application/vnd.oci.empty.v1+json";
pub const EMPTY_CONFIG: &[u8] = b"{}";
/// At most this many signer documents are read, each at most this many bytes.
pub const MAX_SIGNERS: usize = 16;
pub const MAX_DOCUMENT_BYTES: usize = 4 * 1024;

const DOMAIN: &str = "hak-plugin-oci-v1:";

/// The tag a signature of `digest` (`sha256:<hex>`) is stored under.
pub fn tag_for(digest: &str) -> String {
    format!("{}.sig", digest.replacen(':', "-", 1))
}

fn message(digest: &str) -> Vec<u8> {
    format!("{DOMAIN}{digest}").into_bytes()
}

/// One signer's statement: "`public_key` signs manifest `digest`".
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SignatureDocument {
    pub digest: String,
    pub public_key: String,
    pub signature: String,
}

impl SignatureDocument {
    pub fn sign(key: &SigningKey, digest: &str) -> Self {
        SignatureDocument {
            digest: digest.to_owned(),
            public_key: hex::encode(key.verifying_key().as_bytes()),
            signature: hex::encode(key.sign(&message(digest)).to_bytes()),
        }
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("a signature document serializes")
    }

    /// Whether this document is a signature of `digest` by one of `trusted`.
    pub fn verify(&self, digest: &str, trusted: &[VerifyingKey]) -> Result<(), String> {
        if self.digest != digest {
            return Err(format!("it signs {}, not this manifest", self.digest));
        }
        let bytes: [u8; 64] = hex::decode(&self.signature)
            .ok()
            .and_then(|b| b.try_into().ok())
            .ok_or("the signature is not 64 bytes of hex")?;
        let signature = Signature::from_bytes(&bytes);
        let message = message(digest);
        if trusted
            .iter()
            .any(|k| k.verify(&message, &signature).is_ok())
        {
            Ok(())
        } else {
            Err(format!(
                "it does not verify with any trusted key (signed by {})",
                self.public_key
            ))
        }
    }
}

/// The signature artifact's manifest for `documents` about the manifest `subject`
/// (`digest`, `size` bytes): its exact bytes and the layer blobs to push first.
pub fn manifest(subject: &str, subject_size: usize, documents: &[Vec<u8>]) -> Vec<u8> {
    let layers = documents
        .iter()
        .map(|d| descriptor(LAYER_MEDIA_TYPE, &sha256_digest(d), d.len()))
        .collect();
    let manifest = OciImageManifest {
        schema_version: 2,
        media_type: Some(OCI_IMAGE_MEDIA_TYPE.into()),
        config: descriptor(
            EMPTY_MEDIA_TYPE,
            &sha256_digest(EMPTY_CONFIG),
            EMPTY_CONFIG.len(),
        ),
        layers,
        subject: Some(descriptor(OCI_IMAGE_MEDIA_TYPE, subject, subject_size)),
        artifact_type: Some(ARTIFACT_TYPE.into()),
        annotations: None,
    };
    serde_json::to_vec(&manifest).expect("the manifest serializes")
}

/// The signer layers of a signature artifact's manifest (checked: count, sizes, types).
pub fn layers(
    reference: &str,
    manifest: &[u8],
) -> Result<Vec<oci_client::manifest::OciDescriptor>, OciError> {
    let bad = |reason: String| OciError::BadSignature {
        reference: reference.to_owned(),
        digest: String::new(),
        reason,
    };
    let parsed: OciImageManifest = serde_json::from_slice(manifest).map_err(|e| {
        bad(format!(
            "the signature manifest is not an OCI manifest: {e}"
        ))
    })?;
    let layers: Vec<_> = parsed
        .layers
        .into_iter()
        .filter(|l| l.media_type == LAYER_MEDIA_TYPE)
        .collect();
    if layers.len() > MAX_SIGNERS {
        return Err(bad(format!(
            "{} signature documents (at most {MAX_SIGNERS} are read)",
            layers.len()
        )));
    }
    Ok(layers
        .into_iter()
        .filter(|l| l.size >= 0 && l.size as usize <= MAX_DOCUMENT_BYTES)
        .collect())
}

/// Whether one of `documents` (raw bytes) is a valid signature of `digest`: the verifying
/// document's bytes, or why none verifies.
pub fn verify_any(
    reference: &str,
    digest: &str,
    documents: &[Vec<u8>],
    trusted: &[VerifyingKey],
) -> Result<Vec<u8>, OciError> {
    if documents.is_empty() {
        return Err(OciError::Unsigned {
            reference: reference.to_owned(),
            digest: digest.to_owned(),
        });
    }
    let mut reasons = Vec::new();
    for bytes in documents {
        match serde_json::from_slice::<SignatureDocument>(bytes) {
            Ok(doc) => match doc.verify(digest, trusted) {
                Ok(()) => return Ok(bytes.clone()),
                Err(reason) => reasons.push(reason),
            },
            Err(e) => reasons.push(format!("not a signature document: {e}")),
        }
    }
    Err(OciError::BadSignature {
        reference: reference.to_owned(),
        digest: digest.to_owned(),
        reason: reasons.join("; "),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signature_verifies_only_for_its_digest_and_trusted_keys() {
        let (private, public) = crate::signing::generate();
        let key = crate::signing::signing_key(&private).unwrap();
        let trusted = [crate::signing::verifying_key(&public).unwrap()];
        let digest = sha256_digest(b"manifest");
        let doc = SignatureDocument::sign(&key, &digest).to_bytes();
        assert!(verify_any("r", &digest, std::slice::from_ref(&doc), &trusted).is_ok());
        let other = sha256_digest(b"other manifest");
        let err = verify_any("r", &other, std::slice::from_ref(&doc), &trusted).unwrap_err();
        assert!(err.to_string().contains("not this manifest"), "{err}");
        let (_, stranger) = crate::signing::generate();
        let stranger = [crate::signing::verifying_key(&stranger).unwrap()];
        assert!(verify_any("r", &digest, &[doc], &stranger).is_err());
        assert!(matches!(
            verify_any("r", &digest, &[], &trusted),
            Err(OciError::Unsigned { .. })
        ));
        // A file signature (over the sha256 of some bytes) never verifies as an OCI one.
        let file_sig = crate::signing::sign(&key, digest.as_bytes());
        let forged = SignatureDocument {
            digest: digest.clone(),
            public_key: public.clone(),
            signature: file_sig,
        };
        assert!(forged.verify(&digest, &trusted).is_err());
        assert_eq!(tag_for(&digest), format!("sha256-{}.sig", &digest[7..]));
    }
}
