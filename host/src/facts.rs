//! What a call does, as policies decide on it (contract 0.2.0 `facts`): the value it moves and
//! to whom, where it comes from, the tokens it names, the entities it changes, its memo and
//! whether it is scheduled. Each tool states its facts from its own typed normalised params
//! (`Tool::facts`); the lifecycle asks once per call, again only after a hook replaced the
//! params, and hands them to every 0.2 plugin from post-params-normalization on.
//! Only the types and their small builders live here: no tool knowledge, no WIT.

use serde::Serialize;

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
    pub fn credit(&mut self, asset: Asset, to: impl ToString, amount: i64) {
        if amount > 0 {
            self.movements.push(Movement {
                asset,
                to: Some(to.to_string()),
                amount: amount as u64,
                via: Via::Transfer,
            });
        }
    }

    /// The whole balance of `asset` ([`ALL`]) moved to `to` (an account deleted into it, a
    /// token's treasury handed to it).
    pub fn all_of(&mut self, asset: Asset, to: impl ToString) {
        self.movements.push(Movement {
            asset,
            to: Some(to.to_string()),
            amount: ALL,
            via: Via::Transfer,
        });
    }

    /// An allowance of `amount` (0 removes it) for `spender`.
    pub fn allowance(&mut self, asset: Asset, spender: impl ToString, amount: u64) {
        self.movements.push(Movement {
            asset,
            to: Some(spender.to_string()),
            amount,
            via: Via::Allowance,
        });
    }

    /// Name `token` (once).
    pub fn token(&mut self, token: impl ToString) {
        let token = token.to_string();
        if !self.tokens.contains(&token) {
            self.tokens.push(token);
        }
    }

    /// Record that the call updates or deletes `id`.
    pub fn changes(&mut self, kind: &'static str, id: impl ToString) {
        self.changes.push(Entity {
            kind,
            id: id.to_string(),
        });
    }

    /// The sender or owner, when the params name it.
    pub fn from(&mut self, source: impl ToString) {
        self.source = Some(source.to_string());
    }

    /// The memo (when given) and whether the call is scheduled.
    pub fn with_memo(mut self, memo: Option<&str>, scheduled: bool) -> Self {
        self.memo = memo.map(str::to_owned);
        self.scheduled = scheduled;
        self
    }
}
