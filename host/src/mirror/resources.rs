//! The mirror resources the kit reads: where each lives, how its failures are worded (the
//! kit's messages, one place each), and typed views of the fields tools decide on. Answers
//! that tools hand on whole (a topic, a contract, a transaction record) stay JSON.

use super::{Mirror, MirrorError};
use hedera::{PublicKey, TokenId, TransactionId};
use serde_json::Value;
use std::fmt::{self, Display};

/// A failed mirror read, worded as the kit words it (`Failed to fetch account 0.0.5: 404 Not
/// Found`), with the underlying error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MirrorFailure {
    pub message: String,
    pub cause: MirrorError,
}

impl Display for MirrorFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for MirrorFailure {}

fn failed(what: String) -> impl FnOnce(MirrorError) -> MirrorFailure {
    move |cause| MirrorFailure {
        message: format!("{what}: {cause}"),
        cause,
    }
}

/// A number the mirror may write as a JSON number or a decimal string.
fn lenient_u32(value: &Value) -> Option<u32> {
    match value {
        Value::String(text) => text.trim().parse().ok(),
        Value::Number(n) => n.as_u64().and_then(|d| u32::try_from(d).ok()),
        _ => None,
    }
}

/// `GET /tokens/{id}`.
#[derive(Debug, Clone)]
pub struct Token(pub Value);

impl Token {
    /// The token's decimals, when the answer has some that parse.
    pub fn decimals(&self) -> Option<u32> {
        lenient_u32(&self.0["decimals"])
    }

    pub fn symbol(&self) -> &Value {
        &self.0["symbol"]
    }

    /// The admin key's hex (`admin_key.key`), when the token has one.
    pub fn admin_key(&self) -> Option<&str> {
        self.0["admin_key"]["key"].as_str()
    }
}

/// `GET /accounts/{id}`.
#[derive(Debug, Clone)]
pub struct Account(pub Value);

impl Account {
    /// Whether the mirror knows the account (it answers with `account: null` otherwise).
    pub fn exists(&self) -> bool {
        self.0.get("account").is_some_and(|a| !a.is_null())
    }

    /// The entity's `0.0.N` (`account`), when the mirror names one.
    pub fn id(&self) -> Option<&str> {
        self.0["account"].as_str()
    }

    /// Its EVM address (`evm_address`: the alias, or the long-zero address), as the mirror
    /// writes it.
    pub fn evm_address(&self) -> Option<&str> {
        self.0["evm_address"].as_str()
    }

    pub fn balance_tinybars(&self) -> Option<i64> {
        self.0["balance"]["balance"].as_i64()
    }

    /// The account's key, when it is a single ED25519 or ECDSA(secp256k1) key.
    pub fn public_key(&self) -> Option<PublicKey> {
        let key = &self.0["key"];
        let bytes = hex::decode(key["key"].as_str()?).ok()?;
        match key["_type"].as_str()? {
            "ED25519" => PublicKey::from_bytes_ed25519(&bytes).ok(),
            "ECDSA_SECP256K1" => PublicKey::from_bytes_ecdsa(&bytes).ok(),
            _ => None,
        }
    }
}

/// Which messages of a topic to read, newest first.
#[derive(Debug, Clone, Default)]
pub struct TopicMessagesQuery {
    /// `seconds.nanos` bounds, inclusive.
    pub from: Option<String>,
    pub to: Option<String>,
    /// Pages of 100 to read at most.
    pub max_pages: usize,
}

/// `"0.0.5@1700000000.000000001"` as the mirror spells it: `0.0.5-1700000000-000000001`.
pub fn mirror_transaction_id(id: &TransactionId) -> String {
    format!(
        "{}-{}-{:09}",
        id.account_id,
        id.valid_start.unix_timestamp(),
        id.valid_start.nanosecond()
    )
}

