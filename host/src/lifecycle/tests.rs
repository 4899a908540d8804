//! The 7-stage pipeline on its own: a [`CallEnv`] over a plain return-bytes network and a
//! chain of native plugins built here, no host. What is checked is the lifecycle's contract:
//! order, the first block ending the call, replacements judged again, errors worded.

use super::chain::Chain;
use super::native::{self, NativePlugin};
use super::{CallEnv, Session};
use crate::manifest::Manifest;
use crate::model::context::{AgentContext, AgentMode};
use crate::model::stage::{Stage, StageSet};
use crate::network::Network;
use crate::observe::decisions::{DecisionLog, DecisionSettings, ParamsRecord};
use crate::observe::metrics::Metrics;
use crate::plugin::{BlockReason, HookAnswer, PluginDescription, StageCall, Verdict};
use crate::state_store::{MemoryBackend, StateBackend};
use crate::strategy::{StrategyEnv, TransactionStrategy};
use crate::tools::schema::UnknownKeys;
use crate::tools::{ToolContext, ToolRegistry};
use std::sync::{Arc, Mutex};

const TRANSFER: &str = r#"{"transfers":[{"accountId":"0.0.2001","amount":1}]}"#;

/// A network for building and freezing (testnet ids, one fixed node), a chain, a memory store.
struct PlainEnv {
    network: Network,
    tools: ToolRegistry,
    chain: Arc<Chain>,
    state: Arc<dyn StateBackend>,
    metrics: Arc<Metrics>,
    decisions: Option<DecisionLog>,
}

impl PlainEnv {
    fn new(plugins: Vec<Arc<dyn NativePlugin>>) -> Arc<Self> {
        Self::recording(plugins, None)
    }

    /// With a decision log at `log` (full params).
    fn recording(plugins: Vec<Arc<dyn NativePlugin>>, log: Option<&std::path::Path>) -> Arc<Self> {
        let manifest = Manifest::parse(
            "[network]\nname = \"testnet\"\nnode_account_ids = [\"0.0.3\"]\n",
            "lifecycle test",
            std::env::temp_dir(),
        )
        .unwrap();
        let tools = ToolRegistry::native();
        let members = plugins.into_iter().map(native::member).collect();
        let chain = Arc::new(Chain::new(members, tools.methods()));
        let metrics = Arc::new(Metrics::new());
        let decisions = log.map(|path| {
            let settings = DecisionSettings {
                path: path.to_owned(),
                params: ParamsRecord::Full,
                max_bytes: 1 << 20,
                keep: 1,
            };
            DecisionLog::open(&settings, metrics.clone()).unwrap()
        });
        Arc::new(PlainEnv {
            network: Network::from_manifest(&manifest).unwrap(),
            tools,
            chain,
            state: Arc::new(MemoryBackend::default()),
            metrics,
            decisions,
        })
    }
}

impl CallEnv for PlainEnv {
    fn tools(&self) -> &ToolRegistry {
        &self.tools
    }
    fn chain(&self) -> Arc<Chain> {
        self.chain.clone()
    }
    fn chain_version(&self) -> u64 {
        self.chain.version()
    }
    fn state_backend(&self) -> &Arc<dyn StateBackend> {
        &self.state
    }
    fn network_name(&self) -> &'static str {
        "testnet"
    }
    fn explain_blocks(&self) -> bool {
        false
    }
    fn tool_context<'a>(
        &'a self,
        context: &'a AgentContext,
        wants_summary: bool,
    ) -> ToolContext<'a> {
        ToolContext {
            context,
            operator_account_id: None,
            operator_public_key: None,
            node_account_ids: &self.network.node_account_ids,
            wants_summary,
            mirror: &self.network.mirror,
            network: crate::manifest::NetworkName::Local,
            evm_factories: &crate::network::LOCAL_EVM_FACTORIES,
            unknown_keys: UnknownKeys::Strip,
        }
    }
    fn strategy(&self, mode: AgentMode) -> Result<&dyn TransactionStrategy, String> {
        crate::strategy::for_mode(mode, None)
    }
    fn metrics(&self) -> &Arc<Metrics> {
        &self.metrics
    }
    fn decision_log(&self) -> Option<&DecisionLog> {
        self.decisions.as_ref()
    }
    fn strategy_env<'a>(&'a self, context: &'a AgentContext) -> StrategyEnv<'a> {
        StrategyEnv {
            context,
            client: &self.network.client,
            node_account_ids: &self.network.node_account_ids,
            runtime: self.network.runtime(),
            has_operator_key: false,
            mirror: None,
        }
    }
}

