//! SGLang's own start-up arithmetic, per version: default `--mem-fraction-static`,
//! `--chunked-prefill-size`, decode CUDA-graph batch sizes and `--max-running-requests`.
//!
//! Each formula is selected by version family (for a version between two known ones, the
//! nearest older family applies); `tests/memory.rs` replays goldens recorded from SGLang's own
//! code at every family boundary.

use serde_json::Value;

use crate::facts::Env;
use crate::facts::model::ModelFacts;
use crate::sglang::version::at_least;
use crate::sglang::{Parallel, SglangArgs};

const GIB: f64 = 1024.0;

/// Which formula SGLang used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Family {
    /// ≤ 0.5.2: `R` by capacity tier (0.4.10, 0.5.1).
    V0410,
    /// 0.5.3 – 0.5.9: `R = 512 + 1.5·cps + 2·max_bs + …`.
    V055,
    /// 0.5.10 – 0.5.14: adds the piecewise-graph term; spec reserve 4 GiB.
    V0510,
    /// 0.5.15+: per-phase CUDA-graph config, no spec reserve, DeepEP terms.
    V0515,
}

impl Family {
    pub fn of(version: &str) -> Family {
        if at_least(version, "0.5.15") {
            Family::V0515
        } else if at_least(version, "0.5.10") {
            Family::V0510
        } else if at_least(version, "0.5.3") {
            Family::V055
        } else {
            Family::V0410
        }
    }
}

/// What SGLang resolves at start-up for these arguments on a GPU of `gpu_mem_mib` capacity.
#[derive(Debug, Clone, PartialEq)]
pub struct SglangDefaults {
    /// The value SGLang computes when `--mem-fraction-static` is not given.
    pub mem_fraction_static: f64,
    /// The resolved chunked prefill size (user's value, else the tier default; ÷ DP under DP attention).
    pub chunked_prefill_size: i64,
    /// Whether the decode CUDA graph is captured.
    pub decode_graph: bool,
    /// `cuda_graph_max_bs` as ServerArgs holds it (`None`: left to the runner, 0.4.x).
    pub decode_max_bs: Option<i64>,
    /// The decode capture list as ServerArgs holds it (`None` before 0.5.3).
    pub decode_bs: Option<Vec<i64>>,
    /// `max_running_requests` after resolution (user's, or 48 under speculative decoding).
    pub max_running_requests: Option<i64>,
    /// Prefill (piecewise / breakable) graph: enabled, and its token buckets.
    pub prefill_graph: bool,
    pub prefill_bs: Vec<i64>,
    /// SGLang's reserve `R` (MiB) behind `mem_fraction_static`, for reports.
    pub reserved_mib: f64,
    /// Attention-DP width (1 when off).
    pub attn_dp_size: i64,
}

/// The first of these option spellings that this version knows (flags were renamed over time).
fn known<'a>(args: &SglangArgs, names: &[&'a str]) -> Option<&'a str> {
    names.iter().copied().find(|n| args.knows(n))
}

/// Integer arguments are bounded so that no user value can overflow the arithmetic below
/// (SGLang would reject or OOM on such values long before they matter here).
pub const ARG_BOUND: i64 = 1 << 20;

fn bounded(v: i64) -> i64 {
    v.clamp(-ARG_BOUND, ARG_BOUND)
}

/// `args.int(option)`, bounded.
pub fn int_arg(args: &SglangArgs, option: &str) -> Option<i64> {
    args.int(option).map(bounded)
}

fn int_of(args: &SglangArgs, names: &[&str]) -> Option<i64> {
    known(args, names).and_then(|n| args.int(n)).map(bounded)
}

fn flag_of(args: &SglangArgs, names: &[&str]) -> bool {
    names.iter().any(|n| args.knows(n) && args.flag(n))
}

fn str_of<'a>(args: &'a SglangArgs, names: &[&str]) -> Option<&'a str> {
    known(args, names).and_then(|n| args.str(n))
}

fn int_list(args: &SglangArgs, names: &[&str]) -> Option<Vec<i64>> {
    let v = known(args, names).and_then(|n| args.get(n))?;
    match v {
        Value::Array(a) => {
            let l: Vec<i64> = a
                .iter()
                .filter_map(Value::as_i64)
                .map(bounded)
                .take(4096)
                .collect();
            (!l.is_empty()).then_some(l)
        }
        _ => None,
    }
}

