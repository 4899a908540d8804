//! The process's log output (tracing-subscriber on stderr): `HAK_LOG` sets the level (`warn`
//! by default), `HAK_LOG_FORMAT=json` writes one JSON object per line (timestamp, level,
//! target, fields; plugin log text is a JSON string in it, so it can never forge a line), and
//! the text format has timestamps and uses colour only when stderr is a terminal.
//! What must not live here: the decision log (`decisions`), which is a record of calls, not
//! diagnostics.

use std::io::IsTerminal;
use std::str::FromStr;

/// How log lines are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogFormat {
    Text,
    Json,
}

impl LogFormat {
    /// `HAK_LOG_FORMAT`: `json`, or `text` (also when unset). Anything else is an error naming
    /// the variable.
    pub fn from_env() -> Result<Self, String> {
        match std::env::var("HAK_LOG_FORMAT").as_deref() {
            Err(_) | Ok("") | Ok("text") => Ok(LogFormat::Text),
            Ok("json") => Ok(LogFormat::Json),
            Ok(other) => Err(format!(
                "HAK_LOG_FORMAT={other:?}: expected \"json\" or \"text\""
            )),
        }
    }
}

/// Install the process's subscriber (once; later calls do nothing). An unknown
/// `HAK_LOG_FORMAT` is reported on stderr and the text format used.
pub fn init() {
    let level = std::env::var("HAK_LOG")
        .ok()
        .and_then(|l| tracing::Level::from_str(&l).ok())
        .unwrap_or(tracing::Level::WARN);
    let format = LogFormat::from_env().unwrap_or_else(|e| {
        eprintln!("hak: {e}; writing text logs");
        LogFormat::Text
    });
    let builder = tracing_subscriber::fmt()
        .with_max_level(level)
        .with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(false)
            .try_init(),
        LogFormat::Text => builder
            .with_ansi(std::io::stderr().is_terminal())
            .try_init(),
    };
}

/// `text` safe to put in a text log line: control characters (a newline that would start a
/// forged line, terminal escapes) are written escaped (`\n`, `\u{1b}`). Borrowed when there
/// are none, which is the common case.
pub fn one_line(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::one_line;

    #[test]
    fn control_characters_cannot_start_a_line_or_drive_a_terminal() {
        assert_eq!(one_line("plain text"), "plain text");
        assert_eq!(
            one_line("a\n2026-12-02T00:00:00Z  INFO forged\r\x1b[31m"),
            "a\\n2026-12-02T00:00:00Z  INFO forged\\r\\u{1b}[31m"
        );
    }
}
