//! Native unit tests of a plugin, without a host: [`crate::host`]'s functions are backed here
//! by in-memory fakes, one set per test thread (so tests running in parallel do not see each
//! other): a scratchpad, a settable clock, budgets (every reservation counts; windows are not
//! modelled), the log, the topic messages a plugin submitted and the exchange rate `rates`
//! answers (none until [`set_exchange_rate`]). [`input`] builds a stage
//! input with the facts a host would state. Only in native builds; a component calls the host.
//!
//! ```
//! use hak_guest::{testing, Asset, Stage};
//! testing::reset();
//! testing::set_now_unix_ms(1_796_040_000_000);
//! let input = testing::input("transfer_hbar_tool", Stage::PostParamsNormalization)
//!     .with_credit(Asset::Hbar, "0.0.2001", 150_000_000);
//! assert_eq!(input.movements()[0].amount, 150_000_000);
//! assert_eq!(hak_guest::host::now_unix_ms(), 1_796_040_000_000);
//! ```

use crate::{Asset, Entity, Facts, LogLevel, Movement, Stage, StageInput, ToolType, Via};
use std::cell::RefCell;
use std::collections::BTreeMap;

#[derive(Default)]
struct Fakes {
    state: BTreeMap<String, String>,
    now_ms: Option<u64>,
    spent: BTreeMap<String, u64>,
    logs: Vec<(LogLevel, String)>,
    topic_messages: Vec<(String, String)>,
    rate: Option<Result<crate::host::ExchangeRate, String>>,
}

thread_local! {
    static FAKES: RefCell<Fakes> = RefCell::new(Fakes::default());
}

fn with<R>(f: impl FnOnce(&mut Fakes) -> R) -> R {
    FAKES.with(|fakes| f(&mut fakes.borrow_mut()))
}

/// Forget this thread's scratchpad, clock, budgets, log and messages.
pub fn reset() {
    with(|f| *f = Fakes::default());
}

/// Fix what `host::now_unix_ms()` answers (default: the real clock).
pub fn set_now_unix_ms(ms: u64) {
    with(|f| f.now_ms = Some(ms));
}

/// What `host::exchange_rate()` answers: `Ok(rate)`, or `Err(why)` as a host says there is
/// none (default: `Err`, as for a plugin not granted `rates`).
pub fn set_exchange_rate(rate: Result<crate::host::ExchangeRate, String>) {
    with(|f| f.rate = Some(rate));
}

/// What the plugin logged, in order.
pub fn logs() -> Vec<(LogLevel, String)> {
    with(|f| f.logs.clone())
}

/// The scratchpad as the plugin left it.
pub fn state() -> BTreeMap<String, String> {
    with(|f| f.state.clone())
}

/// What is reserved under `key` (every reservation counts: as if each call's transaction
/// applied, which is how a host settles return-bytes calls).
pub fn spent(key: &str) -> u64 {
    with(|f| f.spent.get(key).copied().unwrap_or(0))
}

/// `(topic id, message)` for every topic message the plugin submitted.
pub fn topic_messages() -> Vec<(String, String)> {
    with(|f| f.topic_messages.clone())
}

/// A stage input for `method` at `stage`, with an empty params object (`{}`) and, after
/// pre-tool-execution, empty facts; add to it with the builder methods.
pub fn input(method: &str, stage: Stage) -> StageInput {
    StageInput {
        stage,
        method: method.to_owned(),
        tool_type: ToolType::Transaction,
        params_json: "{}".to_owned(),
        facts: (stage != Stage::PreToolExecution).then(empty_facts),
    }
}

fn empty_facts() -> Facts {
    Facts {
        movements: Vec::new(),
        source: None,
        tokens: Vec::new(),
        changes: Vec::new(),
        memo: None,
        scheduled: false,
    }
}

impl StageInput {
    /// (Tests) the stage params JSON (`{"rawParams": …, "normalisedParams": …}`).
    pub fn with_params(mut self, params: serde_json::Value) -> Self {
        self.params_json = params.to_string();
        self
    }

    /// (Tests) a movement by transfer to `to`.
    pub fn with_credit(self, asset: Asset, to: &str, amount: u64) -> Self {
        self.with_movement(Movement {
            asset,
            to: Some(to.to_owned()),
            amount,
            via: Via::Transfer,
        })
    }

    /// (Tests) any movement.
    pub fn with_movement(mut self, m: Movement) -> Self {
        self.facts.get_or_insert_with(empty_facts).movements.push(m);
        self
    }

    /// (Tests) a token the call names.
    pub fn with_token(mut self, id: &str) -> Self {
        self.facts
            .get_or_insert_with(empty_facts)
            .tokens
            .push(id.to_owned());
        self
    }

    /// (Tests) an entity the call updates or deletes.
    pub fn with_change(mut self, kind: &str, id: &str) -> Self {
        self.facts
            .get_or_insert_with(empty_facts)
            .changes
            .push(Entity {
                kind: kind.to_owned(),
                id: id.to_owned(),
            });
        self
    }

    /// (Tests) the transaction memo.
    pub fn with_memo(mut self, memo: &str) -> Self {
        self.facts.get_or_insert_with(empty_facts).memo = Some(memo.to_owned());
        self
    }
}

/// The fakes behind [`crate::host`] in native builds, with the imports' signatures.
#[doc(hidden)]
pub mod fake {
    use super::with;
    use crate::LogLevel;

    pub fn log(level: LogLevel, message: &str) {
        with(|f| f.logs.push((level, message.to_owned())));
    }
    pub fn state_get(key: &str) -> Option<String> {
        with(|f| f.state.get(key).cloned())
    }
    pub fn state_set(key: &str, value: &str) -> Result<(), String> {
        with(|f| f.state.insert(key.to_owned(), value.to_owned()));
        Ok(())
    }
    pub fn state_delete(key: &str) {
        with(|f| f.state.remove(key));
    }
    pub fn now_unix_ms() -> u64 {
        with(|f| f.now_ms).unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64)
        })
    }

    pub mod budget {
        use super::with;
        use crate::host::ReserveError;

        pub fn reserve(
            key: &str,
            amount: u64,
            limit: u64,
            _window_seconds: u32,
        ) -> Result<u64, ReserveError> {
            with(|f| {
                let spent = f.spent.entry(key.to_owned()).or_insert(0);
                match spent.checked_add(amount).filter(|t| *t <= limit) {
                    Some(total) => {
                        *spent = total;
                        Ok(total)
                    }
                    None => Err(ReserveError::OverLimit(*spent)),
                }
            })
        }

        pub fn spent(key: &str, _window_seconds: u32) -> Result<u64, String> {
            Ok(with(|f| f.spent.get(key).copied().unwrap_or(0)))
        }
    }

    pub mod hedera {
        use super::with;

        pub fn submit_topic_message(topic_id: &str, message: &str) -> Result<String, String> {
            with(|f| {
                f.topic_messages
                    .push((topic_id.to_owned(), message.to_owned()));
                Ok(format!("0.0.1001@1700000000.{:09}", f.topic_messages.len()))
            })
        }

        pub fn create_topic(_memo: &str) -> Result<String, String> {
            Ok("0.0.9999".to_owned())
        }
    }

    pub mod rates {
        use super::with;
        use crate::host::ExchangeRate;

        pub fn current() -> Result<ExchangeRate, String> {
            with(|f| f.rate.clone()).unwrap_or_else(|| {
                Err("capability rates is not granted (testing::set_exchange_rate)".to_owned())
            })
        }
    }
}
