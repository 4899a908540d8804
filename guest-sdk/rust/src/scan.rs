//! Allocation-free reading of JSON text the host wrote: one field of an object ([`field`]), the
//! items of an array ([`items`]), without parsing what is not asked for. The host writes the
//! stage's newest field first, so a policy reading `normalisedParams` at its stage skips
//! nothing. Only byte scanning lives here (the input is the host's own valid JSON); typed
//! decoding of a found slice is serde's (`serde_json::from_str`, [`crate::Amount::from_json`]).

// Every helper below is `#[inline(always)]` and its common case has no loop: a plugin runs as
// wasm, where Cranelift gives each call a prologue, an epilogue and a stack check and each loop
// head an epoch check, and the helpers do a few instructions of work (a member of the host's
// JSON is ~20 bytes). The rare cases (whitespace, long strings, nested values) are out of line.
// max-recipients' scans in the 5-policy benchmark call: 12,864 instructions as calls, 8,829 so.

#[inline(always)]
fn skip_ws(s: &[u8], i: usize) -> usize {
    // The host writes no whitespace: one comparison settles the common case, with no loop
    // (Cranelift checks the epoch deadline at every loop head).
    match s.get(i) {
        Some(&b) if b > b' ' => i,
        _ => skip_ws_loop(s, i),
    }
}

#[inline(never)]
#[cold]
fn skip_ws_loop(s: &[u8], mut i: usize) -> usize {
    while let Some(&b) = s.get(i) {
        if !matches!(b, b' ' | b'\n' | b'\t' | b'\r') {
            break;
        }
        i += 1;
    }
    i
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte of `w` equal to `b` (the classic zero-byte test; a bit may be set
/// spuriously only above a true match, so the lowest set bit is always exact).
#[inline(always)]
fn bytes_equal(w: u64, b: u8) -> u64 {
    let x = w ^ (ONES * u64::from(b));
    x.wrapping_sub(ONES) & !x & HIGHS
}

/// The index after the string starting at `s[i] == b'"'`. Most of the host's JSON is inside
/// strings (keys, account ids, decimal amounts), so it is read eight bytes at a time up to the
/// first quote or backslash: the first sixteen bytes without a loop (the host's keys, ids and
/// amounts are shorter), the rest in [`skip_string_loop`].
#[inline(always)]
fn skip_string(s: &[u8], i: usize) -> Option<usize> {
    let start = i + 1;
    if let Some(words) = s.get(start..start + 16) {
        let (first, second) = words.split_at(8);
        for (at, word) in [(start, first), (start + 8, second)] {
            let w = u64::from_le_bytes(<[u8; 8]>::try_from(word).ok()?);
            let quotes = bytes_equal(w, b'"');
            let escapes = bytes_equal(w, b'\\');
            if quotes | escapes != 0 {
                // The lowest set bit of each is exact (see `bytes_equal`).
                if escapes == 0 || quotes.trailing_zeros() < escapes.trailing_zeros() {
                    return Some(at + (quotes.trailing_zeros() / 8) as usize + 1);
                }
                return skip_string_loop(s, at);
            }
        }
        return skip_string_loop(s, start + 16);
    }
    skip_string_loop(s, start)
}

/// The index after the string whose text goes on at `i` (no quote or escape before it).
#[inline(never)]
fn skip_string_loop(s: &[u8], mut i: usize) -> Option<usize> {
    loop {
        while let Some(chunk) = s.get(i..i + 8) {
            let w = u64::from_le_bytes(<[u8; 8]>::try_from(chunk).ok()?);
            let hits = bytes_equal(w, b'"') | bytes_equal(w, b'\\');
            if hits != 0 {
                i += (hits.trailing_zeros() / 8) as usize;
                break;
            }
            i += 8;
        }
        match *s.get(i)? {
            b'"' => return Some(i + 1),
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
}

/// The index after the object or array starting at `s[i]` (kept out of line: the host's
/// transfer lists hold strings, so nested values are the rare case).
#[inline(never)]
fn skip_nested(s: &[u8], mut i: usize) -> Option<usize> {
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

/// The index after the JSON value starting at `i`.
#[inline(always)]
fn skip_value(s: &[u8], i: usize) -> Option<usize> {
    let mut i = skip_ws(s, i);
    match *s.get(i)? {
        b'"' => skip_string(s, i),
        b'{' | b'[' => skip_nested(s, i),
        _ => {
            while i < s.len() && !matches!(s[i], b',' | b'}' | b']' | b' ' | b'\n' | b'\t' | b'\r')
            {
                i += 1;
            }
            Some(i)
        }
    }
}

/// Whether two keys are the same, eight bytes at a time: `==` on slices calls the C library's
/// `memcmp`, a byte loop behind a call in wasm (keys are short, and compared at every member).
#[inline(always)]
fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut chunks = a.chunks_exact(8).zip(b.chunks_exact(8));
    let words_equal = chunks.all(|(x, y)| {
        u64::from_le_bytes(x.try_into().unwrap_or_default())
            == u64::from_le_bytes(y.try_into().unwrap_or_default())
    });
    let tail = a.len() - a.len() % 8;
    words_equal
        && a[tail..]
            .iter()
            .zip(&b[tail..])
            .fold(true, |equal, (x, y)| equal & (x == y))
}

/// The object member whose key starts at `i` (`"key": value`): its key's bytes (as written,
/// escapes and all) and where its value starts. Bytes, not `&str`: slicing a `str` checks
/// both ends for a character boundary, and a key is only compared.
#[inline(always)]
fn member(s: &[u8], i: usize) -> Option<(&[u8], usize)> {
    if s.get(i)? != &b'"' {
        return None;
    }
    let end = skip_string(s, i)?;
    let name = &s[i + 1..end - 1];
    let colon = skip_ws(s, end);
    if s.get(colon)? != &b':' {
        return None;
    }
    Some((name, skip_ws(s, colon + 1)))
}

/// The raw JSON of `object[key]` (top level only), if present; `None` too when `object` is
/// not an object. Chain calls for a path: `field(field(p, "normalisedParams")?, "hbarTransfers")`.
pub fn field<'a>(object: &'a str, key: &str) -> Option<&'a str> {
    let start = field_start(object, key)?;
    let stop = skip_value(object.as_bytes(), start)?;
    Some(&object[start..stop])
}

/// Where the value of `object[key]` (top level only) starts: the fields before it are skipped,
/// the value itself is not scanned, so a decoder can read it in one pass.
pub fn field_start(object: &str, key: &str) -> Option<usize> {
    let s = object.as_bytes();
    let mut i = skip_ws(s, 0);
    if s.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    loop {
        let (name, start) = member(s, skip_ws(s, i))?;
        if same(name, key.as_bytes()) {
            return Some(start);
        }
        i = skip_ws(s, skip_value(s, start)?);
        match s.get(i)? {
            b',' => i += 1,
            _ => return None,
        }
    }
}

/// Follow `path` through nested objects and return the text from the value found to the end of
/// `text`: the value's end is not looked for, so nothing is scanned twice. [`items`], [`field`]
/// and serde's `Deserializer::from_str` stop at the value's end; `None` when a key is missing
/// or a value on the way is not an object.
pub fn at<'a>(text: &'a str, path: &[&str]) -> Option<&'a str> {
    let mut rest = text;
    for key in path {
        rest = &rest[field_start(rest, key)?..];
    }
    Some(rest)
}

