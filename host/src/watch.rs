//! Watching the plugins directory: file events (notify, debounced by notify-debouncer-full:
//! nothing loads until a changed file has been quiet for [`QUIET`]) make the registry re-sync
//! the directory. A
//! half-written file therefore either is not looked at yet or fails validation and is
//! reported; the running chain keeps its previous version until the file is complete.

use crate::registry::{Registry, SyncReport};
use notify_debouncer_full::notify::{RecommendedWatcher, RecursiveMode};
use notify_debouncer_full::{new_debouncer, DebounceEventResult, Debouncer, RecommendedCache};
use std::sync::Arc;
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
