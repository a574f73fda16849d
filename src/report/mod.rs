//! Rendering a plan: the compact human report, the plan/v1 JSON, and the final command line.

pub mod human;
pub mod topology;

use std::ffi::OsString;
use std::io::IsTerminal;

use crate::plan::Outcome;
use crate::plan::json::Plan;
use crate::secrets;

pub use human::{gpu_summary, human};
pub use topology::topology;

/// Colour only on a terminal, and never with `NO_COLOR` set (https://no-color.org).
pub fn use_color(stream: &impl IsTerminal) -> bool {
    stream.is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// The plan/v1 object, pretty-printed (secrets are already masked in the plan).
pub fn json(plan: &Plan) -> String {
    // Serialising plain data structs cannot fail.
    serde_json::to_string_pretty(plan).expect("plan serialises")
}

/// The command that runs SGLang: interpreter, `-m sglang.launch_server`, final arguments.
pub fn argv(outcome: &Outcome) -> Vec<OsString> {
    let mut v: Vec<OsString> = vec![
        outcome.interpreter.path.clone().into(),
        "-m".into(),
        "sglang.launch_server".into(),
    ];
    v.extend(outcome.args.tokens.iter().cloned());
    v
}

/// The final command as one POSIX-shell-quoted line that `sh` splits back into the same words.
/// Secret values are `***` unless `show_secrets`.
pub fn command_line(outcome: &Outcome, show_secrets: bool) -> String {
    let args: Vec<String> = if show_secrets {
        outcome
            .args
            .tokens
            .iter()
            .map(|t| t.to_string_lossy().into_owned())
            .collect()
    } else {
        secrets::mask_tokens(&outcome.args, &outcome.args.tokens)
    };
    let head = [
        outcome.interpreter.path.to_string_lossy().into_owned(),
        "-m".to_owned(),
        "sglang.launch_server".to_owned(),
    ];
    shell_words::join(head.iter().chain(args.iter()))
}
