//! 0.5.14+: per-phase CUDA-graph config.

use super::Gen;
use super::lists::{decode_batch_sizes, prefill_batch_sizes};
use super::since::since;
use super::v055::piecewise_v0510;
use super::{GIB, SglangDefaults, apply_reserve};
use crate::resolve::args::{flag_of, int_list, int_of, str_of};
use crate::resolve::inputs::Disagg;
use crate::sglang::opt;

/// 0.5.15+ per-phase CUDA-graph switches.
struct Phases<'a> {
    decode_on: bool,
    prefill_on: bool,
    /// `--cuda-graph-backend-prefill` as given.
    prefill_backend: Option<&'a str>,
}

/// 0.5.14+: per-phase CUDA-graph config, no speculative reserve; DeepEP and PD-role terms from
/// 0.5.15. Returns whether
/// the KV pool is sized after graph capture (0.5.16+, env opt-in), which uses a smaller reserve.
pub(super) fn v0515(i: &Gen, out: &mut SglangDefaults) -> bool {
    let phases = phases_v0515(i);
    let max_bs = decode_graph_v0515(i, out);
    out.decode_graph = phases.decode_on;
    out.prefill_bs = prefill_buckets_v0515(i, phases.prefill_on);
    out.prefill_graph = phases.prefill_on;
    let post_capture = since(i.version, "0.5.16")
        && i.env.truthy("SGLANG_ENABLE_POST_CAPTURE_KV_SIZING")
        && !i.mla
        && phases.decode_on
        && phases.prefill_on;
    if let Some(g) = i.g {
        let r = if post_capture {
            1536.0 + (i.tp * i.pp) as f64 / 8.0 * 1024.0
        } else {
            reserve_v0515(i, g, max_bs, &phases, out.prefill_bs.len())
        };
        apply_reserve(out, g, r);
        clamp_prefill_to_rank_chunk(i, out);
    } else {
        out.mem_fraction_static = if since(i.version, "0.5.20") {
            0.95
        } else {
            0.88
        };
    }
    post_capture
}

/// The compatibility rules that turn the default prefill graph off (before the memory heuristic):
/// 0.5.14's torch.compile piecewise graph keeps 0.5.11's list; the
/// breakable graph (0.5.15+) has its own, relaxed over releases.
fn prefill_incompatible(i: &Gen) -> bool {
    let (v, args) = (i.version, i.args);
    if !since(v, "0.5.15") {
        return !piecewise_v0510(i, false);
    }
    let v17 = since(v, "0.5.17");
    let lora = flag_of(args, &[opt::ENABLE_LORA])
        || args.get(opt::LORA_PATHS).is_some_and(|x| !x.is_null());
    let a2a = if v17 {
        !matches!(
            i.a2a.as_deref(),
            None | Some("deepep" | "megamoe" | "flashinfer")
        )
    } else {
        i.a2a.is_some() || i.deepep
    };
    // MLA's prefill has no eager breaks: every MLA model to 0.5.16, 0.5.17 spares DSA (whose
    // sparse path breaks itself), 0.5.18 none; 0.5.17 alone also excludes NemotronH.
    let v18 = since(v, "0.5.18");
    let dsa = i.model.is_some_and(|m| m.is_dsa(v));
    let nemotron_h = i.arch.is_some_and(|a| crate::resolve::nemotron_h::is(a, v));
    (i.mla && !v18 && !(v17 && dsa))
        || (v17 && !v18 && nemotron_h)
        || int_of(args, &[opt::ATTN_CP_SIZE]).unwrap_or(1) > 1
        || (since(v, "0.5.16") && int_of(args, &[opt::DCP_SIZE]).unwrap_or(1) > 1)
        || (v17 && flag_of(args, &[opt::ENABLE_TWO_BATCH_OVERLAP]))
        || (!v17 && (lora || i.attn_dp > 1))
        || a2a
        || i.multimodal
        // DeepSeek-V4's capture pool would pin its indexer scratch (every breakable-graph release).
        || i.arch == Some(crate::facts::model::deepseek_v4::ARCH)
}

