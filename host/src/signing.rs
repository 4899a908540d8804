//! Plugin file signatures and the keys an operator trusts. Two kinds of signature: cosign's
//! (ECDSA P-256 over the file's bytes, base64, as `cosign sign-blob --key cosign.key` writes
//! it; [`cosign`] holds cosign's key files and the primitive) and hak's ed25519 (over the
//! component's sha256 digest, hex: `hak plugin keygen` without `--cosign`). `[trust]
//! public_keys` names both ([`TrustedKeys`]): a 64-hex-digit ed25519 key, or a cosign public
//! key as a PEM file's path or its text. OCI signatures are cosign's only (the OCI module).
//! [`SigningError`] says why a key or a signature was refused. Only keys and signatures live
//! here; when a signature is required is the registry's decision.

pub mod cosign;

use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};
use sha2::{Digest, Sha256};
use std::path::Path;

/// The sha256 digest a signature covers.
pub fn digest(component: &[u8]) -> [u8; 32] {
    Sha256::digest(component).into()
}

/// Why a key or a signature was refused (the text names which and why, never the value).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SigningError {
    #[error("{0} is not hex")]
    NotHex(&'static str),
    #[error("{what} must be {bytes} bytes ({} hex digits)", bytes * 2)]
    WrongLength { what: &'static str, bytes: usize },
    #[error("invalid ed25519 public key: {0}")]
    InvalidKey(String),
    #[error("signature does not verify with any trusted key")]
    Untrusted,
    #[error("{0}")]
    Cosign(#[from] cosign::CosignError),
    #[error("{path}: {message}")]
    KeyFile { path: String, message: String },
    #[error("a cosign signature (base64), but no cosign public key is trusted")]
    NoCosignKey,
}

/// A public key file larger than this is not one.
const MAX_KEY_FILE: u64 = 16 * 1024;

/// The keys an operator trusts: hak's ed25519 keys (file signatures in hex) and cosign's
/// ECDSA P-256 keys (file signatures in base64, and every OCI signature).
#[derive(Clone, Debug, Default)]
pub struct TrustedKeys {
    pub ed25519: Vec<VerifyingKey>,
    pub cosign: Vec<p256::ecdsa::VerifyingKey>,
}

impl TrustedKeys {
    /// The keys `entries` name (`[trust] public_keys`, `--public-key`): 64 hex digits are an
    /// ed25519 key; PEM text, or the path of a PEM file (relative to `base_dir`), a cosign
    /// public key. The error names the entry by its position.
    pub fn parse(entries: &[String], base_dir: &Path) -> Result<Self, (usize, SigningError)> {
        let mut keys = TrustedKeys::default();
        for (i, entry) in entries.iter().enumerate() {
            keys.add(entry, base_dir).map_err(|e| (i, e))?;
        }
        Ok(keys)
    }

    fn add(&mut self, entry: &str, base_dir: &Path) -> Result<(), SigningError> {
        let text = entry.trim();
        if text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit()) {
            self.ed25519.push(verifying_key(text)?);
            return Ok(());
        }
        if text.starts_with("-----BEGIN") {
            self.cosign.push(cosign::read_public(text.as_bytes())?);
            return Ok(());
        }
        let path = base_dir.join(text);
        let file_error = |message: String| SigningError::KeyFile {
            path: path.display().to_string(),
            message,
        };
        let meta = std::fs::metadata(&path).map_err(|e| {
            file_error(format!(
                "{e} (a trusted key is 64 hex digits, a cosign.pub PEM file's path, or its text)"
            ))
        })?;
        if !meta.is_file() || meta.len() > MAX_KEY_FILE {
            return Err(file_error(format!(
                "not a key file (a regular file of at most {MAX_KEY_FILE} bytes)"
            )));
        }
        let bytes = std::fs::read(&path).map_err(|e| file_error(e.to_string()))?;
        let key = cosign::read_public(&bytes).map_err(|e| SigningError::KeyFile {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        self.cosign.push(key);
        Ok(())
    }

    pub fn is_empty(&self) -> bool {
        self.ed25519.is_empty() && self.cosign.is_empty()
    }

    /// Whether `signature` (the text of a `.sig` file) signs `bytes` by one of these keys:
    /// 128 hex digits are hak's ed25519 signature, anything else cosign's base64.
    pub fn verify(&self, bytes: &[u8], signature: &str) -> Result<(), SigningError> {
        let text = signature.trim();
        if text.len() == 128 && text.bytes().all(|b| b.is_ascii_hexdigit()) {
            return verify(&self.ed25519, bytes, text);
        }
        if self.cosign.is_empty() {
            return Err(SigningError::NoCosignKey);
        }
        Ok(cosign::verify(&self.cosign, bytes, text)?)
    }
}

fn hex_bytes<const N: usize>(text: &str, what: &'static str) -> Result<[u8; N], SigningError> {
    let bytes = hex::decode(text.trim()).map_err(|_| SigningError::NotHex(what))?;
    bytes
        .try_into()
        .map_err(|_| SigningError::WrongLength { what, bytes: N })
}

/// A trusted public key from its hex text.
pub fn verifying_key(text: &str) -> Result<VerifyingKey, SigningError> {
    VerifyingKey::from_bytes(&hex_bytes(text, "public key")?)
        .map_err(|e| SigningError::InvalidKey(e.to_string()))
}

/// A signing key from its hex text (32-byte seed).
pub fn signing_key(text: &str) -> Result<SigningKey, SigningError> {
    Ok(SigningKey::from_bytes(&hex_bytes(text, "private key")?))
}

/// A fresh key pair: (private hex, public hex).
pub fn generate() -> (String, String) {
    let mut seed = [0u8; 32];
    getrandom(&mut seed);
    let key = SigningKey::from_bytes(&seed);
    (
        hex::encode(seed),
        hex::encode(key.verifying_key().as_bytes()),
    )
}

fn getrandom(buf: &mut [u8]) {
    use rand_core::RngCore;
    rand_core::OsRng.fill_bytes(buf);
}

/// The signature of `component` (hex).
pub fn sign(key: &SigningKey, component: &[u8]) -> String {
    hex::encode(key.sign(&digest(component)).to_bytes())
}

/// Whether `signature_hex` is a valid signature of `component` by one of `keys`.
pub fn verify(
    keys: &[VerifyingKey],
    component: &[u8],
    signature_hex: &str,
) -> Result<(), SigningError> {
    let signature = Signature::from_bytes(&hex_bytes(signature_hex, "signature")?);
    let digest = digest(component);
    if keys.iter().any(|k| k.verify(&digest, &signature).is_ok()) {
        Ok(())
    } else {
        Err(SigningError::Untrusted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_verify_only_for_their_bytes_and_keys() {
        let (private, public) = generate();
        let key = signing_key(&private).unwrap();
        let trusted = [verifying_key(&public).unwrap()];
        let sig = sign(&key, b"component");
        assert!(verify(&trusted, b"component", &sig).is_ok());
        assert!(verify(&trusted, b"component!", &sig).is_err());
        let (_, other) = generate();
        assert!(verify(&[verifying_key(&other).unwrap()], b"component", &sig).is_err());
        assert_eq!(
            verify(&trusted, b"component", "00")
                .unwrap_err()
                .to_string(),
            "signature must be 64 bytes (128 hex digits)"
        );
        assert_eq!(
            verifying_key("zz").unwrap_err(),
            SigningError::NotHex("public key")
        );
        assert_eq!(
            verify(&trusted, b"component!", &sig).unwrap_err(),
            SigningError::Untrusted
        );
    }
}
