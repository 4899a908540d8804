//! Charging custom fees on a checked transfer plan, as the network's
//! `CustomFeeAssessmentStep` does: every token moved pays its fees (fixed fees by each
//! sender, fractional fees from the receivers' credits or on top of the sender's debit,
//! royalties from what an NFT's sender receives, or the fallback from its receiver); a fixed
//! fee paid in a token that has fees of its own pays those too, one level deep. Treasuries
//! and collectors are exempt as the network exempts them. The fees join the plan, so they
//! are applied with it or not at all. Fee schedules themselves are checked in `custom_fees`.

use super::plan::Plan;
use super::Ctx;
use crate::state::ledger::{AssessedFee, CustomFee, FeeKind, FixedFee, Ledger};
use hedera_proto::services as proto;
use proto::ResponseCodeEnum as Code;

/// Most balance changes a transfer may have once its custom fees are added
/// (`ledger.xferBalanceChanges.maxLen`).
const MAX_BALANCE_CHANGES: usize = 20;

/// How the transfer being charged is paid for.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Transfer,
    /// An airdrop (HIP-904): senders pay every fee, fractional ones on top of their debit,
    /// and nothing can be charged to a receiver.
    Airdrop,
}

/// What the fees add to a plan.
#[derive(Default)]
struct Charges {
    hbar: Vec<(u64, i64)>,
    /// (token, account, amount)
    tokens: Vec<(u64, u64, i64)>,
    assessed: Vec<AssessedFee>,
    /// Fixed fees paid in a token with fees of its own: (token, payer, amount, collector),
    /// charged at the next level.
    nested: Vec<(u64, u64, i64, u64)>,
}

impl Charges {
    /// Charge `fee`, a fee of token `of` (`None`: a topic's), to `payer` at `level`.
    fn fixed(
        &mut self,
        ledger: &Ledger,
        fee: FixedFee,
        of: Option<u64>,
        payer: u64,
        collector: u64,
        level: u8,
    ) {
        match fee.token {
            None => {
                self.hbar.push((payer, -fee.amount));
                self.hbar.push((collector, fee.amount));
            }
            Some(token) => {
                self.tokens.push((token, payer, -fee.amount));
                self.tokens.push((token, collector, fee.amount));
                // A fee paid in the token it belongs to pays no further fees.
                let has_fees = of != Some(token)
                    && ledger
                        .tokens
                        .get(&token)
                        .is_some_and(|t| !t.custom_fees.is_empty());
                if has_fees && level == 1 {
                    self.nested.push((token, payer, fee.amount, collector));
                } else if has_fees {
                    // Marks a third level, refused once the level is done.
                    self.nested.push((token, payer, fee.amount, u64::MAX));
                }
            }
        }
        self.assessed.push(AssessedFee {
            amount: fee.amount,
            token: fee.token,
            collector,
            payers: vec![payer],
        });
    }
}

/// Does `payer` not pay `fee` of a token with `treasury` and `fees`
/// (`CustomFeeExemptions.isPayerExempt`)?
fn exempt(payer: u64, fee: &CustomFee, treasury: u64, fees: &[CustomFee]) -> bool {
    payer == treasury
        || payer == fee.collector
        || (fee.all_collectors_exempt && fees.iter().any(|f| f.collector == payer))
}

/// `units × numerator / denominator`, rounded down, without overflow.
fn fraction_of(units: i64, numerator: i64, denominator: i64) -> i64 {
    (i128::from(units) * i128::from(numerator) / i128::from(denominator)) as i64
}

/// Net fungible change per (token, account), in order of first appearance.
fn nets(moves: &[(u64, u64, i64)]) -> Vec<(u64, u64, i64)> {
    let mut out: Vec<(u64, u64, i64)> = Vec::new();
    for &(token, account, amount) in moves {
        match out
            .iter_mut()
            .find(|(t, a, _)| *t == token && *a == account)
        {
            Some(entry) => entry.2 += amount,
            None => out.push((token, account, amount)),
        }
    }
    out
}

