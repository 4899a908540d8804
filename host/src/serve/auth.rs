//! Who is calling `hak serve`: the agents of the manifest's `[[agents]]`, each known only by
//! the sha256 of its bearer key and bound to its context (account, mode, allowed tools), the
//! approvers of `[[approvers]]` (by their keys' digests: they read and decide parked calls,
//! nothing else), and the admin token. Keys are compared as digests in constant time (`subtle`), every agent
//! checked, so neither timing nor the order of entries tells a caller anything.

use crate::manifest::Manifest;
use crate::model::context::AgentContext;
use axum::http::HeaderMap;
use hedera::AccountId;
use sha2::{Digest, Sha256};
use std::str::FromStr;
use std::sync::Arc;
use subtle::ConstantTimeEq;

/// Header an agent that is allowed to may use to pick its account.
pub const ACCOUNT_HEADER: &str = "x-hak-account-id";

/// One configured agent, ready to check.
#[derive(Clone)]
pub struct Agent {
    pub name: Arc<str>,
    digest: [u8; 32],
    pub context: AgentContext,
    /// Empty: every tool.
    pub tools: Vec<String>,
    pub allow_account_header: bool,
}

/// Why a request is refused: (HTTP status, message).
pub type Refusal = (u16, String);

/// One authenticated caller: the context its calls run in and the agent entry it matched.
pub struct Caller<'a> {
    pub context: AgentContext,
    /// `None` when the server has no `[[agents]]`.
    pub agent: Option<&'a Agent>,
}

impl Caller<'_> {
    /// Whether this caller may call `method`.
    pub fn may_call(&self, method: &str) -> bool {
        self.agent
            .is_none_or(|agent| agent.tools.is_empty() || agent.tools.iter().any(|t| t == method))
    }

    /// [`Caller::may_call`], as a refusal naming the agent.
    pub fn check(&self, method: &str) -> Result<(), Refusal> {
        match self.agent {
            Some(agent) if !self.may_call(method) => {
                Err((403, format!("agent {} may not call {method}", agent.name)))
            }
            _ => Ok(()),
        }
    }
}

/// Who may use the admin routes (approvals, plugin changes and listing, metrics).
#[derive(Clone, Copy, PartialEq, Eq)]
enum AdminAccess {
    /// The bearer of the admin token (never an agent key: a server refuses to start with an
    /// agent whose key is the token).
    Token([u8; 32]),
    /// Anyone who reaches the server: no `[[agents]]` and no token (a loopback development
    /// server), or agents and an explicit `--admin-without-token`.
    Open,
    /// Nobody: agents are configured and no admin token is set, so no key an agent holds
    /// may decide its own held calls or change its own policies.
    Closed,
}

/// The callers a server accepts.
#[derive(Clone)]
pub struct Callers {
    agents: Vec<Agent>,
    admin: AdminAccess,
    default_context: AgentContext,
    /// `[[approvers]]`: each by the sha256 of its key.
    approvers: Vec<(Arc<str>, [u8; 32])>,
    /// Whether the admin token approves (as `admin`).
    admin_approves: bool,
}

fn digest(text: &str) -> [u8; 32] {
    Sha256::digest(text.as_bytes()).into()
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
}

