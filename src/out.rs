//! Every byte the launcher writes goes through here: secrets redacted, terminal controls
//! escaped, and no write can panic.
//!
//! * The report streams (warnings, errors, the human report on stderr) are best effort: a
//!   closed or full stderr must never stop a valid launch, so their errors are dropped.
//! * Requested output (`--print-args`, `--json`, the dry-run line, a command's answer on
//!   stdout) returns its error, for the caller to turn into an exit code.
//! * [`redact`] hides the secret values registered with [`hide`] (the `secrets` layer finds
//!   them once per invocation) and the password of any URL userinfo (`scheme://user:pass@host`,
//!   `user:pass@host:port`).

use std::io::{self, Write};
use std::sync::Mutex;

/// What a hidden value is printed as.
pub const MASK: &str = "***";

/// Shorter values are not scrubbed from free text: a one- or two-letter secret would mask
/// letters of every message (the token itself is still masked where it is written).
const MIN_SCRUB_LEN: usize = 3;

static SECRETS: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// A set of secret values and the one way to hide them in text.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Redactor {
    /// Longest first, so a secret that contains another is masked whole.
    values: Vec<String>,
}

impl Redactor {
    pub fn new(values: impl IntoIterator<Item = String>) -> Redactor {
        let mut r = Redactor::default();
        r.extend(values);
        r
    }

    pub fn extend(&mut self, values: impl IntoIterator<Item = String>) {
        for v in values {
            if v.chars().count() >= MIN_SCRUB_LEN && v != MASK && !self.values.contains(&v) {
                self.values.push(v);
            }
        }
        self.values.sort_by_key(|v| std::cmp::Reverse(v.len()));
    }

    pub fn values(&self) -> &[String] {
        &self.values
    }

    /// `text` with every secret value and every URL password replaced by `***`.
    pub fn redact(&self, text: &str) -> String {
        let scrubbed = self
            .values
            .iter()
            .fold(text.to_owned(), |t, s| t.replace(s.as_str(), MASK));
        mask_userinfo(&scrubbed)
    }

    /// Makes these values hidden in everything written from now on.
    pub fn install(&self) {
        hide(self.values.iter().cloned());
    }
}

/// Adds values to the process-wide set that every write redacts.
pub fn hide(values: impl IntoIterator<Item = String>) {
    let mut all = SECRETS.lock().unwrap_or_else(|p| p.into_inner());
    let mut r = Redactor {
        values: std::mem::take(&mut *all),
    };
    r.extend(values);
    *all = r.values;
}

/// `text` as every write prints it: registered secrets and URL passwords hidden.
pub fn redact(text: &str) -> String {
    let all = SECRETS.lock().unwrap_or_else(|p| p.into_inner());
    Redactor {
        values: all.clone(),
    }
    .redact(text)
}

/// Characters that end a userinfo when scanning back from `@`: separators of words, quoting
/// and shell syntax, so `"${a[@]}"` or `--x=u:p@h` keep their own punctuation.
fn ends_userinfo(c: char) -> bool {
    c.is_whitespace() || "\"'`<>/\\@[]{}()$=,;|".contains(c)
}

/// `user:pass@host` → `user:***@host`, in URLs and bare `host:port` addresses alike. A
/// userinfo needs a `:` and a host that starts with a letter, digit or `[`; `a@b` (no
/// password) and `git@host:repo` (colon after the `@`) are left alone.
pub fn mask_userinfo(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('@') {
        let (before, after) = rest.split_at(at);
        let host_ok = after[1..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '[');
        let start = before
            .char_indices()
            .rev()
            .find(|(_, c)| ends_userinfo(*c))
            .map_or(0, |(i, c)| i + c.len_utf8());
        let info = &before[start..];
        match info.find(':') {
            Some(colon) if host_ok && colon + 1 < info.len() && info[colon + 1..] != *MASK => {
                let after_scheme = before[..start].ends_with("//");
                if colon > 0 || after_scheme {
                    out.push_str(&before[..start + colon + 1]);
                    out.push_str(MASK);
                } else {
                    out.push_str(before);
                }
            }
            _ => out.push_str(before),
        }
        out.push('@');
        rest = &after[1..];
    }
    out.push_str(rest);
    out
}

/// A value from a file or the machine (a GPU name, a path, a model name) made safe to print
/// on one line: C0 and C1 controls, DEL and ESC as `\n`, `\t`, `\x1b`, `\u{85}`.
pub fn escape(field: &str) -> String {
    let mut out = String::with_capacity(field.len());
    for c in field.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x80 && c.is_control() => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// Whole report text made safe: line breaks and tabs stay, the launcher's own colour codes
/// (`ESC [ digits ; m`) stay, every other control is escaped.
pub fn sanitize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '\x1b' && sgr_len(&text[i..]).is_some() {
            let n = sgr_len(&text[i..]).unwrap_or(1);
            out.push_str(&text[i..i + n]);
            while chars.peek().is_some_and(|(j, _)| *j < i + n) {
                chars.next();
            }
        } else if c == '\n' || c == '\t' || !c.is_control() {
            out.push(c);
        } else {
            out.push_str(&escape(c.encode_utf8(&mut [0; 4])));
        }
    }
    out
}

/// The length of a colour sequence (`ESC [ 0-9; m`) at the start of `s`.
fn sgr_len(s: &str) -> Option<usize> {
    let body = s.strip_prefix("\x1b[")?;
    let digits = body
        .bytes()
        .take_while(|b| b.is_ascii_digit() || *b == b';')
        .count();
    (body.as_bytes().get(digits) == Some(&b'm')).then_some(2 + digits + 1)
}

