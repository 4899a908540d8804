//! The emulator's tests, in one binary: the real Rust SDK against it over loopback
//! (transfers, accounts, topics, contracts as entities, tokens, schedules, queries, faults, the
//! mirror API's JSON) and the official JS SDK (`js_sdk`, needs node: run by scripts/test.sh).

#[macro_use]
mod common;

mod aliases;
mod custom_fees;
mod evm;
mod fidelity;
mod files;
mod js_sdk;
mod queries;
mod query_costs;
mod rejects;
mod schedules;
mod sdk;
mod token_keys;
mod tokens;
mod transaction_fees;
