//! The findings the planning pipeline raises itself (version, GPU placement, model files,
//! argument errors, memory).

use super::arguments::Parsed;
use super::gather::Machine;
use crate::facts::hub;
use crate::facts::model::{self, ModelLoad, ModelProblem};
use crate::install::select;
use crate::plan::memory::MemoryPlan;
use crate::rules::{Code, Finding};
use crate::sglang::{self, SglangArgs, release};

/// VER001/VER002: which flag set is in use when it is not the installed release's own.
pub(crate) fn version(machine: &Machine) -> Option<Finding> {
    let selected = &machine.selected;
    if !selected.detected() {
        return Some(Finding::new(
            Code::VER002,
            format!(
                "no installed SGLang found for {} and no --sglang-version; using the newest flag set, {} \
                 (pass --sglang-version VER, or --python PATH to the interpreter that has SGLang)",
                machine.interpreter.path.display(),
                selected.flags.version
            ),
        ));
    }
    if let Some(why) = &selected.modified {
        return Some(modified_install(machine, why));
    }
    if selected.source != select::VersionSource::Fallback {
        return None;
    }
    let older = release::cmp(&selected.requested, &selected.flags.version).is_lt();
    let outside = machine.neighbours.as_deref().is_some_and(|n| n.len() < 2);
    let which = if older {
        "it is older than every embedded one; using the oldest"
    } else {
        "using the nearest older one"
    };
    let tolerated = if outside {
        "every argument error is a warning (ARG002), since no embedded release bounds it on both sides"
    } else {
        "an option or choice a neighbouring embedded release has is a warning (ARG002), not an error"
    };
    let why = selected
        .extract_error
        .as_ref()
        .map(|e| format!(" (its own parser could not be read: {e})"))
        .unwrap_or_default();
    let around = match machine.neighbours.as_deref() {
        Some([older, newer]) => format!(" (between {older} and {newer})"),
        _ => String::new(),
    };
    Some(Finding::new(
        Code::VER001,
        format!(
            "SGLang {} has no embedded flag set{why}; {which}, {}: the check is approximate{around}: \
             {tolerated}, and no fix renames an option",
            selected.requested, selected.flags.version
        ),
    ))
}

/// VER003 (the install's own parser was read) or VER001 (it could not be: approximate) for an
/// install that is not the release its version names.
fn modified_install(machine: &Machine, why: &str) -> Finding {
    let selected = &machine.selected;
    let v = &selected.requested;
    match &selected.extract_error {
        None => {
            let from = match &selected.flags_from {
                select::FlagsFrom::Extracted {
                    cache: Some(c),
                    ran_python: false,
                } => format!("from its cache {}", c.display()),
                select::FlagsFrom::Extracted { cache: Some(c), .. } => {
                    format!("now, and cached in {}", c.display())
                }
                _ => "now".to_owned(),
            };
            let placed = selected.flags.reads_as().map(|era| {
                format!(
                    "; its version names no release (an untagged build), and its options place it after SGLang {era}, so it is checked as a build after {era}"
                )
            });
            Finding::new(
                Code::VER003,
                format!(
                    "SGLang {v} here is {why}: its options and environment registry were read from the install {from}, not from the {v} release's data{}",
                    placed.unwrap_or_default()
                ),
            )
        }
        Some(e) => Finding::new(
            Code::VER001,
            format!(
                "SGLang {v} here is {why}, and its own parser could not be read ({e}): the {} release's data stands in, approximately: an option or choice a later release has, or none has (this install may add its own), is a warning (ARG002), not an error, and no fix renames an option",
                selected.flags.version
            ),
        ),
    }
}

/// ARG003: planned for another machine, its `--config` file is not on this one.
pub(crate) fn config_elsewhere(file: String) -> Finding {
    Finding::new(
        Code::ARG003,
        format!(
            "--config {file}: no such file on this machine; planned for the machine the topology file describes, where it may be, the line is checked without the options it adds: check there, or copy the file to the same path here"
        ),
    )
}

