//! `transfer_hbar_tool`: HBAR from the source (or context / operator) account to recipients.

use crate::model::facts::{Asset, Facts};
use crate::tools::json_text;
use crate::tools::normalise::{self, serde_as};
use crate::tools::plain;
use crate::tools::scheduling::{self, Scheduling};
use crate::tools::transfer_order::{js_hbar_transfer_order, HbarMove};
use crate::tools::PlainParams;
use crate::tools::{
    BuiltTransaction, CoreOutput, RawTransactionResponse, Tool, ToolContext, ToolError, ToolType,
};
use hedera::{AccountId, Hbar, TransferTransaction};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub struct TransferHbar;

/// One HBAR movement in tinybars; the sender's debit is negative.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HbarTransfer {
    #[serde(with = "serde_as::string")]
    #[schemars(with = "String")]
    pub account_id: AccountId,
    #[serde(with = "serde_as::amount")]
    #[schemars(with = "String")]
    pub amount: i64,
}

/// Normalised params: recipients, then the sender's negative total (the kit's shape).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TransferHbarNormalised {
    pub hbar_transfers: Vec<HbarTransfer>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transaction_memo: Option<String>,
    #[serde(default)]
    pub scheduling_params: Scheduling,
}

/// The raw params as the schema accepted them: `transfer_hbar_with_allowance_tool` takes the
/// same shape (its `sourceAccountId` names the allowance's owner).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Raw {
    pub transfers: Vec<RawTransfer>,
    pub source_account_id: Option<String>,
    pub transaction_memo: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct RawTransfer {
    pub account_id: String,
    pub amount: f64,
}

impl Tool for TransferHbar {
    type Normalised = TransferHbarNormalised;

    const METHOD: &'static str = "transfer_hbar_tool";
    const NAME: &'static str = "Transfer HBAR";
    const DESCRIPTION: &'static str = r#"
{context}

This tool will transfer HBAR to an account.

Parameters:
- transfers (array of objects, required): List of HBAR transfers to RECIPIENTS ONLY. CRITICAL: Do not include the sender/source account in this array. Each object should contain:
  - accountId (string, required): Recipient account ID (NOT the sender)
  - amount (number, required): Amount of HBAR to transfer
- sourceAccountId (str, optional): The Hedera account ID. If not provided, defaults to the {default_account} (Use this parameter for the sender. Do NOT put the sender in the transfers array).
- transactionMemo (string, optional): Optional memo for the transfer HBAR transaction
{scheduling}

{usage}
"#;
    const TOOL_TYPE: ToolType = ToolType::Transaction;

