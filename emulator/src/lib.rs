//! hak-emu: a faithful local Hedera network on loopback. The real SDK talks to it over gRPC
//! (plaintext h2c, as to any consensus node) and agents read it through a mirror-node REST API;
//! both share one in-memory ledger.
//!
//! - [`fees`]: what each transaction kind and query costs, and the fee schedule file (0.0.111).
//! - [`genesis`]: the deterministic starting state and its documented dev keys.
//! - [`ledger`]: the state model (accounts, topics, receipts, the mirror's transaction log).
//! - [`keys`]: signature verification and key satisfaction (ed25519, ECDSA secp256k1, lists, thresholds).
//! - [`ingest`]: decoding and the node's precheck, in the real node's order; then handling.
//! - [`batch`]: the checks of an atomic batch's inner transactions (HIP-551).
//! - [`handlers`]: one module per service: pure functions over the ledger, all-or-nothing.
//! - [`queries`]: balance, account info, receipt, record and contract call local queries.
//! - [`evm`]: the EVM (revm) behind contract create, call and local call; EVM addresses.
//! - [`grpc`]: the tonic services (routing by transaction body, never by RPC name).
//! - [`mirror`]: the mirror node: the REST API (`/api/v1/...`, one module per resource) with
//!   the mirror's JSON shapes, its gRPC API ([`mirror::grpc`]: topic subscriptions, the address
//!   book) and `/network/*` ([`mirror::network`]).
//! - [`payment`]: paying for queries (the payment checked, then submitted as a transaction).
//! - [`persist`]: the optional on-disk state (`--state DIR`), written crash-safely.
//! - [`server`]: [`Emulator::start`], binding the node and both mirror APIs.

pub mod batch;
pub mod evm;
pub mod fees;
pub mod genesis;
pub mod grpc;
pub mod handlers;
pub mod ingest;
pub mod keys;
pub mod ledger;
pub mod mirror;
pub mod payment;
pub mod persist;
pub mod queries;
pub mod server;

/// The HAPI protobuf types the emulator speaks (hiero-sdk-proto, newer than the SDK's own).
pub use hedera_proto as hapi;
pub use server::{Emulator, EmulatorConfig};
