//! Reading the options resolution uses, bounded, in whichever spelling the release knows.

use serde_json::Value;

use crate::sglang::{SglangArgs, opt};

/// The first of these option spellings that this version knows (flags were renamed over time).
pub(in crate::resolve) fn known<'a>(args: &SglangArgs, names: &[&'a str]) -> Option<&'a str> {
    names.iter().copied().find(|n| args.knows(n))
}

/// Integer arguments are bounded so that no user value can overflow the arithmetic below
/// (SGLang would reject or OOM on such values long before they matter here).
pub(crate) const ARG_BOUND: i64 = 1 << 20;

pub(in crate::resolve) fn bounded(v: i64) -> i64 {
    v.clamp(-ARG_BOUND, ARG_BOUND)
}

/// `args.int(option)`, bounded.
pub(crate) fn int_arg(args: &SglangArgs, option: &str) -> Option<i64> {
    args.int(option).map(bounded)
}

pub(in crate::resolve) fn int_of(args: &SglangArgs, names: &[&str]) -> Option<i64> {
    known(args, names).and_then(|n| args.int(n)).map(bounded)
}

pub(in crate::resolve) fn flag_of(args: &SglangArgs, names: &[&str]) -> bool {
    names.iter().any(|n| args.knows(n) && args.flag(n))
}

pub(in crate::resolve) fn str_of<'a>(args: &'a SglangArgs, names: &[&str]) -> Option<&'a str> {
    known(args, names).and_then(|n| args.str(n))
}

pub(in crate::resolve) fn int_list(args: &SglangArgs, names: &[&str]) -> Option<Vec<i64>> {
    let v = known(args, names).and_then(|n| args.get(n))?;
    match v {
        Value::Array(a) => {
            let l: Vec<i64> = a
                .iter()
                .filter_map(Value::as_i64)
                .map(bounded)
                .take(4096)
                .collect();
            (!l.is_empty()).then_some(l)
        }
        _ => None,
    }
}

/// The speculative algorithm after SGLang's renames (NEXTN → EAGLE).
pub(crate) fn speculative_algorithm(args: &SglangArgs) -> Option<String> {
    // Aux hidden-state capture (0.5.23) names its convention with the algorithm, then turns
    // speculative decoding off before anything else reads it.
    if args.flag(opt::ENABLE_RETURN_AUX_HIDDEN_STATES) {
        return None;
    }
    let a = args.str(opt::SPECULATIVE_ALGORITHM)?.to_ascii_uppercase();
    Some(if a == "NEXTN" { "EAGLE".into() } else { a })
}
