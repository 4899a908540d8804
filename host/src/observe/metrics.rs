//! The host's Prometheus metrics (prometheus-client), rendered by `GET /metrics` in the
//! OpenMetrics text format: calls by tool, mode and outcome; verdicts and latency by plugin
//! (the operator's manifest name), stage and kind; plugin failures by cause; chain swaps and
//! refused changes; state-store latency by operation ([`TimedBackend`]); and, read when
//! scraped, what the running host holds ([`Snapshot`]: chain version, live instances, idle
//! sessions, evictions).
//!
//! The hot path never allocates or hashes a plugin name here: a session resolves its members'
//! handles once ([`PluginMeters`]) and then only bumps atomics and histogram buckets.
//! What must not live here: deciding what an outcome is (the lifecycle does) or serving HTTP.

use crate::state_store::{PadKey, ReservationId, Reserved, StateBackend, StateError};
use prometheus_client::encoding::text::{encode_eof, encode_registry};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// One session's `calls` counters: each (tool, outcome) it meets is looked up in the family
/// once (a lock and a label hash) and then only bumped.
pub struct CallMeters {
    metrics: Arc<Metrics>,
    mode: &'static str,
    seen: Vec<(&'static str, CallOutcome, Counter)>,
}

impl CallMeters {
    /// Past this many (tool, outcome) pairs a session counts through the family again (a
    /// session calling every tool with every outcome keeps no unbounded list).
    const MAX_SEEN: usize = 32;

    /// Count one call of `tool` that ended `outcome`.
    pub fn count(&mut self, tool: &'static str, outcome: CallOutcome) {
        if let Some((_, _, counter)) = self
            .seen
            .iter()
            .find(|(t, o, _)| *o == outcome && *t == tool)
        {
            counter.inc();
            return;
        }
        let counter = self.metrics.calls.get_or_create_owned(&CallLabels {
            tool,
            mode: self.mode,
            outcome: outcome.as_str(),
        });
        counter.inc();
        if self.seen.len() < Self::MAX_SEEN {
            self.seen.push((tool, outcome, counter));
        }
    }
}

/// How a call ended, as counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallOutcome {
    /// A result came back (executed, bytes returned, or a query answered).
    Success,
    /// A policy blocked it.
    Blocked,
    /// Invalid params, a tool error or a hook/policy that answered an error.
    Error,
    /// A plugin failed (trap, deadline, memory, fuel, invalid output).
    PluginFailure,
    /// The network refused the transaction (precheck or receipt).
    Rejected,
    /// The transaction may have been sent; nobody can tell yet.
    Unknown,
}

impl CallOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            CallOutcome::Success => "success",
            CallOutcome::Blocked => "blocked",
            CallOutcome::Error => "error",
            CallOutcome::PluginFailure => "plugin_failure",
            CallOutcome::Rejected => "rejected",
            CallOutcome::Unknown => "unknown",
        }
    }
}

/// What a plugin answered at one step, as counted (`verdict` label).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    Allow,
    Block,
    /// A shadow plugin (`enforce = false`) would have blocked; the call went on.
    WouldBlock,
    Proceed,
    Replace,
    /// A shadow hook would have replaced the value; it was not applied.
    WouldReplace,
    /// It answered an error of its own.
    Error,
    /// It failed (see `hak_plugin_failures_total` for the cause).
    Failure,
    /// It asked for approval and an approver approved; the call went on.
    Approved,
    /// It asked for approval and got none (denied, timed out, nobody to ask): blocked.
    Denied,
    /// A shadow policy would have asked for approval; the call went on.
    WouldAsk,
}

impl Answer {
    const ALL: [Answer; 11] = [
        Answer::Allow,
        Answer::Block,
        Answer::WouldBlock,
        Answer::Proceed,
        Answer::Replace,
        Answer::WouldReplace,
        Answer::Error,
        Answer::Failure,
        Answer::Approved,
        Answer::Denied,
        Answer::WouldAsk,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Answer::Allow => "allow",
            Answer::Block => "block",
            Answer::WouldBlock => "would_block",
            Answer::Proceed => "proceed",
            Answer::Replace => "replace",
            Answer::WouldReplace => "would_replace",
            Answer::Error => "error",
            Answer::Failure => "failure",
            Answer::Approved => "approved",
            Answer::Denied => "denied",
            Answer::WouldAsk => "would_ask",
        }
    }

    fn index(self) -> usize {
        Answer::ALL.iter().position(|a| *a == self).unwrap_or(0)
    }
}

