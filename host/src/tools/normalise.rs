//! Normalisers shared by every tool: account ids, HBAR amounts, default accounts, and the
//! serde helpers that write ids as "0.0.x" and 64-bit amounts as decimal strings.

use super::{ToolContext, ToolError};
use hedera::AccountId;

/// An ISO 8601 time as the kit's `new Date(text)` reads it: a full RFC 3339 date-time, or a
/// date alone (midnight UTC). hak refuses what `Date` misreads or cannot read (other forms,
/// days that roll over into the next month, local times: docs/CONFORMANCE.md).
pub fn iso_time(field: &str, text: &str) -> Result<time::OffsetDateTime, ToolError> {
    use time::format_description::well_known::Rfc3339;
    let date_only = || {
        let mut parts = text.split('-');
        let (y, m, d) = (parts.next()?, parts.next()?, parts.next()?);
        let digits = |p: &str, n: usize| p.len() == n && p.bytes().all(|b| b.is_ascii_digit());
        if parts.next().is_some() || !digits(y, 4) || !digits(m, 2) || !digits(d, 2) {
            return None;
        }
        let month = time::Month::try_from(m.parse::<u8>().ok()?).ok()?;
        let date = time::Date::from_calendar_date(y.parse().ok()?, month, d.parse().ok()?).ok()?;
        Some(date.midnight().assume_utc())
    };
    time::OffsetDateTime::parse(text, &Rfc3339)
        .ok()
        .or_else(date_only)
        .ok_or_else(|| ToolError::invalid_field(field, format!("Invalid ISO 8601 date: {text}")))
}

/// zod's `z.string().datetime()` (3.25, no options): `YYYY-MM-DDTHH:MM[:SS[.fraction]]Z`, a
/// real calendar date, UTC only (no offsets).
pub fn zod_datetime(text: &str) -> Option<time::OffsetDateTime> {
    let digits = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    let (date, clock) = text.strip_suffix('Z')?.split_once('T')?;
    let mut d = date.split('-');
    let (y, m, day) = (d.next()?, d.next()?, d.next()?);
    if d.next().is_some() || y.len() != 4 || m.len() != 2 || day.len() != 2 {
        return None;
    }
    if !(digits(y) && digits(m) && digits(day)) {
        return None;
    }
    let date = time::Date::from_calendar_date(
        y.parse().ok()?,
        time::Month::try_from(m.parse::<u8>().ok()?).ok()?,
        day.parse().ok()?,
    )
    .ok()?;
    let (hm, seconds) = match clock.len() {
        5 => (clock, None),
        _ => (clock.get(..5)?, Some(clock.get(5..)?.strip_prefix(':')?)),
    };
    let (h, min) = hm.split_once(':')?;
    if h.len() != 2 || min.len() != 2 || !digits(h) || !digits(min) {
        return None;
    }
    let (sec, fraction) = match seconds {
        None => ("00", None),
        Some(s) => match s.split_once('.') {
            Some((sec, fraction)) => (sec, Some(fraction)),
            None => (s, None),
        },
    };
    if sec.len() != 2 || !digits(sec) || fraction.is_some_and(|f| !digits(f)) {
        return None;
    }
    let nanos = fraction.map_or(Some(0), |f| {
        let padded: String = f.chars().chain(std::iter::repeat('0')).take(9).collect();
        padded.parse::<u32>().ok()
    })?;
    let clock =
        time::Time::from_hms_nano(h.parse().ok()?, min.parse().ok()?, sec.parse().ok()?, nanos)
            .ok()?;
    Some(date.with_time(clock).assume_utc())
}

/// The JS SDK's entity id grammar (`EntityIdHelper.fromString`): `num`, or
/// `shard.realm.num`, with an optional `-abcde` checksum (read, not checked, as the kit
/// does). Refused with the SDK's words, `failed to parse entity id: <text>`; hak also refuses
/// what the SDK misreads (a hexadecimal or beyond-int64 number, which `Long.fromString`
/// turns into another id: docs/CONFORMANCE.md).
pub fn entity_id(text: &str) -> Result<(u64, u64, u64), ToolError> {
    let bad = || ToolError::message(format!("failed to parse entity id: {text}"));
    let bytes = text.as_bytes();
    // A checksum is the last `-` and five lowercase letters after it.
    let body = match bytes.len().checked_sub(6) {
        Some(at) if bytes[at] == b'-' && bytes[at + 1..].iter().all(u8::is_ascii_lowercase) => {
            &bytes[..at]
        }
        _ => bytes,
    };
    // One pass (this runs for every id of every call): `num` or `shard.realm.num`, each part
    // one or more ASCII digits whose value fits an int64.
    let mut parts = [0u64; 2];
    let mut dots = 0;
    let mut value: u64 = 0;
    let mut digits = 0;
    for &b in body {
        match b {
            b'0'..=b'9' => {
                value = value
                    .checked_mul(10)
                    .and_then(|v| v.checked_add(u64::from(b - b'0')))
                    .filter(|v| i64::try_from(*v).is_ok())
                    .ok_or_else(bad)?;
                digits += 1;
            }
            b'.' if digits > 0 && dots < 2 => {
                parts[dots] = value;
                dots += 1;
                value = 0;
                digits = 0;
            }
            _ => return Err(bad()),
        }
    }
    match (dots, digits) {
        (0, 1..) => Ok((0, 0, value)),
        (2, 1..) => Ok((parts[0], parts[1], value)),
        _ => Err(bad()),
    }
}

