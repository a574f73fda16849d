//! Every byte the launcher writes goes through here: secrets redacted, terminal controls
//! escaped, and no write can panic.
//!
//! * The report streams (warnings, errors, the human report on stderr) are best effort: a
//!   closed or full stderr must never stop a valid launch, so their errors are dropped.
//! * Requested output (`--print-args`, `--json`, the dry-run line, a command's answer on
//!   stdout) returns its error, for the caller to turn into an exit code.
//! * [`redact`] hides the secret values registered with [`hide`] (the `secrets` layer finds
//!   them once per invocation), the userinfo of any URL (`scheme://user:pass@host` →
//!   `scheme://***@host`) and the password of a bare `user:pass@host:port`
//!   ([`userinfo_spans`] says where each starts and ends).

use std::io::{self, Write};
use std::sync::Mutex;

/// What a hidden value is printed as.
pub(crate) const MASK: &str = "***";

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
    pub(crate) fn new(values: impl IntoIterator<Item = String>) -> Redactor {
        let mut r = Redactor::default();
        r.extend(values);
        r
    }

    pub(crate) fn extend(&mut self, values: impl IntoIterator<Item = String>) {
        for v in values {
            if v.chars().count() >= MIN_SCRUB_LEN && v != MASK && !self.values.contains(&v) {
                self.values.push(v);
            }
        }
        self.values.sort_by_key(|v| std::cmp::Reverse(v.len()));
    }

    /// `text` with every secret value and every URL password replaced by `***`.
    pub(crate) fn redact(&self, text: &str) -> String {
        let scrubbed = self
            .values
            .iter()
            .fold(text.to_owned(), |t, s| t.replace(s.as_str(), MASK));
        mask_userinfo(&scrubbed)
    }

    /// Makes these values hidden in everything written from now on.
    pub(crate) fn install(&self) {
        hide(self.values.iter().cloned());
    }
}

/// Adds values to the process-wide set that every write redacts.
pub(crate) fn hide(values: impl IntoIterator<Item = String>) {
    let mut all = SECRETS.lock().unwrap_or_else(|p| p.into_inner());
    let mut r = Redactor {
        values: std::mem::take(&mut *all),
    };
    r.extend(values);
    *all = r.values;
}

/// `text` as every write prints it: registered secrets and URL passwords hidden.
pub(crate) fn redact(text: &str) -> String {
    let all = SECRETS.lock().unwrap_or_else(|p| p.into_inner());
    Redactor {
        values: all.clone(),
    }
    .redact(text)
}

/// RFC 3986 authority characters (unreserved, `%`, sub-delims, `:`, `@`, an IP literal's
/// brackets): the characters a userinfo and the host after it can hold.
fn in_authority(c: char) -> bool {
    c.is_ascii_alphanumeric() || "-._~%!$&'()*+,;=:@[]".contains(c)
}

/// Any URI character: the authority's and the delimiters (`/ ? #`) that end it. Quotes,
/// backslashes and spaces are not, so a mask never crosses a JSON string or a shell word.
fn in_uri(c: char) -> bool {
    in_authority(c) || "/?#".contains(c)
}

/// Whether a URL authority without `@` cannot be a host: after an optional `[IP literal]`, a
/// `:` followed by something other than a port's digits (`u:pa` of `u:pa/ss@host`).
fn not_a_host(authority: &str) -> bool {
    let rest = match authority.strip_prefix('[') {
        Some(lit) => lit.split_once(']').map_or("", |(_, r)| r),
        None => authority,
    };
    rest.split_once(':')
        .is_some_and(|(_, port)| !port.bytes().all(|b| b.is_ascii_digit()))
}