/// The raw JSON of each item of `array`, in order; `None` when `array` is not an array.
pub fn items(array: &str) -> Option<Items<'_>> {
    let s = array.as_bytes();
    let i = skip_ws(s, 0);
    (s.get(i) == Some(&b'[')).then_some(Items {
        text: array,
        at: i + 1,
        first: true,
    })
}

/// Iterator over the raw items of a JSON array (see [`items`]). Stops at the closing `]` or
/// at the first byte that is not valid JSON.
pub struct Items<'a> {
    text: &'a str,
    at: usize,
    first: bool,
}

impl<'a> Items<'a> {
    /// Where the next item starts (`None` after the last one or at invalid JSON).
    fn next_start(&mut self) -> Option<usize> {
        let s = self.text.as_bytes();
        let mut i = skip_ws(s, self.at);
        match s.get(i)? {
            b']' => return None,
            b',' if !self.first => i = skip_ws(s, i + 1),
            _ if self.first => {}
            _ => return None,
        }
        self.first = false;
        Some(i)
    }

    /// The next item's `key` field, read in the same single pass that finds the item's end
    /// (`next` and then [`field`] read an object item twice): `Ok(Some(raw))` for an object
    /// with the key, `Ok(None)` for one without it, `Err(item)` with the item's raw JSON when
    /// it is not an object; `None` after the last item or at invalid JSON.
    pub fn next_field(&mut self, key: &str) -> Option<Result<Option<&'a str>, &'a str>> {
        let text = self.text;
        let s = text.as_bytes();
        let mut i = self.next_start()?;
        if s[i] != b'{' {
            let stop = skip_value(s, i)?;
            self.at = stop;
            return Some(Err(&text[i..stop]));
        }
        let mut found = None;
        i = skip_ws(s, i + 1);
        if s.get(i) == Some(&b'}') {
            self.at = i + 1;
            return Some(Ok(None));
        }
        loop {
            let (name, start) = member(s, i)?;
            let stop = skip_value(s, start)?;
            if found.is_none() && same(name, key.as_bytes()) {
                found = Some(&text[start..stop]);
            }
            i = skip_ws(s, stop);
            match s.get(i)? {
                b',' => i = skip_ws(s, i + 1),
                b'}' => {
                    self.at = i + 1;
                    return Some(Ok(found));
                }
                _ => return None,
            }
        }
    }
}

