//! SGLang's capacity tiers: the default chunked prefill size and decode CUDA-graph max batch
//! size by GPU memory, per generation.

use super::since::{SMALL_GPU_CHUNK, SMALL_GPU_DECODE_BS, pick, since};
use super::{Family, GIB};

/// (chunked_prefill_size, decode max_bs for tp < 4, for tp ≥ 4) on a GPU of `gpu_mem` MiB
/// (unknown: SGLang's fallbacks). Before 0.5.3rc2 the max_bs pair is the small-GPU one; see
/// [`decode_bs_v04`].
pub(super) fn tier(
    family: Family,
    version: &str,
    gpu_mem: Option<f64>,
    disagg: bool,
) -> (i64, i64, i64) {
    let Some(gpu_mem) = gpu_mem else {
        return match family {
            Family::V040 => tier_v040(version, 25_000.0, disagg),
            _ => (4096, 160, 160),
        };
    };
    match family {
        Family::V040 => tier_v040(version, gpu_mem, disagg),
        Family::V0410 => {
            let cps = if gpu_mem < 35.0 * GIB {
                2048
            } else if gpu_mem < 160.0 * GIB {
                8192
            } else {
                16384
            };
            (cps, 8, 80)
        }
        _ if gpu_mem < 20.0 * GIB => (2048, 8, 8),
        _ if gpu_mem < 35.0 * GIB => {
            let (small, large) = pick(version, SMALL_GPU_DECODE_BS);
            (pick(version, SMALL_GPU_CHUNK), small, large)
        }
        _ if gpu_mem < 60.0 * GIB => (4096, 32, 160),
        _ if gpu_mem < 160.0 * GIB => (8192, 256, 512),
        _ => (16384, 512, 512),
    }
}

/// 0.4.0 – 0.4.7: 2048 under 25,000 MiB, 16384 over 180,000 MB (0.4.7) or under PD
/// disaggregation (0.4.6.post2), else 8192; max_bs 8 under 25,000 MiB (80 for tp ≥ 4 from
/// 0.4.0.post1).
fn tier_v040(version: &str, gpu_mem: f64, disagg: bool) -> (i64, i64, i64) {
    let cps = if since(version, "0.4.7") && gpu_mem > 180_000.0 {
        16384
    } else if gpu_mem < 25_000.0 {
        2048
    } else if disagg && since(version, "0.4.6.post2") {
        16384
    } else {
        8192
    };
    let large_tp = if since(version, "0.4.0.post1") { 80 } else { 8 };
    (cps, 8, large_tp)
}

/// Before 0.5.3rc2, the default decode max_bs: the small-GPU pair under 25,000 MiB (35 GiB from
/// 0.4.7.post1); above that 160 until 0.4.5.post3, then left to the runner (`None`).
pub(super) fn decode_bs_v04(
    family: Family,
    version: &str,
    gpu_mem: Option<f64>,
    tp: i64,
) -> Option<i64> {
    let limit = if family == Family::V040 {
        25_000.0
    } else {
        35.0 * GIB
    };
    match gpu_mem {
        Some(g) if g < limit => {
            let (_, small, large) = tier(family, version, Some(g), false);
            Some(if tp < 4 { small } else { large })
        }
        _ => (family == Family::V040 && !since(version, "0.4.5.post3")).then_some(160),
    }
}
