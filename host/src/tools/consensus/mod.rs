//! The kit's `core-consensus-plugin` tools.

pub mod chunking;
mod create_topic;
mod delete_topic;
mod submit_topic_message;
mod update_topic;

pub use create_topic::CreateTopic;
pub use delete_topic::DeleteTopic;
pub use submit_topic_message::SubmitTopicMessage;
pub use update_topic::UpdateTopic;

pub(super) fn register(add: &mut impl FnMut(Box<dyn super::DynTool>)) {
    add(super::erase(CreateTopic));
    add(super::erase(SubmitTopicMessage));
    add(super::erase(DeleteTopic));
    add(super::erase(UpdateTopic));
}