/// Python's `round(x, 3)` for the values SGLang produces (no exact binary ties occur in practice).
pub fn round3(x: f64) -> f64 {
    format!("{x:.3}").parse().unwrap_or(x)
}

/// `[1,2,4,8,12] + 16..=256/8 + 272..<512/16 + 512..=max/32` (or the denser speculative list).
pub fn decode_batch_sizes(
    max_bs: i64,
    speculative: bool,
    no_padding: bool,
    append_max: bool,
) -> Vec<i64> {
    // A capture list longer than this is not a real configuration; keep the work bounded.
    let max_bs = max_bs.min(1 << 16);
    let mut bs: Vec<i64> = if no_padding {
        (1..=max_bs).collect()
    } else if !speculative {
        let mut v = vec![1, 2, 4, 8, 12];
        v.extend((16..=256).step_by(8));
        v.extend((272..512).step_by(16));
        v.extend((512..=max_bs.max(0)).step_by(32));
        v
    } else {
        let mut v: Vec<i64> = (1..9).collect();
        v.extend((10..33).step_by(2));
        v.extend((40..65).step_by(4));
        v.extend((72..257).step_by(8));
        v.extend((272..=max_bs.max(0)).step_by(16));
        v
    };
    bs.retain(|&b| b <= max_bs);
    if append_max && max_bs > 0 && !bs.contains(&max_bs) {
        bs.push(max_bs);
    }
    bs
}

/// Prefill graph token buckets (0.5.10 piecewise, 0.5.15+ breakable).
pub fn prefill_batch_sizes(max_bs: i64) -> Vec<i64> {
    let mut v: Vec<i64> = (4..33).step_by(4).collect();
    v.extend((48..257).step_by(16));
    v.extend((288..513).step_by(32));
    v.extend((576..=1024).step_by(64));
    v.extend((1280..=4096).step_by(256));
    v.extend((4608..=max_bs.max(0)).step_by(512));
    v.retain(|&b| b <= max_bs);
    v
}

/// Capacity tiers: (chunked_prefill_size, decode max_bs for tp<4, for tp≥4).
fn tier(family: Family, version: &str, gpu_mem: f64) -> (i64, i64, i64) {
    if family == Family::V0410 {
        let cps = if gpu_mem < 35.0 * GIB {
            2048
        } else if gpu_mem < 160.0 * GIB {
            8192
        } else {
            16384
        };
        return (cps, 8, 80);
    }
    if gpu_mem < 20.0 * GIB {
        (2048, 8, 8)
    } else if gpu_mem < 35.0 * GIB {
        if family == Family::V0515 && at_least(version, "0.5.20") {
            (4096, 48, 160)
        } else {
            (2048, 24, 80)
        }
    } else if gpu_mem < 60.0 * GIB {
        (4096, 32, 160)
    } else if gpu_mem < 160.0 * GIB {
        (8192, 256, 512)
    } else {
        (16384, 512, 512)
    }
}

/// The speculative algorithm after SGLang's renames (NEXTN → EAGLE).
pub fn speculative_algorithm(args: &SglangArgs) -> Option<String> {
    let a = args.str("--speculative-algorithm")?.to_ascii_uppercase();
    Some(if a == "NEXTN" { "EAGLE".into() } else { a })
}

/// What every formula generation reads: the arguments and facts `resolve` gathers once.
struct Inputs<'a> {
    family: Family,
    version: &'a str,
    args: &'a SglangArgs,
    env: &'a Env,
    model: Option<&'a ModelFacts>,
    /// GPU capacity in MiB (`None`: unknown).
    g: Option<f64>,
    tp: i64,
    pp: i64,
    /// The speculative algorithm after renames.
    spec: Option<String>,
    attn_dp: i64,
    model_path: &'a str,
    mla: bool,
    multimodal: bool,
    a2a: String,
    deepep: bool,
    disagg: String,
    user_mrr: Option<i64>,
    max_prefill_tokens: i64,
    max_total_tokens: Option<i64>,
    no_padding: bool,
    disable_cuda_graph: bool,
    user_decode_max: Option<i64>,
    user_decode_bs: Option<Vec<i64>>,
    /// The tier's decode `max_bs` for this TP size.
    tier_bs: i64,
    /// Chunked prefill size before the DP-attention split (user's, else the tier's).
    cps0: i64,
}

