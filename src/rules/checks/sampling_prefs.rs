//! The preferred sampling parameters SGLang builds once at start-up when it runs without a
//! tokenizer (0.5.14+): keys its sampling parameters do not take, and the stop conditions and
//! minimum length that need a tokenizer.

use serde_json::{Map, Value};

use super::*;
use crate::sglang::opt;
use crate::sglang::release::at_least;

/// The keyword arguments SGLang's sampling parameters take, with the release that added each
/// (0.5.7, the oldest wheel read, for those every release with the check has).
const KEYS: &[(&str, &str)] = &[
    ("max_new_tokens", "0.5.7"),
    ("stop", "0.5.7"),
    ("stop_token_ids", "0.5.7"),
    ("stop_regex", "0.5.7"),
    ("temperature", "0.5.7"),
    ("top_p", "0.5.7"),
    ("top_k", "0.5.7"),
    ("min_p", "0.5.7"),
    ("frequency_penalty", "0.5.7"),
    ("presence_penalty", "0.5.7"),
    ("repetition_penalty", "0.5.7"),
    ("min_new_tokens", "0.5.7"),
    ("n", "0.5.7"),
    ("json_schema", "0.5.7"),
    ("regex", "0.5.7"),
    ("ebnf", "0.5.7"),
    ("structural_tag", "0.5.7"),
    ("ignore_eos", "0.5.7"),
    ("skip_special_tokens", "0.5.7"),
    ("spaces_between_special_tokens", "0.5.7"),
    ("no_stop_trim", "0.5.7"),
    ("custom_params", "0.5.7"),
    ("stream_interval", "0.5.7"),
    ("logit_bias", "0.5.7"),
    ("sampling_seed", "0.5.7"),
    ("stop_strs", "0.5.15"),
    ("stop_regex_strs", "0.5.15"),
    ("stop_str_max_len", "0.5.15"),
    ("stop_regex_max_len", "0.5.15"),
    ("is_normalized", "0.5.15"),
    ("beam_width", "0.5.19"),
    ("ebnf_full_assistant", "0.5.20"),
    ("watermark", "0.5.22"),
];

/// What SGLang refuses in `prefs` under `--skip-tokenizer-init`, one line each.
pub(super) fn without_tokenizer(ctx: &Context, prefs: &Map<String, Value>) -> Vec<String> {
    let u = ctx.user();
    if !at_least(ctx.version, "0.5.14") || !u.flag(opt::SKIP_TOKENIZER_INIT) || prefs.is_empty() {
        return vec![];
    }
    let name = opt::PREFERRED_SAMPLING_PARAMS;
    let taken = |k: &str| {
        KEYS.iter()
            .any(|(key, since)| *key == k && at_least(ctx.version, since))
    };
    if let Some(k) = prefs.keys().find(|k| !taken(k)) {
        return vec![format!(
            "{name} sets {k:?}, which this release's sampling parameters do not take (built at start-up under {})",
            opt::SKIP_TOKENIZER_INIT
        )];
    }
    needs_tokenizer(prefs)
        .map(|what| {
            format!(
                "{name} sets {what}, which needs the tokenizer {} leaves out",
                opt::SKIP_TOKENIZER_INIT
            )
        })
        .into_iter()
        .collect()
}

/// A stop string or pattern (text, or a non-empty list), or a minimum length above 0.
fn needs_tokenizer(prefs: &Map<String, Value>) -> Option<String> {
    let stops = |v: &Value| match v {
        Value::String(_) => true,
        Value::Array(a) => !a.is_empty(),
        _ => false,
    };
    ["stop", "stop_regex"]
        .into_iter()
        .find(|k| prefs.get(*k).is_some_and(stops))
        .map(str::to_owned)
        .or_else(|| {
            let n = prefs.get("min_new_tokens")?.as_f64()?;
            (n > 0.0).then(|| format!("min_new_tokens {n}"))
        })
}
