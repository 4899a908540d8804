//! What a call does, as policies decide on it (contract 0.2.0 `facts`): the value it moves and
//! to whom, where it comes from, the tokens it names, the entities it changes, its memo and
//! whether it is scheduled. Each tool states its facts from its own typed normalised params
//! (`Tool::facts`); the lifecycle asks once per call, again only after a hook replaced the
//! params, and hands them to every 0.2 plugin from post-params-normalization on.
//! Only the types and their small builders live here: no tool knowledge, no WIT.

use serde::Serialize;
use std::fmt::Display;

/// An id as the facts spell it (`0.0.5`), written without `core::fmt` for the common ids.
fn text<T: Display + 'static>(id: &T) -> String {
    crate::text::display(id)
}

/// "All of it": a deleted account's whole balance, an allowance for every serial.
pub const ALL: u64 = u64::MAX;

/// What moves.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "kind", content = "id")]
pub enum Asset {
    Hbar,
    /// A fungible token, by id; amounts in base units.
    Token(String),
    /// An NFT collection, by token id; amounts count serials.
    Nft(String),
}

/// How the value reaches the recipient.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Via {
    Transfer,
    Allowance,
}

/// One recipient's share of a call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Movement {
    pub asset: Asset,
    /// The receiving account; `None` when it does not exist yet (a new account).
    pub to: Option<String>,
    /// Tinybars, base units or a number of NFTs ([`ALL`]: all of it).
    pub amount: u64,
    pub via: Via,
}

/// An entity a call updates or deletes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Entity {
    /// `account`, `token` or `topic`.
    pub kind: &'static str,
    pub id: String,
}

/// The facts of one call.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Facts {
    pub movements: Vec<Movement>,
    pub source: Option<String>,
    pub tokens: Vec<String>,
    pub changes: Vec<Entity>,
    pub memo: Option<String>,
    pub scheduled: bool,
}

impl Facts {
    /// A credit of `amount` (ignored unless positive) to `to`, moved now.
    pub fn credit<T: Display + 'static>(&mut self, asset: Asset, to: &T, amount: i64) {
        if amount > 0 {
            self.movements.push(Movement {
                asset,
                to: Some(text(to)),
                amount: amount as u64,
                via: Via::Transfer,
            });
        }
    }

    /// The whole balance of `asset` ([`ALL`]) moved to `to` (an account deleted into it, a
    /// token's treasury handed to it).
    pub fn all_of<T: Display + 'static>(&mut self, asset: Asset, to: &T) {
        self.movements.push(Movement {
            asset,
            to: Some(text(to)),
            amount: ALL,
            via: Via::Transfer,
        });
    }

    /// An allowance of `amount` (0 removes it) for `spender`.
    pub fn allowance<T: Display + 'static>(&mut self, asset: Asset, spender: &T, amount: u64) {
        self.movements.push(Movement {
            asset,
            to: Some(text(spender)),
            amount,
            via: Via::Allowance,
        });
    }

    /// Name `token` (once).
    pub fn token<T: Display + 'static>(&mut self, token: &T) {
        let token = text(token);
        if !self.tokens.contains(&token) {
            self.tokens.push(token);
        }
    }

    /// Record that the call updates or deletes `id`.
    pub fn changes<T: Display + 'static>(&mut self, kind: &'static str, id: &T) {
        self.changes.push(Entity { kind, id: text(id) });
    }

    /// The sender or owner, when the params name it.
    pub fn from<T: Display + 'static>(&mut self, source: &T) {
        self.source = Some(text(source));
    }

    /// The memo (when given) and whether the call is scheduled.
    pub fn with_memo(mut self, memo: Option<&str>, scheduled: bool) -> Self {
        self.memo = memo.map(str::to_owned);
        self.scheduled = scheduled;
        self
    }
}
