//! Native Hedera tools with the kit's names, schemas, normalisation and messages. A tool
//! normalises raw params (stage 2) and builds a transaction or runs a query (stage 4); the
//! secondary action (stage 6) belongs to `strategy`, the stages to `lifecycle`.
//! One file per tool under its kit plugin's folder; shared normalisers in [`normalise`].

pub mod account;
pub mod account_query;
pub mod consensus;
pub mod consensus_query;
pub mod description;
pub mod evm;
pub mod evm_query;
pub mod js_number;
pub mod json_text;
pub mod keys;
pub mod mirror_text;
pub mod misc_query;
pub mod normalise;
pub mod plain;
pub mod scheduling;
pub mod schema;
pub mod schema_fragments;
pub mod shapes;
pub mod token;
pub mod token_query;
pub mod transaction;
pub mod transaction_query;
pub mod transfer_order;

use crate::mirror::{Mirror, MirrorFailure};
use crate::model::context::AgentContext;
pub use crate::model::facts::Facts;
pub use crate::model::ToolType;
use hedera::AccountId;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use std::any::Any;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
pub use transaction::{BuiltTransaction, RawTransactionResponse};

/// What the host knows about the call's surroundings while normalising and building.
pub struct ToolContext<'a> {
    pub context: &'a AgentContext,
    /// The operator's account, when one is configured.
    pub operator_account_id: Option<AccountId>,
    /// The operator's public key, when the operator can sign.
    pub operator_public_key: Option<hedera::PublicKey>,
    /// Nodes to build transactions for, when the network configuration fixes them.
    pub node_account_ids: &'a [AccountId],
    /// Whether a plugin will see the post-core summary (tools skip its details otherwise).
    pub wants_summary: bool,
    /// The mirror node, for tools that read the ledger.
    pub mirror: &'a Mirror,
    /// What validation does with keys a tool's schema does not name (`[context] strict_params`).
    pub unknown_keys: schema::UnknownKeys,
    /// The network the call is for (named in the EVM tools' refusals).
    pub network: crate::manifest::NetworkName,
    /// The kit's EVM factory contracts on that network.
    pub evm_factories: &'a evm::call::EvmFactories,
}

impl ToolContext<'_> {
    /// Build for the nodes the network configuration fixes, if it fixes any.
    pub fn pin_nodes<D>(&self, tx: &mut hedera::Transaction<D>) {
        if !self.node_account_ids.is_empty() {
            tx.node_account_ids(self.node_account_ids.iter().copied());
        }
    }
}

/// An error from a tool's own stages; its message follows `Failed to execute <Tool Name>: `.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    pub message: String,
    /// The param it is about, when the kit's words do not name it (`failed to parse entity
    /// id: 1.2`): envelopes carry it as `raw.field`.
    pub field: Option<String>,
}

/// A failed mirror read fails the tool with the kit's words for it.
impl From<MirrorFailure> for ToolError {
    fn from(failure: MirrorFailure) -> Self {
        ToolError::message(failure.message)
    }
}

impl ToolError {
    pub fn message(message: impl Into<String>) -> Self {
        ToolError {
            message: message.into(),
            field: None,
        }
    }

    /// A parameter error in the kit's format for one field.
    pub fn invalid_field(field: &str, reason: impl fmt::Display) -> Self {
        ToolError {
            message: format!("Invalid parameters: Field \"{field}\" - {reason}"),
            field: Some(field.to_owned()),
        }
    }