/// Parse an account id as the JS SDK's `AccountId.fromString` does: an entity id, or an EVM
/// address (`0x` + 40 hex digits, or the 40 digits alone). A long-zero address is the account
/// it encodes; any other EVM address is refused, because the Rust SDK would write it as
/// account 0.0.0 (docs/CONFORMANCE.md).
pub fn account_id(field: &str, value: &str) -> Result<AccountId, ToolError> {
    account_id_in(|| field.to_owned(), value)
}

/// [`account_id`] for a field whose name is only written when the value is refused (an item
/// of a list: `transfers.3.accountId`).
pub fn account_id_in(field: impl Fn() -> String, value: &str) -> Result<AccountId, ToolError> {
    let (shard, realm, num) = account_entity_in(field, value)?;
    Ok(AccountId::new(shard, realm, num))
}

/// [`account_id_in`]'s shard, realm and number: a caller that stores the id builds it where it
/// stores it (an `AccountId` is 256 bytes, moved out of a `Result` and again into a list).
pub fn account_entity_in(
    field: impl Fn() -> String,
    value: &str,
) -> Result<(u64, u64, u64), ToolError> {
    let evm = value.strip_prefix("0x").filter(|hex| hex.len() == 40);
    if let Some(hex) = evm.or(Some(value).filter(|v| v.len() == 40)) {
        let bytes = hex::decode(hex).map_err(|_| {
            ToolError::message(format!("Invalid EVM address hex string: {value}"))
                .in_field(&field())
        })?;
        if bytes[..12].iter().all(|b| *b == 0) {
            let num = u64::from_be_bytes(bytes[12..].try_into().unwrap_or_default());
            return Ok((0, 0, num));
        }
        return Err(ToolError::invalid_field(
            &field(),
            format!(
                "{value} is an EVM address alias, which hak cannot write into a transaction; use the account's 0.0.x id"
            ),
        ));
    }
    entity_id(value).map_err(|e| e.in_field(&field()))
}

/// The text the agent named an account by, when it was an EVM address (the kit echoes it in
/// query results; hak queries by the number it encodes).
pub fn written_as_address(value: &str) -> Option<String> {
    let hex = value.strip_prefix("0x").unwrap_or(value);
    (hex.len() == 40).then(|| value.to_owned())
}

/// How a query result names `account`: as the agent wrote it (`written`), when that still
/// encodes the account (a hook may have replaced the id), else as `0.0.N`.
pub fn echo_account(account: &AccountId, written: Option<&str>) -> String {
    written
        .filter(|text| account_id("accountId", text).ok().as_ref() == Some(account))
        .map_or_else(|| account.to_string(), str::to_owned)
}

/// Parse a topic id (the JS SDK's `TopicId.fromString`).
pub fn topic_id(field: &str, value: &str) -> Result<hedera::TopicId, ToolError> {
    let (shard, realm, num) = entity_id(value).map_err(|e| e.in_field(field))?;
    Ok(hedera::TopicId::new(shard, realm, num))
}

/// Parse a token id (the JS SDK's `TokenId.fromString`).
pub fn token_id(field: &str, value: &str) -> Result<hedera::TokenId, ToolError> {
    let (shard, realm, num) = entity_id(value).map_err(|e| e.in_field(field))?;
    Ok(hedera::TokenId::new(shard, realm, num))
}

/// Parse a list of token ids (at least one), naming the failing element (`tokenIds.1`, the kit's path style).
pub fn token_ids(field: &str, values: &[String]) -> Result<Vec<hedera::TokenId>, ToolError> {
    if values.is_empty() {
        return Err(ToolError::invalid_field(
            field,
            "Array must contain at least 1 element(s)",
        ));
    }
    values
        .iter()
        .enumerate()
        .map(|(i, v)| token_id(&format!("{field}.{i}"), v))
        .collect()
}

/// The kit's `AccountResolver.resolveAccount`: the given account, else the context's account,
/// else the operator's.
pub fn resolve_account(
    field: &str,
    provided: Option<&str>,
    ctx: &ToolContext<'_>,
) -> Result<AccountId, ToolError> {
    match provided.filter(|s| !s.is_empty()) {
        Some(value) => account_id(field, value),
        None => default_account(ctx),
    }
}

/// The kit's `AccountResolver.getDefaultAccount`.
pub fn default_account(ctx: &ToolContext<'_>) -> Result<AccountId, ToolError> {
    ctx.context
        .account_id
        .or(ctx.operator_account_id)
        .ok_or_else(|| {
            ToolError::message(
                "No account available: neither context.accountId nor operator account",
            )
        })
}

/// JavaScript's `Number.prototype.toString` for the values agents send (used in messages):
/// [`js_number::to_string`](crate::tools::js_number::to_string).
pub fn js_number(x: f64) -> String {
    crate::tools::js_number::to_string(x)
}

