//! A manifest's `source = "oci://…"` to verified component bytes. A pinned reference
//! (`@sha256:…`) is read from the cache, else pulled once; a followed tag asks the registry
//! which digest it names now, and falls back to the digest it named last (in the cache) when
//! the registry cannot be reached, so a host starts offline once it has pulled. With
//! `[trust] public_keys` every OCI plugin must carry a cosign signature by one of them for its
//! own repository; without, only pinned references are accepted (the manifest's validation
//! says so).
//!
//! A followed tag never rolls back: a digest whose signed version is below the highest one
//! the tag has resolved to (or that names no version after one that did) is refused, and a
//! host starting while its tag names such a digest starts from the cached release it ran.
//! Pinning a digest is how an operator runs an older release on purpose.

use super::cache::OciCache;
use super::client::{OciClient, Pulled, Verify};
use super::reference::OciRef;
use super::OciError;
use p256::ecdsa::VerifyingKey;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The manifest's `[oci]` section.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OciSettings {
    /// How often `hak serve` asks the registry where each followed tag points (seconds).
    #[serde(default = "default_poll_seconds")]
    pub poll_seconds: u64,
    /// Registries (`host:port`) reached over plain HTTP besides loopback ones.
    #[serde(default)]
    pub plain_http: Vec<String>,
    /// Where pulled plugins are kept (relative to the manifest). Default: `oci` under the
    /// compiled-artifact cache directory (`[engine] cache_dir`, `$HAK_CACHE_DIR`,
    /// `$XDG_CACHE_HOME/hak`, `~/.cache/hak`).
    pub cache_dir: Option<PathBuf>,
    /// How long one registry request may take in all (seconds): a registry that stalls or
    /// drips fails the request then.
    #[serde(default = "default_timeout_seconds")]
    pub timeout_seconds: u64,
}

fn default_poll_seconds() -> u64 {
    30
}

fn default_timeout_seconds() -> u64 {
    super::client::DEFAULT_DEADLINE.as_secs()
}

impl Default for OciSettings {
    fn default() -> Self {
        OciSettings {
            poll_seconds: default_poll_seconds(),
            plain_http: Vec::new(),
            cache_dir: None,
            timeout_seconds: default_timeout_seconds(),
        }
    }
}

impl OciSettings {
    pub fn validate(&self) -> Result<(), String> {
        if !(1..=86_400).contains(&self.poll_seconds) {
            return Err("oci.poll_seconds must be 1 to 86400".into());
        }
        if !(1..=3_600).contains(&self.timeout_seconds) {
            return Err("oci.timeout_seconds must be 1 to 3600".into());
        }
        Ok(())
    }
}

pub struct Resolver {
    client: OciClient,
    cache: OciCache,
    trusted: Vec<VerifyingKey>,
}

impl Resolver {
    /// A resolver with `settings` (relative paths against `base_dir`; without a cache dir,
    /// `oci` under `default_cache`), trusting `trusted`.
    pub fn new(
        settings: &OciSettings,
        base_dir: &Path,
        default_cache: Option<PathBuf>,
        trusted: Vec<VerifyingKey>,
    ) -> Self {
        let dir = match &settings.cache_dir {
            Some(dir) => base_dir.join(dir),
            None => default_cache
                .unwrap_or_else(|| base_dir.join(".hak/cache"))
                .join("oci"),
        };
        Resolver {
            client: OciClient::new(settings.plain_http.clone())
                .with_deadline(Duration::from_secs(settings.timeout_seconds)),
            cache: OciCache::new(dir),
            trusted,
        }
    }

    pub fn cache(&self) -> &OciCache {
        &self.cache
    }

