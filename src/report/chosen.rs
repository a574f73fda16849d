//! The "SGLang will choose:" line: what SGLang decides on its own after parsing (backends,
//! speculative parameters, features it turns off), so the report says what will really run.

use crate::plan::v1::Resolved;
use crate::resolve::{ChoiceSource, Chosen, Switch};

fn auto(c: &Option<Chosen>) -> Option<&str> {
    c.as_ref()
        .filter(|c| c.source == ChoiceSource::Sglang)
        .map(|c| c.value.as_str())
}

fn turned_off(name: &str, s: Switch) -> Option<String> {
    (!s.on && s.source == ChoiceSource::Sglang).then(|| format!("{name} off"))
}

/// What the command line itself sets that SGLang may override.
pub(crate) struct Given {
    /// `--page-size` (then a different size is SGLang's override).
    pub(crate) page_size: bool,
    /// `--disable-overlap-schedule` (the spec-v2 worker of 0.5.4–0.5.10 turns it back on).
    pub(crate) overlap_off: bool,
}

/// SGLang's own choices, comma-separated; `None` when it chooses nothing the user didn't.
pub(crate) fn sglang_choices(r: &Resolved, given: &Given) -> Option<String> {
    let b = &r.backends;
    let mut out: Vec<String> = [
        ("attention", auto(&b.attention)),
        ("decode attention", auto(&b.decode_attention)),
        ("vision tower", auto(&b.multimodal_attention)),
        // FlashInfer sampling is the everyday default: only a change of it is news.
        ("sampling", auto(&b.sampling).filter(|v| *v != "flashinfer")),
        ("MoE runner", auto(&b.moe_runner).filter(|v| *v != "auto")),
    ]
    .into_iter()
    .filter_map(|(what, v)| v.map(|v| format!("{what} {v}")))
    .collect();
    if r.page_size > 1 && !given.page_size {
        out.push(format!("page size {}", r.page_size));
    }
    if let Some(p) = r
        .speculative_params
        .filter(|p| p.num_steps.source == ChoiceSource::Sglang)
    {
        out.push(format!(
            "speculative {} steps, top-k {}, {} draft tokens",
            p.num_steps.value, p.eagle_topk.value, p.num_draft_tokens.value
        ));
    }
    let s = r.switches;
    if given.overlap_off && s.overlap_schedule.on {
        out.push("overlap scheduler on (over --disable-overlap-schedule, for spec v2)".into());
    }
    out.extend(
        [
            turned_off("radix cache", s.radix_cache),
            turned_off("overlap scheduler", s.overlap_schedule),
            turned_off("CUDA graphs", s.cuda_graph),
        ]
        .into_iter()
        .flatten(),
    );
    (!out.is_empty()).then(|| out.join(", "))
}
