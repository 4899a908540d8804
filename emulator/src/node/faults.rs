//! Scripted misbehaviour for retry tests: precheck codes, lost answers, unavailable RPCs,
//! unknown receipts and a lagging mirror, each consumed as calls arrive.

use hedera_proto::services::ResponseCodeEnum as Code;
use std::time::Duration;

/// Scripted misbehaviour, consumed as calls arrive.
#[derive(Debug, Default)]
pub struct Faults {
    /// Answer the next `n` submissions with this precheck code (BUSY, PLATFORM_NOT_ACTIVE, …).
    pub precheck: Option<(Code, u32)>,
    /// Fail the next `n` transaction RPCs with gRPC UNAVAILABLE.
    pub unavailable: u32,
    /// Answer the next `n` receipt polls with status UNKNOWN.
    pub receipt_unknown: u32,
    /// Handle the next `n` submissions, then answer UNAVAILABLE as if the answer was lost.
    pub lost_response: u32,
    /// Mirror answers 404 for entities younger than this.
    pub mirror_lag: Duration,
}

impl Faults {
    pub(crate) fn take_precheck(&mut self) -> Option<Code> {
        let (code, left) = self.precheck.as_mut()?;
        let code = *code;
        *left -= 1;
        if *left == 0 {
            self.precheck = None;
        }
        Some(code)
    }

    pub(crate) fn take_unavailable(&mut self) -> bool {
        let hit = self.unavailable > 0;
        self.unavailable = self.unavailable.saturating_sub(1);
        hit
    }

    pub(crate) fn take_lost_response(&mut self) -> bool {
        let hit = self.lost_response > 0;
        self.lost_response = self.lost_response.saturating_sub(1);
        hit
    }

    pub(crate) fn take_receipt_unknown(&mut self) -> bool {
        let hit = self.receipt_unknown > 0;
        self.receipt_unknown = self.receipt_unknown.saturating_sub(1);
        hit
    }
}
