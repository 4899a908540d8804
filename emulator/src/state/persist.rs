//! Keeping the ledger across restarts (`hak emu --state DIR`, `network.state_dir`): every
//! transaction that reaches consensus is appended to a journal (one JSON line: its consensus
//! time and signed bytes) before the node answers, so a killed process (`kill -9`) loses no
//! acknowledged transaction; a flusher thread fsyncs the journal every 200 ms when it changed
//! (group commit). Every 10,000 transactions, and at start after replaying, the whole ledger
//! is written as a snapshot (temp file, fsync, rename, fsync of the directory) and the journal
//! emptied. A restart loads the snapshot and replays the journal entries after the snapshot's
//! last consensus time, through the same code that applied them; a torn last line ends the
//! replay. (Rewriting the whole ledger per transaction made throughput fall from thousands to
//! a few transactions per second as the ledger grew.)

use crate::state::ledger::{Ledger, Ts};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const FILE: &str = "ledger.json";
const JOURNAL: &str = "journal";
/// Transactions between snapshots.
const SNAPSHOT_EVERY: u64 = 10_000;

#[derive(Serialize, Deserialize)]
struct Entry {
    s: i64,
    n: u32,
    tx: String,
}

pub struct StateDir {
    dir: PathBuf,
    journal: Mutex<Journal>,
    dirty: Arc<AtomicBool>,
}

struct Journal {
    file: Arc<File>,
    entries: u64,
}

/// A transaction to replay: its consensus time and signed bytes.
pub type Replay = (Ts, Vec<u8>);

impl StateDir {
    /// Open (creating) `dir`: the saved ledger, if any, and the journaled transactions after it.
    pub fn open(dir: &Path) -> anyhow::Result<(Self, Option<Ledger>, Vec<Replay>)> {
        std::fs::create_dir_all(dir)?;
        let path = dir.join(FILE);
        let ledger: Option<Ledger> =
            match std::fs::read(&path) {
                Ok(bytes) => Some(serde_json::from_slice(&bytes).map_err(|e| {
                    anyhow::anyhow!("{} is not a hak-emu ledger: {e}", path.display())
                })?),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => return Err(e.into()),
            };
        let after = ledger.as_ref().map(|l| l.last_consensus);
        let mut replay = Vec::new();
        if let Ok(file) = File::open(dir.join(JOURNAL)) {
            for line in std::io::BufReader::new(file).lines() {
                let Ok(line) = line else { break };
                let Ok(entry) = serde_json::from_str::<Entry>(&line) else {
                    break; // torn by a kill mid-write
                };
                let Ok(bytes) = hex::decode(&entry.tx) else {
                    break;
                };
                let at = Ts {
                    seconds: entry.s,
                    nanos: entry.n,
                };
                if after.is_none_or(|after| at > after) {
                    replay.push((at, bytes));
                }
            }
        }
        let file = Arc::new(
            File::options()
                .create(true)
                .append(true)
                .open(dir.join(JOURNAL))?,
        );
        let dirty = Arc::new(AtomicBool::new(false));
        spawn_flusher(Arc::downgrade(&file), dirty.clone());
        let state = StateDir {
            dir: dir.to_owned(),
            journal: Mutex::new(Journal { file, entries: 0 }),
            dirty,
        };
        Ok((state, ledger, replay))
    }

    fn journal(&self) -> std::sync::MutexGuard<'_, Journal> {
        self.journal.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Journal one transaction (in the kernel when this returns).
    pub fn append(&self, consensus: Ts, signed: &[u8]) -> std::io::Result<()> {
        let entry = Entry {
            s: consensus.seconds,
            n: consensus.nanos,
            tx: hex::encode(signed),
        };
        let mut line = serde_json::to_vec(&entry)?;
        line.push(b'\n');
        let mut journal = self.journal();
        (&*journal.file).write_all(&line)?;
        journal.entries += 1;
        self.dirty.store(true, Ordering::Relaxed);
        Ok(())
    }

    /// Whether enough has been journaled since the last snapshot.
    pub fn wants_snapshot(&self) -> bool {
        self.journal().entries >= SNAPSHOT_EVERY
    }

    /// Write the ledger as the snapshot, then empty the journal (entries up to the snapshot's
    /// last consensus time are skipped on replay, so a crash in between replays nothing twice).
    pub fn snapshot(&self, ledger: &Ledger) -> std::io::Result<()> {
        let mut journal = self.journal();
        let tmp = self.dir.join(format!("{FILE}.tmp"));
        let mut file = std::io::BufWriter::new(File::create(&tmp)?);
        serde_json::to_writer(&mut file, ledger)?;
        let file = file.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        std::fs::rename(&tmp, self.dir.join(FILE))?;
        File::open(&self.dir)?.sync_all()?;
        journal.file.set_len(0)?;
        journal.entries = 0;
        Ok(())
    }
}

/// Sync the journal every 200 ms when it changed, for as long as it is open.
fn spawn_flusher(file: std::sync::Weak<File>, dirty: Arc<AtomicBool>) {
    let _ = std::thread::Builder::new()
        .name("hak-emu-flush".into())
        .spawn(move || loop {
            std::thread::sleep(Duration::from_millis(200));
            let Some(file) = file.upgrade() else { return };
            if dirty.swap(false, Ordering::Relaxed) {
                if let Err(e) = file.sync_data() {
                    tracing::error!("hak-emu: journal fsync failed: {e}");
                }
            }
        });
}
