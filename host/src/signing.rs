//! Plugin signatures: ed25519 over the component's sha256 digest. `hak plugin keygen` makes a
//! key pair (hex), `hak plugin sign` writes `<file>.sig` (hex), `hak plugin verify` and the
//! registry check it against the manifest's trusted keys. Only keys and signatures live here;
//! when a signature is required is the registry's decision.

use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};
use sha2::{Digest, Sha256};

/// The sha256 digest a signature covers.
pub fn digest(component: &[u8]) -> [u8; 32] {
    Sha256::digest(component).into()
}

fn hex32(text: &str, what: &str) -> Result<[u8; 32], String> {
    let bytes = hex::decode(text.trim()).map_err(|_| format!("{what} is not hex"))?;
    bytes
        .try_into()
        .map_err(|_| format!("{what} must be 32 bytes (64 hex digits)"))
}

/// A trusted public key from its hex text.
pub fn verifying_key(text: &str) -> Result<VerifyingKey, String> {
    VerifyingKey::from_bytes(&hex32(text, "public key")?)
        .map_err(|e| format!("invalid ed25519 public key: {e}"))
}

/// A signing key from its hex text (32-byte seed).
pub fn signing_key(text: &str) -> Result<SigningKey, String> {
    Ok(SigningKey::from_bytes(&hex32(text, "private key")?))
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
pub fn verify(keys: &[VerifyingKey], component: &[u8], signature_hex: &str) -> Result<(), String> {
    let bytes = hex::decode(signature_hex.trim()).map_err(|_| "signature is not hex".to_owned())?;
    let bytes: [u8; 64] = bytes
        .try_into()
        .map_err(|_| "signature must be 64 bytes (128 hex digits)".to_owned())?;
    let signature = Signature::from_bytes(&bytes);
    let digest = digest(component);
    if keys.iter().any(|k| k.verify(&digest, &signature).is_ok()) {
        Ok(())
    } else {
        Err("signature does not verify with any trusted key".into())
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
        assert!(verify(&trusted, b"component", "00").is_err());
    }
}