/// The byte ranges of `text` that [`mask_userinfo`] hides, in order.
///
/// * After `//` (a URL), the userinfo is the whole authority before its *last* `@`: a
///   password may hold any sub-delim, `:`, `%40` or even a raw `@`, and the host never holds
///   an `@`. The user name goes too, since tokens are often passed as one (`https://TOKEN@h`).
///   The authority ends at the first `/`, `?` or `#` (RFC 3986, and Python's `urlsplit`, which
///   SGLang's clients use), so the `@` of a path (`…/model@rev`) is no userinfo. One exception:
///   an authority that cannot be a host (`u:pa` of `u:pa/ss@h`) means a password with a raw
///   `/ ? #`; then it runs to the last `@` of the URL, since hiding too much of a broken URL
///   costs nothing and a password shown cannot be taken back.
/// * Elsewhere (`user:pass@host:port`), where the user name's start cannot be told from the
///   text before it, the password: from the first `:` to the last `@` that a host follows.
///   `a@b` (no password) and `git@host:repo` (the colon after the `@`) are left alone.
///
/// A userinfo already masked (`***`) is left as it is, so masking twice changes nothing.
pub(crate) fn userinfo_spans(text: &str) -> Vec<std::ops::Range<usize>> {
    // Every span ends at an `@`: most lines have none, and are not scanned.
    if !text.contains('@') {
        return Vec::new();
    }
    let run = |from: usize, keep: fn(char) -> bool| {
        text[from..]
            .find(|c: char| !keep(c))
            .map_or(text.len(), |n| from + n)
    };
    let mut spans = Vec::new();
    // The URI run the last broken authority was in: its end and its last `@` (each URI run is
    // scanned once, however many `//` it holds).
    let mut uri: (usize, Option<usize>) = (0, None);
    let mut i = 0;
    while i < text.len() {
        let end = run(i, in_authority);
        if end == i {
            i += text[i..].chars().next().map_or(1, char::len_utf8);
            continue;
        }
        let authority = &text[i..end];
        let span = if text[..i].ends_with("//") {
            match authority.rfind('@') {
                Some(at) => Some(i..i + at),
                None if not_a_host(authority) => {
                    if i >= uri.0 {
                        let e = run(i, in_uri);
                        uri = (e, text[i..e].rfind('@').map(|at| i + at));
                    }
                    uri.1.filter(|&at| at > i).map(|at| i..at)
                }
                None => None,
            }
        } else {
            bare_password(authority).map(|r| i + r.start..i + r.end)
        };
        i = end;
        if let Some(s) = span.filter(|s| !s.is_empty() && text[s.clone()] != *MASK) {
            // A broken authority's span runs past `end`: what it covers is not read again.
            i = i.max(s.end);
            spans.push(s);
        }
    }
    spans
}

/// The password of a bare `user:pass@host` (a range of `run`).
fn bare_password(run: &str) -> Option<std::ops::Range<usize>> {
    let host_ok = |at: usize| {
        run[at + 1..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '[')
    };
    let at = run
        .rmatch_indices('@')
        .map(|(at, _)| at)
        .find(|&at| host_ok(at))?;
    let colon = run[..at].find(':')?;
    Some(colon + 1..at)
}

/// `text` with every span of [`userinfo_spans`] replaced by `***`: `scheme://***@host`,
/// `user:***@host:port`.
pub(crate) fn mask_userinfo(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for s in userinfo_spans(text) {
        out.push_str(&text[last..s.start]);
        out.push_str(MASK);
        last = s.end;
    }
    out.push_str(&text[last..]);
    out
}

