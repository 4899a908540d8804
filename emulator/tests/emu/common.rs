//! Shared by the emulator's SDK tests: a started emulator with an operator client, and a
//! minimal mirror GET.
#![allow(dead_code, unused_macros)]

/// Execute a transaction and fetch its receipt; a precheck or receipt failure becomes
/// `Err(status)`.
macro_rules! run {
    ($tx:expr, $client:expr $(,)?) => {{
        let client: &hedera::Client = $client;
        match $tx.execute(client).await {
            Err(hedera::Error::TransactionPreCheckStatus { status, .. }) => {
                Err::<hedera::TransactionReceipt, hedera::Status>(status)
            }
            // Chunked bodies (file append, long messages) wait for each chunk's receipt.
            Err(hedera::Error::ReceiptStatus { status, .. }) => Err(status),
            Err(e) => panic!("{e:?}"),
            Ok(response) => match response.get_receipt(client).await {
                Ok(receipt) => Ok(receipt),
                Err(hedera::Error::ReceiptStatus { status, .. }) => Err(status),
                Err(e) => panic!("{e:?}"),
            },
        }
    }};
}

use hak_emu::{Emulator, EmulatorConfig};
use hedera::{AccountId, Client};
use serde_json::Value;
use std::collections::HashMap;
use std::io::{Read, Write};
use std::time::Duration;

pub async fn start() -> (Emulator, Client) {
    let emu = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let client = Client::for_network(HashMap::from([(
        emu.grpc_addr.to_string(),
        AccountId::new(0, 0, 3),
    )]))
    .unwrap();
    let (id, key) = emu.operator();
    client.set_operator(id, key);
    client.set_min_backoff(Duration::from_millis(5));
    client.set_max_backoff(Duration::from_millis(50));
    (emu, client)
}

/// The documented dev key of genesis account `0.0.n` (0.0.1001 … 0.0.1005).
pub fn key_of(n: u64) -> hedera::PrivateKey {
    hak_emu::genesis::dev_key_of(n).expect("a genesis account with a dev key")
}

/// GET `/api/v1{path}` from the emulator's mirror: (HTTP status, JSON body).
pub async fn mirror(emu: &Emulator, path: &str) -> (u16, Value) {
    let addr = emu.mirror_addr;
    let path = path.to_owned();
    tokio::task::spawn_blocking(move || http_get(addr, &path))
        .await
        .unwrap()
}

/// A minimal blocking HTTP/1.1 GET (the tests need no HTTP client crate).
pub fn http_get(addr: std::net::SocketAddr, path: &str) -> (u16, Value) {
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "GET /api/v1{path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    read_response(stream)
}

/// An HTTP/1.1 response read to its end: (status, JSON body).
fn read_response(mut stream: std::net::TcpStream) -> (u16, Value) {
    let mut text = String::new();
    stream.read_to_string(&mut text).unwrap();
    let status = text[9..12].parse().unwrap();
    let body = dechunk(text.split_once("\r\n\r\n").unwrap().1);
    (status, serde_json::from_str(&body).unwrap_or(Value::Null))
}

/// Undo HTTP/1.1 chunked transfer encoding when present.
pub fn dechunk(body: &str) -> String {
    if body.starts_with('{') || body.starts_with('[') {
        return body.to_owned();
    }
    let mut out = String::new();
    let mut rest = body;
    while let Some((size, tail)) = rest.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 {
            break;
        }
        out.push_str(&tail[..n]);
        rest = &tail[n + 2..];
    }
    out
}

/// POST JSON to `/api/v1{path}` on the emulator's mirror: (HTTP status, JSON body).
pub async fn mirror_post(emu: &Emulator, path: &str, body: Value) -> (u16, Value) {
    let addr = emu.mirror_addr;
    let path = path.to_owned();
    tokio::task::spawn_blocking(move || {
        let mut stream = std::net::TcpStream::connect(addr).unwrap();
        let body = body.to_string();
        write!(
            stream,
            "POST /api/v1{path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        read_response(stream)
    })
    .await
    .unwrap()
}
