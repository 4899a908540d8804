//! The embedded durable store, `hak call`'s and `hak serve`'s default: the in-memory store,
//! made durable by an append-only journal under the state directory, owned by one process
//! at a time (an exclusive lock on `<dir>/lock`; another process waits for it, up to 10 s).
//!
//! Why not a database per call: a budget check must be one atomic step with its record, and
//! SQLite needs a write transaction for that (~200 µs a call here, several times the whole
//! 5-policy call). A process that owns the state can decide in memory and only has to make
//! each record reach the OS before it answers: one `write` of one JSON line, then the call
//! goes on. That survives the process being killed (`kill -9`): the kernel has the bytes. A
//! flusher thread `fsync`s the journal every 200 ms when it changed (group commit), so an OS
//! crash or power loss can lose only that much. Records are JSON lines: `set`/`del`
//! (scratchpads), `res` (a reservation made), `bind` (what its call did with its transaction,
//! written before the transaction leaves the host), `com`/`rel` (committed, released), `bkt`
//! (a committed bucket, in snapshots). A reservation replayed without its `com` or `rel` was
//! left by a process that stopped mid-call: it counts as spent and is listed as an orphan
//! until the reconciler settles it by its binding (`crate::reconcile`). A `res` without
//! `"x":true` (written by an earlier hak, which recorded no commits) counts as committed.
//!
//! Files, by generation `g`: `snapshot.g` (the whole state at one moment, written aside,
//! synced and renamed into place, so it is complete or absent) and `journal.g` (the records
//! after it). An append is one write, whatever the store holds: when `journal.g` has grown
//! past 32 MiB and past the last snapshot's size, appends move to `journal.g+1` under the
//! lock, and a background thread writes `snapshot.g+1` from a copy of the state taken at that
//! moment, then deletes generation `g` (amortised, each record is written at most twice).
//! Opening replays the newest snapshot and every journal from its generation on, then writes
//! a fresh snapshot. Replay is strict: only a torn tail (the last journal's last line,
//! without its newline: the process died mid-write) is dropped, with a warning; any other
//! unreadable line refuses to open the store, naming the file and line, because state
//! replayed without it would be wrong (a budget reset). A `journal` file without a number (an
//! earlier hak's layout) is replayed first and then replaced.
//!
//! For several processes sharing state at once on one machine use the `sqlite` store; for
//! several machines, `redis`.

use super::memory::Row;
use super::window::bucket;
use super::{
    Binding, MemoryBackend, Orphan, PadKey, Quota, ReservationId, Reserved, StateBackend,
    StateError,
};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

mod files;
use files::*;

/// Start a new generation when the journal grows past this (and past the last snapshot).
const COMPACT_AT: u64 = 32 << 20;
/// How long to wait for another process to release the state directory.
const LOCK_WAIT: Duration = Duration::from_secs(10);
#[derive(Serialize, Deserialize)]
#[serde(tag = "t")]
enum Record {
    #[serde(rename = "set")]
    Set {
        s: String,
        p: String,
        k: String,
        v: String,
    },
    #[serde(rename = "del")]
    Delete { s: String, p: String, k: String },
    #[serde(rename = "res")]
    Reserve {
        id: u64,
        s: String,
        p: String,
        k: String,
        w: u32,
        b: u64,
        a: u64,
        /// Its settlement is recorded (`com`/`rel`); without it, it counts as committed.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        x: bool,
    },
    /// The transaction of the reservations' call (`tx` as the mirror spells it, valid until
    /// `u` ms), or, without `tx`, a transaction hak cannot follow.
    #[serde(rename = "bind")]
    Bind {
        ids: Vec<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tx: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        u: Option<u64>,
    },
    #[serde(rename = "com")]
    Commit { id: u64 },
    #[serde(rename = "rel")]
    Release { id: u64 },
    #[serde(rename = "bkt")]
    Bucket {
        s: String,
        p: String,
        k: String,
        w: u32,
        b: u64,
        a: u64,
    },
}

pub struct JournalBackend {
    memory: MemoryBackend,
    journal: Mutex<Journal>,
    dir: PathBuf,
    dirty: Arc<AtomicBool>,
    compaction: Arc<Compaction>,
    /// The background compaction, joined before the directory's lock is let go.
    compactor: Mutex<Option<std::thread::JoinHandle<()>>>,
    compact_at: u64,
    /// Held for the life of the backend: the directory's exclusive lock.
    _lock: File,
}