/// `encodeURIComponent`, for the one query value that is free text.
fn encode_component(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        match b {
            b'A'..=b'Z'
            | b'a'..=b'z'
            | b'0'..=b'9'
            | b'-'
            | b'_'
            | b'.'
            | b'!'
            | b'~'
            | b'*'
            | b'\''
            | b'('
            | b')' => out.push(b as char),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

impl Mirror {
    pub fn token(&self, id: impl Display) -> Result<Token, MirrorFailure> {
        self.get(&format!("/tokens/{id}"))
            .map(Token)
            .map_err(failed(format!("Failed to get token info for a token {id}")))
    }

    pub fn account(&self, id: impl Display) -> Result<Account, MirrorFailure> {
        self.get(&format!("/accounts/{id}"))
            .map(Account)
            .map_err(failed(format!("Failed to fetch account {id}")))
    }

    /// The account (or contract) an EVM address names, `None` when none does (no retries
    /// for a 404: a fresh address is not a lagging mirror).
    pub fn account_by_address(&self, address: &str) -> Result<Option<Account>, MirrorFailure> {
        crate::blocking::block_on(
            &self.runtime,
            self.client.get_present(&format!("/accounts/{address}")),
        )
        .map(|found| found.map(Account))
        .map_err(failed(format!("Failed to fetch account {address}")))
    }

    /// The account's token balances (`{tokens: [...]}`), of one token when `token` is given.
    pub fn account_tokens(
        &self,
        id: impl Display,
        token: Option<TokenId>,
    ) -> Result<Value, MirrorFailure> {
        let filter = token.map(|t| format!("&token.id={t}")).unwrap_or_default();
        self.get(&format!("/accounts/{id}/tokens?{filter}"))
            .map_err(failed(format!("Failed to fetch balance for account {id}")))
    }

    /// Airdrops the account has sent that wait to be claimed (`{airdrops: [...]}`).
    pub fn pending_airdrops(&self, account: impl Display) -> Result<Value, MirrorFailure> {
        self.get(&format!("/accounts/{account}/airdrops/pending"))
            .map_err(failed(format!(
                "Failed to fetch pending airdrops for an account {account}"
            )))
    }

    pub fn topic(&self, id: impl Display) -> Result<Value, MirrorFailure> {
        self.get(&format!("/topics/{id}"))
            .map_err(failed(format!("Failed to get topic info for {id}")))
    }

    /// The topic's messages, newest first, following `links.next` for at most
    /// `query.max_pages` pages.
    pub fn topic_messages(
        &self,
        id: impl Display,
        query: &TopicMessagesQuery,
    ) -> Result<Vec<Value>, MirrorFailure> {
        let mut filter = String::from("?");
        if let Some(from) = &query.from {
            filter.push_str(&format!("&timestamp=gte:{from}"));
        }
        if let Some(to) = &query.to {
            filter.push_str(&format!("&timestamp=lte:{to}"));
        }
        filter.push_str("&order=desc&limit=100");
        let mut path = Some(format!("/topics/{id}/messages{filter}"));
        let mut messages = Vec::new();
        let mut pages = 0;
        while let Some(next) = path.take() {
            pages += 1;
            let page = self
                .get(&next)
                .map_err(failed(format!("Failed to get topic messages for {id}")))?;
            if let Some(list) = page["messages"].as_array() {
                messages.extend(list.iter().cloned());
            }
            if pages >= query.max_pages {
                break;
            }
            // `links.next` is a path from the host root (`/api/v1/...`); the base ends in
            // `/api/v1`.
            path = page["links"]["next"]
                .as_str()
                .map(|p| p.trim_start_matches("/api/v1").to_owned());
        }
        Ok(messages)
    }

    /// A transaction's records (`{transactions: [...]}`); `id` as the mirror spells it.
    pub fn transaction(&self, id: &str, nonce: Option<&str>) -> Result<Value, MirrorFailure> {
        let query = nonce.map(|n| format!("?nonce={n}")).unwrap_or_default();
        self.get(&format!("/transactions/{id}{query}"))
            .map_err(failed(format!("Failed to get transaction record for {id}")))
    }

    /// What became of transaction `id` (as the mirror spells it): `Some(true)` it applied
    /// (a record says SUCCESS), `Some(false)` it reached consensus and did not apply, `None`
    /// the mirror does not know it (yet). One try: a reconciler asks again later.
    pub fn transaction_applied(&self, id: &str) -> Result<Option<bool>, MirrorError> {
        let found = crate::blocking::block_on(
            &self.runtime,
            self.client.get_present(&format!("/transactions/{id}")),
        )?;
        Ok(found.and_then(|page| {
            let records = page["transactions"].as_array()?;
            if records.is_empty() {
                return None;
            }
            Some(records.iter().any(|r| r["result"] == "SUCCESS"))
        }))
    }

    /// [`Mirror::transaction`] from async code on the network's runtime, by SDK id.
    pub(crate) async fn transaction_async(&self, id: &TransactionId) -> Result<Value, MirrorError> {
        self.get_async(&format!("/transactions/{}", mirror_transaction_id(id)))
            .await
    }

    /// The exchange rates (`{current_rate, next_rate, timestamp}`), at `timestamp` if given.
    /// A refusal is worded as the kit's `fetch` wrapper words it.
    pub fn exchange_rate(&self, timestamp: Option<&str>) -> Result<Value, MirrorFailure> {
        let query = timestamp
            .map(|t| format!("?timestamp={}", encode_component(t)))
            .unwrap_or_default();
        self.get(&format!("/network/exchangerate{query}"))
            .map_err(|cause| MirrorFailure {
                message: match &cause {
                    MirrorError::Status { status, reason } => {
                        format!("HTTP error! status: {status}. Message: {reason}")
                    }
                    other => other.to_string(),
                },
                cause,
            })
    }

    pub fn contract(&self, id: impl Display) -> Result<Value, MirrorFailure> {
        self.get(&format!("/contracts/{id}"))
            .map_err(failed(format!("Failed to get contract info for {id}")))
    }

    /// `POST /contracts/call`: what a read-only call of `data` (0x hex) on the contract at
    /// the EVM address `to` returns (`result`, 0x hex), nothing applied. `what` words a
    /// failure (`Failed to read decimals of ERC20 contract 0.0.5`).
    pub fn contract_call(&self, to: &str, data: &str, what: &str) -> Result<String, MirrorFailure> {
        let body = serde_json::json!({"data": data, "to": to});
        let answer =
            crate::blocking::block_on(&self.runtime, self.client.post("/contracts/call", &body))
                .map_err(failed(what.to_owned()))?;
        answer["result"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| MirrorFailure {
                message: format!("{what}: the mirror's answer has no result"),
                cause: MirrorError::Body {
                    url: format!("{}/contracts/call", self.base_url()),
                    message: "no `result`".into(),
                },
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_text_is_encoded_as_encode_uri_component_does() {
        assert_eq!(encode_component("1700000000.5"), "1700000000.5");
        assert_eq!(encode_component("a b&c=d/é"), "a%20b%26c%3Dd%2F%C3%A9");
        assert_eq!(encode_component("!~*'()"), "!~*'()");
    }

    #[test]
    fn accounts_read_their_key_and_existence() {
        let key = hedera::PrivateKey::generate_ed25519().public_key();
        let account = Account(serde_json::json!({
            "account": "0.0.5",
            "balance": {"balance": 12},
            "key": {"_type": "ED25519", "key": hex::encode(key.to_bytes_raw())},
        }));
        assert!(account.exists());
        assert_eq!(account.balance_tinybars(), Some(12));
        assert_eq!(account.public_key(), Some(key));
        assert!(!Account(serde_json::json!({"account": null})).exists());
        let token = Token(serde_json::json!({"decimals": "8"}));
        assert_eq!(token.decimals(), Some(8));
        assert_eq!(
            Token(serde_json::json!({"decimals": 2})).decimals(),
            Some(2)
        );
    }
}
