//! The decision log: one JSON line per tool call (`[decisions]` in the manifest) — when, who
//! (agent, context), which tool, the params (their sha256, the params themselves, or
//! nothing), the answer of every plugin step that ran (manifest name, stage, kind, verdict,
//! enforcing or shadow, code, reason, time), the chain version, the outcome, the transaction
//! id. Lines are built with serde_json, so nothing a plugin or an agent writes (a reason with
//! a newline, a forged `{"outcome":…}`) can break a line or make another.
//!
//! Lines go through a bounded channel to one writer thread (a call never waits on the disk
//! unless the channel is full; then it waits rather than lose a line), which appends, flushes
//! whenever the channel is drained, and rotates by size: `decisions.jsonl` → `.1` → … → `.<keep>`.
//! Rotation is written here, not taken from a crate: tracing-appender rotates only by time,
//! and file-rotate silently drops writes when its file cannot be opened (and panics when its
//! directory cannot be made) — an audit log must report both.
//!
//! The writer also keeps the last [`RECENT_LINES`] lines in memory (seeded from the file's
//! end at open), newest last, for the admin API's `GET /v1/decisions` ([`DecisionLog::recent`]):
//! the file stays the record; nothing is kept for a call that was not written.
//! What must not live here: deciding verdicts or outcomes (the lifecycle does).

use crate::observe::metrics::{Answer, CallOutcome, Metrics, StepKind};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::SystemTime;

/// Lines waiting for the writer at most; past it a call waits for the disk.
const CHANNEL_LINES: usize = 16 * 1024;
/// The last lines kept in memory for the admin API.
pub const RECENT_LINES: usize = 1000;
/// How much of the file's end seeds them at open.
const SEED_BYTES: u64 = 1024 * 1024;

/// The lines the writer handed on, newest last, at most [`RECENT_LINES`].
type Recent = Arc<Mutex<std::collections::VecDeque<String>>>;

/// Which recent calls `GET /v1/decisions` returns: all given fields must match.
#[derive(Clone, Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct DecisionFilter {
    /// The call's outcome: `success`, `blocked`, `error`, `plugin_failure`, `rejected`.
    pub outcome: Option<String>,
    /// A verdict one of its steps gave: `allow`, `block`, `would_block`, `approved`, `denied`…
    pub verdict: Option<String>,
    /// A plugin (manifest name) that answered one of its steps.
    pub plugin: Option<String>,
    pub tool: Option<String>,
    /// The authenticated agent's name.
    pub agent: Option<String>,
    /// At most this many, newest first (default 100, at most 1000).
    pub limit: Option<usize>,
}

impl DecisionFilter {
    fn matches(&self, line: &serde_json::Value) -> bool {
        let is = |field: &str, want: &Option<String>| {
            want.as_deref()
                .is_none_or(|w| line[field].as_str() == Some(w))
        };
        let step = |field: &str, want: &Option<String>| {
            want.as_deref().is_none_or(|w| {
                line["decisions"]
                    .as_array()
                    .is_some_and(|steps| steps.iter().any(|d| d[field].as_str() == Some(w)))
            })
        };
        is("outcome", &self.outcome)
            && is("tool", &self.tool)
            && is("agent", &self.agent)
            && step("verdict", &self.verdict)
            && step("plugin", &self.plugin)
    }
}

/// What the log keeps of a call's params.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ParamsRecord {
    /// `paramsSha256`: the sha256 of the params text as the agent sent it (the default: the
    /// log never holds more than the agent's own call could reveal).
    #[default]
    Digest,
    /// `params`: the params themselves (what `hak replay` needs).
    Full,
    /// Neither.
    None,
}

/// The manifest's `[decisions]` section.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DecisionSettings {
    /// The log file (relative to the manifest's directory).
    pub path: PathBuf,
    #[serde(default)]
    pub params: ParamsRecord,
    /// Rotate when the file passes this size (default 100 MiB; at least 4 KiB).
    #[serde(default = "default_max_bytes")]
    pub max_bytes: u64,
    /// Rotated files kept beside the live one (default 5; 0 = truncate on rotation).
    #[serde(default = "default_keep")]
    pub keep: u32,
}