    /// Name the param this error is about (unless it names one already).
    pub fn in_field(mut self, field: &str) -> Self {
        self.field.get_or_insert_with(|| field.to_owned());
        self
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ToolError {}

/// What a tool's core action produced.
pub enum CoreOutput {
    /// A transaction tool built (not submitted) a transaction.
    Transaction(Box<BuiltTransaction>),
    /// A query tool's final `{raw, humanMessage}`.
    Query(Value),
}

/// Raw params a tool read straight from their text ([`Tool::read_plain`]): its own typed
/// value. The text is what rawParams shows, as sent (a plain reader declines a number that
/// JavaScript would rewrite, such as `1.0`).
pub struct PlainParams {
    value: Box<dyn Any + Send>,
}

impl PlainParams {
    pub fn new<T: Send + 'static>(value: T) -> Self {
        PlainParams {
            value: Box::new(value),
        }
    }

    /// The tool's own value: of type `T`, or an internal error (params another tool read).
    pub fn into_inner<T: 'static>(self) -> Result<T, ToolError> {
        self.value
            .downcast::<T>()
            .map(|v| *v)
            .map_err(|_| ToolError::message("internal error: plain params of another tool"))
    }
}

/// A tool, written against its own typed normalised params.
pub trait Tool: Send + Sync + 'static {
    /// The normalised params: what stage 3 plugins see (as JSON) and may replace.
    type Normalised: Serialize + DeserializeOwned + schemars::JsonSchema + Send + 'static;

    const METHOD: &'static str;
    const NAME: &'static str;
    /// The kit's description, a template with the markers [`description`] fills.
    const DESCRIPTION: &'static str;
    const TOOL_TYPE: ToolType;
    /// Integer params the tool converts to base units itself, refusing past int64 in the
    /// kit's words (`… in base units (…) exceeds the HTS int64 maximum …`): the schema leaves
    /// their int64 bound to it.
    const CONVERTED_INTEGERS: &'static [&'static str] = &[];

    /// The kit's JSON schema of the raw params.
    fn schema() -> Value;

    /// The JSON Schema of the `coreActionResult` plugins see at post-core-action
    /// ([`shapes`]): by default the transaction summary without details, or a query result
    /// with an unspecified `raw`. Tools that add details or return a query result say so.
    fn core_result_schema() -> Value {
        shapes::default_result(Self::TOOL_TYPE, shapes::is_schedulable(&Self::schema()))
    }

    /// Stage 2: raw params (already valid against [`Tool::schema`]) → normalised params.
    fn normalise(&self, raw: &Value, ctx: &ToolContext<'_>) -> Result<Self::Normalised, ToolError>;

    /// The fast path of stages 1–2 for plainly well-formed params: the text read straight
    /// into the tool's typed raw params (no `serde_json::Value`), when it is something
    /// [`Tool::schema`] accepts with nothing to strip, refuse or word — no unknown, repeated or
    /// null key, no number past a double or written as a float JavaScript reads as an integer
    /// (`1.0`, `1e3`, `-0`: rawParams shows those rewritten), every constraint met. `None` for
    /// anything else:
    /// the general path (strict parse, schema, [`Tool::normalise`]) reads it and words its
    /// error. A tool that reads plain params normalises them in [`Tool::normalise_plain`]
    /// to exactly what [`Tool::normalise`] makes of the same text (a differential test per
    /// tool holds it to that). Default: no fast path.
    fn read_plain(&self, _text: &str) -> Option<PlainParams> {
        None
    }

    /// The normalised params as the JSON object plugins see: `serde_json::to_string`'s text.
    /// A tool on the hot path may write it by hand ([`json_text`]), to the same bytes (a
    /// differential test per tool holds it to that).
    fn normalised_json(normalised: &Self::Normalised) -> String {
        serde_json::to_string(normalised).unwrap_or_else(|_| "null".into())
    }

    /// Stage 2 for params [`Tool::read_plain`] read.
    fn normalise_plain(
        &self,
        _raw: PlainParams,
        _ctx: &ToolContext<'_>,
    ) -> Result<Self::Normalised, ToolError> {
        Err(ToolError::message(
            "internal error: plain params for a tool without a reader",
        ))
    }

    /// Checks that hold for any normalised params, whether the host or a hook produced them.
    fn check_normalised(&self, _normalised: &Self::Normalised) -> Result<(), ToolError> {
        Ok(())
    }

    /// Stage 4: build the transaction, or run the query.
    fn core_action(
        &self,
        normalised: &Self::Normalised,
        ctx: &ToolContext<'_>,
    ) -> Result<CoreOutput, ToolError>;

    /// What the call does, as policies decide on it (who gets what, tokens, changes, memo,
    /// scheduling): read from the normalised params, never from the network. Default:
    /// nothing to state.
    fn facts(&self, _normalised: &Self::Normalised) -> Facts {
        Facts::default()
    }

    /// Whether [`Tool::read_facts`] reads the network and so may fail to state the facts
    /// (signing a schedule): such a tool's facts are read whenever a policy judges the call,
    /// so that a call whose facts cannot be stated is refused. Other tools state them from the
    /// params alone, without failing: they are read only when a plugin reads them or an
    /// approver is shown them.
    const FACTS_FROM_NETWORK: bool = false;

    /// The facts policies judge, read when a plugin of the chain will see them (never for a
    /// call no plugin judges). Default: [`Tool::facts`]. A tool whose movements live on the
    /// network (signing a schedule executes its body) reads them here and sets
    /// [`Tool::FACTS_FROM_NETWORK`]; an error refuses the call, since a policy cannot judge
    /// what cannot be stated.
    fn read_facts(
        &self,
        normalised: &Self::Normalised,
        _ctx: &ToolContext<'_>,
    ) -> Result<Facts, ToolError> {
        Ok(self.facts(normalised))
    }

    /// The human message after a successful execution (the kit's per-tool `postProcess`).
    fn post_process(&self, raw: &RawTransactionResponse) -> String {
        serde_json::to_string_pretty(raw).unwrap_or_default()
    }

    /// Advice the kit appends to the human message of a failed call with this `errorCode`
    /// (its per-tool `handleError`).
    fn error_hint(&self, _error_code: &str) -> Option<&'static str> {
        None
    }

    /// Fields the kit adds beside `raw` and `humanMessage` after a successful execution
    /// (`erc20Address`, …). Default: none.
    fn result_fields(&self, _raw: &RawTransactionResponse) -> serde_json::Map<String, Value> {
        serde_json::Map::new()
    }
}

