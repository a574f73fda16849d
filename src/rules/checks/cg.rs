//! CUDA-graph sizing.

use super::*;
use crate::sglang::opt;

/// SGLang's default decode max batch (the 0.5.3+ tier table by GPU memory).
pub(crate) fn default_max_bs(gpu_mib: u64, tp: i64) -> i64 {
    let small_tp = tp < 4;
    match gpu_mib {
        m if m < 20480 => 8,
        m if m < 35840 && small_tp => 48,
        m if m < 61440 && small_tp => 32,
        m if m < 61440 => 160,
        m if m < 163840 && small_tp => 256,
        _ => 512,
    }
}

pub(crate) fn default_max_bs_large(ctx: &Context) -> Vec<Fired> {
    let used = ctx.used();
    let Some(mib) = used.iter().map(|g| g.memory_total_mib).min() else {
        return vec![];
    };
    if ctx.cuda_graph_disabled()
        || ctx.cuda_graph_max_bs_given().is_some()
        || ctx.user().given(opt::CUDA_GRAPH_BS)
        || ctx.user().given(opt::CUDA_GRAPH_BS_DECODE)
        || ctx.user().given(opt::CUDA_GRAPH_CONFIG)
    {
        return vec![];
    }
    let bs = default_max_bs(mib, ctx.tp());
    let mrr = ctx
        .args
        .get(opt::MAX_RUNNING_REQUESTS)
        .and_then(serde_json::Value::as_i64);
    let bs = mrr.map_or(bs, |m| bs.min(m));
    if bs < 512 {
        return vec![];
    }
    // Where it matters: the weights leave a KV budget small enough that ~5 GiB of graph buffers
    // (what 512 costs on a 32B-class model) is a material share of it, or, with the model
    // unknown, a PCIe-only TP group (the class the throughput measurement comes from). On
    // roomy NVLink machines the graphs are a few percent of the KV cache and not worth a line;
    // the memory planner's MEM006 reports the share with its own numbers when it is large.
    let pcie = ctx.tp_pcie_only();
    let weights_share = ctx.model.and_then(|m| m.weight_bytes).map(|w| {
        let per_gpu = w as f64 / (ctx.tp() * ctx.pp()) as f64;
        per_gpu / (mib as f64 * 1024.0 * 1024.0)
    });
    let why = match weights_share {
        Some(s) if s >= MATERIAL_WEIGHT_SHARE => format!(
            "the weights take about {:.0}% of each GPU, so the graphs' buffers (sized for the largest captured batch) are a material share of the KV cache that is left",
            s * 100.0
        ),
        Some(_) => return vec![],
        None if pcie => {
            "the graphs' buffers (sized for the largest captured batch) come out of the KV cache"
                .to_string()
        }
        None => return vec![],
    };
    let anecdote = if pcie {
        " (one measurement, 8x RTX PRO 6000 over PCIe serving a large model: 512 → 128 took 82 → 89.5 tok/s)"
    } else {
        ""
    };
    let opt = if ctx.user().knows(opt::CUDA_GRAPH_MAX_BS_DECODE) {
        opt::CUDA_GRAPH_MAX_BS_DECODE
    } else {
        opt::CUDA_GRAPH_MAX_BS
    };
    vec![Fired::new(format!(
        "{} ({} MiB) at TP {}: SGLang defaults the decode CUDA-graph max batch to {bs}, and {why}{anecdote}; set {opt} to the concurrency you really run",
        ctx.describe_used(),
        mib,
        ctx.tp()
    ))]
}

/// Weights at or above this share of a GPU leave at most about half of it for the KV cache.
const MATERIAL_WEIGHT_SHARE: f64 = 0.4;

pub(crate) fn dp_attention_max_bs(ctx: &Context) -> Vec<Fired> {
    if ctx.cuda_graph_max_bs_given().is_none() && ctx.cuda_graph_bs_given().is_none() {
        return vec![];
    }
    let Some(bs) = ctx.decode_graph_max_bs() else {
        return vec![];
    };
    if !ctx.dp_attention() || bs <= 256 || ctx.cuda_graph_disabled() {
        return vec![];
    }
    vec![Fired::new(format!(
        "DP attention (size {}) with a CUDA-graph max batch of {bs}: capture buffers scale with batch × DP size and capture has run out of memory or hung; 64–128 is typical",
        ctx.attn_dp()
    ))]
}

pub(crate) fn torch_compile_moe(ctx: &Context) -> Vec<Fired> {
    if !ctx.user().flag(opt::ENABLE_TORCH_COMPILE) || ctx.cuda_graph_disabled() {
        return vec![];
    }
    let why = if ctx.dp_attention() {
        "DP attention".to_string()
    } else if ctx.model_is_moe() {
        format!(
            "a MoE model ({})",
            ctx.model_arch().unwrap_or("num_experts set")
        )
    } else {
        return vec![];
    };
    vec![Fired::new(format!(
        "--enable-torch-compile with CUDA graphs and {why}: capture has failed with 'operation not permitted when stream is capturing'; the gain is small for large MoE models"
    ))]
}

pub(crate) fn padding_torch_compile(ctx: &Context) -> Vec<Fired> {
    if !(ctx.user().flag(opt::DISABLE_CUDA_GRAPH_PADDING)
        && ctx.user().flag(opt::ENABLE_TORCH_COMPILE))
    {
        return vec![];
    }
    vec![Fired::new(format!(
        "--disable-cuda-graph-padding with --enable-torch-compile: SGLang {} rejects the combination",
        ctx.version
    ))]
}

/// CG005: the enforce flag skips SGLang's own LoRA opt-out, and 0.5.10 to 0.5.13's piecewise
/// runner prepares LoRA batches from capture batches built without LoRA ids.
pub(crate) fn lora_enforced_piecewise(ctx: &Context) -> Vec<Fired> {
    if !(ctx.lora() && ctx.user().flag(opt::ENFORCE_PIECEWISE_CUDA_GRAPH)) {
        return vec![];
    }
    vec![Fired::new(format!(
        "LoRA with --enforce-piecewise-cuda-graph: SGLang {} stops while capturing the piecewise graphs (object of type 'NoneType' has no len()); without the flag it serves LoRA with piecewise graphs off",
        ctx.version
    ))]
}

#[cfg(test)]
mod tests {
    use super::default_max_bs;

    #[test]
    fn tier_table() {
        assert_eq!(default_max_bs(16000, 8), 8);
        assert_eq!(default_max_bs(24564, 2), 48);
        assert_eq!(default_max_bs(24564, 4), 160);
        assert_eq!(default_max_bs(40960, 1), 32);
        assert_eq!(default_max_bs(81559, 2), 256);
        assert_eq!(default_max_bs(97887, 8), 512);
        assert_eq!(default_max_bs(183359, 1), 512);
    }
}
