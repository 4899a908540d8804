//! What kind of tool a call is: the kit's `TOOL_TYPE`.

use serde::Serialize;

/// The kit's `TOOL_TYPE`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ToolType {
    Query,
    Transaction,
    Other,
}