/// HBAR (as the agent's JSON number) → tinybars, exactly as the JS SDK's `new Hbar(n)`: the
/// number's shortest decimal form times 10^8, which must be an integer.
pub fn hbar_to_tinybars(hbar: f64) -> Result<i64, ToolError> {
    decimal_to_base_units(hbar, 8).map_err(|e| match e {
        UnitsError::Fraction => ToolError::message("Hbar in tinybars contains decimals"),
        UnitsError::Range => {
            ToolError::message(format!("HBAR amount {} is out of range", js_number(hbar)))
        }
    })
}

/// A recipient's HBAR (the transfer tools' `amount`) → tinybars, which must be above zero:
/// the kit's "Invalid transfer amount: <n>" otherwise.
pub fn positive_tinybars(hbar: f64) -> Result<i64, ToolError> {
    let tinybars = hbar_to_tinybars(hbar)?;
    if tinybars <= 0 {
        return Err(ToolError::message(format!(
            "Invalid transfer amount: {}",
            js_number(hbar)
        )));
    }
    Ok(tinybars)
}

#[derive(Debug, PartialEq, Eq)]
pub enum UnitsError {
    /// More fractional digits than the unit has.
    Fraction,
    /// Not finite, or not representable in 64 bits.
    Range,
}

/// A display amount (JSON number) → integer base units with `decimals` decimal places,
/// computed on the number's shortest decimal representation (no floating-point rounding).
pub fn decimal_to_base_units(amount: f64, decimals: u32) -> Result<i64, UnitsError> {
    if !amount.is_finite() {
        return Err(UnitsError::Range);
    }
    if let Some(units) = on_the_grid(amount, decimals) {
        return Ok(units);
    }
    // The number's shortest decimal digits, as JavaScript reads it (`js_number`).
    let Some(shortest) = crate::tools::js_number::Digits::of(amount) else {
        return Err(UnitsError::Range);
    };
    let digits = shortest.digits();
    if digits.is_empty() {
        return Ok(0);
    }
    // value = digits × 10^exponent; scale by 10^decimals.
    let shift = shortest.exponent + i64::from(decimals);
    let value: i128 = if shift >= 0 {
        let factor = 10i128.checked_pow(shift as u32).ok_or(UnitsError::Range)?;
        digits_value(digits)
            .checked_mul(factor)
            .ok_or(UnitsError::Range)?
    } else {
        let cut = (-shift) as usize;
        if cut >= digits.len() || digits[digits.len() - cut..].iter().any(|&d| d != 0) {
            return Err(UnitsError::Fraction);
        }
        digits_value(&digits[..digits.len() - cut])
    };
    let signed = if amount < 0.0 { -value } else { value };
    i64::try_from(signed).map_err(|_| UnitsError::Range)
}

/// The common case of [`decimal_to_base_units`] without writing the number's digits: an
/// amount below 2^51 base units whose nearest `units / 10^decimals` is the amount itself.
/// There the double's rounding interval (narrower than half a base unit) holds exactly one
/// multiple of `10^-decimals`, so that decimal is the number's shortest form too. The
/// division is exact IEEE (`units` and `10^decimals` are exact doubles), so it says whether
/// the decimal reads back as the amount; anything else (a fraction of a base unit, a huge
/// amount) takes the digits path.
fn on_the_grid(amount: f64, decimals: u32) -> Option<i64> {
    const TWO_POW_51: f64 = 2_251_799_813_685_248.0;
    let scale = 10f64.powi(i32::try_from(decimals).ok().filter(|d| *d <= 22)?);
    let magnitude = amount.abs();
    if magnitude >= TWO_POW_51 / scale {
        return None;
    }
    let units = (magnitude * scale).round();
    if units / scale != magnitude {
        return None;
    }
    // `units` < 2^51: exact in an i64.
    let units = units as i64;
    Some(if amount < 0.0 { -units } else { units })
}

/// JavaScript's `Number(text)` (the kit reads string amounts so): surrounding whitespace
/// ignored, empty is 0, `Infinity` with an optional sign, `0x` / `0o` / `0b` integers
/// (unsigned), otherwise a decimal literal (`1e3`, `.5`, `5.`); anything else is NaN — also
/// Rust's own spellings (`inf`, `infinity`, `nan`), which JavaScript does not read.
pub fn js_string_to_number(text: &str) -> f64 {
    let t = text.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
    if t.is_empty() {
        return 0.0;
    }
    match t {
        "Infinity" | "+Infinity" => return f64::INFINITY,
        "-Infinity" => return f64::NEG_INFINITY,
        _ => {}
    }
    let radix = match t.get(..2) {
        Some("0x" | "0X") => Some(16),
        Some("0o" | "0O") => Some(8),
        Some("0b" | "0B") => Some(2),
        _ => None,
    };
    if let Some(radix) = radix {
        let digits = &t[2..];
        if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
            return f64::NAN;
        }
        // Digit by digit in doubles, as JavaScript rounds a long literal.
        return digits
            .chars()
            .filter_map(|c| c.to_digit(radix))
            .fold(0.0, |n, d| n * f64::from(radix) + f64::from(d));
    }
    let decimal = t
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.' | b'e' | b'E'))
        && t.bytes().any(|b| b.is_ascii_digit());
    if !decimal {
        return f64::NAN;
    }
    t.parse::<f64>().unwrap_or(f64::NAN)
}

