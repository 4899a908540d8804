//! Custom fee schedules: reading and checking the fees a token (HIP-18: fixed, fractional,
//! royalty) or a topic (HIP-991: fixed) declares, and `TokenFeeScheduleUpdate`. Charging the
//! fees on a transfer lives in `fee_assessment`; nothing here moves value.

use super::{Ctx, Outcome};
use crate::state::ledger::{
    account_id, account_num, token_id, token_num, CustomFee, FeeKind, FixedFee, KeyBytes, Ledger,
};
use hedera_proto::services as proto;
use proto::ResponseCodeEnum as Code;

/// Most custom fees a token or a topic may declare (`tokens.maxCustomFeesAllowed`).
pub const MAX_CUSTOM_FEES: usize = 10;
/// Most fee-exempt keys a topic may list (`topics.maxEntriesForFeeExemptKeyList`).
pub const MAX_FEE_EXEMPT_KEYS: usize = 10;

/// The token a fee schedule belongs to, as far as checking its fees needs it.
#[derive(Clone, Copy)]
pub struct Owner {
    /// The token's number (`None` for a topic).
    pub token: Option<u64>,
    pub nft: bool,
    /// A token being created: a fee denominated in `0.0.0` means the new token itself, and
    /// collectors are associated with it by the create.
    pub creating: bool,
}

/// A fixed fee's amount and denomination, checked: positive, in HBAR or a live fungible
/// token the collector is associated with (`0.0.0` is the token being created).
fn fixed(
    ledger: &Ledger,
    owner: Owner,
    fee: &proto::FixedFee,
    collector: u64,
) -> Result<FixedFee, Code> {
    if fee.amount <= 0 {
        return Err(Code::CustomFeeMustBePositive);
    }
    let Some(id) = &fee.denominating_token_id else {
        return Ok(FixedFee {
            amount: fee.amount,
            token: None,
        });
    };
    let num = token_num(id).ok_or(Code::InvalidTokenIdInCustomFees)?;
    let itself = owner.token.filter(|_| owner.creating && num == 0);
    if let Some(new) = itself {
        if owner.nft {
            return Err(Code::CustomFeeDenominationMustBeFungibleCommon);
        }
        return Ok(FixedFee {
            amount: fee.amount,
            token: Some(new),
        });
    }
    let token = ledger
        .tokens
        .get(&num)
        .filter(|t| !t.deleted)
        .ok_or(Code::InvalidTokenIdInCustomFees)?;
    if token.nft {
        return Err(Code::CustomFeeDenominationMustBeFungibleCommon);
    }
    if ledger.rel(collector, num).is_none() {
        return Err(Code::TokenNotAssociatedToFeeCollector);
    }
    Ok(FixedFee {
        amount: fee.amount,
        token: Some(num),
    })
}

/// A fraction's parts, checked: no division by zero, nothing negative.
fn fraction(f: Option<&proto::Fraction>) -> Result<(i64, i64), Code> {
    let f = f.ok_or(Code::CustomFeeNotFullySpecified)?;
    if f.denominator == 0 {
        return Err(Code::FractionDividesByZero);
    }
    if f.numerator < 0 || f.denominator < 0 {
        return Err(Code::CustomFeeMustBePositive);
    }
    Ok((f.numerator, f.denominator))
}

/// A live account that may collect fees.
fn collector(ledger: &Ledger, id: Option<&proto::AccountId>) -> Result<u64, Code> {
    let num = id
        .and_then(account_num)
        .ok_or(Code::InvalidCustomFeeCollector)?;
    ledger
        .live_account(num)
        .map(|a| a.num)
        .ok_or(Code::InvalidCustomFeeCollector)
}