struct Journal {
    file: Arc<File>,
    generation: u64,
    /// Bytes in this generation's journal: where the next record goes.
    len: u64,
    /// A failed write could not be undone: every append is refused (fail closed).
    broken: bool,
}

#[derive(Default)]
struct Compaction {
    running: AtomicBool,
    /// The size of the newest snapshot: a journal shorter than it is not worth compacting.
    snapshot_bytes: AtomicU64,
    /// How many snapshots were written since opening (tests count them).
    done: AtomicU64,
}

fn unavailable(e: std::io::Error) -> StateError {
    StateError::Unavailable(format!("state journal: {e}"))
}

fn pad_of(s: String, p: String) -> PadKey {
    PadKey {
        scope: s.into(),
        plugin: p.into(),
    }
}

fn mem_id(id: &ReservationId) -> Option<u64> {
    id.0.strip_prefix("m:")?.parse().ok()
}

impl JournalBackend {
    /// Own `dir` (waiting up to 10 s for another process), replay it, compact it.
    pub fn open(dir: &Path) -> Result<Self, String> {
        Self::open_with(dir, Quota::default())
    }

    /// [`JournalBackend::open`], keeping `quota`.
    pub fn open_with(dir: &Path, quota: Quota) -> Result<Self, String> {
        Self::open_tuned(dir, quota, COMPACT_AT)
    }