    fn verify(&self) -> Verify<'_> {
        if self.trusted.is_empty() {
            Verify::Unchecked
        } else {
            Verify::Required(&self.trusted)
        }
    }

    /// The plugin `reference` names (from the cache or the registry).
    pub fn resolve(&self, reference: &OciRef) -> Result<Pulled, OciError> {
        if reference.is_followed() && self.trusted.is_empty() {
            return Err(OciError::Unsigned {
                reference: reference.to_string(),
                digest: "a followed tag (name [trust] public_keys, or pin a digest)".into(),
            });
        }
        let digest = match self.client.digest_of(reference) {
            Ok(digest) => digest,
            Err(online) => {
                // The registry is unreachable (or says nothing): the tag's last digest.
                return self.last_resolved(reference, "registry unreachable", online, |e| {
                    OciError::Offline {
                        reference: reference.to_string(),
                        message: e.to_string(),
                    }
                });
            }
        };
        match self.at_digest(reference, &digest) {
            // The tag was moved back: the release this host ran last, if it is cached.
            Err(rollback @ OciError::Rollback { .. }) => {
                self.last_resolved(reference, "not rolled back", rollback, |e| e)
            }
            other => other,
        }
    }

    /// The plugin `reference`'s tag resolved to last (cached), used instead because of
    /// `why`; without one, `why` as the error `or` makes of it.
    fn last_resolved(
        &self,
        reference: &OciRef,
        what: &str,
        why: OciError,
        or: impl FnOnce(OciError) -> OciError,
    ) -> Result<Pulled, OciError> {
        let Some(digest) = self.cache.last_digest(reference) else {
            return Err(or(why));
        };
        match self.cache.load(reference, &digest, self.verify())? {
            Some(pulled) => {
                tracing::warn!("{reference}: {what} ({why}); using the cached {digest}");
                Ok(pulled)
            }
            None => Err(or(why)),
        }
    }

    /// A followed tag must not move below the highest version it has resolved to.
    fn not_a_rollback(&self, reference: &OciRef, pulled: &Pulled) -> Result<(), OciError> {
        if !reference.is_followed() {
            return Ok(());
        }
        let highest = self.cache.highest_version(reference);
        match super::version::rollback(highest.as_ref(), pulled.version()) {
            None => Ok(()),
            Some(reason) => Err(OciError::Rollback {
                reference: reference.to_string(),
                digest: pulled.digest.clone(),
                reason,
            }),
        }
    }

    /// The plugin with manifest `digest` in `reference`'s repository: the cache's, else pulled
    /// (and kept), unless it would roll a followed tag back. A cached copy that no longer
    /// verifies is pulled again.
    fn at_digest(&self, reference: &OciRef, digest: &str) -> Result<Pulled, OciError> {
        let cached = match self.cache.load(reference, digest, self.verify()) {
            Ok(Some(pulled)) => {
                self.not_a_rollback(reference, &pulled)?;
                if reference.is_followed() {
                    self.cache.store(reference, &pulled)?;
                }
                return Ok(pulled);
            }
            Ok(None) => None,
            Err(e) => {
                tracing::warn!("{e}; pulling {reference} again");
                Some(e)
            }
        };
        let pinned = reference.at_digest(digest);
        let pulled = match (self.client.pull(&pinned, self.verify()), cached) {
            (Ok(pulled), _) => pulled,
            // The cached copy was refused and the registry cannot help: say both.
            (Err(e @ OciError::Registry { .. }), Some(OciError::Cache { path, message })) => {
                return Err(OciError::Cache {
                    path,
                    message: format!("{message}; and pulling again failed: {e}"),
                })
            }
            (Err(e), _) => return Err(e),
        };
        self.not_a_rollback(reference, &pulled)?;
        self.cache.store(reference, &pulled)?;
        Ok(pulled)
    }

    /// For a follower: the digest `reference`'s tag names now (a registry that cannot be
    /// reached is an error; the caller keeps what it runs).
    pub fn digest_now(&self, reference: &OciRef) -> Result<String, OciError> {
        self.client.digest_of(reference)
    }

    /// For a follower: the verified plugin with manifest `digest` (cache, else registry); the
    /// tag's last digest becomes `digest` in the cache.
    pub fn fetch(&self, reference: &OciRef, digest: &str) -> Result<Pulled, OciError> {
        self.at_digest(reference, digest)
    }
}
