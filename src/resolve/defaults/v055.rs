//! 0.5.3rc2 – 0.5.13: the activation/graph reserve, then piecewise prefill graphs.

use super::Gen;
use super::lists::{decode_batch_sizes, piecewise_tokens_v055, prefill_batch_sizes};
use super::since::since;
use super::{Family, GIB, SglangDefaults, apply_reserve};
use crate::resolve::args::{flag_of, int_list, int_of, str_of};
use crate::sglang::opt;

/// 0.5.3rc2 – 0.5.9: decode graph list and the activation/graph reserve; piecewise prefill
/// graphs only on request (`--enable-piecewise-cuda-graph`, 0.5.3.post2 on).
pub(super) fn v055(i: &Gen, out: &mut SglangDefaults) {
    let max_bs = decode_graph_v055(i, out);
    let (before_floor, after_spec) = opt_in_piecewise(i, out);
    if let Some(g) = i.g {
        let r = reserve_v055(i, g, max_bs, before_floor) + after_spec;
        apply_reserve(out, g, r);
    }
}

/// 0.5.3.post2 – 0.5.9 `--enable-piecewise-cuda-graph`: its token buckets, and its reserve terms
/// (MiB) before the 10 GiB floor (0.5.8+: 8 per bucket) and after the speculative term
/// (0.5.5.post1: max tokens / 4; 0.5.7: / 8).
fn opt_in_piecewise(i: &Gen, out: &mut SglangDefaults) -> (f64, f64) {
    if !flag_of(i.args, &[opt::ENABLE_PIECEWISE_CUDA_GRAPH]) {
        return (0.0, 0.0);
    }
    let v = i.version;
    // The max tokens: an option default of 4096 until 0.5.7, then the chunk (2048 for MLA, 0.5.8).
    let max_tokens = int_of(i.args, &[opt::PIECEWISE_CUDA_GRAPH_MAX_TOKENS]).unwrap_or(
        match (since(v, "0.5.7"), since(v, "0.5.8") && i.mla) {
            (false, _) => 4096,
            (true, true) => 2048,
            (true, false) => i.cps0,
        },
    );
    out.prefill_graph = true;
    out.prefill_bs = int_list(i.args, &[opt::PIECEWISE_CUDA_GRAPH_TOKENS])
        .unwrap_or_else(|| piecewise_tokens_v055(v, max_tokens));
    if since(v, "0.5.8") {
        (out.prefill_bs.len() as f64 * 8.0, 0.0)
    } else if since(v, "0.5.7") {
        (0.0, (max_tokens / 8) as f64)
    } else if since(v, "0.5.5.post1") {
        (0.0, (max_tokens / 4) as f64)
    } else {
        (0.0, 0.0)
    }
}

/// 0.5.10rc0 – 0.5.13: as 0.5.3, plus piecewise prefill graphs and their share of the reserve.
pub(super) fn v0510(i: &Gen, out: &mut SglangDefaults) {
    let max_bs = decode_graph_v055(i, out);
    let piecewise = piecewise_v0510(i, !since(i.version, "0.5.11"));
    let max_tokens = int_of(i.args, &[opt::PIECEWISE_CUDA_GRAPH_MAX_TOKENS]).unwrap_or_else(|| {
        let mut m = if i.mla { 2048 } else { i.cps0 };
        if let Some(t) = i.max_total_tokens {
            m = m.min(t);
        }
        if i.model_path.to_ascii_lowercase().contains("llama-2") {
            m = m.min(4096);
        }
        m
    });
    out.prefill_bs = int_list(i.args, &[opt::PIECEWISE_CUDA_GRAPH_TOKENS])
        .unwrap_or_else(|| prefill_batch_sizes(max_tokens));
    out.prefill_graph = piecewise;
    if let Some(g) = i.g {
        let graph = match (piecewise, i.mla) {
            (false, _) => 0.0,
            (true, true) => 1.5 * GIB,
            (true, false) => out.prefill_bs.len() as f64 * 8.0,
        };
        apply_reserve(out, g, reserve_v055(i, g, max_bs, graph));
    }
}

/// 0.5.3rc2 – 0.5.14 decode graph: the user's list (its max wins), else the generated list up
/// to the user's or the tier's `max_bs` (which ends the list from 0.5.10; the speculative list
/// has 64 from 0.5.4.post2). Returns the resolved `max_bs`.
fn decode_graph_v055(i: &Gen, out: &mut SglangDefaults) -> i64 {
    let mut max_bs = i.user_decode_max.unwrap_or(i.tier_bs);
    let bs = match &i.user_decode_bs {
        Some(l) => {
            max_bs = *l.iter().max().unwrap_or(&max_bs);
            l.clone()
        }
        None => {
            let spec = i.spec.is_some();
            let mut l = decode_batch_sizes(max_bs, spec, i.no_padding, since(i.version, "0.5.10"));
            if spec && !i.no_padding && !since(i.version, "0.5.4.post2") {
                l.retain(|&b| b != 64);
            }
            l
        }
    };
    out.decode_max_bs = Some(max_bs);
    out.decode_bs = Some(bs);
    max_bs
}

