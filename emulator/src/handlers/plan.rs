//! A transfer's plan: every change a transfer (or an airdrop, or a topic's custom fees) will
//! make, gathered while its checks run, applied only if all of them pass (`crypto`), and the
//! automatic-association slots it may use.

use crate::state::ledger::Ledger;
use hedera_proto::services::ResponseCodeEnum as Code;

/// The changes a transfer makes, gathered while checking, applied only if all checks pass.
#[derive(Default)]
pub struct Plan {
    pub(super) hbar: Vec<(u64, i64)>,
    /// (token, account, amount)
    pub(super) fungible: Vec<(u64, u64, i64)>,
    /// (token, sender, receiver, serial)
    pub(super) nfts: Vec<(u64, u64, u64, i64)>,
    /// (account, token) associations made by this transfer.
    pub(super) automatic: Vec<(u64, u64)>,
    /// (owner, spender, tinybars) of HBAR allowances used.
    pub(super) hbar_allowance: Vec<(u64, u64, i64)>,
    /// (owner, token, spender, units) of token allowances used.
    pub(super) token_allowance: Vec<(u64, u64, u64, i64)>,
}

impl Plan {
    /// Check that `account` can hold `token` (associating it when it has a free slot, or
    /// always under `force`), is not frozen and has KYC.
    pub(super) fn holder(
        &mut self,
        ledger: &Ledger,
        account: u64,
        token: u64,
        receiving: bool,
        force: bool,
    ) -> Result<(), Code> {
        let t = &ledger.tokens[&token];
        match ledger.rel(account, token) {
            Some(rel) => {
                if rel.frozen {
                    return Err(Code::AccountFrozenForToken);
                }
                if !rel.kyc_granted {
                    return Err(Code::AccountKycNotGrantedForToken);
                }
                Ok(())
            }
            None if self.automatic.contains(&(account, token)) => Ok(()),
            None if receiving => {
                let blocked_by_token =
                    (t.freeze_default && t.freeze_key.is_some()) || t.kyc_key.is_some();
                if blocked_by_token {
                    return Err(Code::TokenNotAssociatedToAccount);
                }
                if !(force || has_free_slot(ledger, account, &self.automatic)) {
                    // Limited slots all used is its own status; no slots at all is not.
                    let max = ledger.accounts[&account].max_automatic_token_associations;
                    return Err(if max > 0 {
                        Code::NoRemainingAutomaticAssociations
                    } else {
                        Code::TokenNotAssociatedToAccount
                    });
                }
                self.automatic.push((account, token));
                Ok(())
            }
            None => Err(Code::TokenNotAssociatedToAccount),
        }
    }
}

/// Whether `account` may be associated automatically once more.
pub fn has_free_slot(ledger: &Ledger, account: u64, planned: &[(u64, u64)]) -> bool {
    let max = ledger.accounts[&account].max_automatic_token_associations;
    let used = ledger.automatic_associations(account)
        + planned.iter().filter(|(a, _)| *a == account).count();
    max == -1 || (max > 0 && used < max as usize)
}