impl Callers {
    /// The manifest's agents (keys read from their env vars now) and the admin token.
    pub fn from_manifest(
        manifest: &Manifest,
        default_context: &AgentContext,
        admin_token: Option<&str>,
    ) -> Result<Self, String> {
        let mut agents = Vec::new();
        for (i, spec) in manifest.agents.iter().enumerate() {
            let at = format!("agents[{i}] ({})", spec.name);
            let digest = key_digest(&at, spec.key_env.as_deref(), spec.key_sha256.as_deref())?;
            let mut context = default_context.clone();
            if let Some(id) = &spec.account_id {
                context.account_id =
                    Some(AccountId::from_str(id).map_err(|e| format!("{at}: account_id: {e}"))?);
            }
            if let Some(mode) = spec.mode {
                context.mode = mode;
            }
            agents.push(Agent {
                name: Arc::from(spec.name.as_str()),
                digest,
                context,
                tools: spec.tools.clone(),
                allow_account_header: spec.allow_account_header,
            });
        }
        let admin = match admin_token.map(digest) {
            Some(token) => {
                if let Some(agent) = agents.iter().find(|a| bool::from(a.digest.ct_eq(&token))) {
                    return Err(format!(
                        "agent {}'s key is the admin token: an agent could decide its own held calls; give the admin a token of its own",
                        agent.name
                    ));
                }
                AdminAccess::Token(token)
            }
            None if agents.is_empty() => AdminAccess::Open,
            None => AdminAccess::Closed,
        };
        let mut approvers = Vec::new();
        for (i, spec) in manifest.approvers.iter().enumerate() {
            let at = format!("approvers[{i}] ({})", spec.name);
            let key = key_digest(&at, spec.key_env.as_deref(), spec.key_sha256.as_deref())?;
            if let Some(agent) = agents.iter().find(|a| bool::from(a.digest.ct_eq(&key))) {
                return Err(format!(
                    "{at}: its key is agent {}'s: an agent could approve its own held calls",
                    agent.name
                ));
            }
            if matches!(admin, AdminAccess::Token(token) if bool::from(token.ct_eq(&key))) {
                return Err(format!(
                    "{at}: its key is the admin token: give each approver a key of their own"
                ));
            }
            if approvers
                .iter()
                .any(|(_, other): &(Arc<str>, [u8; 32])| bool::from(other.ct_eq(&key)))
            {
                return Err(format!("{at}: another approver has the same key"));
            }
            approvers.push((Arc::from(spec.name.trim()), key));
        }
        Ok(Callers {
            agents,
            admin,
            default_context: default_context.clone(),
            approvers,
            admin_approves: manifest.approvals.admin_approves,
        })
    }

    /// The approver a request speaks for: the `[[approvers]]` entry its bearer key names, or
    /// `admin` for the admin (unless `[approvals] admin_approves = false`), or why not.
    pub fn approver(&self, headers: &HeaderMap) -> Result<Arc<str>, Refusal> {
        if let Some(given) = bearer(headers).map(digest) {
            let mut found = None;
            for (name, key) in &self.approvers {
                if bool::from(key.ct_eq(&given)) {
                    found = Some(name.clone());
                }
            }
            if let Some(name) = found {
                return Ok(name);
            }
        }
        if self.is_admin(headers) {
            return if self.admin_approves {
                Ok(Arc::from("admin"))
            } else {
                Err((
                    403,
                    "the admin token does not approve here ([approvals] admin_approves = false): an approver decides with their own key".into(),
                ))
            };
        }
        Err(self.refusal())
    }

    /// Whether the request may list the calls awaiting approval: an approver or the admin.
    pub fn may_see_approvals(&self, headers: &HeaderMap) -> bool {
        self.is_admin(headers)
            || bearer(headers).map(digest).is_some_and(|given| {
                self.approvers
                    .iter()
                    .fold(false, |seen, (_, key)| seen | bool::from(key.ct_eq(&given)))
            })
    }

    /// Why a request that is neither the admin nor an approver is refused.
    pub fn refusal(&self) -> Refusal {
        if self.admin_closed() && self.approvers.is_empty() {
            (
                403,
                "admin routes are off: [[agents]] are configured and $HAK_ADMIN_TOKEN is not set (start the server with it, or with --admin-without-token)".into(),
            )
        } else {
            (401, "admin routes need the bearer token".into())
        }
    }

    /// Serve the admin routes without a token even though agents are configured (an explicit
    /// choice: every agent key then reaches them too).
    pub fn admin_without_token(mut self) -> Self {
        if self.admin == AdminAccess::Closed {
            self.admin = AdminAccess::Open;
        }
        self
    }

    /// Whether the admin routes are off: agents configured, no admin token.
    pub fn admin_closed(&self) -> bool {
        self.admin == AdminAccess::Closed
    }

    /// Callers without an agent entry (a server with no `[[agents]]`) get `context`; agents
    /// keep theirs.
    pub fn with_default_context(mut self, context: AgentContext) -> Self {
        self.default_context = context;
        self
    }

