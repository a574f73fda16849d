//! The planner's findings: an unknown model (MEM001), a user fraction too high (MEM003) or too
//! low (MEM004), a model that does not fit (MEM005), graphs that crowd out the KV cache (MEM006),
//! a config too incomplete to size the KV cache or the weights (MEM009); MEM018 in place of
//! MEM004/MEM005 when the weights are estimated for a layout the estimate does not model. A config with
//! implausible values is MEM013's ([`super::implausible`]), and none of these judge it.

use super::terms::{MIB, fmt_gib};
use super::{Baseline, Reserve, Sizing, tp_pp};
use crate::facts::model::{ModelFacts, defaults};
use crate::resolve::Context;
use crate::rules::{Code, Finding, Severity};
use crate::sglang::opt;

/// The plan's numbers the findings judge.
pub(super) struct Judged<'a, 'g> {
    pub(crate) base: &'a Baseline<'g>,
    pub(crate) sizing: &'a Sizing,
    pub(crate) reserve: &'a Reserve,
    pub(crate) user_mfs: Option<f64>,
    /// The fraction planned were the user's left out, where that holds the weights (worked out
    /// only where the user's falls short of the first use).
    pub(crate) unset_planned: Option<f64>,
    /// The fraction the server will get.
    pub(crate) mfs: f64,
    pub(crate) kv_tokens: Option<u64>,
    /// The recurrent-state pool of a hybrid model, MiB.
    pub(crate) state_mib: Option<f64>,
    pub(crate) fits: Option<bool>,
    /// SGLang's default is kept: below it our full-load reserve leaves the weights no room.
    pub(crate) kept_default: bool,
}

pub(super) fn all(ctx: &Context, j: &Judged) -> Vec<Finding> {
    let mut findings = Vec::new();
    if ctx.model.is_none() {
        findings.push(Finding::new(
            Code::MEM001,
            "model config not available offline: weights and KV cache not planned; \
             SGLang's defaults shown",
        ));
    }
    findings.extend(incomplete(ctx.model, j.sizing));
    findings.extend(too_low(j).map(|h| unless_estimate_unsure(ctx, h)));
    findings.extend(too_high(ctx, j));
    findings.extend(does_not_fit(ctx, j).map(|h| unless_estimate_unsure(ctx, h)));
    findings.extend(load_does_not_fit(ctx, j));
    findings.extend(graphs_crowd_kv(j));
    findings
}

/// MEM018 in place of a MEM004/MEM005 that stands on weights the plan cannot size firmly:
/// estimated for a layout the estimate does not model (a size that can be off by a factor), or
/// paged out in part (0.5.23's paged experts keep only some of each layer's experts on the GPU).
/// A launch is blocked only on what is known.
fn unless_estimate_unsure(ctx: &Context, hit: Finding) -> Finding {
    let why = if ctx.user().flag(opt::ENABLE_PAGED_EXPERTS) {
        "but --enable-paged-experts keeps only --paged-experts-num-resident of each layer's \
         experts on the GPU and the rest in host memory, and the plan counts them all"
            .to_owned()
    } else if let Some(m) = ctx.model.filter(|m| !m.size_is_firm()) {
        format!(
            "but the weights are estimated from config.json for model_type {}, a layout \
             the estimate does not follow, so the size may be far off: compare with the \
             checkpoint's size on disk",
            m.model_type.as_deref().unwrap_or("(none)"),
        )
    } else {
        return hit;
    };
    Finding::new(Code::MEM018, format!("{}; {why}", hit.message))
}

/// MEM004: the user's static pool cannot even hold the weights. DeepSeek-V4's fixed compressor
/// state is taken next: a pool that holds the weights but not it leaves no tokens, a warning
/// (SGLang's own check counts the weights alone).
fn too_low(j: &Judged) -> Option<Finding> {
    let (u, weights) = (j.user_mfs?, j.sizing.weights_mib?);
    let fixed = j.sizing.fixed_kv_mib;
    let b = j.base.mib;
    if b * u > weights + fixed {
        return None;
    }
    let state = if fixed > 0.0 {
        format!(" and {} of fixed KV-cache state", fmt_gib(fixed))
    } else {
        String::new()
    };
    let need = (weights + fixed) / b + 0.005;
    let advice = if need > 0.99 {
        "no fraction holds them on this GPU: spread the model over more GPUs or use a smaller \
         checkpoint"
            .to_owned()
    } else if need > j.reserve.planned + 0.01 {
        format!(
            "use at least {need:.3}, though that leaves less outside the pool than the {:.3} \
             the plan keeps for graphs and activations: more GPUs leave more room",
            j.reserve.planned
        )
    } else {
        format!("use at least {need:.3} (planned {:.3})", j.reserve.planned)
    };
    let mut hit = Finding::new(
        Code::MEM004,
        format!(
            "--mem-fraction-static {u} is too low for the weights: {} static vs {} of weights{state} \
             per GPU; SGLang will fail with no room for the KV cache; {advice}",
            fmt_gib(b * u),
            fmt_gib(weights),
        ),
    );
    if b * u > weights {
        hit.severity = Severity::Warning;
        hit.message.push_str(
            " (a warning: the weights fit, and SGLang's own check counts them alone; the fixed \
             state then leaves the KV cache no tokens)",
        );
    }
    Some(hit)
}

