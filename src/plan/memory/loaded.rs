//! What loading adds to a checkpoint's bytes on each GPU. DeepSeek-V4 only: its MXFP4 routed
//! experts take the layout of the MoE method SGLang loads them with, its `wo_a` is dequantised
//! to BF16 where the FP8 kernel is off (below SM100), and its RoPE tables are built once per
//! RoPE base. Read in the DeepSeek-V4 releases' code (0.5.12 to 0.5.23):
//!
//! * the FP8 method's own MXFP4 layout (runner `auto`, Triton): an FP32 scale per 32 values;
//! * Marlin: e8m0 scales, and in 0.5.12–0.5.15 the loader's FP32 scales too (not freed until
//!   0.5.16);
//! * FlashInfer's MXFP4 runners and an all-to-all backend (DeepEP, DeepGEMM): e8m0 scales;
//! * `SGLANG_DSV4_FP4_DEQUANT=1`: block FP8.

use crate::facts::model::ModelFacts;
use crate::facts::model::deepseek_v4::CHECKPOINT_EXPERT_BYTES;
use crate::resolve::Context;
use crate::resolve::server::DraftSource;
use crate::sglang::release::at_least;

/// Bytes per GPU loading adds to the target's and to the MTP draft's checkpoint share.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Added {
    pub(crate) target: f64,
    pub(crate) draft: f64,
}

/// See the module doc; zero for every layout but DeepSeek-V4's.
pub(crate) fn added_bytes_per_gpu(ctx: &Context, m: &ModelFacts) -> Added {
    // Checked first: every other model returns here without sizing its layers.
    let Some(layout) = m.deepseek_v4_official() else {
        return Added::default();
    };
    let Some(b) = crate::facts::model::weight_breakdown(m) else {
        return Added::default();
    };
    let p = &ctx.server.parallel;
    let split = (p.tp.max(1) * p.pp.max(1)) as f64;
    // Only the routed experts the GPUs hold take the runner's layout (KTransformers keeps the
    // rest on the CPU).
    let experts = m.num_experts.unwrap_or(0).max(1) as f64;
    let on_gpu = super::split::on_gpu_share(ctx.args, experts);
    let per_layer =
        b.mxfp4_expert_values_per_layer * (expert_bytes(ctx) - CHECKPOINT_EXPERT_BYTES) * on_gpu
            + b.bf16_off_sm100_params_per_layer * dequantised_bytes(ctx);
    let layers = m.num_hidden_layers.unwrap_or(0);
    let mtp = ctx
        .server
        .speculative
        .as_ref()
        .is_some_and(|s| s.uses_draft_model() && s.draft == DraftSource::Mtp);
    let mtp_layers = if mtp {
        m.num_nextn_predict_layers.unwrap_or(0)
    } else {
        0
    };
    let tables = |with_mtp| layout.rope_bases(layers, with_mtp) as f64 * layout.rope_table_bytes;
    let target = layers as f64 * per_layer / split + tables(false);
    let draft = mtp_layers as f64 * per_layer / split + tables(mtp) - tables(false);
    Added {
        target: finite(target),
        draft: finite(draft),
    }
}

fn finite(x: f64) -> f64 {
    if x.is_finite() { x.max(0.0) } else { 0.0 }
}

/// Bytes per routed-expert value once loaded.
fn expert_bytes(ctx: &Context) -> f64 {
    if ctx.env.truthy("SGLANG_DSV4_FP4_DEQUANT") {
        return 1.0 + 4.0 / (128.0 * 128.0);
    }
    let b = &ctx.server.backends;
    let a2a = b.moe_a2a.as_ref().is_some_and(|c| c.value != "none");
    let runner = b.moe_runner.as_ref().map_or("auto", |c| c.value.as_str());
    match runner {
        "marlin" if !at_least(ctx.version, "0.5.16") => 0.5 + 4.0 / 32.0 + 1.0 / 32.0,
        "marlin" | "flashinfer_mxfp4" => CHECKPOINT_EXPERT_BYTES,
        _ if a2a => CHECKPOINT_EXPERT_BYTES,
        _ => 0.5 + 4.0 / 32.0,
    }
}

/// Bytes each `wo_a` value gains: BF16 instead of block FP8 off SM100.
fn dequantised_bytes(ctx: &Context) -> f64 {
    let cc = ctx
        .gpus
        .first()
        .and_then(|&g| ctx.topology.gpu(g))
        .and_then(|g| g.cc());
    match cc {
        Some((10, _)) => 0.0,
        _ => 2.0 - (1.0 + 4.0 / (128.0 * 128.0)),
    }
}
