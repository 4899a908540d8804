//! The consensus tools: create a topic, submit messages, delete it, in autonomous mode on the
//! local network and in return-bytes mode (bytes decoded).

use hak_host::{AgentContext, AgentMode};
use hak_tests::*;
use hedera::AccountId;

#[test]
fn topics_are_created_used_and_deleted_autonomously() {
    let (host, _) = start(LOCAL);
    let mut session = host.default_session();
    let out = session
        .call(
            "create_topic_tool",
            r#"{"topicMemo":"audit","adminKey":true,"transactionMemo":"t"}"#,
        )
        .unwrap();
    let topic = ok(&out)["topicId"].as_str().unwrap().to_owned();
    assert_eq!(
        out["humanMessage"],
        format!(
            "Topic created successfully with topic id {topic} and transaction id {}",
            out["raw"]["transactionId"].as_str().unwrap()
        )
    );
    let info = host.mirror_get(&format!("/topics/{topic}")).unwrap();
    assert_eq!(info["memo"], "audit");
    assert_eq!(info["admin_key"]["_type"], "ED25519");
    assert_eq!(info["auto_renew_account"], "0.0.1001");

    let out = session
        .call(
            "submit_topic_message_tool",
            &format!(r#"{{"topicId":"{topic}","message":"hello"}}"#),
        )
        .unwrap();
    ok(&out);
    assert!(out["humanMessage"]
        .as_str()
        .unwrap()
        .starts_with("Message submitted successfully with transaction id 0.0.1001@"));
    let messages = host
        .mirror_get(&format!("/topics/{topic}/messages"))
        .unwrap();
    assert_eq!(messages["messages"][0]["message"], "aGVsbG8=");

    ok(&session
        .call("delete_topic_tool", &format!(r#"{{"topicId":"{topic}"}}"#))
        .unwrap());
    let out = session
        .call(
            "submit_topic_message_tool",
            &format!(r#"{{"topicId":"{topic}","message":"late"}}"#),
        )
        .unwrap();
    assert_eq!(out["raw"]["errorCode"], "INVALID_TOPIC_ID", "{out}");
    let out = session
        .call(
            "submit_topic_message_tool",
            r#"{"topicId":"not-a-topic","message":"x"}"#,
        )
        .unwrap();
    assert_eq!(
        out["raw"]["error"],
        "Failed to execute Submit Topic Message: failed to parse entity id: not-a-topic"
    );
}

#[test]
fn a_topic_without_keys_cannot_be_deleted() {
    let (host, _) = start(LOCAL);
    let mut session = host.default_session();
    let topic = ok(&session.call("create_topic_tool", "{}").unwrap())["topicId"]
        .as_str()
        .unwrap()
        .to_owned();
    let out = session
        .call("delete_topic_tool", &format!(r#"{{"topicId":"{topic}"}}"#))
        .unwrap();
    assert_eq!(out["raw"]["errorCode"], "UNAUTHORIZED");
}

#[test]
fn return_bytes_topics_resolve_the_users_key_through_the_mirror() {
    let (host, _) = start(LOCAL);
    let context = AgentContext {
        account_id: Some(AccountId::new(0, 0, 1003)),
        mode: AgentMode::ReturnBytes,
    };
    let out = host
        .session(context)
        .call("create_topic_tool", r#"{"submitKey":true,"topicMemo":"m"}"#)
        .unwrap();
    let raw = ok(&out);
    assert_eq!(raw["type"], "TopicCreateTransaction");
    assert_eq!(raw["payerAccountId"], "0.0.1003");
    let tx: hedera::TopicCreateTransaction = decode_bytes(&out).downcast().unwrap();
    assert_eq!(tx.get_topic_memo(), "m");
    assert_eq!(
        tx.get_auto_renew_account_id(),
        Some(AccountId::new(0, 0, 1003))
    );
    // 0.0.1003 has an ECDSA key on the local network: that is the key the mirror reports.
    let submit = tx.get_submit_key().expect("submit key set");
    let hedera::Key::Single(key) = submit else {
        panic!("{submit:?}")
    };
    assert!(key.is_ecdsa());
    assert_eq!(tx.get_max_transaction_fee(), Some(hedera::Hbar::new(25)));
}

#[test]
fn topic_queries_read_info_and_messages_through_the_mirror() {
    let (host, _) = start(LOCAL);
    let mut session = host.default_session();
    let topic = ok(&session
        .call(
            "create_topic_tool",
            r#"{"topicMemo":"news","submitKey":true}"#,
        )
        .unwrap())["topicId"]
        .as_str()
        .unwrap()
        .to_owned();
    for text in ["first", "second"] {
        ok(&session
            .call(
                "submit_topic_message_tool",
                &format!(r#"{{"topicId":"{topic}","message":"{text}"}}"#),
            )
            .unwrap());
    }
    let out = session
        .call(
            "get_topic_messages_query_tool",
            &format!(r#"{{"topicId":"{topic}"}}"#),
        )
        .unwrap();
    let raw = ok(&out);
    let texts: Vec<&str> = raw["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["message"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["second", "first"], "newest first, decoded");
    let human = out["humanMessage"].as_str().unwrap();
    assert!(
        human.starts_with(&format!(
            "Messages for topic {topic}:\n  --- Messages ---\n  second - posted at: "
        )),
        "{human}"
    );
    let out = session
        .call(
            "get_topic_messages_query_tool",
            &format!(r#"{{"topicId":"{topic}","limit":1}}"#),
        )
        .unwrap();
    assert_eq!(out["raw"]["messages"].as_array().unwrap().len(), 1);
    let out = session
        .call(
            "get_topic_messages_query_tool",
            &format!(r#"{{"topicId":"{topic}","startTime":"2099-01-01T00:00:00Z"}}"#),
        )
        .unwrap();
    assert_eq!(
        out["humanMessage"],
        format!("No messages found for topic {topic}.")
    );
    let out = session
        .call(
            "get_topic_messages_query_tool",
            &format!(r#"{{"topicId":"{topic}","startTime":"yesterday"}}"#),
        )
        .unwrap();
    assert_eq!(out["raw"]["error"], "Failed to execute Get Topic Messages: Invalid parameters: Field \"startTime\" - Invalid datetime");

    let out = session
        .call(
            "get_topic_info_query_tool",
            &format!(r#"{{"topicId":"{topic}"}}"#),
        )
        .unwrap();
    let human = ok(&out);
    let message = out["humanMessage"].as_str().unwrap();
    assert!(message.starts_with(&format!("Here are the details for topic **{topic}**:\n\n- **Memo**: news\n- **Deleted**: No\n- **Sequence Number**: 2\n")), "{message}");
    assert!(message.contains("- Admin Key: Not Set\n"), "{message}");
    assert!(
        message.contains("- Auto Renew Account: 0.0.1001\n"),
        "{message}"
    );
    assert_eq!(human["topicInfo"]["memo"], "news");
    let out = session
        .call("get_topic_info_query_tool", r#"{"topicId":"0.0.424242"}"#)
        .unwrap();
    assert_eq!(
        out["raw"]["error"],
        "Failed to execute Get Topic Info: Failed to get topic info for 0.0.424242: 404 Not Found"
    );
}

#[test]
fn topics_are_updated_with_their_admin_key() {
    let (host, _) = start(LOCAL);
    let mut session = host.default_session();
    let topic = ok(&session
        .call("create_topic_tool", r#"{"adminKey":true,"topicMemo":"v1"}"#)
        .unwrap())["topicId"]
        .as_str()
        .unwrap()
        .to_owned();
    // The kit's rule: a key the topic was created without cannot be added.
    let out = session
        .call(
            "update_topic_tool",
            &format!(r#"{{"topicId":"{topic}","submitKey":true}}"#),
        )
        .unwrap();
    assert_eq!(
        out["raw"]["error"],
        "Failed to execute Update Topic: Cannot update submitKey: topic was created without a submitKey"
    );
    let topic = ok(&session
        .call(
            "create_topic_tool",
            r#"{"adminKey":true,"submitKey":true,"topicMemo":"v1"}"#,
        )
        .unwrap())["topicId"]
        .as_str()
        .unwrap()
        .to_owned();
    let out = session
        .call(
            "update_topic_tool",
            &format!(r#"{{"topicId":"{topic}","topicMemo":"v2","submitKey":true}}"#),
        )
        .unwrap();
    ok(&out);
    assert!(out["humanMessage"]
        .as_str()
        .unwrap()
        .starts_with("Topic successfully updated. Transaction ID: "));
    let info = host.mirror_get(&format!("/topics/{topic}")).unwrap();
    assert_eq!(info["memo"], "v2");
    assert_eq!(info["submit_key"]["_type"], "ED25519");
    let immutable = ok(&session.call("create_topic_tool", "{}").unwrap())["topicId"]
        .as_str()
        .unwrap()
        .to_owned();
    let out = session
        .call(
            "update_topic_tool",
            &format!(r#"{{"topicId":"{immutable}","topicMemo":"no"}}"#),
        )
        .unwrap();
    assert_eq!(
        out["raw"]["error"],
        "Failed to execute Update Topic: Topic does not have an admin key. It cannot be updated."
    );
}

/// Messages at the chunk boundaries with how many chunks the kit cuts each into
/// (⌈len / 1024⌉, at most 20), and multibyte characters straddling the first boundary.
fn boundary_messages() -> Vec<(String, usize)> {
    let ascii =
        |len: usize| -> String { (0..len).map(|i| (b'a' + (i % 26) as u8) as char).collect() };
    let mut messages: Vec<(String, usize)> = [1023, 1024, 1025, 2048, 20_480]
        .into_iter()
        .map(|len| (ascii(len), len.div_ceil(1024)))
        .collect();
    messages.push((format!("{}é{}", ascii(1023), ascii(10)), 2));
    messages.push((format!("{}😀{}", ascii(1022), ascii(1)), 2));
    messages.push(("é".repeat(512), 1));
    messages
}

/// One topic message as the mirror holds it: its chunks (number, total, bytes) in order.
type Chunks = Vec<(u64, u64, Vec<u8>)>;

/// Every message on `topic`, in consensus order of its first chunk.
fn messages_on(host: &hak_host::Host, topic: &str) -> Vec<Chunks> {
    use base64::Engine as _;
    let page = host
        .mirror_get(&format!("/topics/{topic}/messages?limit=100&order=asc"))
        .unwrap();
    let mut sent: Vec<(String, Chunks)> = Vec::new();
    for m in page["messages"].as_array().unwrap() {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(m["message"].as_str().unwrap())
            .unwrap();
        let (first, number, total) = match &m["chunk_info"] {
            serde_json::Value::Null => (m["consensus_timestamp"].to_string(), 1, 1),
            info => (
                info["initial_transaction_id"]["transaction_valid_start"].to_string(),
                info["number"].as_u64().unwrap(),
                info["total"].as_u64().unwrap(),
            ),
        };
        match sent.iter_mut().find(|(id, _)| *id == first) {
            Some((_, chunks)) => chunks.push((number, total, bytes)),
            None => sent.push((first, vec![(number, total, bytes)])),
        }
    }
    sent.into_iter()
        .map(|(_, mut chunks)| {
            chunks.sort_by_key(|(number, _, _)| *number);
            chunks
        })
        .collect()
}

fn new_topic(session: &mut hak_host::Session, memo: &str) -> String {
    let params = serde_json::json!({ "topicMemo": memo });
    ok(&session
        .call("create_topic_tool", &params.to_string())
        .unwrap())["topicId"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn autonomous_topic_messages_are_cut_into_1024_byte_chunks_as_the_kit_cuts_them() {
    let (host, _) = start(LOCAL);
    let mut session = host.default_session();
    let topic = new_topic(&mut session, "chunks");
    let messages = boundary_messages();
    for (message, _) in &messages {
        let params = serde_json::json!({"topicId": topic, "message": message});
        ok(&session
            .call("submit_topic_message_tool", &params.to_string())
            .unwrap());
    }
    let sent = messages_on(&host, &topic);
    assert_eq!(sent.len(), messages.len());
    for ((message, chunks), got) in messages.iter().zip(&sent) {
        let len = message.len();
        assert_eq!(
            (got.len(), got[0].1 as usize),
            (*chunks, *chunks),
            "{len} bytes: chunks (number, total) {:?}",
            got.iter()
                .map(|(n, t, b)| (n, t, b.len()))
                .collect::<Vec<_>>()
        );
        let joined: Vec<u8> = got.iter().flat_map(|(_, _, b)| b.clone()).collect();
        assert_eq!(joined, message.as_bytes(), "{len} bytes: reassembled");
        assert!(got.iter().all(|(_, _, b)| b.len() <= 1024));
    }
}

/// The kit's own tool sends the same messages autonomously to a second topic of the same
/// network: every message arrives in the same chunks (numbers, totals, bytes) on both.
#[test]
#[ignore = "needs node and the JS kit (npm ci in tests/conformance); scripts/test.sh runs it"]
fn the_kit_and_hak_cut_autonomous_topic_messages_into_the_same_chunks() {
    let (host, _) = start(LOCAL);
    let mut session = host.default_session();
    let (hak_topic, kit_topic) = (
        new_topic(&mut session, "hak"),
        new_topic(&mut session, "kit"),
    );
    let messages: Vec<String> = boundary_messages().into_iter().map(|(m, _)| m).collect();
    for message in &messages {
        let params = serde_json::json!({"topicId": hak_topic, "message": message});
        ok(&session
            .call("submit_topic_message_tool", &params.to_string())
            .unwrap());
    }
    let info = host.local_network().unwrap().connection_json().to_string();
    let mut kit = std::process::Command::new("node")
        .arg("kit-messages.mjs")
        .arg(&info)
        .arg(&kit_topic)
        .current_dir(kit_dir())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run node");
    {
        use std::io::Write as _;
        let mut stdin = kit.stdin.take().unwrap();
        stdin
            .write_all(serde_json::to_string(&messages).unwrap().as_bytes())
            .unwrap();
    }
    let out = kit.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for line in stdout.lines() {
        let answer: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(answer["status"], "SUCCESS", "the kit: {answer}");
    }
    let (hak_sent, kit_sent) = (
        messages_on(&host, &hak_topic),
        messages_on(&host, &kit_topic),
    );
    assert_eq!(kit_sent.len(), messages.len());
    let layout = |chunks: &Chunks| -> Vec<(u64, u64, usize)> {
        chunks.iter().map(|(n, t, b)| (*n, *t, b.len())).collect()
    };
    for ((message, hak), kit) in messages.iter().zip(&hak_sent).zip(&kit_sent) {
        assert_eq!(layout(hak), layout(kit), "{} bytes", message.len());
        assert_eq!(hak, kit, "{} bytes: the chunks' bytes", message.len());
    }
}
