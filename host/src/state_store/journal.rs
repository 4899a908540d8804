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
//! crash or power loss can lose only that much. Opening replays the journal and rewrites it
//! as a compact snapshot (written aside, synced, renamed over); it is compacted again when it
//! grows past 32 MiB. Records are JSON lines: `set`/`del` (scratchpads), `res`/`rel`
//! (reservations made, released; a commit changes no total, so it is not written and a
//! replayed reservation counts as spent either way), `bkt` (a committed bucket, in snapshots). A torn
//! last line (the process died mid-write) is ignored.
//!
//! For several processes sharing state at once on one machine use the `sqlite` store; for
//! several machines, `redis`.

use super::memory::Row;
use super::window::bucket;
use super::{MemoryBackend, PadKey, ReservationId, Reserved, StateBackend, StateError};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Compact the journal when it grows past this.
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
    /// Held for the life of the backend: the directory's exclusive lock.
    _lock: File,
}

struct Journal {
    file: Arc<File>,
    written: u64,
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
    /// Own `dir` (waiting up to 10 s for another process), replay its journal, compact it.
    pub fn open(dir: &Path) -> Result<Self, String> {
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
        let memory = MemoryBackend::default();
        let path = dir.join("journal");
        if let Ok(file) = File::open(&path) {
            for line in std::io::BufReader::new(file).lines() {
                let Ok(line) = line else { break };
                // A torn last line (killed mid-write) ends the replay.
                let Ok(record) = serde_json::from_str::<Record>(&line) else {
                    break;
                };
                replay(&memory, record);
            }
        }
        let (file, written) =
            compact(dir, &memory).map_err(|e| format!("{}: {e}", path.display()))?;
        let dirty = Arc::new(AtomicBool::new(false));
        spawn_flusher(Arc::downgrade(&file), dirty.clone());
        Ok(JournalBackend {
            memory,
            journal: Mutex::new(Journal { file, written }),
            dir: dir.to_owned(),
            dirty,
            _lock: lock,
        })
    }

    fn journal(&self) -> std::sync::MutexGuard<'_, Journal> {
        self.journal.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Append one record (one `write`: in the kernel before the call answers).
    fn append(&self, journal: &mut Journal, record: &Record) -> Result<(), StateError> {
        let mut line = serde_json::to_vec(record)
            .map_err(|e| StateError::Unavailable(format!("state journal: {e}")))?;
        line.push(b'\n');
        (&*journal.file).write_all(&line).map_err(unavailable)?;
        journal.written += line.len() as u64;
        self.dirty.store(true, Ordering::Relaxed);
        if journal.written > COMPACT_AT {
            let (file, written) = compact(&self.dir, &self.memory).map_err(unavailable)?;
            journal.file = file;
            journal.written = written;
            spawn_flusher(Arc::downgrade(&journal.file), self.dirty.clone());
        }
        Ok(())
    }
}

fn replay(memory: &MemoryBackend, record: Record) {
    match record {
        Record::Set { s, p, k, v } => {
            let _ = memory.set(&pad_of(s, p), &k, &v, usize::MAX);
        }
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
        } => memory.restore_pending(id, pad_of(s, p), k, w, b, a),
        Record::Commit { id } => {
            let _ = memory.settle(&[ReservationId(format!("m:{id}"))], true);
        }
        Record::Release { id } => {
            let _ = memory.settle(&[ReservationId(format!("m:{id}"))], false);
        }
        Record::Bucket { s, p, k, w, b, a } => memory.restore_bucket(pad_of(s, p), k, w, b, a),
    }
}

/// Write the state as a fresh journal beside the old one, sync it, rename it over; the new
/// journal opened for appending, and its size.
fn compact(dir: &Path, memory: &MemoryBackend) -> std::io::Result<(Arc<File>, u64)> {
    let tmp = dir.join("journal.tmp");
    let mut out = std::io::BufWriter::new(File::create(&tmp)?);
    let mut written = 0u64;
    for row in memory.dump() {
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
            } => Record::Reserve {
                id,
                s: pad.scope.to_string(),
                p: pad.plugin.to_string(),
                k: key,
                w: window,
                b: bucket,
                a: amount,
            },
        };
        let line = serde_json::to_vec(&record)?;
        out.write_all(&line)?;
        out.write_all(b"\n")?;
        written += line.len() as u64 + 1;
    }
    let file = out.into_inner().map_err(|e| e.into_error())?;
    file.sync_all()?;
    std::fs::rename(&tmp, dir.join("journal"))?;
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    let file = File::options().append(true).open(dir.join("journal"))?;
    Ok((Arc::new(file), written))
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
        if commit {
            // A committed reservation counts exactly like an unsettled one, so the journal
            // needs no record: after a restart it is counted as reserved (one write per call).
            return Ok(());
        }
        for id in ids.iter().filter_map(mem_id) {
            self.append(&mut journal, &Record::Release { id })?;
        }
        Ok(())
    }

    fn describe(&self) -> String {
        format!("journal {}", self.dir.display())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_survives_reopening_and_a_torn_last_line() {
        let dir = std::env::temp_dir().join(format!("hak-journal-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let pad = PadKey {
            scope: "s".into(),
            plugin: "p".into(),
        };
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
        let mut f = File::options()
            .append(true)
            .open(dir.join("journal"))
            .unwrap();
        f.write_all(b"{\"t\":\"res\",\"id\":99,\"s\"").unwrap();
        drop(f);
        let j = JournalBackend::open(&dir).unwrap();
        assert_eq!(j.get(&pad, "k").unwrap().as_deref(), Some("v"));
        // 4 committed + 2 unsettled (counted): 6 of 10.
        assert_eq!(j.spent(&pad, "b", 60, now).unwrap(), 6);
        assert_eq!(
            j.reserve(&pad, "b", 5, 10, 60, now).unwrap(),
            Reserved::OverLimit { spent: 6 }
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
