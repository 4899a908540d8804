//! JSON written by hand for the normalised params of the hot tools, byte for byte what
//! `serde_json::to_string` writes for the same value (each writer has a differential test
//! against it). Why by hand: serde_json checks every byte of every key and value for
//! escapes, one string at a time through its formatter; a normalised transfer's keys are
//! constants and its ids and amounts are digits and dots, so only free text (a memo) needs
//! the check. What lives here: the string rule and pieces shared by such writers. What must
//! not: a tool's shape (each tool writes its own, next to its types).

/// Append `text` as a JSON string, escaped exactly as serde_json escapes it (`"`, `\` and
/// the control characters below U+0020; nothing else).
pub fn push_string(out: &mut String, text: &str) {
    if unescaped_len(text.as_bytes()) < text.len() {
        // Rare (a memo with quotes or a newline): serde_json's own escaping.
        out.push_str(&serde_json::to_string(text).unwrap_or_default());
    } else {
        out.push('"');
        out.push_str(text);
        out.push('"');
    }
}

/// How many bytes at the start of `bytes` a JSON string holds as they are: up to the first
/// `"`, `\` or control character (below U+0020), eight bytes at a time.
pub fn unescaped_len(bytes: &[u8]) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    // The high bit of each byte equal to `b`, or below 0x20: the classic zero-byte tests (a
    // bit may be set spuriously only above a true one, so the lowest set bit is exact).
    let equal = |w: u64, b: u8| {
        let x = w ^ (ONES * u64::from(b));
        x.wrapping_sub(ONES) & !x & HIGHS
    };
    let mut at = 0;
    while let Some(chunk) = bytes.get(at..at + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let w = u64::from_le_bytes(word);
        let stops = equal(w, b'"') | equal(w, b'\\') | (w.wrapping_sub(ONES * 0x20) & !w & HIGHS);
        if stops != 0 {
            return at + (stops.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    at + bytes[at..]
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
        .unwrap_or(bytes.len() - at)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The word-at-a-time count ends where a byte-by-byte one does, for every byte value at
    /// every offset of a word and its tail.
    #[test]
    fn unescaped_prefixes_end_at_the_first_byte_to_escape() {
        for len in 0..20 {
            for at in 0..len {
                for b in 0u8..=255 {
                    let mut bytes = vec![b'a'; len];
                    bytes[at] = b;
                    let expected = bytes
                        .iter()
                        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
                        .unwrap_or(len);
                    assert_eq!(unescaped_len(&bytes), expected, "{len} {at} {b}");
                }
            }
        }
    }

    #[test]
    fn strings_are_written_as_serde_json_writes_them() {
        let mut texts: Vec<String> = [
            "",
            "bench",
            "é ü ✓ 🚀",
            "a\"b",
            "back\\slash",
            "line\nbreak",
            "\u{7f}del",
            "/slash",
            "\u{2028}",
            "tab\there",
            "\u{1}",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        texts.extend((0u8..0x80).map(|b| format!("x{}y", b as char)));
        for text in texts {
            let mut out = String::new();
            push_string(&mut out, &text);
            assert_eq!(out, serde_json::to_string(&text).unwrap(), "{text:?}");
        }
    }
}
