//! The mirror node's gRPC API (`com.hedera.mirror.api.proto`, the local node's port 5600):
//! `ConsensusService/subscribeTopic`, the stream behind the SDKs' `TopicMessageQuery`, and
//! `NetworkService/getNodes`, the address book behind `AddressBookQuery`. Both read the same
//! ledger as the REST API; nothing here changes it.
//!
//! hedera-proto generates only the clients of these services, so the two tower services below
//! do by hand what tonic's generated servers do (route by path, decode with prost, stream the
//! answers); the messages are hedera-proto's.

use crate::node::ingest::Node;
use crate::state::ledger::{Topic, Ts};
use hedera_proto::mirror as mp;
use hedera_proto::services as proto;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::codegen::{empty_body, http, Body, BoxFuture, Service, StdError};
use tonic::server::NamedService;
use tonic::{Request, Response, Status};

/// Messages sent to a subscriber per read of the ledger (the lock is not held while sending).
const BATCH: usize = 256;

type MessageStream =
    Pin<Box<dyn tokio_stream::Stream<Item = Result<mp::ConsensusTopicResponse, Status>> + Send>>;

/// `com.hedera.mirror.api.proto.ConsensusService`.
#[derive(Clone)]
pub struct TopicSubscriptions {
    node: Arc<Node>,
}

/// `com.hedera.mirror.api.proto.NetworkService`.
#[derive(Clone)]
pub struct MirrorNetwork {
    node: Arc<Node>,
}

impl TopicSubscriptions {
    pub fn new(node: Arc<Node>) -> Self {
        TopicSubscriptions { node }
    }
}

impl MirrorNetwork {
    pub fn new(node: Arc<Node>) -> Self {
        MirrorNetwork { node }
    }
}

impl NamedService for TopicSubscriptions {
    const NAME: &'static str = "com.hedera.mirror.api.proto.ConsensusService";
}

impl NamedService for MirrorNetwork {
    const NAME: &'static str = "com.hedera.mirror.api.proto.NetworkService";
}

/// What a subscription asked for, checked as the mirror node checks it.
struct Filter {
    topic: u64,
    start: Ts,
    end: Option<Ts>,
    limit: u64,
}

// `tonic::Status` is the error type tonic's streaming services require.
#[allow(clippy::result_large_err)]
fn filter(query: &mp::ConsensusTopicQuery) -> Result<Filter, Status> {
    let topic = query
        .topic_id
        .as_ref()
        .ok_or_else(|| Status::invalid_argument("topicId: must not be null"))?;
    if topic.shard_num != 0 || topic.realm_num != 0 || topic.topic_num < 0 {
        return Err(Status::invalid_argument("topicId: invalid entity id"));
    }
    let start = query
        .consensus_start_time
        .as_ref()
        .map(Ts::from_proto)
        .unwrap_or_default();
    let end = query.consensus_end_time.as_ref().map(Ts::from_proto);
    if end.is_some_and(|end| end <= start) {
        return Err(Status::invalid_argument(
            "startTime: must be before endTime",
        ));
    }
    Ok(Filter {
        topic: topic.topic_num as u64,
        start,
        end,
        limit: query.limit,
    })
}

fn response(m: &crate::state::ledger::TopicMessage) -> mp::ConsensusTopicResponse {
    mp::ConsensusTopicResponse {
        consensus_timestamp: Some(m.consensus.to_proto()),
        message: m.message.clone(),
        running_hash: m.running_hash.clone(),
        sequence_number: m.sequence_number,
        running_hash_version: 3,
        chunk_info: m.chunk.map(
            |(initial, number, total)| proto::ConsensusMessageChunkInfo {
                initial_transaction_id: Some(initial.to_proto()),
                total,
                number,
            },
        ),
    }
}

/// The next messages of a subscription after sequence number `after`, and whether the
/// subscription is over (its end time has passed; the limit is counted by the caller).
fn next_batch(
    topic: &Topic,
    filter: &Filter,
    after: u64,
    now: Ts,
) -> (Vec<mp::ConsensusTopicResponse>, bool) {
    // Sequence numbers are 1-based and dense: message n is at index n-1.
    let from = (after as usize).min(topic.messages.len());
    let batch = topic.messages[from..]
        .iter()
        .filter(|m| m.consensus >= filter.start)
        .take_while(|m| filter.end.is_none_or(|end| m.consensus < end))
        .take(BATCH)
        .map(response)
        .collect::<Vec<_>>();
    let ended = filter.end.is_some_and(|end| {
        // Past its end time, and nothing left before it.
        now >= end && batch.len() < BATCH
    });
    (batch, ended)
}

