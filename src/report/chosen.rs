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

/// SGLang's own choices, comma-separated; `None` when it chooses nothing the user didn't.
/// `page_given`: the command line sets `--page-size` (then a different size is its override).
pub(crate) fn sglang_choices(r: &Resolved, page_given: bool) -> Option<String> {
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
    if r.page_size > 1 && !page_given {
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
