//! The address-book service (HIP-869 and registered nodes): NodeCreate / NodeUpdate /
//! NodeDelete for consensus nodes, and RegisteredNodeCreate / Update / Delete for the block
//! nodes, mirror nodes and relays a network lists. Checks follow the network's
//! `AddressBookValidator`; the nodes live in `Ledger::nodes` and
//! `Ledger::registered_nodes` and are listed by the mirror (`/network/registered-nodes`).
//! Creating a consensus node adds it to the state only: this emulator stays one node.

use super::{Ctx, Outcome};
use crate::state::keys::is_valid;
use crate::state::ledger::{account_num, KeyBytes, Ledger, NodeRecord, RegisteredNodeRecord};
use hedera_proto::services as proto;
use proto::registered_service_endpoint::Address;
use proto::ResponseCodeEnum as Code;

/// Most gossip and service endpoints of a node (`nodes.maxGossipEndpoint`,
/// `nodes.maxServiceEndpoint`).
const MAX_GOSSIP_ENDPOINTS: usize = 10;
const MAX_SERVICE_ENDPOINTS: usize = 8;
/// Most endpoints of a registered node.
const MAX_REGISTERED_ENDPOINTS: usize = 50;
/// Longest node description, in UTF-8 bytes (`nodes.nodeMaxDescriptionUtf8Bytes`).
const MAX_DESCRIPTION_BYTES: usize = 100;
/// Longest domain name of an endpoint (`nodes.maxFqdnSize`).
const MAX_FQDN_BYTES: usize = 250;
/// Most consensus and registered nodes (`nodes.maxNumber`): state a caller fills is bounded.
const MAX_NODES: usize = 100;
const MAX_REGISTERED_NODES: usize = 100;

/// Accounts whose payments authorise council-only transactions (the treasury and the
/// system admin).
const PRIVILEGED_PAYERS: [u64; 2] = [2, 50];

fn privileged(ctx: &Ctx<'_>) -> bool {
    PRIVILEGED_PAYERS.contains(&ctx.payer)
}

/// Checks that need no state, answered at precheck.
pub fn pure_check_node_create(body: &proto::NodeCreateTransactionBody) -> Result<(), Code> {
    if body.account_id.is_none() {
        return Err(Code::InvalidNodeAccountId);
    }
    if body.gossip_ca_certificate.is_empty() {
        return Err(Code::InvalidGossipCaCertificate);
    }
    if body.admin_key.is_none() {
        return Err(Code::KeyRequired);
    }
    Ok(())
}

pub fn pure_check_registered_create(
    body: &proto::RegisteredNodeCreateTransactionBody,
) -> Result<(), Code> {
    if body.admin_key.is_none() {
        return Err(Code::KeyRequired);
    }
    Ok(())
}

fn check_description(description: &str) -> Result<(), Code> {
    if description.len() > MAX_DESCRIPTION_BYTES || description.contains('\0') {
        return Err(Code::InvalidNodeDescription);
    }
    Ok(())
}

/// A consensus node's endpoint: an IPv4 address or a domain name, not both.
fn check_endpoint(endpoint: &proto::ServiceEndpoint) -> Result<(), Code> {
    let has_ip = !endpoint.ip_address_v4.is_empty();
    let has_name = !endpoint.domain_name.is_empty();
    match (has_ip, has_name) {
        (true, true) => Err(Code::IpFqdnCannotBeSetForSameEndpoint),
        (false, false) => Err(Code::InvalidEndpoint),
        (true, false) if endpoint.ip_address_v4.len() != 4 => Err(Code::InvalidIpv4Address),
        (false, true) if endpoint.domain_name.len() > MAX_FQDN_BYTES => Err(Code::FqdnSizeTooLarge),
        _ => Ok(()),
    }
}

fn check_endpoints(
    endpoints: &[proto::ServiceEndpoint],
    max: usize,
    empty: Code,
    too_many: Code,
) -> Result<(), Code> {
    if endpoints.is_empty() {
        return Err(empty);
    }
    if endpoints.len() > max {
        return Err(too_many);
    }
    endpoints.iter().try_for_each(check_endpoint)
}

/// A registered node's endpoints: 1 to 50, each with an address (IPv4 or IPv6, or a domain
/// name; none at all is `INVALID_REGISTERED_ENDPOINT`, a malformed one
/// `INVALID_REGISTERED_ENDPOINT_ADDRESS`), a port and a type.
fn check_registered_endpoints(endpoints: &[proto::RegisteredServiceEndpoint]) -> Result<(), Code> {
    if endpoints.is_empty() {
        return Err(Code::InvalidRegisteredEndpoint);
    }
    if endpoints.len() > MAX_REGISTERED_ENDPOINTS {
        return Err(Code::RegisteredEndpointsExceededLimit);
    }
    for endpoint in endpoints {
        match &endpoint.address {
            Some(Address::IpAddress(ip)) if ip.len() == 4 || ip.len() == 16 => {}
            Some(Address::DomainName(name)) if !name.is_empty() && name.len() <= MAX_FQDN_BYTES => {
            }
            None => return Err(Code::InvalidRegisteredEndpoint),
            Some(_) => return Err(Code::InvalidRegisteredEndpointAddress),
        }
        if endpoint.port > u32::from(u16::MAX) {
            return Err(Code::InvalidRegisteredEndpoint);
        }
        if endpoint.endpoint_type.is_none() {
            return Err(Code::InvalidRegisteredEndpointType);
        }
    }
    Ok(())
}

