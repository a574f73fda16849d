//! LoRA adapter buffers: SGLang's LoRA memory pool, allocated after the weights and before the
//! KV cache is sized (`init_lora_manager`, read in 0.4.10.post2 and 0.5.5).
//!
//! Per layer and target module: A is `max_loras_per_batch × (rank · stack) × input` and B is
//! `max_loras_per_batch × output × rank` in the model dtype, with `stack` 3 for `qkv_proj` and 2
//! for `gate_up_proj`; column-parallel modules split B's output over TP, row-parallel ones
//! (`o_proj`, `down_proj`) A's input.

use super::Context;
use super::terms::MIB;
use crate::facts::model::ModelFacts;
use crate::resolve::defaults::int_arg;
use crate::sglang::opt;

/// SGLang's `--max-loras-per-batch` default (8 in every release read).
const MAX_LORAS_PER_BATCH: i64 = 8;

/// The stacked modules SGLang targets, from the user's names (`all` and unknown lists: all four).
fn targets(ctx: &Context) -> Vec<&'static str> {
    const ALL: [&str; 4] = ["qkv_proj", "o_proj", "gate_up_proj", "down_proj"];
    let given: Vec<String> = match ctx.args.get(opt::LORA_TARGET_MODULES) {
        Some(serde_json::Value::Array(a)) => a
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
        Some(serde_json::Value::String(s)) => vec![s.clone()],
        _ => Vec::new(),
    };
    if given.is_empty() || given.iter().any(|g| g == "all") {
        return ALL.to_vec();
    }
    let has = |names: &[&str]| given.iter().any(|g| names.contains(&g.as_str()));
    ALL.into_iter()
        .filter(|t| match *t {
            "qkv_proj" => has(&["qkv_proj", "q_proj", "k_proj", "v_proj"]),
            "gate_up_proj" => has(&["gate_up_proj", "gate_proj", "up_proj"]),
            other => has(&[other]),
        })
        .collect()
}

/// Elements of one module's A and B buffers per adapter slot, for rank `r` at TP `tp`.
fn module_elems(m: &ModelFacts, module: &str, r: f64, tp: f64) -> Option<f64> {
    let h = m.hidden_size? as f64;
    let hd = m.head_dim_or_derived()? as f64;
    let q = m.num_attention_heads? as f64 * hd;
    let kv = m.num_key_value_heads.unwrap_or(m.num_attention_heads?) as f64 * hd;
    let inter = m.intermediate_size? as f64;
    Some(match module {
        "qkv_proj" => 3.0 * r * h + (q + 2.0 * kv) / tp * r,
        "o_proj" => r * q / tp + h * r,
        "gate_up_proj" => 2.0 * r * h + 2.0 * inter / tp * r,
        _ => r * inter / tp + h * r,
    })
}

/// The LoRA pool per GPU, MiB; `None` without LoRA or without a known `--max-lora-rank`.
pub(crate) fn buffers_mib(ctx: &Context) -> Option<f64> {
    let on = ctx.args.flag(opt::ENABLE_LORA) || ctx.args.is_set(opt::LORA_PATHS);
    let m = ctx.model.filter(|_| on)?;
    let rank = int_arg(ctx.args, opt::MAX_LORA_RANK).filter(|&r| r > 0)? as f64;
    let slots = int_arg(ctx.args, opt::MAX_LORAS_PER_BATCH)
        .unwrap_or(MAX_LORAS_PER_BATCH)
        .max(1) as f64;
    let p = &ctx.server.parallel;
    let tp = p.tp.max(1) as f64;
    let layers = m.num_hidden_layers?.div_ceil(p.pp.max(1) as u64) as f64;
    let per_layer: f64 = targets(ctx)
        .iter()
        .map(|t| module_elems(m, t, rank, tp))
        .sum::<Option<f64>>()?;
    let mib = slots * layers * per_layer * m.dtype_bytes() as f64 / MIB;
    mib.is_finite().then_some(mib)
}
