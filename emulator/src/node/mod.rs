//! The consensus node: what a client's gRPC call reaches. Above the handlers, below the
//! mirror and the server.
//!
//! - [`grpc`]: the tonic services (routing by transaction body, never by RPC name).
//! - [`ingest`]: decoding and the node's precheck, in the real node's order; then handling.
//! - [`batch`]: the checks of an atomic batch's inner transactions (HIP-551).
//! - [`payment`]: paying for queries (the payment checked, then submitted as a transaction).
//! - [`queries`]: balance, account info, receipt, record and contract call local queries.
//! - [`faults`]: scripted misbehaviour for retry tests.

pub mod batch;
pub mod faults;
pub mod grpc;
pub mod ingest;
pub mod payment;
pub mod queries;