/// Normalised params, type-erased for the lifecycle. Their JSON is produced on first use
/// (only when a plugin will see it).
pub struct Normalised {
    value: Box<dyn Any + Send>,
    json: std::cell::OnceCell<String>,
    to_json: fn(&(dyn Any + Send)) -> String,
}

impl Normalised {
    fn new<T: Tool>(value: T::Normalised, json: Option<String>) -> Self {
        let cell = std::cell::OnceCell::new();
        if let Some(json) = json {
            let _ = cell.set(json);
        }
        Normalised {
            value: Box::new(value),
            json: cell,
            to_json: to_json::<T>,
        }
    }

    /// The normalised params as the JSON object plugins see.
    pub fn json(&self) -> &str {
        self.json.get_or_init(|| (self.to_json)(&*self.value))
    }
}

fn to_json<T: Tool>(value: &(dyn Any + Send)) -> String {
    value
        .downcast_ref::<T::Normalised>()
        .map_or_else(|| "null".into(), T::normalised_json)
}

/// A tool's identity and schema, for listings and envelopes.
#[derive(Clone, Debug)]
pub struct ToolSpec {
    pub method: &'static str,
    pub name: &'static str,
    /// The kit's description as a template ([`description`]); see [`ToolSpec::describe`].
    pub description_template: &'static str,
    pub tool_type: ToolType,
    pub parameters: Value,
    /// `parameters`, compiled for validation.
    pub schema: schema::Schema,
}

impl ToolSpec {
    /// The kit's description of this tool for an agent in `context`.
    pub fn describe(&self, context: &AgentContext) -> String {
        description::render(self.description_template, context)
    }

    /// What a listing shows an agent in `context` (`hak tools`, `GET /v1/tools`).
    pub fn listing(&self, context: &AgentContext) -> ToolListing<'_> {
        ToolListing {
            method: self.method,
            name: self.name,
            description: self.describe(context),
            tool_type: self.tool_type,
            parameters: &self.parameters,
        }
    }
}

