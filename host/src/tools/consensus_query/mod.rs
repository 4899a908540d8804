//! The kit's `core-consensus-query-plugin` tools (mirror node queries).

mod get_topic_info;
mod get_topic_messages;

pub use get_topic_info::GetTopicInfo;
pub use get_topic_messages::GetTopicMessages;

pub(super) fn register(add: &mut impl FnMut(Box<dyn super::DynTool>)) {
    add(super::erase(GetTopicMessages));
    add(super::erase(GetTopicInfo));
}
