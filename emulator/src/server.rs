//! Starting the emulator: genesis, the gRPC node and the mirror REST API on loopback ports,
//! and scripted faults for retry tests.

use crate::mirror::grpc::{MirrorNetwork, TopicSubscriptions};
use crate::node::faults::Faults;
use crate::node::grpc::GrpcNode;
use crate::node::ingest::Node;
use crate::state::genesis::{self, FIRST_USER_ENTITY, NODE_ACCOUNT, OPERATOR_ACCOUNT};
use crate::state::keys;
use crate::state::ledger::{Account, EntityId, KeyBytes, Ledger, Ts};
use hedera::PrivateKey;
use hedera_proto::services as proto;
use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use tokio::net::TcpListener;
use tokio_stream::wrappers::TcpListenerStream;

/// Where to listen. Port 0 picks a free port.
#[derive(Clone, Debug)]
pub struct EmulatorConfig {
    pub grpc: SocketAddr,
    pub mirror: SocketAddr,
    /// The mirror's gRPC API (topic subscriptions, the address book).
    pub mirror_grpc: SocketAddr,
    /// A second address serving the mirror REST API: a local node's web3 port (8545), where
    /// the SDKs' `MirrorNodeContractQuery` posts `/api/v1/contracts/call`.
    pub mirror_web3: Option<SocketAddr>,
    /// A third address serving the mirror REST API: a local node's Java REST port (8084),
    /// where the SDKs read `/api/v1/network/registered-nodes`.
    pub mirror_java: Option<SocketAddr>,
    /// Keep the ledger in this directory across restarts (memory only when `None`).
    pub state_dir: Option<std::path::PathBuf>,
}

impl Default for EmulatorConfig {
    /// Ephemeral loopback ports (tests); `hak emu` uses the local node's ports 50211 (node),
    /// 5551 (mirror REST) and 5600 (mirror gRPC), those `Client.forLocalNode()` dials.
    fn default() -> Self {
        EmulatorConfig {
            grpc: ([127, 0, 0, 1], 0).into(),
            mirror: ([127, 0, 0, 1], 0).into(),
            mirror_grpc: ([127, 0, 0, 1], 0).into(),
            mirror_web3: None,
            mirror_java: None,
            state_dir: None,
        }
    }
}

/// A running emulator: its addresses, the operator's credentials and the node itself.
pub struct Emulator {
    pub grpc_addr: SocketAddr,
    pub mirror_addr: SocketAddr,
    pub mirror_grpc_addr: SocketAddr,
    pub node: Arc<Node>,
    shutdown: Vec<tokio::sync::oneshot::Sender<()>>,
}

/// The genesis ledger.
pub fn genesis_ledger() -> Ledger {
    let created = Ts::now();
    let mut accounts = BTreeMap::new();
    for a in genesis::accounts() {
        accounts.insert(
            a.num,
            Account {
                num: a.num,
                key: KeyBytes::from_proto(&keys::proto_key(&a.key.public_key())),
                balance: a.balance,
                deleted: false,
                memo: a.memo.to_owned(),
                receiver_sig_required: false,
                max_automatic_token_associations: if a.num >= OPERATOR_ACCOUNT { -1 } else { 0 },
                auto_renew_period: 7_776_000,
                created,
                decline_reward: false,
                evm_address: None,
                key_alias: None,
            },
        );
    }
    let mut ledger = Ledger {
        accounts,
        topics: BTreeMap::new(),
        tokens: BTreeMap::new(),
        rels: BTreeMap::new(),
        nfts: BTreeMap::new(),
        pending_airdrops: Vec::new(),
        schedules: BTreeMap::new(),
        contracts: BTreeMap::new(),
        hbar_allowances: BTreeMap::new(),
        token_allowances: BTreeMap::new(),
        nft_approvals_for_all: BTreeMap::new(),
        receipts: HashMap::new(),
        records: Vec::new(),
        files: BTreeMap::new(),
        next_entity: FIRST_USER_ENTITY,
        last_consensus: created,
        nodes: crate::state::ledger::genesis_nodes(),
        registered_nodes: BTreeMap::new(),
        next_registered_node: 1,
        node_endpoint: None,
    };
    deploy_factories(&mut ledger, created);
    ledger
}

/// Deploy the factories (their constructors run in the EVM, paid by nobody).
fn deploy_factories(ledger: &mut Ledger, created: Ts) {
    for (num, hex_initcode, memo) in [
        (
            genesis::ERC20_FACTORY,
            include_str!("../contracts/build/ERC20Factory.hex"),
            "ERC-20 factory (hak emu)",
        ),
        (
            genesis::ERC721_FACTORY,
            include_str!("../contracts/build/ERC721Factory.hex"),
            "ERC-721 factory (hak emu)",
        ),
    ] {
        let initcode = hex::decode(hex_initcode.trim()).expect("the shipped initcode is hex");
        let mut contract =
            crate::state::ledger::Contract::constructing(num, created, initcode.clone());
        contract.memo = memo.to_owned();
        ledger.contracts.insert(num, contract);
        let run = crate::evm::run(
            ledger,
            genesis::TREASURY_ACCOUNT,
            crate::evm::Target::Create { num, initcode },
            0,
            crate::evm::MAX_GAS,
            true,
        );
        assert!(
            run.status == hedera_proto::services::ResponseCodeEnum::Success,
            "the {memo} constructor failed: {}",
            run.result.error
        );
        if let Some(c) = ledger.contracts.get_mut(&num) {
            c.runtime_code = run.runtime_code;
        }
    }
}

