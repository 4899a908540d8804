//! What an operator can grant a plugin, in one place: the capability names the manifest
//! accepts (`capabilities = [...]` of a `[[plugins]]` entry) and what each one allows; for the
//! network ones, the quotas and counters of their use ([`quota`]) and the actions themselves
//! behind a trait ([`actions`]; the SDK implementation is `network::OperatorActions`), and the
//! exchange rate the `rates` capability reads, kept host-wide ([`rates`]).
//! Nothing is granted by default. The sandbox binds the network ones to the WIT
//! (`runtime::hedera_api`); the lifecycle checks the replacement ones.

pub mod actions;
pub mod quota;
pub mod rates;

pub use actions::{CapabilityError, HederaActions};
pub use quota::{CapabilityCounters, CapabilityQuota, MinuteWindow, QuotaWindows};
pub use rates::ExchangeRate;

/// One grantable capability.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Capability {
    /// `hedera.submit-topic-message` with the operator's account.
    SubmitTopicMessage,
    /// `hedera.create-topic` with the operator's account.
    CreateTopic,
    /// `rates.current`: the network's exchange rate (read from the mirror, kept host-wide; no
    /// operator needed, not counted against the network quotas).
    Rates,
    /// A hook may replace `rawParams` (pre-tool-execution) or `normalisedParams`
    /// (post-params-normalization); the stage's policies judge the replacement again.
    ReplaceParams,
    /// A hook may replace the tool result's `humanMessage` at post-tool-execution (never `raw`).
    ReplaceResult,
}

impl Capability {
    pub const ALL: [Capability; 5] = [
        Capability::SubmitTopicMessage,
        Capability::CreateTopic,
        Capability::Rates,
        Capability::ReplaceParams,
        Capability::ReplaceResult,
    ];

    /// The manifest's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Capability::SubmitTopicMessage => "hedera:submit-topic-message",
            Capability::CreateTopic => "hedera:create-topic",
            Capability::Rates => "rates",
            Capability::ReplaceParams => "params:replace",
            Capability::ReplaceResult => "result:replace",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == name)
    }

    /// Whether it reaches the network through the host's actions (`hedera`, `rates`).
    pub fn uses_network(self) -> bool {
        self.is_network() || self == Capability::Rates
    }

    /// Whether it lets a plugin act on the network (and so needs an operator).
    pub fn is_network(self) -> bool {
        matches!(
            self,
            Capability::SubmitTopicMessage | Capability::CreateTopic
        )
    }

    /// Every name, for error messages.
    pub fn known() -> String {
        Self::ALL.map(Capability::as_str).join(", ")
    }
}
