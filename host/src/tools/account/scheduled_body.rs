//! What a scheduled transaction moves, read from the network: the facts of a schedule
//! signature. Signing a schedule can execute it (the last required signature does), so the
//! signature moves what the scheduled body moves, and policies must judge that, not the
//! empty params of `sign_schedule_transaction_tool`.
//!
//! The schedule comes from the mirror (`/schedules/{id}`: the body as the network stored it);
//! the body is decoded with the HAPI types and mapped to [`Facts`]. Bodies that cannot move
//! value state what they change; bodies whose effect on value cannot be stated (a contract
//! call with call data, a token update that may move the treasury, an account update that may
//! hand over its key, …) and any schedule that cannot be read refuse the call: a policy
//! cannot judge what nobody can state. Recipients named by an EVM address alias are resolved
//! to the account holding it, as the EVM tools do; key aliases refuse.
//! What must not live here: building the signature transaction (`schedule_ops`).

use crate::mirror::Mirror;
use crate::model::facts::{Asset, Facts, Movement, Via, ALL};
use crate::tools::ToolError;
use base64::Engine as _;
use hedera::ScheduleId;
use hedera_proto::services::{
    self, account_id::Account, schedulable_transaction_body::Data, AccountAmount, TokenTransferList,
};
use prost::Message as _;

/// The facts of signing `schedule`: what its body moves (its memo, not scheduled: the
/// signature may execute it now).
pub fn facts_of_schedule(mirror: &Mirror, schedule: ScheduleId) -> Result<Facts, ToolError> {
    let refuse = |why: String| {
        ToolError::message(format!(
            "cannot state what schedule {schedule} moves ({why}); a policy cannot judge it, so the signature is refused"
        ))
    };
    let found = mirror
        .get(&format!("/schedules/{schedule}"))
        .map_err(|e| refuse(format!("the mirror did not answer it: {e}")))?;
    let body = found["transaction_body"]
        .as_str()
        .ok_or_else(|| refuse("the mirror's answer has no transaction_body".into()))?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(body)
        .map_err(|e| refuse(format!("transaction_body is not base64: {e}")))?;
    let body = services::SchedulableTransactionBody::decode(bytes.as_slice())
        .map_err(|e| refuse(format!("transaction_body does not decode: {e}")))?;
    let mut facts = body_facts(body.data, &|alias| resolve_alias(mirror, alias)).map_err(refuse)?;
    if !body.memo.is_empty() {
        facts.memo = Some(body.memo);
    }
    Ok(facts)
}

/// The account holding a 20-byte EVM address alias (`0x…` when none does yet).
fn resolve_alias(mirror: &Mirror, alias: &[u8]) -> Result<String, String> {
    if alias.len() != 20 {
        return Err("a recipient is named by a key alias".into());
    }
    let address = format!("0x{}", hex::encode(alias));
    match mirror.account_by_address(&address) {
        Ok(Some(account)) => Ok(account.id().map_or(address, str::to_owned)),
        Ok(None) => Ok(address),
        Err(e) => Err(format!("cannot resolve {address}: {e}")),
    }
}

type Resolve<'a> = dyn Fn(&[u8]) -> Result<String, String> + 'a;

fn account(id: Option<&services::AccountId>, resolve: &Resolve<'_>) -> Result<String, String> {
    let id = id.ok_or("an account id is missing")?;
    match &id.account {
        Some(Account::AccountNum(num)) => Ok(format!("{}.{}.{num}", id.shard_num, id.realm_num)),
        Some(Account::Alias(alias)) => resolve(alias),
        None => Err("an account id is empty".into()),
    }
}

fn token(id: Option<&services::TokenId>) -> Result<String, String> {
    let id = id.ok_or("a token id is missing")?;
    Ok(format!(
        "{}.{}.{}",
        id.shard_num, id.realm_num, id.token_num
    ))
}

/// HBAR or fungible-token legs: credits are movements, the first debit is the source.
fn legs(
    facts: &mut Facts,
    asset: &Asset,
    amounts: &[AccountAmount],
    resolve: &Resolve<'_>,
) -> Result<(), String> {
    for leg in amounts {
        let who = account(leg.account_id.as_ref(), resolve)?;
        if leg.amount < 0 && facts.source.is_none() {
            facts.from(&who);
        }
        facts.credit(asset.clone(), &who, leg.amount);
    }
    Ok(())
}

fn token_lists(
    facts: &mut Facts,
    lists: &[TokenTransferList],
    resolve: &Resolve<'_>,
) -> Result<(), String> {
    for list in lists {
        let id = token(list.token.as_ref())?;
        facts.token(&id);
        legs(facts, &Asset::Token(id.clone()), &list.transfers, resolve)?;
        for nft in &list.nft_transfers {
            let sender = account(nft.sender_account_id.as_ref(), resolve)?;
            if facts.source.is_none() {
                facts.from(&sender);
            }
            let receiver = account(nft.receiver_account_id.as_ref(), resolve)?;
            facts.credit(Asset::Nft(id.clone()), &receiver, 1);
        }
    }
    Ok(())
}