    /// Whether `[[approvers]]` decide parked calls (with their own keys).
    pub fn has_approvers(&self) -> bool {
        !self.approvers.is_empty()
    }

    pub fn has_agents(&self) -> bool {
        !self.agents.is_empty()
    }

    pub fn has_admin_token(&self) -> bool {
        matches!(self.admin, AdminAccess::Token(_))
    }

    /// The agent whose key is the request's bearer token (every agent is compared).
    fn agent(&self, headers: &HeaderMap) -> Option<&Agent> {
        let given = digest(bearer(headers)?);
        let mut found = None;
        for agent in &self.agents {
            if bool::from(agent.digest.ct_eq(&given)) {
                found = Some(agent);
            }
        }
        found
    }

    /// Who is asking, or why they are refused. Without agents configured every caller gets
    /// the manifest's context and may pick the account with `x-hak-account-id` (the server
    /// then listens on loopback only, unless started with `--insecure`).
    pub fn caller(&self, headers: &HeaderMap) -> Result<Caller<'_>, Refusal> {
        let (mut context, header_allowed, agent) = if self.agents.is_empty() {
            (self.default_context.clone(), true, None)
        } else {
            let Some(agent) = self.agent(headers) else {
                let why = if bearer(headers).is_some() {
                    "unknown agent key"
                } else {
                    "tool calls need `Authorization: Bearer <agent key>`"
                };
                return Err((401, why.into()));
            };
            (
                agent.context.clone(),
                agent.allow_account_header,
                Some(agent),
            )
        };
        if let Some(account) = headers.get(ACCOUNT_HEADER) {
            if !header_allowed {
                return Err((
                    403,
                    format!("{ACCOUNT_HEADER} is not allowed for this agent: its context is fixed"),
                ));
            }
            let text = account
                .to_str()
                .map_err(|_| (400, format!("{ACCOUNT_HEADER}: not text")))?;
            context.account_id = Some(AccountId::from_str(text).map_err(|e| {
                (
                    400,
                    format!("{ACCOUNT_HEADER}: invalid account id {text:?}: {e}"),
                )
            })?);
        }
        Ok(Caller { context, agent })
    }

    /// The context a tool call runs in and the agent's name (none without `[[agents]]`), or
    /// why it is refused.
    pub fn context_for(
        &self,
        headers: &HeaderMap,
        method: &str,
    ) -> Result<(AgentContext, Option<Arc<str>>), Refusal> {
        let caller = self.caller(headers)?;
        caller.check(method)?;
        Ok((caller.context, caller.agent.map(|a| a.name.clone())))
    }

    /// Whether the request may use the admin routes: it carries the admin token; anyone on
    /// an open server; nobody when they are closed.
    pub fn is_admin(&self, headers: &HeaderMap) -> bool {
        match &self.admin {
            AdminAccess::Open => true,
            AdminAccess::Closed => false,
            AdminAccess::Token(expected) => bearer(headers)
                .map(digest)
                .is_some_and(|given| bool::from(expected.ct_eq(&given))),
        }
    }
}

/// The sha256 of the key `key_env` names (at least 16 characters), or `key_sha256` itself.
fn key_digest(
    at: &str,
    key_env: Option<&str>,
    key_sha256: Option<&str>,
) -> Result<[u8; 32], String> {
    match (key_env, key_sha256) {
        (Some(var), _) => match std::env::var(var) {
            Ok(key) if key.trim().len() >= 16 => Ok(digest(key.trim())),
            Ok(_) => Err(format!(
                "{at}: ${var} must hold a key of at least 16 characters"
            )),
            Err(_) => Err(format!("{at}: ${var} is not set")),
        },
        (None, Some(hex_digest)) => {
            let mut out = [0u8; 32];
            hex::decode_to_slice(hex_digest, &mut out)
                .map_err(|e| format!("{at}: key_sha256: {e}"))?;
            Ok(out)
        }
        (None, None) => Err(format!("{at}: no key")),
    }
}