    fn open_tuned(dir: &Path, quota: Quota, compact_at: u64) -> Result<Self, String> {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("state directory {}: {e}", dir.display()))?;
        let lock = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(dir.join("lock"))
            .map_err(|e| format!("{}: {e}", dir.join("lock").display()))?;
        let started = Instant::now();
        loop {
            match lock.try_lock() {
                Ok(()) => break,
                Err(std::fs::TryLockError::WouldBlock) if started.elapsed() < LOCK_WAIT => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(format!(
                        "state directory {} is in use by another hak process (waited {} s); use that process, another state directory, or [state] backend = \"sqlite\" to share one between processes",
                        dir.display(),
                        LOCK_WAIT.as_secs()
                    ))
                }
                Err(std::fs::TryLockError::Error(e)) => {
                    return Err(format!("{}: cannot lock: {e}", dir.join("lock").display()))
                }
            }
        }
        let memory = MemoryBackend::with_quota(quota);
        let (snapshots, journals, legacy) =
            generations(dir).map_err(|e| format!("state directory {}: {e}", dir.display()))?;
        let base = snapshots.last().copied();
        let mut files = Vec::new();
        match base {
            Some(g) => files.push((snapshot_path(dir, g), false)),
            None if legacy => files.push((dir.join("journal"), true)),
            None => {}
        }
        files.extend(
            journals
                .iter()
                .filter(|&&j| base.is_none_or(|g| j >= g))
                .map(|&j| (journal_path(dir, j), true)),
        );
        let newest_journal = files.iter().rposition(|(_, journal)| *journal);
        for (i, (path, _)) in files.iter().enumerate() {
            replay_file(path, &memory, Some(i) == newest_journal)?;
        }
        let generation = snapshots.iter().chain(&journals).max().map_or(1, |g| g + 1);
        let rows = memory.dump();
        let snapshot_bytes = write_snapshot(dir, generation, rows)
            .map_err(|e| format!("{}: {e}", snapshot_path(dir, generation).display()))?;
        let file = File::options()
            .create(true)
            .append(true)
            .open(journal_path(dir, generation))
            .map_err(|e| format!("{}: {e}", journal_path(dir, generation).display()))?;
        sync_dir(dir);
        remove_before(dir, generation);
        let file = Arc::new(file);
        let dirty = Arc::new(AtomicBool::new(false));
        spawn_flusher(Arc::downgrade(&file), dirty.clone());
        let compaction = Arc::new(Compaction::default());
        compaction
            .snapshot_bytes
            .store(snapshot_bytes, Ordering::Relaxed);
        Ok(JournalBackend {
            memory,
            journal: Mutex::new(Journal {
                file,
                generation,
                len: 0,
                broken: false,
            }),
            dir: dir.to_owned(),
            dirty,
            compaction,
            compactor: Mutex::new(None),
            compact_at,
            _lock: lock,
        })
    }

    fn journal(&self) -> std::sync::MutexGuard<'_, Journal> {
        self.journal.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Bytes held by `plugin` over every context, and by the whole store.
    pub fn usage(&self, plugin: &str) -> (usize, usize) {
        self.memory.usage(plugin)
    }

    /// Append one record (one `write`: in the kernel before the call answers). A write that
    /// fails is cut off again, so the journal never holds half a record before a whole one.
    fn append(&self, journal: &mut Journal, record: &Record) -> Result<(), StateError> {
        self.append_all(journal, std::slice::from_ref(record))
    }

    /// Append `records` in one write.
    fn append_all(&self, journal: &mut Journal, records: &[Record]) -> Result<(), StateError> {
        if journal.broken {
            return Err(StateError::Unavailable(
                "state journal: an earlier write failed and could not be undone; restart hak"
                    .into(),
            ));
        }
        let mut line = Vec::with_capacity(96 * records.len());
        for record in records {
            serde_json::to_writer(&mut line, record)
                .map_err(|e| StateError::Unavailable(format!("state journal: {e}")))?;
            line.push(b'\n');
        }
        if let Err(e) = (&*journal.file).write_all(&line) {
            if journal.file.set_len(journal.len).is_err() {
                journal.broken = true;
            }
            return Err(unavailable(e));
        }
        journal.len += line.len() as u64;
        self.dirty.store(true, Ordering::Relaxed);
        let threshold = self
            .compact_at
            .max(self.compaction.snapshot_bytes.load(Ordering::Relaxed));
        if journal.len > threshold && !self.compaction.running.swap(true, Ordering::AcqRel) {
            self.rotate(journal);
        }
        Ok(())
    }

    /// Move appends to the next generation and write its snapshot in the background, from
    /// the state as it is now (the caller holds the journal's lock, so no record is between).
    fn rotate(&self, journal: &mut Journal) {
        let generation = journal.generation + 1;
        let next = match File::options()
            .create(true)
            .append(true)
            .open(journal_path(&self.dir, generation))
        {
            Ok(file) => Arc::new(file),
            Err(e) => {
                tracing::error!("state journal: cannot start generation {generation}: {e}");
                self.compaction.running.store(false, Ordering::Release);
                return;
            }
        };
        let rows = self.memory.dump();
        let old = std::mem::replace(&mut journal.file, next);
        journal.generation = generation;
        journal.len = 0;
        spawn_flusher(Arc::downgrade(&journal.file), self.dirty.clone());
        let (dir, compaction) = (self.dir.clone(), self.compaction.clone());
        let mut slot = self.compactor.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(previous) = slot.take() {
            let _ = previous.join(); // finished: `running` was clear
        }
        let spawned = std::thread::Builder::new()
            .name("hak-state-compact".into())
            .spawn(move || {
                let written = old
                    .sync_data()
                    .and_then(|()| write_snapshot(&dir, generation, rows));
                match written {
                    Ok(bytes) => {
                        sync_dir(&dir);
                        remove_before(&dir, generation);
                        compaction.snapshot_bytes.store(bytes, Ordering::Relaxed);
                        compaction.done.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(e) => tracing::error!(
                        "state journal: snapshot {generation} not written ({e}); the journals before it stay and are replayed"
                    ),
                }
                compaction.running.store(false, Ordering::Release);
            });
        match spawned {
            Ok(handle) => *slot = Some(handle),
            Err(e) => {
                tracing::error!("state journal: cannot start compacting: {e}");
                self.compaction.running.store(false, Ordering::Release);
            }
        }
    }

    /// Wait for a background compaction to finish.
    fn finish_compaction(&self) {
        let handle = self
            .compactor
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(handle) = handle {
            let _ = handle.join();
        }
    }
}

impl Drop for JournalBackend {
    fn drop(&mut self) {
        // The directory's lock goes with `self`: no file may change after it.
        self.finish_compaction();
    }
}

