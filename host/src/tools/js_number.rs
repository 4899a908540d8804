//! JavaScript's decimal view of a double, in one place: the shortest digits that read back as
//! the number, with JavaScript's choice on an exact tie (the even digit), and
//! `Number.prototype.toString` written from them. The kit reads amounts through these digits
//! (`new BigNumber(n)`, `new Hbar(n)`) and writes numbers into its messages with `toString`, so
//! every place hak does either asks here.
//!
//! The digits come from `ryu` (what serde_json writes numbers with), which breaks ties as
//! JavaScript does; `core::fmt`'s shortest form does not (`(-1006567402717677.25)` is
//! `…677.2` in JavaScript and in ryu, `…677.3` in `core::fmt`).
//! [`integral_floats_as_integers`] writes a JSON value's numbers as `JSON.stringify` would.
//! Nothing here knows about units, tools or messages.

/// A finite double as `±digits × 10^exponent`, exactly: its shortest round-trip digits
/// (no leading or trailing zeros; none for zero).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Digits {
    pub negative: bool,
    digits: [u8; 17],
    len: usize,
    /// The power of ten of the last digit.
    pub exponent: i64,
}

impl Digits {
    /// `None` for NaN and the infinities.
    pub fn of(x: f64) -> Option<Digits> {
        if !x.is_finite() {
            return None;
        }
        let mut buffer = ryu::Buffer::new();
        // ryu writes "1.0", "0.0005", "1.2345e20", "5e-7".
        let text = buffer.format_finite(x.abs());
        let (mantissa, exp) = text.split_once('e').unwrap_or((text, "0"));
        let exp: i64 = exp.parse().ok()?;
        let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let mut out = Digits {
            negative: false,
            digits: [0; 17],
            len: 0,
            exponent: exp - frac_part.len() as i64,
        };
        for b in int_part.bytes().chain(frac_part.bytes()) {
            if out.len == 0 && b == b'0' {
                continue;
            }
            // A double has at most 17 significant digits.
            *out.digits.get_mut(out.len)? = b - b'0';
            out.len += 1;
        }
        while out.len > 0 && out.digits[out.len - 1] == 0 {
            out.len -= 1;
            out.exponent += 1;
        }
        out.negative = x < 0.0 && out.len > 0;
        Some(out)
    }

    /// The significant digits, each 0–9 (empty for zero).
    pub fn digits(&self) -> &[u8] {
        &self.digits[..self.len]
    }
}

/// JavaScript's `String(x)`: `5`, `1.5`, `123456789012345680000`, `1e+21`, `5e-9`, `NaN`,
/// `-Infinity`; `-0` is `0`.
pub fn to_string(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    let Some(d) = Digits::of(x) else {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.into();
    };
    let s = d.digits();
    if s.is_empty() {
        return "0".into();
    }
    let k = s.len() as i64;
    // The decimal point sits after the first `n` digits (ECMA-262 Number::toString).
    let n = d.exponent + k;
    let mut out = String::with_capacity(24);
    if d.negative {
        out.push('-');
    }
    let push = |out: &mut String, digits: &[u8]| {
        out.extend(digits.iter().map(|d| char::from(b'0' + d)));
    };
    if k <= n && n <= 21 {
        push(&mut out, s);
        out.extend(std::iter::repeat_n('0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        push(&mut out, &s[..n as usize]);
        out.push('.');
        push(&mut out, &s[n as usize..]);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-n) as usize));
        push(&mut out, s);
    } else {
        push(&mut out, &s[..1]);
        if k > 1 {
            out.push('.');
            push(&mut out, &s[1..]);
        }
        let e = n - 1;
        out.push('e');
        out.push(if e < 0 { '-' } else { '+' });
        out.push_str(itoa::Buffer::new().format(e.unsigned_abs()));
    }
    out
}

/// Whether `n` is written as a float (`1.0`, `1e3`) but is an integer to JavaScript: the
/// numbers [`integral_floats_as_integers`] rewrites.
pub fn is_integral_float(n: &serde_json::Number) -> bool {
    n.as_f64().is_some_and(|x| n.is_f64() && x.fract() == 0.0)
}

