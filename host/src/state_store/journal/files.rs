//! The journal's files: where each generation's snapshot and journal live, reading them
//! back strictly (only a torn last line is forgiven), writing a snapshot, and removing older
//! generations. What must not live here: the store's operations.

use super::*;

pub(super) fn snapshot_path(dir: &Path, generation: u64) -> PathBuf {
    dir.join(format!("snapshot.{generation}"))
}

pub(super) fn journal_path(dir: &Path, generation: u64) -> PathBuf {
    dir.join(format!("journal.{generation}"))
}

/// The generations of the snapshots and journals in `dir`, and whether an unnumbered
/// `journal` (the earlier layout) is there.
pub(super) fn generations(dir: &Path) -> std::io::Result<(Vec<u64>, Vec<u64>, bool)> {
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
pub(super) fn replay_file(
    path: &Path,
    memory: &MemoryBackend,
    torn_tail_allowed: bool,
) -> Result<(), String> {
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

pub(super) fn replay(memory: &MemoryBackend, record: Record) {
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

pub(super) fn binding_of(tx: Option<String>, until: Option<u64>) -> Binding {
    match tx {
        Some(id) => Binding::Transaction {
            id,
            until_ms: until.unwrap_or(u64::MAX),
        },
        None => Binding::Opaque,
    }
}

/// The `bind` record of `binding` for `ids` (`None`: nothing to record).
pub(super) fn bind_record(ids: Vec<u64>, binding: &Binding) -> Option<Record> {
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
pub(super) fn write_snapshot(dir: &Path, generation: u64, rows: Vec<Row>) -> std::io::Result<u64> {
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

pub(super) fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Delete the snapshots and journals of generations before `generation` (and the earlier
/// layout's `journal`): `snapshot.<generation>` holds all they did.
pub(super) fn remove_before(dir: &Path, generation: u64) {
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