/// 0.5.14+: which graph phases are captured, after the options and compatibility rules.
fn phases_v0515<'a>(i: &Gen<'a>) -> Phases<'a> {
    let args = i.args;
    let decode_backend = str_of(args, &[opt::CUDA_GRAPH_BACKEND_DECODE]);
    let prefill_backend = str_of(args, &[opt::CUDA_GRAPH_BACKEND_PREFILL]);
    let mut decode_on = !(i.disable_cuda_graph
        || flag_of(args, &[opt::DISABLE_DECODE_CUDA_GRAPH])
        || decode_backend == Some("disabled"));
    let mut prefill_on = !(i.disable_cuda_graph
        || flag_of(args, &[opt::DISABLE_PREFILL_CUDA_GRAPH])
        || prefill_backend == Some("disabled"));
    if prefill_backend.is_none() && prefill_incompatible(i) {
        prefill_on = false;
    }
    // 0.5.19+: pipeline parallelism captures prefill graphs only when asked to.
    if prefill_backend.is_none() && i.pp > 1 && since(i.version, "0.5.19") {
        prefill_on = false;
    }
    // 0.5.16+: a PD role captures only its own phase. Before, a decode server captures both
    // and a prefill server none: SGLang sets the all-phase switch for it, under any phase whose
    // backend is named (tests/resolution/0.5.15.jsonl, 0.5.15.post1.jsonl).
    if !since(i.version, "0.5.16") {
        if i.disagg == Some(Disagg::Prefill) {
            decode_on &= decode_backend.is_some();
            prefill_on &= prefill_backend.is_some();
        }
        return Phases {
            decode_on,
            prefill_on,
            prefill_backend,
        };
    }
    match i.disagg {
        Some(Disagg::Prefill) if decode_backend.is_none() => decode_on = false,
        Some(Disagg::Decode) if prefill_backend.is_none() => prefill_on = false,
        _ => {}
    }
    Phases {
        decode_on,
        prefill_on,
        prefill_backend,
    }
}

/// 0.5.17+: DP attention divides the chunk after the reserve was sized, then cuts the prefill
/// graph to the chunk each rank prefills (a list the user gave stays).
fn clamp_prefill_to_rank_chunk(i: &Gen, out: &mut SglangDefaults) {
    let chunk = super::chunked_prefill_size(i);
    let user_max = int_of(i.args, &[opt::CUDA_GRAPH_MAX_BS_PREFILL]).is_some();
    let user_bs = int_list(i.args, &[opt::CUDA_GRAPH_BS_PREFILL]).is_some();
    let over = out.prefill_bs.iter().max().is_some_and(|&m| m > chunk);
    if since(i.version, "0.5.17")
        && i.attn_dp > 1
        && out.prefill_graph
        && over
        && !user_max
        && !user_bs
    {
        out.prefill_bs = prefill_batch_sizes(chunk.max(0));
    }
}

/// 0.5.14+ decode graph: as 0.5.10, but an unset `max_bs` is capped at
/// `--max-running-requests` from 0.5.22. Returns the resolved `max_bs`.
fn decode_graph_v0515(i: &Gen, out: &mut SglangDefaults) -> i64 {
    let mut max_bs = i.user_decode_max.unwrap_or(i.tier_bs);
    if since(i.version, "0.5.22")
        && i.user_decode_max.is_none()
        && i.user_decode_bs.is_none()
        && let Some(m) = i.user_mrr.filter(|&m| max_bs > m)
    {
        max_bs = m;
    }
    let bs = match &i.user_decode_bs {
        Some(l) => {
            max_bs = *l.iter().max().unwrap_or(&max_bs);
            l.clone()
        }
        None => decode_batch_sizes(max_bs, i.spec.is_some(), i.no_padding, true),
    };
    out.decode_max_bs = Some(max_bs);
    out.decode_bs = Some(bs);
    max_bs
}