/// MEM001/MEM002: the model named could not be read, or its files make no sense; HUB00x: it
/// is not on disk and the Hub did not give its files.
pub(crate) fn model(load: Option<&ModelLoad>, this_machine: bool) -> Option<Finding> {
    let problem = load?.problem.as_ref()?;
    if let ModelProblem::Unavailable(model::Unavailable::NotCached { model_path }) = problem
        && this_machine
        && is_local_path(model_path)
    {
        return Some(Finding::new(
            Code::MEM017,
            format!(
                "{model_path}: no such directory on this machine, and a path is no Hugging Face repo id: SGLang cannot load it; point --model-path at the model's directory"
            ),
        ));
    }
    let (code, todo) = match problem {
        ModelProblem::Unavailable(model::Unavailable::Missing { .. }) => (
            Code::MEM001,
            "; SGLang loads the model from there too: point --model-path at the directory that holds config.json",
        ),
        ModelProblem::Unavailable(_) => (
            Code::MEM001,
            "; memory is planned without the model: point --model-path at a local copy, or let the launcher ask the Hub (--online with --topology)",
        ),
        ModelProblem::Invalid(model::Invalid::OverrideNotAnObject) => (
            Code::MEM002,
            ": write it as one, like '{\"max_position_embeddings\": 32768}'",
        ),
        ModelProblem::Invalid(_) => (
            Code::MEM002,
            "; the model's size is estimated: fix or download the file again",
        ),
        ModelProblem::Hub(h) => (hub_code(h), ""),
    };
    Some(Finding::new(code, format!("{problem}{todo}")))
}

/// Written as a file-system path (absolute, `./`, `../`, `~/`), not as a repo id.
fn is_local_path(model_path: &str) -> bool {
    ["/", "./", "../", "~/"]
        .iter()
        .any(|p| model_path.starts_with(p))
}

/// HUB00x for the separate speculative draft: SGLang downloads it too, and fails the same way.
/// Its other problems are SPEC011's.
pub(crate) fn draft(load: Option<&ModelLoad>) -> Option<Finding> {
    match load?.problem.as_ref()? {
        ModelProblem::Hub(h) => Some(Finding::new(hub_code(h), format!("draft model: {h}"))),
        _ => None,
    }
}

/// Refused (401/403) → HUB001, not there (404) → HUB002, anything else → HUB003.
fn hub_code(problem: &hub::HubProblem) -> Code {
    match problem {
        hub::HubProblem::Denied { .. } => Code::HUB001,
        hub::HubProblem::NotFound { .. } => Code::HUB002,
        _ => Code::HUB003,
    }
}

/// A `--mem-fraction-static` outside (0, 1): nothing to plan.
pub(crate) fn bad_fraction(args: &SglangArgs) -> Option<f64> {
    crate::resolve::decided::user_fraction(args)
        .filter(|f| !(f.is_finite() && *f > 0.0 && *f < 1.0))
}

/// MEM008: say so instead of printing nonsense.
pub(crate) fn fraction(f: f64) -> Finding {
    let f = if f.is_nan() {
        "nan".to_owned()
    } else if f.abs() >= 1e4 {
        format!("{f:e}")
    } else {
        f.to_string()
    };
    Finding::new(
        Code::MEM008,
        format!(
            "--mem-fraction-static {f} is not a fraction of GPU memory: SGLang needs a value between 0 \
             and 1 (its own default here is about 0.8); leave it out to get the planned value"
        ),
    )
}

/// MEM007: the KV cache holds less than one request at the context length (a server that does
/// not fit at all is MEM005's). An FP8 KV cache is suggested only where the cache in effect is
/// wider (`kv_dtype`: SGLang's, e.g. DeepSeek-V4's own FP8), as `fp8_kv` (the one the model takes).
pub(crate) fn one_request(
    memory: Option<&MemoryPlan>,
    context_len: Option<u64>,
    kv_dtype: Option<&str>,
    fp8_kv: &str,
) -> Option<Finding> {
    let m = memory.filter(|m| m.fits != Some(false))?;
    let ctx_len = context_len?;
    let tokens = m.kv_cache_tokens.filter(|&t| t < ctx_len)?;
    let holds = match m.observed_use.as_ref().filter(|u| u.started) {
        Some(u) => format!(
            "this line started on this machine on {} with a KV cache of {tokens} tokens",
            crate::observe::date(u.at)
        ),
        None => format!("the KV cache holds about {tokens} tokens"),
    };
    let fp8 = if kv_dtype.is_none_or(|k| !k.starts_with("fp8") && !k.contains("fp4")) {
        format!(" use --kv-cache-dtype {fp8_kv},")
    } else {
        String::new()
    };
    Some(Finding::new(
        Code::MEM007,
        format!(
            "{holds}, less than one request at the context length {ctx_len}; shorten \
             --context-length,{fp8} a larger --tp, or an FP8 / 4-bit checkpoint"
        ),
    ))
}

