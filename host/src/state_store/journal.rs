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

fn snapshot_path(dir: &Path, generation: u64) -> PathBuf {
    dir.join(format!("snapshot.{generation}"))
}

fn journal_path(dir: &Path, generation: u64) -> PathBuf {
    dir.join(format!("journal.{generation}"))
}

/// The generations of the snapshots and journals in `dir`, and whether an unnumbered
/// `journal` (the earlier layout) is there.
fn generations(dir: &Path) -> std::io::Result<(Vec<u64>, Vec<u64>, bool)> {
    let (mut snapshots, mut journals, mut legacy) = (Vec::new(), Vec::new(), false);
    for entry in std::fs::read_dir(dir)? {
        let name = entry?.file_name();
        let Some(name) = name.to_str() else { continue };
        if name == "journal" {
            legacy = true;
        } else if let Some(g) = name.strip_prefix("snapshot.").and_then(|g| g.parse().ok()) {
            snapshots.push(g);
        } else if let Some(g) = name.strip_prefix("journal.").and_then(|g| g.parse().ok()) {
            journals.push(g);
        }
    }
    snapshots.sort_unstable();
    journals.sort_unstable();
    Ok((snapshots, journals, legacy))
}

/// Replay every record of `path` into `memory`. Every line must be a record; only when
/// `torn_tail_allowed` may the last one, without its newline, be unreadable (it is dropped
/// with a warning).
fn replay_file(path: &Path, memory: &MemoryBackend, torn_tail_allowed: bool) -> Result<(), String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut rest = &bytes[..];
    let mut number = 0usize;
    while !rest.is_empty() {
        number += 1;
        let (line, complete) = match rest.iter().position(|&b| b == b'\n') {
            Some(end) => {
                let line = &rest[..end];
                rest = &rest[end + 1..];
                (line, true)
            }
            None => (std::mem::take(&mut rest), false),
        };
        match serde_json::from_slice::<Record>(line) {
            Ok(record) => replay(memory, record),
            Err(_) if !complete && torn_tail_allowed => {
                tracing::warn!(
                    "{}: dropped a torn last record ({} bytes without a newline: the process stopped mid-write)",
                    path.display(),
                    line.len()
                );
            }
            Err(e) => {
                return Err(format!(
                    "{} line {number}: unreadable state record ({e}){}; state replayed without it would be wrong (a budget could reset), so the store does not open. Restore the directory from a backup, or delete that line if losing what it recorded is acceptable",
                    path.display(),
                    if complete { "" } else { " in a file that is not the newest journal" },
                ));
            }
        }
    }
    Ok(())
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

fn replay(memory: &MemoryBackend, record: Record) {
    match record {
        Record::Set { s, p, k, v } => memory.restore_entry(&pad_of(s, p), &k, &v),
        Record::Delete { s, p, k } => {
            let _ = memory.delete(&pad_of(s, p), &k);
        }
        Record::Reserve {
            id,
            s,
            p,
            k,
            w,
            b,
            a,
            x,
        } => {
            memory.restore_pending(id, pad_of(s, p), k, w, b, a);
            if !x {
                // An earlier hak's record: it wrote no commits, and counted it as spent.
                let _ = memory.settle(&[ReservationId(format!("m:{id}"))], true);
            }
        }
        Record::Bind { ids, tx, u } => {
            let ids: Vec<ReservationId> = ids
                .iter()
                .map(|id| ReservationId(format!("m:{id}")))
                .collect();
            let _ = memory.bind(&ids, &binding_of(tx, u));
        }
        Record::Commit { id } => {
            let _ = memory.settle(&[ReservationId(format!("m:{id}"))], true);
        }
        Record::Release { id } => {
            let _ = memory.settle(&[ReservationId(format!("m:{id}"))], false);
        }
        Record::Bucket { s, p, k, w, b, a } => memory.restore_bucket(pad_of(s, p), k, w, b, a),
    }
}

fn binding_of(tx: Option<String>, until: Option<u64>) -> Binding {
    match tx {
        Some(id) => Binding::Transaction {
            id,
            until_ms: until.unwrap_or(u64::MAX),
        },
        None => Binding::Opaque,
    }
}

/// The `bind` record of `binding` for `ids` (`None`: nothing to record).
fn bind_record(ids: Vec<u64>, binding: &Binding) -> Option<Record> {
    match binding {
        Binding::Unbound => None,
        Binding::Transaction { id, until_ms } => Some(Record::Bind {
            ids,
            tx: Some(id.clone()),
            u: Some(*until_ms),
        }),
        Binding::Opaque => Some(Record::Bind {
            ids,
            tx: None,
            u: None,
        }),
    }
}