/// Which export a step called.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepKind {
    Policy,
    Hook,
}

impl StepKind {
    pub fn as_str(self) -> &'static str {
        match self {
            StepKind::Policy => "policy",
            StepKind::Hook => "hook",
        }
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CallLabels {
    tool: &'static str,
    mode: &'static str,
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct VerdictLabels {
    plugin: Arc<str>,
    stage: &'static str,
    verdict: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StepLabels {
    plugin: Arc<str>,
    stage: &'static str,
    kind: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct FailureLabels {
    plugin: Arc<str>,
    cause: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OpLabels {
    op: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ChangeLabels {
    result: &'static str,
}

type Histograms<L> = Family<L, Histogram, fn() -> Histogram>;

/// 1 µs … ~4 s in ×4 steps: plugin calls are microseconds, a deadline is seconds.
fn latency_histogram() -> Histogram {
    Histogram::new(exponential_buckets(1e-6, 4.0, 12))
}

/// Every metric the host keeps. One per host; cheap to share.
pub struct Metrics {
    registry: Registry,
    calls: Family<CallLabels, Counter>,
    verdicts: Family<VerdictLabels, Counter>,
    step_seconds: Histograms<StepLabels>,
    failures: Family<FailureLabels, Counter>,
    state_seconds: Histograms<OpLabels>,
    state_errors: Family<OpLabels, Counter>,
    changes: Family<ChangeLabels, Counter>,
    approvals: Family<DecisionLabels, Counter>,
    kill_switch: Family<SwitchLabels, Counter>,
    decision_log_errors: Counter,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct SwitchLabels {
    action: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DecisionLabels {
    decision: &'static str,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Metrics")
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("hak");
        let calls = Family::<CallLabels, Counter>::default();
        registry.register(
            "calls",
            "Tool calls by tool, agent mode and outcome",
            calls.clone(),
        );
        let verdicts = Family::<VerdictLabels, Counter>::default();
        registry.register(
            "plugin_verdicts",
            "Plugin answers by plugin (manifest name), stage and verdict (approved / denied for needs-approval); shadow plugins count as would_block / would_replace / would_ask",
            verdicts.clone(),
        );
        let step_seconds: Histograms<StepLabels> =
            Family::new_with_constructor(latency_histogram as fn() -> Histogram);
        registry.register(
            "plugin_call_seconds",
            "Time in one plugin call (policy or hook) by plugin, stage and kind",
            step_seconds.clone(),
        );
        let failures = Family::<FailureLabels, Counter>::default();
        registry.register(
            "plugin_failures",
            "Plugin failures by plugin and cause (deadline, memory, fuel, trap, invalid-output, input-too-large, instantiate)",
            failures.clone(),
        );
        let state_seconds: Histograms<OpLabels> =
            Family::new_with_constructor(latency_histogram as fn() -> Histogram);
        registry.register(
            "state_store_seconds",
            "State-store latency by operation",
            state_seconds.clone(),
        );
        let state_errors = Family::<OpLabels, Counter>::default();
        registry.register(
            "state_store_errors",
            "State-store operations that failed (full or unavailable), by operation",
            state_errors.clone(),
        );
        let changes = Family::<ChangeLabels, Counter>::default();
        registry.register(
            "plugin_changes",
            "Plugin changes (hot-swaps) by result: applied or refused",
            changes.clone(),
        );
        let approvals = Family::<DecisionLabels, Counter>::default();
        registry.register(
            "approvals",
            "Needs-approval verdicts by decision: approved, denied, timeout, unavailable",
            approvals.clone(),
        );
        let kill_switch = Family::<SwitchLabels, Counter>::default();
        registry.register(
            "kill_switch",
            "Kill-switch changes seen by this process: paused, resumed (by the admin API here, or read back from a shared state store)",
            kill_switch.clone(),
        );
        let decision_log_errors = Counter::default();
        registry.register(
            "decision_log_errors",
            "Decision-log lines that could not be written",
            decision_log_errors.clone(),
        );
        Metrics {
            registry,
            calls,
            verdicts,
            step_seconds,
            failures,
            state_seconds,
            state_errors,
            changes,
            approvals,
            kill_switch,
            decision_log_errors,
        }
    }

    /// Count a kill-switch change (`paused` or `resumed`).
    pub fn kill_switch(&self, action: &'static str) {
        self.kill_switch
            .get_or_create(&SwitchLabels { action })
            .inc();
    }

    /// Count one needs-approval verdict by what became of it.
    pub fn approval(&self, decision: &'static str) {
        self.approvals
            .get_or_create(&DecisionLabels { decision })
            .inc();
    }

    /// A session's call counters for agent mode `mode`, resolved as it meets each tool and
    /// outcome ([`CallMeters`]).
    pub fn call_meters(self: &Arc<Self>, mode: &'static str) -> CallMeters {
        CallMeters {
            metrics: self.clone(),
            mode,
            seen: Vec::new(),
        }
    }

    /// The handles of one plugin, resolved lazily as its steps are counted.
    pub fn plugin(self: &Arc<Self>, name: &str) -> PluginMeters {
        PluginMeters {
            metrics: self.clone(),
            name: Arc::from(name),
            verdicts: Default::default(),
            seconds: Default::default(),
        }
    }

    /// Count a plugin change: applied (a new chain version) or refused.
    pub fn plugin_change(&self, applied: bool) {
        let result = if applied { "applied" } else { "refused" };
        self.changes.get_or_create(&ChangeLabels { result }).inc();
    }

    pub fn decision_log_error(&self) {
        self.decision_log_errors.inc();
    }

    fn state_op(&self, op: &'static str, started: Instant, ok: bool) {
        self.state_seconds
            .get_or_create(&OpLabels { op })
            .observe(started.elapsed().as_secs_f64());
        if !ok {
            self.state_errors.get_or_create(&OpLabels { op }).inc();
        }
    }

    /// The OpenMetrics text of every metric, with `snapshot`'s values as gauges and counters.
    pub fn render(&self, snapshot: &Snapshot) -> String {
        let mut now = Registry::with_prefix("hak");
        let gauge = |registry: &mut Registry, name: &str, help: &str, value: u64| {
            let g = Gauge::<i64>::default();
            g.set(i64::try_from(value).unwrap_or(i64::MAX));
            registry.register(name, help, g);
        };
        let counter = |registry: &mut Registry, name: &str, help: &str, value: u64| {
            let c = Counter::<u64>::default();
            c.inc_by(value);
            registry.register(name, help, c);
        };
        gauge(
            &mut now,
            "chain_version",
            "The running plugin chain's version (1 at start, +1 per swap)",
            snapshot.chain_version,
        );
        gauge(
            &mut now,
            "chain_plugins",
            "Plugins in the running chain (enforcing and shadow)",
            snapshot.chain_plugins,
        );
        gauge(
            &mut now,
            "instances_live",
            "Plugin instances alive (in sessions, idle or serving a call)",
            snapshot.instances_live,
        );
        counter(
            &mut now,
            "instances_created",
            "Plugin instances created (at load, per context, after failures)",
            snapshot.instances_created,
        );
        gauge(
            &mut now,
            "sessions_idle",
            "Idle agent-context sessions kept for reuse",
            snapshot.sessions_idle,
        );
        counter(
            &mut now,
            "sessions_evicted",
            "Idle sessions dropped to make room or for being idle too long",
            snapshot.sessions_evicted,
        );
        gauge(
            &mut now,
            "paused",
            "1 while the kill switch is on (tools that change the ledger are blocked), else 0",
            u64::from(snapshot.paused),
        );
        let mut out = String::with_capacity(16 * 1024);
        // Writing to a String cannot fail.
        let _ = encode_registry(&mut out, &self.registry);
        let _ = encode_registry(&mut out, &now);
        let _ = encode_eof(&mut out);
        out
    }
}

/// What the running host holds when scraped.
#[derive(Clone, Copy, Debug, Default)]
pub struct Snapshot {
    pub chain_version: u64,
    pub chain_plugins: u64,
    pub instances_live: u64,
    pub instances_created: u64,
    pub sessions_idle: u64,
    pub sessions_evicted: u64,
    pub paused: bool,
}

/// One plugin's metric handles, as one session uses them: resolved on first use, then plain
/// atomic updates.
pub struct PluginMeters {
    metrics: Arc<Metrics>,
    name: Arc<str>,
    verdicts: [[OnceLock<Counter>; Answer::ALL.len()]; 4],
    seconds: [[OnceLock<Histogram>; 2]; 4],
}

impl PluginMeters {
    /// The plugin's name (the manifest entry's).
    pub fn name(&self) -> &Arc<str> {
        &self.name
    }

    /// Count one step: its answer and how long it took. `stage` is the stage's index and name.
    pub fn step(
        &self,
        stage: (usize, &'static str),
        kind: StepKind,
        answer: Answer,
        took: Duration,
    ) {
        let (index, stage_name) = stage;
        let Some(row) = self.verdicts.get(index) else {
            return;
        };
        row[answer.index()]
            .get_or_init(|| {
                self.metrics.verdicts.get_or_create_owned(&VerdictLabels {
                    plugin: self.name.clone(),
                    stage: stage_name,
                    verdict: answer.as_str(),
                })
            })
            .inc();
        self.seconds[index][kind as usize]
            .get_or_init(|| {
                self.metrics.step_seconds.get_or_create_owned(&StepLabels {
                    plugin: self.name.clone(),
                    stage: stage_name,
                    kind: kind.as_str(),
                })
            })
            .observe(took.as_secs_f64());
    }

    /// Count a failure by its cause.
    pub fn failure(&self, cause: &'static str) {
        self.metrics
            .failures
            .get_or_create(&FailureLabels {
                plugin: self.name.clone(),
                cause,
            })
            .inc();
    }
}

/// A state store whose every operation is timed into `hak_state_store_seconds`.
pub struct TimedBackend {
    inner: Arc<dyn StateBackend>,
    metrics: Arc<Metrics>,
}

impl TimedBackend {
    pub fn new(inner: Arc<dyn StateBackend>, metrics: Arc<Metrics>) -> Self {
        TimedBackend { inner, metrics }
    }

    fn timed<T>(
        &self,
        op: &'static str,
        run: impl FnOnce() -> Result<T, StateError>,
    ) -> Result<T, StateError> {
        let started = Instant::now();
        let out = run();
        self.metrics.state_op(op, started, out.is_ok());
        out
    }
}

impl StateBackend for TimedBackend {
    fn get(&self, pad: &PadKey, key: &str) -> Result<Option<String>, StateError> {
        self.timed("get", || self.inner.get(pad, key))
    }

    fn set(&self, pad: &PadKey, key: &str, value: &str, cap: usize) -> Result<(), StateError> {
        self.timed("set", || self.inner.set(pad, key, value, cap))
    }

    fn delete(&self, pad: &PadKey, key: &str) -> Result<(), StateError> {
        self.timed("delete", || self.inner.delete(pad, key))
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
        self.timed("reserve", || {
            self.inner
                .reserve(pad, key, amount, limit, window_seconds, now_ms)
        })
    }

    fn spent(
        &self,
        pad: &PadKey,
        key: &str,
        window_seconds: u32,
        now_ms: u64,
    ) -> Result<u64, StateError> {
        self.timed("spent", || {
            self.inner.spent(pad, key, window_seconds, now_ms)
        })
    }

    fn settle(&self, ids: &[ReservationId], commit: bool) -> Result<(), StateError> {
        self.timed("settle", || self.inner.settle(ids, commit))
    }

    fn bind(
        &self,
        ids: &[crate::state_store::ReservationId],
        binding: &crate::state_store::Binding,
    ) -> Result<(), StateError> {
        self.timed("bind", || self.inner.bind(ids, binding))
    }

    fn orphans(&self) -> Result<Vec<crate::state_store::Orphan>, StateError> {
        self.inner.orphans()
    }

    fn settle_orphan(
        &self,
        orphan: &crate::state_store::Orphan,
        commit: bool,
    ) -> Result<bool, StateError> {
        self.timed("settle", || self.inner.settle_orphan(orphan, commit))
    }

    fn shared(&self) -> bool {
        self.inner.shared()
    }

    fn describe(&self) -> String {
        self.inner.describe()
    }
}