/// Every registered node id exists.
fn check_associations(ledger: &Ledger, ids: &[u64]) -> Result<(), Code> {
    if ids
        .iter()
        .all(|id| ledger.registered_nodes.contains_key(id))
    {
        Ok(())
    } else {
        Err(Code::InvalidRegisteredNodeId)
    }
}

fn check_admin_key(key: &proto::Key) -> Result<(), Code> {
    if is_valid(key) {
        Ok(())
    } else {
        Err(Code::InvalidAdminKey)
    }
}

/// A live account for a node (`INVALID_NODE_ACCOUNT_ID`), not another live node's.
fn node_account(
    ledger: &Ledger,
    id: Option<&proto::AccountId>,
    node: Option<u64>,
) -> Result<(), Code> {
    let num = id
        .and_then(account_num)
        .filter(|n| ledger.live_account(*n).is_some())
        .ok_or(Code::InvalidNodeAccountId)?;
    let taken = ledger.nodes.iter().any(|(id, record)| {
        Some(*id) != node
            && !record.deleted
            && record.state().account_id.as_ref().and_then(account_num) == Some(num)
    });
    if taken {
        return Err(Code::AccountIsLinkedToANode);
    }
    Ok(())
}

fn with_node(mut outcome: Outcome, node: u64) -> Outcome {
    outcome.receipt.node_id = Some(node);
    outcome
}

fn with_registered(mut outcome: Outcome, node: u64) -> Outcome {
    outcome.receipt.registered_node_id = Some(node);
    outcome
}

/// NodeCreate: the council's (a privileged payer's), signed by the new node's admin key.
pub fn create_node(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    body: &proto::NodeCreateTransactionBody,
) -> Result<Outcome, Code> {
    if !privileged(ctx) {
        return Err(Code::Unauthorized);
    }
    let admin = body.admin_key.as_ref().ok_or(Code::KeyRequired)?;
    check_admin_key(admin)?;
    ctx.require(&KeyBytes::from_proto(admin))?;
    node_account(ledger, body.account_id.as_ref(), None)?;
    check_description(&body.description)?;
    check_endpoints(
        &body.gossip_endpoint,
        MAX_GOSSIP_ENDPOINTS,
        Code::InvalidGossipEndpoint,
        Code::GossipEndpointsExceededLimit,
    )?;
    check_endpoints(
        &body.service_endpoint,
        MAX_SERVICE_ENDPOINTS,
        Code::InvalidServiceEndpoint,
        Code::ServiceEndpointsExceededLimit,
    )?;
    check_associations(ledger, &body.associated_registered_node)?;
    if ledger.nodes.len() >= MAX_NODES {
        return Err(Code::MaxNodesCreated);
    }
    let id = ledger.nodes.keys().next_back().map_or(0, |last| last + 1);
    ledger.nodes.insert(id, NodeRecord::new(body));
    Ok(with_node(Outcome::success(), id))
}

fn live_node(ledger: &Ledger, id: u64) -> Result<proto::NodeCreateTransactionBody, Code> {
    match ledger.nodes.get(&id) {
        None => Err(Code::InvalidNodeId),
        Some(record) if record.deleted => Err(Code::NodeDeleted),
        Some(record) => Ok(record.state()),
    }
}

