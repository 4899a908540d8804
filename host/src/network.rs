//! The configured Hedera network: an SDK client (with the operator when one is configured),
//! the node ids transactions are built for, the mirror node URL, and the tokio runtime that
//! network calls run on. Building a client never connects; only executing does.

use crate::manifest::{Manifest, NetworkName};
use hedera::{AccountId, Client, PrivateKey};
use std::collections::HashMap;
use std::str::FromStr;

pub struct Network {
    pub name: NetworkName,
    pub client: Client,
    /// The operator's account, if the manifest names one (its key may still be missing).
    pub operator_account_id: Option<AccountId>,
    /// Whether the client can sign as the operator.
    pub has_operator_key: bool,
    /// Nodes that return-bytes transactions are frozen for.
    pub node_account_ids: Vec<AccountId>,
    pub mirror_url: String,
    runtime: tokio::runtime::Runtime,
}

impl Network {
    pub fn from_manifest(manifest: &Manifest) -> anyhow::Result<Self> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("hak-net")
            .enable_all()
            .build()?;
        let section = &manifest.network;
        let _guard = runtime.enter();
        let client = match section.name {
            NetworkName::Testnet => Client::for_testnet(),
            NetworkName::Mainnet => Client::for_mainnet(),
            NetworkName::Previewnet => Client::for_previewnet(),
            NetworkName::Custom => {
                let mut nodes = HashMap::new();
                for (address, id) in &section.nodes {
                    let id = AccountId::from_str(id).map_err(|e| {
                        anyhow::anyhow!("network.nodes.{address:?}: invalid account id {id:?}: {e}")
                    })?;
                    nodes.insert(address.clone(), id);
                }
                Client::for_network(nodes)?
            }
        };
        let mirror_url = match (&section.mirror_url, section.name) {
            (Some(url), _) => url.trim_end_matches('/').to_owned(),
            (None, NetworkName::Mainnet) => {
                "https://mainnet-public.mirrornode.hedera.com/api/v1".into()
            }
            (None, NetworkName::Previewnet) => {
                "https://previewnet.mirrornode.hedera.com/api/v1".into()
            }
            (None, _) => "https://testnet.mirrornode.hedera.com/api/v1".into(),
        };

        let mut operator_account_id = None;
        let mut has_operator_key = false;
        if let Some(op) = &manifest.operator {
            let id = AccountId::from_str(&op.account_id).map_err(|e| {
                anyhow::anyhow!(
                    "operator.account_id: invalid account id {:?}: {e}",
                    op.account_id
                )
            })?;
            operator_account_id = Some(id);
            match std::env::var(&op.key_env) {
                Ok(text) => {
                    let key = PrivateKey::from_str(text.trim()).map_err(|e| {
                        anyhow::anyhow!("operator key in ${} is not a valid private key: {e}", op.key_env)
                    })?;
                    client.set_operator(id, key);
                    has_operator_key = true;
                }
                Err(_) => tracing::info!(
                    "operator key variable ${} is not set: autonomous calls will fail, return-bytes works",
                    op.key_env
                ),
            }
        }

        let mut node_account_ids = Vec::new();
        for (i, id) in section.node_account_ids.iter().enumerate() {
            node_account_ids.push(AccountId::from_str(id).map_err(|e| {
                anyhow::anyhow!("network.node_account_ids[{i}]: invalid account id {id:?}: {e}")
            })?);
        }
        if node_account_ids.is_empty() {
            node_account_ids = client.network().into_values().collect();
            node_account_ids.sort_by_key(|id| id.num);
            node_account_ids.dedup();
        }
        drop(_guard);
        Ok(Network {
            name: section.name,
            client,
            operator_account_id,
            has_operator_key,
            node_account_ids,
            mirror_url,
            runtime,
        })
    }

    pub fn runtime(&self) -> &tokio::runtime::Handle {
        self.runtime.handle()
    }

    /// Run a network future to completion from synchronous lifecycle code.
    pub fn block_on<F: std::future::Future>(&self, fut: F) -> F::Output {
        block_on(self.runtime.handle(), fut)
    }
}

/// Block on `fut`, also from inside a (multi-threaded) tokio runtime.
pub fn block_on<F: std::future::Future>(handle: &tokio::runtime::Handle, fut: F) -> F::Output {
    if tokio::runtime::Handle::try_current().is_ok() {
        tokio::task::block_in_place(|| handle.block_on(fut))
    } else {
        handle.block_on(fut)
    }
}
