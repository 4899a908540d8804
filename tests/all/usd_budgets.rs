//! HBAR capped in US dollars at the network's exchange rate: spend-limit's dollar caps read
//! the rate through the `rates` capability (the mirror's `/network/exchangerate` of the local
//! network inside hak), the treasury changes the rate mid-window with a FileUpdate of 0.0.112
//! as the network's own rate updates do, and a window keeps what each call spent at the rate
//! of its time. Without the grant, a mirror that cannot be reached, or one that holds the
//! request, the call is blocked: never allowed for want of a rate.

use crate::library::{allowed, blocked};
use hak_host::Host;
use hak_tests::*;
use hedera_proto::services as proto;
use prost::Message;
use serde_json::{json, Value};
use std::time::Duration;

fn transfer(host: &Host, hbar: u64) -> Value {
    host.default_session()
        .call(
            "transfer_hbar_tool",
            &json!({"transfers": [{"accountId": "0.0.1002", "amount": hbar}]}).to_string(),
        )
        .unwrap()
}

/// A host on `base`'s local network with spend-limit's dollar caps (`extra`: more of the
/// plugin's entry, e.g. its capabilities) and the rate kept at most a second.
fn dollar_host(base: &Host, mirror: Option<&str>, extra: &str) -> Host {
    let mut header = same_network(base);
    if let Some(url) = mirror {
        let emu = base.local_network().unwrap();
        header = header.replace(&emu.mirror_url(), url);
    }
    let header = header.replace("\n\n[context]", "\nrates_refresh_seconds = 1\n\n[context]");
    let entry = plugin_entry(
        "spend-limit",
        "rust/spend-limit",
        &format!(
            "config = {{ maxUsdPerRecipient = \"1.00\", dailyUsdBudget = \"3.00\" }}\n{extra}"
        ),
    );
    start(&format!("{header}{entry}")).0
}

/// The treasury writes 0.0.112: `cents` US cents per `hbars` HBAR, for the next hour.
fn write_rate(base: &Host, cents: i32, hbars: i32) {
    let emu = base.local_network().unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let client = hedera::Client::for_network(std::collections::HashMap::from([(
            emu.grpc_addr.to_string(),
            hedera::AccountId::new(0, 0, 3),
        )]))
        .unwrap();
        client.set_operator(
            hedera::AccountId::new(0, 0, 2),
            hak_emu::genesis::treasury_key(),
        );
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs() as i64;
        let rate = |expiry: i64| proto::ExchangeRate {
            hbar_equiv: hbars,
            cent_equiv: cents,
            expiration_time: Some(proto::TimestampSeconds { seconds: expiry }),
        };
        let contents = proto::ExchangeRateSet {
            current_rate: Some(rate(now + 3600)),
            next_rate: Some(rate(now + 7200)),
        }
        .encode_to_vec();
        let receipt = hedera::FileUpdateTransaction::new()
            .file_id(hedera::FileId::new(0, 0, 112))
            .contents(contents)
            .execute(&client)
            .await
            .unwrap()
            .get_receipt(&client)
            .await
            .unwrap();
        assert_eq!(receipt.status, hedera::Status::Success);
    });
}

#[test]
fn dollar_caps_follow_the_networks_rate_and_a_window_keeps_each_calls_own() {
    let base = start(LOCAL).0;
    // (A generous deadline: the first call may read the rate itself on a loaded machine.)
    let host = dollar_host(
        &base,
        None,
        "capabilities = [\"rates\"]\nlimits = { deadline_ms = 5000 }",
    );
    // The genesis rate, 12 ¢ per ℏ: 9 ℏ is US$1.08, over the US$1.00 per recipient.
    assert_eq!(
        blocked(&transfer(&host, 9), "SPEND_LIMIT_USD_RECIPIENT"),
        "9 HBAR (about US$1.08 at 360000 ¢ per 30000 ℏ) to 0.0.1002 exceeds the per-recipient limit of US$1.00"
    );
    allowed(&transfer(&host, 8)); // US$0.96
    allowed(&transfer(&host, 8)); // US$1.92 in the window
                                  // HBAR halves: 6 ¢ per ℏ from now on. Past the refresh period a call still gets the
                                  // kept rate while the host reads it again, and the next ones the new one: 9 ℏ is then
                                  // US$0.54, within the per-recipient cap (a call blocked there reserves nothing).
    write_rate(&base, 6, 1);
    std::thread::sleep(Duration::from_millis(1_100));
    let mut tries = 0;
    loop {
        let out = transfer(&host, 9);
        if out["raw"]["status"] == "SUCCESS" {
            break; // US$2.46
        }
        blocked(&out, "SPEND_LIMIT_USD_RECIPIENT");
        tries += 1;
        assert!(tries < 100, "the new rate is never read");
        std::thread::sleep(Duration::from_millis(100));
    }
    allowed(&transfer(&host, 9)); // US$3.00: the budget exactly
                                  // Had the window re-priced its 16 ℏ at the new rate (US$0.96), this would fit.
    let over = blocked(&transfer(&host, 1), "SPEND_LIMIT_USD_BUDGET");
    assert_eq!(
        over,
        "1 HBAR (about US$0.06 at 6 ¢ per 1 ℏ) would exceed the budget of US$3.00 per 86400 s (US$3.00 already spent)"
    );
}

#[test]
fn without_a_rate_the_dollar_caps_block_with_why() {
    let base = start(LOCAL).0;
    // Not granted.
    let host = dollar_host(&base, None, "");
    let why = blocked(&transfer(&host, 1), "SPEND_LIMIT_RATE_UNAVAILABLE");
    assert!(
        why.contains("capability rates is not granted to plugin spend-limit"),
        "{why}"
    );
    // A mirror nobody answers at.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = format!("http://{}/api/v1", closed.local_addr().unwrap());
    drop(closed);
    // (time for the mirror client's retries of a refused connection).
    let host = dollar_host(
        &base,
        Some(&dead),
        "capabilities = [\"rates\"]\nlimits = { deadline_ms = 3000 }",
    );
    let why = blocked(&transfer(&host, 1), "SPEND_LIMIT_RATE_UNAVAILABLE");
    assert!(
        why.contains("no exchange rate: Network error fetching"),
        "{why}"
    );
    // A mirror that takes the request and never answers: the call ends at the plugin's
    // deadline, failed closed.
    let stalled = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/api/v1", stalled.local_addr().unwrap());
    let host = dollar_host(
        &base,
        Some(&url),
        "capabilities = [\"rates\"]\nlimits = { deadline_ms = 300 }",
    );
    let started = std::time::Instant::now();
    let out = transfer(&host, 1);
    assert!(
        out["raw"]["errorCode"] == "PLUGIN_FAILED" || out["raw"]["errorCode"] == "POLICY_BLOCKED",
        "{out}"
    );
    assert_ne!(out["raw"]["status"], "SUCCESS", "{out}");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "held {:?}",
        started.elapsed()
    );
    drop(stalled);
}
