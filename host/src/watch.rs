//! Watching the plugins directory: file events (notify) are debounced — nothing loads until the
//! directory has been quiet for [`QUIET`] — and then the registry re-syncs the directory. A
//! half-written file therefore either is not looked at yet or fails validation and is
//! reported; the running chain keeps its previous version until the file is complete.

use crate::registry::{Registry, SyncReport};
use notify::{RecursiveMode, Watcher};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

/// How long the directory must be quiet before a sync.
pub const QUIET: Duration = Duration::from_millis(150);

/// A running watcher; dropping it stops watching.
pub struct DirWatcher {
    _watcher: notify::RecommendedWatcher,
}

/// Watch the registry's plugins directory; `on_sync` sees every sync's report.
pub fn watch(
    registry: Arc<Registry>,
    on_sync: impl Fn(&SyncReport) + Send + 'static,
) -> Result<DirWatcher, String> {
    let dir = registry
        .plugins_dir()
        .ok_or("no plugins directory to watch")?
        .to_owned();
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let (tx, rx) = mpsc::channel::<()>();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        if event.is_ok() {
            let _ = tx.send(());
        }
    })
    .map_err(|e| format!("cannot watch {}: {e}", dir.display()))?;
    watcher
        .watch(&dir, RecursiveMode::NonRecursive)
        .map_err(|e| format!("cannot watch {}: {e}", dir.display()))?;
    std::thread::Builder::new()
        .name("hak-watch".into())
        .spawn(move || {
            // Wait for an event, then for quiet; the channel closes when the watcher drops.
            while rx.recv().is_ok() {
                loop {
                    match rx.recv_timeout(QUIET) {
                        Ok(()) => continue,
                        Err(mpsc::RecvTimeoutError::Timeout) => break,
                        Err(mpsc::RecvTimeoutError::Disconnected) => return,
                    }
                }
                on_sync(&registry.sync_dir());
            }
        })
        .map_err(|e| e.to_string())?;
    Ok(DirWatcher { _watcher: watcher })
}
