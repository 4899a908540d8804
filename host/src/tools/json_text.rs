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
    if text.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20) {
        // Rare (a memo with quotes or a newline): serde_json's own escaping.
        out.push_str(&serde_json::to_string(text).unwrap_or_default());
    } else {
        out.push('"');
        out.push_str(text);
        out.push('"');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