fn inputs<'a>(
    version: &'a str,
    args: &'a SglangArgs,
    env: &'a Env,
    p: &Parallel,
    gpu_mem_mib: Option<u64>,
    model: Option<&'a ModelFacts>,
) -> Inputs<'a> {
    let family = Family::of(version);
    let g = gpu_mem_mib.map(|m| m as f64);
    let tp = bounded(p.tp);
    let a2a = str_of(args, &["--moe-a2a-backend"])
        .unwrap_or("none")
        .to_owned();
    let deepep = a2a == "deepep" || flag_of(args, &["--enable-deepep-moe"]);
    let (t_cps, t_bs_small, t_bs_large) = match g {
        Some(g) => tier(family, version, g),
        None => (4096, 160, 160),
    };
    Inputs {
        family,
        version,
        args,
        env,
        model,
        g,
        tp,
        pp: bounded(p.pp),
        spec: speculative_algorithm(args),
        attn_dp: bounded(p.attn_dp),
        model_path: args.str("--model-path").unwrap_or(""),
        mla: model.is_some_and(ModelFacts::is_mla),
        multimodal: model.is_some_and(|m| m.is_multimodal),
        a2a,
        deepep,
        disagg: str_of(args, &["--disaggregation-mode"])
            .unwrap_or("null")
            .to_owned(),
        user_mrr: int_arg(args, "--max-running-requests"),
        max_prefill_tokens: int_arg(args, "--max-prefill-tokens").unwrap_or(16384),
        max_total_tokens: int_arg(args, "--max-total-tokens"),
        no_padding: flag_of(args, &["--disable-cuda-graph-padding"]),
        disable_cuda_graph: flag_of(args, &["--disable-cuda-graph"]),
        user_decode_max: int_of(args, &["--cuda-graph-max-bs-decode", "--cuda-graph-max-bs"]),
        user_decode_bs: int_list(args, &["--cuda-graph-bs-decode", "--cuda-graph-bs"]),
        tier_bs: if tp < 4 { t_bs_small } else { t_bs_large },
        cps0: int_arg(args, "--chunked-prefill-size").unwrap_or(t_cps),
    }
}

/// SGLang's resolution of the memory-related defaults for this version, arguments and GPU.
/// `gpu_mem_mib` is what SGLang reads: the minimum `memory.total` over every GPU on the node.
pub fn resolve(
    version: &str,
    args: &SglangArgs,
    env: &Env,
    p: &Parallel,
    gpu_mem_mib: Option<u64>,
    model: Option<&ModelFacts>,
) -> SglangDefaults {
    let i = inputs(version, args, env, p, gpu_mem_mib, model);
    // DP attention divides the chunk among the DP ranks (after the mfs heuristic ran).
    let cps_final = if i.attn_dp > 1 && i.cps0 > 0 {
        i.cps0 / i.attn_dp
    } else {
        i.cps0
    };
    let mut out = SglangDefaults {
        mem_fraction_static: 0.88,
        chunked_prefill_size: cps_final,
        decode_graph: !i.disable_cuda_graph,
        decode_max_bs: None,
        decode_bs: None,
        max_running_requests: max_running_requests(&i),
        prefill_graph: false,
        prefill_bs: Vec::new(),
        reserved_mib: 0.0,
        attn_dp_size: i.attn_dp,
    };
    let post_capture = match i.family {
        Family::V0410 => {
            v0410(&i, &mut out);
            false
        }
        Family::V055 => {
            v055(&i, &mut out);
            false
        }
        Family::V0510 => {
            v0510(&i, &mut out);
            false
        }
        Family::V0515 => v0515(&i, &mut out),
    };
    vision_tower(&i, &mut out, post_capture);
    out
}

/// Speculative decoding sets max_running_requests=48 when unset (EAGLE family, STANDALONE, NGRAM).
fn max_running_requests(i: &Inputs) -> Option<i64> {
    match (&i.spec, i.user_mrr) {
        (_, Some(u)) => Some(u),
        (Some(s), None) => {
            let sets_48 = match i.family {
                Family::V0410 => matches!(s.as_str(), "EAGLE" | "EAGLE3"),
                _ => matches!(s.as_str(), "EAGLE" | "EAGLE3" | "STANDALONE" | "NGRAM"),
            };
            sets_48.then_some(48)
        }
        _ => None,
    }
}