/// MEM003: the user's fraction leaves less outside the pool than the first use needs (graphs,
/// one prefill chunk, the largest captured batch). The planned value also keeps our allowance
/// for fragmentation, full-concurrency decode and a margin; falling short of those is not an
/// OOM the launch can be said to expect (real servers start and serve below them: the accuracy
/// bench's working-server column).
fn too_high(ctx: &Context, j: &Judged) -> Option<Finding> {
    let u = j.user_mfs?;
    let slack_mib = j.base.mib * (1.0 - j.mfs);
    let r = j.reserve;
    r.short_at(j.base.mib, j.mfs).then(|| {
        let smaller = "lower --chunked-prefill-size or --cuda-graph-max-bs";
        let way_out = match j.unset_planned {
            _ if ctx.server.fixed_fraction().is_some() => {
                format!("SGLang sets this fraction itself here: {smaller}")
            }
            Some(p) => format!("leave it out to get the planned value {p:.3}"),
            None => format!(
                "no fraction holds the weights and that reserve: {smaller}, or use more GPUs"
            ),
        };
        let named: String = r
            .buffers
            .iter()
            .map(|b| format!(", {} {}", b.label, fmt_gib(b.mib as f64)))
            .collect();
        Finding::new(
            Code::MEM003,
            format!(
                "--mem-fraction-static {u} leaves {} outside the static pool but CUDA graphs and \
                 the first prefill need {} (graphs {}, activations {}{named}); expect OOM during \
                 capture or at the first long prompt; {way_out}",
                fmt_gib(slack_mib),
                fmt_gib(r.first_use),
                fmt_gib(r.reserved.cuda_graphs as f64),
                fmt_gib(r.first_use - r.reserved.cuda_graphs as f64 - r.buffers_mib()),
            ),
        )
    })
}

/// MEM005: at the planned fraction nothing is left for the KV cache; names the ways out.
fn does_not_fit(ctx: &Context, j: &Judged) -> Option<Finding> {
    if j.user_mfs.is_some() || j.fits != Some(false) {
        return None;
    }
    let b = j.base;
    let w = j.sizing.weights_mib.unwrap_or(0.0);
    let state = j.state_mib.filter(|&s| s > 0.0);
    let overheads = reserve_and_set_aside(j) + state.unwrap_or(0.0);
    let free = b.tightest.memory_free_mib();
    let buffers: String = j
        .reserve
        .buffers
        .iter()
        .map(|b| format!("{}+", b.label))
        .collect();
    let state_part = state.map_or(String::new(), |s| {
        format!(", Mamba state pool {}", fmt_gib(s))
    });
    let mut hit = Finding::new(
        Code::MEM005,
        format!(
            "model does not fit: projected {} per GPU (weights {}{state_part}, \
             graphs+activations+{buffers}margin {}) vs {} free on GPU {}; try {}",
            fmt_gib(w + overheads),
            fmt_gib(w),
            fmt_gib(j.reserve.slack_needed),
            fmt_gib(free as f64),
            b.tightest.index,
            ways_out(ctx, w, overheads, free).join(", "),
        ),
    );
    // DeepSeek-V4: only its fixed compressor state is short; SGLang's own check counts the
    // weights, and the state's size (rings × request slots) is read from code, not logs.
    let fixed = j.sizing.fixed_kv_mib;
    if fixed > 0.0 && b.mib * j.mfs > w {
        hit.severity = Severity::Warning;
        hit.message.push_str(&format!(
            " (a warning: the weights fit the static pool; DeepSeek-V4's fixed KV-cache state of \
             {} is what leaves no tokens)",
            fmt_gib(fixed)
        ));
    }
    Some(hit)
}

/// MEM005 as a warning: SGLang's default holds the weights, a KV cache and the start's own use,
/// but not our reserve for full load (every prefill chunk at once, full-concurrency decode):
/// the start is SGLang's to make, and an OOM under load is what the estimate says.
fn load_does_not_fit(ctx: &Context, j: &Judged) -> Option<Finding> {
    if !j.kept_default {
        return None;
    }
    let w = j.sizing.weights_mib.unwrap_or(0.0);
    let overheads = reserve_and_set_aside(j);
    let free = j.base.tightest.memory_free_mib();
    let mut hit = Finding::new(
        Code::MEM005,
        format!(
            "the load may not fit: at SGLang's default --mem-fraction-static {:.3} the weights \
             ({}), a KV cache and the start's own graphs and first batch fit, but the reserve \
             for full load (graphs, activations, margin: {}) does not, so expect OOM under \
             load rather than at start; try {}",
            j.mfs,
            fmt_gib(w),
            fmt_gib(j.reserve.slack_needed),
            ways_out(ctx, w, overheads, free).join(", "),
        ),
    );
    hit.severity = Severity::Warning;
    Some(hit)
}

