//! cosign's keys and signatures: ECDSA P-256 over SHA-256, the signature as base64 ASN.1 DER,
//! the public key as an SPKI PEM (`PUBLIC KEY`, `cosign.pub`), the private key in cosign's
//! encrypted PEM (`cosign.key`: PKCS#8 DER sealed with NaCl secretbox under a 32-byte scrypt
//! key derived from the password, in the JSON envelope of secure-systems-lab's `encrypted`
//! package). These are the files `cosign generate-key-pair` writes and `cosign sign --key` /
//! `cosign verify --key` read; what a signature *says* (the simple-signing payload of an OCI
//! image) is the OCI module's business, not this one's.
//!
//! The cryptography is RustCrypto's (`p256`, `scrypt`, `crypto_secretbox`); the envelope is
//! read and written here: the `sigstore` crate has these types only behind its `sign`/`verify`
//! features, which bring its Fulcio, Rekor and OAuth clients and a second generation of the
//! RustCrypto crates into the host for two dozen lines of JSON.

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use p256::ecdsa::signature::{Signer, Verifier};
use p256::ecdsa::{Signature, SigningKey, VerifyingKey};
use p256::pkcs8::{DecodePrivateKey, DecodePublicKey, EncodePrivateKey, EncodePublicKey};
use serde::{Deserialize, Serialize};

/// The PEM label cosign writes for its private key, and the older one it still reads.
pub const PRIVATE_LABEL: &str = "ENCRYPTED SIGSTORE PRIVATE KEY";
const OLD_PRIVATE_LABEL: &str = "ENCRYPTED COSIGN PRIVATE KEY";
const PUBLIC_LABEL: &str = "PUBLIC KEY";
/// The environment variable cosign reads the private key's password from.
pub const PASSWORD_ENV: &str = "COSIGN_PASSWORD";

/// scrypt's cost as cosign writes it (N = 2^15, r = 8, p = 1); N = 2^16 is read too. Any
/// other parameters are refused: a key file must not make its reader spend gigabytes.
const SCRYPT_LOG_N: u8 = 15;
const SCRYPT_LOG_N_READ: [u8; 2] = [15, 16];
const SCRYPT_R: u32 = 8;
const SCRYPT_P: u32 = 1;
const SALT_BYTES: usize = 32;
const NONCE_BYTES: usize = 24;
/// Key files and signatures larger than this are not cosign's.
const MAX_KEY_FILE: usize = 16 * 1024;

/// Why a cosign key or signature was refused (never the secret itself).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CosignError {
    #[error("not a PEM file ({0})")]
    NotPem(String),
    #[error("a PEM block labelled {found:?}, expected {expected}")]
    WrongLabel {
        found: String,
        expected: &'static str,
    },
    #[error("not cosign's encrypted key: {0}")]
    Envelope(String),
    #[error(
        "cannot decrypt the private key: wrong password (${PASSWORD_ENV}), or the file is damaged"
    )]
    WrongPassword,
    #[error("not an ECDSA P-256 key: {0}")]
    NotP256(String),
    #[error("the signature is not base64 of an ASN.1 ECDSA signature")]
    BadEncoding,
    #[error("the signature does not verify with any trusted key")]
    Untrusted,
}

#[derive(Serialize, Deserialize)]
struct Envelope {
    kdf: Kdf,
    cipher: Cipher,
    #[serde(with = "b64")]
    ciphertext: Vec<u8>,
}

#[derive(Serialize, Deserialize)]
struct Kdf {
    name: String,
    params: ScryptParams,
    #[serde(with = "b64")]
    salt: Vec<u8>,
}

#[derive(Serialize, Deserialize)]
struct ScryptParams {
    #[serde(rename = "N")]
    n: u64,
    r: u32,
    p: u32,
}

#[derive(Serialize, Deserialize)]
struct Cipher {
    name: String,
    #[serde(with = "b64")]
    nonce: Vec<u8>,
}

/// Byte strings as Go's `encoding/json` writes `[]byte` (cosign's JSON): standard base64
/// with padding (`#[serde(with = "crate::signing::cosign::b64")]`).
pub(crate) mod b64 {
    use super::{Engine, BASE64};
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&BASE64.encode(bytes))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(d)?;
        BASE64.decode(text).map_err(serde::de::Error::custom)
    }
}

fn random<const N: usize>() -> [u8; N] {
    use rand_core::RngCore;
    let mut bytes = [0u8; N];
    rand_core::OsRng.fill_bytes(&mut bytes);
    bytes
}

