//! Schema pieces many tools share (the kit's `optionalScheduledTransactionParams`).

use serde_json::{json, Value};

/// The optional `schedulingParams` object of schedulable transaction tools.
pub fn scheduling_params() -> Value {
    json!({
        "type": "object",
        "properties": {
            "isScheduled": {"type": "boolean", "default": false, "description": "If true, the transaction will be created as a scheduled transaction."},
            "adminKey": {"type": ["boolean", "string"], "default": false, "description": "Admin key that can delete or modify the scheduled transaction before execution; true means the operator/user key."},
            "payerAccountId": {"type": "string", "description": "Account that will pay the transaction fee when the scheduled transaction executes."},
            "expirationTime": {"type": "string", "description": "Time when the scheduled transaction will expire, ISO 8601."},
            "waitForExpiry": {"type": "boolean", "default": false, "description": "If true, the scheduled transaction executes at its expiration time."}
        },
        "additionalProperties": false,
        "description": "Optional scheduling parameters."
    })
}

/// Move `transactionMemo` after the fields added since (the kit's schemas declare it last, and
/// zod reports fields in declaration order).
pub fn memo_last(properties: &mut Value) {
    if let Some(map) = properties.as_object_mut() {
        if let Some(memo) = map.shift_remove("transactionMemo") {
            map.insert("transactionMemo".into(), memo);
        }
    }
}
