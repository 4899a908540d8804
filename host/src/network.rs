//! The configured Hedera network: an SDK client (with the operator when one is configured),
//! the node ids transactions are built for, the mirror node URL, and the tokio runtime that
//! network calls run on. Building a client never connects; only executing does. The local
//! network is hak's emulator, started here inside the process unless `network.grpc` points at
//! a running `hak emu`; its operator is 0.0.1001 with the documented dev key. The network
//! capabilities' actions ([`OperatorActions`]) are done here, with that client.

use crate::capabilities::rates::{unix_now, Kept, RateCache, RateSet};
use crate::capabilities::{CapabilityError, ExchangeRate, HederaActions};
use crate::manifest::{Manifest, NetworkName};
use crate::mirror::{Mirror, MirrorClient};
use crate::tools::evm::call::EvmFactories;
use hak_emu::{Emulator, EmulatorConfig};
use hedera::{
    AccountId, Client, ContractId, PrivateKey, TopicCreateTransaction, TopicId,
    TopicMessageSubmitTransaction,
};
use std::collections::HashMap;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

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
    /// The mirror node at `mirror_url`.
    pub mirror: Arc<Mirror>,
    /// How long an exchange rate read from the mirror is kept at most (`[network]
    /// rates_refresh_seconds`).
    pub rates_refresh: Duration,
    /// The kit's EVM factory contracts here (none on mainnet, previewnet or a custom network).
    pub evm_factories: EvmFactories,
    /// The local network, when it runs inside this process.
    emulator: Option<Emulator>,
    runtime: tokio::runtime::Runtime,
}

/// Why the configured network cannot be set up; each names the manifest field it is about.
#[derive(Debug, thiserror::Error)]
pub enum NetworkError {
    #[error("cannot start the network runtime: {0}")]
    Runtime(#[source] std::io::Error),
    #[error("cannot start the local network: {0}")]
    LocalNetwork(String),
    #[error("{field}: invalid account id {id:?}: {message}")]
    AccountId {
        field: String,
        id: String,
        message: String,
    },
    #[error("operator key in ${env} is not a valid private key: {message}")]
    OperatorKey { env: String, message: String },
    #[error("operator.account_id: {id} has no documented dev key on the local network; export ${env} or name a genesis account (0.0.1001-0.0.1005)")]
    NoDevKey { id: String, env: String },
    #[error("network client: {0}")]
    Client(String),
    #[error("mirror client: {0:#}")]
    Mirror(anyhow::Error),
}

/// The account id `text` of the manifest field `field` names.
fn account_id(text: &str, field: impl FnOnce() -> String) -> Result<AccountId, NetworkError> {
    AccountId::from_str(text).map_err(|e| NetworkError::AccountId {
        field: field(),
        id: text.to_owned(),
        message: e.to_string(),
    })
}

/// The factories hak's local network deploys at genesis, at the ids the kit uses for a local
/// node.
pub const LOCAL_EVM_FACTORIES: EvmFactories = EvmFactories {
    erc20: Some(ContractId::new(0, 0, hak_emu::genesis::ERC20_FACTORY)),
    erc721: Some(ContractId::new(0, 0, hak_emu::genesis::ERC721_FACTORY)),
};

/// Where a running `hak emu` serves its mirror API by default.
pub const LOCAL_MIRROR_URL: &str = "http://127.0.0.1:5551/api/v1";

impl Network {
    pub fn from_manifest(manifest: &Manifest) -> Result<Self, NetworkError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            // One worker: every hop of a round trip (client, loopback server, receipt) stays on
            // one thread; two workers measured 1.5-2x slower on 2 cores (cross-thread wakeups).
            .worker_threads(1)
            .thread_name("hak-net")
            .enable_all()
            .build()
            .map_err(NetworkError::Runtime)?;
        let section = &manifest.network;
        let _guard = runtime.enter();
        let mut emulator = None;
        let (client, default_mirror) = match section.name {
            NetworkName::Local => {
                let grpc = match &section.grpc {
                    Some(addr) => addr.clone(),
                    None => {
                        let state_dir = section
                            .state_dir
                            .as_ref()
                            .map(|d| manifest.base_dir.join(d));
                        let config = EmulatorConfig {
                            state_dir,
                            ..EmulatorConfig::default()
                        };
                        let emu = runtime
                            .block_on(Emulator::start(config))
                            .map_err(|e| NetworkError::LocalNetwork(format!("{e:#}")))?;
                        let addr = emu.grpc_addr.to_string();
                        emulator = Some(emu);
                        addr
                    }
                };
                let client = Client::for_network(HashMap::from([(grpc, AccountId::new(0, 0, 3))]))
                    .map_err(|e| NetworkError::Client(e.to_string()))?;
                // A loopback node answers in microseconds: retry fast.
                client.set_min_backoff(Duration::from_millis(5));
                client.set_max_backoff(Duration::from_millis(250));
                let mirror = match &emulator {
                    Some(emu) => emu.mirror_url(),
                    None => LOCAL_MIRROR_URL.to_owned(),
                };
                (client, mirror)
            }
            NetworkName::Testnet => (
                Client::for_testnet(),
                "https://testnet.mirrornode.hedera.com/api/v1".to_owned(),
            ),
            NetworkName::Mainnet => (
                Client::for_mainnet(),
                "https://mainnet-public.mirrornode.hedera.com/api/v1".to_owned(),
            ),
            NetworkName::Previewnet => (
                Client::for_previewnet(),
                "https://previewnet.mirrornode.hedera.com/api/v1".to_owned(),
            ),
            NetworkName::Custom => {
                let mut nodes = HashMap::new();
                for (address, id) in &section.nodes {
                    let id = account_id(id, || format!("network.nodes.{address:?}"))?;
                    nodes.insert(address.clone(), id);
                }
                let client =
                    Client::for_network(nodes).map_err(|e| NetworkError::Client(e.to_string()))?;
                (client, LOCAL_MIRROR_URL.to_owned())
            }
        };
        if let Some(ms) = section.request_timeout_ms {
            client.set_request_timeout(Some(Duration::from_millis(ms)));
        }
        let mirror_url = match &section.mirror_url {
            Some(url) => url.trim_end_matches('/').to_owned(),
            None => default_mirror,
        };

