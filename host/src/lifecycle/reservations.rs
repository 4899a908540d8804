//! A call's budget reservations and its outcome: settled (committed when the transaction
//! applied or may have, released when it certainly did not), bound to the transaction before
//! it leaves the host, committed before return-bytes bytes are handed out. What must not
//! live here: the stages.

use super::*;
use crate::model::stage::Stage;
use chain::Plan;
pub use env::CallEnv;
use envelope::Abort;

impl Session {
    /// Commit the call's budget reservations when its transaction applied or may have (the
    /// spend counts), release them when it certainly did not. A store that cannot settle
    /// leaves them reserved, which counts as spent until the window passes (never fails open).
    pub(super) fn settle_reservations(&mut self) {
        let ids = self.reservations.take();
        if ids.is_empty() {
            return;
        }
        let commit = self.outcome != TxOutcome::NotApplied;
        if let Err(e) = self.env.state_backend().settle(&ids, commit) {
            tracing::error!(
                context = &*self.scope.scope,
                "budget reservations not settled (they stay counted as spent): {e}"
            );
        }
    }

    /// Before the call's transaction leaves the host: fix its id and record it with the
    /// call's budget reservations, so that if this process stops before the call ends a
    /// reconciler can settle them by what the network knows of it (`crate::reconcile`): an
    /// autonomous or return-bytes call names its transaction; a custom strategy's is opaque
    /// (its reservations are never released). A store that cannot record it refuses the
    /// call, and nothing is sent. Return-bytes bytes leave with the call's answer, after its
    /// reservations are settled, unless a post-tool-execution plugin sees them first: only
    /// then is there anything to record (one write saved per budgeted call otherwise), and
    /// the call's spend is committed before its bytes are put in the answer
    /// ([`Self::commit_before_bytes_leave`]). Returns whether that commit is still owed.
    pub(super) fn bind_reservations(
        &self,
        env: &dyn CallEnv,
        plan: &Plan,
        built: &mut crate::tools::BuiltTransaction,
        strategy_env: &crate::strategy::StrategyEnv<'_>,
    ) -> Result<bool, Abort> {
        use crate::model::context::AgentMode;
        use crate::state_store::Binding;
        if self.context.mode == AgentMode::ReturnBytes
            && !plan.has_steps(Stage::PostSecondaryAction)
        {
            return Ok(true);
        }
        let ids = self.reservations.ids();
        if ids.is_empty() {
            return Ok(false);
        }
        let payer = match self.context.mode {
            AgentMode::Autonomous => strategy_env.client.get_operator_account_id(),
            AgentMode::ReturnBytes => self.context.account_id,
            _ => None,
        };
        let binding = match payer {
            Some(payer) => {
                let id = match built.tx.get_transaction_id() {
                    Some(id) => id,
                    None => {
                        let id = crate::tools::transaction::unique_transaction_id(payer);
                        built.tx.transaction_id(id);
                        id
                    }
                };
                let valid = built
                    .tx
                    .get_transaction_valid_duration()
                    .unwrap_or(time::Duration::seconds(120));
                let until = (id.valid_start + valid).unix_timestamp_nanos() / 1_000_000;
                Binding::Transaction {
                    id: crate::mirror::mirror_transaction_id(&id),
                    until_ms: u64::try_from(until).unwrap_or(0),
                }
            }
            None => Binding::Opaque,
        };
        env.state_backend()
            .bind(&ids, &binding)
            .map(|()| false)
            .map_err(|e| {
                Abort::Error(format!(
                "the call's budget reservations could not be recorded with its transaction, so nothing was sent: {e}"
            ))
            })
    }

    /// Commit an unbound return-bytes call's reservations before its bytes go into the
    /// answer: once handed out they may be submitted at any time, and a reservation the
    /// store never recorded as spent would be released after a restart (an unbound orphan
    /// sent nothing, `crate::reconcile`). A store that cannot record the commit refuses the
    /// call: the bytes are not returned (their reservations stay counted here, and an orphan
    /// for the reconciler elsewhere, which releases them: nothing was handed out).
    pub(super) fn commit_before_bytes_leave(&mut self) -> Result<(), Abort> {
        let ids = self.reservations.take();
        if ids.is_empty() {
            return Ok(());
        }
        match self.env.state_backend().settle(&ids, true) {
            Ok(()) => Ok(()),
            Err(e) => {
                self.outcome = TxOutcome::NotApplied;
                Err(Abort::Error(format!(
                    "the call's budget spend could not be recorded, so its transaction bytes are not returned: {e}"
                )))
            }
        }
    }
}