fn default_max_bytes() -> u64 {
    100 * 1024 * 1024
}

fn default_keep() -> u32 {
    5
}

impl DecisionSettings {
    pub fn validate(&self) -> Result<(), String> {
        if self.path.as_os_str().is_empty() {
            return Err("[decisions] path must not be empty".into());
        }
        if self.max_bytes < 4096 {
            return Err(format!(
                "[decisions] max_bytes = {} is below 4096",
                self.max_bytes
            ));
        }
        if self.keep > 1000 {
            return Err(format!("[decisions] keep = {} is above 1000", self.keep));
        }
        Ok(())
    }
}

/// One plugin step of a call.
#[derive(Clone, Debug)]
pub struct Decision {
    pub plugin: Arc<str>,
    pub stage: &'static str,
    pub kind: StepKind,
    pub answer: Answer,
    /// false for a shadow plugin (`enforce = false`): its answer changed nothing.
    pub enforce: bool,
    pub code: Option<String>,
    /// A block's reason, an error's message or a failure's detail.
    pub reason: Option<String>,
    pub micros: u64,
    /// A needs-approval verdict's outcome: the id, the decision, who decided and how.
    pub approval: Option<crate::approvals::Outcome>,
}

/// One call, as the lifecycle saw it end.
pub struct CallRecord<'a> {
    pub agent: Option<&'a str>,
    pub scope: &'a str,
    pub account_id: Option<String>,
    pub mode: &'static str,
    pub tool: &'static str,
    /// The params text as the agent sent it.
    pub params: &'a str,
    pub chain_version: u64,
    pub decisions: &'a [Decision],
    pub outcome: CallOutcome,
    pub transaction_outcome: &'static str,
    pub transaction_id: Option<&'a str>,
    pub error: Option<&'a str>,
    pub error_code: Option<&'a str>,
    pub micros: u64,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Line<'a> {
    time: String,
    agent: Option<&'a str>,
    context: &'a str,
    account_id: Option<&'a str>,
    mode: &'static str,
    tool: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    params_sha256: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<serde_json::Value>,
    chain_version: u64,
    decisions: Vec<LineDecision<'a>>,
    outcome: &'static str,
    transaction_outcome: &'static str,
    transaction_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error_code: Option<&'a str>,
    micros: u64,
}

#[derive(Serialize)]
struct LineDecision<'a> {
    plugin: &'a str,
    stage: &'static str,
    kind: &'static str,
    verdict: &'static str,
    enforce: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'a str>,
    micros: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    approval: Option<&'a crate::approvals::Outcome>,
}

/// Why the log could not be opened.
#[derive(Debug, thiserror::Error)]
#[error("decision log {path}: {message}")]
pub struct OpenError {
    pub path: String,
    pub message: String,
}

/// An open decision log. Dropping it writes every line sent so far and closes the file.
pub struct DecisionLog {
    params: ParamsRecord,
    recent: Recent,
    tx: Mutex<Option<SyncSender<String>>>,
    writer: Mutex<Option<JoinHandle<()>>>,
    metrics: Arc<Metrics>,
    path: PathBuf,
}

