//! Rendering a plan: the compact human report, the plan/v1 JSON, and the final command line
//! (never wrapped: it is meant to be copied).

pub(crate) mod chosen;
pub(crate) mod human;
pub mod memory;
pub mod topology;
pub(crate) mod upgrade;
pub(crate) mod wrap;

use std::ffi::OsString;
use std::io::IsTerminal;
use std::os::fd::AsFd;

use crate::plan::Outcome;
use crate::plan::v1::Plan;
use crate::secrets;

pub use human::human;
pub(crate) use topology::topology;

/// How to write the human report for one stream: in colour or not, wrapped to a width or not.
/// Built from the stream by [`output`] (or its older name [`use_color`]); a plain `bool` means
/// colour or not, never wrapped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Output {
    pub(crate) color: bool,
    pub(crate) width: Option<usize>,
}

impl From<bool> for Output {
    fn from(color: bool) -> Output {
        Output { color, width: None }
    }
}

/// Colour only on a terminal that can show it, and never with `NO_COLOR` set (https://no-color.org);
/// lines wrapped to `COLUMNS` when it is set, else to the terminal's width when the stream is one.
pub(crate) fn output(stream: &(impl IsTerminal + AsFd)) -> Output {
    let tty = stream.is_terminal();
    let columns = std::env::var("COLUMNS").ok();
    Output {
        color: tty
            && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
            && std::env::var_os("TERM").is_none_or(|t| t != "dumb"),
        width: wrap::width(
            columns.as_deref(),
            tty.then(|| terminal_size::terminal_size_of(stream))
                .flatten()
                .map(|(w, _)| usize::from(w.0)),
        ),
    }
}

/// [`output`] under the name the call sites know.
pub(crate) fn use_color(stream: &(impl IsTerminal + AsFd)) -> Output {
    output(stream)
}

/// The plan/v1 object, pretty-printed (secrets are already masked in the plan).
pub(crate) fn json(plan: &Plan) -> String {
    // Serialising plain data structs cannot fail.
    crate::out::json_safe(serde_json::to_string_pretty(plan).expect("plan serialises"))
}

/// The command that runs SGLang: interpreter, `-m sglang.launch_server`, final arguments.
pub(crate) fn argv(outcome: &Outcome) -> Vec<OsString> {
    let mut v: Vec<OsString> = vec![
        outcome.interpreter.path.clone().into(),
        "-m".into(),
        "sglang.launch_server".into(),
    ];
    v.extend(outcome.args.tokens.iter().cloned());
    v
}

/// The final command as one shell-quoted line that `bash` splits back into the same words,
/// byte for byte (words that are not UTF-8 or hold control characters as `$'…'`). Secret
/// values are `***` unless `show_secrets`.
pub fn command_line(outcome: &Outcome, show_secrets: bool) -> String {
    shell_line(
        &outcome.interpreter.path,
        &outcome.args,
        (&outcome.plan.env, &outcome.env),
        show_secrets,
    )
}

/// `python -m sglang.launch_server ARGS` as one shell-quoted line, behind the environment
/// `changes` (masked values; the real ones are read from `env` with `show_secrets`).
pub(crate) fn shell_line(
    python: &std::path::Path,
    args: &crate::sglang::SglangArgs,
    (changes, env): (&crate::plan::v1::EnvChanges, &crate::facts::Env),
    show_secrets: bool,
) -> String {
    let shown: Vec<OsString> = if show_secrets {
        args.tokens.clone()
    } else {
        secrets::mask_tokens(args, &args.tokens)
    };
    // Environment changes travel with the command (`env -u A B=1 python …`), so a copied
    // line runs what the launcher would have run.
    let mut words: Vec<OsString> = Vec::new();
    if !changes.set.is_empty() || !changes.unset.is_empty() {
        words.push("env".into());
        for name in &changes.unset {
            words.extend(["-u".into(), name.into()]);
        }
        for (name, masked) in &changes.set {
            let value = match env.get(name) {
                Some(real) if show_secrets => real,
                _ => masked.as_str(),
            };
            words.push(format!("{name}={value}").into());
        }
    }
    words.extend([
        python.as_os_str().to_owned(),
        "-m".into(),
        "sglang.launch_server".into(),
    ]);
    words.extend(shown);
    words
        .iter()
        .map(|w| {
            if show_secrets {
                quote(w)
            } else {
                quote_masked(w)
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// [`quote`] of the word with the registered secrets hidden first: a secret reused as another
/// option's value no longer reads as itself once quoted (`'\''` for a `'` in it), so the output
/// layer could not find it there.
pub(crate) fn quote_masked(word: &std::ffi::OsStr) -> String {
    match word.to_str() {
        Some(s) => quote(std::ffi::OsStr::new(&crate::out::redact(s))),
        None => quote(word),
    }
}

/// Words as one line for any POSIX shell, each as [`quote_masked`] writes it.
pub(crate) fn shell_join(words: &[String]) -> String {
    let quoted: Vec<String> = words
        .iter()
        .map(|w| quote_masked(std::ffi::OsStr::new(w)))
        .collect();
    quoted.join(" ")
}

/// One word for any POSIX shell (dash included): as `shell_words` quotes it when it is
/// printable UTF-8, else as `"$(printf '…')"` with `\ooo` for each byte that is not. The output
/// of a command substitution loses its trailing newlines, so a word's own trailing newlines
/// follow it quoted, literally (the one case where the line breaks).
pub(crate) fn quote(word: &std::ffi::OsStr) -> String {
    use std::os::unix::ffi::OsStrExt;
    match word.to_str() {
        Some(s) if !s.chars().any(char::is_control) => shell_words::quote(s).into_owned(),
        _ => {
            let bytes = word.as_bytes();
            let end = bytes.iter().rposition(|b| *b != b'\n').map_or(0, |i| i + 1);
            let (body, newlines) = (&bytes[..end], bytes.len() - end);
            let mut out = String::from("\"$(printf '");
            // A format that starts with `-` would be read as an option.
            let body = match body.strip_prefix(b"-") {
                Some(rest) => {
                    out.push_str("\\055");
                    rest
                }
                None => body,
            };
            for chunk in body.utf8_chunks() {
                for c in chunk.valid().chars() {
                    push_format_char(&mut out, c);
                }
                for byte in chunk.invalid() {
                    out.push_str(&format!("\\{byte:03o}"));
                }
            }
            out.push_str("')\"");
            if newlines > 0 {
                out.push('\'');
                out.push_str(&"\n".repeat(newlines));
                out.push('\'');
            }
            out
        }
    }
}

/// `c` inside a single-quoted `printf` format: itself, or octal escapes for what the shell or
/// `printf` would read otherwise (`'`, `\`, `%`) and for control characters.
fn push_format_char(out: &mut String, c: char) {
    if c.is_control() || matches!(c, '\'' | '\\' | '%') {
        let mut b = [0; 4];
        for byte in c.encode_utf8(&mut b).bytes() {
            out.push_str(&format!("\\{byte:03o}"));
        }
    } else {
        out.push(c);
    }
}
