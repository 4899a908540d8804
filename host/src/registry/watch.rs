//! Watching what plugins come from. The plugins directory: file events (notify, debounced by notify-debouncer-full:
//! nothing loads until a changed file has been quiet for [`QUIET`]) make the registry re-sync
//! the directory. A
//! half-written file therefore either is not looked at yet or fails validation and is
//! reported; the running chain keeps its previous version until the file is complete.
//! Followed OCI tags ([`follow_tags`]): every `[oci] poll_seconds` the registry is asked which
//! digest each tag names; a new one is pulled, verified and swapped in like a changed file. A
//! registry that cannot be reached, or an artifact that does not verify, changes nothing that
//! is loaded (reported once per distinct reason).

use crate::oci::OciError;
use crate::registry::{Registry, SyncReport};
use notify_debouncer_full::notify::{RecommendedWatcher, RecursiveMode};
use notify_debouncer_full::{new_debouncer, DebounceEventResult, Debouncer, RecommendedCache};
use std::collections::HashMap;
use std::sync::{mpsc, Arc, Weak};
use std::time::Duration;

/// How long a file must be quiet before a sync.
pub const QUIET: Duration = Duration::from_millis(150);

/// A running watcher; dropping it stops watching.
pub struct DirWatcher {
    _debouncer: Debouncer<RecommendedWatcher, RecommendedCache>,
}

/// Watch the registry's plugins directory; `on_sync` sees every sync's report. Debouncing is
/// notify-debouncer-full's; a batch of events (or a watch error, which may have lost some)
/// triggers one full re-sync of the directory, on the debouncer's thread.
pub fn watch(
    registry: Arc<Registry>,
    on_sync: impl Fn(&SyncReport) + Send + 'static,
) -> Result<DirWatcher, String> {
    let dir = registry
        .plugins_dir()
        .ok_or("no plugins directory to watch")?
        .to_owned();
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut debouncer = new_debouncer(QUIET, None, move |batch: DebounceEventResult| {
        if batch.as_ref().map_or(true, |events| !events.is_empty()) {
            on_sync(&registry.sync_dir());
        }
    })
    .map_err(|e| format!("cannot watch {}: {e}", dir.display()))?;
    debouncer
        .watch(&dir, RecursiveMode::NonRecursive)
        .map_err(|e| format!("cannot watch {}: {e}", dir.display()))?;
    Ok(DirWatcher {
        _debouncer: debouncer,
    })
}

/// What a tag follower did for one plugin.
#[derive(Debug)]
pub enum FollowEvent {
    /// The tag named a new digest; it was pulled, verified and swapped in.
    Swapped {
        plugin: String,
        reference: String,
        digest: String,
        chain_version: u64,
    },
    /// The tag could not be checked, or what it names was refused; the running version stays.
    Kept {
        plugin: String,
        reference: String,
        reason: String,
    },
}

/// A running tag follower; dropping it stops it.
pub struct TagFollower {
    _stop: mpsc::Sender<()>,
}

/// Follow the manifest plugins whose `source` is an OCI tag, on a thread of its own (`None`
/// when no plugin follows one). `on_event` sees every swap and each new reason a tag was not.
pub fn follow_tags(
    registry: &Arc<Registry>,
    on_event: impl Fn(&FollowEvent) + Send + 'static,
) -> Option<TagFollower> {
    if registry.followed().is_empty() {
        return None;
    }
    let resolver = registry.host().oci()?.clone();
    let interval = Duration::from_secs(registry.host().manifest().oci.poll_seconds);
    let registry: Weak<Registry> = Arc::downgrade(registry);
    let (stop, stopped) = mpsc::channel::<()>();
    std::thread::Builder::new()
        .name("hak-oci-follow".into())
        .spawn(move || {
            // The last reason reported per plugin: a registry that stays down is said once.
            let mut reported: HashMap<String, String> = HashMap::new();
            // The digest refused last per plugin: not pulled or compiled again until the tag
            // moves on.
            let mut refused: HashMap<String, String> = HashMap::new();
            while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(interval) {
                let Some(registry) = registry.upgrade() else {
                    return;
                };
                for (plugin, reference, current) in registry.followed() {
                    let kept = |reason: String| FollowEvent::Kept {
                        plugin: plugin.clone(),
                        reference: reference.to_string(),
                        reason,
                    };
                    let event = match resolver.digest_now(&reference) {
                        Ok(digest) if digest == current => {
                            reported.remove(&plugin);
                            continue;
                        }
                        Ok(digest) if refused.get(&plugin) == Some(&digest) => continue,
                        Ok(digest) => {
                            // A registry that fails or stalls mid-pull is asked again next
                            // time, and so is an artifact with no signature yet (a publisher
                            // pushes the signature after the manifest it signs: a poll between
                            // the two must not refuse the digest for good); an artifact refused
                            // for what it is (a bad signature, a rollback, a digest, a load) is
                            // not.
                            let swapped = match resolver.fetch(&reference, &digest) {
                                Err(
                                    e @ (OciError::Registry { .. }
                                    | OciError::Timeout { .. }
                                    | OciError::Unsigned { .. }),
                                ) => Err((e.to_string(), false)),
                                Err(e) => Err((e.to_string(), true)),
                                Ok(pulled) => registry
                                    .replace_pulled(&plugin, &pulled.component, &pulled.digest)
                                    .map_err(|e| (e.to_string(), true)),
                            };
                            match swapped {
                                Ok(chain_version) => {
                                    refused.remove(&plugin);
                                    FollowEvent::Swapped {
                                        plugin: plugin.clone(),
                                        reference: reference.to_string(),
                                        digest,
                                        chain_version,
                                    }
                                }
                                Err((reason, final_answer)) => {
                                    if final_answer {
                                        refused.insert(plugin.clone(), digest.clone());
                                    }
                                    kept(format!("{digest}: {reason}"))
                                }
                            }
                        }
                        Err(e) => kept(e.to_string()),
                    };
                    if let FollowEvent::Kept { reason, .. } = &event {
                        if reported.get(&plugin) == Some(reason) {
                            continue;
                        }
                        reported.insert(plugin.clone(), reason.clone());
                    } else {
                        reported.remove(&plugin);
                    }
                    on_event(&event);
                }
            }
        })
        .ok()?;
    Some(TagFollower { _stop: stop })
}
