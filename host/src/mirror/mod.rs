//! The mirror node, as tools and strategies use it: [`Mirror`] has one method per resource the
//! kit reads (token, account, account tokens, pending airdrops, topic, topic messages,
//! transaction, exchange rate, contract), takes ids, returns typed views or the mirror's JSON
//! for tools that hand it on, and words failures as the kit does. It owns the runtime its
//! requests run on, so synchronous tool code calls it directly. No tool formats a mirror URL;
//! HTTP and retries live in [`client`].

mod client;
mod resources;

pub use client::{MirrorClient, MirrorError};
pub use resources::{mirror_transaction_id, Account, MirrorFailure, Token, TopicMessagesQuery};

use serde_json::Value;
use tokio::runtime::Handle;

/// The configured mirror node and the runtime its requests run on.
pub struct Mirror {
    client: MirrorClient,
    runtime: Handle,
}

impl Mirror {
    pub fn new(client: MirrorClient, runtime: Handle) -> Self {
        Mirror { client, runtime }
    }

    pub fn base_url(&self) -> &str {
        self.client.base_url()
    }

    /// GET any path (`/balances?account.id=0.0.5`), from synchronous code outside the
    /// runtime: for tests and tooling; tools use the typed methods.
    pub fn get(&self, path: &str) -> Result<Value, MirrorError> {
        crate::blocking::block_on(&self.runtime, self.client.get(path))
    }

    /// GET from async code already running on the network's runtime.
    pub(crate) async fn get_async(&self, path: &str) -> Result<Value, MirrorError> {
        self.client.get(path).await
    }
}