/// The integer that decimal digits (0–9 each, at most 32) spell.
fn digits_value(digits: &[u8]) -> i128 {
    digits.iter().fold(0i128, |v, &d| v * 10 + i128::from(d))
}

/// Tinybars as HBAR the way the kit prints `BigNumber(t).div(1e8)`: see [`display_units`].
pub fn tinybars_to_hbar_string(tinybars: i64) -> String {
    display_units(tinybars, 8)
}

/// Base units in display units the way the kit prints `toDisplayUnit(amount, decimals)` (a
/// BigNumber's `toString`): plain decimal with trailing zeros dropped (150000000, 8 → "1.5"),
/// and exponential form below 1e-6 (1, 8 → "1e-8"; -12, 8 → "-1.2e-7").
pub fn display_units(amount: i64, decimals: u32) -> String {
    let sign = if amount < 0 { "-" } else { "" };
    let digits = amount.unsigned_abs().to_string();
    if amount == 0 {
        return "0".into();
    }
    let exponent = digits.len() as i64 - 1 - i64::from(decimals);
    if exponent <= -7 {
        let significant = digits.trim_end_matches('0');
        let (first, rest) = significant.split_at(1);
        let dot = if rest.is_empty() { "" } else { "." };
        return format!("{sign}{first}{dot}{rest}e{exponent}");
    }
    let decimals = decimals as usize;
    let padded = format!("{digits:0>width$}", width = decimals + 1);
    let (whole, frac) = padded.split_at(padded.len() - decimals);
    let frac = frac.trim_end_matches('0');
    if frac.is_empty() {
        format!("{sign}{whole}")
    } else {
        format!("{sign}{whole}.{frac}")
    }
}

/// Bytes as `0x`-prefixed lowercase hex (the stage JSON's encoding of bytes).
pub fn hex_0x(bytes: &[u8]) -> String {
    // Every return-bytes call writes its transaction this way: two digits a byte, one store.
    const PAIRS: [[u8; 2]; 256] = {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut pairs = [[0u8; 2]; 256];
        let mut b = 0;
        while b < 256 {
            pairs[b] = [DIGITS[b >> 4], DIGITS[b & 0xf]];
            b += 1;
        }
        pairs
    };
    let mut out = vec![0u8; 2 + bytes.len() * 2];
    out[..2].copy_from_slice(b"0x");
    for (pair, &b) in out[2..].chunks_exact_mut(2).zip(bytes) {
        pair.copy_from_slice(&PAIRS[usize::from(b)]);
    }
    String::from_utf8(out).unwrap_or_default()
}

/// Serde helpers for the stage JSON: ids as "0.0.x", 64-bit amounts as decimal strings.
pub mod serde_as {
    /// An integer as JavaScript reads a JSON number (zod's `int()`): `10` and also `10.0` or
    /// `1e1`, a double with no fraction; a fraction or a negative number stays refused.
    pub mod js_u64 {
        use serde::de::{Deserializer, Error, Unexpected, Visitor};

        struct JsU64;

        impl Visitor<'_> for JsU64 {
            type Value = u64;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("u64")
            }
            fn visit_u64<E: Error>(self, v: u64) -> Result<u64, E> {
                Ok(v)
            }
            fn visit_i64<E: Error>(self, v: i64) -> Result<u64, E> {
                u64::try_from(v).map_err(|_| E::invalid_value(Unexpected::Signed(v), &self))
            }
            fn visit_f64<E: Error>(self, v: f64) -> Result<u64, E> {
                // Below 2^64 and whole (-0 is 0): the double's own integer value, exactly.
                if v.fract() == 0.0 && (0.0..18_446_744_073_709_551_616.0).contains(&v) {
                    Ok(v as u64)
                } else {
                    Err(E::invalid_type(Unexpected::Float(v), &self))
                }
            }
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
            d.deserialize_any(JsU64)
        }

        /// A list of them.
        pub mod vec {
            use serde::{Deserialize, Deserializer};

            #[derive(Deserialize)]
            struct One(#[serde(with = "super")] u64);

            pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u64>, D::Error> {
                Ok(Vec::<One>::deserialize(d)?
                    .into_iter()
                    .map(|o| o.0)
                    .collect())
            }
        }
    }

    /// Any `Display + FromStr` value (ids) as a JSON string.
    pub mod string {
        use serde::{de::Error, Deserialize, Deserializer, Serializer};
        use std::fmt::Display;
        use std::str::FromStr;

        pub fn serialize<T: Display + 'static, S: Serializer>(
            v: &T,
            s: S,
        ) -> Result<S::Ok, S::Error> {
            crate::text::with_display(v, |text| s.serialize_str(text))
        }
        pub fn deserialize<'de, T: FromStr, D: Deserializer<'de>>(d: D) -> Result<T, D::Error>
        where
            T::Err: Display,
        {
            let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
            T::from_str(&text).map_err(|e| D::Error::custom(format!("invalid value {text:?}: {e}")))
        }
    }

    /// An optional `Display + FromStr` value as an optional JSON string.
    pub mod option_string {
        use serde::{de::Error, Deserialize, Deserializer, Serializer};
        use std::fmt::Display;
        use std::str::FromStr;

        pub fn serialize<T: Display + 'static, S: Serializer>(
            v: &Option<T>,
            s: S,
        ) -> Result<S::Ok, S::Error> {
            match v {
                Some(v) => crate::text::with_display(v, |text| s.serialize_str(text)),
                None => s.serialize_none(),
            }
        }
        pub fn deserialize<'de, T: FromStr, D: Deserializer<'de>>(
            d: D,
        ) -> Result<Option<T>, D::Error>
        where
            T::Err: Display,
        {
            match Option::<String>::deserialize(d)? {
                None => Ok(None),
                Some(text) => T::from_str(&text)
                    .map(Some)
                    .map_err(|e| D::Error::custom(format!("invalid value {text:?}: {e}"))),
            }
        }
    }

    /// An `i64` amount as a signed decimal string (JSON integers are accepted on input).
    pub mod amount {
        use serde::{de::Error, Deserialize, Deserializer, Serializer};

        pub fn serialize<S: Serializer>(v: &i64, s: S) -> Result<S::Ok, S::Error> {
            crate::text::with_display(v, |text| s.serialize_str(text))
        }
        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
            #[derive(Deserialize)]
            #[serde(untagged)]
            enum Repr<'a> {
                Int(i64),
                #[serde(borrow)]
                Text(std::borrow::Cow<'a, str>),
            }
            match Repr::deserialize(d)? {
                Repr::Int(v) => Ok(v),
                Repr::Text(t) => t.parse().map_err(|_| {
                    D::Error::custom(format!(
                        "invalid amount {t:?}: expected a signed 64-bit integer string"
                    ))
                }),
            }
        }
    }
}