impl DecisionLog {
    /// Open (or create) the log at `settings.path` and start its writer. A file that cannot
    /// be opened is an error here, at start, naming the path.
    pub fn open(settings: &DecisionSettings, metrics: Arc<Metrics>) -> Result<Self, OpenError> {
        let path = settings.path.clone();
        let fail = |message: String| OpenError {
            path: path.display().to_string(),
            message,
        };
        let file = RotatingFile::open(&path, settings.max_bytes, settings.keep)
            .map_err(|e| fail(e.to_string()))?;
        let recent: Recent = Arc::new(Mutex::new(tail_lines(&path, SEED_BYTES, RECENT_LINES)));
        let (tx, rx) = mpsc::sync_channel(CHANNEL_LINES);
        let writer_metrics = metrics.clone();
        let writer_recent = recent.clone();
        let writer = std::thread::Builder::new()
            .name("hak-decisions".into())
            .spawn(move || write_lines(file, rx, &writer_metrics, &writer_recent))
            .map_err(|e| fail(format!("cannot start its writer: {e}")))?;
        Ok(DecisionLog {
            params: settings.params,
            recent,
            tx: Mutex::new(Some(tx)),
            writer: Mutex::new(Some(writer)),
            metrics,
            path,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The recent calls `filter` matches, newest first (each its line as JSON).
    pub fn recent(&self, filter: &DecisionFilter) -> Vec<serde_json::Value> {
        let limit = filter.limit.unwrap_or(100).min(RECENT_LINES);
        let lines: Vec<String> = {
            let recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
            recent.iter().rev().cloned().collect()
        };
        lines
            .iter()
            .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
            .filter(|line| line.get("event").is_none() && filter.matches(line))
            .take(limit)
            .collect()
    }

    /// Record one call.
    pub fn write(&self, record: &CallRecord<'_>) {
        self.send(self.line(record));
    }

    /// Record an event that is not a call (`{"event": "pause", …}`), with its time first.
    /// `GET /v1/decisions` lists calls only; the file keeps both.
    pub fn event(&self, event: serde_json::Value) {
        let mut line = serde_json::Map::new();
        line.insert("time".into(), rfc3339_now().into());
        if let serde_json::Value::Object(fields) = event {
            line.extend(fields);
        }
        self.send(serde_json::Value::Object(line).to_string());
    }

    fn send(&self, line: String) {
        let tx = self
            .tx
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .cloned();
        // A full channel (the disk behind) is waited out, never dropped; the wait leaves a
        // server's worker thread (`hak serve` runs calls on them).
        let sent = tx.is_some_and(|tx| match tx.try_send(line) {
            Ok(()) => true,
            Err(mpsc::TrySendError::Full(line)) => {
                crate::blocking::off_worker(|| tx.send(line)).is_ok()
            }
            Err(mpsc::TrySendError::Disconnected(_)) => false,
        });
        if !sent {
            self.metrics.decision_log_error();
            tracing::error!(
                path = %self.path.display(),
                "decision log writer is gone; a decision line was lost"
            );
        }
    }

    /// The JSON line of `record` (without the newline).
    pub fn line(&self, record: &CallRecord<'_>) -> String {
        let (params_sha256, params) = match self.params {
            ParamsRecord::Digest => (
                Some(hex::encode(Sha256::digest(record.params.trim().as_bytes()))),
                None,
            ),
            ParamsRecord::Full => (
                None,
                Some(
                    serde_json::from_str(record.params)
                        .unwrap_or_else(|_| serde_json::Value::String(record.params.to_owned())),
                ),
            ),
            ParamsRecord::None => (None, None),
        };
        let line = Line {
            time: rfc3339_now(),
            agent: record.agent,
            context: record.scope,
            account_id: record.account_id.as_deref(),
            mode: record.mode,
            tool: record.tool,
            params_sha256,
            params,
            chain_version: record.chain_version,
            decisions: record
                .decisions
                .iter()
                .map(|d| LineDecision {
                    plugin: &d.plugin,
                    stage: d.stage,
                    kind: d.kind.as_str(),
                    verdict: d.answer.as_str(),
                    enforce: d.enforce,
                    code: d.code.as_deref(),
                    reason: d.reason.as_deref(),
                    micros: d.micros,
                    approval: d.approval.as_ref(),
                })
                .collect(),
            outcome: record.outcome.as_str(),
            transaction_outcome: record.transaction_outcome,
            transaction_id: record.transaction_id,
            error: record.error,
            error_code: record.error_code,
            micros: record.micros,
        };
        // A struct of strings, numbers and JSON values always serialises.
        serde_json::to_string(&line).unwrap_or_default()
    }
}

impl Drop for DecisionLog {
    fn drop(&mut self) {
        self.tx.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(writer) = self.writer.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = writer.join();
        }
    }
}

fn rfc3339_now() -> String {
    let now = time::OffsetDateTime::from(SystemTime::now());
    now.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// The last `max_lines` complete lines of the last `max_bytes` of `path` (none when it
/// cannot be read).
fn tail_lines(path: &Path, max_bytes: u64, max_lines: usize) -> std::collections::VecDeque<String> {
    use std::io::{Read, Seek, SeekFrom};
    let mut lines = std::collections::VecDeque::new();
    let Ok(mut file) = File::open(path) else {
        return lines;
    };
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    let start = size.saturating_sub(max_bytes);
    let mut text = Vec::new();
    if file.seek(SeekFrom::Start(start)).is_err() || file.read_to_end(&mut text).is_err() {
        return lines;
    }
    let text = String::from_utf8_lossy(&text);
    let mut all = text.split('\n');
    if start > 0 {
        all.next(); // cut by the window
    }
    for line in all.filter(|l| !l.trim().is_empty()) {
        if lines.len() == max_lines {
            lines.pop_front();
        }
        lines.push_back(line.to_owned());
    }
    lines
}

/// The writer thread: append every line, flush once the channel is drained, report
/// failures once per episode (and count every lost line); keep the recent lines.
fn write_lines(mut file: RotatingFile, rx: Receiver<String>, metrics: &Metrics, recent: &Recent) {
    let mut failing = false;
    while let Ok(first) = rx.recv() {
        let mut written = Vec::new();
        for line in std::iter::once(first).chain(std::iter::from_fn(|| rx.try_recv().ok())) {
            match file.append(&line) {
                Ok(()) => {
                    failing = false;
                    written.push(line);
                }
                Err(e) => {
                    metrics.decision_log_error();
                    if !failing {
                        tracing::error!(
                            path = %file.path.display(),
                            "cannot write the decision log (lines are being lost): {e}"
                        );
                    }
                    failing = true;
                }
            }
        }
        {
            let mut recent = recent.lock().unwrap_or_else(|e| e.into_inner());
            for line in written {
                if recent.len() == RECENT_LINES {
                    recent.pop_front();
                }
                recent.push_back(line);
            }
        }
        if let Err(e) = file.flush() {
            metrics.decision_log_error();
            tracing::error!(path = %file.path.display(), "cannot flush the decision log: {e}");
        }
    }
}

/// An append-only file rotated by size.
struct RotatingFile {
    path: PathBuf,
    out: Option<BufWriter<File>>,
    size: u64,
    max_bytes: u64,
    keep: u32,
}

impl RotatingFile {
    fn open(path: &Path, max_bytes: u64, keep: u32) -> std::io::Result<Self> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let mut file = RotatingFile {
            path: path.to_owned(),
            out: None,
            size: 0,
            max_bytes,
            keep,
        };
        file.reopen()?;
        Ok(file)
    }

    fn reopen(&mut self) -> std::io::Result<()> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)?;
        self.size = file.metadata()?.len();
        self.out = Some(BufWriter::with_capacity(64 * 1024, file));
        Ok(())
    }

