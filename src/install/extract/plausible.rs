//! What a flag set read from an install (fresh from the extractor or from a cache file) must
//! look like before the parser and the planner use it: argparse's shapes, bounded sizes, and
//! defaults SGLang could ship. Whatever runs the extractor or writes the cache can put anything
//! in it; the launcher never plans from text that no SGLang parser could have produced.

use crate::sglang::opt;
use serde_json::Value;

use crate::sglang::envs::InstallEnvs;
use crate::sglang::flagset::FlagSet;

const MAX_ACTIONS: usize = 4096;
const MAX_NAME: usize = 128;
const MAX_CHOICES: usize = 1024;
/// A default, `const` or choice as JSON text: SGLang's longest is a few dozen characters.
const MAX_VALUE_JSON: usize = 4096;
/// Token counts, batch sizes and parallel degrees beyond this are no SGLang default; the memory
/// planner sizes buffers from them.
const MAX_SIZE_DEFAULT: u64 = 1 << 31;

/// Defaults the planner sizes memory from: null (SGLang decides) or a plausible count.
const SIZE_DESTS: &[&str] = &[
    "context_length",
    "max_total_tokens",
    "max_prefill_tokens",
    "chunked_prefill_size",
    "max_running_requests",
    "cuda_graph_max_bs",
    "cuda_graph_max_bs_decode",
    "page_size",
    "tp_size",
    "pp_size",
    "dp_size",
    "ep_size",
];

/// `--model-path`, `-h`: dashes, then letters, digits, `-`, `_`, `.`.
fn option_string(s: &str) -> bool {
    let body = s.trim_start_matches('-');
    (1..=2).contains(&(s.len() - body.len()))
        && s.len() <= MAX_NAME
        && body.starts_with(|c: char| c.is_ascii_alphanumeric())
        && body
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

fn identifier(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_NAME
        && !s.starts_with(|c: char| c.is_ascii_digit())
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Printable ASCII, short: a version, a program name, an exception's name.
fn plain(s: &str, max: usize) -> bool {
    s.len() <= max && s.chars().all(|c| c.is_ascii_graphic() || c == ' ')
}

fn small(v: &Value) -> bool {
    serde_json::to_string(v).is_ok_and(|t| t.len() <= MAX_VALUE_JSON)
}

fn size_default(v: &Value) -> bool {
    v.is_null() || v.as_u64().is_some_and(|n| n <= MAX_SIZE_DEFAULT)
}

/// `Err(what is wrong)` for a flag set no SGLang parser could have produced.
pub(super) fn flag_set(set: &FlagSet) -> Result<(), String> {
    if set.version.trim().is_empty() || !plain(&set.version, 64) || set.version.contains(' ') {
        return Err("no version, or not a plain version string".into());
    }
    if !plain(&set.prog, MAX_NAME) {
        return Err("the program name is not plain text".into());
    }
    if set.actions.is_empty() || set.actions.len() > MAX_ACTIONS {
        return Err(format!(
            "{} options (an SGLang parser has 1 to {MAX_ACTIONS})",
            set.actions.len()
        ));
    }
    for a in &set.actions {
        let name = a
            .option_strings
            .first()
            .map_or(a.dest.as_str(), String::as_str);
        let bad = |what: &str| Err(format!("option {:?}: {what}", clip(name)));
        if a.option_strings.len() > 16 || !a.option_strings.iter().all(|o| option_string(o)) {
            return bad("not an option string argparse takes");
        }
        if !identifier(&a.dest) {
            return bad("its destination is not an identifier");
        }
        let choices = a.choices.as_deref().unwrap_or(&[]);
        if choices.len() > MAX_CHOICES || !choices.iter().all(|c| !c.is_object() && small(c)) {
            return bad("too many or too large choices");
        }
        if !small(&a.default) || !small(&a.r#const) {
            return bad("its default or constant is too large");
        }
        if SIZE_DESTS.contains(&a.dest.as_str()) && !size_default(&a.default) {
            return bad("its default is no size SGLang ships");
        }
        let names = [&a.deprecated_for, &a.deprecated_exception];
        if !names
            .iter()
            .all(|n| n.as_deref().is_none_or(|n| plain(n, MAX_NAME)))
        {
            return bad("its deprecation note is not plain text");
        }
    }
    if set.action(opt::MODEL_PATH).is_none() {
        return Err("no --model-path option".into());
    }
    Ok(())
}

/// `Err(what is wrong)` for an environment registry no `environ.py` could have produced.
pub(super) fn envs(e: &InstallEnvs) -> Result<(), String> {
    if e.registry.len() > MAX_ACTIONS || e.deprecated.len() > MAX_ACTIONS {
        return Err("too many environment variables".into());
    }
    let vars = e.registry.iter().all(|v| {
        identifier(&v.name)
            && plain(&v.ty, 16)
            && small(&v.default)
            && v.alias.as_deref().is_none_or(identifier)
    });
    let deprecated = e
        .deprecated
        .iter()
        .all(|d| identifier(&d.name) && d.replacement.as_deref().is_none_or(identifier));
    if vars && deprecated {
        Ok(())
    } else {
        Err("an environment variable's name, type or default is not plausible".into())
    }
}

/// At most 64 characters of a name, for messages.
fn clip(s: &str) -> String {
    let mut out: String = s.chars().take(64).collect();
    if out.len() < s.len() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sglang::flagset;

    #[test]
    fn every_embedded_flag_set_is_plausible() {
        for v in flagset::KNOWN_VERSIONS {
            assert_eq!(flag_set(flagset::get(v).unwrap()), Ok(()), "{v}");
        }
    }

    #[test]
    fn implausible_sets_are_named() {
        let base = flagset::get("0.5.23").unwrap().clone();
        let with = |f: &dyn Fn(&mut FlagSet)| {
            let mut s = FlagSet::new(
                base.version.clone(),
                base.prog.clone(),
                base.allow_abbrev,
                base.actions.clone(),
            );
            f(&mut s);
            flag_set(&s)
        };
        assert_eq!(with(&|_| {}), Ok(()));
        let e = with(&|s| {
            let a = s
                .actions
                .iter_mut()
                .find(|a| a.dest == "context_length")
                .unwrap();
            a.default = 1_000_000_000_000u64.into();
        })
        .unwrap_err();
        assert!(
            e.contains("--context-length") && e.contains("no size"),
            "{e}"
        );
        let e = with(&|s| s.actions[1].option_strings[0] = "--evil\u{1b}[31m".into()).unwrap_err();
        assert!(e.contains("not an option string"), "{e}");
        let e = with(&|s| s.actions[1].default = "x".repeat(10_000).into()).unwrap_err();
        assert!(e.contains("too large"), "{e}");
        let e = with(&|s| s.version = "0.9\n".into()).unwrap_err();
        assert!(e.contains("version"), "{e}");
        let e = with(&|s| {
            let a = s.actions[1].clone();
            s.actions.extend(std::iter::repeat_n(a, MAX_ACTIONS));
        })
        .unwrap_err();
        assert!(e.contains("options"), "{e}");
    }
}
