//! The same policy written in Rust, JavaScript and Go (and Python: `python_guest.rs`) must decide alike: over a generated corpus
//! of ≥ 1 000 stage inputs (zero, negative and > 2^53 amounts, the extremes of int64, empty
//! lists, unknown and custom tools, new accounts, allowances of every kind, ERC-20/721
//! transfers and mints), each pair returns
//! the same verdict, block message, code and details, or both fail.

use hak_host::manifest::PluginSpec;
use hak_host::plugin::Verdict;
use hak_host::runtime::{LoadedPlugin, PluginInstance};
use hak_tests::*;
use serde_json::{json, Value};
use std::sync::Arc;

const AMOUNTS: [&str; 14] = [
    "0",
    "1",
    "-1",
    "99999999",
    "100000000",
    "150000000",
    "200000000",
    "200000001",
    "-250000000",
    "350000000",
    "1000",
    "1001",
    "9007199254740993",
    "9223372036854775807",
];
const EXTREMES: [&str; 2] = ["-9223372036854775808", "18446744073709551615"];
const ACCOUNTS: [&str; 5] = ["0.0.1002", "0.0.1003", "0.0.1666", "0.0.2001", "0.0.1001"];
const TOKENS: [&str; 3] = ["0.0.5005", "0.0.5006", "0.0.7"];
const METHODS: [&str; 20] = [
    "transfer_hbar_tool",
    "transfer_hbar_with_allowance_tool",
    "transfer_fungible_token_tool",
    "transfer_fungible_token_with_allowance_tool",
    "airdrop_fungible_token_tool",
    "transfer_non_fungible_token_tool",
    "transfer_non_fungible_token_with_allowance_tool",
    "approve_hbar_allowance_tool",
    "delete_hbar_allowance_tool",
    "approve_token_allowance_tool",
    "delete_token_allowance_tool",
    "approve_nft_allowance_tool",
    "create_account_tool",
    "delete_account_tool",
    "delete_non_fungible_token_allowance_tool",
    "transfer_erc20_tool",
    "transfer_erc721_tool",
    "mint_erc721_tool",
    "my_custom_tool",
    "unknown_tool",
];

fn amount(r: &mut Rng) -> String {
    if r.below(20) == 0 {
        r.pick(&EXTREMES).to_string()
    } else {
        r.pick(&AMOUNTS).to_string()
    }
}

fn entries(r: &mut Rng, with_token: bool) -> Value {
    let n = r.below(6);
    (0..n)
        .map(|_| {
            let mut e = json!({"accountId": r.pick(&ACCOUNTS), "amount": amount(r)});
            if with_token {
                e["tokenId"] = json!(r.pick(&TOKENS));
            }
            e
        })
        .collect()
}

/// One end of an ERC-20/721 movement: an account's long-zero address, or an address no
/// account holds.
fn party(r: &mut Rng) -> Value {
    if r.below(5) == 0 {
        return json!({"evmAddress": "0x7f3b1c2d4e5f60718293a4b5c6d7e8f901234567"});
    }
    let account = *r.pick(&ACCOUNTS);
    let num: u64 = account.rsplit('.').next().unwrap().parse().unwrap();
    json!({"evmAddress": format!("0x{num:040x}"), "accountId": account})
}