impl Emulator {
    /// Bind the servers and start serving on the current tokio runtime.
    pub async fn start(config: EmulatorConfig) -> anyhow::Result<Self> {
        let (state, saved, replay) = match &config.state_dir {
            Some(dir) => {
                let (state, saved, replay) = crate::state::persist::StateDir::open(dir)?;
                (Some(state), saved, replay)
            }
            None => (None, None, Vec::new()),
        };
        let node = Arc::new(Node {
            ledger: Mutex::new(saved.unwrap_or_else(genesis_ledger)),
            faults: Mutex::new(Faults::default()),
            account: NODE_ACCOUNT,
            state,
            consensus: tokio::sync::watch::channel(0).0,
        });
        if let Some(state) = &node.state {
            let mut ledger = node.ledger();
            for (at, bytes) in &replay {
                if let Err(e) = node.replay(&mut ledger, bytes, *at) {
                    tracing::warn!("hak-emu: journal entry not replayed: {e}");
                }
            }
            state.snapshot(&ledger)?;
        }
        let grpc_listener = TcpListener::bind(config.grpc).await?;
        let mirror_listener = TcpListener::bind(config.mirror).await?;
        let mirror_grpc_listener = TcpListener::bind(config.mirror_grpc).await?;
        let grpc_addr = grpc_listener.local_addr()?;
        let mirror_addr = mirror_listener.local_addr()?;
        let mirror_grpc_addr = mirror_grpc_listener.local_addr()?;
        node.ledger().node_endpoint = Some(grpc_addr);

        let (grpc_stop, grpc_stopped) = tokio::sync::oneshot::channel::<()>();
        let service = Arc::new(GrpcNode(node.clone()));
        use proto::*;
        let router = tonic::transport::Server::builder()
            .add_service(crypto_service_server::CryptoServiceServer::from_arc(
                service.clone(),
            ))
            .add_service(consensus_service_server::ConsensusServiceServer::from_arc(
                service.clone(),
            ))
            .add_service(token_service_server::TokenServiceServer::from_arc(
                service.clone(),
            ))
            .add_service(schedule_service_server::ScheduleServiceServer::from_arc(
                service.clone(),
            ))
            .add_service(file_service_server::FileServiceServer::from_arc(
                service.clone(),
            ))
            .add_service(
                smart_contract_service_server::SmartContractServiceServer::from_arc(
                    service.clone(),
                ),
            )
            .add_service(network_service_server::NetworkServiceServer::from_arc(
                service.clone(),
            ))
            .add_service(util_service_server::UtilServiceServer::from_arc(
                service.clone(),
            ))
            .add_service(freeze_service_server::FreezeServiceServer::from_arc(
                service.clone(),
            ))
            .add_service(address_book_service_server::AddressBookServiceServer::from_arc(service));
        tokio::spawn(async move {
            let incoming = TcpListenerStream::new(grpc_listener);
            if let Err(e) = router
                .serve_with_incoming_shutdown(incoming, async {
                    let _ = grpc_stopped.await;
                })
                .await
            {
                tracing::error!("hak-emu gRPC server stopped: {e}");
            }
        });

        let (mirror_grpc_stop, mirror_grpc_stopped) = tokio::sync::oneshot::channel::<()>();
        let mirror_grpc = tonic::transport::Server::builder()
            .add_service(TopicSubscriptions::new(node.clone()))
            .add_service(MirrorNetwork::new(node.clone()));
        tokio::spawn(async move {
            let incoming = TcpListenerStream::new(mirror_grpc_listener);
            if let Err(e) = mirror_grpc
                .serve_with_incoming_shutdown(incoming, async {
                    let _ = mirror_grpc_stopped.await;
                })
                .await
            {
                tracing::error!("hak-emu mirror gRPC server stopped: {e}");
            }
        });

        let mut shutdown = vec![grpc_stop, mirror_grpc_stop];
        let mut rest_listeners = vec![mirror_listener];
        for addr in [config.mirror_web3, config.mirror_java]
            .into_iter()
            .flatten()
        {
            rest_listeners.push(TcpListener::bind(addr).await?);
        }
        for listener in rest_listeners {
            let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
            shutdown.push(stop);
            let app = crate::mirror::router(node.clone());
            tokio::spawn(async move {
                let serve = axum::serve(listener, app).with_graceful_shutdown(async {
                    let _ = stopped.await;
                });
                if let Err(e) = serve.await {
                    tracing::error!("hak-emu mirror server stopped: {e}");
                }
            });
        }

        Ok(Emulator {
            grpc_addr,
            mirror_addr,
            mirror_grpc_addr,
            node,
            shutdown,
        })
    }

    /// The mirror REST base URL, e.g. `http://127.0.0.1:5551/api/v1`.
    pub fn mirror_url(&self) -> String {
        format!("http://{}/api/v1", self.mirror_addr)
    }

    /// The operator account (0.0.1001) and its key.
    pub fn operator(&self) -> (hedera::AccountId, PrivateKey) {
        (
            hedera::AccountId::new(0, 0, OPERATOR_ACCOUNT),
            genesis::operator_key(),
        )
    }

    /// The first line `hak emu` prints: how to connect.
    pub fn connection_json(&self) -> serde_json::Value {
        serde_json::json!({
            "grpc": self.grpc_addr.to_string(),
            "mirror": format!("http://{}", self.mirror_addr),
            "mirrorGrpc": self.mirror_grpc_addr.to_string(),
            "operatorId": EntityId(OPERATOR_ACCOUNT),
            "operatorKey": genesis::operator_key().to_string_der(),
            "nodeAccountId": EntityId(NODE_ACCOUNT),
        })
    }

    /// Script a fault.
    pub fn inject(&self, edit: impl FnOnce(&mut Faults)) {
        edit(&mut self.node.faults());
    }

    /// Stop the servers.
    pub fn shutdown(mut self) {
        for stop in self.shutdown.drain(..) {
            let _ = stop.send(());
        }
    }
}