/// `value` as JavaScript's `JSON.stringify` writes it after `JSON.parse`, when that differs
/// from serde_json's writing in a way a typed reader notices: an integer written as a float
/// (`1.0`, `1e3`) is an integer to JavaScript (and to the kit's hooks, which see the parsed
/// object) but not to a Go `int64` or a Rust `u64`. `None` when the value holds no such
/// number (the common case: the text as sent stays as it is).
pub fn integral_floats_as_integers(value: &serde_json::Value) -> Option<String> {
    fn has_integral_float(v: &serde_json::Value) -> bool {
        match v {
            serde_json::Value::Number(n) => is_integral_float(n),
            serde_json::Value::Array(items) => items.iter().any(has_integral_float),
            serde_json::Value::Object(map) => map.values().any(has_integral_float),
            _ => false,
        }
    }
    if !has_integral_float(value) {
        return None;
    }
    struct JsNumbers;
    impl serde_json::ser::Formatter for JsNumbers {
        fn write_f64<W: ?Sized + std::io::Write>(
            &mut self,
            w: &mut W,
            x: f64,
        ) -> std::io::Result<()> {
            w.write_all(to_string(x).as_bytes())
        }
    }
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, JsNumbers);
    serde::Serialize::serialize(value, &mut ser).ok()?;
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integral_floats_read_as_javascript_reads_them() {
        let sent: serde_json::Value =
            serde_json::from_str(r#"{"serialNumbers":[1.0,2,1e3],"amount":0.5,"big":1e21}"#)
                .unwrap();
        assert_eq!(
            integral_floats_as_integers(&sent).as_deref(),
            Some(r#"{"serialNumbers":[1,2,1000],"amount":0.5,"big":1e+21}"#)
        );
        let plain: serde_json::Value =
            serde_json::from_str(r#"{"amount":0.5,"n":[1,-2]}"#).unwrap();
        assert_eq!(integral_floats_as_integers(&plain), None);
    }

    /// Each value with what node's `String(x)` writes for it.
    #[test]
    fn numbers_are_written_as_javascript_writes_them() {
        let cases: [(f64, &str); 26] = [
            (1.0, "1"),
            (0.5, "0.5"),
            (5e-9, "5e-9"),
            (1e21, "1e+21"),
            (123456789012345680000.0, "123456789012345680000"),
            (-(1_006_567_402_717_677.0 + 0.25), "-1006567402717677.2"),
            (1.5e-7, "1.5e-7"),
            (0.000001, "0.000001"),
            (1e-7, "1e-7"),
            (123e-20, "1.23e-18"),
            (f64::MAX, "1.7976931348623157e+308"),
            (5e-324, "5e-324"),
            (0.1 + 0.2, "0.30000000000000004"),
            (100.0, "100"),
            (1e300, "1e+300"),
            (-2.5e-10, "-2.5e-10"),
            (12345.678, "12345.678"),
            (9007199254740993.0, "9007199254740992"),
            (4.35, "4.35"),
            (1e20, "100000000000000000000"),
            (1.2345e20, "123450000000000000000"),
            (-0.0, "0"),
            (0.0, "0"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
        ];
        for (x, js) in cases {
            assert_eq!(to_string(x), js, "{x:e}");
        }
    }

    #[test]
    fn digits_hold_the_value_exactly() {
        let d = Digits::of(-1500.0).unwrap();
        assert_eq!((d.negative, d.digits(), d.exponent), (true, &[1, 5][..], 2));
        let d = Digits::of(0.0005).unwrap();
        assert_eq!((d.digits(), d.exponent), (&[5][..], -4));
        assert!(Digits::of(-0.0).unwrap().digits().is_empty());
        assert!(!Digits::of(-0.0).unwrap().negative);
        assert_eq!(Digits::of(f64::NAN), None);
        // Every digit string reads back as the number.
        for x in [0.1, 1.0 / 3.0, 6.02214076e23, 1e-300, 123456.789e-3] {
            let d = Digits::of(x).unwrap();
            let text: String = d.digits().iter().map(|d| char::from(b'0' + d)).collect();
            assert_eq!(format!("{text}e{}", d.exponent).parse::<f64>().unwrap(), x);
        }
    }
}
