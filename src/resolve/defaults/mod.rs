//! SGLang's own start-up arithmetic, per release: default `--mem-fraction-static`,
//! `--chunked-prefill-size`, decode CUDA-graph batch sizes and `--max-running-requests`.
//!
//! One function per formula generation (a module each); within a generation, the releases where
//! only a constant or a term changed are gates ([`since`]). The boundaries were found by running
//! every release from 0.4.0 on through SGLang's own code; `tests/it/memory.rs` replays those
//! goldens (every release, and both sides of every boundary).

use crate::sglang::opt;
mod lists;
mod since;
mod tiers;
mod v040;
mod v0410;
mod v0515;
mod v055;

use super::args::flag_of;

use super::Facts;
use super::inputs::{Disagg, Inputs};
use crate::facts::model::ModelFacts;
use crate::facts::{Env, Topology};
use crate::sglang::{Parallel, SglangArgs};
use since::since;
use tiers::tier;

pub(super) const GIB: f64 = 1024.0;

/// Which formula SGLang used (the boundaries were found by running every release's own code).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Family {
    /// 0.4.0 – 0.4.7: a fixed fraction by TP size, adjusted on large GPUs.
    V040,
    /// 0.4.7.post1 – 0.5.3rc0: `R` by capacity tier.
    V0410,
    /// 0.5.3rc2 – 0.5.9: `R = 512 + 1.5·cps + 2·max_bs + …`.
    V055,
    /// 0.5.10rc0 – 0.5.13.post1: adds the piecewise-graph term; spec reserve 4 GiB.
    V0510,
    /// 0.5.14+: per-phase CUDA-graph config, no spec reserve; DeepEP terms from 0.5.15.
    V0515,
}

impl Family {
    pub(crate) fn of(version: &str) -> Family {
        [
            ("0.5.14", Family::V0515),
            ("0.5.10rc0", Family::V0510),
            ("0.5.3rc2", Family::V055),
            ("0.4.7.post1", Family::V0410),
        ]
        .into_iter()
        .find(|(first, _)| since(version, first))
        .map_or(Family::V040, |(_, f)| f)
    }
}

/// The inputs as a formula generation reads them: with the release's family and the sizes of
/// the GPU's capacity tier.
pub(super) struct Gen<'a> {
    inputs: &'a Inputs<'a>,
    pub(super) family: Family,
    /// The tier's decode `max_bs` for this TP size.
    pub(super) tier_bs: i64,
    /// Chunked prefill size before the DP-attention split (user's, else the tier's).
    pub(super) cps0: i64,
}

impl<'a> Gen<'a> {
    fn of(i: &'a Inputs<'a>) -> Gen<'a> {
        let family = Family::of(i.version);
        let (cps, bs_small, bs_large) = tier(family, i.version, i.g, i.disagg.is_some());
        Gen {
            inputs: i,
            family,
            tier_bs: if i.tp < 4 { bs_small } else { bs_large },
            cps0: i.user_cps.unwrap_or(cps),
        }
    }
}

impl<'a> std::ops::Deref for Gen<'a> {
    type Target = Inputs<'a>;

    fn deref(&self) -> &Inputs<'a> {
        self.inputs
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
    /// The list 0.4.5.post3 – 0.4.7's model runner builds when ServerArgs leaves it to it.
    pub(crate) runner_bs: Option<Vec<i64>>,
    /// `max_running_requests` after resolution (user's, or 48 under speculative decoding).
    pub max_running_requests: Option<i64>,
    /// Prefill (piecewise / breakable) graph: enabled, and its token buckets.
    pub prefill_graph: bool,
    pub prefill_bs: Vec<i64>,
    /// SGLang's reserve `R` (MiB) behind `mem_fraction_static`, for reports.
    pub(crate) reserved_mib: f64,
    /// Attention-DP width (1 when off).
    pub(crate) attn_dp_size: i64,
}

pub(crate) use super::args::{ARG_BOUND, int_arg};
#[cfg(test)]
use lists::{decode_batch_sizes, prefill_batch_sizes};

/// Python's `round(x, 3)` for the values SGLang produces (no exact binary ties occur in practice).
pub(crate) fn round3(x: f64) -> f64 {
    format!("{x:.3}").parse().unwrap_or(x)
}

/// [`of`] for these arguments alone, on no particular GPU of `gpu_mem_mib` capacity (what the
/// goldens replay; the server resolves from all its facts).
pub fn resolve(
    version: &str,
    args: &SglangArgs,
    env: &Env,
    p: &Parallel,
    gpu_mem_mib: Option<u64>,
    model: Option<&ModelFacts>,
) -> SglangDefaults {
    let topology = Topology::without_gpus("arguments", Vec::new());
    let f = Facts {
        version,
        args,
        env,
        topology: &topology,
        gpus: &[],
        model,
        draft: None,
        host: None,
        packages: None,
    };
    of(&Inputs::of(&f, p, gpu_mem_mib))
}

/// SGLang's resolution of the memory-related defaults for this version, arguments and GPU
/// (`i.g` is what SGLang reads: the minimum `memory.total` over every GPU on the node).
pub(crate) fn of(i: &Inputs) -> SglangDefaults {
    let i = &Gen::of(i);
    let mut out = SglangDefaults {
        mem_fraction_static: 0.88,
        chunked_prefill_size: chunked_prefill_size(i),
        decode_graph: !i.disable_cuda_graph,
        decode_max_bs: None,
        decode_bs: None,
        runner_bs: None,
        max_running_requests: max_running_requests(i),
        prefill_graph: false,
        prefill_bs: Vec::new(),
        reserved_mib: 0.0,
        attn_dp_size: i.attn_dp,
    };
    let post_capture = match i.family {
        Family::V040 => {
            v040::v040(i, &mut out);
            false
        }
        Family::V0410 => {
            v0410::v0410(i, &mut out);
            false
        }
        Family::V055 => {
            v055::v055(i, &mut out);
            false
        }
        Family::V0510 => {
            v055::v0510(i, &mut out);
            false
        }
        Family::V0515 => v0515::v0515(i, &mut out),
    };
    vision_tower(i, &mut out, post_capture);
    out
}

