//! Keeping the ledger across restarts (`hak emu --state DIR`): after every handled
//! transaction the whole ledger is written crash-safely (temp file, fsync, rename, fsync of
//! the directory), so a restart finds either the old or the new state, never a torn one.

use crate::ledger::Ledger;
use std::io::Write;
use std::path::{Path, PathBuf};

const FILE: &str = "ledger.json";

pub struct StateDir {
    dir: PathBuf,
}

impl StateDir {
    /// Open (creating) `dir` and read the ledger saved there, if any.
    pub fn open(dir: &Path) -> anyhow::Result<(Self, Option<Ledger>)> {
        std::fs::create_dir_all(dir)?;
        let path = dir.join(FILE);
        let ledger =
            match std::fs::read(&path) {
                Ok(bytes) => Some(serde_json::from_slice(&bytes).map_err(|e| {
                    anyhow::anyhow!("{} is not a hak-emu ledger: {e}", path.display())
                })?),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => return Err(e.into()),
            };
        Ok((
            StateDir {
                dir: dir.to_owned(),
            },
            ledger,
        ))
    }

    /// Write the ledger atomically.
    pub fn save(&self, ledger: &Ledger) -> std::io::Result<()> {
        let tmp = self.dir.join(format!("{FILE}.tmp"));
        let mut file = std::fs::File::create(&tmp)?;
        serde_json::to_writer(&mut file, ledger)?;
        file.flush()?;
        file.sync_all()?;
        std::fs::rename(&tmp, self.dir.join(FILE))?;
        std::fs::File::open(&self.dir)?.sync_all()
    }
}