/// JavaScript's `Date.toISOString()`: UTC with milliseconds, e.g. `2026-11-30T08:05:00.123Z`.
/// Digits are written by hand: every return-bytes call writes one (`write!` cost ~10× more).
pub fn iso_millis(at: time::OffsetDateTime) -> String {
    let at = at.to_offset(time::UtcOffset::UTC);
    let (year, month, day) = at.to_calendar_date();
    let (hour, minute, second, milli) = at.to_hms_milli();
    // The fixed part, filled digit by digit in place and copied once.
    let mut tail = *b"-00-00T00:00:00.000Z";
    for (at, n, width) in [
        (1, u32::from(u8::from(month)), 2),
        (4, u32::from(day), 2),
        (7, u32::from(hour), 2),
        (10, u32::from(minute), 2),
        (13, u32::from(second), 2),
        (16, u32::from(milli), 3),
    ] {
        put_digits(&mut tail[at..at + width], n);
    }
    let mut text = String::with_capacity(27);
    if (0..=9999).contains(&year) {
        let mut digits = *b"0000";
        put_digits(&mut digits, year.unsigned_abs());
        text.push_str(std::str::from_utf8(&digits).unwrap_or_default());
    } else {
        // JS writes years outside 0..=9999 with a sign and six digits.
        text.push(if year < 0 { '-' } else { '+' });
        push_padded(&mut text, u64::from(year.unsigned_abs()), 6);
    }
    text.push_str(std::str::from_utf8(&tail).unwrap_or_default());
    text
}

/// The last `into.len()` decimal digits of `n`, zero-padded, into `into`.
fn put_digits(into: &mut [u8], mut n: u32) {
    for digit in into.iter_mut().rev() {
        *digit = b'0' + (n % 10) as u8;
        n /= 10;
    }
}

pub use crate::text::{push_account, push_padded};

#[cfg(test)]
mod tests {

