//! The plugin natively: loading (what is refused, and where), and decisions on calls built
//! with the guest SDK's test inputs.

use super::*;
use hak_guest::serde_json::{json, Value};
use hak_guest::{testing, Asset, BlockInfo, Movement, Via};

/// The README's policy set (`examples/cedar/cedar.toml`): an amount cap, a denylist, an agent
/// quarantined, business hours.
fn readme_policies() -> &'static str {
    let settings = include_str!("../../../../examples/cedar/cedar.toml");
    settings.split("'''").nth(1).expect("policies = '''…'''")
}

/// 2026-11-30T12:00:00Z, a Monday.
const MONDAY_NOON: u64 = 1_796_040_000_000;

fn load(config: Value) -> Result<Cedar, String> {
    Cedar::describe(&config.to_string()).map(|(plugin, _)| plugin)
}

fn transfer(agent: Option<&str>, to: &str, tinybars: u64) -> StageInput {
    testing::input("transfer_hbar_tool", Stage::PostParamsNormalization)
        .with_params(json!({
            "normalisedParams": {},
            "context": {"accountId": "0.0.1001", "mode": "autonomous", "network": "testnet", "agent": agent},
        }))
        .with_credit(Asset::Hbar, to, tinybars)
}

fn judge(plugin: &Cedar, input: &StageInput) -> Result<(), BlockInfo> {
    match plugin
        .should_block_post_params_normalization(input)
        .unwrap()
    {
        Verdict::Allow => Ok(()),
        Verdict::Block(b) => Err(b),
        Verdict::NeedsApproval(_) => panic!("Cedar never asks for approval"),
    }
}

#[test]
fn the_readme_policies_allow_and_forbid_with_their_ids() {
    testing::reset();
    testing::set_now_unix_ms(MONDAY_NOON);
    let plugin = load(json!({"policies": readme_policies()})).unwrap();
    assert_eq!(
        judge(&plugin, &transfer(Some("alice"), "0.0.2002", 500_000_000)),
        Ok(())
    );

    let big = judge(&plugin, &transfer(Some("alice"), "0.0.2002", 1_000_000_001)).unwrap_err();
    assert_eq!(
        big.message,
        "transfer_hbar_tool is forbidden by Cedar policy cap-10-hbar"
    );
    assert_eq!(big.code.as_deref(), Some("CEDAR_DENIED"));
    let details: Value =
        hak_guest::serde_json::from_str(big.details_json.as_deref().unwrap()).unwrap();
    assert_eq!(
        details,
        json!({"policies": ["cap-10-hbar"], "principal": "alice"})
    );

    let both = judge(&plugin, &transfer(Some("bot-7"), "0.0.666", 1)).unwrap_err();
    assert_eq!(
        both.message,
        "transfer_hbar_tool is forbidden by Cedar policies denylist, quarantine-bot-7"
    );

    // Outside business hours (Monday 18:00, then Sunday noon).
    testing::set_now_unix_ms(MONDAY_NOON + 6 * 3_600_000);
    let late = judge(&plugin, &transfer(Some("alice"), "0.0.2002", 1)).unwrap_err();
    assert_eq!(
        late.message,
        "transfer_hbar_tool is forbidden by Cedar policy business-hours"
    );
    testing::set_now_unix_ms(MONDAY_NOON - 86_400_000);
    assert!(judge(&plugin, &transfer(Some("alice"), "0.0.2002", 1)).is_err());

    // Queries are not transactions: the quarantined agent still reads, after hours too.
    let query = testing::input("get_hbar_balance_query_tool", Stage::PostParamsNormalization)
        .with_params(json!({"context": {"accountId": "0.0.1001", "mode": "autonomous", "network": "testnet", "agent": "bot-7"}}));
    assert_eq!(judge(&plugin, &query), Ok(()));
}