/// A token's custom fee schedule, checked as the network does at create and at
/// `TokenFeeScheduleUpdate` (`CustomFeesValidator`).
pub fn token_fees(
    ledger: &Ledger,
    owner: Owner,
    fees: &[proto::CustomFee],
) -> Result<Vec<CustomFee>, Code> {
    use proto::custom_fee::Fee;
    if fees.len() > MAX_CUSTOM_FEES {
        return Err(Code::CustomFeesListTooLong);
    }
    fees.iter()
        .map(|fee| {
            let collector = collector(ledger, fee.fee_collector_account_id.as_ref())?;
            let kind = match fee.fee.as_ref().ok_or(Code::CustomFeeNotFullySpecified)? {
                Fee::FixedFee(f) => FeeKind::Fixed(fixed(ledger, owner, f, collector)?),
                Fee::FractionalFee(f) => {
                    if owner.nft {
                        return Err(Code::CustomFractionalFeeOnlyAllowedForFungibleCommon);
                    }
                    let (numerator, denominator) = fraction(f.fractional_amount.as_ref())?;
                    if f.minimum_amount < 0 || f.maximum_amount < 0 {
                        return Err(Code::CustomFeeMustBePositive);
                    }
                    if f.maximum_amount > 0 && f.maximum_amount < f.minimum_amount {
                        return Err(Code::FractionalFeeMaxAmountLessThanMinAmount);
                    }
                    // The collector of a fraction of this token must hold it.
                    let token = owner.token.expect("token fees");
                    if !owner.creating && ledger.rel(collector, token).is_none() {
                        return Err(Code::TokenNotAssociatedToFeeCollector);
                    }
                    FeeKind::Fractional {
                        numerator,
                        denominator,
                        minimum: f.minimum_amount,
                        maximum: f.maximum_amount,
                        net_of_transfers: f.net_of_transfers,
                    }
                }
                Fee::RoyaltyFee(f) => {
                    if !owner.nft {
                        return Err(Code::CustomRoyaltyFeeOnlyAllowedForNonFungibleUnique);
                    }
                    let (numerator, denominator) = fraction(f.exchange_value_fraction.as_ref())?;
                    if numerator > denominator {
                        return Err(Code::RoyaltyFractionCannotExceedOne);
                    }
                    let fallback = f
                        .fallback_fee
                        .as_ref()
                        .map(|f| fixed(ledger, owner, f, collector))
                        .transpose()?;
                    FeeKind::Royalty {
                        numerator,
                        denominator,
                        fallback,
                    }
                }
            };
            Ok(CustomFee {
                kind,
                collector,
                all_collectors_exempt: fee.all_collectors_are_exempt,
            })
        })
        .collect()
}

/// A topic's fixed fees (HIP-991), checked.
pub fn topic_fees(ledger: &Ledger, fees: &[proto::FixedCustomFee]) -> Result<Vec<CustomFee>, Code> {
    if fees.len() > MAX_CUSTOM_FEES {
        return Err(Code::CustomFeesListTooLong);
    }
    let owner = Owner {
        token: None,
        nft: false,
        creating: false,
    };
    fees.iter()
        .map(|fee| {
            let collector = collector(ledger, fee.fee_collector_account_id.as_ref())?;
            let f = fee
                .fixed_fee
                .as_ref()
                .ok_or(Code::CustomFeeNotFullySpecified)?;
            Ok(CustomFee {
                kind: FeeKind::Fixed(fixed(ledger, owner, f, collector)?),
                collector,
                all_collectors_exempt: false,
            })
        })
        .collect()
}

/// A topic's fee-exempt keys, checked: at most ten, each usable, none twice.
pub fn fee_exempt_keys(keys: &[proto::Key]) -> Result<Vec<KeyBytes>, Code> {
    if keys.len() > MAX_FEE_EXEMPT_KEYS {
        return Err(Code::MaxEntriesForFeeExemptKeyListExceeded);
    }
    let mut out: Vec<KeyBytes> = Vec::with_capacity(keys.len());
    for key in keys {
        if !crate::state::keys::is_valid(key) {
            return Err(Code::InvalidKeyInFeeExemptKeyList);
        }
        let bytes = KeyBytes::from_proto(key);
        if out.contains(&bytes) {
            return Err(Code::FeeExemptKeyListContainsDuplicatedKeys);
        }
        out.push(bytes);
    }
    Ok(out)
}

