//! `oci://REGISTRY/REPO[:TAG|@sha256:<hex>]` references. The registry is always named (no
//! implicit Docker Hub); a reference without tag or digest means `:latest`; one with a digest
//! is pinned, whatever tag it also names. Plain HTTP is allowed only for a loopback registry
//! or one the operator names.

use super::OciError;
use oci_client::Reference;
use std::fmt;

/// The scheme every reference starts with.
pub const SCHEME: &str = "oci://";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OciRef {
    inner: Reference,
}

impl OciRef {
    pub fn parse(text: &str) -> Result<Self, OciError> {
        let bad = |reason: &str| OciError::BadReference {
            text: text.to_owned(),
            reason: reason.to_owned(),
        };
        let rest = text
            .strip_prefix(SCHEME)
            .ok_or_else(|| bad("it must start with oci://"))?;
        let (host, path) = rest
            .split_once('/')
            .ok_or_else(|| bad("it names no repository (oci://REGISTRY/REPO:TAG)"))?;
        if host.is_empty() || path.is_empty() {
            return Err(bad("it names no registry or no repository"));
        }
        if !(host.contains('.') || host.contains(':') || host == "localhost") {
            return Err(bad(
                "the first part must be a registry host (with a dot or a port, or localhost)",
            ));
        }
        let inner: Reference = rest.parse().map_err(|e| bad(&format!("{e}")))?;
        if let Some(digest) = inner.digest() {
            let hex = digest
                .strip_prefix("sha256:")
                .ok_or_else(|| bad("only sha256 digests are accepted"))?;
            if hex.len() != 64 || !hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
                return Err(bad("a sha256 digest is 64 lowercase hex digits"));
            }
        }
        Ok(OciRef { inner })
    }

    pub(crate) fn inner(&self) -> &Reference {
        &self.inner
    }

    /// `host[:port]` of the registry.
    pub fn registry(&self) -> &str {
        self.inner.registry()
    }

    pub fn repository(&self) -> &str {
        self.inner.repository()
    }

    /// The pinned manifest digest (`sha256:<hex>`), if any.
    pub fn digest(&self) -> Option<&str> {
        self.inner.digest()
    }

    pub fn tag(&self) -> Option<&str> {
        self.inner.tag()
    }

    /// Whether this reference follows a tag (no digest pins it).
    pub fn is_followed(&self) -> bool {
        self.digest().is_none()
    }

    /// The same repository, pinned to `digest`.
    pub fn at_digest(&self, digest: &str) -> OciRef {
        OciRef {
            inner: Reference::with_digest(
                self.registry().to_owned(),
                self.repository().to_owned(),
                digest.to_owned(),
            ),
        }
    }

    /// The same repository, at `tag`.
    pub fn at_tag(&self, tag: &str) -> OciRef {
        OciRef {
            inner: Reference::with_tag(
                self.registry().to_owned(),
                self.repository().to_owned(),
                tag.to_owned(),
            ),
        }
    }

    /// Whether the registry is on this machine (`localhost`, `127.x.y.z`, `[::1]`).
    pub fn is_loopback(&self) -> bool {
        let host = self.registry();
        let host = match host.strip_prefix('[') {
            Some(v6) => v6.split(']').next().unwrap_or_default(),
            None => host.rsplit_once(':').map_or(host, |(h, _)| h),
        };
        host == "localhost"
            || host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    }

    /// Whether this registry is reached over plain HTTP: a loopback one, or one the operator
    /// named (`[oci] plain_http`, `--plain-http`). Everything else is HTTPS.
    pub fn plain_http(&self, named: &[String]) -> bool {
        self.is_loopback() || named.iter().any(|n| n == self.registry())
    }
}

impl fmt::Display for OciRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{SCHEME}{}", self.inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_name_a_registry_and_pin_only_sha256() {
        let r = OciRef::parse("oci://127.0.0.1:5000/policies/max:1.0").unwrap();
        assert_eq!(r.registry(), "127.0.0.1:5000");
        assert_eq!(r.repository(), "policies/max");
        assert_eq!(r.tag(), Some("1.0"));
        assert!(r.is_followed() && r.is_loopback());
        assert_eq!(r.to_string(), "oci://127.0.0.1:5000/policies/max:1.0");
        let hex = "a".repeat(64);
        let pinned = OciRef::parse(&format!("oci://reg.example.com/p@sha256:{hex}")).unwrap();
        assert!(!pinned.is_followed() && !pinned.is_loopback());
        assert!(!pinned.plain_http(&[]));
        assert!(pinned.plain_http(&["reg.example.com".into()]));
        assert_eq!(
            OciRef::parse("oci://localhost/p").unwrap().tag(),
            Some("latest")
        );
        assert!(OciRef::parse("oci://localhost:5000/p:1")
            .unwrap()
            .is_loopback());
        for bad in [
            "127.0.0.1:5000/p:1",
            "oci://p:1",
            "oci://library/p:1",
            "oci://reg.io/",
            "oci://reg.io/p@sha512:00",
            "oci://reg.io/p@sha256:ABC",
        ] {
            assert!(OciRef::parse(bad).is_err(), "{bad}");
        }
    }
}
