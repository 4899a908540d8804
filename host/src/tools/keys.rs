//! Keys in tool params: the kit's `resolveKey` (`true` means the user's key, a string is a
//! public key in hex or DER) and `AccountResolver.getDefaultPublicKey` (the operator's key in
//! autonomous mode, else the default account's key from the mirror node).

use super::normalise::default_account;
use super::{ToolContext, ToolError};
use crate::model::context::AgentMode;
use hedera::PublicKey;
use serde::Deserialize;
use std::str::FromStr;

/// `true` / `false` / a key string, as agents send it.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum KeyInput {
    Flag(bool),
    Text(String),
}

impl KeyInput {
    /// `true` or `"true"`: the user's own key, which may need a mirror lookup.
    pub fn means_user_key(&self) -> bool {
        match self {
            KeyInput::Flag(flag) => *flag,
            KeyInput::Text(text) => text.eq_ignore_ascii_case("true"),
        }
    }
}

/// Resolve a key input against the user's key; `Ok(None)` when no key is wanted.
pub fn resolve_key(
    field: &str,
    raw: Option<&KeyInput>,
    user_key: Option<&PublicKey>,
) -> Result<Option<PublicKey>, ToolError> {
    let want_user = match raw {
        None | Some(KeyInput::Flag(false)) => return Ok(None),
        Some(KeyInput::Flag(true)) => true,
        Some(KeyInput::Text(t)) if t.eq_ignore_ascii_case("true") => true,
        Some(KeyInput::Text(t)) if t.eq_ignore_ascii_case("false") => return Ok(None),
        Some(KeyInput::Text(_)) => false,
    };
    if want_user {
        return user_key.copied().map(Some).ok_or_else(|| {
            ToolError::message(format!("Could not determine public key for {field}"))
        });
    }
    let Some(KeyInput::Text(text)) = raw else {
        unreachable!("flags handled above")
    };
    let parsed = PublicKey::from_str_ed25519(text)
        .ok()
        .or_else(|| PublicKey::from_str_ecdsa(text).ok())
        .or_else(|| PublicKey::from_str(text).ok());
    parsed.map(Some).ok_or_else(|| {
        // The kit's words, with its `substring(0, 20)` (UTF-16 units).
        let mut units = 0;
        let start: String = text
            .chars()
            .take_while(|c| {
                units += c.len_utf16();
                units <= 20
            })
            .collect();
        ToolError::message(format!(
            "Failed to parse public key from string: {start}..."
        ))
    })
}

/// The kit's `getDefaultPublicKey`.
pub fn default_public_key(ctx: &ToolContext<'_>) -> Result<PublicKey, ToolError> {
    if ctx.context.mode == AgentMode::Autonomous {
        return ctx
            .operator_public_key
            .ok_or_else(|| ToolError::message("No public key available for the default account"));
    }
    mirror_public_key(ctx)
}

/// The default account's key as the mirror node reports it (the kit's fallback when a key
/// param is empty).
pub fn mirror_public_key(ctx: &ToolContext<'_>) -> Result<PublicKey, ToolError> {
    let account = default_account(ctx)?;
    ctx.mirror
        .account(account)?
        .public_key()
        .ok_or_else(|| ToolError::message("No public key available for the default account"))
}