/// A body's `max_custom_fees`: only a message submission may carry them
/// (`MAX_CUSTOM_FEES_IS_NOT_SUPPORTED`), and a limit names each denomination once.
pub fn pure_check_limits(limits: &[proto::CustomFeeLimit], submit: bool) -> Result<(), Code> {
    if limits.is_empty() {
        return Ok(());
    }
    if !submit {
        return Err(Code::MaxCustomFeesIsNotSupported);
    }
    for limit in limits {
        let mut seen = Vec::with_capacity(limit.fees.len());
        for fee in &limit.fees {
            let denomination = fee.denominating_token_id.as_ref().map(|t| t.token_num);
            if seen.contains(&denomination) {
                return Err(Code::DuplicateDenominationInMaxCustomFeeList);
            }
            seen.push(denomination);
        }
    }
    Ok(())
}

/// A fixed fee as the protobuf states it.
pub fn fixed_to_proto(fee: &FixedFee) -> proto::FixedFee {
    proto::FixedFee {
        amount: fee.amount,
        denominating_token_id: fee.token.map(token_id),
    }
}

/// A token's custom fee as the protobuf states it.
pub fn to_proto(fee: &CustomFee) -> proto::CustomFee {
    use proto::custom_fee::Fee;
    let fraction = |numerator, denominator| proto::Fraction {
        numerator,
        denominator,
    };
    let kind = match fee.kind {
        FeeKind::Fixed(f) => Fee::FixedFee(fixed_to_proto(&f)),
        FeeKind::Fractional {
            numerator,
            denominator,
            minimum,
            maximum,
            net_of_transfers,
        } => Fee::FractionalFee(proto::FractionalFee {
            fractional_amount: Some(fraction(numerator, denominator)),
            minimum_amount: minimum,
            maximum_amount: maximum,
            net_of_transfers,
        }),
        FeeKind::Royalty {
            numerator,
            denominator,
            fallback,
        } => Fee::RoyaltyFee(proto::RoyaltyFee {
            exchange_value_fraction: Some(fraction(numerator, denominator)),
            fallback_fee: fallback.as_ref().map(fixed_to_proto),
        }),
    };
    proto::CustomFee {
        fee: Some(kind),
        fee_collector_account_id: Some(account_id(fee.collector)),
        all_collectors_are_exempt: fee.all_collectors_exempt,
    }
}

/// A topic's fixed fee as the protobuf states it.
pub fn topic_fee_to_proto(fee: &CustomFee) -> proto::FixedCustomFee {
    let FeeKind::Fixed(f) = fee.kind else {
        unreachable!("topic fees are fixed")
    };
    proto::FixedCustomFee {
        fixed_fee: Some(fixed_to_proto(&f)),
        fee_collector_account_id: Some(account_id(fee.collector)),
    }
}

/// `TokenFeeScheduleUpdate`: the fee schedule key signs; the new schedule is checked like a
/// create's, except that collectors must already hold the tokens they collect.
pub fn update_schedule(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    body: &proto::TokenFeeScheduleUpdateTransactionBody,
) -> Result<Outcome, Code> {
    let token = super::live_token(ledger, body.token_id.as_ref())?;
    let num = token.num;
    let key = token
        .fee_schedule_key
        .as_ref()
        .ok_or(Code::TokenHasNoFeeScheduleKey)?;
    ctx.require(key)?;
    if token.custom_fees.is_empty() && body.custom_fees.is_empty() {
        return Err(Code::CustomScheduleAlreadyHasNoFees);
    }
    let owner = Owner {
        token: Some(num),
        nft: token.nft,
        creating: false,
    };
    let fees = token_fees(ledger, owner, &body.custom_fees)?;
    let token = ledger.tokens.get_mut(&num).expect("checked");
    token.custom_fees = fees;
    token.modified = ctx.consensus;
    Ok(Outcome::success().entity(num))
}
