//! One call as a Cedar request: the principal (`Agent`) and resource (`Network`) from the
//! stage input's `context`, the action from the tool, the context (`Call`) from the host's
//! facts and clock. The entities change only when the agent, its account, mode or network
//! does, so they are built once per such change, not per call. What must not live here:
//! parsing or validating policies (`load`), or what a decision means (`lib`).

use cedar_policy::{
    Authorizer, Context, Entities, Entity, EntityId, EntityTypeName, EntityUid, PolicySet, Request,
    Response, RestrictedExpression, Schema,
};
use hak_guest::{Asset, Facts, Via};
use serde::Deserialize;
use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::str::FromStr;

/// Who calls, on which network: the stage input's `context` (`wit/README.md`).
#[derive(Deserialize, Clone, PartialEq, Eq, Default, Debug)]
#[serde(rename_all = "camelCase")]
pub struct Who<'a> {
    #[serde(borrow, default)]
    pub agent: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub account_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub mode: Cow<'a, str>,
    #[serde(borrow, default)]
    pub network: Cow<'a, str>,
}

impl Who<'_> {
    /// The principal's id: the agent's name, else its account id, else `""`.
    pub fn principal(&self) -> &str {
        self.agent
            .as_deref()
            .or(self.account_id.as_deref())
            .unwrap_or("")
    }

    fn owned(&self) -> Who<'static> {
        Who {
            agent: self.agent.as_ref().map(|s| Cow::Owned(s.to_string())),
            account_id: self.account_id.as_ref().map(|s| Cow::Owned(s.to_string())),
            mode: Cow::Owned(self.mode.to_string()),
            network: Cow::Owned(self.network.to_string()),
        }
    }
}

/// Builds requests; keeps the entities of the last principal and network it saw.
pub struct Requests {
    agent_type: EntityTypeName,
    network_type: EntityTypeName,
    /// Every tool's action, by method.
    actions: HashMap<String, EntityUid>,
    /// The schema's actions and their groups (`Action::"transaction"`, `Action::"query"`).
    action_entities: Entities,
    last: RefCell<Option<Built>>,
}

/// The entities and uids of one principal and network.
struct Built {
    who: Who<'static>,
    principal: EntityUid,
    resource: EntityUid,
    entities: Entities,
}

impl Requests {
    /// Requests for the schema's actions: every tool must be one, applying to an `Agent` and
    /// a `Network` with the `Call` context; checked here, once, with a request of each type,
    /// so that no call can fail to match the schema later.
    pub fn new(schema: &Schema) -> Result<Self, String> {
        let agent_type = EntityTypeName::from_str("Agent").map_err(|e| e.to_string())?;
        let network_type = EntityTypeName::from_str("Network").map_err(|e| e.to_string())?;
        let action_type = EntityTypeName::from_str("Action").map_err(|e| e.to_string())?;
        let action_entities = schema
            .action_entities()
            .map_err(|e| format!("invalid config: schema: its actions: {e}"))?;
        let mut actions = HashMap::new();
        for tool in crate::schema::QUERIES
            .iter()
            .chain(crate::schema::TRANSACTIONS.iter())
        {
            let uid = EntityUid::from_type_name_and_id(action_type.clone(), EntityId::new(tool));
            actions.insert((*tool).to_owned(), uid);
        }
        let requests = Requests {
            agent_type,
            network_type,
            actions,
            action_entities,
            last: RefCell::new(None),
        };
        // A request of every action, with every attribute, checked against the schema.
        let who = Who {
            agent: Some("schema-check".into()),
            account_id: Some("0.0.1001".into()),
            mode: "autonomous".into(),
            network: "testnet".into(),
        };
        let built = requests.build(&who)?;
        let sent = built
            .entities
            .iter()
            .filter(|e| e.uid().type_name() != &action_type)
            .cloned();
        Entities::from_entities(sent, Some(schema)).map_err(|e| {
            format!("invalid config: schema: the entities hak sends (Agent {{account: String, mode: String}}, Network) do not match it: {e}")
        })?;
        let facts = Facts {
            movements: Vec::new(),
            source: None,
            tokens: Vec::new(),
            changes: Vec::new(),
            memo: None,
            scheduled: false,
        };
        for (tool, action) in &requests.actions {
            Request::new(
                built.principal.clone(),
                action.clone(),
                built.resource.clone(),
                context(&facts, 0)?,
                Some(schema),
            )
            .map_err(|e| {
                format!("invalid config: schema: a request for {tool} does not match it: {e}")
            })?;
        }
        Ok(requests)
    }

