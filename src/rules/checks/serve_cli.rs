//! Options of `sglang serve`'s own front end, which picks a server before the server's parser
//! reads the rest. `python -m sglang.launch_server`, what the launcher starts, has none of them.

use std::ffi::OsString;

use super::*;
use crate::rules::{ArgEdit, Fix};
use crate::sglang::opt;

/// `sglang serve`'s choice of server (`llm`, `diffusion`, `auto`), read from 0.5.10rc0 (the
/// rule's versions).
const MODEL_TYPE: &str = "--model-type";

/// The line's words up to a `--`.
fn words<'a>(ctx: &Context<'a>) -> Vec<&'a str> {
    (ctx.user().command_line().effective_iter())
        .filter_map(|t| t.to_str())
        .take_while(|t| *t != "--")
        .collect()
}

/// The values the line gives `--model-type` (`--model-type V` or `--model-type=V`).
fn model_types(ctx: &Context) -> Vec<String> {
    let tokens = words(ctx);
    let mut out = vec![];
    for (i, t) in tokens.iter().enumerate() {
        if *t == MODEL_TYPE {
            out.push(tokens.get(i + 1).map_or(String::new(), |v| (*v).to_owned()));
        } else if let Some(v) = t.strip_prefix(MODEL_TYPE).and_then(|r| r.strip_prefix('=')) {
            out.push(v.to_owned());
        }
    }
    out
}

/// FLAG008: `sglang serve`'s `--model-type` on a line for the server the launcher starts.
pub(crate) fn serve_model_type(ctx: &Context) -> Vec<Fired> {
    if ctx.user().knows(MODEL_TYPE) {
        return vec![];
    }
    let types = model_types(ctx);
    let Some(first) = types.first() else {
        return vec![];
    };
    if types.iter().any(String::is_empty) {
        return vec![Fired::new(format!(
            "{MODEL_TYPE} without a value: `sglang serve` itself stops on it, and the server the \
             launcher starts (python -m sglang.launch_server) has no such option"
        ))];
    }
    if let Some(other) = types.iter().find(|v| !matches!(v.as_str(), "llm" | "auto")) {
        return vec![Fired::new(format!(
            "{MODEL_TYPE} {other} is `sglang serve`'s choice of another server than the LLM \
             server the launcher starts (python -m sglang.launch_server, whose parser has no \
             {MODEL_TYPE}); serve that model with sglang serve"
        ))];
    }
    let fired = Fired::new(format!(
        "{MODEL_TYPE} {first} is `sglang serve`'s choice of server: the launcher starts that \
         server itself (python -m sglang.launch_server), whose parser has no {MODEL_TYPE} and \
         stops on it"
    ));
    vec![fired.with_fix(Fix {
        summary: format!("removed {MODEL_TYPE} {first}"),
        args: vec![ArgEdit::DropOption {
            written: MODEL_TYPE.into(),
        }],
        env: vec![],
    })]
}

/// The user's bare first word, if the line starts with one (serve reads it before a config
/// file's options, as the fix writes `--model-path` before it).
fn bare_first(tokens: &[OsString]) -> Option<&str> {
    tokens
        .first()
        .and_then(|t| t.to_str())
        .filter(|t| !t.starts_with('-'))
}

/// `sglang serve`'s model path on a line that starts with it, after serve's own leading
/// `--model-type V` (which FLAG008's fix takes off first, as serve does): the model FLAG009's
/// fix names `--model-path`, for the planner to read.
pub(crate) fn serve_model_path(tokens: &[OsString]) -> Option<&str> {
    let first = tokens.first().and_then(|t| t.to_str())?;
    let skip = if first == MODEL_TYPE {
        2
    } else if first.starts_with(&format!("{MODEL_TYPE}=")) {
        1
    } else {
        0
    };
    bare_first(tokens.get(skip..)?)
}

/// FLAG009: a bare first value, `sglang serve`'s model path (from 0.5.16, the rule's versions),
/// on a line for the server the launcher starts, whose parser has no positional.
pub(crate) fn serve_positional_model(ctx: &Context) -> Vec<Fired> {
    // serve takes its --model-type off first: FLAG008's fix does the same, and this then fires.
    let Some(model) = bare_first(&ctx.user().command_line().tokens) else {
        return vec![];
    };
    let option = opt::MODEL_PATH;
    let fired = Fired::new(format!(
        "`{model}` first on the line is `sglang serve`'s model path: the launcher starts the \
         server itself (python -m sglang.launch_server), whose parser takes it only as {option} \
         and stops on a bare value"
    ));
    vec![fired.with_fix(Fix {
        summary: format!("set {option} {model} (written as sglang serve's first value)"),
        args: vec![ArgEdit::NamePositional {
            option: option.into(),
        }],
        env: vec![],
    })]
}