/// NodeUpdate: the node's admin key signs (and a new admin key too); every field given
/// replaces the node's.
pub fn update_node(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    body: &proto::NodeUpdateTransactionBody,
) -> Result<Outcome, Code> {
    let mut node = live_node(ledger, body.node_id)?;
    let admin = node.admin_key.clone().unwrap_or_default();
    ctx.require(&KeyBytes::from_proto(&admin))?;
    if let Some(new_admin) = &body.admin_key {
        check_admin_key(new_admin)?;
        ctx.require(&KeyBytes::from_proto(new_admin))?;
        node.admin_key = Some(new_admin.clone());
    }
    if let Some(account) = &body.account_id {
        node_account(ledger, Some(account), Some(body.node_id))?;
        node.account_id = Some(account.clone());
    }
    if let Some(description) = &body.description {
        check_description(description)?;
        node.description = description.clone();
    }
    if !body.gossip_endpoint.is_empty() {
        check_endpoints(
            &body.gossip_endpoint,
            MAX_GOSSIP_ENDPOINTS,
            Code::InvalidGossipEndpoint,
            Code::GossipEndpointsExceededLimit,
        )?;
        node.gossip_endpoint = body.gossip_endpoint.clone();
    }
    if !body.service_endpoint.is_empty() {
        check_endpoints(
            &body.service_endpoint,
            MAX_SERVICE_ENDPOINTS,
            Code::InvalidServiceEndpoint,
            Code::ServiceEndpointsExceededLimit,
        )?;
        node.service_endpoint = body.service_endpoint.clone();
    }
    if let Some(certificate) = &body.gossip_ca_certificate {
        if certificate.is_empty() {
            return Err(Code::InvalidGossipCaCertificate);
        }
        node.gossip_ca_certificate = certificate.clone();
    }
    if let Some(hash) = &body.grpc_certificate_hash {
        node.grpc_certificate_hash = hash.clone();
    }
    if let Some(decline) = body.decline_reward {
        node.decline_reward = decline;
    }
    if let Some(proxy) = &body.grpc_proxy_endpoint {
        // An endpoint with neither address nor name removes the proxy.
        node.grpc_proxy_endpoint = if proxy.ip_address_v4.is_empty() && proxy.domain_name.is_empty()
        {
            None
        } else {
            Some(proxy.clone())
        };
    }
    if let Some(list) = &body.associated_registered_node_list {
        check_associations(ledger, &list.associated_registered_node)?;
        node.associated_registered_node = list.associated_registered_node.clone();
    }
    ledger.nodes.insert(body.node_id, NodeRecord::new(&node));
    Ok(with_node(Outcome::success(), body.node_id))
}

/// NodeDelete: the council's, or the node's admin key's.
pub fn delete_node(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    body: &proto::NodeDeleteTransactionBody,
) -> Result<Outcome, Code> {
    let node = live_node(ledger, body.node_id)?;
    if !privileged(ctx) {
        ctx.require(&KeyBytes::from_proto(&node.admin_key.unwrap_or_default()))?;
    }
    if let Some(record) = ledger.nodes.get_mut(&body.node_id) {
        record.deleted = true;
    }
    Ok(with_node(Outcome::success(), body.node_id))
}

/// RegisteredNodeCreate: signed by its admin key.
pub fn create_registered(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    body: &proto::RegisteredNodeCreateTransactionBody,
) -> Result<Outcome, Code> {
    let admin = body.admin_key.as_ref().ok_or(Code::KeyRequired)?;
    check_admin_key(admin)?;
    ctx.require(&KeyBytes::from_proto(admin))?;
    check_description(&body.description)?;
    check_registered_endpoints(&body.service_endpoint)?;
    if ledger.registered_nodes.len() >= MAX_REGISTERED_NODES {
        return Err(Code::MaxRegisteredNodesExceeded);
    }
    let id = ledger.next_registered_node;
    ledger.next_registered_node += 1;
    ledger
        .registered_nodes
        .insert(id, RegisteredNodeRecord::new(body));
    Ok(with_registered(Outcome::success(), id))
}

fn registered(
    ledger: &Ledger,
    id: u64,
) -> Result<proto::RegisteredNodeCreateTransactionBody, Code> {
    ledger
        .registered_nodes
        .get(&id)
        .map(RegisteredNodeRecord::state)
        .ok_or(Code::InvalidRegisteredNodeId)
}

/// RegisteredNodeUpdate: its admin key signs, and a new admin key too.
pub fn update_registered(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    body: &proto::RegisteredNodeUpdateTransactionBody,
) -> Result<Outcome, Code> {
    let mut node = registered(ledger, body.registered_node_id)?;
    ctx.require(&KeyBytes::from_proto(
        &node.admin_key.clone().unwrap_or_default(),
    ))?;
    if let Some(new_admin) = &body.admin_key {
        check_admin_key(new_admin)?;
        ctx.require(&KeyBytes::from_proto(new_admin))?;
        node.admin_key = Some(new_admin.clone());
    }
    if let Some(description) = &body.description {
        check_description(description)?;
        node.description = description.clone();
    }
    if !body.service_endpoint.is_empty() {
        check_registered_endpoints(&body.service_endpoint)?;
        node.service_endpoint = body.service_endpoint.clone();
    }
    ledger
        .registered_nodes
        .insert(body.registered_node_id, RegisteredNodeRecord::new(&node));
    Ok(with_registered(Outcome::success(), body.registered_node_id))
}

/// RegisteredNodeDelete: its admin key signs; a node a consensus node still lists stays
/// (`REGISTERED_NODE_STILL_ASSOCIATED`).
pub fn delete_registered(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    body: &proto::RegisteredNodeDeleteTransactionBody,
) -> Result<Outcome, Code> {
    let id = body.registered_node_id;
    let node = registered(ledger, id)?;
    ctx.require(&KeyBytes::from_proto(&node.admin_key.unwrap_or_default()))?;
    let associated = ledger
        .nodes
        .values()
        .any(|n| !n.deleted && n.state().associated_registered_node.contains(&id));
    if associated {
        return Err(Code::RegisteredNodeStillAssociated);
    }
    ledger.registered_nodes.remove(&id);
    Ok(with_registered(Outcome::success(), id))
}
