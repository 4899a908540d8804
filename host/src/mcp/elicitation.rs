//! Approvals over MCP: when a policy answers needs-approval during a `tools/call`, and the
//! client declared the elicitation capability, the human behind the client is asked
//! (`elicitation/create`, a form with `approve: boolean` and an optional `note`). The call is
//! parked meanwhile in the server's [`Approvals`] (its id, timeout and limits), and the
//! client's answer decides it: accept with `approve: true` approves; anything else — accept
//! with `approve: false`, decline, cancel — denies; a failed request leaves the call to its
//! timeout. A client that cannot be asked is not asked. Over `hak mcp --listen` with the admin
//! routes open, every parked call is in the host's approvals, so the operator (console, `hak
//! approvals`) can decide it as well, whoever answers first; over stdio (no admin routes) a
//! call whose client cannot be asked blocks at once. `[approvals] mcp_elicitation = false`
//! turns asking off altogether. Nothing here runs stages or knows plugins.

use crate::approvals::{Approvals, Approver, Ask, Outcome};
use rmcp::model::{ElicitRequestParams, ElicitationAction, ElicitationSchema};
use rmcp::{Peer, RoleServer};
use std::sync::Arc;

/// Asks the MCP client of one call.
pub struct ElicitingApprover {
    pub approvals: Arc<Approvals>,
    pub peer: Peer<RoleServer>,
    pub runtime: tokio::runtime::Handle,
}

impl ElicitingApprover {
    /// An approver for a call from `peer`, if that client can be asked.
    pub fn for_client(
        approvals: &Arc<Approvals>,
        peer: &Peer<RoleServer>,
        runtime: tokio::runtime::Handle,
    ) -> Option<Arc<dyn Approver>> {
        let info = peer.peer_info()?;
        info.capabilities.elicitation.as_ref()?;
        Some(Arc::new(ElicitingApprover {
            approvals: approvals.clone(),
            peer: peer.clone(),
            runtime,
        }))
    }
}

/// What the human is asked.
fn question(ask: &Ask, id: &str, expires_at: &str) -> String {
    let mut text = format!(
        "{} asks for approval of {} ({}):\n{}",
        ask.policy_name, ask.tool, ask.stage, ask.message
    );
    if let Some(facts) = &ask.facts {
        for m in &facts.movements {
            text.push_str(&format!(
                "\n- {} {} to {}",
                m.amount,
                match &m.asset {
                    crate::model::facts::Asset::Hbar => "tinybars".to_owned(),
                    crate::model::facts::Asset::Token(t) => format!("units of {t}"),
                    crate::model::facts::Asset::Nft(t) => format!("NFTs of {t}"),
                },
                m.to.as_deref().unwrap_or("a new account")
            ));
        }
    }
    text.push_str(&format!(
        "\nApproval {id}; without an answer by {expires_at} the call is denied."
    ));
    text
}

fn schema() -> ElicitationSchema {
    ElicitationSchema::builder()
        .required_bool_property("approve", |b| b.description("Approve the call"))
        .string_property("note", |s| s.description("Why (kept in the decision log)"))
        .build_unchecked()
}

impl Approver for ElicitingApprover {
    fn decide(&self, ask: Ask) -> Outcome {
        let approvals = self.approvals.clone();
        let peer = self.peer.clone();
        let runtime = self.runtime.clone();
        self.approvals.park_with(ask, move |pending| {
            let id = pending.id.clone();
            let message = question(&pending.ask, &id, &pending.expires_at);
            let by = peer
                .peer_info()
                .map(|i| format!("mcp client {}", i.client_info.name))
                .unwrap_or_else(|| "mcp client".to_owned());
            runtime.spawn(async move {
                let request = ElicitRequestParams::FormElicitationParams {
                    meta: None,
                    message,
                    requested_schema: schema(),
                };
                match peer.create_elicitation(request).await {
                    Ok(answer) => {
                        let content = answer.content.unwrap_or_default();
                        let note = content["note"]
                            .as_str()
                            .map(|n| n.chars().take(4096).collect::<String>());
                        let approve = matches!(answer.action, ElicitationAction::Accept)
                            && content["approve"] == true;
                        let note = note.or_else(|| match answer.action {
                            ElicitationAction::Accept => None,
                            ElicitationAction::Decline => Some("declined".to_owned()),
                            _ => Some("cancelled".to_owned()),
                        });
                        // Already decided (timed out meanwhile): nothing to do.
                        let _ = approvals.decide(&id, approve, &by, "mcp-elicitation", note);
                    }
                    Err(e) => tracing::warn!(
                        approval = %id,
                        "elicitation failed ({e}); the call waits for its timeout"
                    ),
                }
            });
        })
    }
}
