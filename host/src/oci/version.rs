//! A plugin release's version as its publisher signs it (the `dev.hak.plugin.version` claim
//! of the signature payload), and the order a followed tag may move in. Versions are semver
//! (`semver`), read leniently the way tags are written: a leading `v` and missing minor or
//! patch numbers are allowed (`v1.2` is 1.2.0). Whether a move is a rollback is decided here;
//! where the highest version seen is kept is the cache's business.

use std::cmp::Ordering;
use std::fmt;

/// The claim in a signature payload's `optional` map that names the release's version.
pub const CLAIM: &str = "dev.hak.plugin.version";

/// Ordered and compared by semver precedence: build metadata (`+…`) is ignored.
#[derive(Clone, Debug)]
pub struct PluginVersion(semver::Version);

impl PluginVersion {
    /// `text` as a version (`1`, `1.2`, `v1.2.3`, `1.2.3-rc.1`), or `None`.
    pub fn parse(text: &str) -> Option<Self> {
        let text = text.strip_prefix('v').unwrap_or(text);
        let (core, rest) = match text.find(['-', '+']) {
            Some(at) => text.split_at(at),
            None => (text, ""),
        };
        let parts: Vec<&str> = core.split('.').collect();
        if parts.is_empty()
            || parts.len() > 3
            || parts
                .iter()
                .any(|p| p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()))
        {
            return None;
        }
        let mut full = parts.join(".");
        for _ in parts.len()..3 {
            full.push_str(".0");
        }
        full.push_str(rest);
        semver::Version::parse(&full).ok().map(PluginVersion)
    }
}

impl Ord for PluginVersion {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.cmp_precedence(&other.0)
    }
}

impl PartialEq for PluginVersion {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for PluginVersion {}

impl PartialOrd for PluginVersion {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for PluginVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// Why moving a followed tag from `highest` (the highest signed version it has run) to
/// `candidate` would be a rollback, or `None` when it is not. No version is below every
/// version: after a versioned release, an unversioned one is a rollback too.
pub fn rollback(
    highest: Option<&PluginVersion>,
    candidate: Option<&PluginVersion>,
) -> Option<String> {
    match (highest, candidate) {
        (None, _) => None,
        (Some(highest), None) => Some(format!(
            "its signature names no version, and version {highest} has run from this tag"
        )),
        (Some(highest), Some(candidate)) if candidate < highest => Some(format!(
            "version {candidate} is older than {highest}, which has run from this tag"
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(text: &str) -> PluginVersion {
        PluginVersion::parse(text).unwrap_or_else(|| panic!("{text}"))
    }

    #[test]
    fn tags_read_as_versions_and_order_as_semver() {
        assert_eq!(v("1.0").to_string(), "1.0.0");
        assert_eq!(v("v2").to_string(), "2.0.0");
        assert_eq!(v("1.2.3-rc.1").to_string(), "1.2.3-rc.1");
        for not in ["latest", "stable", "", "1.2.3.4", "1..2", "v", "1.x", "-1"] {
            assert_eq!(PluginVersion::parse(not), None, "{not}");
        }
        assert!(v("1.10") > v("1.9"));
        assert!(v("1.0.0-rc.1") < v("1.0.0"));
        assert_eq!(v("1.0.0+a").cmp(&v("1.0.0+b")), Ordering::Equal);
    }

    #[test]
    fn a_tag_may_move_up_or_sideways_never_down_or_to_no_version() {
        assert_eq!(rollback(None, None), None);
        assert_eq!(rollback(None, Some(&v("0.1"))), None);
        assert_eq!(rollback(Some(&v("1.1")), Some(&v("1.1"))), None);
        assert_eq!(rollback(Some(&v("1.1")), Some(&v("1.2"))), None);
        let down = rollback(Some(&v("1.1")), Some(&v("1.0"))).unwrap();
        assert!(down.contains("1.0.0 is older than 1.1.0"), "{down}");
        let none = rollback(Some(&v("1.1")), None).unwrap();
        assert!(none.contains("names no version"), "{none}");
    }
}