    fn append(&mut self, line: &str) -> std::io::Result<()> {
        let len = line.len() as u64 + 1;
        if self.size > 0 && self.size + len > self.max_bytes {
            self.rotate()?;
        }
        if self.out.is_none() {
            self.reopen()?;
        }
        let out = self.out.as_mut().expect("opened above");
        out.write_all(line.as_bytes())?;
        out.write_all(b"\n")?;
        self.size += len;
        Ok(())
    }

    /// `path` → `path.1` → … → `path.<keep>` (the oldest dropped), then a new `path`.
    fn rotate(&mut self) -> std::io::Result<()> {
        if let Some(mut out) = self.out.take() {
            out.flush()?;
        }
        let numbered = |n: u32| {
            let mut p = self.path.clone().into_os_string();
            p.push(format!(".{n}"));
            PathBuf::from(p)
        };
        if self.keep == 0 {
            std::fs::remove_file(&self.path)?;
        } else {
            for n in (1..self.keep).rev() {
                let from = numbered(n);
                if from.exists() {
                    std::fs::rename(&from, numbered(n + 1))?;
                }
            }
            std::fs::rename(&self.path, numbered(1))?;
        }
        self.reopen()
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self.out.as_mut() {
            Some(out) => out.flush(),
            None => Ok(()),
        }
    }
}
