//! All integration tests in one binary (one link), one module per topic.

mod accounts;
mod allowances_and_transfers;
mod audit;
mod autonomous;
mod budgets;
mod conformance;
mod consensus;
mod differential;
mod go_guest;
mod hostile;
mod hotswap;
mod kit_generated;
mod library;
mod library_coverage;
mod lifecycle;
mod params;
mod policies;
mod return_bytes;
mod runtime;
mod scaffold;
mod server;
mod strategies;
mod tokens;
mod transactions;
mod verdicts;
mod wallet;
