//! The state every layer above reads and changes; imports nothing of the crate above it.
//!
//! - [`ledger`]: the state model (accounts, topics, receipts, the mirror's transaction log).
//! - [`genesis`]: the deterministic starting state and its documented dev keys.
//! - [`keys`]: signature verification and key satisfaction (ed25519, ECDSA secp256k1, lists,
//!   thresholds).
//! - [`persist`]: the optional on-disk state (`--state DIR`), written crash-safely.

pub mod genesis;
pub mod keys;
pub mod ledger;
pub mod persist;