fn box_key(password: &[u8], salt: &[u8], log_n: u8) -> Result<[u8; 32], CosignError> {
    let params = scrypt::Params::new(log_n, SCRYPT_R, SCRYPT_P, 32)
        .map_err(|e| CosignError::Envelope(e.to_string()))?;
    let mut key = [0u8; 32];
    scrypt::scrypt(password, salt, &params, &mut key)
        .map_err(|e| CosignError::Envelope(e.to_string()))?;
    Ok(key)
}

fn secretbox(key: &[u8; 32]) -> crypto_secretbox::XSalsa20Poly1305 {
    use crypto_secretbox::KeyInit;
    crypto_secretbox::XSalsa20Poly1305::new(key.into())
}

fn pem_block(text: &[u8]) -> Result<(String, Vec<u8>), CosignError> {
    if text.len() > MAX_KEY_FILE {
        return Err(CosignError::NotPem(format!(
            "{} bytes; a key file is at most {MAX_KEY_FILE}",
            text.len()
        )));
    }
    let (label, der) =
        pem_rfc7468::decode_vec(text).map_err(|e| CosignError::NotPem(e.to_string()))?;
    Ok((label.to_owned(), der))
}

/// A new key pair: `cosign.key`'s text (sealed with `password`) and `cosign.pub`'s.
pub fn generate(password: &[u8]) -> Result<(String, String), CosignError> {
    let key = SigningKey::from_bytes(&random::<32>().into())
        .map_err(|e| CosignError::NotP256(e.to_string()))?;
    Ok((seal(&key, password)?, public_pem(key.verifying_key())))
}

/// `key` as cosign's encrypted private key file.
pub fn seal(key: &SigningKey, password: &[u8]) -> Result<String, CosignError> {
    use crypto_secretbox::aead::Aead;
    let der = key
        .to_pkcs8_der()
        .map_err(|e| CosignError::NotP256(e.to_string()))?;
    let salt = random::<SALT_BYTES>();
    let nonce = random::<NONCE_BYTES>();
    let ciphertext = secretbox(&box_key(password, &salt, SCRYPT_LOG_N)?)
        .encrypt(&nonce.into(), der.as_bytes())
        .map_err(|e| CosignError::Envelope(e.to_string()))?;
    let envelope = Envelope {
        kdf: Kdf {
            name: "scrypt".into(),
            params: ScryptParams {
                n: 1 << SCRYPT_LOG_N,
                r: SCRYPT_R,
                p: SCRYPT_P,
            },
            salt: salt.to_vec(),
        },
        cipher: Cipher {
            name: "nacl/secretbox".into(),
            nonce: nonce.to_vec(),
        },
        ciphertext,
    };
    let json = serde_json::to_vec(&envelope).expect("the envelope serializes");
    pem_rfc7468::encode_string(PRIVATE_LABEL, pem_rfc7468::LineEnding::LF, &json)
        .map_err(|e| CosignError::Envelope(e.to_string()))
}

/// The private key in cosign's encrypted key file `text`, opened with `password`.
pub fn open(text: &[u8], password: &[u8]) -> Result<SigningKey, CosignError> {
    use crypto_secretbox::aead::Aead;
    let (label, json) = pem_block(text)?;
    if label != PRIVATE_LABEL && label != OLD_PRIVATE_LABEL {
        return Err(CosignError::WrongLabel {
            found: label,
            expected: PRIVATE_LABEL,
        });
    }
    let envelope: Envelope =
        serde_json::from_slice(&json).map_err(|e| CosignError::Envelope(e.to_string()))?;
    let p = &envelope.kdf.params;
    let log_n = SCRYPT_LOG_N_READ
        .into_iter()
        .find(|log_n| p.n == 1 << log_n)
        .filter(|_| p.r == SCRYPT_R && p.p == SCRYPT_P && envelope.kdf.name == "scrypt");
    let Some(log_n) = log_n else {
        return Err(CosignError::Envelope(format!(
            "key derivation {} N={} r={} p={} (cosign writes scrypt N=32768 r=8 p=1)",
            envelope.kdf.name, p.n, p.r, p.p
        )));
    };
    if envelope.cipher.name != "nacl/secretbox" || envelope.cipher.nonce.len() != NONCE_BYTES {
        return Err(CosignError::Envelope(format!(
            "cipher {} with a {}-byte nonce (cosign writes nacl/secretbox, 24 bytes)",
            envelope.cipher.name,
            envelope.cipher.nonce.len()
        )));
    }
    let nonce: [u8; NONCE_BYTES] = envelope.cipher.nonce.try_into().expect("length checked");
    let der = secretbox(&box_key(password, &envelope.kdf.salt, log_n)?)
        .decrypt(&nonce.into(), envelope.ciphertext.as_slice())
        .map_err(|_| CosignError::WrongPassword)?;
    let der = zeroize::Zeroizing::new(der);
    SigningKey::from_pkcs8_der(&der).map_err(|e| CosignError::NotP256(e.to_string()))
}

