//! Reading the operator's text once, at load: the policies parsed, the schema (the config's or
//! the built-in one) parsed, and every policy validated against it in Cedar's strict mode.
//! Each refusal is Cedar's own message with its `line:column` in the text, once per place
//! (Cedar reports a bad attribute once per action a policy applies to). What must not live
//! here: anything a call does (`request`).

use cedar_policy::{PolicyId, PolicySet, Schema, ValidationMode, Validator};
use miette::Diagnostic;
use std::collections::HashMap;
use std::str::FromStr;

/// The policies, ready to authorise calls.
pub struct Loaded {
    pub policies: PolicySet,
    pub schema: Schema,
    /// What a decision names each policy by: its `@id` annotation, else Cedar's own id
    /// (`policy0`, `policy1`, … in the order of the text).
    pub names: HashMap<PolicyId, String>,
}

/// Parse and validate `policies` against `schema` (the built-in schema when `None`).
pub fn load(policies: &str, schema: Option<&str>) -> Result<Loaded, String> {
    let builtin;
    let (schema_text, schema_name) = match schema {
        Some(text) => (text, "schema"),
        None => {
            builtin = crate::schema::builtin();
            (builtin.as_str(), "built-in schema")
        }
    };
    let schema = match Schema::from_cedarschema_str(schema_text) {
        Ok((schema, _warnings)) => schema,
        Err(e) => {
            return Err(format!(
                "invalid config: {}",
                located(schema_name, schema_text, &e)
            ))
        }
    };
    let set = PolicySet::from_str(policies).map_err(|errors| {
        let all: Vec<String> = errors
            .iter()
            .map(|e| located("policies", policies, e))
            .collect();
        format!("invalid config: {}", dedup(all).join("; "))
    })?;
    if set.templates().next().is_some() {
        return Err("invalid config: policies: templates (?principal, ?resource) are not linked here: write the entity in the policy".into());
    }
    if set.policies().next().is_none() {
        return Err(
            "invalid config: policies: no policy: Cedar denies every call nothing permits".into(),
        );
    }
    let mut names = HashMap::new();
    let mut seen = HashMap::new();
    for policy in set.policies() {
        let name = policy
            .annotation("id")
            .map_or_else(|| policy.id().to_string(), str::to_owned);
        if let Some(other) = seen.insert(name.clone(), policy.id().clone()) {
            return Err(format!(
                "invalid config: policies: two policies are named {name:?} ({other} and {}): a decision must name one",
                policy.id()
            ));
        }
        names.insert(policy.id().clone(), name);
    }
    let result = Validator::new(schema.clone()).validate(&set, ValidationMode::Strict);
    let errors: Vec<String> = result
        .validation_errors()
        .map(|e| named(&names, &without_action(&located("policies", policies, e))))
        .collect();
    if !errors.is_empty() {
        return Err(format!(
            "invalid config: policies do not match the {schema_name}: {}",
            dedup(errors).join("; ")
        ));
    }
    Ok(Loaded {
        policies: set,
        schema,
        names,
    })
}

/// `what` and Cedar's message at the line and column its first label points to, with its
/// help when it has one.
fn located(what: &str, text: &str, error: &dyn Diagnostic) -> String {
    let mut out = what.to_owned();
    if let Some(label) = error.labels().and_then(|mut labels| labels.next()) {
        let (line, column) = line_column(text, label.offset());
        out += &format!(" {line}:{column}");
    }
    out += &format!(": {error}");
    if let Some(help) = error.help() {
        out += &format!(" ({help})");
    }
    out
}

/// The 1-based line and column (in characters) of byte `offset` of `text`.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..text.floor_char_boundary(offset.min(text.len()))];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    (line, column)
}

/// A validation message without the action it was found for: Cedar checks a policy once per
/// action it applies to, and the same mistake would be listed 44 times.
fn without_action(message: &str) -> String {
    const MARK: &str = " for Action::\"";
    match message.find(MARK) {
        Some(at) => {
            let rest = &message[at + MARK.len()..];
            let end = rest.find('"').map_or(rest.len(), |q| q + 1);
            format!("{}{}", &message[..at], &rest[end..])
        }
        None => message.to_owned(),
    }
}

/// `text` with Cedar's policy ids (`` `policy0` ``) replaced by the names decisions use.
pub fn named(names: &HashMap<PolicyId, String>, text: &str) -> String {
    let mut text = text.to_owned();
    for (id, name) in names {
        let quoted = format!("`{id}`");
        if name.as_str() != AsRef::<str>::as_ref(id) && text.contains(&quoted) {
            text = text.replace(&quoted, &format!("`{name}`"));
        }
    }
    text
}

/// `items` in their order, each once.
fn dedup(items: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(items.len());
    for item in items {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_columns_count_characters() {
        let text = "ab\ncé d\n";
        assert_eq!(line_column(text, 0), (1, 1));
        assert_eq!(line_column(text, 3), (2, 1));
        assert_eq!(line_column(text, 6), (2, 3));
    }
}
