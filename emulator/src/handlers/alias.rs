//! Accounts named by an alias (HIP-32, HIP-583). A transfer that credits a public-key alias
//! creates the account with that key ("auto-created account"); one that credits an EVM
//! address creates a hollow account with no key ("lazy-created account"), which the first
//! transaction it pays for, signed by the ECDSA key of that address, completes. Debits from
//! an alias no account holds are `INVALID_ACCOUNT_ID`. Only the ids are rewritten here; the
//! transfer itself is the crypto handler's.

use super::Ctx;
use crate::state::ledger::{Account, KeyBytes, Ledger};
use hedera_proto::services as proto;
use prost::Message;
use proto::account_id::Account as Id;
use proto::ResponseCodeEnum as Code;

/// What an alias names.
enum Alias {
    Key(proto::Key),
    Evm(Vec<u8>),
}

fn parse(bytes: &[u8]) -> Option<Alias> {
    if bytes.len() == 20 {
        return Some(Alias::Evm(bytes.to_vec()));
    }
    let key = proto::Key::decode(bytes).ok()?;
    match &key.key {
        Some(proto::key::Key::Ed25519(raw)) if raw.len() == 32 => Some(Alias::Key(key)),
        Some(proto::key::Key::EcdsaSecp256k1(raw)) if raw.len() == 33 => Some(Alias::Key(key)),
        _ => None,
    }
}

/// Whether `id` is an alias of a valid form (what precheck accepts in place of a number).
pub fn is_alias(id: &proto::AccountId) -> bool {
    matches!((&id.shard_num, &id.realm_num, &id.account), (0, 0, Some(Id::Alias(b))) if parse(b).is_some())
}

/// The 20-byte EVM address of a compressed secp256k1 key, as hex.
pub fn ecdsa_evm_address(raw: &[u8]) -> Option<String> {
    let key = hedera::PublicKey::from_bytes_ecdsa(raw).ok()?;
    key.to_evm_address().map(|a| hex::encode(a.to_bytes()))
}

fn create(ledger: &mut Ledger, ctx: &Ctx<'_>, alias: Alias, bytes: &[u8]) -> u64 {
    let num = ledger.allocate();
    let (key, evm_address, key_alias, memo) = match alias {
        Alias::Key(key) => {
            let evm = match &key.key {
                Some(proto::key::Key::EcdsaSecp256k1(raw)) => ecdsa_evm_address(raw),
                _ => None,
            };
            (key, evm, Some(hex::encode(bytes)), "auto-created account")
        }
        Alias::Evm(address) => (
            proto::Key {
                key: Some(proto::key::Key::KeyList(proto::KeyList {
                    keys: Vec::new(),
                })),
            },
            Some(hex::encode(address)),
            None,
            "lazy-created account",
        ),
    };
    ledger.accounts.insert(
        num,
        Account {
            num,
            key: KeyBytes::from_proto(&key),
            balance: 0,
            deleted: false,
            memo: memo.into(),
            receiver_sig_required: false,
            max_automatic_token_associations: -1,
            auto_renew_period: 7_776_000,
            created: ctx.consensus,
            decline_reward: false,
            evm_address,
            key_alias,
        },
    );
    num
}

/// `id` as an account number: an alias that names an account, or (when `credited`) the
/// account created for it now (recorded in `created`).
fn number(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    id: &mut proto::AccountId,
    credited: bool,
    created: &mut Vec<u64>,
) -> Result<(), Code> {
    let Some(Id::Alias(bytes)) = &id.account else {
        return Ok(());
    };
    let num = match ledger.resolve_account(id) {
        Some(num) => num,
        None if credited => {
            let bytes = bytes.clone();
            let alias = parse(&bytes).ok_or(Code::InvalidAliasKey)?;
            let num = create(ledger, ctx, alias, &bytes);
            created.push(num);
            num
        }
        None => return Err(Code::InvalidAccountId),
    };
    *id = crate::state::ledger::account_id(num);
    Ok(())
}

/// The transfer with every alias replaced by its account number, creating the accounts its
/// credits need; `None` when it names no alias. The caller removes the created accounts
/// ([`undo`]) if the transfer then fails.
pub fn resolve_transfer(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    body: &proto::CryptoTransferTransactionBody,
) -> Result<Option<(proto::CryptoTransferTransactionBody, Vec<u64>)>, Code> {
    let named = |id: &Option<proto::AccountId>| {
        id.as_ref()
            .is_some_and(|id| matches!(id.account, Some(Id::Alias(_))))
    };
    let any = body
        .transfers
        .iter()
        .flat_map(|t| &t.account_amounts)
        .any(|a| named(&a.account_id))
        || body.token_transfers.iter().any(|l| {
            l.transfers.iter().any(|a| named(&a.account_id))
                || l.nft_transfers
                    .iter()
                    .any(|n| named(&n.receiver_account_id) || named(&n.sender_account_id))
        });
    if !any {
        return Ok(None);
    }
    let mut body = body.clone();
    let mut created = Vec::new();
    let result = (|| {
        for leg in body
            .transfers
            .iter_mut()
            .flat_map(|t| &mut t.account_amounts)
        {
            if let Some(id) = leg.account_id.as_mut() {
                number(ledger, ctx, id, leg.amount > 0, &mut created)?;
            }
        }
        for list in &mut body.token_transfers {
            for leg in &mut list.transfers {
                if let Some(id) = leg.account_id.as_mut() {
                    number(ledger, ctx, id, leg.amount > 0, &mut created)?;
                }
            }
            for nft in &mut list.nft_transfers {
                if let Some(id) = nft.receiver_account_id.as_mut() {
                    number(ledger, ctx, id, true, &mut created)?;
                }
                if let Some(id) = nft.sender_account_id.as_mut() {
                    number(ledger, ctx, id, false, &mut created)?;
                }
            }
        }
        Ok(())
    })();
    match result {
        Ok(()) => Ok(Some((body, created))),
        Err(code) => {
            undo(ledger, &created);
            Err(code)
        }
    }
}

/// Remove accounts a failed transfer created.
pub fn undo(ledger: &mut Ledger, created: &[u64]) {
    for num in created {
        ledger.accounts.remove(num);
    }
    if let Some(first) = created.iter().min() {
        ledger.next_entity = ledger.next_entity.min(*first);
    }
}

/// A hollow payer's completion: the ECDSA key among `signers` whose EVM address is the
/// account's, when the account is hollow.
pub fn completing_key(account: &Account, signers: &[Vec<u8>]) -> Option<proto::Key> {
    let evm = account.evm_address.as_deref()?;
    let hollow = matches!(
        &account.key.to_proto().key,
        Some(proto::key::Key::KeyList(list)) if list.keys.is_empty()
    );
    if !hollow {
        return None;
    }
    signers
        .iter()
        .filter(|raw| raw.len() == 33)
        .find(|raw| ecdsa_evm_address(raw).as_deref() == Some(evm))
        .map(|raw| proto::Key {
            key: Some(proto::key::Key::EcdsaSecp256k1(raw.clone())),
        })
}
