//! The kit's tool descriptions, rendered for an agent context exactly as the kit's
//! `PromptGenerator` renders them: what an LLM reads about each tool in `hak tools`,
//! `GET /v1/tools` and MCP's `tools/list`.
//!
//! Each tool's `DESCRIPTION` is a template of the kit's text with four markers, filled here:
//! `{context}` (the context snippet: mode and user account), `{default_account}` ("user
//! account (0.0.N)" in return-bytes mode with an account, else "operator account"),
//! `{scheduling}` (the `schedulingParams` paragraph) and `{usage}` (the parameter usage
//! instructions). Any other brace is text. Nothing about a tool's own parameters lives here.

use crate::model::context::AgentContext;
use std::fmt::Write;

/// The kit's `getParameterUsageInstructions()`.
const USAGE: &str = r#"
Important:
- Do not request or ask for parameters that are optional and were not provided by the user. Tool can be called without any parameters if all are optional.
- Only include optional parameters if explicitly provided by the user
- Do not generate placeholder values for optional fields
- Leave optional parameters undefined if not specified by the user
- If a required parameter is not specified by the user, DO NOT guess or generate placeholder values. You must stop and ask the user for the missing required information.
- If the user says "schedule", "scheduled", or clearly asks to schedule execution, set schedulingParams.isScheduled to true.
- Important: If the user mentions multiple recipients or amounts and tool accepts an array, combine all recipients, tokens or similar assets into a single array and make exactly one call to that tool. Do not split the action into multiple tool calls if it's possible to do so.
"#;

/// The kit's `getScheduledTransactionParamsDescription(context)`, with `{default_account}`.
const SCHEDULING: &str = r#"schedulingParams (object, optional): Parameters for scheduling this transaction instead of executing immediately. 

**Fields that apply to the *schedule entity*, not the inner transaction:**

- **isScheduled** (boolean, optional, default false):  
  If true, the transaction will be created as a scheduled transaction.  
  If false or omitted, all other scheduling parameters will be ignored.

- **adminKey** (boolean|string, optional, default false):  
  Admin key that can delete or modify the scheduled transaction before execution.  
  - If true, the operator key will be used.  
  - If false or omitted, no admin key is set.  
  - If a string is passed, it will be used as the admin key.

- **payerAccountId** (string, optional):  
  Account that will pay the transaction fee when the scheduled transaction executes.  
  Defaults to the {default_account}.

- **expirationTime** (string, optional, ISO 8601):  
  Time when the scheduled transaction will expire if not fully signed.
  
- **waitForExpiry** (boolean, optional, default `false`):  
  Determines when the scheduled transaction executes:  
  - `false` (default): execute as soon as all required signatures are collected.  
  - `true`: execute at the scheduled expiration time, even if all signatures are already collected.  
  Requires `expirationTime` to be set if `true`. Set to `true` only when the user explicitly requests execution at expiration.

**Notes**
- Setting any scheduling parameter implies delayed execution through the Hedera schedule service.
- The network executes the scheduled transaction automatically once all required signatures are collected.
"#;

/// The kit's `AccountResolver.getDefaultAccountDescription(context)`.
fn default_account(out: &mut String, context: &AgentContext) {
    match &context.account_id {
        Some(id) if context.mode.is_return_bytes() => {
            let _ = write!(out, "user account ({id})");
        }
        _ => out.push_str("operator account"),
    }
}

/// The kit's `PromptGenerator.getContextSnippet(context)`.
fn context_snippet(out: &mut String, context: &AgentContext) {
    out.push_str("Context:\n");
    let account = context.account_id.as_ref();
    if context.mode.is_return_bytes() {
        out.push_str("- Mode: Return Bytes (preparing transactions for user signing)\n");
        match account {
            Some(id) => {
                let _ = write!(
                    out,
                    "- User Account: {id} (default for transaction parameters)\n- When no account is specified, {id} will be used"
                );
            }
            None => out.push_str(
                "- User Account: Not specified\n- When no account is specified, the operator account will be used",
            ),
        }
    } else if context.mode == crate::model::context::AgentMode::Autonomous {
        out.push_str("- Mode: Autonomous (agent executes transactions directly)\n");
        if let Some(id) = account {
            let _ = writeln!(out, "- User Account: {id}");
        }
        out.push_str("- When no account is specified, the operator account will be used");
    } else {
        let _ = writeln!(out, "- Mode: {}", context.mode);
        if let Some(id) = account {
            let _ = writeln!(out, "- User Account: {id}");
        }
        out.push_str("- Default account will be determined at execution time");
    }
}

/// A description template rendered for `context`.
pub fn render(template: &str, context: &AgentContext) -> String {
    let mut out = String::with_capacity(template.len() + USAGE.len() + SCHEDULING.len());
    fill(&mut out, template, context);
    out
}

fn fill(out: &mut String, template: &str, context: &AgentContext) {
    let mut rest = template;
    while let Some(at) = rest.find('{') {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        let marker = ["{context}", "{default_account}", "{scheduling}", "{usage}"]
            .into_iter()
            .find(|m| tail.starts_with(m));
        match marker {
            Some("{context}") => context_snippet(out, context),
            Some("{default_account}") => default_account(out, context),
            Some("{scheduling}") => fill(out, SCHEDULING, context),
            Some("{usage}") => out.push_str(USAGE),
            _ => {
                out.push('{');
                rest = &tail[1..];
                continue;
            }
        }
        rest = &tail[marker.map_or(1, str::len)..];
    }
    out.push_str(rest);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::context::AgentMode;

    #[test]
    fn markers_are_filled_and_other_braces_kept() {
        let context = AgentContext {
            account_id: Some("0.0.1001".parse().unwrap()),
            mode: AgentMode::ReturnBytes,
        };
        let text = render("{ x } {default_account} {nope}", &context);
        assert_eq!(text, "{ x } user account (0.0.1001) {nope}");
        let autonomous = AgentContext {
            account_id: None,
            mode: AgentMode::Autonomous,
        };
        assert!(render("{context}", &autonomous).ends_with("the operator account will be used"));
        assert!(render("{scheduling}", &autonomous).contains("Defaults to the operator account."));
    }
}