        let mut operator_account_id = None;
        let mut has_operator_key = false;
        if let Some(op) = &manifest.operator {
            let id = account_id(&op.account_id, || "operator.account_id".into())?;
            operator_account_id = Some(id);
            match std::env::var(&op.key_env) {
                Ok(text) => {
                    let key = PrivateKey::from_str(text.trim()).map_err(|e| {
                        NetworkError::OperatorKey {
                            env: op.key_env.clone(),
                            message: e.to_string(),
                        }
                    })?;
                    client.set_operator(id, key);
                    has_operator_key = true;
                }
                Err(_) if section.name == NetworkName::Local => {
                    // The documented dev key of the genesis account named (0.0.1003 and
                    // 0.0.1005 have ECDSA keys, which the EVM tools need).
                    let key = hak_emu::genesis::dev_key_of(id.num)
                        .filter(|_| id.shard == 0 && id.realm == 0)
                        .ok_or_else(|| NetworkError::NoDevKey {
                            id: id.to_string(),
                            env: op.key_env.clone(),
                        })?;
                    client.set_operator(id, key);
                    has_operator_key = true;
                    tracing::info!("${} is not set: using the local network's documented dev key of {id}", op.key_env);
                }
                Err(_) => tracing::info!(
                    "operator key variable ${} is not set: autonomous calls will fail, return-bytes works",
                    op.key_env
                ),
            }
        }

        if manifest.operator.is_none() && section.name == NetworkName::Local {
            // The local network's operator, whose dev key is public (see hak-emu's genesis).
            let id = AccountId::new(0, 0, hak_emu::genesis::OPERATOR_ACCOUNT);
            client.set_operator(id, hak_emu::genesis::operator_key());
            operator_account_id = Some(id);
            has_operator_key = true;
        }