/// `mem_fraction_static = round((g - R) / g, 3)` for the reserve `r` on a GPU of `g` MiB.
fn apply_reserve(out: &mut SglangDefaults, g: f64, r: f64) {
    out.reserved_mib = r;
    out.mem_fraction_static = round3((g - r) / g);
}

/// ≤ 0.5.2: the reserve `R` is a per-capacity-tier constant plus a TP·PP term.
fn v0410(i: &Inputs, out: &mut SglangDefaults) {
    let ps = (i.tp * i.pp) as f64;
    out.decode_max_bs = i
        .user_decode_max
        .or_else(|| i.g.filter(|&g| g < 35.0 * GIB).map(|_| i.tier_bs));
    if let Some(g) = i.g {
        let mut r = if g < 35.0 * GIB {
            (2.8 + ps / 10.0) * GIB
        } else if g < 90.0 * GIB {
            (9.5 + ps / 2.0) * GIB
        } else if g < 160.0 * GIB {
            (12.0 + ps / 2.0) * GIB
        } else {
            32.0 * GIB
        };
        if i.spec.is_some() {
            r += 2.0 * GIB;
        }
        if i.attn_dp > 1 {
            r += 4.0 * GIB;
        }
        apply_reserve(out, g, r);
    }
}

/// 0.5.3 – 0.5.9: decode graph list and the activation/graph reserve; no prefill graph.
fn v055(i: &Inputs, out: &mut SglangDefaults) {
    let max_bs = decode_graph_v055(i, out);
    if let Some(g) = i.g {
        apply_reserve(out, g, reserve_v055(i, g, max_bs, false, 0));
    }
}

/// 0.5.10 – 0.5.14: as 0.5.3, plus piecewise prefill graphs and their share of the reserve.
fn v0510(i: &Inputs, out: &mut SglangDefaults) {
    let max_bs = decode_graph_v055(i, out);
    let piecewise = piecewise_v0510(i);
    let max_tokens = int_of(i.args, &["--piecewise-cuda-graph-max-tokens"]).unwrap_or_else(|| {
        let mut m = if i.mla { 2048 } else { i.cps0 };
        if let Some(t) = i.max_total_tokens {
            m = m.min(t);
        }
        if i.model_path.to_ascii_lowercase().contains("llama-2") {
            m = m.min(4096);
        }
        m
    });
    out.prefill_bs = int_list(i.args, &["--piecewise-cuda-graph-tokens"])
        .unwrap_or_else(|| prefill_batch_sizes(max_tokens));
    out.prefill_graph = piecewise;
    if let Some(g) = i.g {
        let r = reserve_v055(i, g, max_bs, piecewise, out.prefill_bs.len());
        apply_reserve(out, g, r);
    }
}

/// 0.5.3 – 0.5.14 decode graph: the user's list (its max wins), else the generated list up to
/// the user's or the tier's `max_bs`. Returns the resolved `max_bs`.
fn decode_graph_v055(i: &Inputs, out: &mut SglangDefaults) -> i64 {
    let mut max_bs = i.user_decode_max.unwrap_or(i.tier_bs);
    let bs = match &i.user_decode_bs {
        Some(l) => {
            max_bs = *l.iter().max().unwrap_or(&max_bs);
            l.clone()
        }
        None => decode_batch_sizes(max_bs, i.spec.is_some(), i.no_padding, false),
    };
    out.decode_max_bs = Some(max_bs);
    out.decode_bs = Some(bs);
    max_bs
}

/// 0.5.10: piecewise prefill graphs, on by default, off under these conditions.
fn piecewise_v0510(i: &Inputs) -> bool {
    let args = i.args;
    let unsupported_arch = i
        .model
        .and_then(|m| m.architecture.as_deref())
        .is_some_and(|a| {
            matches!(
                a,
                "DeepseekV32ForCausalLM"
                    | "Qwen3NextForCausalLM"
                    | "GlmMoeDsaForCausalLM"
                    | "BailingMoeV2_5ForCausalLM"
                    | "LLaDAModelLM"
            )
        });
    !flag_of(args, &["--disable-piecewise-cuda-graph"])
        && (flag_of(args, &["--enforce-piecewise-cuda-graph"])
            || !(i.spec.is_some()
                || i.attn_dp > 1
                || flag_of(args, &["--enable-torch-compile"])
                || i.pp > 1
                || i.a2a != "none"
                || i.deepep
                || flag_of(args, &["--enable-lora"])
                || args.get("--lora-paths").is_some_and(|v| !v.is_null())
                || i.multimodal
                || str_of(args, &["--load-format"]) == Some("gguf")
                || str_of(args, &["--quantization"]) == Some("gguf")
                || str_of(args, &["--dllm-algorithm"]).is_some()
                || args.float("--cpu-offload-gb").unwrap_or(0.0) > 0.0
                || flag_of(args, &["--enable-hierarchical-cache"])
                || flag_of(args, &["--enable-deterministic-inference"])
                || i.disagg != "null"
                || flag_of(args, &["--enable-symm-mem"])
                || flag_of(args, &["--enable-eplb"])
                || str_of(args, &["--expert-distribution-recorder-mode"]).is_some()
                || int_of(args, &["--attn-cp-size"]).unwrap_or(1) > 1
                || unsupported_arch))
}

