//! What a running host tells its operator: [`metrics`] (Prometheus: calls, plugin steps,
//! the state store) and [`decisions`] (the decision log, one JSON line per call).

pub mod decisions;
pub mod metrics;