    /// Cedar's answer to `method` by `who` doing what `facts` say at `now_ms`; `None` for a
    /// method the schema has no action for (a tool this plugin does not know).
    pub fn authorize(
        &self,
        authorizer: &Authorizer,
        policies: &PolicySet,
        who: &Who<'_>,
        method: &str,
        facts: &Facts,
        now_ms: u64,
    ) -> Result<Option<Response>, String> {
        let Some(action) = self.actions.get(method) else {
            return Ok(None);
        };
        let mut last = self.last.borrow_mut();
        let built = match last.as_ref() {
            Some(built) if built.who == *who => built,
            _ => last.insert(self.build(who)?),
        };
        let request = Request::new(
            built.principal.clone(),
            action.clone(),
            built.resource.clone(),
            context(facts, now_ms)?,
            // Every request has the shape `new` checked against the schema.
            None,
        )
        .map_err(|e| e.to_string())?;
        Ok(Some(authorizer.is_authorized(
            &request,
            policies,
            &built.entities,
        )))
    }

    fn build(&self, who: &Who<'_>) -> Result<Built, String> {
        let principal = EntityUid::from_type_name_and_id(
            self.agent_type.clone(),
            EntityId::new(who.principal()),
        );
        let resource = EntityUid::from_type_name_and_id(
            self.network_type.clone(),
            EntityId::new(&who.network),
        );
        let agent = Entity::new(
            principal.clone(),
            HashMap::from([
                (
                    "account".to_owned(),
                    RestrictedExpression::new_string(
                        who.account_id.as_deref().unwrap_or("").to_owned(),
                    ),
                ),
                (
                    "mode".to_owned(),
                    RestrictedExpression::new_string(who.mode.to_string()),
                ),
            ]),
            HashSet::new(),
        )
        .map_err(|e| e.to_string())?;
        let network = Entity::new_no_attrs(resource.clone(), HashSet::new());
        let entities = self
            .action_entities
            .clone()
            .add_entities([agent, network], None)
            .map_err(|e| e.to_string())?;
        Ok(Built {
            who: who.owned(),
            principal,
            resource,
            entities,
        })
    }
}

/// Tinybars as a Cedar `Long`: "all of it" (and anything past `i64::MAX`) is `i64::MAX`.
fn long(amount: u128) -> i64 {
    i64::try_from(amount).unwrap_or(i64::MAX)
}

const WEEKDAYS: [&str; 7] = ["thu", "fri", "sat", "sun", "mon", "tue", "wed"];

/// The `Call` context of `facts` at the UTC instant `now_ms`.
pub fn context(facts: &Facts, now_ms: u64) -> Result<Context, String> {
    let mut hbar_out: u128 = 0;
    let mut hbar_to: BTreeMap<Option<&str>, u128> = BTreeMap::new();
    let mut recipients = Vec::new();
    let mut allowance = false;
    for m in &facts.movements {
        let amount = u128::from(m.amount);
        if matches!(m.asset, Asset::Hbar) {
            hbar_out = hbar_out.saturating_add(amount);
            // A movement to a new account (no id yet) counts alone.
            let to = hbar_to.entry(m.to.as_deref()).or_default();
            *to = if m.to.is_some() {
                to.saturating_add(amount)
            } else {
                (*to).max(amount)
            };
        }
        allowance |= matches!(m.via, Via::Allowance);
        if let Some(to) = &m.to {
            recipients.push(RestrictedExpression::new_string(to.clone()));
        }
    }
    let max_to_one = hbar_to.values().copied().max().unwrap_or(0);
    let days = now_ms / 86_400_000;
    let pairs = [
        ("hbarOut", RestrictedExpression::new_long(long(hbar_out))),
        (
            "maxHbarToOne",
            RestrictedExpression::new_long(long(max_to_one)),
        ),
        ("recipients", RestrictedExpression::new_set(recipients)),
        (
            "tokens",
            RestrictedExpression::new_set(
                facts
                    .tokens
                    .iter()
                    .map(|t| RestrictedExpression::new_string(t.clone())),
            ),
        ),
        (
            "source",
            RestrictedExpression::new_string(facts.source.clone().unwrap_or_default()),
        ),
        (
            "changes",
            RestrictedExpression::new_set(
                facts
                    .changes
                    .iter()
                    .map(|e| RestrictedExpression::new_string(e.id.clone())),
            ),
        ),
        ("allowance", RestrictedExpression::new_bool(allowance)),
        (
            "memo",
            RestrictedExpression::new_string(facts.memo.clone().unwrap_or_default()),
        ),
        ("scheduled", RestrictedExpression::new_bool(facts.scheduled)),
        (
            "hourUtc",
            RestrictedExpression::new_long(((now_ms / 3_600_000) % 24) as i64),
        ),
        (
            "weekdayUtc",
            RestrictedExpression::new_string(WEEKDAYS[(days % 7) as usize].to_owned()),
        ),
    ];
    Context::from_pairs(pairs.into_iter().map(|(k, v)| (k.to_owned(), v)))
        .map_err(|e| e.to_string())
}