/// Charge the fees of fungible `token` on `sender` sending `units` to `credits`
/// ((account, units) received), at `level`.
#[allow(clippy::too_many_arguments)]
fn fungible(
    ledger: &Ledger,
    charges: &mut Charges,
    mode: Mode,
    token: u64,
    sender: u64,
    units: i64,
    credits: &[(u64, i64)],
    level: u8,
) -> Result<(), Code> {
    let t = &ledger.tokens[&token];
    for fee in t
        .custom_fees
        .iter()
        .filter(|f| !exempt(sender, f, t.treasury, &t.custom_fees))
    {
        match fee.kind {
            FeeKind::Fixed(fixed) => {
                charges.fixed(ledger, fixed, Some(token), sender, fee.collector, level)
            }
            FeeKind::Fractional {
                numerator,
                denominator,
                minimum,
                maximum,
                net_of_transfers,
            } => {
                let mut amount = fraction_of(units, numerator, denominator).max(minimum);
                if maximum > 0 {
                    amount = amount.min(maximum);
                }
                if amount == 0 {
                    continue;
                }
                let receivers: Vec<(u64, i64)> = credits
                    .iter()
                    .copied()
                    .filter(|&(a, units)| units > 0 && a != fee.collector)
                    .collect();
                let payers = if net_of_transfers || mode == Mode::Airdrop || receivers.is_empty() {
                    charges.tokens.push((token, sender, -amount));
                    vec![sender]
                } else {
                    // Taken from the receivers in proportion to what they receive; what
                    // rounding leaves is taken from the last of them.
                    let total: i64 = receivers.iter().map(|r| r.1).sum();
                    if amount > total {
                        return Err(Code::InsufficientSenderAccountBalanceForCustomFee);
                    }
                    let mut left = amount;
                    for (i, &(account, received)) in receivers.iter().enumerate() {
                        let share = if i + 1 == receivers.len() {
                            left
                        } else {
                            fraction_of(amount, received, total)
                        };
                        left -= share;
                        charges.tokens.push((token, account, -share));
                    }
                    receivers.iter().map(|r| r.0).collect()
                };
                charges.tokens.push((token, fee.collector, amount));
                charges.assessed.push(AssessedFee {
                    amount,
                    token: Some(token),
                    collector: fee.collector,
                    payers,
                });
            }
            FeeKind::Royalty { .. } => {}
        }
    }
    Ok(())
}

