//! Plugin signatures: ed25519 over the component's sha256 digest. `hak plugin keygen` makes a
//! key pair (hex), `hak plugin sign` writes `<file>.sig` (hex), `hak plugin verify` and the
//! registry check it against the manifest's trusted keys; [`SigningError`] says why a key or
//! a signature was refused. Only keys and signatures live here; when a signature is required
//! is the registry's decision.

use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};
use sha2::{Digest, Sha256};

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
