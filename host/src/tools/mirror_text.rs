//! How the kit's query messages render mirror-node values: keys and locale-formatted numbers.
//! Only text for humans lives here; the `raw` results keep the mirror's JSON as is.

use serde_json::Value;

/// The kit's `formatKey`: a typed key's hex, "Present" for other keys, "Not Set" for none.
pub fn key_text(key: &Value) -> String {
    match key {
        Value::Null => "Not Set".into(),
        k if k.get("_type").is_some() => k["key"]
            .as_str()
            .filter(|s| !s.is_empty())
            .unwrap_or("Present")
            .into(),
        _ => "Present".into(),
    }
}

/// `Number.prototype.toLocaleString()` in en-US: thousands separators and at most three
/// fraction digits, rounded half away from zero on the shortest decimal form (as ICU does:
/// 1.2345 → "1.235").
pub fn locale_number(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "∞" } else { "-∞" }.into();
    }
    // Rust's `Display` for f64 is the shortest round-trip decimal, never in exponent form.
    let text = format!("{}", x.abs());
    let (whole, frac) = text.split_once('.').unwrap_or((&text, ""));
    let mut digits: Vec<u8> = whole.bytes().chain(frac.bytes().take(3)).collect();
    let mut whole_len = whole.len();
    if frac.as_bytes().get(3).is_some_and(|d| *d >= b'5') {
        // Round up: carry from the last kept digit.
        let mut i = digits.len();
        loop {
            if i == 0 {
                digits.insert(0, b'1');
                whole_len += 1;
                break;
            }
            i -= 1;
            if digits[i] == b'9' {
                digits[i] = b'0';
            } else {
                digits[i] += 1;
                break;
            }
        }
    }
    let (whole, frac) = digits.split_at(whole_len);
    let mut out = String::with_capacity(digits.len() + whole.len() / 3 + 2);
    for (i, d) in whole.iter().enumerate() {
        if i > 0 && (whole.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(char::from(*d));
    }
    let frac = std::str::from_utf8(frac)
        .unwrap_or("")
        .trim_end_matches('0');
    if !frac.is_empty() {
        out.push('.');
        out.push_str(frac);
    }
    if x < 0.0 && out != "0" {
        out.insert(0, '-');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_render_like_en_us_to_locale_string() {
        assert_eq!(locale_number(1_000_000.0), "1,000,000");
        assert_eq!(locale_number(2.5), "2.5");
        assert_eq!(locale_number(1.23456), "1.235");
        assert_eq!(locale_number(-1234.5), "-1,234.5");
        assert_eq!(locale_number(0.0), "0");
        assert_eq!(locale_number(999.9999), "1,000");
        assert_eq!(locale_number(1.2345), "1.235");
        assert_eq!(locale_number(0.0005), "0.001");
        assert_eq!(locale_number(1e21), "1,000,000,000,000,000,000,000");
    }

    #[test]
    fn keys_render_like_the_kit() {
        assert_eq!(key_text(&Value::Null), "Not Set");
        assert_eq!(key_text(&json!({"_type": "ED25519", "key": "ab"})), "ab");
        assert_eq!(key_text(&json!({"other": 1})), "Present");
    }
}