/// `key` as `cosign.pub`'s text.
pub fn public_pem(key: &VerifyingKey) -> String {
    key.to_public_key_pem(p256::pkcs8::LineEnding::LF)
        .expect("a P-256 public key encodes")
}

/// The public key in `cosign.pub`'s text.
pub fn read_public(text: &[u8]) -> Result<VerifyingKey, CosignError> {
    let (label, der) = pem_block(text)?;
    if label != PUBLIC_LABEL {
        return Err(CosignError::WrongLabel {
            found: label,
            expected: PUBLIC_LABEL,
        });
    }
    VerifyingKey::from_public_key_der(&der).map_err(|e| CosignError::NotP256(e.to_string()))
}

/// A short name for a public key in messages: the first 8 bytes of its SPKI's sha256.
pub fn fingerprint(key: &VerifyingKey) -> String {
    use sha2::{Digest, Sha256};
    let der = key.to_public_key_der().expect("a P-256 public key encodes");
    hex::encode(&Sha256::digest(der.as_bytes())[..8])
}

/// `message` signed with `key`: base64 of the ASN.1 DER signature, as cosign stores it.
pub fn sign(key: &SigningKey, message: &[u8]) -> String {
    let signature: Signature = key.sign(message);
    BASE64.encode(signature.to_der().as_bytes())
}

/// Whether `signature_b64` (cosign's encoding; surrounding whitespace ignored) signs
/// `message` by one of `trusted`.
pub fn verify(
    trusted: &[VerifyingKey],
    message: &[u8],
    signature_b64: &str,
) -> Result<(), CosignError> {
    let der = BASE64
        .decode(signature_b64.trim())
        .map_err(|_| CosignError::BadEncoding)?;
    let signature = Signature::from_der(&der).map_err(|_| CosignError::BadEncoding)?;
    if trusted
        .iter()
        .any(|k| k.verify(message, &signature).is_ok())
    {
        Ok(())
    } else {
        Err(CosignError::Untrusted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_pair_seals_opens_signs_and_verifies() {
        let (private, public) = generate(b"pw").unwrap();
        assert!(private.starts_with("-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----\n"));
        assert!(public.starts_with("-----BEGIN PUBLIC KEY-----\n"));
        let key = open(private.as_bytes(), b"pw").unwrap();
        let trusted = [read_public(public.as_bytes()).unwrap()];
        assert_eq!(key.verifying_key(), &trusted[0]);
        let sig = sign(&key, b"payload");
        assert_eq!(verify(&trusted, b"payload", &sig), Ok(()));
        assert_eq!(
            verify(&trusted, b"payload!", &sig),
            Err(CosignError::Untrusted)
        );
        assert_eq!(
            verify(&trusted, b"payload", "not base64!"),
            Err(CosignError::BadEncoding)
        );
        let (_, stranger) = generate(b"").unwrap();
        let stranger = [read_public(stranger.as_bytes()).unwrap()];
        assert_eq!(
            verify(&stranger, b"payload", &sig),
            Err(CosignError::Untrusted)
        );
        assert_eq!(
            open(private.as_bytes(), b"guess").unwrap_err(),
            CosignError::WrongPassword
        );
        // The labels are not interchangeable.
        assert!(matches!(
            read_public(private.as_bytes()),
            Err(CosignError::WrongLabel { .. })
        ));
        assert!(matches!(
            open(public.as_bytes(), b"pw"),
            Err(CosignError::WrongLabel { .. })
        ));
    }

    #[test]
    fn a_key_file_that_asks_for_a_costly_derivation_is_refused_before_deriving() {
        let (private, _) = generate(b"pw").unwrap();
        let (_, json) = pem_block(private.as_bytes()).unwrap();
        let mut envelope: serde_json::Value = serde_json::from_slice(&json).unwrap();
        envelope["kdf"]["params"]["N"] = (1u64 << 30).into();
        let costly = pem_rfc7468::encode_string(
            PRIVATE_LABEL,
            pem_rfc7468::LineEnding::LF,
            &serde_json::to_vec(&envelope).unwrap(),
        )
        .unwrap();
        let err = open(costly.as_bytes(), b"pw").unwrap_err();
        assert!(err.to_string().contains("N=1073741824"), "{err}");
    }
}