    fn core_result_schema() -> Value {
        crate::tools::shapes::Details::new()
            .typed::<Vec<HbarTransfer>>(
                "hbarTransfers",
                "Each movement in tinybars, the sender's debit last.",
            )
            .summary(&Self::schema())
    }

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "schedulingParams": crate::tools::schema_fragments::scheduling_params(),
                "transfers": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "accountId": {"type": "string", "description": "Recipient account ID (Required)"},
                            "amount": {"type": "number", "description": "Amount of HBAR to transfer (Required)"}
                        },
                        "required": ["accountId", "amount"],
                        "additionalProperties": false
                    },
                    "minItems": 1,
                    "description": "Array of HBAR transfers to RECIPIENTS. Do NOT include the sender/source account in this array."
                },
                "sourceAccountId": {"type": "string", "description": "Account ID of the sender/owner — the balance will be deducted from this account. Use this INSTEAD of adding a negative transfer."},
                "transactionMemo": {"type": "string", "description": "Memo to include with the transaction"}
            },
            "required": ["transfers"],
            "additionalProperties": false
        })
    }

    /// By hand when not scheduled: every policy call of the most common tool reads this
    /// text (ids as their `Display` writes them, which serde writes too and which never needs
    /// escaping). A scheduled call's through serde.
    fn normalised_json(n: &Self::Normalised) -> String {
        if n.scheduling_params != Scheduling::default() {
            return serde_json::to_string(n).unwrap_or_else(|_| "null".into());
        }
        let memo = n.transaction_memo.as_deref().map_or(0, str::len);
        let mut out = String::with_capacity(64 + 56 * n.hbar_transfers.len() + memo);
        out.push_str("{\"hbarTransfers\":[");
        for (i, t) in n.hbar_transfers.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str("{\"accountId\":\"");
            crate::text::push_account(&mut out, &t.account_id);
            out.push_str("\",\"amount\":\"");
            crate::text::push_i64(&mut out, t.amount);
            out.push_str("\"}");
        }
        out.push(']');
        if let Some(memo) = &n.transaction_memo {
            out.push_str(",\"transactionMemo\":");
            json_text::push_string(&mut out, memo);
        }
        out.push_str(",\"schedulingParams\":{\"isScheduled\":false}}");
        out
    }

    fn normalise(&self, raw: &Value, ctx: &ToolContext<'_>) -> Result<Self::Normalised, ToolError> {
        let scheduling = scheduling::raw_from(raw)?;
        let raw = Raw::deserialize(raw)
            .map_err(|e| ToolError::message(format!("Invalid parameters: {e}")))?;
        normalise_raw(raw, scheduling.as_ref(), ctx)
    }

    /// [`read_plain_raw`].
    fn read_plain(&self, text: &str) -> Option<PlainParams> {
        read_plain_raw(text)
    }

    fn normalise_plain(
        &self,
        raw: PlainParams,
        ctx: &ToolContext<'_>,
    ) -> Result<Self::Normalised, ToolError> {
        let raw = raw.into_inner::<Raw>()?;
        normalise_raw(raw, None, ctx)
    }

    fn check_normalised(&self, n: &Self::Normalised) -> Result<(), ToolError> {
        if n.hbar_transfers.is_empty() {
            return Err(ToolError::message("hbarTransfers must not be empty"));
        }
        let sum = n
            .hbar_transfers
            .iter()
            .try_fold(0i64, |acc, t| acc.checked_add(t.amount));
        if sum != Some(0) {
            return Err(ToolError::message("hbarTransfers must sum to zero"));
        }
        Ok(())
    }

    fn facts(&self, n: &Self::Normalised) -> Facts {
        let mut f = Facts::default();
        for t in &n.hbar_transfers {
            if t.amount < 0 {
                f.from(&t.account_id);
            }
            f.credit(Asset::Hbar, &t.account_id, t.amount);
        }
        f.with_memo(
            n.transaction_memo.as_deref(),
            n.scheduling_params.is_scheduled,
        )
    }

    fn core_action(
        &self,
        n: &Self::Normalised,
        ctx: &ToolContext<'_>,
    ) -> Result<CoreOutput, ToolError> {
        let mut tx = TransferTransaction::new();
        let transfers = n
            .hbar_transfers
            .iter()
            .map(|t| (t.account_id, t.amount, false));
        let ordered: Box<[HbarMove]> = js_hbar_transfer_order(transfers).into_boxed_slice();
        for &(account, tinybars, _) in &ordered {
            tx.hbar_transfer(account, Hbar::from_tinybars(tinybars));
        }
        crate::tools::transaction::set_memo(&mut tx, n.transaction_memo.as_deref());
        ctx.pin_nodes(&mut tx);
        let mut details = serde_json::Map::new();
        if ctx.wants_summary {
            let transfers = serde_json::to_value(&n.hbar_transfers).unwrap_or_default();
            details.insert("hbarTransfers".into(), transfers);
        }
        let mut built = BuiltTransaction::new(tx, "TransferTransaction", details);
        // The transfers just added, in the SDK's order, are all this transaction moves.
        built.hbar_transfers = Some(ordered);
        let built = n.scheduling_params.wrap(built)?;
        Ok(CoreOutput::Transaction(Box::new(built)))
    }

    fn post_process(&self, raw: &RawTransactionResponse) -> String {
        match &raw.schedule_id {
            Some(schedule) => format!(
                "Scheduled HBAR transfer created successfully.\nTransaction ID: {}\nSchedule ID: {schedule}",
                raw.transaction_id
            ),
            None => format!("HBAR successfully transferred.\nTransaction ID: {}", raw.transaction_id),
        }
    }
}