fn with_newline(text: &str) -> String {
    let mut t = text.to_owned();
    if !t.ends_with('\n') {
        t.push('\n');
    }
    t
}

fn write_to(mut w: impl Write, bytes: &[u8]) -> io::Result<()> {
    w.write_all(bytes)?;
    w.flush()
}

/// Report text on stderr (redacted, controls escaped, in ASCII where the locale is not
/// UTF-8), best effort: a closed, broken or full stderr is ignored so that it never stops a
/// launch.
pub fn report(text: &str) {
    let text = sanitize(&redact(text));
    let _ = write_to(io::stderr().lock(), for_locale(&text).as_bytes());
}

/// A human report on stdout: [`stdout`], in ASCII where the locale is not UTF-8. (Command lines
/// and JSON never go through this: their bytes are the user's.)
pub fn stdout_report(text: &str) -> io::Result<()> {
    let text = sanitize(&redact(&with_newline(text)));
    stdout_bytes(for_locale(&text).as_bytes())
}

/// The locale's character set is UTF-8: the first of `LC_ALL`, `LC_CTYPE`, `LANG` that is set
/// says so; none set is taken as UTF-8 (services and containers often set none).
fn utf8_locale() -> bool {
    // Read once per run: every report line asks.
    static UTF8: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *UTF8.get_or_init(|| {
        let set = ["LC_ALL", "LC_CTYPE", "LANG"]
            .iter()
            .find_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty()));
        set.is_none_or(|v| {
            let v = v.to_ascii_lowercase();
            v.contains("utf-8") || v.contains("utf8")
        })
    })
}

fn for_locale(text: &str) -> std::borrow::Cow<'_, str> {
    if utf8_locale() {
        std::borrow::Cow::Borrowed(text)
    } else {
        std::borrow::Cow::Owned(ascii(text))
    }
}

/// The report's own typography in ASCII; any other non-ASCII character as `?`.
pub fn ascii(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            c if c.is_ascii() => out.push(c),
            '·' | '–' | '−' | '─' => out.push('-'),
            '—' => out.push_str("--"),
            '→' => out.push_str("->"),
            '←' => out.push_str("<-"),
            '×' => out.push('x'),
            '…' => out.push_str("..."),
            '≥' => out.push_str(">="),
            '≤' => out.push_str("<="),
            '≈' => out.push('~'),
            '±' => out.push_str("+/-"),
            '“' | '”' => out.push('"'),
            '‘' | '’' => out.push('\''),
            _ => out.push('?'),
        }
    }
    out
}

/// One report line on stderr (see [`report`]).
pub fn report_line(line: &str) {
    report(&with_newline(line));
}

/// `sglang-launch: warning: MESSAGE` on stderr.
pub fn warn(message: &str) {
    report_line(&format!("sglang-launch: warning: {message}"));
}

/// Requested output on stdout (redacted, controls escaped, a final newline added): the
/// error is the caller's to report, since the user asked for this text.
pub fn stdout(text: &str) -> io::Result<()> {
    stdout_bytes(sanitize(&redact(&with_newline(text))).as_bytes())
}

/// Bytes exactly as given (already quoted or deliberately unmasked, `--show-secrets`).
pub fn stdout_bytes(bytes: &[u8]) -> io::Result<()> {
    write_to(io::stdout().lock(), bytes)
}

/// Whether an error is the reader going away (`| head`): nothing was lost that anyone reads.
pub fn is_broken_pipe(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::BrokenPipe
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_keeps_the_reports_meaning() {
        assert_eq!(
            ascii("SGLang 0.5.23 · 8× GPU — 0.5.5 → 0.5.23 ≥ 1…"),
            "SGLang 0.5.23 - 8x GPU -- 0.5.5 -> 0.5.23 >= 1..."
        );
        assert_eq!(ascii("é"), "?");
    }

    #[test]
    fn urls_and_addresses_lose_their_password() {
        for (text, want) in [
            ("https://u:P4ss@host/t", "https://u:***@host/t"),
            ("user:P4ss@host:5000", "user:***@host:5000"),
            ("--x=user:P4ss@10.0.0.1:5000", "--x=user:***@10.0.0.1:5000"),
            ("redis://:P4ss@host", "redis://:***@host"),
            ("'http://a:b@[::1]:80'", "'http://a:***@[::1]:80'"),
        ] {
            assert_eq!(mask_userinfo(text), want);
        }
        for same in [
            "mail me@host.org",
            "git@github.com:org/repo",
            "\"${words[@]}\"",
            "a:@host",
            "10:30 @ noon",
        ] {
            assert_eq!(mask_userinfo(same), same);
        }
    }

    #[test]
    fn redactor_masks_longest_first_and_skips_tiny_values() {
        let r = Redactor::new(["abc".to_owned(), "abcdef".to_owned(), "x".to_owned()]);
        assert_eq!(r.redact("abcdef abc x"), "*** *** x");
    }

    #[test]
    fn controls_are_escaped_but_colour_and_lines_stay() {
        assert_eq!(escape("A\x1b[2J\nverdict: ok"), "A\\x1b[2J\\nverdict: ok");
        assert_eq!(escape("bell\x07 c1\u{85}"), "bell\\x07 c1\\u{85}");
        assert_eq!(
            sanitize("\x1b[1mbold\x1b[0m\nx\x1b]0;title\x07\t"),
            "\x1b[1mbold\x1b[0m\nx\\x1b]0;title\\x07\t"
        );
    }
}
