//! Account queries: the balance (free; also the SDK's ping) and the account info with its
//! token relationships and pending airdrops.

use super::header;
use crate::node::ingest::Node;
use crate::state::ledger::{account_id, token_id, KeyBytes, Ledger};
use hedera_proto::services as proto;
use proto::ResponseCodeEnum as Code;

// `token_balances` is deprecated in the protobufs, yet the network fills it and the SDKs read it.
#[allow(deprecated)]
pub(super) fn balance(
    node: &Node,
    q: &proto::CryptoGetAccountBalanceQuery,
) -> proto::CryptoGetAccountBalanceResponse {
    use proto::crypto_get_account_balance_query::BalanceSource;
    let response_type = q.header.as_ref().map_or(0, |h| h.response_type);
    let ledger = node.ledger();
    let num = match &q.balance_source {
        Some(BalanceSource::AccountId(id)) => ledger.resolve_account(id),
        _ => None,
    };
    match num.and_then(|n| ledger.accounts.get(&n)) {
        None => proto::CryptoGetAccountBalanceResponse {
            header: header(Code::InvalidAccountId, response_type),
            ..Default::default()
        },
        Some(a) if a.deleted => proto::CryptoGetAccountBalanceResponse {
            header: header(Code::AccountDeleted, response_type),
            ..Default::default()
        },
        Some(a) => proto::CryptoGetAccountBalanceResponse {
            header: header(Code::Ok, response_type),
            account_id: Some(account_id(a.num)),
            balance: a.balance.max(0) as u64,
            // Deprecated on the network but still filled, and read by the SDKs.
            token_balances: token_relationships(&ledger, a.num)
                .into_iter()
                .map(|r| proto::TokenBalance {
                    token_id: r.token_id,
                    balance: r.balance,
                    decimals: r.decimals,
                })
                .collect(),
        },
    }
}

/// A pending airdrop as a record lists it: its id and, for a fungible one, the amount.
pub(super) fn pending_airdrop_record(
    p: &crate::state::ledger::PendingAirdrop,
) -> proto::PendingAirdropRecord {
    use proto::pending_airdrop_id::TokenReference;
    let token = token_id(p.token);
    proto::PendingAirdropRecord {
        pending_airdrop_id: Some(proto::PendingAirdropId {
            sender_id: Some(account_id(p.sender)),
            receiver_id: Some(account_id(p.receiver)),
            token_reference: Some(match p.serial {
                Some(serial_number) => TokenReference::NonFungibleToken(proto::NftId {
                    token_id: Some(token),
                    serial_number,
                }),
                None => TokenReference::FungibleTokenType(token),
            }),
        }),
        pending_airdrop_value: p.serial.is_none().then_some(proto::PendingAirdropValue {
            amount: p.amount.max(0) as u64,
        }),
    }
}

/// An account's token relationships, as balance and info queries list them.
pub(super) fn token_relationships(ledger: &Ledger, account: u64) -> Vec<proto::TokenRelationship> {
    let Some(rels) = ledger.rels.get(&account) else {
        return Vec::new();
    };
    rels.iter()
        .filter_map(|(&num, rel)| {
            let token = ledger.tokens.get(&num)?;
            let applicable = |key: &Option<KeyBytes>, on: bool, off: i32| match key {
                None => 0,
                Some(_) if on => 1,
                Some(_) => off,
            };
            Some(proto::TokenRelationship {
                token_id: Some(token_id(num)),
                symbol: token.symbol.clone(),
                balance: rel.balance.max(0) as u64,
                kyc_status: applicable(&token.kyc_key, rel.kyc_granted, 2),
                freeze_status: applicable(&token.freeze_key, rel.frozen, 2),
                decimals: token.decimals,
                automatic_association: rel.automatic,
            })
        })
        .collect()
}

// `token_relationships` is deprecated in the protobufs, yet the SDKs read it.
#[allow(deprecated)]
pub(super) fn account_info(
    node: &Node,
    q: &proto::CryptoGetInfoQuery,
) -> proto::CryptoGetInfoResponse {
    let response_type = q.header.as_ref().map_or(0, |h| h.response_type);
    let ledger = node.ledger();
    let Some(account) = q
        .account_id
        .as_ref()
        .and_then(|id| ledger.resolve_account(id))
        .and_then(|n| ledger.accounts.get(&n))
    else {
        return proto::CryptoGetInfoResponse {
            header: header(Code::InvalidAccountId, response_type),
            ..Default::default()
        };
    };
    if account.deleted {
        return proto::CryptoGetInfoResponse {
            header: header(Code::AccountDeleted, response_type),
            ..Default::default()
        };
    }
    let info = proto::crypto_get_info_response::AccountInfo {
        account_id: Some(account_id(account.num)),
        contract_account_id: account
            .evm_address
            .clone()
            .unwrap_or_else(|| format!("{:040x}", account.num)),
        // A key alias only: the SDKs decode it as a `Key` (an EVM alias shows in
        // `contract_account_id`).
        alias: account
            .key_alias
            .as_deref()
            .and_then(|a| hex::decode(a).ok())
            .unwrap_or_default(),
        deleted: account.deleted,
        key: Some(account.key.to_proto()),
        balance: account.balance.max(0) as u64,
        receiver_sig_required: account.receiver_sig_required,
        expiration_time: Some(proto::Timestamp {
            seconds: account.created.seconds + account.auto_renew_period,
            nanos: 0,
        }),
        auto_renew_period: Some(proto::Duration {
            seconds: account.auto_renew_period,
        }),
        memo: account.memo.clone(),
        max_automatic_token_associations: account.max_automatic_token_associations,
        ledger_id: vec![3],
        token_relationships: token_relationships(&ledger, account.num),
        owned_nfts: ledger
            .nfts
            .values()
            .flat_map(|serials| serials.values())
            .filter(|nft| nft.owner == account.num)
            .count() as i64,
        ..Default::default()
    };
    proto::CryptoGetInfoResponse {
        header: header(Code::Ok, response_type),
        account_info: Some(info),
    }
}
