//! Plugins as OCI artifacts: pushed to and pulled from a registry in the CNCF Wasm OCI
//! artifact layout, named `oci://REGISTRY/REPO[:TAG|@sha256:…]`, signed by their publisher in
//! cosign's format (a payload naming the repository, the manifest digest and the release's
//! version, stored as the `sha256-<hex>.sig` image beside it), kept in a content-addressed
//! cache that works offline once pulled.
//!
//! - [`reference`]: `oci://` references and when plain HTTP is allowed.
//! - [`artifact`]: the artifact layout (media types, config, annotations) and its checks.
//! - [`signature`]: what a publisher signs (cosign's simple-signing payload) and the
//!   signature image beside the manifest.
//! - [`version`]: the release version a signature claims, and which moves are rollbacks.
//! - [`client`]: push, pull and sign against a registry (oci-client), with registry auth,
//!   every read bounded in size and every request in time.
//! - [`cache`]: the content-addressed store of pulled artifacts, the tags last followed and
//!   the highest version each has run.
//! - [`resolve`]: a manifest's `source = "oci://…"` to verified component bytes, from the
//!   cache or the registry, never rolled back by a moved tag.
//!
//! Everything a registry sends is untrusted: sizes are checked before and while a byte is
//! read, every request has a deadline, every digest is recomputed here, and a signature is
//! checked (key, digest, repository) before the component is handed to anything that
//! compiles it. Loading the bytes (intake, compile, describe) and swapping
//! them into a running chain are the registry's and the runtime's business, not this one's.

pub mod artifact;
pub mod cache;
pub mod client;
pub mod reference;
pub mod resolve;
pub mod signature;
pub mod version;

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
    #[error("{reference}: refused {digest}, a rollback: {reason} (pin a digest to run an older release)")]
    Rollback {
        reference: String,
        digest: String,
        reason: String,
    },
    #[error("{reference}: {what} took longer than {seconds} s, the deadline of a registry request ([oci] timeout_seconds, --timeout)")]
    Timeout {
        reference: String,
        what: &'static str,
        seconds: u64,
    },
    #[error("{reference}: not in the cache, and the registry cannot be reached: {message}")]
    Offline { reference: String, message: String },
    #[error("OCI cache {path}: {message}")]
    Cache { path: String, message: String },
}
