//! How the JS SDK cuts a topic message into chunks: 1,024 bytes each, at most 20. Shared by
//! the submit tool (its refusals) and the return-bytes layout (`strategy::wire`).

/// The JS SDK's chunk size for topic messages.
pub const CHUNK_SIZE: usize = 1024;
/// The JS SDK's default limit on chunks per message.
pub const MAX_CHUNKS: usize = 20;

/// The number of chunks the JS SDK cuts a message of `len` bytes into (0 for an empty one).
pub fn chunk_count(len: usize) -> usize {
    len.div_ceil(CHUNK_SIZE)
}

/// The JS SDK's refusal of a message that needs more than [`MAX_CHUNKS`] chunks.
pub fn too_many_chunks(len: usize) -> Option<String> {
    (chunk_count(len) > MAX_CHUNKS)
        .then(|| format!("Message with size {len} too long for {MAX_CHUNKS} chunks"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_counts_follow_the_js_sdk() {
        assert_eq!(chunk_count(0), 0);
        assert_eq!(chunk_count(1), 1);
        assert_eq!(chunk_count(1024), 1);
        assert_eq!(chunk_count(1025), 2);
        assert_eq!(chunk_count(20 * 1024), 20);
        assert_eq!(too_many_chunks(20 * 1024), None);
        assert_eq!(
            too_many_chunks(20 * 1024 + 1).unwrap(),
            "Message with size 20481 too long for 20 chunks"
        );
    }
}