        let mut node_account_ids = Vec::new();
        for (i, id) in section.node_account_ids.iter().enumerate() {
            node_account_ids.push(account_id(id, || format!("network.node_account_ids[{i}]"))?);
        }
        if node_account_ids.is_empty() {
            node_account_ids = client.network().into_values().collect();
            node_account_ids.sort_by_key(|id| id.num);
            node_account_ids.dedup();
        }
        // The kit waits 1 s before retrying a lagging mirror; a loopback mirror (the local
        // network's, in or out of process) needs far less.
        let loopback = ["http://127.0.0.1:", "http://localhost:", "http://[::1]:"]
            .iter()
            .any(|prefix| mirror_url.starts_with(prefix));
        let backoff = if section.name == NetworkName::Local || loopback {
            Duration::from_millis(20)
        } else {
            Duration::from_secs(1)
        };
        let mirror = Arc::new(Mirror::new(
            MirrorClient::new(&mirror_url, backoff).map_err(NetworkError::Mirror)?,
            runtime.handle().clone(),
        ));
        let rates_refresh = Duration::from_secs(u64::from(
            section
                .rates_refresh_seconds
                .unwrap_or(crate::capabilities::rates::DEFAULT_REFRESH_SECONDS),
        ));
        drop(_guard);
        Ok(Network {
            mirror,
            rates_refresh,
            emulator,
            name: section.name,
            evm_factories: match section.name {
                NetworkName::Testnet => EvmFactories::TESTNET,
                NetworkName::Local => LOCAL_EVM_FACTORIES,
                _ => EvmFactories::default(),
            },
            client,
            operator_account_id,
            has_operator_key,
            node_account_ids,
            mirror_url,
            runtime,
        })
    }

    /// The emulator running inside this process (local network without `grpc`).
    pub fn emulator(&self) -> Option<&Emulator> {
        self.emulator.as_ref()
    }

    pub fn runtime(&self) -> &tokio::runtime::Handle {
        self.runtime.handle()
    }
}

/// The network capabilities' actions, done with the operator's client on the network's
/// runtime, and the exchange rate read from its mirror and kept host-wide (see
/// [`crate::capabilities::actions`], [`crate::capabilities::rates`]).
pub struct OperatorActions {
    client: Client,
    /// Whether the client can sign as the operator (the `hedera` actions need it).
    operator: bool,
    mirror: Arc<Mirror>,
    rates: Arc<RateCache>,
    runtime: tokio::runtime::Handle,
}

/// The mirror's exchange rates, parsed (what is refused says which field).
async fn read_rates(mirror: &Mirror) -> Result<RateSet, String> {
    let answer = mirror
        .get_async("/network/exchangerate")
        .await
        .map_err(|e| e.to_string())?;
    RateSet::from_mirror(&answer)
}

impl OperatorActions {
    pub fn new(network: &Network) -> Self {
        OperatorActions {
            client: network.client.clone(),
            operator: network.has_operator_key,
            mirror: network.mirror.clone(),
            rates: Arc::new(RateCache::new(network.rates_refresh)),
            runtime: network.runtime().clone(),
        }
    }

    /// Read the exchange rates again off the caller's path (one read at a time), so a
    /// rate file written before its rate expired is seen; a failed read keeps what is kept.
    pub fn read_rates_in_background(&self) {
        if !self.rates.begin_read() {
            return;
        }
        let (mirror, rates) = (self.mirror.clone(), self.rates.clone());
        self.runtime.spawn(async move {
            match read_rates(&mirror).await {
                Ok(set) => rates.keep(set),
                Err(why) => tracing::warn!("cannot read the exchange rate again: {why}"),
            }
            rates.end_read();
        });
    }

    /// Run network work to completion, bounded by `timeout`.
    fn run<T>(
        &self,
        timeout: Duration,
        work: impl std::future::Future<Output = Result<T, String>>,
    ) -> Result<T, CapabilityError> {
        // The timer is made inside the runtime (its time driver), not by the caller.
        let timed = async { tokio::time::timeout(timeout, work).await };
        crate::blocking::block_on(&self.runtime, timed)
            .map_err(|_| CapabilityError::TimedOut(timeout))?
            .map_err(CapabilityError::Network)
    }
}