/// Stream a topic's messages: history first, then each new one as it reaches consensus,
/// until the end time passes, the limit is reached or the client goes away.
async fn subscribe(
    node: Arc<Node>,
    filter: Filter,
    tx: mpsc::Sender<Result<mp::ConsensusTopicResponse, Status>>,
) {
    let mut consensus = node.consensus.subscribe();
    let mut after = 0u64;
    let mut sent = 0u64;
    loop {
        consensus.borrow_and_update();
        let (batch, ended) = {
            let ledger = node.ledger();
            match ledger.topics.get(&filter.topic) {
                Some(topic) => next_batch(topic, &filter, after, Ts::now()),
                None => return,
            }
        };
        let full = batch.len() == BATCH;
        for message in batch {
            after = message.sequence_number;
            if tx.send(Ok(message)).await.is_err() {
                return;
            }
            sent += 1;
            if filter.limit != 0 && sent >= filter.limit {
                return;
            }
        }
        if ended {
            return;
        }
        if full {
            continue;
        }
        // Wait for the next consensus, the end time or the client going away.
        let end = filter.end;
        let end_passes = async move {
            match end {
                Some(end) => tokio::time::sleep(end_in(end)).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            changed = consensus.changed() => if changed.is_err() { return },
            _ = end_passes => {}
            _ = tx.closed() => return,
        }
    }
}

/// How long until `end` (zero when it has passed).
fn end_in(end: Ts) -> std::time::Duration {
    let now = Ts::now();
    if end <= now {
        return std::time::Duration::ZERO;
    }
    let nanos =
        (end.seconds - now.seconds) as i128 * 1_000_000_000 + end.nanos as i128 - now.nanos as i128;
    std::time::Duration::from_nanos(nanos.clamp(0, u64::MAX as i128) as u64)
}

impl TopicSubscriptions {
    #[allow(clippy::result_large_err)]
    fn open(&self, query: &mp::ConsensusTopicQuery) -> Result<MessageStream, Status> {
        let filter = filter(query)?;
        {
            let ledger = self.node.ledger();
            if !ledger.topics.contains_key(&filter.topic) {
                return Err(Status::not_found(format!(
                    "0.0.{} does not exist",
                    filter.topic
                )));
            }
        }
        let (tx, rx) = mpsc::channel(BATCH);
        tokio::spawn(subscribe(self.node.clone(), filter, tx));
        Ok(Box::pin(ReceiverStream::new(rx)))
    }
}

impl MirrorNetwork {
    /// The address book (0.0.101 or 0.0.102): the one node, its endpoint and account.
    #[allow(clippy::result_large_err)]
    fn nodes(&self, query: &mp::AddressBookQuery) -> Result<AddressStream, Status> {
        let file = query.file_id.as_ref().map_or(0, |f| f.file_num);
        if file != 101 && file != 102 {
            return Err(Status::not_found(format!("0.0.{file} does not exist")));
        }
        let book = {
            let ledger = self.node.ledger();
            crate::handlers::file::address_book(&ledger)
        };
        let limit = if query.limit > 0 {
            query.limit as usize
        } else {
            usize::MAX
        };
        let items = book
            .node_address
            .into_iter()
            .take(limit)
            .map(Ok)
            .collect::<Vec<_>>();
        Ok(Box::pin(tokio_stream::iter(items)))
    }
}

type AddressStream =
    Pin<Box<dyn tokio_stream::Stream<Item = Result<proto::NodeAddress, Status>> + Send>>;

struct Subscribe(TopicSubscriptions);

impl tonic::server::ServerStreamingService<mp::ConsensusTopicQuery> for Subscribe {
    type Response = mp::ConsensusTopicResponse;
    type ResponseStream = MessageStream;
    type Future = BoxFuture<Response<MessageStream>, Status>;

    fn call(&mut self, request: Request<mp::ConsensusTopicQuery>) -> Self::Future {
        let answer = self.0.open(request.get_ref()).map(Response::new);
        Box::pin(async move { answer })
    }
}

struct GetNodes(MirrorNetwork);

impl tonic::server::ServerStreamingService<mp::AddressBookQuery> for GetNodes {
    type Response = proto::NodeAddress;
    type ResponseStream = AddressStream;
    type Future = BoxFuture<Response<AddressStream>, Status>;

    fn call(&mut self, request: Request<mp::AddressBookQuery>) -> Self::Future {
        let answer = self.0.nodes(request.get_ref()).map(Response::new);
        Box::pin(async move { answer })
    }
}

/// gRPC's answer to a method no service here has.
fn unimplemented() -> http::Response<tonic::body::BoxBody> {
    let mut response = http::Response::new(empty_body());
    let headers = response.headers_mut();
    headers.insert("grpc-status", (tonic::Code::Unimplemented as i32).into());
    headers.insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/grpc"),
    );
    response
}

macro_rules! streaming_service {
    ($service:ty, $path:literal, $method:ident) => {
        impl<B> Service<http::Request<B>> for $service
        where
            B: Body + Send + 'static,
            B::Error: Into<StdError> + Send + 'static,
        {
            type Response = http::Response<tonic::body::BoxBody>;
            type Error = std::convert::Infallible;
            type Future = BoxFuture<Self::Response, Self::Error>;

            fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
                Poll::Ready(Ok(()))
            }

            fn call(&mut self, request: http::Request<B>) -> Self::Future {
                if request.uri().path() != $path {
                    return Box::pin(async { Ok(unimplemented()) });
                }
                let method = $method(self.clone());
                Box::pin(async move {
                    let mut grpc = tonic::server::Grpc::new(tonic::codec::ProstCodec::default());
                    Ok(grpc.server_streaming(method, request).await)
                })
            }
        }
    };
}

streaming_service!(
    TopicSubscriptions,
    "/com.hedera.mirror.api.proto.ConsensusService/subscribeTopic",
    Subscribe
);
streaming_service!(
    MirrorNetwork,
    "/com.hedera.mirror.api.proto.NetworkService/getNodes",
    GetNodes
);
