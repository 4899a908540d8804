//! Find one top-level field of the stage params without parsing the rest: the host writes the
//! newest field first, so a policy reading `normalisedParams` at its stage skips nothing. Only
//! the byte scanning lives here; typed decoding of the found slice is serde's.

fn skip_ws(s: &[u8], mut i: usize) -> usize {
    while i < s.len() && matches!(s[i], b' ' | b'\n' | b'\t' | b'\r') {
        i += 1;
    }
    i
}

/// The index after the string starting at `s[i] == b'"'`.
fn skip_string(s: &[u8], mut i: usize) -> Option<usize> {
    i += 1;
    while i < s.len() {
        match s[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// The index after the JSON value starting at `i`.
fn skip_value(s: &[u8], i: usize) -> Option<usize> {
    let mut i = skip_ws(s, i);
    match *s.get(i)? {
        b'"' => skip_string(s, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            while i < s.len() {
                match s[i] {
                    b'"' => {
                        i = skip_string(s, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            None
        }
        _ => {
            while i < s.len() && !matches!(s[i], b',' | b'}' | b']' | b' ' | b'\n' | b'\t' | b'\r')
            {
                i += 1;
            }
            Some(i)
        }
    }
}

/// The raw JSON of `object[key]` (top level only), if present.
pub fn field<'a>(object: &'a str, key: &str) -> Option<&'a str> {
    let s = object.as_bytes();
    let mut i = skip_ws(s, 0);
    if s.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    loop {
        i = skip_ws(s, i);
        if s.get(i)? != &b'"' {
            return None;
        }
        let end = skip_string(s, i)?;
        let name = &object[i + 1..end - 1];
        i = skip_ws(s, end);
        if s.get(i)? != &b':' {
            return None;
        }
        let start = skip_ws(s, i + 1);
        let stop = skip_value(s, start)?;
        if name == key {
            return Some(&object[start..stop]);
        }
        i = skip_ws(s, stop);
        match s.get(i)? {
            b',' => i += 1,
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::field;

    #[test]
    fn finds_top_level_fields_only() {
        let text = r#"{"normalisedParams":{"a":[1,{"b":"}"}]},"rawParams":{"context":1},"context":{"mode":"x"}}"#;
        assert_eq!(
            field(text, "normalisedParams"),
            Some(r#"{"a":[1,{"b":"}"}]}"#)
        );
        assert_eq!(field(text, "context"), Some(r#"{"mode":"x"}"#));
        assert_eq!(field(text, "toolResult"), None);
        assert_eq!(field(r#"{"k":"a\"b","n":-1.5e3}"#, "n"), Some("-1.5e3"));
        assert_eq!(field("[]", "k"), None);
    }
}
