//! SGLang's default CUDA-graph batch-size lists.

use super::since::since;

/// `[1,2,4,8,12] + 16..=256/8 + 272..<512/16 + 512..=max/32` (or the denser speculative list).
pub(crate) fn decode_batch_sizes(
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
pub(crate) fn prefill_batch_sizes(max_bs: i64) -> Vec<i64> {
    let mut v: Vec<i64> = (4..33).step_by(4).collect();
    v.extend((48..257).step_by(16));
    v.extend((288..513).step_by(32));
    v.extend((576..=1024).step_by(64));
    v.extend((1280..=4096).step_by(256));
    v.extend((4608..=max_bs.max(0)).step_by(512));
    v.retain(|&b| b <= max_bs);
    v
}

/// 0.5.3.post2 – 0.5.8 piecewise token buckets (0.5.9 on: [`prefill_batch_sizes`]).
pub(super) fn piecewise_tokens_v055(version: &str, max: i64) -> Vec<i64> {
    if since(version, "0.5.9") {
        return prefill_batch_sizes(max);
    }
    let mut v: Vec<i64> = (4..33).step_by(4).collect();
    v.extend((48..257).step_by(16));
    v.extend((288..513).step_by(32));
    if since(version, "0.5.8") {
        v.extend((640..=1024).step_by(64));
        v.extend((1280..=4096).step_by(256));
        v.extend((4608..=max.max(0)).step_by(512));
    } else {
        v.extend((640..=4096).step_by(128));
        v.extend((4352..=max.max(0)).step_by(256));
    }
    v.retain(|&b| b <= max);
    v
}