/// The facts of one scheduled body, or why they cannot be stated.
fn body_facts(data: Option<Data>, resolve: &Resolve<'_>) -> Result<Facts, String> {
    let mut f = Facts::default();
    match data.ok_or("the scheduled body is empty")? {
        Data::CryptoTransfer(body) => {
            if let Some(list) = &body.transfers {
                legs(&mut f, &Asset::Hbar, &list.account_amounts, resolve)?;
            }
            token_lists(&mut f, &body.token_transfers, resolve)?;
        }
        Data::TokenAirdrop(body) => token_lists(&mut f, &body.token_transfers, resolve)?,
        Data::CryptoApproveAllowance(body) => {
            for a in &body.crypto_allowances {
                f.from(&account(a.owner.as_ref(), resolve)?);
                let spender = account(a.spender.as_ref(), resolve)?;
                f.allowance(Asset::Hbar, &spender, a.amount.max(0) as u64);
            }
            for a in &body.token_allowances {
                let id = token(a.token_id.as_ref())?;
                f.token(&id);
                f.from(&account(a.owner.as_ref(), resolve)?);
                let spender = account(a.spender.as_ref(), resolve)?;
                f.allowance(Asset::Token(id), &spender, a.amount.max(0) as u64);
            }
            for a in &body.nft_allowances {
                let id = token(a.token_id.as_ref())?;
                f.token(&id);
                f.from(&account(a.owner.as_ref(), resolve)?);
                let spender = account(a.spender.as_ref(), resolve)?;
                let serials = if a.approved_for_all == Some(true) {
                    ALL
                } else {
                    a.serial_numbers.len() as u64
                };
                f.allowance(Asset::Nft(id), &spender, serials);
            }
        }
        Data::CryptoDelete(body) => {
            let deleted = account(body.delete_account_id.as_ref(), resolve)?;
            f.from(&deleted);
            f.all_of(
                Asset::Hbar,
                &account(body.transfer_account_id.as_ref(), resolve)?,
            );
            f.changes("account", &deleted);
        }
        Data::CryptoCreateAccount(body) => {
            if body.initial_balance > 0 {
                f.movements.push(Movement {
                    asset: Asset::Hbar,
                    to: None,
                    amount: body.initial_balance,
                    via: Via::Transfer,
                });
            }
        }
        Data::ContractCall(body) if body.function_parameters.is_empty() => {
            let id = body.contract_id.ok_or("a contract id is missing")?;
            let Some(services::contract_id::Contract::ContractNum(num)) = id.contract else {
                return Err("the contract is named by an EVM address".into());
            };
            let to = format!("{}.{}.{num}", id.shard_num, id.realm_num);
            f.credit(Asset::Hbar, &to, body.amount);
        }
        // Nothing of value moves: a message, a topic, token relationships, removed allowances.
        Data::ConsensusSubmitMessage(body) => {
            if let Some(topic) = body.topic_id {
                f.changes(
                    "topic",
                    &format!(
                        "{}.{}.{}",
                        topic.shard_num, topic.realm_num, topic.topic_num
                    ),
                );
            }
        }
        Data::ConsensusCreateTopic(_)
        | Data::TokenAssociate(_)
        | Data::TokenDissociate(_)
        | Data::CryptoDeleteAllowance(_)
        | Data::UtilPrng(_) => {}
        other => {
            return Err(format!(
                "a scheduled {} is not one hak can state",
                kind(&other)
            ))
        }
    }
    Ok(f)
}

/// The body's kind, as the HAPI names it (`ContractCall`, `TokenUpdate`, …).
fn kind(data: &Data) -> String {
    let debug = format!("{data:?}");
    debug
        .split(|c: char| !c.is_alphanumeric())
        .next()
        .unwrap_or("body")
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(num: i64) -> Option<services::AccountId> {
        Some(services::AccountId {
            shard_num: 0,
            realm_num: 0,
            account: Some(Account::AccountNum(num)),
        })
    }

    fn no_alias(_: &[u8]) -> Result<String, String> {
        Err("no mirror here".into())
    }

    #[test]
    fn a_scheduled_transfer_states_its_recipients_and_source() {
        let body = Data::CryptoTransfer(services::CryptoTransferTransactionBody {
            transfers: Some(services::TransferList {
                account_amounts: vec![
                    AccountAmount {
                        account_id: id(1003),
                        amount: -700_000_000,
                        is_approval: false,
                    },
                    AccountAmount {
                        account_id: id(1005),
                        amount: 700_000_000,
                        is_approval: false,
                    },
                ],
            }),
            token_transfers: vec![],
        });
        let f = body_facts(Some(body), &no_alias).unwrap();
        assert_eq!(f.source.as_deref(), Some("0.0.1003"));
        assert_eq!(
            f.movements,
            vec![Movement {
                asset: Asset::Hbar,
                to: Some("0.0.1005".into()),
                amount: 700_000_000,
                via: Via::Transfer
            }]
        );
    }

    #[test]
    fn what_cannot_be_stated_is_refused() {
        let call = Data::ContractCall(services::ContractCallTransactionBody {
            contract_id: None,
            gas: 1,
            amount: 0,
            function_parameters: vec![0xa9, 0x05, 0x9c, 0xbb],
        });
        let err = body_facts(Some(call), &no_alias).unwrap_err();
        assert!(err.contains("ContractCall"), "{err}");
        assert!(body_facts(None, &no_alias).is_err());
        let aliased = Data::CryptoTransfer(services::CryptoTransferTransactionBody {
            transfers: Some(services::TransferList {
                account_amounts: vec![AccountAmount {
                    account_id: Some(services::AccountId {
                        shard_num: 0,
                        realm_num: 0,
                        account: Some(Account::Alias(vec![1; 20])),
                    }),
                    amount: 5,
                    is_approval: false,
                }],
            }),
            token_transfers: vec![],
        });
        assert!(body_facts(Some(aliased), &no_alias).is_err());
    }
}
