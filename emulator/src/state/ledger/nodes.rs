//! The address book: consensus nodes and registered nodes, with the genesis node.

use super::ids::account_id;
use super::values::hex_bytes;
use hedera_proto::services as proto;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A consensus node: its state as a `NodeCreateTransactionBody` (protobuf, so every field
/// the HAPI defines is kept and answered as given), and whether it was deleted.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct NodeRecord {
    #[serde(with = "hex_bytes")]
    pub body: Vec<u8>,
    #[serde(default)]
    pub deleted: bool,
}

impl NodeRecord {
    pub fn new(body: &proto::NodeCreateTransactionBody) -> Self {
        use prost::Message;
        NodeRecord {
            body: body.encode_to_vec(),
            deleted: false,
        }
    }

    pub fn state(&self) -> proto::NodeCreateTransactionBody {
        use prost::Message;
        proto::NodeCreateTransactionBody::decode(self.body.as_slice()).unwrap_or_default()
    }
}

/// A registered node: its state as a `RegisteredNodeCreateTransactionBody` (protobuf).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RegisteredNodeRecord {
    #[serde(with = "hex_bytes")]
    pub body: Vec<u8>,
}

impl RegisteredNodeRecord {
    pub fn new(body: &proto::RegisteredNodeCreateTransactionBody) -> Self {
        use prost::Message;
        RegisteredNodeRecord {
            body: body.encode_to_vec(),
        }
    }

    pub fn state(&self) -> proto::RegisteredNodeCreateTransactionBody {
        use prost::Message;
        proto::RegisteredNodeCreateTransactionBody::decode(self.body.as_slice()).unwrap_or_default()
    }
}

/// The genesis address book: node 0 is this node, account 0.0.3, administered by the
/// treasury's key (as a local node's genesis nodes are).
pub fn genesis_nodes() -> BTreeMap<u64, NodeRecord> {
    let admin = crate::state::keys::proto_key(&crate::state::genesis::treasury_key().public_key());
    let node = proto::NodeCreateTransactionBody {
        account_id: Some(account_id(crate::state::genesis::NODE_ACCOUNT)),
        description: "hak-emu".into(),
        admin_key: Some(admin),
        ..Default::default()
    };
    BTreeMap::from([(0, NodeRecord::new(&node))])
}

pub(super) fn first_registered_node() -> u64 {
    1
}