    #[test]
    fn numbers_read_as_javascript_writes_them() {
        use super::js_number;
        for (x, js) in [
            (0.0, "0"),
            (-0.0, "0"),
            (5.0, "5"),
            (-3.0, "-3"),
            (1.5, "1.5"),
            (0.000001, "0.000001"),
            (5e-9, "5e-9"),
            (-1.5e-7, "-1.5e-7"),
            (123456789012345680000.0, "123456789012345680000"),
            (1e21, "1e+21"),
            (1.5e22, "1.5e+22"),
            (9007199254740993.0, "9007199254740992"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
            (f64::NAN, "NaN"),
        ] {
            assert_eq!(js_number(x), js, "{x:e}");
        }
    }

    #[test]
    fn iso_has_three_fraction_digits() {
        let at =
            time::OffsetDateTime::from_unix_timestamp_nanos(1_700_000_000_120_000_000).unwrap();
        assert_eq!(iso_millis(at), "2023-11-14T22:13:20.120Z");
        let at = time::OffsetDateTime::from_unix_timestamp(1_700_000_000).unwrap();
        assert_eq!(iso_millis(at), "2023-11-14T22:13:20.000Z");
        // JS: new Date(-62198755200000).toISOString() === "-000001-01-01T00:00:00.000Z"
        let at = time::OffsetDateTime::from_unix_timestamp(-62_198_755_200).unwrap();
        assert_eq!(iso_millis(at), "-000001-01-01T00:00:00.000Z");
        // Every field at its widths, against `format!`, over a spread of instants.
        let mut seconds = 0i64;
        for step in 0..5_000i64 {
            seconds += 7_919 * step + 3_601;
            let at = time::OffsetDateTime::from_unix_timestamp(seconds % 253_402_300_799).unwrap()
                + time::Duration::milliseconds(step % 1_000);
            let (y, mo, d) = at.to_calendar_date();
            let (h, mi, s, ms) = at.to_hms_milli();
            let expected = format!(
                "{y:04}-{:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{ms:03}Z",
                u8::from(mo)
            );
            assert_eq!(iso_millis(at), expected, "{at}");
        }
        for (n, width, text) in [
            (0, 1, "0"),
            (7, 3, "007"),
            (12345, 2, "12345"),
            (u64::MAX, 0, "18446744073709551615"),
        ] {
            let mut out = String::new();
            super::push_padded(&mut out, n, width);
            assert_eq!(out, text);
        }
    }

    use super::*;

    #[test]
    fn hbar_amounts_convert_exactly() {
        assert_eq!(hbar_to_tinybars(1.0).unwrap(), 100_000_000);
        assert_eq!(hbar_to_tinybars(0.1).unwrap(), 10_000_000);
        assert_eq!(hbar_to_tinybars(0.00000001).unwrap(), 1);
        assert_eq!(hbar_to_tinybars(1.23456789).unwrap(), 123_456_789);
        assert_eq!(hbar_to_tinybars(-2.5).unwrap(), -250_000_000);
        assert_eq!(
            hbar_to_tinybars(92233720368.0).unwrap(),
            9_223_372_036_800_000_000
        );
        assert_eq!(hbar_to_tinybars(0.0).unwrap(), 0);
        assert_eq!(
            hbar_to_tinybars(0.000000001).unwrap_err().to_string(),
            "Hbar in tinybars contains decimals"
        );
        assert!(hbar_to_tinybars(1e20).is_err());
        assert_eq!(positive_tinybars(0.5).unwrap(), 50_000_000);
        for (hbar, says) in [(0.0, "0"), (-0.0, "0"), (-2.5, "-2.5")] {
            assert_eq!(
                positive_tinybars(hbar).unwrap_err().to_string(),
                format!("Invalid transfer amount: {says}")
            );
        }
    }

    /// The straightforward version (heap strings, `str::parse`): the fast one must agree.
    fn reference_base_units(amount: f64, decimals: u32) -> Result<i64, UnitsError> {
        if !amount.is_finite() {
            return Err(UnitsError::Range);
        }
        let sci = format!("{:e}", amount.abs());
        let (mantissa, exp) = sci.split_once('e').unwrap();
        let exp: i64 = exp.parse().unwrap();
        let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let digits = format!("{int_part}{frac_part}");
        let shift = exp - frac_part.len() as i64 + i64::from(decimals);
        let digits = digits.trim_start_matches('0');
        if digits.is_empty() {
            return Ok(0);
        }
        let value: i128 = if shift >= 0 {
            let base: i128 = digits.parse().map_err(|_| UnitsError::Range)?;
            let factor = 10i128.checked_pow(shift as u32).ok_or(UnitsError::Range)?;
            base.checked_mul(factor).ok_or(UnitsError::Range)?
        } else {
            let cut = (-shift) as usize;
            if cut >= digits.len() || digits[digits.len() - cut..].bytes().any(|b| b != b'0') {
                return Err(UnitsError::Fraction);
            }
            digits[..digits.len() - cut]
                .parse()
                .map_err(|_| UnitsError::Range)?
        };
        let signed = if amount < 0.0 { -value } else { value };
        i64::try_from(signed).map_err(|_| UnitsError::Range)
    }

    /// Where `core::fmt`'s shortest digits and ryu's differ: an exact tie between two shortest
    /// forms, which ECMAScript's `Number#toString` (and so the kit) breaks to the even digit,
    /// as ryu does, and `core::fmt` does not.
    fn assert_tie_to_even(amount: f64) {
        let fmt = format!("{:e}", amount.abs());
        let mut buffer = ryu::Buffer::new();
        let ryu = buffer.format_finite(amount.abs());
        let significant = |t: &str| -> String {
            let mantissa = t.split('e').next().unwrap_or_default();
            let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
            digits
                .trim_start_matches('0')
                .trim_end_matches('0')
                .to_owned()
        };
        let (f, r) = (significant(&fmt), significant(ryu));
        assert_eq!(fmt.parse::<f64>().unwrap(), amount.abs(), "{fmt}");
        assert_eq!(ryu.parse::<f64>().unwrap(), amount.abs(), "{ryu}");
        assert_eq!(f.len(), r.len(), "{fmt} vs {ryu}: not a tie");
        let last = r.bytes().last().unwrap_or(b'0') - b'0';
        assert!(
            last.is_multiple_of(2),
            "{fmt} vs {ryu}: the JS form is the even one"
        );
    }

    #[test]
    fn strings_read_as_javascripts_number_reads_them() {
        // node: Number(x) for each x.
        for (text, js) in [
            ("", 0.0),
            ("  7 ", 7.0),
            ("1e3", 1000.0),
            (".5", 0.5),
            ("5.", 5.0),
            ("+5", 5.0),
            ("-0", -0.0),
            ("0x10", 16.0),
            ("0X1f", 31.0),
            ("0o17", 15.0),
            ("0b101", 5.0),
            ("Infinity", f64::INFINITY),
            ("-Infinity", f64::NEG_INFINITY),
        ] {
            assert_eq!(js_string_to_number(text), js, "{text:?}");
        }
        for nan in [
            "abc", "inf", "infinity", "NaN", "-0x10", "0x", "1e", "1_000", "12px", "e5",
        ] {
            assert!(js_string_to_number(nan).is_nan(), "{nan:?}");
        }
    }

    #[test]
    fn ties_break_to_the_even_digit_as_javascript_does() {
        // node: (-1006567402717677.25).toString() === "-1006567402717677.2"
        assert_eq!(
            decimal_to_base_units(-(1_006_567_402_717_677.0 + 0.25), 1),
            Ok(-10_065_674_027_176_772)
        );
        // Messages name the number with the same digits (`core::fmt` wrote `…677.3`).
        let mut tie = -(1_006_567_402_717_677.0 + 0.25);
        assert_eq!(js_number(tie), "-1006567402717677.2");
        tie *= 1e4;
        assert_eq!(
            hbar_to_tinybars(tie).unwrap_err().to_string(),
            format!("HBAR amount {} is out of range", js_number(tie))
        );
        assert_eq!(js_number(tie), "-10065674027176772000");
    }

    /// A reproducible stream of 64-bit values (xorshift) for the generated cases.
    fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        }
    }

    #[test]
    fn base_units_agree_with_the_reference_on_many_numbers() {
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15u64);
        let mut checked = 0;
        for _ in 0..20_000 {
            let r = next();
            let amount = match r % 4 {
                0 => f64::from_bits(next()),
                1 => (next() % 10_000_000) as f64 / 10f64.powi((next() % 12) as i32),
                2 => -((next() % 1_000) as f64) * 10f64.powi((next() % 30) as i32 - 10),
                _ => (next() as i64) as f64,
            };
            let decimals = (next() % 19) as u32;
            let fast = decimal_to_base_units(amount, decimals);
            if fast != reference_base_units(amount, decimals) {
                assert_tie_to_even(amount);
            }
            checked += 1;
        }
        assert_eq!(checked, 20_000);
        // Where the grid shortcut answers: integers of base units near and past its bound,
        // scaled by the unit and by finer steps (fractions of a unit), and their neighbours.
        for _ in 0..100_000 {
            let decimals = (next() % 19) as u32;
            let units = (next() >> (next() % 64)) as f64;
            let finer = 10f64.powi((decimals + (next() % 4) as u32) as i32);
            let amount = units / finer;
            for amount in [amount, f64::from_bits(amount.to_bits() + 1), -amount] {
                if decimal_to_base_units(amount, decimals) != reference_base_units(amount, decimals)
                {
                    assert_tie_to_even(amount);
                }
            }
        }
        for special in [
            0.0,
            -0.0,
            f64::MIN_POSITIVE,
            5e-324,
            f64::MAX,
            1e-7,
            92_233_720_368.547_76,
        ] {
            for decimals in [0, 8, 18] {
                assert_eq!(
                    decimal_to_base_units(special, decimals),
                    reference_base_units(special, decimals)
                );
            }
        }
    }

    #[test]
    fn entity_ids_read_as_the_js_sdk_reads_them() {
        assert_eq!(entity_id("0.0.1002").unwrap(), (0, 0, 1002));
        assert_eq!(entity_id("1002").unwrap(), (0, 0, 1002));
        assert_eq!(entity_id("0.0.1002-abcde").unwrap(), (0, 0, 1002));
        for bad in [
            "1.2",
            "",
            " 0.0.1002 ",
            "0.0.-3",
            "0.0.x",
            "0.0.abc",
            "0.0.99999999999999999999",
        ] {
            assert_eq!(
                entity_id(bad).unwrap_err().message,
                format!("failed to parse entity id: {bad}")
            );
        }
        let long_zero = account_id("a", "0x00000000000000000000000000000000000003ea").unwrap();
        assert_eq!(long_zero, AccountId::new(0, 0, 1002));
        let alias = account_id("a", "0x7f3b1c2d4e5f60718293a4b5c6d7e8f901234567").unwrap_err();
        assert!(
            alias.message.contains("EVM address alias"),
            "{}",
            alias.message
        );
    }

    /// The grammar as first written (split on `-` and `.`, `str::parse`), against the one-pass
    /// reader, on generated ids.
    fn reference_entity_id(text: &str) -> Option<(u64, u64, u64)> {
        let body = match text.rsplit_once('-') {
            Some((body, checksum))
                if checksum.len() == 5 && checksum.bytes().all(|b| b.is_ascii_lowercase()) =>
            {
                body
            }
            _ => text,
        };
        let number = |part: &str| -> Option<u64> {
            if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            part.parse::<i64>().ok().and_then(|n| u64::try_from(n).ok())
        };
        let mut parts = body.split('.');
        match (parts.next(), parts.next(), parts.next(), parts.next()) {
            (Some(num), None, None, None) => Some((0, 0, number(num)?)),
            (Some(shard), Some(realm), Some(num), None) => {
                Some((number(shard)?, number(realm)?, number(num)?))
            }
            _ => None,
        }
    }

    #[test]
    fn entity_ids_agree_with_the_reference_grammar_on_generated_text() {
        let mut next = xorshift(0x2545_f491_4f6c_dd1du64);
        let alphabet = b"0123456789..--abcdeZ+ ";
        for fixed in [
            "9223372036854775807",
            "9223372036854775808",
            "0.0.9223372036854775807-abcde",
            "0.0.1-abcd",
            "0.0.1-ABCDE",
            "0.0.1002-abcde-abcde",
            "0..1",
            ".0.1",
            "0.0.1.",
            "0.0.1.2",
            "-abcde",
            "000000000000000000000000001",
        ] {
            assert_eq!(entity_id(fixed).ok(), reference_entity_id(fixed), "{fixed}");
        }
        for _ in 0..50_000 {
            let len = (next() % 14) as usize;
            let text: String = (0..len)
                .map(|_| char::from(alphabet[(next() % alphabet.len() as u64) as usize]))
                .collect();
            assert_eq!(
                entity_id(&text).ok(),
                reference_entity_id(&text),
                "{text:?}"
            );
        }
    }

    #[test]
    fn times_read_as_the_kit_reads_them() {
        let at = |t: &str| zod_datetime(t).map(|d| d.unix_timestamp());
        assert_eq!(at("2027-01-01T00:00:00Z"), Some(1_798_761_600));
        assert_eq!(at("2027-01-01T00:00Z"), Some(1_798_761_600));
        assert_eq!(at("2027-01-01T00:00:00.123456789Z"), Some(1_798_761_600));
        for bad in [
            "2027-01-01",
            "2027-01-01T00:00:00+02:00",
            "2027-02-30T00:00:00Z",
            "2027-01-01T24:00:00Z",
            "tomorrow",
        ] {
            assert_eq!(at(bad), None, "{bad}");
        }
        let iso = |t: &str| iso_time("f", t).map(|d| d.unix_timestamp()).ok();
        assert_eq!(iso("2027-01-01"), Some(1_798_761_600));
        assert_eq!(iso("2027-01-01T02:00:00+02:00"), Some(1_798_761_600));
        assert_eq!(iso("2027-02-30"), None);
    }

    #[test]
    fn ids_and_amounts_serialize_as_their_text() {
        #[derive(serde::Serialize)]
        struct Leg {
            #[serde(with = "super::serde_as::string")]
            to: AccountId,
            #[serde(with = "super::serde_as::option_string")]
            token: Option<hedera::TokenId>,
            #[serde(with = "super::serde_as::amount")]
            amount: i64,
            #[serde(with = "super::serde_as::string")]
            note: String,
        }
        let leg = Leg {
            to: AccountId::new(0, 0, 1001),
            token: Some(hedera::TokenId::new(0, 0, 5)),
            amount: -150_000_000,
            note: format!("{}\"quoted\"", "x".repeat(40)),
        };
        assert_eq!(
            serde_json::to_string(&leg).unwrap(),
            format!(
                r#"{{"to":"0.0.1001","token":"0.0.5","amount":"-150000000","note":{}}}"#,
                serde_json::to_string(&leg.note).unwrap()
            )
        );
    }

    #[test]
    fn token_units() {
        assert_eq!(decimal_to_base_units(12.5, 2), Ok(1250));
        assert_eq!(decimal_to_base_units(3.0, 0), Ok(3));
        assert_eq!(decimal_to_base_units(0.001, 2), Err(UnitsError::Fraction));
    }

    #[test]
    fn hbar_strings() {
        assert_eq!(tinybars_to_hbar_string(150_000_000), "1.5");
        assert_eq!(tinybars_to_hbar_string(100_000_000), "1");
        assert_eq!(tinybars_to_hbar_string(-1), "-1e-8");
        assert_eq!(tinybars_to_hbar_string(10), "1e-7");
        assert_eq!(tinybars_to_hbar_string(-12), "-1.2e-7");
        assert_eq!(tinybars_to_hbar_string(100), "0.000001");
        assert_eq!(tinybars_to_hbar_string(-12345), "-0.00012345");
        assert_eq!(display_units(250, 2), "2.5");
        assert_eq!(display_units(7, 0), "7");
        assert_eq!(display_units(1, 18), "1e-18");
        assert_eq!(display_units(1_000_000, 6), "1");
        assert_eq!(tinybars_to_hbar_string(0), "0");
    }

    #[test]
    fn js_numbers() {
        assert_eq!(js_number(0.0), "0");
        assert_eq!(js_number(-1.0), "-1");
        assert_eq!(js_number(1.5), "1.5");
    }
}

#[cfg(test)]
mod hex_tests {
    #[test]
    fn hex_is_prefixed_lowercase() {
        assert_eq!(super::hex_0x(&[0x01, 0x02, 0x03, 0xff]), "0x010203ff");
        assert_eq!(super::hex_0x(&[]), "0x");
    }
}
