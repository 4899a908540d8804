//! hak-emu: a faithful local Hedera network on loopback. The real SDK talks to it over gRPC
//! (plaintext h2c, as to any consensus node) and agents read it through a mirror-node REST API;
//! both share one in-memory ledger.
//!
//! The crate is layered; each module uses only those below it (`tests/architecture.rs`
//! checks it):
//!
//! - [`server`]: [`Emulator::start`], binding the node and both mirror APIs; the genesis
//!   ledger (accounts, then the factory contracts run through the EVM).
//! - [`mirror`]: the mirror node: the REST API (`/api/v1/...`, one module per resource) with
//!   the mirror's JSON shapes, its gRPC API ([`mirror::grpc`]: topic subscriptions, the address
//!   book) and `/network/*` ([`mirror::network`]).
//! - [`node`]: the consensus node: gRPC ingress, ingest and precheck, atomic batches, query
//!   payment, the queries, scripted faults.
//! - [`handlers`]: one module per service: pure functions over the ledger, all-or-nothing;
//!   [`handlers::settle`] stores what every handled transaction ends with.
//! - [`evm`]: the EVM (revm) behind contract create, call and local call; EVM addresses.
//! - [`fees`]: what each transaction kind and query costs, and the fee schedule file (0.0.111).
//! - [`kind`]: the transaction kinds, with their HAPI functionality, base fee and mirror name.
//! - [`state`]: the ledger, the genesis accounts and dev keys, key checks, persistence.

pub mod evm;
pub mod fees;
pub mod handlers;
pub mod kind;
pub mod mirror;
pub mod node;
pub mod server;
pub mod state;

/// The HAPI protobuf types the emulator speaks (hiero-sdk-proto, newer than the SDK's own).
pub use hedera_proto as hapi;
pub use server::{Emulator, EmulatorConfig};
/// The genesis accounts and their documented dev keys (public knowledge: local use only).
pub use state::genesis;