/// [`Tool::read_plain`] of the shape both HBAR transfer tools take ([`Raw`]): `transfers` (at
/// least one, each exactly `accountId` string and `amount` number), optional
/// `sourceAccountId` and `transactionMemo` strings, each key once; anything else (a
/// `schedulingParams`, an unknown key, a null, a form [`plain::Text`] declines) goes the
/// general way. Read by hand: it runs on every call of both tools.
pub(super) fn read_plain_raw(text: &str) -> Option<PlainParams> {
    let mut p = plain::Text::new(text);
    p.eat(b'{')?;
    let (mut transfers, mut source_account_id, mut transaction_memo) = (None, None, None);
    loop {
        let key = p.string()?;
        p.eat(b':')?;
        match key {
            "transfers" if transfers.is_none() => transfers = Some(read_plain_transfers(&mut p)?),
            "sourceAccountId" if source_account_id.is_none() => {
                source_account_id = Some(p.string()?.to_owned());
            }
            "transactionMemo" if transaction_memo.is_none() => {
                transaction_memo = Some(p.string()?.to_owned());
            }
            _ => return None,
        }
        match p.next_byte()? {
            b',' => {}
            b'}' => break,
            _ => return None,
        }
    }
    p.end()?;
    let transfers = transfers?; // required; minItems 1 (the schema words both)
    let raw = Raw {
        transfers,
        source_account_id,
        transaction_memo,
    };
    Some(PlainParams::new(raw))
}

/// `[{"accountId": "…", "amount": n}, …]`, at least one, each key exactly once.
fn read_plain_transfers(p: &mut plain::Text<'_>) -> Option<Vec<RawTransfer>> {
    p.eat(b'[')?;
    let mut transfers = Vec::with_capacity(4);
    loop {
        p.eat(b'{')?;
        let (mut account_id, mut amount) = (None, None);
        loop {
            let key = p.string()?;
            p.eat(b':')?;
            match key {
                "accountId" if account_id.is_none() => account_id = Some(p.string()?),
                "amount" if amount.is_none() => amount = Some(p.number()?),
                _ => return None,
            }
            match p.next_byte()? {
                b',' => {}
                b'}' => break,
                _ => return None,
            }
        }
        transfers.push(RawTransfer {
            account_id: account_id?.to_owned(),
            amount: amount?,
        });
        match p.next_byte()? {
            b',' => {}
            b']' => return Some(transfers),
            _ => return None,
        }
    }
}