/// 0.5.15+ breakable prefill graph token buckets.
fn prefill_buckets_v0515(i: &Gen, prefill_on: bool) -> Vec<i64> {
    let user_max = int_of(i.args, &[opt::CUDA_GRAPH_MAX_BS_PREFILL]);
    let user_bs = int_list(i.args, &[opt::CUDA_GRAPH_BS_PREFILL]);
    // DeepEP (0.5.17+): prefill buckets rounded up to multiples of 8 (max 2048 when unresolved).
    if i.deepep && prefill_on && since(i.version, "0.5.17") {
        let base = user_bs.unwrap_or_else(|| prefill_batch_sizes(user_max.unwrap_or(2048)));
        let mut aligned: Vec<i64> = base.iter().map(|b| (b + 7) / 8 * 8).collect();
        aligned.sort_unstable();
        aligned.dedup();
        return aligned;
    }
    if let Some(l) = user_bs {
        return l;
    }
    let m = user_max.unwrap_or_else(|| {
        // MLA: 2048 tokens, the chunk up to 8192 from 0.5.23.
        let mut m = match (i.mla, since(i.version, "0.5.23")) {
            (true, true) => i.cps0.min(8192),
            (true, false) => 2048,
            (false, _) => i.cps0,
        };
        if let Some(t) = i.max_total_tokens {
            m = m.min(t);
        }
        if i.model_path.to_ascii_lowercase().contains("llama-2") {
            m = m.min(4096);
        }
        m
    });
    prefill_batch_sizes(m.max(0))
}

/// 0.5.14+ reserve `R` (MiB) without post-capture sizing: activations, then the graph terms
/// for the phases this rank captures (`reserve_for_graph_mb`; 0.5.14 counts the decode graph
/// even when off), a 10 GiB floor above 60 GiB, then DeepEP's decode buffers (0.5.15+; the
/// breakable-prefill DeepEP term 0.5.17+). The additions stay in SGLang's order.
fn reserve_v0515(i: &Gen, g: f64, max_bs: i64, phases: &Phases, prefill_buckets: usize) -> f64 {
    let v15 = since(i.version, "0.5.15");
    let tpp = (i.tp * i.pp) as f64 / 8.0 * 1024.0;
    let mut r = 512.0 + activation_tokens_v0515(i, max_bs) as f64 * 1.5 + tpp;
    if !v15 || (i.disagg != Some(Disagg::Prefill) && phases.decode_on) {
        r += max_bs as f64 * 2.0;
    }
    if i.attn_dp > 1 && i.disagg != Some(Disagg::Prefill) {
        r += (max_bs * i.attn_dp) as f64 * 3.0;
        if max_bs > 300 {
            r += (max_bs * i.attn_dp) as f64 * 1.5;
        }
    }
    if i.disagg != Some(Disagg::Decode) && phases.prefill_on {
        r += if i.mla {
            1.5 * GIB
        } else {
            prefill_buckets as f64 * 8.0
        };
        if i.deepep
            && since(i.version, "0.5.17")
            && phases.prefill_backend.is_none_or(|b| b == "breakable")
        {
            r += GIB;
        }
    }
    if g > 60.0 * GIB {
        r = r.max(10.0 * GIB);
    }
    if v15 && i.disagg != Some(Disagg::Prefill) && phases.decode_on && i.deepep {
        r += 2.0 * GIB;
    }
    r
}

/// 0.5.15+ activation tokens behind the reserve: a decode rank's running requests × draft
/// tokens, else the chunk (or `--max-prefill-tokens` without chunking), at least 2048.
fn activation_tokens_v0515(i: &Gen, max_bs: i64) -> i64 {
    if i.disagg == Some(Disagg::Decode) && since(i.version, "0.5.15") {
        let running = i.user_mrr.unwrap_or(max_bs).max(1);
        let draft = i
            .args
            .int(opt::SPECULATIVE_NUM_DRAFT_TOKENS)
            .unwrap_or(1)
            .max(1);
        (running * draft).max(2048)
    } else if i.cps0 > 0 {
        i.cps0.max(2048)
    } else {
        i.max_prefill_tokens.max(2048)
    }
}
