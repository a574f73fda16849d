//! Who made a backend choice, and the small helpers the per-topic resolution modules
//! (attention, vision, MoE, speculative parameters, switches) share.

use serde::Serialize;
use serde_json::Value;

use crate::sglang::SglangArgs;

/// The user's value for a backend option, when given.
pub(crate) fn user_text(args: &SglangArgs, opt: &str) -> Option<Chosen> {
    args.is_set(opt)
        .then(|| text(args, opt))
        .flatten()
        .map(|value| Chosen {
            value,
            source: ChoiceSource::User,
        })
}

/// A value SGLang picks.
pub(crate) fn sglang(value: &str) -> Chosen {
    Chosen {
        value: value.to_owned(),
        source: ChoiceSource::Sglang,
    }
}

/// Who made a choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ChoiceSource {
    /// The command line (or its `--config` file).
    User,
    /// SGLang's own resolution at start-up.
    Sglang,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Chosen {
    pub value: String,
    pub(crate) source: ChoiceSource,
}

/// An option's value (given or default) as text: strings as-is, numbers printed; `None` for
/// null or an option this version lacks.
pub(crate) fn text(args: &SglangArgs, opt: &str) -> Option<String> {
    match args.get_or_default(opt)? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}
