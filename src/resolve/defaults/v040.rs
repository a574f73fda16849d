//! 0.4.0 – 0.4.7: a fixed fraction by TP size (TP·PP from 0.4.6.post2), adjusted on large GPUs.

use super::Gen;
use super::since::since;
use super::tiers::decode_bs_v04;
use super::{GIB, SglangDefaults};

/// 0.4.0 – 0.4.7: the fraction, and the decode max_bs of the capacity tier.
pub(super) fn v040(i: &Gen, out: &mut SglangDefaults) {
    let mut max_bs = i
        .user_decode_max
        .or_else(|| decode_bs_v04(i.family, i.version, i.g, i.tp));
    // 0.4.0 – 0.4.0.post1: DP attention caps the decode graph at 96.
    if i.attn_dp > 1 && !since(i.version, "0.4.0.post2") {
        max_bs = max_bs.map(|b| b.min(96));
    }
    out.decode_max_bs = max_bs;
    out.mem_fraction_static = fraction(i);
}

/// The fraction by parallel size: ≥16 0.79, ≥8 0.81, ≥4 0.85, ≥2 0.87, else 0.88.
fn by_size(n: i64) -> f64 {
    match n {
        16.. => 0.79,
        8.. => 0.81,
        4.. => 0.85,
        2.. => 0.87,
        _ => 0.88,
    }
}

/// Until 0.4.5.post3 the TP table alone; then GPUs over 81,920 MiB keep 13 GiB free; from
/// 0.4.6.post2 (TP·PP) GPUs over 96 GiB grow the fraction, at most to 18 GiB free; 0.4.7 sets
/// 0.79 over 180,000 MB and keeps more free under speculative decoding. Not rounded.
fn fraction(i: &Gen) -> f64 {
    let v = i.version;
    let Some(g) = i.g.filter(|_| since(v, "0.4.5.post3")) else {
        return by_size(i.tp);
    };
    if !since(v, "0.4.6.post2") {
        return if g <= 81920.0 {
            by_size(i.tp)
        } else {
            (g - 13.0 * GIB) / g
        };
    }
    let mut m = if g <= 81920.0 {
        by_size(i.tp * i.pp)
    } else {
        0.88
    };
    let v047 = since(v, "0.4.7");
    let spec = i.spec.is_some();
    if v047 && g > 180_000.0 {
        m = 0.79;
    } else if g > 96.0 * GIB {
        let free = if v047 && spec { 20.0 } else { 18.0 } * GIB;
        m = (m + 48.0 * GIB * (1.0 - m) / g).min((g - free) / g);
    } else if v047 && spec {
        m *= 0.95;
    }
    m
}