/// The chunk after SGLang's adjustments: DP attention divides it among the DP ranks (after the
/// fraction heuristic ran; by 2 before 0.4.4.post1, when the DP size was the TP size), and
/// EAGLE turned chunking off in 0.4.1.post4 – 0.4.3.post2.
fn chunked_prefill_size(i: &Gen) -> i64 {
    let v = i.version;
    if crate::resolve::specparams::early_eagle(v, i.spec.as_deref()) {
        return -1;
    }
    if i.attn_dp > 1 && i.cps0 > 0 {
        let ranks = if since(v, "0.4.4.post1") {
            i.attn_dp
        } else {
            2
        };
        return i.cps0 / ranks;
    }
    i.cps0
}

/// Speculative decoding caps max_running_requests when unset: EAGLE at 32 from 0.4.3.post3
/// (EAGLE3 from 0.4.4.post2), 48 from 0.4.4.post4; STANDALONE too (0.5.2 on), NGRAM from 0.5.3rc2.
/// DeepSeek-V4: 256.
fn max_running_requests(i: &Gen) -> Option<i64> {
    let v = i.version;
    // DeepSeek-V4 sets 256 itself before the draft's cap is considered (0.5.12 on).
    let v4 = i.arch == Some(crate::facts::model::deepseek_v4::ARCH) && since(v, "0.5.12");
    match (&i.spec, i.user_mrr) {
        (_, Some(u)) => Some(u),
        (_, None) if v4 => Some(256),
        (Some(s), None) => {
            let sets = match s.as_str() {
                "EAGLE" => since(v, "0.4.3.post3"),
                "EAGLE3" => since(v, "0.4.4.post2"),
                // STANDALONE from its first release (0.5.2); NGRAM from 0.5.3rc2.
                "STANDALONE" => true,
                "NGRAM" => i.family >= Family::V055,
                _ => false,
            };
            let cap = if since(v, "0.4.4.post4") { 48 } else { 32 };
            sets.then_some(cap)
        }
        _ => None,
    }
}

/// `mem_fraction_static = round((g - R) / g, 3)` for the reserve `r` on a GPU of `g` MiB.
pub(super) fn apply_reserve(out: &mut SglangDefaults, g: f64, r: f64) {
    out.reserved_mib = r;
    out.mem_fraction_static = round3((g - r) / g);
}

/// Multimodal models: SGLang shrinks the fraction for the vision tower from 0.4.9 (by its size
/// from 0.4.9.post3; 0.5.16+ post-capture sizing instead subtracts 8 GiB of the capacity).
fn vision_tower(i: &Gen, out: &mut SglangDefaults, post_capture: bool) {
    let Some(m) = i.model else {
        return;
    };
    if !since(i.version, "0.4.9") {
        return;
    }
    let vlm = i.multimodal
        && !flag_of(i.args, &[opt::LANGUAGE_ONLY, opt::LANGUAGE_MODEL_ONLY])
        // From 0.5.17 a PD decode server keeps the whole fraction: it runs no vision tower.
        && !(since(i.version, "0.5.17") && i.disagg == Some(Disagg::Decode));
    if vlm && post_capture {
        if let Some(g) = i.g {
            out.mem_fraction_static -= 8.0 * GIB / g;
        }
    } else if vlm && !since(i.version, "0.4.9.post3") {
        out.mem_fraction_static *= 0.90;
    } else if vlm {
        let l = m.vision_layers.unwrap_or(24) as f64;
        let h = m.vision_hidden_size.unwrap_or(1024) as f64;
        let factor = (1.0 - 0.1 * (l * h * h / (24.0 * 1024.0 * 1024.0) - 1.0)).clamp(0.8, 1.05);
        out.mem_fraction_static *= 0.95 * factor;
    }
}

/// The decode batch sizes the server will actually capture: the list, cut to
/// `max_running_requests` (the req pool) at run time.
pub(crate) fn captured_decode_bs(
    d: &SglangDefaults,
    gpu_mem_mib: Option<u64>,
    mrr: Option<u64>,
) -> Vec<i64> {
    if !d.decode_graph {
        return Vec::new();
    }
    let list = match d.decode_bs.as_ref().or(d.runner_bs.as_ref()) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sglang::flagset;
    use serde_json::json;

    #[test]
    fn unknown_versions_use_the_nearest_older_formula() {
        assert_eq!(Family::of("0.3.6"), Family::V040);
        assert_eq!(Family::of("0.4.7"), Family::V040);
        assert_eq!(Family::of("0.4.7.post1"), Family::V0410);
        assert_eq!(Family::of("0.5.2"), Family::V0410);
        assert_eq!(Family::of("0.5.3rc0"), Family::V0410);
        assert_eq!(Family::of("0.5.3rc2"), Family::V055);
        assert_eq!(Family::of("0.5.7"), Family::V055);
        assert_eq!(Family::of("0.5.12"), Family::V0510);
        assert_eq!(Family::of("0.5.14"), Family::V0515);
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