/// Our reserve outside the pool and what is set aside before the weights, MiB.
fn reserve_and_set_aside(j: &Judged) -> f64 {
    let b = j.base;
    j.reserve.slack_needed + (b.cuda_context + b.nccl + b.custom_allreduce) as f64
}

/// What would make the model fit, most effective first.
fn ways_out(ctx: &Context, weights_mib: f64, overheads: f64, free: u64) -> Vec<String> {
    let (tp, pp) = tp_pp(ctx);
    // The smallest power-of-two TP at which the weights leave a tenth of the free memory for
    // the KV cache after the same overheads.
    let total_w = weights_mib * (tp * pp) as f64;
    let bigger_tp = [2i64, 4, 8, 16, 32, 64]
        .into_iter()
        .filter(|&t| t > tp)
        .find(|&t| total_w / (t * pp) as f64 + overheads < free as f64 * 0.9);
    let mut ways = vec![match bigger_tp {
        Some(t) => format!("--tp-size {t} (now {tp}; more nodes if the box has fewer GPUs)"),
        None => format!("a larger --tp-size (now {tp})"),
    }];
    if ctx
        .model
        .is_some_and(|m: &ModelFacts| m.weight_bits.is_none_or(|b| b >= 16))
    {
        ways.push("an FP8 or 4-bit checkpoint".into());
    }
    ways.push("a shorter --context-length".into());
    let graph_flag = if ctx.args.knows(opt::CUDA_GRAPH_MAX_BS_DECODE) {
        opt::CUDA_GRAPH_MAX_BS_DECODE
    } else {
        opt::CUDA_GRAPH_MAX_BS
    };
    ways.push(format!("a lower {graph_flag}"));
    if ctx.server.kv_cache_dtype().is_none_or(|k| k == "auto") {
        let fp8 = ctx
            .model
            .map_or("fp8_e5m2", |m| m.fp8_kv_cache_dtype(ctx.version));
        ways.push(format!("--kv-cache-dtype {fp8}"));
    }
    ways
}

/// MEM006: CUDA-graph buffers large next to the KV cache.
fn graphs_crowd_kv(j: &Judged) -> Option<Finding> {
    let (t, c) = (j.kv_tokens?, j.sizing.cell.as_ref()?);
    if j.fits != Some(true) {
        return None;
    }
    let kv_mib = t as f64 * c.total as f64 / MIB;
    let graphs = j.reserve.reserved.cuda_graphs;
    (graphs as f64 > 0.25 * kv_mib && graphs > 1024).then(|| {
        Finding::new(
            Code::MEM006,
            format!(
                "CUDA-graph buffers ({}) are large next to the KV cache ({}); a lower decode max \
                 batch size frees KV space",
                fmt_gib(graphs as f64),
                fmt_gib(kv_mib),
            ),
        )
    })
}

/// MEM009: the config was read, but even with transformers' defaults it lacks what the KV cache
/// or the weight estimate needs; names the keys so the plan's gaps are never unexplained.
fn incomplete(model: Option<&ModelFacts>, sizing: &Sizing) -> Option<Finding> {
    let m = model?;
    let kv = sizing.cell.is_none();
    let weights = sizing.weights_mib.is_none();
    let not_planned = match (kv, weights) {
        (false, false) => return None,
        (true, true) => "the KV cache and the weights are not planned",
        (true, false) => "the KV cache is not planned",
        (false, true) => "the weights are not planned",
    };
    let mut keys = if kv { m.missing_for_kv() } else { Vec::new() };
    if weights {
        for k in m.missing_for_weights() {
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
    }
    let (lacks, add) = match keys.as_slice() {
        [] => (
            "dimensions that give no plausible size".to_owned(),
            "fix them",
        ),
        [k] => (format!("no {k}"), "add it"),
        k => (format!("no {}", k.join(", ")), "add them"),
    };
    let version = defaults::transformers_version();
    let why = match m.model_type.as_deref() {
        None => format!("it has no model_type, so transformers {version}'s defaults do not apply"),
        Some(t) if defaults::lookup(t).is_none() => {
            format!("model_type {t} is not one transformers {version} knows, so it has no defaults")
        }
        Some(t) => format!("transformers {version} has no default for them in model_type {t}"),
    };
    Some(Finding::new(
        Code::MEM009,
        format!(
            "{} has {lacks}, and {why}: {not_planned} (SGLang's defaults shown); {add} in \
             config.json or --json-model-override-args",
            m.dir.join("config.json").display()
        ),
    ))
}