/// Normalised params in hak's shape for `method`.
fn normalised(r: &mut Rng, method: &str) -> Value {
    let token = *r.pick(&TOKENS);
    match method {
        "transfer_hbar_tool" => {
            json!({"hbarTransfers": entries(r, false), "schedulingParams": {"isScheduled": false}})
        }
        "transfer_hbar_with_allowance_tool" => {
            json!({"hbarTransfers": entries(r, false), "hbarApprovedTransfer": {"ownerAccountId": "0.0.1004", "amount": "-1"}})
        }
        "transfer_fungible_token_tool" | "airdrop_fungible_token_tool" => {
            json!({"tokenId": token, "tokenTransfers": entries(r, false)})
        }
        "transfer_fungible_token_with_allowance_tool" => {
            json!({"tokenId": token, "tokenTransfers": entries(r, false), "approvedTransfer": {"ownerAccountId": "0.0.1004", "amount": "-5"}})
        }
        "transfer_non_fungible_token_tool" | "transfer_non_fungible_token_with_allowance_tool" => {
            let n = r.below(5);
            let recipients: Vec<Value> = (0..n)
                .map(|i| json!({"recipientId": r.pick(&ACCOUNTS), "serialNumber": i + 1}))
                .collect();
            json!({"tokenId": token, "sourceAccountId": "0.0.1004", "recipients": recipients})
        }
        "approve_hbar_allowance_tool" | "delete_hbar_allowance_tool" => {
            json!({"hbarApprovals": [{"ownerAccountId": "0.0.1001", "spenderAccountId": r.pick(&ACCOUNTS), "amount": amount(r)}]})
        }
        "approve_token_allowance_tool" | "delete_token_allowance_tool" => {
            let n = r.below(3) + 1;
            let approvals: Vec<Value> = (0..n)
                .map(|_| json!({"ownerAccountId": "0.0.1001", "spenderAccountId": r.pick(&ACCOUNTS), "tokenId": r.pick(&TOKENS), "amount": amount(r)}))
                .collect();
            json!({"tokenApprovals": approvals})
        }
        "approve_nft_allowance_tool" => {
            let all = r.below(2) == 0;
            json!({"ownerAccountId": "0.0.1001", "spenderAccountId": r.pick(&ACCOUNTS), "tokenId": token, "allSerials": all, "serialNumbers": if all { json!([]) } else { json!([1, 2]) }})
        }
        "create_account_tool" => {
            json!({"key": "302a", "initialBalance": amount(r), "maxAutomaticTokenAssociations": -1, "schedulingParams": {"isScheduled": false}})
        }
        "delete_account_tool" => {
            json!({"accountId": "0.0.1004", "transferAccountId": r.pick(&ACCOUNTS)})
        }
        "delete_non_fungible_token_allowance_tool" => {
            json!({"ownerAccountId": "0.0.1001", "tokenId": token, "serialNumbers": [1]})
        }
        "transfer_erc20_tool" => {
            json!({"contractId": token, "recipient": party(r), "amount": amount(r).trim_start_matches('-'), "gas": 100000})
        }
        "transfer_erc721_tool" => {
            json!({"contractId": token, "from": party(r), "to": party(r), "tokenId": r.below(3), "gas": 100000})
        }
        "mint_erc721_tool" => {
            json!({"contractId": token, "to": party(r), "gas": 100000})
        }
        "my_custom_tool" => {
            let n = r.below(5);
            let payouts: Vec<Value> = (0..n)
                .map(|_| {
                    if r.below(4) == 0 {
                        json!({"to": r.pick(&ACCOUNTS)})
                    } else {
                        json!({"to": r.pick(&ACCOUNTS), "amount": amount(r)})
                    }
                })
                .collect();
            json!({"payouts": payouts})
        }
        _ => json!({"anything": r.below(100)}),
    }
}

pub(crate) fn load(rel: &str, name: &str, config: &str) -> Arc<LoadedPlugin> {
    let (host, _) = start(RETURN_BYTES_HEADER);
    let config: toml::Table = toml::from_str(config).unwrap();
    let spec = PluginSpec {
        name: name.into(),
        path: plugin(rel),
        source: None,
        oci_digest: None,
        sha256: None,
        config,
        capabilities: vec![],
        limits: Default::default(),
        on_error: Default::default(),
        enforce: true,
    };
    LoadedPlugin::load(host.runtime(), spec, &plugin(rel), None)
        .unwrap_or_else(|e| panic!("{rel}: {e}"))
}

#[derive(Debug, PartialEq)]
enum Outcome {
    Allow,
    Block(String, Option<String>, Value),
    Error,
}

