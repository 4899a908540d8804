//! Typed access to a stage's input: the host's [`Facts`] as they came (no parsing), and the
//! params JSON parsed on demand, into the caller's own borrowing structs (fast) or into a
//! `serde_json::Value` (convenient).

use crate::bindings::hedera::agent_kit::types::StageInput as RawInput;
use crate::{Entity, Facts, Movement, Stage, ToolType};

/// One stage call's input: stage, tool method, tool type, the kit-shaped params JSON and,
/// from post-params-normalization on, the call's facts.
pub struct StageInput {
    pub stage: Stage,
    pub method: String,
    pub tool_type: ToolType,
    /// `{"context":…, "rawParams":…, "normalisedParams":…, "coreActionResult":…, "toolResult":…}`
    pub params_json: String,
    /// What the call does, stated by the host from the normalised params (`None` at
    /// pre-tool-execution). See `wit/types.wit` (`facts`).
    pub facts: Option<Facts>,
}

impl From<RawInput> for StageInput {
    fn from(raw: RawInput) -> Self {
        StageInput {
            stage: raw.stage,
            method: raw.method,
            tool_type: raw.tool_type,
            params_json: raw.params,
            facts: raw.facts,
        }
    }
}

impl StageInput {
    /// The value the call moves to others, by recipient (empty before normalisation and for
    /// tools that move none).
    pub fn movements(&self) -> &[Movement] {
        self.facts.as_ref().map_or(&[], |f| &f.movements)
    }

    /// Every existing token the call names, once each.
    pub fn tokens(&self) -> &[String] {
        self.facts.as_ref().map_or(&[], |f| &f.tokens)
    }

    /// The entities the call updates or deletes.
    pub fn changes(&self) -> &[Entity] {
        self.facts.as_ref().map_or(&[], |f| &f.changes)
    }

    /// The transaction memo, when the call has one.
    pub fn memo(&self) -> Option<&str> {
        self.facts.as_ref().and_then(|f| f.memo.as_deref())
    }

    /// Deserialize the whole params object into `T` (which may borrow from the input).
    pub fn params<'a, T: serde::Deserialize<'a>>(&'a self) -> Result<T, String> {
        serde_json::from_str(&self.params_json)
            .map_err(|e| format!("cannot read stage params for {}: {e}", self.method))
    }

    /// The raw JSON of one top-level params field (`"normalisedParams"`, …), found without
    /// parsing the others; the host writes the stage's newest field first.
    pub fn field(&self, key: &str) -> Option<&str> {
        crate::scan::field(&self.params_json, key)
    }

    /// One top-level params field decoded into `T` (which may borrow from the input);
    /// `Ok(None)` when the stage has no such field. The fast path for typed policies.
    pub fn field_as<'a, T: serde::Deserialize<'a>>(
        &'a self,
        key: &str,
    ) -> Result<Option<T>, String> {
        let Some(start) = crate::scan::field_start(&self.params_json, key) else {
            return Ok(None);
        };
        // Decode straight from the value's first byte: serde stops at its end, so the value
        // is read once (no separate scan for where it ends).
        let mut de = serde_json::Deserializer::from_str(&self.params_json[start..]);
        T::deserialize(&mut de)
            .map(Some)
            .map_err(|e| format!("cannot read {key} for {}: {e}", self.method))
    }

    /// The params object as a generic JSON value.
    pub fn params_value(&self) -> Result<serde_json::Value, String> {
        self.params()
    }

    /// Whether the tool is a query tool (the kit's `toolType === 'query'`).
    pub fn is_query(&self) -> bool {
        matches!(self.tool_type, ToolType::Query)
    }
}