/// One tool as a listing shows it: method, name, the description rendered for the caller's
/// context, type and the JSON schema of its params.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolListing<'a> {
    pub method: &'static str,
    pub name: &'static str,
    pub description: String,
    pub tool_type: ToolType,
    /// The JSON schema of the tool's params.
    #[schema(value_type = Object)]
    pub parameters: &'a Value,
}

/// The object-safe face of a [`Tool`] that the lifecycle drives.
pub trait DynTool: Send + Sync {
    fn spec(&self) -> &ToolSpec;
    fn normalise(&self, raw: &Value, ctx: &ToolContext<'_>) -> Result<Normalised, ToolError>;
    /// [`Tool::read_plain`].
    fn read_plain(&self, text: &str) -> Option<PlainParams>;
    /// [`Tool::normalise_plain`], then the checks of [`DynTool::normalise`].
    fn normalise_plain(
        &self,
        raw: PlainParams,
        ctx: &ToolContext<'_>,
    ) -> Result<Normalised, ToolError>;
    /// Parse and check normalised params a hook supplied.
    fn normalised_from_json(&self, json: &str) -> Result<Normalised, ToolError>;
    fn core_action(
        &self,
        normalised: &Normalised,
        ctx: &ToolContext<'_>,
    ) -> Result<CoreOutput, ToolError>;
    fn post_process(&self, raw: &RawTransactionResponse) -> String;
    fn error_hint(&self, error_code: &str) -> Option<&'static str>;
    fn result_fields(&self, raw: &RawTransactionResponse) -> serde_json::Map<String, Value>;
    /// [`Tool::facts`] of normalised params this tool produced or checked.
    fn facts(&self, normalised: &Normalised) -> Facts;
    /// [`Tool::FACTS_FROM_NETWORK`].
    fn facts_from_network(&self) -> bool;
    /// [`Tool::read_facts`] of normalised params this tool produced or checked.
    fn read_facts(
        &self,
        normalised: &Normalised,
        ctx: &ToolContext<'_>,
    ) -> Result<Facts, ToolError>;
    /// The JSON Schemas of this tool's stage JSON (built on demand; not for the call path).
    fn shapes(&self) -> shapes::ToolShapes;
}

struct Erased<T: Tool> {
    tool: T,
    spec: ToolSpec,
}

impl<T: Tool> DynTool for Erased<T> {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn normalise(&self, raw: &Value, ctx: &ToolContext<'_>) -> Result<Normalised, ToolError> {
        self.spec
            .schema
            .validate_with(raw, ctx.unknown_keys)
            .map_err(ToolError::message)?;
        let value = self.tool.normalise(raw, ctx)?;
        self.tool.check_normalised(&value)?;
        Ok(Normalised::new::<T>(value, None))
    }

    fn read_plain(&self, text: &str) -> Option<PlainParams> {
        self.tool.read_plain(text)
    }

    fn normalise_plain(
        &self,
        raw: PlainParams,
        ctx: &ToolContext<'_>,
    ) -> Result<Normalised, ToolError> {
        let value = self.tool.normalise_plain(raw, ctx)?;
        self.tool.check_normalised(&value)?;
        Ok(Normalised::new::<T>(value, None))
    }

    fn normalised_from_json(&self, json: &str) -> Result<Normalised, ToolError> {
        let value: T::Normalised = serde_json::from_str(json).map_err(|e| {
            ToolError::message(format!("normalisedParams do not match {}: {e}", T::METHOD))
        })?;
        self.tool.check_normalised(&value)?;
        Ok(Normalised::new::<T>(value, Some(json.to_owned())))
    }

    fn core_action(
        &self,
        normalised: &Normalised,
        ctx: &ToolContext<'_>,
    ) -> Result<CoreOutput, ToolError> {
        let value = normalised
            .value
            .downcast_ref::<T::Normalised>()
            .ok_or_else(|| {
                ToolError::message("internal error: normalised params of another tool")
            })?;
        self.tool.core_action(value, ctx)
    }