/// 0.5.3 – 0.5.14 reserve `R` (MiB): `512 + 1.5·cps + 2·max_bs + TP·PP/8 GiB`, DP-attention
/// and piecewise-graph terms, a 10 GiB floor above 60 GiB, then the speculative reserve.
/// The additions stay in SGLang's order so the float result is the same.
fn reserve_v055(i: &Inputs, g: f64, max_bs: i64, piecewise: bool, prefill_buckets: usize) -> f64 {
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
    if piecewise {
        r += if i.mla {
            1.5 * GIB
        } else {
            prefill_buckets as f64 * 8.0
        };
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

/// 0.5.15+ per-phase CUDA-graph switches.
struct Phases<'a> {
    decode_on: bool,
    prefill_on: bool,
    /// `--cuda-graph-backend-prefill` as given.
    prefill_backend: Option<&'a str>,
}

/// 0.5.15+: per-phase CUDA-graph config, no speculative reserve, DeepEP terms. Returns whether
/// the KV pool is sized after graph capture (0.5.16+, env opt-in), which uses a smaller reserve.
fn v0515(i: &Inputs, out: &mut SglangDefaults) -> bool {
    let phases = phases_v0515(i);
    let max_bs = decode_graph_v0515(i, out);
    out.decode_graph = phases.decode_on;
    out.prefill_bs = prefill_buckets_v0515(i, phases.prefill_on);
    out.prefill_graph = phases.prefill_on;
    let post_capture = at_least(i.version, "0.5.16")
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
    } else {
        out.mem_fraction_static = if at_least(i.version, "0.5.20") {
            0.95
        } else {
            0.88
        };
    }
    post_capture
}

/// 0.5.15+: which graph phases are captured, after the options and compatibility rules.
fn phases_v0515<'a>(i: &Inputs<'a>) -> Phases<'a> {
    let args = i.args;
    let decode_backend = str_of(args, &["--cuda-graph-backend-decode"]);
    let prefill_backend = str_of(args, &["--cuda-graph-backend-prefill"]);
    let mut decode_on = !(i.disable_cuda_graph
        || flag_of(args, &["--disable-decode-cuda-graph"])
        || decode_backend == Some("disabled"));
    let mut prefill_on = !(i.disable_cuda_graph
        || flag_of(args, &["--disable-prefill-cuda-graph"])
        || prefill_backend == Some("disabled"));
    // Compatibility rules that turn the breakable prefill graph off before the heuristic.
    if prefill_backend.is_none()
        && (int_of(args, &["--dcp-size"]).unwrap_or(1) > 1
            || flag_of(args, &["--enable-two-batch-overlap"])
            || !matches!(i.a2a.as_str(), "none" | "deepep" | "megamoe" | "flashinfer")
            || int_of(args, &["--attn-cp-size"]).unwrap_or(1) > 1
            || i.multimodal)
    {
        prefill_on = false;
    }
    match i.disagg.as_str() {
        "prefill" if decode_backend.is_none() => decode_on = false,
        "decode" if prefill_backend.is_none() => prefill_on = false,
        _ => {}
    }
    Phases {
        decode_on,
        prefill_on,
        prefill_backend,
    }
}

