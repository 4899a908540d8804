//! The values one tool call carries through its stages, and how they are rendered as the
//! stage params JSON (`context`, `rawParams`, `normalisedParams`, `coreActionResult`,
//! `toolResult`). Fragments are kept as JSON text and spliced, so no stage re-serialises
//! what an earlier stage already produced.

use super::envelope::Envelope;
use crate::model::facts::Facts;
use crate::tools::Normalised;
use serde_json::Value;

pub struct CallState<'a> {
    context_json: &'a str,
    pub raw: Value,
    pub raw_json: String,
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
    pub fn new(context_json: &'a str, raw: Value, raw_json: String) -> Self {
        CallState {
            context_json,
            raw,
            raw_json,
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
        buf.push_str(&self.raw_json);
        buf.push_str(",\"context\":");
        buf.push_str(self.context_json);
        buf.push('}');
    }

    /// Keep the tool result; its JSON is rendered only when a plugin will see it.
    pub fn set_result(&mut self, result: Envelope, render: bool) {
        self.result_json = render.then(|| result.to_json());
        self.result = Some(result);
    }
}
