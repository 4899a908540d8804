//! Transaction fees that grow with the body, as a real network's do, driven by the real Rust
//! SDK and read back from the records: extra HBAR legs, token transfer lists, signatures and
//! bytes each cost more than the kind's base fee. (The high-volume multiplier is checked
//! through the JS SDK, `js_sdk.rs`: the Rust SDK 0.43 cannot set the flag.)

use crate::common::start;
use hak_emu::genesis::{dev_key, KeyKind};
use hedera::{
    AccountId, Client, FileCreateTransaction, Hbar, TokenCreateTransaction, TransactionRecord,
    TransferTransaction,
};

fn id(n: u64) -> AccountId {
    AccountId::new(0, 0, n)
}

async fn fee_of(tx: &mut TransferTransaction, client: &Client) -> i64 {
    let record: TransactionRecord = tx
        .execute(client)
        .await
        .unwrap()
        .get_record(client)
        .await
        .unwrap();
    record.transaction_fee.to_tinybars()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transfer_pays_for_each_extra_leg_token_list_and_signature() {
    let (emu, client) = start().await;
    let base = hak_emu::kind::Kind::CryptoTransfer.fee();
    let mut plain = TransferTransaction::new();
    plain
        .hbar_transfer(id(1001), Hbar::from_tinybars(-2))
        .hbar_transfer(id(1004), Hbar::from_tinybars(2));
    assert_eq!(fee_of(&mut plain, &client).await, base);

    // Two more HBAR legs.
    let mut wide = TransferTransaction::new();
    wide.hbar_transfer(id(1001), Hbar::from_tinybars(-3))
        .hbar_transfer(id(1002), Hbar::from_tinybars(1))
        .hbar_transfer(id(1003), Hbar::from_tinybars(1))
        .hbar_transfer(id(1004), Hbar::from_tinybars(1));
    let wide_fee = fee_of(&mut wide, &client).await;
    assert!(wide_fee > base, "{wide_fee} for 4 legs vs {base}");

    // A second signature (0.0.1002 sends too).
    let mut cosigned = TransferTransaction::new();
    cosigned
        .hbar_transfer(id(1001), Hbar::from_tinybars(-1))
        .hbar_transfer(id(1002), Hbar::from_tinybars(-1))
        .hbar_transfer(id(1004), Hbar::from_tinybars(2))
        .freeze_with(&client)
        .unwrap()
        .sign(dev_key(KeyKind::Ed25519, 0x10, 0x02));
    let cosigned_fee = fee_of(&mut cosigned, &client).await;
    assert!(
        cosigned_fee > fee_of(&mut plain_three_legs(), &client).await,
        "a second signature costs more"
    );

    // A token transfer list.
    let token = TokenCreateTransaction::new()
        .name("Fee")
        .symbol("FEE")
        .initial_supply(10)
        .treasury_account_id(id(1001))
        .execute(&client)
        .await
        .unwrap()
        .get_receipt(&client)
        .await
        .unwrap()
        .token_id
        .unwrap();
    let mut with_token = TransferTransaction::new();
    with_token
        .hbar_transfer(id(1001), Hbar::from_tinybars(-2))
        .hbar_transfer(id(1004), Hbar::from_tinybars(2))
        .token_transfer(token, id(1001), -1)
        .token_transfer(token, id(1004), 1);
    assert!(fee_of(&mut with_token, &client).await > base);

    // Bytes: a 4 KiB file costs more than an empty one.
    let file_fee = |contents: Vec<u8>| {
        let client = &client;
        async move {
            let response = FileCreateTransaction::new()
                .keys([client.get_operator_public_key().unwrap()])
                .contents(contents)
                .execute(client)
                .await
                .unwrap();
            response
                .get_record(client)
                .await
                .unwrap()
                .transaction_fee
                .to_tinybars()
        }
    };
    let empty = file_fee(Vec::new()).await;
    let large = file_fee(vec![7; 4096]).await;
    assert_eq!(empty, hak_emu::kind::Kind::FileCreate.fee());
    assert!(large > empty, "{large} for 4 KiB vs {empty}");
    emu.shutdown();
}

/// Three HBAR legs, one signature: the cosigned transfer's shape without its second key.
fn plain_three_legs() -> TransferTransaction {
    let mut tx = TransferTransaction::new();
    tx.hbar_transfer(id(1001), Hbar::from_tinybars(-2))
        .hbar_transfer(id(1002), Hbar::from_tinybars(1))
        .hbar_transfer(id(1004), Hbar::from_tinybars(1));
    tx
}

/// POST `body` (protobuf) to the mirror's `/api/v1/network/fees?{query}`: (status, JSON).
async fn estimate(emu: &hak_emu::Emulator, query: &str, body: Vec<u8>) -> (u16, serde_json::Value) {
    use std::io::{Read, Write};
    let addr = emu.mirror_addr;
    let query = query.to_owned();
    tokio::task::spawn_blocking(move || {
        let mut stream = std::net::TcpStream::connect(addr).unwrap();
        write!(
            stream,
            "POST /api/v1/network/fees?{query} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/protobuf\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        )
        .unwrap();
        stream.write_all(&body).unwrap();
        let mut text = String::new();
        stream.read_to_string(&mut text).unwrap();
        let status = text[9..12].parse().unwrap();
        let json = text.split_once("\r\n\r\n").map_or("", |(_, b)| b);
        let json = crate::common::dechunk(json);
        (status, serde_json::from_str(&json).unwrap_or_default())
    })
    .await
    .unwrap()
}

/// The mirror's fee estimate (HIP-1261) of a signed transaction is, in tinycents at the
/// network's rate, exactly what the node charges it when it is submitted; its parts add up
/// as HIP-1261 says (network = node × multiplier; total = node + network + service), both
/// modes agree, and what is no transaction is a 400.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mirrors_fee_estimate_is_what_the_node_charges() {
    use prost::Message;
    let (emu, client) = start().await;
    let mut wide = TransferTransaction::new();
    wide.hbar_transfer(id(1001), Hbar::from_tinybars(-3))
        .hbar_transfer(id(1002), Hbar::from_tinybars(-1))
        .hbar_transfer(id(1003), Hbar::from_tinybars(2))
        .hbar_transfer(id(1004), Hbar::from_tinybars(2))
        .freeze_with(&client)
        .unwrap()
        .sign(dev_key(KeyKind::Ed25519, 0x10, 0x02))
        .sign_with_operator(&client)
        .unwrap();
    let list =
        hedera_proto::sdk::TransactionList::decode(wide.to_bytes().unwrap().as_slice()).unwrap();
    let body = list.transaction_list[0].encode_to_vec();
    let (status, intrinsic) = estimate(&emu, "mode=INTRINSIC", body.clone()).await;
    assert_eq!(status, 200, "{intrinsic}");
    let (_, state) = estimate(&emu, "mode=STATE&high_volume_throttle=5000", body).await;
    assert_eq!(intrinsic, state);
    let int = |v: &serde_json::Value| v.as_i64().unwrap();
    let node = int(&intrinsic["node"]["base"]);
    assert_eq!(
        int(&intrinsic["network"]["subtotal"]),
        node * int(&intrinsic["network"]["multiplier"])
    );
    let service = int(&intrinsic["service"]["base"])
        + intrinsic["service"]["extras"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| int(&e["subtotal"]))
            .sum::<i64>();
    assert_eq!(
        int(&intrinsic["total"]),
        node + int(&intrinsic["network"]["subtotal"]) + service
    );
    let legs = intrinsic["service"]["extras"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "HBAR_TRANSFERS")
        .unwrap()
        .clone();
    assert_eq!((int(&legs["count"]), int(&legs["charged"])), (4, 2));

    // Submitted as estimated: the node charges exactly that (12 tinycents a tinybar here).
    let charged = wide
        .execute(&client)
        .await
        .unwrap()
        .get_record(&client)
        .await
        .unwrap()
        .transaction_fee
        .to_tinybars();
    assert_eq!(int(&intrinsic["total"]), charged * 12, "{intrinsic}");

    let (status, refused) = estimate(&emu, "mode=STATE", b"not a transaction".to_vec()).await;
    assert_eq!(status, 400, "{refused}");
    emu.shutdown();
}
