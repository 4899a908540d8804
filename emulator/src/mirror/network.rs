//! The mirror's `/network/*`: `registered-nodes`, the registered nodes of the address book
//! (block nodes, mirror nodes, RPC relays, general services) in the mirror's JSON, a page at a
//! time (`limit` 1–100, default 25; `links.next` continues after the last id), and
//! `exchangerate`, the rates in force (`ledger::rates`).

use super::{bad_request, Shared};
use crate::node::ingest::Node;
use crate::state::keys::mirror_key;
use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use axum::Json;
use hedera_proto::services as proto;
use proto::registered_service_endpoint::{Address, EndpointType};
use serde_json::{json, Value};
use std::collections::HashMap;

/// The id filter of the next page's link.
const AFTER: &str = "registered_node.id";

fn endpoint_json(endpoint: &proto::RegisteredServiceEndpoint) -> Value {
    let (ip, domain) = match &endpoint.address {
        Some(Address::IpAddress(ip)) => (Some(ip_text(ip)), None),
        Some(Address::DomainName(name)) => (None, Some(name.clone())),
        None => (None, None),
    };
    let mut out = json!({
        "ip_address": ip,
        "domain_name": domain,
        "port": endpoint.port,
        "requires_tls": endpoint.requires_tls,
    });
    let (kind, detail) = match &endpoint.endpoint_type {
        Some(EndpointType::BlockNode(block)) => {
            let apis: Vec<&str> = block
                .endpoint_api
                .iter()
                .map(|api| {
                    proto::registered_service_endpoint::block_node_endpoint::BlockNodeApi::try_from(
                        *api,
                    )
                    .map_or("UNRECOGNIZED", |a| a.as_str_name())
                })
                .collect();
            ("BLOCK_NODE", ("block_node", json!({"endpoint_apis": apis})))
        }
        Some(EndpointType::MirrorNode(_)) => ("MIRROR_NODE", ("mirror_node", json!({}))),
        Some(EndpointType::RpcRelay(_)) => ("RPC_RELAY", ("rpc_relay", json!({}))),
        Some(EndpointType::GeneralService(general)) => (
            "GENERAL_SERVICE",
            (
                "general_service",
                json!({"description": general.description}),
            ),
        ),
        None => ("UNKNOWN", ("unknown", Value::Null)),
    };
    out["type"] = json!(kind);
    out[detail.0] = detail.1;
    out
}

fn ip_text(ip: &[u8]) -> String {
    match ip.len() {
        4 => std::net::Ipv4Addr::new(ip[0], ip[1], ip[2], ip[3]).to_string(),
        16 => {
            let mut octets = [0u8; 16];
            octets.copy_from_slice(ip);
            std::net::Ipv6Addr::from(octets).to_string()
        }
        _ => hex::encode(ip),
    }
}

/// One page of registered nodes: `Err(param)` names a malformed parameter.
pub fn page(node: &Node, query: &HashMap<String, String>) -> Result<Value, &'static str> {
    let limit = match query.get("limit") {
        None => 25,
        Some(text) => match text.parse::<usize>() {
            Ok(n) if (1..=100).contains(&n) => n,
            _ => return Err("limit"),
        },
    };
    let after = match query.get(AFTER) {
        None => None,
        Some(text) => match text.strip_prefix("gt:").and_then(|n| n.parse::<u64>().ok()) {
            Some(n) => Some(n),
            None => return Err(AFTER),
        },
    };
    let ledger = node.ledger();
    let mut page: Vec<Value> = Vec::with_capacity(limit);
    let mut last = None;
    let mut more = false;
    for (id, record) in ledger
        .registered_nodes
        .range(after.map_or(0, |a| a.saturating_add(1))..)
    {
        if page.len() == limit {
            more = true;
            break;
        }
        let state = record.state();
        page.push(json!({
            "registered_node_id": id,
            "admin_key": state.admin_key.as_ref().map_or(Value::Null, mirror_key),
            "description": state.description,
            "service_endpoints": state.service_endpoint.iter().map(endpoint_json).collect::<Vec<_>>(),
        }));
        last = Some(*id);
    }
    let next = match (more, last) {
        (true, Some(last)) => json!(format!(
            "/api/v1/network/registered-nodes?limit={limit}&{AFTER}=gt:{last}"
        )),
        _ => Value::Null,
    };
    Ok(json!({"registered_nodes": page, "links": {"next": next}}))
}

pub(super) async fn registered_nodes(
    State(node): Shared,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    match page(&node, &q) {
        Ok(page) => Json(page).into_response(),
        Err(parameter) => bad_request(parameter),
    }
}

pub(super) async fn exchange_rate(State(node): Shared) -> Response {
    let ledger = node.ledger();
    // The rates in force now (the clock consensus follows), not at the last transaction.
    let now = crate::state::ledger::Ts::now().seconds;
    let set = ledger.exchange_rates(now.max(ledger.last_consensus.seconds));
    let rate = |r: crate::state::ledger::Rate| json!({"cent_equivalent": r.cent_equiv, "expiration_time": r.expiration, "hbar_equivalent": r.hbar_equiv});
    Json(json!({
        "current_rate": rate(set.current),
        "next_rate": rate(set.next),
        "timestamp": ledger.last_consensus.to_string(),
    }))
    .into_response()
}