/// ARG001 for each argument error that stands, with argparse's suggestions: SGLang's own first
/// (naming the options the other checks then read without), then what SGLang says once those
/// before are fixed; ARG002 for each a neighbouring release explains (approximate mode).
pub(crate) fn arguments(args: &SglangArgs, parsed: &Parsed, machine: &Machine) -> Vec<Finding> {
    let mut out = Vec::new();
    for (i, p) in parsed.blocking.iter().enumerate() {
        let err = &p.error;
        let hint = match err.suggestions.as_slice() {
            [] => String::new(),
            [one] => format!("; did you mean {one}?"),
            many => format!("; did you mean one of {}?", many.join(", ")),
        };
        let after = match (i, parsed.skipped.as_slice()) {
            (0, []) => String::new(),
            (0, skipped) => format!(
                "; the other findings read the line without {}",
                skipped.join(", ")
            ),
            _ => " (what SGLang says once the error above is fixed)".to_owned(),
        };
        out.push(Finding::new(
            Code::ARG001,
            format!("{}{hint}{}{after}", err.message, config_context(args, err)),
        ));
    }
    out.extend(parsed.tolerated.iter().map(|t| {
        let in_use = &args.flags.version;
        let what = if t.error.message.starts_with("unrecognized arguments: ") {
            format!("not an option of SGLang {in_use}")
        } else {
            format!("SGLang {in_use} says \"{}\"", t.error.message)
        };
        let requested = &machine.selected.requested;
        let why = if t.release.is_empty() && machine.selected.modified.is_some() {
            let close = match t.error.suggestions.as_slice() {
                [] => String::new(),
                names => format!("; if it is a typo of {}, fix it", names.join(" or ")),
            };
            format!(
                "and no embedded release has it; this install is not the {requested} release and its own parser could not be read, so it may be the install's own: not checked (a typo fails at once in SGLang's argparse){close}"
            )
        } else if t.release.is_empty() {
            format!(
                "no embedded release bounds SGLang {requested} on both sides, so it is not checked"
            )
        } else {
            format!(
                "but SGLang {} accepts it; SGLang {} lies between them, so it is not checked",
                t.release, machine.selected.requested
            )
        };
        Finding::new(
            Code::ARG002,
            format!("`{}`: {what}, {why}", t.tokens.join(" ")),
        )
    }));
    out
}

/// The argument findings less an ARG001 whose unrecognized options the FLAG findings already
/// name, each with its release history: one mistake, one message.
pub(crate) fn unexplained(found: Vec<Finding>, rules: &[Finding]) -> Vec<Finding> {
    let named = |token: &str| {
        rules.iter().any(|f| {
            matches!(f.code, Code::FLAG001 | Code::FLAG004 | Code::FLAG007)
                && f.message.starts_with(&format!("{token} "))
        })
    };
    found
        .into_iter()
        .filter(|h| {
            let Some(list) = (h.code == Code::ARG001)
                .then(|| h.message.strip_prefix("unrecognized arguments: "))
                .flatten()
            else {
                return true;
            };
            let list = list.split("; ").next().unwrap_or(list);
            // argparse lists an unknown option's values after it: they go with its finding.
            let mut option_named = false;
            !list.split_whitespace().all(|t| {
                if t.starts_with('-') {
                    option_named = named(t);
                }
                option_named
            })
        })
        .collect()
}

/// Where a `--config` file is involved in an argument error, says so: SGLang's own messages
/// for a file it cannot use do not always name it, and options the file adds are not on the
/// command line the user sees. Never quotes the file's values (they may be secrets).
fn config_context(args: &SglangArgs, err: &sglang::ArgError) -> String {
    if let Some(c) = &args.config {
        return format!(" (the arguments include those from --config {})", c.file);
    }
    let strs: Vec<String> = args
        .tokens
        .iter()
        .map(|t| t.to_string_lossy().into_owned())
        .collect();
    match sglang::config_file::locate(args.flags, &strs) {
        Ok(Some((_, file))) if !err.message.contains(&file) => {
            format!(" (reading --config {file})")
        }
        _ => String::new(),
    }
}
