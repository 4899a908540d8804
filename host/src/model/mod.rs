//! The vocabulary every layer speaks, importing nothing of the crate above it but
//! [`crate::text`]: the agent context a call runs in, the hookable stages, what a call does
//! (its facts), every sandbox limit and its default, and the kind of a tool.

pub mod context;
pub mod facts;
pub mod limits;
pub mod stage;
pub mod tool_type;

pub use tool_type::ToolType;