/// Sync the journal every 200 ms when it changed, for as long as it is open.
fn spawn_flusher(file: std::sync::Weak<File>, dirty: Arc<AtomicBool>) {
    let _ = std::thread::Builder::new()
        .name("hak-state-flush".into())
        .spawn(move || loop {
            std::thread::sleep(Duration::from_millis(200));
            let Some(file) = file.upgrade() else { return };
            if dirty.swap(false, Ordering::Relaxed) {
                if let Err(e) = file.sync_data() {
                    tracing::error!("state journal: fsync failed: {e}");
                }
            }
        });
}

impl StateBackend for JournalBackend {
    fn get(&self, pad: &PadKey, key: &str) -> Result<Option<String>, StateError> {
        self.memory.get(pad, key)
    }

    fn set(&self, pad: &PadKey, key: &str, value: &str, cap: usize) -> Result<(), StateError> {
        let mut journal = self.journal();
        self.memory.set(pad, key, value, cap)?;
        let record = Record::Set {
            s: pad.scope.to_string(),
            p: pad.plugin.to_string(),
            k: key.to_owned(),
            v: value.to_owned(),
        };
        self.append(&mut journal, &record)
    }

    fn delete(&self, pad: &PadKey, key: &str) -> Result<(), StateError> {
        let mut journal = self.journal();
        self.memory.delete(pad, key)?;
        let record = Record::Delete {
            s: pad.scope.to_string(),
            p: pad.plugin.to_string(),
            k: key.to_owned(),
        };
        self.append(&mut journal, &record)
    }

    fn reserve(
        &self,
        pad: &PadKey,
        key: &str,
        amount: u64,
        limit: u64,
        window_seconds: u32,
        now_ms: u64,
    ) -> Result<Reserved, StateError> {
        let mut journal = self.journal();
        let answer = self
            .memory
            .reserve(pad, key, amount, limit, window_seconds, now_ms)?;
        if let Reserved::Granted { id, .. } = &answer {
            let record = Record::Reserve {
                id: mem_id(id).unwrap_or_default(),
                s: pad.scope.to_string(),
                p: pad.plugin.to_string(),
                k: key.to_owned(),
                w: window_seconds,
                b: bucket(now_ms, window_seconds),
                a: amount,
                x: true,
            };
            if let Err(e) = self.append(&mut journal, &record) {
                // Not recorded, so not granted: give it back and say so (the policy blocks).
                let _ = self.memory.settle(std::slice::from_ref(id), false);
                return Err(e);
            }
        }
        Ok(answer)
    }

    fn spent(
        &self,
        pad: &PadKey,
        key: &str,
        window_seconds: u32,
        now_ms: u64,
    ) -> Result<u64, StateError> {
        self.memory.spent(pad, key, window_seconds, now_ms)
    }

    fn settle(&self, ids: &[ReservationId], commit: bool) -> Result<(), StateError> {
        let mut journal = self.journal();
        self.memory.settle(ids, commit)?;
        // One write for the call's reservations: a reservation replayed without it is an
        // orphan (its process stopped mid-call), for the reconciler.
        let records: Vec<Record> = ids
            .iter()
            .filter_map(mem_id)
            .map(|id| match commit {
                true => Record::Commit { id },
                false => Record::Release { id },
            })
            .collect();
        if records.is_empty() {
            return Ok(());
        }
        self.append_all(&mut journal, &records)
    }

    fn bind(&self, ids: &[ReservationId], binding: &Binding) -> Result<(), StateError> {
        let mut journal = self.journal();
        self.memory.bind(ids, binding)?;
        match bind_record(ids.iter().filter_map(mem_id).collect(), binding) {
            Some(record) => self.append(&mut journal, &record),
            None => Ok(()),
        }
    }

    fn orphans(&self) -> Result<Vec<Orphan>, StateError> {
        self.memory.orphans()
    }

    fn settle_orphan(&self, orphan: &Orphan, commit: bool) -> Result<bool, StateError> {
        // One owner: nothing else settles it between the check and the record.
        let still = self
            .memory
            .orphans()?
            .iter()
            .any(|o| o.id == orphan.id && o.binding == orphan.binding);
        if still {
            self.settle(std::slice::from_ref(&orphan.id), commit)?;
        }
        Ok(still)
    }

    fn shared(&self) -> bool {
        false
    }

    fn describe(&self) -> String {
        format!("journal {}", self.dir.display())
    }
}

#[cfg(test)]
mod tests;