/// The model classes SGLang keeps off piecewise prefill graphs: DeepSeek-V4 joins in 0.5.12,
/// DeepSeek-V3.2 and GLM-5 (DSA) leave in 0.5.13 (read in the wheels).
fn piecewise_blocked_arch(version: &str, arch: &str) -> bool {
    match arch {
        "Qwen3NextForCausalLM" | "BailingMoeV2_5ForCausalLM" | "LLaDAModelLM" => true,
        "DeepseekV32ForCausalLM" | "GlmMoeDsaForCausalLM" => !since(version, "0.5.13"),
        "DeepseekV4ForCausalLM" | "DeepseekV4ForCausalLMNextN" => since(version, "0.5.12"),
        _ => false,
    }
}

/// 0.5.10: piecewise prefill graphs, on by default, off under these conditions (speculative
/// decoding only until 0.5.11; 0.5.14's torch.compile piecewise graph has the same list).
pub(super) fn piecewise_v0510(i: &Gen, off_for_speculative: bool) -> bool {
    let args = i.args;
    let unsupported_arch = i
        .model
        .and_then(|m| m.architecture.as_deref())
        .is_some_and(|a| piecewise_blocked_arch(i.version, a));
    !flag_of(args, &[opt::DISABLE_PIECEWISE_CUDA_GRAPH])
        && (flag_of(args, &[opt::ENFORCE_PIECEWISE_CUDA_GRAPH])
            || !((off_for_speculative && i.spec.is_some())
                || i.attn_dp > 1
                || flag_of(args, &[opt::ENABLE_TORCH_COMPILE])
                || i.pp > 1
                || i.a2a.is_some()
                || i.deepep
                || flag_of(args, &[opt::ENABLE_LORA])
                || args.get(opt::LORA_PATHS).is_some_and(|v| !v.is_null())
                || i.multimodal
                || str_of(args, &[opt::LOAD_FORMAT]) == Some("gguf")
                || str_of(args, &[opt::QUANTIZATION]) == Some("gguf")
                || str_of(args, &[opt::DLLM_ALGORITHM]).is_some()
                || args.float(opt::CPU_OFFLOAD_GB).unwrap_or(0.0) > 0.0
                || flag_of(args, &[opt::ENABLE_HIERARCHICAL_CACHE])
                // The flag alone: an RL on-policy target turns it on after this heuristic.
                || flag_of(args, &[opt::ENABLE_DETERMINISTIC_INFERENCE])
                || i.disagg.is_some()
                || flag_of(args, &[opt::ENABLE_SYMM_MEM])
                || flag_of(args, &[opt::ENABLE_EPLB])
                || str_of(args, &[opt::EXPERT_DISTRIBUTION_RECORDER_MODE]).is_some()
                || int_of(args, &[opt::ATTN_CP_SIZE]).unwrap_or(1) > 1
                || unsupported_arch))
}

/// 0.5.3 – 0.5.14 reserve `R` (MiB): `512 + 1.5·cps + 2·max_bs + TP·PP/8 GiB`, DP-attention
/// and piecewise-graph terms, a 10 GiB floor above 60 GiB, then the speculative reserve.
/// The additions stay in SGLang's order so the float result is the same.
fn reserve_v055(i: &Gen, g: f64, max_bs: i64, prefill_graph: f64) -> f64 {
    let mut r = 512.0;
    r += if i.cps0 > 0 {
        i.cps0.max(2048) as f64 * 1.5
    } else {
        i.max_prefill_tokens.max(2048) as f64 * 1.5
    };
    r += max_bs as f64 * 2.0;
    r += (i.tp * i.pp) as f64 / 8.0 * 1024.0;
    if i.attn_dp > 1 {
        r += (max_bs * i.attn_dp) as f64 * 3.0;
        if max_bs > 300 {
            r += (max_bs * i.attn_dp) as f64 * 1.5;
        }
    }
    if prefill_graph > 0.0 {
        r += prefill_graph;
    }
    if g > 60.0 * GIB {
        r = r.max(10.0 * GIB);
    }
    match i.spec.as_deref() {
        Some("STANDALONE") => r += 6.0 * GIB,
        Some("NGRAM") | None => {}
        Some(_) => r += if i.family == Family::V0510 { 4.0 } else { 2.0 } * GIB,
    }
    r
}