impl HederaActions for OperatorActions {
    fn submit_topic_message(
        &self,
        topic: TopicId,
        message: &[u8],
        timeout: Duration,
    ) -> Result<String, CapabilityError> {
        if !self.operator {
            return Err(CapabilityError::NoOperator);
        }
        let client = self.client.clone();
        let message = message.to_vec();
        self.run(timeout, async move {
            let mut tx = TopicMessageSubmitTransaction::new();
            tx.topic_id(topic).message(message);
            let response = tx.execute(&client).await.map_err(|e| e.to_string())?;
            response
                .get_receipt(&client)
                .await
                .map_err(|e| e.to_string())?;
            Ok(crate::tools::transaction::kit_transaction_id(
                &response.transaction_id,
            ))
        })
    }

    fn create_topic(&self, memo: &str, timeout: Duration) -> Result<String, CapabilityError> {
        if !self.operator {
            return Err(CapabilityError::NoOperator);
        }
        let client = self.client.clone();
        let memo = memo.to_owned();
        self.run(timeout, async move {
            let operator = client
                .get_operator_account_id()
                .ok_or("no operator account is configured")?;
            let key = client
                .get_operator_public_key()
                .ok_or("no operator key is configured")?;
            let mut tx = TopicCreateTransaction::new();
            tx.topic_memo(memo)
                .submit_key(key)
                .auto_renew_account_id(operator);
            let response = tx.execute(&client).await.map_err(|e| e.to_string())?;
            let receipt = response
                .get_receipt(&client)
                .await
                .map_err(|e| e.to_string())?;
            receipt
                .topic_id
                .map(|t| t.to_string())
                .ok_or_else(|| "the receipt has no topic id".to_owned())
        })
    }

    fn exchange_rate(&self, timeout: Duration) -> Result<ExchangeRate, CapabilityError> {
        let now = unix_now();
        match self.rates.get(now) {
            Kept::Fresh(rate) => return Ok(rate),
            Kept::Stale(rate) => {
                self.read_rates_in_background();
                return Ok(rate);
            }
            Kept::Nothing => {}
        }
        let mirror = self.mirror.clone();
        let set = self
            .run(timeout, async move { read_rates(&mirror).await })
            .map_err(|e| match e {
                CapabilityError::Network(why) => CapabilityError::NoRate(why),
                other => other,
            })?;
        self.rates.keep(set);
        set.in_force(unix_now())
            .ok_or_else(|| CapabilityError::NoRate(set.expired()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A setup error names the manifest field and the variable, as a typed kind.
    #[test]
    fn an_operator_without_a_key_or_a_dev_key_is_named() {
        let manifest = Manifest::parse(
            "[network]\nname = \"local\"\n[operator]\naccount_id = \"0.0.9999\"\nkey_env = \"HAK_TEST_NO_SUCH_KEY_VARIABLE\"\n",
            "test",
            std::env::temp_dir(),
        )
        .unwrap();
        let error = Network::from_manifest(&manifest).err().expect("refused");
        assert!(matches!(error, NetworkError::NoDevKey { .. }), "{error:?}");
        assert_eq!(
            error.to_string(),
            "operator.account_id: 0.0.9999 has no documented dev key on the local network; export $HAK_TEST_NO_SUCH_KEY_VARIABLE or name a genesis account (0.0.1001-0.0.1005)"
        );
        let manifest = Manifest::parse(
            "[network]\nname = \"testnet\"\nnode_account_ids = [\"0.0.x\"]\n",
            "test",
            std::env::temp_dir(),
        )
        .unwrap();
        let error = Network::from_manifest(&manifest).err().expect("refused");
        assert!(
            matches!(&error, NetworkError::AccountId { field, .. } if field == "network.node_account_ids[0]"),
            "{error:?}"
        );
    }
}