/// 0.5.15+ decode graph: as 0.5.3, but an unset `max_bs` is capped at `--max-running-requests`
/// and the generated list always ends at `max_bs`. Returns the resolved `max_bs`.
fn decode_graph_v0515(i: &Inputs, out: &mut SglangDefaults) -> i64 {
    let mut max_bs = i.user_decode_max.unwrap_or(i.tier_bs);
    if i.user_decode_max.is_none()
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
fn prefill_buckets_v0515(i: &Inputs, prefill_on: bool) -> Vec<i64> {
    let user_max = int_of(i.args, &["--cuda-graph-max-bs-prefill"]);
    let user_bs = int_list(i.args, &["--cuda-graph-bs-prefill"]);
    // DeepEP: prefill buckets rounded up to multiples of 8 (max 2048 when unresolved).
    if i.deepep && prefill_on {
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
        let mut m = if i.mla { i.cps0.min(8192) } else { i.cps0 };
        if i.pp > 1 && m > 8192 {
            m = 8192;
        }
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

/// 0.5.15+ reserve `R` (MiB) without post-capture sizing: activations, then the graph terms
/// for the phases this rank captures (`reserve_for_graph_mb`), a 10 GiB floor above 60 GiB,
/// then DeepEP's decode buffers. The additions stay in SGLang's order.
fn reserve_v0515(i: &Inputs, g: f64, max_bs: i64, phases: &Phases, prefill_buckets: usize) -> f64 {
    let tpp = (i.tp * i.pp) as f64 / 8.0 * 1024.0;
    let mut r = 512.0 + activation_tokens_v0515(i, max_bs) as f64 * 1.5 + tpp;
    if i.disagg != "prefill" && phases.decode_on {
        r += max_bs as f64 * 2.0;
    }
    if i.attn_dp > 1 && i.disagg != "prefill" {
        r += (max_bs * i.attn_dp) as f64 * 3.0;
        if max_bs > 300 {
            r += (max_bs * i.attn_dp) as f64 * 1.5;
        }
    }
    if i.disagg != "decode" && phases.prefill_on {
        r += if i.mla {
            1.5 * GIB
        } else {
            prefill_buckets as f64 * 8.0
        };
        if i.deepep && phases.prefill_backend.is_none_or(|b| b == "breakable") {
            r += GIB;
        }
    }
    if g > 60.0 * GIB {
        r = r.max(10.0 * GIB);
    }
    if i.disagg != "prefill" && phases.decode_on && i.deepep {
        r += 2.0 * GIB;
    }
    r
}

/// 0.5.15+ activation tokens behind the reserve: a decode rank's running requests × draft
/// tokens, else the chunk (or `--max-prefill-tokens` without chunking), at least 2048.
fn activation_tokens_v0515(i: &Inputs, max_bs: i64) -> i64 {
    if i.disagg == "decode" {
        let running = i.user_mrr.unwrap_or(max_bs).max(1);
        let draft = i
            .args
            .int("--speculative-num-draft-tokens")
            .unwrap_or(1)
            .max(1);
        (running * draft).max(2048)
    } else if i.cps0 > 0 {
        i.cps0.max(2048)
    } else {
        i.max_prefill_tokens.max(2048)
    }
}

/// Multimodal models: SGLang shrinks the fraction for the vision tower (0.5.16+ post-capture
/// sizing instead subtracts 8 GiB of the capacity).
fn vision_tower(i: &Inputs, out: &mut SglangDefaults, post_capture: bool) {
    let Some(m) = i.model else {
        return;
    };
    let vlm = m.is_multimodal
        && !flag_of(i.args, &["--language-only", "--language-model-only"])
        && !(i.family == Family::V0515 && i.disagg == "decode");
    if vlm && post_capture {
        if let Some(g) = i.g {
            out.mem_fraction_static -= 8.0 * GIB / g;
        }
    } else if vlm {
        let l = m.vision_layers.unwrap_or(24) as f64;
        let h = m.vision_hidden_size.unwrap_or(1024) as f64;
        let factor = (1.0 - 0.1 * (l * h * h / (24.0 * 1024.0 * 1024.0) - 1.0)).clamp(0.8, 1.05);
        out.mem_fraction_static *= 0.95 * factor;
    }
}

/// The decode batch sizes the server will actually capture: the list, cut to
/// `max_running_requests` (the req pool) at run time.
pub fn captured_decode_bs(
    d: &SglangDefaults,
    gpu_mem_mib: Option<u64>,
    mrr: Option<u64>,
) -> Vec<i64> {
    if !d.decode_graph {
        return Vec::new();
    }
    let list = match &d.decode_bs {
        Some(l) => l.clone(),
        None => {
            // 0.4.x runner default: up to 160 (256 on GPUs over 96 GiB), cut at the max.
            let cap = d
                .decode_max_bs
                .unwrap_or(if gpu_mem_mib.is_some_and(|g| g > 96 * 1024) {
                    256
                } else {
                    160
                });
            let mut v = vec![1, 2, 4, 8];
            v.extend((16..=256).step_by(8));
            v.retain(|&b| b <= cap);
            v
        }
    };
    match mrr {
        Some(m) => list.into_iter().filter(|&b| b as u64 <= m).collect(),
        None => list,
    }
}

/// The KV page size SGLang ends up with: `--page-size`, else 64 where it picks the TensorRT-LLM
/// attention kernels by default (Blackwell SM100: `trtllm_mla` since 0.5.5, `trtllm_mha` since
/// 0.5.10), else 1.
pub fn page_size(version: &str, args: &SglangArgs, mla: bool, cc_major: Option<u32>) -> u64 {
    if let Some(p) = args.get("--page-size").and_then(Value::as_i64) {
        return p.max(1) as u64;
    }
    let backend_given = [
        "--attention-backend",
        "--prefill-attention-backend",
        "--decode-attention-backend",
    ]
    .iter()
    .any(|o| args.knows(o) && args.get(o).is_some_and(|v| !v.is_null()));
    let trtllm = cc_major == Some(10)
        && !backend_given
        && if mla {
            at_least(version, "0.5.5")
        } else {
            at_least(version, "0.5.10")
        };
    if trtllm { 64 } else { 1 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sglang::flagset;
    use serde_json::json;

    #[test]
    fn unknown_versions_use_the_nearest_older_formula() {
        assert_eq!(Family::of("0.3.6"), Family::V0410);
        assert_eq!(Family::of("0.5.2"), Family::V0410);
        assert_eq!(Family::of("0.5.7"), Family::V055);
        assert_eq!(Family::of("0.5.12"), Family::V0510);
        assert_eq!(Family::of("0.5.17"), Family::V0515);
        assert_eq!(Family::of("0.6.0"), Family::V0515);
    }

    #[test]
    fn small_gpu_tier_changed_in_0_5_20() {
        let args =
            SglangArgs::with_values(flagset::get("0.5.23").unwrap(), &[("--tp-size", json!(1))]);
        let env = Env::default();
        let new = resolve(
            "0.5.23",
            &args,
            &env,
            &Parallel::of(&args),
            Some(24564),
            None,
        );
        assert_eq!(
            (new.chunked_prefill_size, new.decode_max_bs),
            (4096, Some(48))
        );
        let old = resolve(
            "0.5.17",
            &args,
            &env,
            &Parallel::of(&args),
            Some(24564),
            None,
        );
        assert_eq!(
            (old.chunked_prefill_size, old.decode_max_bs),
            (2048, Some(24))
        );
        // No capacity known: SGLang's fallbacks.
        assert_eq!(
            resolve("0.5.23", &args, &env, &Parallel::of(&args), None, None).mem_fraction_static,
            0.95
        );
        assert_eq!(
            resolve("0.5.17", &args, &env, &Parallel::of(&args), None, None).mem_fraction_static,
            0.88
        );
    }

    #[test]
    fn post_capture_sizing_uses_the_small_reserve() {
        let args =
            SglangArgs::with_values(flagset::get("0.5.23").unwrap(), &[("--tp-size", json!(8))]);
        let env = Env::from_pairs([("SGLANG_ENABLE_POST_CAPTURE_KV_SIZING", "1")]);
        let d = resolve(
            "0.5.23",
            &args,
            &env,
            &Parallel::of(&args),
            Some(81559),
            None,
        );
        assert_eq!(d.reserved_mib, 1536.0 + 1024.0);
        assert_eq!(d.mem_fraction_static, round3((81559.0 - 2560.0) / 81559.0));
    }

    #[test]
    fn batch_size_lists() {
        assert_eq!(
            decode_batch_sizes(48, false, false, true),
            vec![1, 2, 4, 8, 12, 16, 24, 32, 40, 48]
        );
        assert_eq!(decode_batch_sizes(50, false, false, true).last(), Some(&50));
        assert_eq!(
            decode_batch_sizes(50, false, false, false).last(),
            Some(&48)
        );
        assert_eq!(
            decode_batch_sizes(5, false, true, true),
            vec![1, 2, 3, 4, 5]
        );
        assert_eq!(prefill_batch_sizes(8192).len(), 58);
        assert_eq!(prefill_batch_sizes(2048).len(), 42);
    }
}