/// Write `rows` as `snapshot.<generation>`: aside, synced, renamed into place. Its size.
fn write_snapshot(dir: &Path, generation: u64, rows: Vec<Row>) -> std::io::Result<u64> {
    let tmp = dir.join(format!("snapshot.{generation}.tmp"));
    let mut out = std::io::BufWriter::new(File::create(&tmp)?);
    let mut written = 0u64;
    for row in rows {
        let mut bound = None;
        let record = match row {
            Row::Entry { pad, key, value } => Record::Set {
                s: pad.scope.to_string(),
                p: pad.plugin.to_string(),
                k: key,
                v: value,
            },
            Row::Bucket {
                pad,
                key,
                window,
                bucket,
                amount,
            } => Record::Bucket {
                s: pad.scope.to_string(),
                p: pad.plugin.to_string(),
                k: key,
                w: window,
                b: bucket,
                a: amount,
            },
            Row::Pending {
                id,
                pad,
                key,
                window,
                bucket,
                amount,
                binding,
            } => {
                bound = bind_record(vec![id], &binding);
                Record::Reserve {
                    id,
                    s: pad.scope.to_string(),
                    p: pad.plugin.to_string(),
                    k: key,
                    w: window,
                    b: bucket,
                    a: amount,
                    x: true,
                }
            }
        };
        for record in std::iter::once(&record).chain(&bound) {
            let line = serde_json::to_vec(record)?;
            out.write_all(&line)?;
            out.write_all(b"\n")?;
            written += line.len() as u64 + 1;
        }
    }
    let file = out.into_inner().map_err(|e| e.into_error())?;
    file.sync_all()?;
    std::fs::rename(&tmp, snapshot_path(dir, generation))?;
    Ok(written)
}

fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Delete the snapshots and journals of generations before `generation` (and the earlier
/// layout's `journal`): `snapshot.<generation>` holds all they did.
fn remove_before(dir: &Path, generation: u64) {
    let Ok((snapshots, journals, legacy)) = generations(dir) else {
        return;
    };
    for g in snapshots.into_iter().filter(|&g| g < generation) {
        let _ = std::fs::remove_file(snapshot_path(dir, g));
    }
    for g in journals.into_iter().filter(|&g| g < generation) {
        let _ = std::fs::remove_file(journal_path(dir, g));
    }
    if legacy {
        let _ = std::fs::remove_file(dir.join("journal"));
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
mod tests {
    use super::*;

    fn pad(plugin: &str) -> PadKey {
        PadKey {
            scope: "s".into(),
            plugin: plugin.into(),
        }
    }

    fn fresh(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("hak-journal-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    /// The journal appends go to now.
    fn newest_journal(dir: &Path) -> PathBuf {
        let (_, journals, _) = generations(dir).unwrap();
        journal_path(dir, *journals.last().unwrap())
    }

    fn append_raw(path: &Path, bytes: &[u8]) {
        let mut f = File::options().append(true).open(path).unwrap();
        f.write_all(bytes).unwrap();
    }

    #[test]
    fn state_survives_reopening_and_a_torn_last_line() {
        let dir = fresh("torn");
        let pad = pad("p");
        let now = 1_000_000_000;
        {
            let j = JournalBackend::open(&dir).unwrap();
            j.set(&pad, "k", "v", 100).unwrap();
            let Reserved::Granted { id: a, .. } = j.reserve(&pad, "b", 4, 10, 60, now).unwrap()
            else {
                panic!()
            };
            let Reserved::Granted { id: b, .. } = j.reserve(&pad, "b", 3, 10, 60, now).unwrap()
            else {
                panic!()
            };
            j.settle(&[a], true).unwrap();
            j.settle(&[b], false).unwrap();
            let Reserved::Granted { .. } = j.reserve(&pad, "b", 2, 10, 60, now).unwrap() else {
                panic!()
            };
        }
        // A process killed mid-write leaves half a line.
        append_raw(&newest_journal(&dir), b"{\"t\":\"res\",\"id\":99,\"s\"");
        let j = JournalBackend::open(&dir).unwrap();
        assert_eq!(j.get(&pad, "k").unwrap().as_deref(), Some("v"));
        // 4 committed + 2 unsettled (counted): 6 of 10.
        assert_eq!(j.spent(&pad, "b", 60, now).unwrap(), 6);
        assert_eq!(
            j.reserve(&pad, "b", 5, 10, 60, now).unwrap(),
            Reserved::OverLimit { spent: 6 }
        );
        drop(j);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Three spends of a limit-3 budget, then the journal as a bad line left it.
    fn spent_three_then(
        name: &str,
        damage: impl Fn(&Path),
    ) -> (PathBuf, Result<JournalBackend, String>) {
        let dir = fresh(name);
        let now = 1_000_000_000;
        {
            let j = JournalBackend::open(&dir).unwrap();
            for _ in 0..3 {
                let Reserved::Granted { id, .. } =
                    j.reserve(&pad("p"), "n", 1, 3, 60, now).unwrap()
                else {
                    panic!()
                };
                j.settle(&[id], true).unwrap();
            }
        }
        damage(&newest_journal(&dir));
        let opened = JournalBackend::open(&dir);
        (dir, opened)
    }

    #[test]
    fn an_unreadable_line_anywhere_but_a_torn_tail_refuses_to_open_and_keeps_the_files() {
        // First line bad (what reset a limit-3 budget before: replay stopped there).
        let (dir, opened) = spent_three_then("bad-first", |path| {
            let old = std::fs::read(path).unwrap();
            let mut bad = b"{not a record}\n".to_vec();
            bad.extend(old);
            std::fs::write(path, bad).unwrap();
        });
        let err = opened.err().expect("a bad first line must refuse to open");
        assert!(err.contains("line 1: unreadable state record"), "{err}");
        assert!(err.contains("journal."), "{err}");
        // Nothing was rewritten: opening again refuses again, and the spends are still there.
        assert!(JournalBackend::open(&dir).is_err());
        let text = std::fs::read_to_string(newest_journal(&dir)).unwrap();
        assert_eq!(text.matches("\"res\"").count(), 3, "{text}");
        let _ = std::fs::remove_dir_all(&dir);

        // A complete last line that is not a record.
        let (dir, opened) = spent_three_then("bad-last", |path| append_raw(path, b"garbage\n"));
        let err = opened
            .err()
            .expect("a complete bad last line must refuse to open");
        // Three reservations and their three commits, then the bad line.
        assert!(err.contains("line 7: unreadable state record"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);

        // A bad line in a snapshot (complete by construction) refuses too.
        let (dir, opened) = spent_three_then("bad-snapshot", |_| {});
        drop(opened.unwrap());
        let (snapshots, _, _) = generations(&dir).unwrap();
        append_raw(&snapshot_path(&dir, *snapshots.last().unwrap()), b"{\"t\":");
        let err = JournalBackend::open(&dir)
            .err()
            .expect("a torn snapshot refuses");
        assert!(err.contains("snapshot."), "{err}");
        let _ = std::fs::remove_dir_all(&dir);

        // Only a torn tail is dropped: the three spends stay, the budget stays spent.
        let (dir, opened) =
            spent_three_then("torn-tail", |path| append_raw(path, b"{\"t\":\"rel\""));
        let j = opened.unwrap();
        assert_eq!(
            j.reserve(&pad("p"), "n", 1, 3, 60, 1_000_000_000).unwrap(),
            Reserved::OverLimit { spent: 3 }
        );
        drop(j);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_earlier_layouts_journal_is_replayed_then_replaced() {
        let dir = fresh("legacy");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("journal"),
            "{\"t\":\"set\",\"s\":\"s\",\"p\":\"p\",\"k\":\"k\",\"v\":\"v\"}\n",
        )
        .unwrap();
        let j = JournalBackend::open(&dir).unwrap();
        assert_eq!(j.get(&pad("p"), "k").unwrap().as_deref(), Some("v"));
        assert!(!dir.join("journal").exists());
        drop(j);
        let j = JournalBackend::open(&dir).unwrap();
        assert_eq!(j.get(&pad("p"), "k").unwrap().as_deref(), Some("v"));
        drop(j);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn appends_stay_one_record_however_large_the_state_and_compaction_keeps_everything() {
        let dir = fresh("growth");
        let n = 20_000;
        {
            // A 4 KiB threshold: the old store rewrote the whole state on every append past it.
            let j = JournalBackend::open_tuned(&dir, Quota::default(), 4096).unwrap();
            for i in 0..n {
                j.set(&pad("p"), &format!("key-{i}"), "v", usize::MAX)
                    .unwrap();
            }
            j.finish_compaction();
            let done = j.compaction.done.load(Ordering::Relaxed);
            // The journal grows past the snapshot before it is compacted again: a number of
            // snapshots logarithmic in the appends, not one per append.
            assert!((3..=16).contains(&done), "{done} snapshots for {n} appends");
        }
        let (snapshots, journals, _) = generations(&dir).unwrap();
        assert!(
            snapshots.len() <= 2 && journals.len() <= 2,
            "{snapshots:?} {journals:?}"
        );
        let j = JournalBackend::open(&dir).unwrap();
        for i in [0, n / 2, n - 1] {
            assert_eq!(
                j.get(&pad("p"), &format!("key-{i}")).unwrap().as_deref(),
                Some("v")
            );
        }
        drop(j);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_plugin_past_its_quota_is_refused_alone_and_the_quota_survives_a_restart() {
        let dir = fresh("quota");
        let quota = Quota {
            plugin_bytes: 10_000,
            total_bytes: 1 << 20,
        };
        let scoped = |scope: usize, plugin: &str| PadKey {
            scope: format!("ctx-{scope}").into(),
            plugin: plugin.into(),
        };
        {
            let j = JournalBackend::open_with(&dir, quota).unwrap();
            // Many contexts, each within its own 64 KiB pad: the plugin's quota stops them.
            let mut refused = None;
            'fill: for scope in 0..60 {
                for i in 0..100 {
                    if let Err(e) = j.set(&scoped(scope, "greedy"), &format!("k{i}"), "v", 65_536) {
                        refused = Some(e);
                        break 'fill;
                    }
                }
            }
            let Some(StateError::Full(e)) = refused else {
                panic!("the quota never refused: {refused:?}")
            };
            assert!(
                e.contains("\"greedy\"") && e.contains("quota is 10000 bytes"),
                "{e}"
            );
            assert!(j.usage("greedy").0 <= 10_000);
            // Another plugin still writes and reserves.
            j.set(&scoped(0, "other"), "k", "v", 65_536).unwrap();
            assert!(matches!(
                j.reserve(&scoped(0, "other"), "hbar", 1, 10, 60, 1_000_000)
                    .unwrap(),
                Reserved::Granted { .. }
            ));
        }
        let j = JournalBackend::open_with(&dir, quota).unwrap();
        assert!(matches!(
            j.set(&scoped(99, "greedy"), "k", "v", 65_536),
            Err(StateError::Full(_))
        ));
        drop(j);
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn granted(answer: Reserved) -> ReservationId {
        match answer {
            Reserved::Granted { id, .. } => id,
            other => panic!("not granted: {other:?}"),
        }
    }

    #[test]
    fn reservations_a_stopped_process_left_are_orphans_with_their_binding_until_settled() {
        let dir = fresh("orphans");
        let p = pad("p");
        let now = 1_000_000_000;
        let bound = Binding::Transaction {
            id: "0.0.2-1700000000-000000001".into(),
            until_ms: 1_700_000_120_000,
        };
        {
            let j = JournalBackend::open(&dir).unwrap();
            let mut ids = Vec::new();
            for amount in [1, 2, 4, 8, 16] {
                ids.push(granted(j.reserve(&p, "k", amount, 100, 3600, now).unwrap()));
            }
            j.settle(&ids[0..1], true).unwrap();
            j.settle(&ids[1..2], false).unwrap();
            j.bind(&ids[3..4], &bound).unwrap();
            j.bind(&ids[4..5], &Binding::Opaque).unwrap();
            // A reservation that no longer holds cannot cover a transaction.
            assert!(j.bind(&ids[1..2], &Binding::Opaque).is_err());
            assert_eq!(
                j.orphans().unwrap(),
                vec![],
                "a live process's calls are not orphans"
            );
        } // dropped with three unsettled: the process stopped mid-call
        for reopening in 0..2 {
            // The second time from the snapshot the first one wrote.
            let j = JournalBackend::open(&dir).unwrap();
            let found: Vec<(u64, Binding)> = j
                .orphans()
                .unwrap()
                .into_iter()
                .map(|o| (o.amount, o.binding))
                .collect();
            assert_eq!(
                found,
                vec![
                    (4, Binding::Unbound),
                    (8, bound.clone()),
                    (16, Binding::Opaque)
                ],
                "reopening {reopening}"
            );
            assert_eq!(j.spent(&p, "k", 3600, now).unwrap(), 1 + 4 + 8 + 16);
        }
        {
            let j = JournalBackend::open(&dir).unwrap();
            let orphans: Vec<ReservationId> =
                j.orphans().unwrap().into_iter().map(|o| o.id).collect();
            j.settle(&orphans[0..1], false).unwrap();
            j.settle(&orphans[1..], true).unwrap();
        }
        let j = JournalBackend::open(&dir).unwrap();
        assert_eq!(j.orphans().unwrap(), vec![]);
        assert_eq!(j.spent(&p, "k", 3600, now).unwrap(), 1 + 8 + 16);
        drop(j);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_earlier_haks_reservations_count_as_committed_not_as_orphans() {
        let dir = fresh("legacy-res");
        std::fs::create_dir_all(&dir).unwrap();
        let now = 1_000_000_000u64;
        std::fs::write(
            journal_path(&dir, 1),
            format!(
                "{{\"t\":\"res\",\"id\":7,\"s\":\"s\",\"p\":\"p\",\"k\":\"k\",\"w\":3600,\"b\":{},\"a\":5}}\n",
                bucket(now, 3600)
            ),
        )
        .unwrap();
        let j = JournalBackend::open(&dir).unwrap();
        assert_eq!(j.orphans().unwrap(), vec![]);
        assert_eq!(j.spent(&pad("p"), "k", 3600, now).unwrap(), 5);
        drop(j);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