impl<'a> Iterator for Items<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let i = self.next_start()?;
        let stop = skip_value(self.text.as_bytes(), i)?;
        self.at = stop;
        Some(&self.text[i..stop])
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn keys_compare_equal_only_when_every_byte_is() {
        let keys = [
            "",
            "a",
            "amount",
            "accountId",
            "normalisedParams",
            "hbarTransfers",
            "é",
        ];
        for a in keys {
            for b in keys {
                assert_eq!(
                    super::same(a.as_bytes(), b.as_bytes()),
                    a == b,
                    "{a:?} {b:?}"
                );
            }
        }
        // A difference at every position of a word and of the tail.
        let base = b"abcdefghijklmnopq".to_vec();
        for at in 0..base.len() {
            let mut other = base.clone();
            other[at] ^= 1;
            assert!(!super::same(&base, &other), "differs at {at}");
        }
    }

    use super::{at, field, field_start, items};

    #[test]
    fn iterates_array_items() {
        let text = r#" [ {"amount":"5","x":[1,2]} , "a,]" ,3, null,[] ] "#;
        let all: Vec<&str> = items(text).unwrap().collect();
        assert_eq!(
            all,
            [r#"{"amount":"5","x":[1,2]}"#, r#""a,]""#, "3", "null", "[]"]
        );
        assert_eq!(items("[]").unwrap().count(), 0);
        assert!(items(r#"{"a":1}"#).is_none());
        assert_eq!(field(all[0], "amount"), Some(r#""5""#));
        let nested = r#"{"n":{"skip":{"x":"]"},"list":[1,2]},"after":[9]}"#;
        let list = at(nested, &["n", "list"]).unwrap();
        assert_eq!(items(list).unwrap().collect::<Vec<_>>(), ["1", "2"]);
        assert!(at(nested, &["n", "missing"]).is_none());
        assert!(at(nested, &["after", "x"]).is_none());
    }

    /// `next_field` reads what `next` and `field` read, item by item, in one pass.
    #[test]
    fn reads_a_field_of_each_item_in_one_pass() {
        let text = r#"[{"accountId":"0.0.1","amount":"5"}, {"amount":-1,"x":{"amount":9}} ,{},{"a":"}"},3,"s",{"amount":null}]"#;
        let mut fast = items(text).unwrap();
        let mut got = Vec::new();
        while let Some(item) = fast.next_field("amount") {
            got.push(item);
        }
        let slow: Vec<_> = items(text)
            .unwrap()
            .map(|item| {
                if item.starts_with('{') {
                    Ok(field(item, "amount"))
                } else {
                    Err(item)
                }
            })
            .collect();
        assert_eq!(got, slow);
        assert_eq!(got[0], Ok(Some(r#""5""#)));
        assert_eq!(got[1], Ok(Some("-1")));
        assert_eq!(got[2], Ok(None));
        assert_eq!(got[4], Err("3"));
        // Invalid JSON ends the iteration, as `next` does.
        assert_eq!(items(r#"[{"a" 1}]"#).unwrap().next_field("a"), None);
        assert_eq!(items(r#"[{"a":1]"#).unwrap().next_field("a"), None);
    }

    /// The word-at-a-time string skip ends where a byte-by-byte reading does, for quotes and
    /// escapes at every offset of a word, multi-byte UTF-8 and unterminated strings.
    #[test]
    fn skips_strings_like_a_byte_reader() {
        fn bytewise(s: &[u8], mut i: usize) -> Option<usize> {
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
        let pieces = [
            "a",
            "\\\"",
            "\\\\",
            "é",
            "0.0.2001",
            "\\u0032",
            "\"",
            "xxxxxxxxxxxxxxxx",
        ];
        let mut texts = Vec::new();
        for a in pieces {
            for b in pieces {
                for pad in 0..10 {
                    texts.push(format!("\"{}{a}{b}\",1", "p".repeat(pad)));
                    texts.push(format!("\"{}{a}{b}", "q".repeat(pad)));
                }
            }
        }
        for text in &texts {
            let s = text.as_bytes();
            assert_eq!(super::skip_string(s, 0), bytewise(s, 0), "{text}");
        }
    }

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
        assert_eq!(field_start(text, "rawParams"), Some(52));
        assert_eq!(&text[52..53], "{");
    }
}
