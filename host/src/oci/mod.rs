//! Plugins as OCI artifacts: pushed to and pulled from a registry in the CNCF Wasm OCI
//! artifact layout, named `oci://REGISTRY/REPO[:TAG|@sha256:…]`, signed by their publisher
//! (ed25519 over the manifest digest, stored as the `sha256-<hex>.sig` tag beside it), kept in
//! a content-addressed cache that works offline once pulled.
//!
//! - [`reference`]: `oci://` references and when plain HTTP is allowed.
//! - [`artifact`]: the artifact layout (media types, config, annotations) and its checks.
//! - [`signature`]: what a publisher signs and the signature artifact beside the manifest.
//! - [`client`]: push, pull and sign against a registry (oci-client), with registry auth.
//! - [`cache`]: the content-addressed store of pulled artifacts and the tags last followed.
//! - [`resolve`]: a manifest's `source = "oci://…"` to verified component bytes, from the
//!   cache or the registry.
//!
//! Everything a registry sends is untrusted: sizes are checked before a byte is downloaded,
//! every digest is recomputed here, and a signature is checked before the component is handed
//! to anything that compiles it. Loading the bytes (intake, compile, describe) and swapping
//! them into a running chain are the registry's and the runtime's business, not this one's.

pub mod artifact;
pub mod cache;
pub mod client;
pub mod reference;
pub mod resolve;
pub mod signature;

pub use client::{OciClient, Pulled};
pub use reference::OciRef;

/// Why an OCI operation failed. Every variant names the reference it was about.
#[derive(Debug, thiserror::Error)]
pub enum OciError {
    #[error("{text:?}: not an oci:// reference: {reason}")]
    BadReference { text: String, reason: String },
    #[error("{reference}: registry: {message}")]
    Registry { reference: String, message: String },
    #[error("{reference}: not a hak plugin artifact: {reason}")]
    NotAPlugin { reference: String, reason: String },
    #[error("{reference}: {what} of {size} bytes exceeds the {limit}-byte limit; not downloaded")]
    TooLarge {
        reference: String,
        what: &'static str,
        size: u64,
        limit: u64,
    },
    #[error("{reference}: digest mismatch: expected {expected}, got {actual}")]
    DigestMismatch {
        reference: String,
        expected: String,
        actual: String,
    },
    #[error(
        "{reference}: unsigned: no signature of {digest} by a trusted key ([trust] public_keys)"
    )]
    Unsigned { reference: String, digest: String },
    #[error("{reference}: bad signature of {digest}: {reason}")]
    BadSignature {
        reference: String,
        digest: String,
        reason: String,
    },
    #[error("{reference}: not in the cache, and the registry cannot be reached: {message}")]
    Offline { reference: String, message: String },
    #[error("OCI cache {path}: {message}")]
    Cache { path: String, message: String },
}