/// Stage 2 of either path: `raw` as the schema accepted it → the kit's normalised params.
fn normalise_raw(
    raw: Raw,
    scheduling: Option<&scheduling::RawScheduling>,
    ctx: &ToolContext<'_>,
) -> Result<TransferHbarNormalised, ToolError> {
    let mut hbar_transfers = Vec::with_capacity(raw.transfers.len() + 1);
    let mut total: i64 = 0;
    for (i, t) in raw.transfers.iter().enumerate() {
        let tinybars = normalise::positive_tinybars(t.amount)?;
        let (shard, realm, num) =
            normalise::account_entity_in(|| format!("transfers.{i}.accountId"), &t.account_id)?;
        total = total
            .checked_add(tinybars)
            .ok_or_else(|| ToolError::message("Total transfer amount is out of range"))?;
        // Built in the list: an `AccountId` is 256 bytes.
        hbar_transfers.push(HbarTransfer {
            account_id: AccountId::new(shard, realm, num),
            amount: tinybars,
        });
    }
    // The kit parses the source after checking the amounts.
    let source =
        normalise::resolve_account("sourceAccountId", raw.source_account_id.as_deref(), ctx)?;
    hbar_transfers.push(HbarTransfer {
        account_id: source,
        amount: -total,
    });
    Ok(TransferHbarNormalised {
        hbar_transfers,
        transaction_memo: raw.transaction_memo,
        scheduling_params: Scheduling::normalise(scheduling, ctx)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::plain::Text;
    use std::str::FromStr;

    /// The reader the hand-written one replaced: serde's, the schema's keys only, no nulls.
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    struct SerdePlain {
        transfers: Vec<SerdeTransfer>,
        #[serde(default, deserialize_with = "plain::present_string")]
        source_account_id: Option<String>,
        #[serde(default, deserialize_with = "plain::present_string")]
        transaction_memo: Option<String>,
    }

    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    struct SerdeTransfer {
        account_id: String,
        amount: serde_json::Number,
    }

    /// (account, amount bits) of each transfer, source, memo, integral float.
    type Read = (Vec<(String, u64)>, Option<String>, Option<String>, bool);

    fn serde_read(text: &str) -> Option<Read> {
        let p: SerdePlain = serde_json::from_str(text).ok()?;
        if p.transfers.is_empty() {
            return None;
        }
        let mut integral = false;
        let transfers = p
            .transfers
            .into_iter()
            .map(|t| {
                let (amount, i) = plain::number(&t.amount);
                integral |= i;
                (t.account_id, amount.to_bits())
            })
            .collect();
        Some((transfers, p.source_account_id, p.transaction_memo, integral))
    }

    fn hand_read(text: &str) -> Option<Read> {
        let raw = read_plain_raw(text)?.into_inner::<Raw>().ok()?;
        // The plain path shows rawParams as sent: it takes no integral float.
        let integral = false;
        let transfers = raw
            .transfers
            .into_iter()
            .map(|t| (t.account_id, t.amount.to_bits()))
            .collect();
        Some((
            transfers,
            raw.source_account_id,
            raw.transaction_memo,
            integral,
        ))
    }

    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }

        fn pick<'a>(&mut self, list: &[&'a str]) -> &'a str {
            list[self.below(list.len())]
        }

        /// Whitespace, mostly none.
        fn ws(&mut self) -> &'static str {
            self.pick(&["", "", "", " ", "\n", "\t ", "\r\n  "])
        }

        /// A number: one of the edge cases, or a random decimal of 1–19 digits.
        fn number(&mut self) -> String {
            const EDGES: [&str; 25] = [
                "1",
                "0",
                "-0",
                "0.5",
                "-0.25",
                "1.0",
                "1e3",
                "01",
                "1.",
                ".5",
                "-",
                "0.1",
                "0.30000000000000004",
                "123456789012345678",
                "1234567890123456789",
                "-123456789012345678",
                "9007199254740993",
                "12345678.123456789",
                "1E2",
                "-0.0",
                "00.5",
                "5x",
                "1.5e-3",
                "99999999999999999",
                "0.00000000000000001",
            ];
            if self.below(3) > 0 {
                return self.pick(&EDGES).to_owned();
            }
            let len = 1 + self.below(19);
            let digits: String = (0..len)
                .map(|i| char::from(b'0' + (self.below(9) + usize::from(i > 0)) as u8))
                .collect();
            let sign = if self.below(2) == 0 { "-" } else { "" };
            if self.below(3) == 0 || len == 1 {
                return format!("{sign}{digits}");
            }
            let (int, frac) = digits.split_at(1 + self.below(len - 1));
            format!("{sign}{int}.{frac}")
        }
    }

    /// What the hand-written reader takes, serde's reader takes too and reads to the same
    /// values, bit for bit (the sign of zero included); and it takes every text of the plain
    /// shape whose numbers it reads (no exponent, `-0`, integral fraction or more than 17
    /// digits), whatever the whitespace and key order. 20,000 generated texts: random
    /// numbers, strings with escapes and control characters, whitespace, and (one in four)
    /// repeated, unknown or missing keys, nulls, trailing bytes.
    #[test]
    fn the_hand_reader_takes_only_what_serde_takes_and_reads_it_the_same() {
        const STRINGS: [&str; 10] = [
            "\"0.0.2001\"",
            "\"\"",
            "\"é ü\"",
            "\"a\\\"b\"",
            "\"\\u0041\"",
            "\"a\u{1}b\"",
            "\"0.0.1001\"",
            "null",
            "5",
            "\"x\u{7f}y\"",
        ];
        let mut rng = Rng(0x0123_4567_89AB_CDEF);
        let (mut taken, mut plain_shape) = (0, 0);
        for _ in 0..20_000 {
            let perturb = rng.below(4) == 0;
            let mut plain_numbers = true;
            let mut items = Vec::new();
            for _ in 0..1 + rng.below(3) {
                let id = if perturb {
                    rng.pick(&STRINGS)
                } else {
                    rng.pick(&STRINGS[..3])
                };
                let amount = rng.number();
                plain_numbers &= Text::new(&amount).number().is_some_and(|_| {
                    let mut t = Text::new(&amount);
                    t.number().is_some() && t.end().is_some()
                });
                let mut members = vec![
                    format!("{}\"accountId\"{}:{}{}", rng.ws(), rng.ws(), rng.ws(), id),
                    format!(
                        "{}\"amount\"{}:{}{}{}",
                        rng.ws(),
                        rng.ws(),
                        rng.ws(),
                        amount,
                        rng.ws()
                    ),
                ];
                if perturb && rng.below(5) == 0 {
                    members.push(
                        rng.pick(&["\"x\":1", "\"amount\":2", "\"accountId\":\"0.0.7\""])
                            .to_owned(),
                    );
                }
                if rng.below(2) == 0 {
                    members.reverse();
                }
                items.push(format!("{{{}}}", members.join(",")));
            }
            let comma = format!("{},{}", rng.ws(), rng.ws());
            let mut keys = vec![format!(
                "\"transfers\"{}:{}[{}]",
                rng.ws(),
                rng.ws(),
                items.join(&comma)
            )];
            if rng.below(2) == 0 {
                let memo = if perturb {
                    rng.pick(&STRINGS)
                } else {
                    "\"bench\""
                };
                keys.push(format!("\"transactionMemo\":{memo}"));
            }
            if rng.below(3) == 0 {
                keys.push(format!(
                    "\"sourceAccountId\"{}:{}\"0.0.1001\"",
                    rng.ws(),
                    rng.ws()
                ));
            }
            if perturb && rng.below(4) == 0 {
                keys.push(
                    rng.pick(&[
                        "\"schedulingParams\":{}",
                        "\"foo\":1",
                        "\"transfers\":[]",
                        "\"transactionMemo\":\"b\"",
                    ])
                    .to_owned(),
                );
            }
            let first = rng.below(keys.len());
            keys.swap(0, first);
            let mut text = format!("{}{{{}{}}}{}", rng.ws(), keys.join(","), rng.ws(), rng.ws());
            if perturb && rng.below(6) == 0 {
                text.push_str(rng.pick(&["x", "}", ",", "{}"]));
            }
            let hand = hand_read(&text);
            let serde = serde_read(&text);
            if let Some(hand) = &hand {
                taken += 1;
                assert_eq!(Some(hand), serde.as_ref(), "{text}");
            }
            if !perturb && plain_numbers {
                plain_shape += 1;
                assert!(hand.is_some(), "declined: {text}");
            }
        }
        assert!(
            taken > 5_000 && plain_shape > 5_000,
            "{taken} taken, {plain_shape} of the plain shape"
        );
    }

    /// The hand-written normalised JSON is serde's, byte for byte, over generated params:
    /// plain and alias ids, extreme amounts, memos that need escaping or none, scheduled or not.
    #[test]
    fn normalised_json_is_serdes_text() {
        let accounts = [
            AccountId::new(0, 0, 2001),
            AccountId::new(0, 0, 0),
            AccountId::new(u64::MAX, 7, u64::MAX),
            AccountId::from_str("0.0.302a300506032b6570032100e0c8ec2758a5879ffac226a13c0c516b799e72e35141a0dd828f94d37988a4b7").unwrap(),
            AccountId::from_str("0x302a300506032b6570032100114e6abc371b82da").unwrap(),
        ];
        let amounts = [0, 1, -1, 50_000_000, -150_000_000, i64::MAX, i64::MIN];
        let memos = [
            None,
            Some(""),
            Some("bench"),
            Some("q\"uote\\ \n é 🚀 \u{1}"),
        ];
        let schedules = [
            Scheduling::default(),
            Scheduling {
                is_scheduled: true,
                admin_key: Some("302a".into()),
                payer_account_id: Some(AccountId::new(0, 0, 5)),
                expiration_time: Some("2030-01-01T00:00:00Z".into()),
                wait_for_expiry: Some(false),
            },
        ];
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed as usize
        };
        let mut written = 0;
        for _ in 0..2_000 {
            let transfers = (0..next() % 5)
                .map(|_| HbarTransfer {
                    account_id: accounts[next() % accounts.len()],
                    amount: amounts[next() % amounts.len()],
                })
                .collect();
            let n = TransferHbarNormalised {
                hbar_transfers: transfers,
                transaction_memo: memos[next() % memos.len()].map(str::to_owned),
                scheduling_params: schedules[next() % 4 / 3].clone(),
            };
            let serde = serde_json::to_string(&n).unwrap();
            written += usize::from(n.scheduling_params == Scheduling::default());
            assert_eq!(TransferHbar::normalised_json(&n), serde, "{n:?}");
        }
        assert!(
            written > 1_000,
            "the hand-written path was taken {written} times"
        );
    }
}
