//! The agent context: who the agent acts for and in which mode (the kit's `Context`).

use hedera::AccountId;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The kit's `AgentMode`, with its wire names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub enum AgentMode {
    #[default]
    #[serde(rename = "autonomous")]
    Autonomous,
    #[serde(rename = "returnBytes", alias = "return-bytes", alias = "return_bytes")]
    ReturnBytes,
    #[serde(
        rename = "customExecuteTx",
        alias = "custom-execute",
        alias = "custom-execute-tx"
    )]
    CustomExecuteTx,
    #[serde(rename = "customReturnBytes", alias = "custom-return-bytes")]
    CustomReturnBytes,
}

impl AgentMode {
    pub fn as_str(self) -> &'static str {
        match self {
            AgentMode::Autonomous => "autonomous",
            AgentMode::ReturnBytes => "returnBytes",
            AgentMode::CustomExecuteTx => "customExecuteTx",
            AgentMode::CustomReturnBytes => "customReturnBytes",
        }
    }

    /// The kit's `isReturnBytesMode`.
    pub fn is_return_bytes(self) -> bool {
        matches!(self, AgentMode::ReturnBytes | AgentMode::CustomReturnBytes)
    }

    /// The kit's `isCustomMode`.
    pub fn is_custom(self) -> bool {
        matches!(
            self,
            AgentMode::CustomExecuteTx | AgentMode::CustomReturnBytes
        )
    }

    /// Parse a CLI / manifest spelling (`return-bytes`, `returnBytes`, …).
    pub fn parse(s: &str) -> Result<Self, String> {
        serde_json::from_value(serde_json::Value::String(s.to_owned())).map_err(|_| {
            format!(
                "unknown mode {s:?}: expected autonomous, return-bytes, custom-execute-tx or custom-return-bytes"
            )
        })
    }
}

impl fmt::Display for AgentMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Who the agent acts for. Plugin instances and scratchpads are scoped to one context.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AgentContext {
    /// The kit's `context.accountId` (payer in return-bytes mode, default sender).
    pub account_id: Option<AccountId>,
    pub mode: AgentMode,
}

impl AgentContext {
    /// A stable key that scopes plugin state: one per account and mode.
    pub fn scope_key(&self) -> String {
        match &self.account_id {
            Some(id) => format!("{id}/{}", self.mode),
            None => format!("-/{}", self.mode),
        }
    }
}