/// Charge the fees of NFT `token` on `sender` sending `serials` ((receiver, serial)); the
/// fungible value the sender receives in the transaction is `value` ((token or `None`
/// for HBAR, units)).
#[allow(clippy::too_many_arguments)]
fn nft(
    ledger: &Ledger,
    ctx: &Ctx<'_>,
    charges: &mut Charges,
    mode: Mode,
    token: u64,
    sender: u64,
    receivers: &[u64],
    value: &[(Option<u64>, i64)],
) -> Result<(), Code> {
    let t = &ledger.tokens[&token];
    for fee in &t.custom_fees {
        match fee.kind {
            FeeKind::Fixed(fixed) if !exempt(sender, fee, t.treasury, &t.custom_fees) => {
                charges.fixed(ledger, fixed, Some(token), sender, fee.collector, 1)
            }
            FeeKind::Royalty {
                numerator,
                denominator,
                fallback,
            } => {
                // Nothing is charged when the sender is exempt, not even the fallback.
                if exempt(sender, fee, t.treasury, &t.custom_fees) {
                    continue;
                }
                if value.is_empty() {
                    let Some(fallback) = fallback else { continue };
                    if mode == Mode::Airdrop {
                        return Err(Code::TokenAirdropWithFallbackRoyalty);
                    }
                    for &receiver in receivers {
                        if exempt(receiver, fee, t.treasury, &t.custom_fees) {
                            continue;
                        }
                        // The receiver pays, so it must sign.
                        ctx.require(&ledger.accounts[&receiver].key)?;
                        charges.fixed(ledger, fallback, Some(token), receiver, fee.collector, 1);
                    }
                    continue;
                }
                for &(denomination, units) in value {
                    let amount = fraction_of(units, numerator, denominator);
                    if amount == 0 {
                        continue;
                    }
                    match denomination {
                        None => {
                            charges.hbar.push((sender, -amount));
                            charges.hbar.push((fee.collector, amount));
                        }
                        Some(d) => {
                            charges.tokens.push((d, sender, -amount));
                            charges.tokens.push((d, fee.collector, amount));
                        }
                    }
                    charges.assessed.push(AssessedFee {
                        amount,
                        token: denomination,
                        collector: fee.collector,
                        payers: vec![sender],
                    });
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Assess the custom fees of `plan` (plus `pending`: (token, sender, units) an airdrop
/// leaves pending, and `pending_nfts`: (token, sender, receiver, serial)), check that their
/// payers can pay and their collectors can receive, and add them to the plan.
pub fn charge(
    ledger: &Ledger,
    ctx: &Ctx<'_>,
    plan: &mut Plan,
    mode: Mode,
    pending: &[(u64, u64, i64)],
    pending_nfts: &[(u64, u64, u64, i64)],
) -> Result<Vec<AssessedFee>, Code> {
    let mut moves = plan.fungible.clone();
    moves.extend(pending.iter().map(|&(t, s, units)| (t, s, -units)));
    let nets = nets(&moves);
    let has_fees = |token: u64| {
        ledger
            .tokens
            .get(&token)
            .is_some_and(|t| !t.custom_fees.is_empty())
    };
    let mut charges = Charges::default();
    // Fungible tokens, each sender in turn.
    for &(token, sender, net) in nets.iter().filter(|m| m.2 < 0 && has_fees(m.0)) {
        let credits: Vec<(u64, i64)> = nets
            .iter()
            .filter(|m| m.0 == token && m.2 > 0)
            .map(|m| (m.1, m.2))
            .collect();
        fungible(ledger, &mut charges, mode, token, sender, -net, &credits, 1)?;
    }
    // NFTs, each (token, sender) once.
    let mut nfts = plan.nfts.clone();
    nfts.extend_from_slice(pending_nfts);
    let mut pairs: Vec<(u64, u64)> = Vec::new();
    for &(token, sender, _, _) in &nfts {
        if has_fees(token) && !pairs.contains(&(token, sender)) {
            pairs.push((token, sender));
        }
    }
    for (token, sender) in pairs {
        let receivers: Vec<u64> = nfts
            .iter()
            .filter(|n| n.0 == token && n.1 == sender)
            .map(|n| n.2)
            .collect();
        let mut value: Vec<(Option<u64>, i64)> = Vec::new();
        let hbar: i64 = plan
            .hbar
            .iter()
            .filter(|h| h.0 == sender)
            .map(|h| h.1)
            .sum();
        if hbar > 0 {
            value.push((None, hbar));
        }
        value.extend(
            nets.iter()
                .filter(|m| m.1 == sender && m.2 > 0)
                .map(|m| (Some(m.0), m.2)),
        );
        nft(
            ledger,
            ctx,
            &mut charges,
            mode,
            token,
            sender,
            &receivers,
            &value,
        )?;
    }
    // Fixed fees paid in tokens with fees of their own: one more level, no further.
    let nested = std::mem::take(&mut charges.nested);
    for (token, payer, amount, collector) in nested {
        if collector == u64::MAX {
            return Err(Code::CustomFeeChargingExceededMaxRecursionDepth);
        }
        fungible(
            ledger,
            &mut charges,
            mode,
            token,
            payer,
            amount,
            &[(collector, amount)],
            2,
        )?;
    }
    if charges.nested.iter().any(|n| n.3 == u64::MAX) {
        return Err(Code::CustomFeeChargingExceededMaxRecursionDepth);
    }
    if charges.assessed.is_empty() {
        return Ok(Vec::new());
    }
    // Collectors and token payers must be able to hold what they collect and pay.
    for &(token, account, amount) in &charges.tokens {
        if ledger.live_account(account).is_none() {
            return Err(Code::InvalidCustomFeeCollector);
        }
        plan.holder(ledger, account, token, amount > 0, false)?;
    }
    plan.hbar.extend_from_slice(&charges.hbar);
    plan.fungible.extend_from_slice(&charges.tokens);
    for &(account, _) in charges.hbar.iter().filter(|c| c.1 < 0) {
        let net: i64 = plan
            .hbar
            .iter()
            .filter(|h| h.0 == account)
            .map(|h| h.1)
            .sum();
        let balance = ledger.accounts.get(&account).map_or(0, |a| a.balance);
        if balance + net < 0 {
            return Err(Code::InsufficientPayerBalanceForCustomFee);
        }
    }
    for &(token, account, _) in charges.tokens.iter().filter(|c| c.2 < 0) {
        let net: i64 = moves
            .iter()
            .chain(&charges.tokens)
            .filter(|m| m.0 == token && m.1 == account)
            .map(|m| m.2)
            .sum();
        let held = ledger.rel(account, token).map_or(0, |r| r.balance);
        if held + net < 0 {
            return Err(Code::InsufficientSenderAccountBalanceForCustomFee);
        }
    }
    let mut changed: Vec<(Option<u64>, u64)> = Vec::new();
    for key in plan
        .hbar
        .iter()
        .map(|h| (None, h.0))
        .chain(plan.fungible.iter().map(|f| (Some(f.0), f.1)))
    {
        if !changed.contains(&key) {
            changed.push(key);
        }
    }
    if changed.len() > MAX_BALANCE_CHANGES {
        return Err(Code::CustomFeeChargingExceededMaxAccountAmounts);
    }
    Ok(charges.assessed)
}