fn decide(instance: &mut PluginInstance, method: &str, params: &str) -> Outcome {
    match judge_normalised(instance, method, params) {
        Ok(Ok(Verdict::Allow)) => Outcome::Allow,
        Ok(Ok(Verdict::NeedsApproval(a))) => panic!("{method}: unexpected approval {a:?}"),
        Ok(Ok(Verdict::Block(b))) => Outcome::Block(
            b.message,
            b.code,
            b.details_json
                .map(|d| serde_json::from_str(&d).unwrap())
                .unwrap_or(Value::Null),
        ),
        Ok(Err(_)) => Outcome::Error,
        Err(failure) => panic!("{method}: plugin failure {failure}"),
    }
}

/// The policies written in every language, with the config they are compared under.
pub(crate) const PAIRS: [(&str, &str); 3] = [
    (
        "max-recipients",
        "maxRecipients = 2\nadditionalTools = [\"my_custom_tool\", \"transfer_erc20_tool\", \"transfer_erc721_tool\", \"mint_erc721_tool\"]\ncustomCounts = { my_custom_tool = { field = \"payouts\", amountField = \"amount\" } }",
    ),
    ("recipient-allowlist", "accounts = [\"0.0.1002\", \"0.0.1003\", \"0.0.1001\"]"),
    (
        "spend-limit",
        "maxHbarPerRecipient = 2\nmaxHbarPerTransaction = \"3.5\"\ntokens = { \"0.0.5005\" = { maxPerRecipient = 1000, maxPerTransaction = \"1500\" } }",
    ),
];

/// The generated corpus: 1,200 (method, stage params) pairs, the same on every run.
pub(crate) fn corpus() -> Vec<(String, String)> {
    let mut r = Rng(0x5eed_1234_abcd_0001);
    (0..1200)
        .map(|_| {
            let method = *r.pick(&METHODS);
            let params = json!({
                "context": {"accountId": "0.0.1001", "mode": "returnBytes", "network": "testnet"},
                "rawParams": {},
                "normalisedParams": normalised(&mut r, method),
            });
            (method.to_owned(), params.to_string())
        })
        .collect()
}

/// Every input of the corpus that `a` (the reference) applies to decided by `a` and `b`:
/// (compared, blocked); panics on the first difference.
pub(crate) fn compare(name: &str, a: &Arc<LoadedPlugin>, b: &Arc<LoadedPlugin>) -> (usize, usize) {
    assert_eq!(
        a.description.relevant_tools, b.description.relevant_tools,
        "{name}"
    );
    assert_eq!(a.description.name, b.description.name, "{name}");
    assert_eq!(
        a.description.description, b.description.description,
        "{name}"
    );
    let (mut x, mut y) = (
        a.standalone_instance().unwrap(),
        b.standalone_instance().unwrap(),
    );
    let (mut compared, mut blocks) = (0, 0);
    for (i, (method, params)) in corpus().iter().enumerate() {
        if !a.description.applies_to(method) {
            continue;
        }
        let (p, q) = (
            decide(&mut x, method, params),
            decide(&mut y, method, params),
        );
        assert_eq!(p, q, "{name}, case {i}: {method} {params}");
        compared += 1;
        blocks += matches!(p, Outcome::Block(..)) as usize;
    }
    (compared, blocks)
}

#[test]
#[ignore = "needs the JS and Go plugins (scripts/build-plugins.sh js go); scripts/test.sh runs it"]
fn rust_js_and_go_policies_decide_alike_over_a_generated_corpus() {
    for (name, config) in PAIRS {
        let rust = load(&format!("rust/{name}"), name, config);
        for lang in ["js", "go"] {
            let other = load(&format!("{lang}/{name}"), name, config);
            let (compared, blocks) = compare(&format!("{name} ({lang})"), &rust, &other);
            eprintln!("{name}: rust and {lang}: {compared} inputs compared, {blocks} blocked");
            assert!(
                compared >= 500 && blocks >= 50,
                "{name}: {compared} compared, {blocks} blocked"
            );
        }
    }
}
