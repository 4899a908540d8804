//! The values one tool call carries through its stages, and how they are rendered as the
//! stage params JSON (`context`, `rawParams`, `normalisedParams`, `coreActionResult`,
//! `toolResult`). Fragments are kept as JSON text and spliced, so no stage re-serialises
//! what an earlier stage already produced.

use super::envelope::Envelope;
use crate::model::facts::Facts;
use crate::tools::{Normalised, PlainParams};
use serde_json::Value;

/// The agent's params as the call holds them: read straight into the tool's typed raw params
/// (the fast path, until stage 2 takes them), or parsed as a JSON value (the general path,
/// and whatever a hook put in their place).
pub enum RawParams {
    /// Taken by stage 2; rawParams is the text as sent (a plain reader declines any number
    /// JavaScript would rewrite).
    Plain(Option<PlainParams>),
    Value(Value),
}

impl RawParams {
    pub fn plain(params: PlainParams) -> Self {
        RawParams::Plain(Some(params))
    }
}

pub struct CallState<'a> {
    context_json: &'a str,
    pub raw: RawParams,
    /// The params text as the agent sent it.
    params_text: &'a str,
    /// rawParams as plugins read it, written on first use (only when a plugin reads the
    /// stage JSON): `None` when it is the text as sent, trimmed.
    raw_json: std::cell::OnceCell<Option<String>>,
    pub normalised: Option<Normalised>,
    /// What the normalised params do, stated by the tool once plugins need it (and again
    /// after a hook replaced the params).
    pub facts: Option<Facts>,
    pub core_json: Option<String>,
    pub result: Option<Envelope>,
    pub result_json: Option<String>,
    /// From stage 6: what became of the transaction (`applied`, `unknown`), for stage 7.
    pub outcome: Option<&'static str>,
}

impl<'a> CallState<'a> {
    pub fn new(context_json: &'a str, raw: RawParams, params_text: &'a str) -> Self {
        CallState {
            context_json,
            raw,
            params_text,
            raw_json: std::cell::OnceCell::new(),
            normalised: None,
            facts: None,
            core_json: None,
            result: None,
            result_json: None,
            outcome: None,
        }
    }

    /// Write the stage params object into `buf` (cleared first).
    ///
    /// The newest field comes first (`toolResult`, `coreActionResult`, `normalisedParams`,
    /// then `rawParams` and `context`), so a guest that reads only what its stage produced
    /// finds it without scanning the rest (`StageInput::field` in the guest SDKs).
    pub fn render(&self, buf: &mut String) {
        buf.clear();
        buf.push('{');
        if let Some(outcome) = self.outcome {
            buf.push_str("\"transactionOutcome\":\"");
            buf.push_str(outcome);
            buf.push_str("\",");
        }
        if let Some(result) = &self.result_json {
            buf.push_str("\"toolResult\":");
            buf.push_str(result);
            buf.push(',');
        }
        if let Some(core) = &self.core_json {
            buf.push_str("\"coreActionResult\":");
            buf.push_str(core);
            buf.push(',');
        }
        if let Some(n) = &self.normalised {
            buf.push_str("\"normalisedParams\":");
            buf.push_str(n.json());
            buf.push(',');
        }
        buf.push_str("\"rawParams\":");
        buf.push_str(self.raw_json());
        buf.push_str(",\"context\":");
        buf.push_str(self.context_json);
        buf.push('}');
    }

    /// rawParams as plugins read it, as the kit's hooks see it: a number JavaScript reads as
    /// an integer (`1.0`) is written as one, so typed readers (Go, Rust) take it.
    pub fn raw_json(&self) -> &str {
        self.raw_json
            .get_or_init(|| match &self.raw {
                RawParams::Value(value) => {
                    crate::tools::js_number::integral_floats_as_integers(value)
                }
                RawParams::Plain(_) => None,
            })
            .as_deref()
            .unwrap_or_else(|| self.params_text.trim())
    }

    /// A hook replaced rawParams with `value`, written as `json`.
    pub fn replace_raw(&mut self, value: Value, json: String) {
        self.raw = RawParams::Value(value);
        self.raw_json = std::cell::OnceCell::from(Some(json));
    }

    /// Keep the tool result; its JSON is rendered only when a plugin will see it.
    pub fn set_result(&mut self, result: Envelope, render: bool) {
        self.result_json = render.then(|| result.to_json());
        self.result = Some(result);
    }
}

#[cfg(test)]
mod tests {
    use super::{CallState, RawParams};

    fn raw_params(text: &str) -> String {
        let raw = RawParams::Value(serde_json::from_str(text).unwrap());
        let state = CallState::new("{}", raw, text);
        let mut buf = String::new();
        state.render(&mut buf);
        assert!(
            serde_json::from_str::<serde_json::Value>(&buf).is_ok(),
            "{buf}"
        );
        buf.split_once("\"rawParams\":")
            .and_then(|(_, rest)| rest.strip_suffix(",\"context\":{}}"))
            .unwrap()
            .to_owned()
    }

    /// rawParams is the text as sent (trimmed), unless JavaScript would read one of its
    /// numbers as an integer that the text writes as a float: then as `JSON.stringify` writes
    /// the parsed value. Written only when rendered, either way.
    #[test]
    fn raw_params_are_the_text_as_sent_or_as_javascript_rewrites_integral_floats() {
        assert_eq!(
            raw_params(" {\"amount\": 1.5, \"memo\": \"a\"} "),
            "{\"amount\": 1.5, \"memo\": \"a\"}"
        );
        assert_eq!(
            raw_params("{\"amount\": 1.0, \"n\": 1e3}"),
            "{\"amount\":1,\"n\":1000}"
        );
    }

    #[test]
    fn a_hooks_replacement_is_kept_as_written() {
        let raw = RawParams::Value(serde_json::json!({"a": 1.0}));
        let mut state = CallState::new("{}", raw, "{\"a\": 1.0}");
        state.replace_raw(serde_json::json!({"a": 2}), "{\"a\" : 2}".into());
        assert_eq!(state.raw_json(), "{\"a\" : 2}");
    }
}