#[test]
fn the_principal_is_the_agent_else_its_account() {
    testing::reset();
    let plugin = load(json!({"policies": r#"
        permit(principal, action, resource);
        @id("no-1001") forbid(principal == Agent::"0.0.1001", action, resource);
        @id("returnbytes-only") forbid(principal, action, resource) unless { principal.mode == "returnBytes" };
    "#}))
    .unwrap();
    let by_account = judge(&plugin, &transfer(None, "0.0.2002", 1)).unwrap_err();
    assert_eq!(
        by_account.message,
        "transfer_hbar_tool is forbidden by Cedar policies no-1001, returnbytes-only"
    );
    let by_name = judge(&plugin, &transfer(Some("carol"), "0.0.2002", 1)).unwrap_err();
    assert_eq!(
        by_name.message,
        "transfer_hbar_tool is forbidden by Cedar policy returnbytes-only"
    );
}

#[test]
fn nothing_permitted_is_denied_and_says_so() {
    testing::reset();
    let plugin =
        load(json!({"policies": r#"permit(principal, action in Action::"query", resource);"#}))
            .unwrap();
    let b = judge(&plugin, &transfer(None, "0.0.2002", 1)).unwrap_err();
    assert_eq!(b.message, "no Cedar policy permits transfer_hbar_tool");
    assert_eq!(b.code.as_deref(), Some("CEDAR_DENIED"));
}

/// Every movement counts: allowances and "all of it" too, per recipient summed.
#[test]
fn the_context_states_every_movement() {
    testing::reset();
    let plugin = load(json!({"policies": r#"
        permit(principal, action, resource);
        @id("max-5-to-one") forbid(principal, action, resource) when { context.maxHbarToOne > 500000000 };
        @id("no-allowances") forbid(principal, action, resource) when { context.allowance };
        @id("no-token-0.0.9") forbid(principal, action, resource) when { context.tokens.contains("0.0.9") };
    "#}))
    .unwrap();
    // Two legs of 3 HBAR to one recipient are 6 to one.
    let split =
        transfer(None, "0.0.2002", 300_000_000).with_credit(Asset::Hbar, "0.0.2002", 300_000_000);
    assert!(judge(&plugin, &split)
        .unwrap_err()
        .message
        .ends_with("max-5-to-one"));
    let to_two =
        transfer(None, "0.0.2002", 300_000_000).with_credit(Asset::Hbar, "0.0.2003", 300_000_000);
    assert_eq!(judge(&plugin, &to_two), Ok(()));
    let all = transfer(None, "0.0.2002", 0).with_movement(Movement {
        asset: Asset::Hbar,
        to: Some("0.0.2004".into()),
        amount: u64::MAX,
        via: Via::Allowance,
    });
    assert_eq!(
        judge(&plugin, &all).unwrap_err().message,
        "transfer_hbar_tool is forbidden by Cedar policies max-5-to-one, no-allowances"
    );
    let token = transfer(None, "0.0.2002", 1).with_token("0.0.9");
    assert!(judge(&plugin, &token)
        .unwrap_err()
        .message
        .ends_with("no-token-0.0.9"));
}

/// A forbid that fails to evaluate would be skipped by Cedar: the call is blocked instead.
#[test]
fn a_policy_that_cannot_be_evaluated_blocks() {
    testing::reset();
    let plugin = load(json!({"policies": r#"
        permit(principal, action, resource);
        @id("overflows") forbid(principal, action, resource) when { context.hbarOut + 1 > 5 };
    "#}))
    .unwrap();
    let all = transfer(None, "0.0.2002", u64::MAX);
    let b = judge(&plugin, &all).unwrap_err();
    assert_eq!(b.code.as_deref(), Some("CEDAR_ERROR"));
    assert!(b.message.contains("`overflows`"), "{}", b.message);
    assert!(b.message.contains("overflow"), "{}", b.message);
}

#[test]
fn bad_text_is_refused_at_load_with_where() {
    let err = |policies: &str| load(json!({"policies": policies})).err().unwrap();
    // Parse errors: Cedar's message at its line and column.
    let e = err("permit(principal, action, resource)\nforbid(principal action, resource);");
    assert_eq!(e, "invalid config: policies 2:7: unexpected token `(`");
    // An attribute outside the schema, reported once (not once per action).
    let e = err("permit(principal, action, resource);\n\nforbid(principal, action, resource) when { context.amount > 5 };");
    assert!(
        e.starts_with("invalid config: policies do not match the built-in schema: policies 3:"),
        "{e}"
    );
    assert!(e.contains("amount"), "{e}");
    assert_eq!(e.matches("amount").count(), 1, "{e}");
    // A type mismatch.
    let e = err(r#"forbid(principal, action, resource) when { context.hbarOut > "10" };"#);
    assert!(e.contains("policies 1:"), "{e}");
    // An action that is no tool.
    let e = err(r#"forbid(principal, action == Action::"steal_tool", resource);"#);
    assert!(e.contains("steal_tool"), "{e}");
    // Nothing, templates, two policies of one name.
    assert!(err("// nothing\n").contains("no policy"));
    assert!(err("permit(principal == ?principal, action, resource);").contains("templates"));
    let e = err("@id(\"a\") permit(principal, action, resource);\n@id(\"a\") forbid(principal, action, resource);");
    assert!(e.contains("two policies are named \"a\""), "{e}");
    // Fields the config does not have.
    assert!(
        err_config(json!({"policy": "permit(principal, action, resource);"}))
            .contains("unknown field")
    );
}

fn err_config(config: Value) -> String {
    load(config).err().unwrap()
}

#[test]
fn a_schema_of_the_config_is_checked_against_what_hak_sends() {
    let head = schema::BUILTIN_HEAD;
    let mut actions = String::new();
    for tool in schema::QUERIES.iter().chain(schema::TRANSACTIONS.iter()) {
        actions += &format!("action \"{tool}\" appliesTo {{ principal: [Agent], resource: [Network], context: Call }};\n");
    }
    // The built-in schema's text as the config's works (without the groups here).
    let own = format!(
        "{}{actions}",
        head.replace("action transaction, query;\n", "")
    );
    let plugin = load(
        json!({"schema": own, "policies": "permit(principal, action == Action::\"transfer_hbar_tool\", resource);"}),
    );
    assert!(plugin.is_ok(), "{:?}", plugin.err());
    // A schema missing a tool, or asking for an attribute hak does not send, is refused.
    let missing = own.replace("action \"transfer_hbar_tool\" appliesTo { principal: [Agent], resource: [Network], context: Call };\n", "");
    let e =
        err_config(json!({"schema": missing, "policies": "permit(principal, action, resource);"}));
    assert!(e.contains("transfer_hbar_tool"), "{e}");
    let extra = own.replace("mode: String,", "mode: String, team: String,");
    let e =
        err_config(json!({"schema": extra, "policies": "permit(principal, action, resource);"}));
    assert!(e.contains("do not match it"), "{e}");
    let e = err_config(
        json!({"schema": "entity Agent", "policies": "permit(principal, action, resource);"}),
    );
    assert!(e.starts_with("invalid config: schema 1:"), "{e}");
}

/// The actions are hak's tools, each in its type's group (`docs/tool-shapes.json` is generated
/// from the host's registry and kept current by a host test).
#[test]
fn the_actions_are_the_hosts_tools() {
    let shapes: Value =
        hak_guest::serde_json::from_str(include_str!("../../../../docs/tool-shapes.json")).unwrap();
    let tools = shapes["tools"].as_object().unwrap();
    let of = |kind: &str| -> Vec<&str> {
        let mut v: Vec<&str> = tools
            .iter()
            .filter(|(_, t)| t["toolType"] == kind)
            .map(|(m, _)| m.as_str())
            .collect();
        v.sort_unstable();
        v
    };
    assert_eq!(of("query"), schema::QUERIES.to_vec());
    assert_eq!(of("transaction"), schema::TRANSACTIONS.to_vec());
    assert_eq!(
        tools.len(),
        schema::QUERIES.len() + schema::TRANSACTIONS.len()
    );
}
