//! `hak bench`: one tool called N times in one process, timed per call. What must not live
//! here: anything a call does.

use crate::host::Host;
use crate::model::context::AgentContext;
use serde_json::{json, Value};
use std::time::Instant;

/// Per-call timings of `calls` calls on one session, after a short warm-up.
pub fn bench(
    host: &Host,
    context: AgentContext,
    tool: &str,
    params: &str,
    calls: u32,
) -> anyhow::Result<Value> {
    let mut session = host.session(context);
    let first = session.call_envelope(tool, params)?;
    if first.raw_str("status") != Some("SUCCESS") {
        anyhow::bail!(
            "the benchmarked call does not succeed: {}",
            first.raw_str("error").unwrap_or("(no error text)")
        );
    }
    // Timed as `hak serve` runs a call: the envelope comes back typed and is serialised by
    // whoever sends it (`Session::call`'s JSON value is a conversion on top).
    for _ in 0..calls.min(100) {
        session.call_envelope(tool, params)?;
    }
    let mut samples = Vec::with_capacity(calls as usize);
    let started = Instant::now();
    for _ in 0..calls {
        let t = Instant::now();
        session.call_envelope(tool, params)?;
        samples.push(t.elapsed().as_secs_f64() * 1e6);
    }
    let total = started.elapsed().as_secs_f64() * 1e6;
    samples.sort_by(f64::total_cmp);
    let pct = |p: f64| samples[((samples.len() - 1) as f64 * p).round() as usize];
    Ok(json!({
        "calls": calls,
        "usPerCall": round2(total / f64::from(calls)),
        "p50Us": round2(pct(0.50)),
        "p99Us": round2(pct(0.99)),
    }))
}

pub(super) fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}
