//! All integration tests in one binary (one link), one module per topic.

mod accounts;
mod autonomous;
mod conformance;
mod consensus;
mod hostile;
mod lifecycle;
mod policies;
mod return_bytes;
mod runtime;
mod strategies;
mod tokens;
mod transactions;
