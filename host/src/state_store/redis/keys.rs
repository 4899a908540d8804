//! Key names. `<s>`/`<p>`/`<k>` are length-prefixed, so no two tuples share a key.
//!
//! One server (or a primary that Sentinel follows): `hak:pad:<s><p>` (hash key → value) and
//! `…:bytes` (the pad's size); `hak:budgets:<s><p>` (the set of budget keys, capped);
//! `hak:b:<s><p><k>:<window>:b` (committed amounts per bucket) and `…:r` (unsettled
//! reservations, `bucket:amount` by id), both expiring with their window;
//! `hak:reservation-ids` (the id counter); `hak:owned:<owner>` (an owner's unsettled
//! reservations); `hak:usage` / `hak:usage:total` (bytes held per plugin, and in all).
//!
//! A cluster: every key of one (context scope, plugin) carries the hash tag `{T}`, `T` the
//! first 16 hex digits of SHA-256 of `<s><p>` (so a script never crosses slots, braces in a
//! scope cannot shorten the tag, and contexts and plugins spread evenly over the shards):
//! `hak:pad:{T}<s><p>`, `hak:budgets:{T}<s><p>`, `hak:b:{T}<s><p><k>:<window>`,
//! `hak:reservation-ids:{T}`, `hak:owned:{T}:<owner>`. The quota keys share the tag
//! `{usage}` (`hak:{usage}`, `hak:{usage}:total`): one slot, charged on their own. The
//! `alive` key (`hak:alive:<owner>`) is read on its own slot. What must not live here:
//! scripts and connections.

use crate::state_store::PadKey;
use sha2::Digest;

/// How keys are laid out: one server, or a cluster's hash slots.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Keys {
    pub sharded: bool,
}

/// `{` + 16 hex digits + `}`.
const TAG_LEN: usize = 18;

/// `<len>:<text>`: a component of a key no other tuple can produce.
fn part(text: &str) -> String {
    format!("{}:{text}", text.len())
}

fn pad_base(pad: &PadKey) -> String {
    format!("{}{}", part(&pad.scope), part(&pad.plugin))
}

pub(super) fn alive(owner: &str) -> String {
    format!("hak:alive:{owner}")
}

impl Keys {
    /// The pad's hash tag on a cluster (`{…}`), nothing on one server.
    fn tag(&self, pad: &PadKey) -> String {
        if !self.sharded {
            return String::new();
        }
        let digest = sha2::Sha256::digest(pad_base(pad).as_bytes());
        format!("{{{}}}", hex::encode(&digest[..8]))
    }

    /// The scratchpad hash (its size at `…:bytes`).
    pub fn pad(&self, pad: &PadKey) -> String {
        format!("hak:pad:{}{}", self.tag(pad), pad_base(pad))
    }

    /// The set of the pad's budget keys.
    pub fn budgets(&self, pad: &PadKey) -> String {
        format!("hak:budgets:{}{}", self.tag(pad), pad_base(pad))
    }

    /// The base of one budget's keys (`…:b`, `…:r`); reservation ids and owners' lists name it.
    pub fn budget_base(&self, pad: &PadKey, key: &str, window: u32) -> String {
        format!(
            "hak:b:{}{}{}:{window}",
            self.tag(pad),
            pad_base(pad),
            part(key)
        )
    }

    /// A budget key's name in the pad's set.
    pub fn budget_name(key: &str, window: u32) -> String {
        format!("{}:{window}", part(key))
    }

    /// The tag a budget base carries (empty on one server).
    fn tag_of_base<'a>(&self, base: &'a str) -> &'a str {
        if !self.sharded {
            return "";
        }
        base.get(6..6 + TAG_LEN).unwrap_or_default()
    }

    /// The reservation id counter for a budget base.
    pub fn ids(&self, base: &str) -> String {
        if self.sharded {
            format!("hak:reservation-ids:{}", self.tag_of_base(base))
        } else {
            "hak:reservation-ids".into()
        }
    }

    /// `owner`'s list of unsettled reservations that holds one on `base`.
    pub fn owned(&self, owner: &str, base: &str) -> String {
        if self.sharded {
            format!("hak:owned:{}:{owner}", self.tag_of_base(base))
        } else {
            format!("hak:owned:{owner}")
        }
    }

    /// Bytes held per plugin, and in all.
    pub fn usage(&self) -> (&'static str, &'static str) {
        if self.sharded {
            ("hak:{usage}", "hak:{usage}:total")
        } else {
            ("hak:usage", "hak:usage:total")
        }
    }

    /// The owner an owner's list belongs to.
    pub fn owner_of_list(list: &str) -> &str {
        list.rsplit_once(':').map_or(list, |(_, owner)| owner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pad(scope: &str, plugin: &str) -> PadKey {
        PadKey {
            scope: scope.into(),
            plugin: plugin.into(),
        }
    }

    /// What Redis hashes for a key: the text between the first `{` and the next `}`.
    fn hashed(key: &str) -> &str {
        let open = key.find('{').expect("a tag");
        let close = key[open + 1..].find('}').expect("a closed tag") + open + 1;
        &key[open + 1..close]
    }

    #[test]
    fn one_servers_keys_are_as_before() {
        let keys = Keys { sharded: false };
        let p = pad("ctx", "spend");
        assert_eq!(keys.pad(&p), "hak:pad:3:ctx5:spend");
        let base = keys.budget_base(&p, "daily", 86_400);
        assert_eq!(base, "hak:b:3:ctx5:spend5:daily:86400");
        assert_eq!(keys.ids(&base), "hak:reservation-ids");
        assert_eq!(keys.owned("ab", &base), "hak:owned:ab");
    }

    #[test]
    fn a_clusters_keys_of_one_pad_share_one_tag_even_with_braces_in_the_scope() {
        let keys = Keys { sharded: true };
        let p = pad("ctx}{x", "spend");
        let base = keys.budget_base(&p, "daily", 86_400);
        let tag = hashed(&keys.pad(&p)).to_owned();
        assert_eq!(tag.len(), 16);
        for key in [
            keys.budgets(&p),
            format!("{base}:b"),
            format!("{base}:r"),
            keys.ids(&base),
            keys.owned("0123abcd", &base),
        ] {
            assert_eq!(hashed(&key), tag, "{key}");
        }
        assert_eq!(
            Keys::owner_of_list(&keys.owned("0123abcd", &base)),
            "0123abcd"
        );
        assert_ne!(hashed(&keys.pad(&pad("ctx2", "spend"))), tag);
        assert_ne!(hashed(&keys.pad(&pad("ctx}{x", "other"))), tag);
        let (usage, total) = keys.usage();
        assert_eq!(hashed(usage), hashed(total));
    }
}