    fn post_process(&self, raw: &RawTransactionResponse) -> String {
        self.tool.post_process(raw)
    }

    fn error_hint(&self, error_code: &str) -> Option<&'static str> {
        self.tool.error_hint(error_code)
    }

    fn result_fields(&self, raw: &RawTransactionResponse) -> serde_json::Map<String, Value> {
        self.tool.result_fields(raw)
    }

    fn facts(&self, normalised: &Normalised) -> Facts {
        normalised
            .value
            .downcast_ref::<T::Normalised>()
            .map(|value| self.tool.facts(value))
            .unwrap_or_default()
    }

    fn facts_from_network(&self) -> bool {
        T::FACTS_FROM_NETWORK
    }

    fn read_facts(
        &self,
        normalised: &Normalised,
        ctx: &ToolContext<'_>,
    ) -> Result<Facts, ToolError> {
        match normalised.value.downcast_ref::<T::Normalised>() {
            Some(value) => self.tool.read_facts(value, ctx),
            None => Ok(Facts::default()),
        }
    }

    fn shapes(&self) -> shapes::ToolShapes {
        shapes::ToolShapes {
            method: T::METHOD,
            tool_type: T::TOOL_TYPE,
            raw_params: T::schema(),
            normalised_params: shapes::schema_of::<T::Normalised>(),
            core_action_result: T::core_result_schema(),
        }
    }
}

/// Every tool hak serves, by method.
#[derive(Clone)]
pub struct ToolRegistry {
    tools: Arc<BTreeMap<&'static str, Box<dyn DynTool>>>,
}

impl ToolRegistry {
    /// All native tools.
    pub fn native() -> Self {
        let mut tools: BTreeMap<&'static str, Box<dyn DynTool>> = BTreeMap::new();
        let mut add = |tool: Box<dyn DynTool>| {
            tools.insert(tool.spec().method, tool);
        };
        account::register(&mut add);
        account_query::register(&mut add);
        consensus::register(&mut add);
        consensus_query::register(&mut add);
        evm::register(&mut add);
        evm_query::register(&mut add);
        misc_query::register(&mut add);
        transaction_query::register(&mut add);
        token::register(&mut add);
        token_query::register(&mut add);
        ToolRegistry {
            tools: Arc::new(tools),
        }
    }

    pub fn get(&self, method: &str) -> Option<&dyn DynTool> {
        self.tools.get(method).map(|t| &**t)
    }

    /// The facts of a call to `method` whose normalised params are `normalised_json` (as a
    /// stage input carries them): for running a plugin outside a call (`hak plugin test`,
    /// replay, tests). `None` for an unknown method or params the tool refuses.
    pub fn facts_from_json(&self, method: &str, normalised_json: &str) -> Option<Facts> {
        let tool = self.get(method)?;
        let normalised = tool.normalised_from_json(normalised_json).ok()?;
        Some(tool.facts(&normalised))
    }

    /// Every tool's [`shapes::ToolShapes`], by method.
    pub fn shapes(&self) -> Vec<shapes::ToolShapes> {
        self.tools.values().map(|t| t.shapes()).collect()
    }

    pub fn specs(&self) -> impl Iterator<Item = &ToolSpec> {
        self.tools.values().map(|t| t.spec())
    }

    pub fn methods(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.tools.keys().copied()
    }
}

/// Wrap a typed tool for the registry.
pub fn erase<T: Tool>(tool: T) -> Box<dyn DynTool> {
    let spec = ToolSpec {
        method: T::METHOD,
        name: T::NAME,
        description_template: T::DESCRIPTION,
        tool_type: T::TOOL_TYPE,
        schema: schema::Schema::compile(&T::schema()).bounded_by_the_tool(T::CONVERTED_INTEGERS),
        parameters: T::schema(),
    };
    Box::new(Erased { tool, spec })
}