/// Characters that reorder or hide the text around them without being C0/C1 controls: the
/// Arabic letter mark, the left-to-right and right-to-left marks, the bidi embeddings and
/// overrides, and the isolates. A name holding U+202E prints the rest of its line backwards.
fn is_bidi(c: char) -> bool {
    matches!(c, '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// A character that changes the terminal instead of showing: C0 and C1 controls, DEL, ESC and
/// the bidi controls.
pub(crate) fn is_hidden(c: char) -> bool {
    c.is_control() || is_bidi(c)
}

/// JSON text with every [`is_hidden`] character inside its strings written as a `\uXXXX`
/// escape: serde_json escapes only the C0 ones, and the output layer's own escapes (`\u{85}`)
/// are not JSON. Outside strings JSON is ASCII, so a raw newline there is the layout's.
/// Registered secrets are hidden first, while they still read as themselves.
pub(crate) fn json_safe(text: String) -> String {
    let text = redact(&text);
    if !text.chars().any(|c| c != '\n' && is_hidden(c)) {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if c != '\n' && is_hidden(c) {
            for unit in c.encode_utf16(&mut [0; 2]) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// One character as `\n`, `\r`, `\t`, `\x1b` (ASCII) or `\u{85}` (any other), readable
/// and on one line.
fn escape_char(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if c.is_ascii() => out.push_str(&format!("\\x{:02x}", c as u32)),
        c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
    }
}

/// A value from a file, the machine or the user (a GPU name, a path, a variable's value) made
/// safe to print on one line: every [`is_hidden`] character escaped, newlines included.
pub(crate) fn escape(field: &str) -> String {
    let mut out = String::with_capacity(field.len());
    for c in field.chars() {
        if is_hidden(c) {
            escape_char(&mut out, c);
        } else {
            out.push(c);
        }
    }
    out
}

/// This process's colour key: a random number that only the launcher's own colour codes
/// carry (see [`paint`]). It is never written, so no file, variable or argument can hold it,
/// and [`sanitize`] can let through exactly the colours the launcher chose.
fn colour_key() -> &'static str {
    static KEY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    KEY.get_or_init(|| {
        use std::hash::{BuildHasher, Hasher};
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        h.write_u128(now);
        h.write_u32(std::process::id());
        format!("{:020}", h.finish())
    })
}

/// `text` in the colour of the SGR parameters `code` (`1;31`), for a report in colour. The
/// codes carry [`colour_key`] as their first parameter, which [`sanitize`] removes; width
/// measures still read them as colour escapes, which take no width.
pub(crate) fn paint(code: &str, text: &str) -> String {
    let k = colour_key();
    format!("\x1b[{k};{code}m{text}\x1b[{k};0m")
}

/// Whole report text made safe: the launcher's own line breaks stay and so do its own colour
/// codes ([`paint`]); every other [`is_hidden`] character is escaped, so a data's ESC, CR,
/// tab, bell or bidi override never reaches the terminal. (A data newline cannot be told from
/// the launcher's here: messages escape their data with [`escape`] where they interpolate it.)
pub(crate) fn sanitize(text: &str) -> String {
    sanitize_keeping(text, '\n')
}

/// [`sanitize`] keeping `keep` (a newline, or a tab too for the completion protocol) as well.
fn sanitize_keeping(text: &str, keep: char) -> String {
    let key = format!("\x1b[{};", colour_key());
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if let Some(after) = rest.strip_prefix(key.as_str()) {
            out.push_str("\x1b[");
            rest = after;
            continue;
        }
        if c == '\n' || c == keep || !is_hidden(c) {
            out.push(c);
        } else {
            escape_char(&mut out, c);
        }
        rest = &rest[c.len_utf8()..];
    }
    out
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
pub(crate) fn report(text: &str) {
    let text = sanitize(&redact(text));
    let _ = write_to(io::stderr().lock(), for_locale(&text).as_bytes());
}

/// A human report on stdout: [`stdout`], in ASCII where the locale is not UTF-8. (Command lines
/// and JSON never go through this: their bytes are the user's.)
pub(crate) fn stdout_report(text: &str) -> io::Result<()> {
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
pub(crate) fn ascii(text: &str) -> String {
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

/// One report line on stderr (see [`report`]). It is one line whatever it quotes: every
/// control in it is escaped, newlines included, so callers need not escape their data.
pub(crate) fn report_line(line: &str) {
    report(&with_newline(&escape(line)));
}

/// `sglang-launch: warning: MESSAGE` on stderr, on one line (see [`report_line`]).
pub(crate) fn warn(message: &str) {
    report_line(&format!("sglang-launch: warning: {message}"));
}

/// Requested output on stdout (redacted, controls escaped, a final newline added): the
/// error is the caller's to report, since the user asked for this text.
pub(crate) fn stdout(text: &str) -> io::Result<()> {
    stdout_bytes(sanitize(&redact(&with_newline(text))).as_bytes())
}

/// One line of requested output on stdout: [`stdout`], every control in it escaped, newlines
/// included, so the line stays one whatever data it quotes.
pub(crate) fn stdout_line(line: &str) -> io::Result<()> {
    stdout(&escape(line))
}

/// Generated documents on stdout (completion scripts, the man page, completion replies,
/// which separate their fields with tabs): [`stdout`], tabs kept.
pub(crate) fn stdout_docs(text: &str) -> io::Result<()> {
    stdout_bytes(sanitize_keeping(&redact(&with_newline(text)), '\t').as_bytes())
}

/// Bytes exactly as given (already quoted or deliberately unmasked, `--show-secrets`).
pub(crate) fn stdout_bytes(bytes: &[u8]) -> io::Result<()> {
    write_to(io::stdout().lock(), bytes)
}

/// Whether an error is the reader going away (`| head`): nothing was lost that anyone reads.
pub(crate) fn is_broken_pipe(e: &io::Error) -> bool {
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
            ("https://u:P4ss@host/t", "https://***@host/t"),
            ("user:P4ss@host:5000", "user:***@host:5000"),
            ("--x=user:P4ss@10.0.0.1:5000", "--x=user:***@10.0.0.1:5000"),
            ("redis://:P4ss@host", "redis://***@host"),
            ("'http://a:b@[::1]:80'", "'http://***@[::1]:80'"),
            ("https://TOKEN@host/x@rev", "https://***@host/x@rev"),
            (
                "{\"u\":\"s3://u:p@ss@h/m\",\"v\":\"a@b\"}",
                "{\"u\":\"s3://***@h/m\",\"v\":\"a@b\"}",
            ),
            ("http://u:pa/ss@host/x", "http://***@host/x"),
            ("http://u:pa#ss@host", "http://***@host"),
            ("x=user:p@ss@host:1", "x=user:***@host:1"),
            ("http://u:pa/x:y@host", "http://***@host"),
            ("//a:b//c:d/e@h //f:g/@k", "//***@h //***@k"),
        ] {
            assert_eq!(mask_userinfo(text), want, "{text}");
            assert_eq!(mask_userinfo(want), want, "masking twice: {want}");
        }
        for same in [
            "mail me@host.org",
            "git@github.com:org/repo",
            "\"${words[@]}\"",
            "a:@host",
            "10:30 @ noon",
            "https://host:8080/org/model@main",
            "http://[::1]:80/a@b",
            "s3://bucket/path@v2 and user@example.org",
        ] {
            assert_eq!(mask_userinfo(same), same);
        }
    }

    /// Every character RFC 3986 allows in a userinfo, and a raw `@`, in a password: none of
    /// it is left, in a URL or a bare address, quoted or not.
    #[test]
    fn a_password_of_any_userinfo_characters_is_hidden_whole() {
        let chars = "-._~!$&'()*+,;=:@";
        for c in chars
            .chars()
            .chain(["%40", "%3A"].iter().flat_map(|s| s.chars()))
        {
            let pw = format!("PW{c}SECRET{c}");
            for text in [
                format!("s3://user:{pw}@host/m"),
                format!("\"http://user:{pw}@127.0.0.1:1/health\""),
                format!("'https://user:{pw}@[::1]:80/x'"),
                format!("user:{pw}@10.0.0.1:5000"),
                format!("--dist-init-addr=user:{pw}@10.0.0.1:5000"),
                format!("addr \"user:{pw}@host:1\", port"),
            ] {
                let m = mask_userinfo(&text);
                assert!(!m.contains("SECRET"), "{text} -> {m}");
                assert!(m.contains("***@"), "{text} -> {m}");
            }
        }
    }

    proptest::proptest! {
        /// Spans are in order and never overlap, whatever the text (the mask splices them).
        #[test]
        fn userinfo_spans_are_ordered_and_disjoint(text in "[a-z0-9:@/#?'\" =%\\[\\]*]{0,60}") {
            let spans = userinfo_spans(&text);
            proptest::prop_assert!(spans.windows(2).all(|w| w[0].end <= w[1].start), "{spans:?}");
            let _ = mask_userinfo(&text);
        }
    }

    proptest::proptest! {
        /// In colour, the only ESCs written are the report's own colour codes, whatever the
        /// data holds (a colour code of its own included); escaped data holds no control.
        #[test]
        fn only_the_launchers_colours_pass(data in "[\\x00-\\x{a0}\\x{202e}\\[;m0-9a-z]{0,40}") {
            let text = sanitize(&format!("{} {data}", paint("1;31", "error")));
            proptest::prop_assert_eq!(text.matches('\x1b').count(), 2, "{:?}", text);
            proptest::prop_assert!(text.starts_with("\x1b[1;31merror\x1b[0m "), "{:?}", text);
            proptest::prop_assert!(!escape(&data).chars().any(is_hidden), "{:?}", data);
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
        assert_eq!(escape("a\u{202e}b\u{2066}"), "a\\u{202e}b\\u{2066}");
        assert_eq!(
            sanitize(&format!("{}\nx\x1b]0;title\x07\t", paint("1", "bold"))),
            "\x1b[1mbold\x1b[0m\nx\\x1b]0;title\\x07\\t"
        );
        // A colour code not made by `paint` is data: escaped, whatever it says.
        assert_eq!(
            sanitize("\x1b[31mred\x1b[8mhidden"),
            "\\x1b[31mred\\x1b[8mhidden"
        );
        let forged = format!("\x1b[{};31m", "0".repeat(20));
        assert_eq!(sanitize(&forged), escape(&forged));
    }
}