type Log = Arc<Mutex<Vec<String>>>;

/// A policy and hook at every stage of `transfer_hbar_tool` that writes what it was asked,
/// blocks at `block_at`, and at `replace_at` replaces the stage's value with `replacement`.
struct Probe {
    description: PluginDescription,
    log: Log,
    block_when: Option<(Stage, &'static str)>,
    replace: Option<(Stage, &'static str)>,
    answer_error: bool,
    enforce: bool,
}

fn probe(name: &str, log: &Log) -> Probe {
    let all: StageSet = Stage::ALL.into_iter().collect();
    Probe {
        description: PluginDescription {
            name: name.into(),
            description: format!("probe {name}"),
            relevant_tools: vec!["transfer_hbar_tool".into()],
            hook_stages: all,
            policy_stages: all,
        },
        log: log.clone(),
        block_when: None,
        replace: None,
        answer_error: false,
        enforce: true,
    }
}

impl NativePlugin for Probe {
    fn description(&self) -> &PluginDescription {
        &self.description
    }

    fn policy(&self, call: &StageCall<'_>) -> Result<Verdict, String> {
        let name = &self.description.name;
        self.log
            .lock()
            .unwrap()
            .push(format!("{name} policy {}", call.stage));
        if self.answer_error {
            return Err(format!("{name} cannot judge"));
        }
        Ok(match self.block_when {
            Some((stage, needle)) if stage == call.stage && call.input.contains(needle) => {
                Verdict::Block(BlockReason {
                    message: format!("{name} saw {needle}"),
                    code: None,
                    details_json: None,
                })
            }
            _ => Verdict::Allow,
        })
    }

    fn enforces(&self) -> bool {
        self.enforce
    }

    fn hook(&self, call: &StageCall<'_>) -> Result<HookAnswer, String> {
        let name = &self.description.name;
        self.log
            .lock()
            .unwrap()
            .push(format!("{name} hook {}", call.stage));
        Ok(match self.replace {
            Some((stage, json)) if stage == call.stage => HookAnswer::Replace(json.into()),
            _ => HookAnswer::Proceed,
        })
    }
}

fn session(env: Arc<PlainEnv>) -> Session {
    let context = AgentContext {
        account_id: Some("0.0.1001".parse().unwrap()),
        mode: AgentMode::ReturnBytes,
    };
    Session::new(env, context)
}

#[test]
fn every_stage_runs_in_chain_order_policy_before_hook() {
    let log = Log::default();
    let env = PlainEnv::new(vec![Arc::new(probe("a", &log)), Arc::new(probe("b", &log))]);
    let out = session(env).call("transfer_hbar_tool", TRANSFER).unwrap();
    assert!(out["raw"]["bytes"].as_str().is_some(), "{out}");
    let expected: Vec<String> = Stage::ALL
        .into_iter()
        .flat_map(|stage| {
            ["a policy", "a hook", "b policy", "b hook"].map(|step| format!("{step} {stage}"))
        })
        .collect();
    assert_eq!(*log.lock().unwrap(), expected);
}

/// The stage input's `context` names the agent the session calls for, and only while it does.
#[test]
fn the_context_names_the_caller_agent() {
    let log = Log::default();
    let mut judge = probe("judge", &log);
    judge.block_when = Some((Stage::PostParamsNormalization, r#""agent":"alice""#));
    let mut session = session(PlainEnv::new(vec![Arc::new(judge)]));
    let blocked = |out: &serde_json::Value| out["raw"]["policyBlock"].is_object();
    assert!(!blocked(
        &session.call("transfer_hbar_tool", TRANSFER).unwrap()
    ));
    session.set_caller(Some("alice"));
    let out = session.call("transfer_hbar_tool", TRANSFER).unwrap();
    assert!(blocked(&out), "{out}");
    session.set_caller(Some("bob"));
    assert!(!blocked(
        &session.call("transfer_hbar_tool", TRANSFER).unwrap()
    ));
    session.set_caller(None);
    assert!(!blocked(
        &session.call("transfer_hbar_tool", TRANSFER).unwrap()
    ));
}

#[test]
fn the_first_block_ends_the_call_and_later_steps_never_run() {
    let log = Log::default();
    let mut a = probe("a", &log);
    a.block_when = Some((Stage::PostParamsNormalization, "0.0.2001"));
    let env = PlainEnv::new(vec![Arc::new(a), Arc::new(probe("b", &log))]);
    let out = session(env).call("transfer_hbar_tool", TRANSFER).unwrap();
    assert_eq!(out["raw"]["errorCode"], "POLICY_BLOCKED", "{out}");
    assert_eq!(out["raw"]["policyBlock"]["plugin"], "a", "{out}");
    assert_eq!(
        out["raw"]["policyBlock"]["reason"], "a saw 0.0.2001",
        "{out}"
    );
    let log = log.lock().unwrap();
    assert_eq!(
        log.last().map(String::as_str),
        Some("a policy post_params_normalization"),
        "{log:?}"
    );
    assert!(
        !log.iter().any(|l| l.ends_with("post_core_action")),
        "{log:?}"
    );
}

#[test]
fn a_replacement_is_judged_again_by_the_policies_that_allowed_the_value_it_replaced() {
    let log = Log::default();
    // `a` allowed the agent's params; `b` replaces them with a transfer `a` refuses.
    let mut a = probe("a", &log);
    a.block_when = Some((Stage::PreToolExecution, "0.0.666"));
    let mut b = probe("b", &log);
    b.replace = Some((
        Stage::PreToolExecution,
        r#"{"transfers":[{"accountId":"0.0.666","amount":1}]}"#,
    ));
    let env = PlainEnv::new(vec![Arc::new(a), Arc::new(b)]);
    let out = session(env).call("transfer_hbar_tool", TRANSFER).unwrap();
    assert_eq!(out["raw"]["policyBlock"]["plugin"], "a", "{out}");
    assert_eq!(
        *log.lock().unwrap(),
        [
            "a policy pre_tool_execution",
            "a hook pre_tool_execution",
            "b policy pre_tool_execution",
            "b hook pre_tool_execution",
            "a policy pre_tool_execution",
        ]
    );
}

#[test]
fn a_plugin_answering_an_error_ends_the_call_with_its_message() {
    let log = Log::default();
    let mut a = probe("a", &log);
    a.answer_error = true;
    let env = PlainEnv::new(vec![Arc::new(a)]);
    let out = session(env).call("transfer_hbar_tool", TRANSFER).unwrap();
    let error = out["raw"]["error"].as_str().unwrap_or_default();
    assert!(error.contains("a cannot judge"), "{out}");
    assert_eq!(log.lock().unwrap().len(), 1);
}

/// The lines of the decision log at `path`, parsed (the writer is flushed by dropping `env`);
/// the log's folder ([`temp_log`]) is removed.
fn decision_lines(env: Arc<PlainEnv>, path: &std::path::Path) -> Vec<serde_json::Value> {
    drop(env);
    let text = std::fs::read_to_string(path).unwrap();
    if let Some(dir) = path.parent() {
        let _ = std::fs::remove_dir_all(dir);
    }
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn temp_log(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("hak-lifecycle-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir.join("decisions.jsonl")
}

#[test]
fn a_shadow_policy_that_would_block_is_recorded_and_changes_nothing() {
    let log = Log::default();
    let mut shadow = probe("shadow", &log);
    shadow.enforce = false;
    shadow.block_when = Some((Stage::PostParamsNormalization, "0.0.2001"));
    // …and would replace the params too: never applied.
    shadow.replace = Some((
        Stage::PreToolExecution,
        r#"{"transfers":[{"accountId":"0.0.666","amount":1}]}"#,
    ));
    let path = temp_log("shadow");
    let env = PlainEnv::recording(vec![Arc::new(shadow)], Some(&path));
    let metrics = env.metrics.clone();
    let mut session = session(env.clone());
    let out = session.call("transfer_hbar_tool", TRANSFER).unwrap();
    assert!(out["raw"]["bytes"].as_str().is_some(), "{out}");
    assert!(out["raw"].get("policyBlock").is_none(), "{out}");
    // The bytes are for the agent's transfer, not the shadow hook's.
    assert!(
        log.lock()
            .unwrap()
            .iter()
            .any(|l| l == "shadow policy post_secondary_action"),
        "the call went on to the end"
    );
    let text = metrics.render(&Default::default());
    assert!(
        text.contains(r#"hak_plugin_verdicts_total{plugin="shadow",stage="post_params_normalization",verdict="would_block"} 1"#),
        "{text}"
    );
    assert!(
        text.contains(r#"hak_plugin_verdicts_total{plugin="shadow",stage="pre_tool_execution",verdict="would_replace"} 1"#),
        "{text}"
    );
    assert!(
        text.contains(
            r#"hak_calls_total{tool="transfer_hbar_tool",mode="returnBytes",outcome="success"} 1"#
        ),
        "{text}"
    );
    drop(session);
    let lines = decision_lines(env, &path);
    assert_eq!(lines.len(), 1, "{lines:?}");
    let line = &lines[0];
    assert_eq!(line["outcome"], "success", "{line}");
    let would_block: Vec<_> = line["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["verdict"] == "would_block")
        .collect();
    assert_eq!(would_block.len(), 1, "{line}");
    assert_eq!(would_block[0]["enforce"], false);
    assert_eq!(would_block[0]["plugin"], "shadow");
    assert_eq!(would_block[0]["reason"], "shadow saw 0.0.2001");
    assert_eq!(line["params"]["transfers"][0]["accountId"], "0.0.2001");
}

/// A policy whose block reason tries to end the decision line and forge another.
struct Forger(PluginDescription);

impl NativePlugin for Forger {
    fn description(&self) -> &PluginDescription {
        &self.0
    }

    fn policy(&self, _call: &StageCall<'_>) -> Result<Verdict, String> {
        Ok(Verdict::Block(BlockReason {
            message: "no\n{\"outcome\":\"success\",\"tool\":\"forged\"}\n".into(),
            code: Some("FORGE\nRY".into()),
            details_json: None,
        }))
    }
}

#[test]
fn a_blocked_call_is_one_decision_line_whatever_the_policy_writes() {
    let mut description = probe("forger", &Log::default()).description;
    description.hook_stages = StageSet::default();
    description.policy_stages = [Stage::PreToolExecution].into_iter().collect();
    let path = temp_log("forger");
    let env = PlainEnv::recording(vec![Arc::new(Forger(description))], Some(&path));
    let out = session(env.clone())
        .call("transfer_hbar_tool", TRANSFER)
        .unwrap();
    assert_eq!(out["raw"]["errorCode"], "POLICY_BLOCKED", "{out}");
    let lines = decision_lines(env, &path);
    assert_eq!(lines.len(), 1, "{lines:?}");
    let line = &lines[0];
    assert_eq!(line["outcome"], "blocked");
    assert_eq!(line["tool"], "transfer_hbar_tool");
    assert_eq!(line["transactionOutcome"], "not-applied");
    assert_eq!(line["errorCode"], "POLICY_BLOCKED");
    let decision = &line["decisions"][0];
    assert_eq!(decision["verdict"], "block");
    assert_eq!(decision["enforce"], true);
    assert_eq!(decision["code"], "FORGE\nRY");
    assert_eq!(
        decision["reason"],
        "no\n{\"outcome\":\"success\",\"tool\":\"forged\"}\n"
    );
}

/// Params texts for `transfer_hbar_tool`, well-formed and not: every value the schema or the
/// normaliser treats differently (amount spellings and ranges, id forms, nulls, wrong types),
/// unknown, missing and repeated keys, `schedulingParams`, whitespace and escapes. Fixed seed.
fn transfer_corpus() -> Vec<String> {
    const AMOUNTS: [&str; 18] = [
        "1",
        "0.5",
        "1.0",
        "1e3",
        "2E-1",
        "-1",
        "0",
        "-0",
        "1e-9",
        "0.000000001",
        "0.123456789",
        "1e30",
        "92233720368.54775807",
        "18446744073709551615",
        "\"1\"",
        "null",
        "true",
        "1e400",
    ];
    const IDS: [&str; 14] = [
        "\"0.0.2001\"",
        "\"0.0.0\"",
        "\"1.2.3\"",
        "\"0.0.2001-abcde\"",
        "\"0.0.123-vfmkw\"",
        "\"0x000000000000000000000000000000000000abcd\"",
        "\"\"",
        "\"abc\"",
        "5",
        "null",
        "\"0.0.18446744073709551615\"",
        "\"0.0.\\u0032001\"",
        "\" 0.0.2001\"",
        "\"0.0.1001\"",
    ];
    const SOURCES: [&str; 8] = [
        "",
        ",\"sourceAccountId\":\"0.0.1001\"",
        ",\"sourceAccountId\":\"0.0.5\"",
        ",\"sourceAccountId\":null",
        ",\"sourceAccountId\":\"\"",
        ",\"sourceAccountId\":\"bad\"",
        ",\"sourceAccountId\":1",
        ",\"sourceAccountId\":\"0.0.2001\"",
    ];
    const MEMOS: [&str; 8] = [
        "",
        ",\"transactionMemo\":\"m\"",
        ",\"transactionMemo\":\"\"",
        ",\"transactionMemo\":null",
        ",\"transactionMemo\":5",
        ",\"transactionMemo\":\"ü \\\"q\\\" \\u00e9\\n\"",
        ",\"transactionMemo\":\"a\",\"transactionMemo\":\"b\"",
        ",\"transactionMemo\":[]",
    ];
    const EXTRAS: [&str; 8] = [
        "",
        "",
        "",
        ",\"schedulingParams\":{\"isScheduled\":false}",
        ",\"schedulingParams\":null",
        ",\"foo\":1",
        ",\"transfers\":[]",
        " ",
    ];
    const ITEM_EXTRAS: [&str; 6] = [
        "",
        "",
        "",
        ",\"x\":1",
        ",\"amount\":2",
        ",\"accountId\":\"0.0.7\"",
    ];
    let mut seed: u64 = 0x5eed_1234_abcd_0001;
    let mut next = |n: usize| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((seed >> 33) as usize) % n
    };
    // Three in four values from the head of each list (strings and numbers the schema takes).
    let mut pick = |list: &[&'static str], head: usize| -> &'static str {
        if next(4) > 0 {
            list[next(head)]
        } else {
            list[next(list.len())]
        }
    };
    let mut out = vec![
        "[]".to_owned(),
        "null".to_owned(),
        "{}".to_owned(),
        "{\"transfers\":[]}".to_owned(),
        "{\"transfers\":{}}".to_owned(),
        "{\"transfers\":[1]}".to_owned(),
        "{\"transfers\":[{\"accountId\":\"0.0.2001\"}]}".to_owned(),
        "{\"transfers\":[{\"amount\":1}]}".to_owned(),
        " {\"transfers\" : [ {\"amount\" : 1 , \"accountId\" : \"0.0.2001\" } ] } ".to_owned(),
        "{\"transfers\":[{\"accountId\":\"0.0.2001\",\"amount\":1}]} x".to_owned(),
    ];
    for _ in 0..4000 {
        let count = 1 + pick(&["0", "1", "2"], 3).parse::<usize>().unwrap_or(0);
        let items: Vec<String> = (0..count)
            .map(|_| {
                format!(
                    "{{\"accountId\":{},\"amount\":{}{}}}",
                    pick(&IDS, 8),
                    pick(&AMOUNTS, 14),
                    pick(&ITEM_EXTRAS, 3)
                )
            })
            .collect();
        out.push(format!(
            "{{\"transfers\":[{}]{}{}{}}}",
            items.join(","),
            pick(&SOURCES, 3),
            pick(&MEMOS, 3),
            pick(&EXTRAS, 3)
        ));
    }
    out
}

/// The fast path of stages 1–2 (`Tool::read_plain`, `Tool::normalise_plain`) against the
/// general one (strict parse, schema, `Tool::normalise`) on every text of the corpus, for
/// both HBAR transfer tools (one reader, two schemas and normalisers): a text
/// the plain reader takes gives the same normalised params or the same error, and plugins
/// read the same rawParams; the texts it declines include every repeated key, null, unknown
/// key and `schedulingParams`.
#[test]
fn plain_params_normalise_exactly_as_the_general_path_does() {
    let env = PlainEnv::new(vec![]);
    let context = AgentContext {
        account_id: Some("0.0.1001".parse().unwrap()),
        mode: AgentMode::ReturnBytes,
    };
    let ctx = env.tool_context(&context, false);
    // Both HBAR transfer tools read the same shape with one reader.
    for method in ["transfer_hbar_tool", "transfer_hbar_with_allowance_tool"] {
        let tool = env.tools.get(method).unwrap();
        let (taken, normalised_ok) = plain_against_general(tool, &ctx);
        // The corpus exercises both paths, and both outcomes of the fast one (the reader
        // declines exponents, integral fractions, `-0`, long numbers and escapes: about half
        // the corpus's amounts and some of its ids).
        assert!(
            taken > 300 && normalised_ok > 30,
            "{method}: {taken} taken, {normalised_ok} normalised"
        );
    }
}

/// Every text of the corpus through `tool`'s plain reader and its general path: (texts the
/// reader took, of those normalised without error).
fn plain_against_general(
    tool: &dyn crate::tools::DynTool,
    ctx: &ToolContext<'_>,
) -> (usize, usize) {
    use super::call_state::{CallState, RawParams};
    let (mut taken, mut normalised_ok) = (0, 0);
    for text in transfer_corpus() {
        let general_raw = super::strict_json::parse(&text);
        let Some(plain) = tool.read_plain(&text) else {
            continue;
        };
        taken += 1;
        for refused in [
            "\"schedulingParams\"",
            "null",
            "\"foo\"",
            "\"x\"",
            "[]}",
            "\"1\"",
        ] {
            assert!(!text.contains(refused), "taken: {text}");
        }
        let general_raw = general_raw.unwrap_or_else(|e| panic!("{text}: {e}"));
        let fast = tool
            .normalise_plain(plain, ctx)
            .map(|n| n.json().to_owned());
        let general = tool
            .normalise(&general_raw, ctx)
            .map(|n| n.json().to_owned());
        assert_eq!(fast, general, "{}: {text}", tool.spec().method);
        normalised_ok += usize::from(fast.is_ok());
        // rawParams, as plugins read it.
        let plain_state = CallState::new("{}", RawParams::Plain(None), &text);
        let general_state = CallState::new("{}", RawParams::Value(general_raw), &text);
        assert_eq!(plain_state.raw_json(), general_state.raw_json(), "{text}");
    }
    (taken, normalised_ok)
}
