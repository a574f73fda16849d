//! Shell completion at run time. The candidates for a command line are computed here so that
//! bash, zsh and fish give the same answers from one source: the clap definition for the launcher's part (hidden commands
//! and options left out), and for SGLang's part the flag set of the release the line would run
//! (its options, and each option's choices). The shell scripts ([`scripts`]) only call
//! `sglang-launch __complete` and hand the candidates to the shell.

mod line;
mod reply;
pub(crate) mod scripts;
mod sglang;
mod values;

use clap::{Arg, Command};

use crate::invocation::cli::{self, CompleteArgs};

pub(crate) use reply::Reply;

/// The reply to `__complete`: for `--line`, bash's line up to the cursor; else the words.
pub(crate) fn answer(a: &CompleteArgs) -> Reply {
    let words = match &a.line {
        Some(l) => line::words(l),
        None => a.words.clone(),
    };
    complete(&words)
}

/// Candidates for the last of `words` (the program's name first).
pub(crate) fn complete(words: &[String]) -> Reply {
    let Some((current, done)) = words.split_last() else {
        return Reply::none("");
    };
    let done = done.get(1..).unwrap_or_default();
    let mut root = cli::command();
    root.build();
    let mut cmd = &root;
    let mut i = 0;
    while cmd.has_subcommands() {
        let Some(word) = done.get(i) else {
            return first_word(cmd, std::ptr::eq(cmd, &root), current);
        };
        match cmd.find_subcommand(word) {
            Some(sub) => cmd = sub,
            // The drop-in form: every word is SGLang's.
            None if std::ptr::eq(cmd, &root) => {
                return sglang::complete(&values::Line::default(), done, current, &[]);
            }
            None => return Reply::none(current),
        }
        i += 1;
    }
    in_command(cmd, &done[i..], current)
}

/// The word right after a command that has subcommands: their names, or (the root, a word
/// starting with `-`) the drop-in form's SGLang options and the launcher's own flags.
fn first_word(cmd: &Command, root: bool, current: &str) -> Reply {
    if current.starts_with('-') {
        let own = options(cmd, &[]);
        if root {
            let names: Vec<String> = own.iter().map(|(o, _)| o.clone()).collect();
            let mut r = sglang::complete(&values::Line::default(), &[], current, &names);
            r.items.splice(
                0..0,
                own.into_iter().filter(|(o, _)| o.starts_with(current)),
            );
            return r;
        }
        return Reply::words("", current, own);
    }
    let subs = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(|s| (s.get_name().to_owned(), about(s.get_about())));
    Reply::words("", current, subs)
}

/// Where the words after a leaf command stand: the launcher's options typed so far (with their
/// values), the positionals, and where SGLang's part begins.
struct Scan<'c> {
    line: values::Line,
    /// Options typed, by id (a repeatable one is offered again).
    typed: Vec<String>,
    positionals: usize,
    /// The option whose value the current word is.
    pending: Option<&'c Arg>,
    /// Index of SGLang's first word, and whether `--` opened it.
    sglang: Option<(usize, bool)>,
}

fn takes_sglang_args(cmd: &Command) -> bool {
    cmd.get_arguments()
        .any(|a| a.is_positional() && a.get_value_names().is_some_and(|v| v[0] == "SGLANG_ARGS"))
}

fn find_long<'c>(cmd: &'c Command, name: &str) -> Option<&'c Arg> {
    cmd.get_arguments().find(|a| a.get_long() == Some(name))
}

fn scan<'c>(cmd: &'c Command, words: &[String]) -> Scan<'c> {
    let planning = takes_sglang_args(cmd);
    let mut s = Scan {
        line: values::Line::default(),
        typed: Vec::new(),
        positionals: 0,
        pending: None,
        sglang: None,
    };
    for (i, w) in words.iter().enumerate() {
        if let Some(arg) = s.pending.take() {
            s.line.set(arg.get_id().as_str(), w);
            continue;
        }
        if planning && w == "--" {
            s.sglang = Some((i + 1, true));
            break;
        }
        let arg = match w.strip_prefix("--") {
            Some(long) => find_long(cmd, long.split('=').next().unwrap_or(long)),
            None => w
                .strip_prefix('-')
                .and_then(|x| x.chars().next())
                .and_then(|c| cmd.get_arguments().find(|a| a.get_short() == Some(c))),
        };
        match arg {
            Some(a) => {
                s.typed.push(a.get_id().to_string());
                match w.split_once('=') {
                    Some((_, v)) => s.line.set(a.get_id().as_str(), v),
                    None if a.get_action().takes_values() => s.pending = Some(a),
                    None => {}
                }
            }
            None if planning => {
                s.sglang = Some((i, false));
                break;
            }
            None if !w.starts_with('-') => s.positionals += 1,
            None => {}
        }
    }
    s
}

fn in_command(cmd: &Command, words: &[String], current: &str) -> Reply {
    let s = scan(cmd, words);
    if let Some((start, _)) = s.sglang {
        return sglang::complete(&s.line, &words[start..], current, &[]);
    }
    if let Some(arg) = s.pending {
        return values::of(arg, &s.line, "", current);
    }
    if let Some((name, value)) = current.strip_prefix("--").and_then(|c| c.split_once('=')) {
        return match find_long(cmd, name) {
            Some(arg) if arg.get_action().takes_values() => {
                values::of(arg, &s.line, &format!("--{name}="), value)
            }
            None if takes_sglang_args(cmd) => sglang::complete(&s.line, &[], current, &[]),
            _ => Reply::none(current),
        };
    }
    let positional = cmd
        .get_arguments()
        .filter(|a| a.is_positional() && !a.is_hide_set())
        .nth(s.positionals);
    let own = options(cmd, &s.typed);
    if takes_sglang_args(cmd) {
        // SGLang's part may start at this word; a launcher option of the same name wins.
        let names: Vec<String> = own.iter().map(|(o, _)| o.clone()).collect();
        let mut r = sglang::complete(&s.line, &[], current, &names);
        r.items.splice(
            0..0,
            own.into_iter().filter(|(o, _)| o.starts_with(current)),
        );
        return r;
    }
    match positional {
        Some(arg) if !current.starts_with('-') => values::of(arg, &s.line, "", current),
        _ => Reply::words("", current, own),
    }
}

/// The command's visible long options (and `--help`), each typed one only if repeatable.
fn options(cmd: &Command, typed: &[String]) -> Vec<(String, String)> {
    cmd.get_arguments()
        .filter(|a| !a.is_hide_set() && !a.is_positional())
        .filter(|a| {
            let repeatable = matches!(a.get_action(), clap::ArgAction::Append);
            repeatable || !typed.iter().any(|t| t == a.get_id().as_str())
        })
        .filter_map(|a| Some((format!("--{}", a.get_long()?), about(a.get_help()))))
        .collect()
}

fn about(help: Option<&clap::builder::StyledStr>) -> String {
    help.map(|h| h.to_string()).unwrap_or_default()
}
