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
    if max_bs.is_none() && i.user_decode_bs.is_none() && since(i.version, "0.4.5.post3") {
        out.runner_bs = Some(runner_list(i));
    }
    out.mem_fraction_static = fraction(i);
}

/// The model runner's own list: to 160 (denser under speculative decoding or without padding),
/// 160–256 more on GPUs over 80 GiB (from 0.4.6 with one DP rank only; over 96 GiB from
/// 0.4.6.post2), 256–512 more over 180,000 MiB from 0.4.7.
fn runner_list(i: &Gen) -> Vec<i64> {
    let v = i.version;
    let v047 = since(v, "0.4.7");
    let mut l: Vec<i64> = if i.spec.is_some() {
        let mut l: Vec<i64> = (1..9).chain((10..33).step_by(2)).collect();
        if v047 {
            l.extend((40..64).step_by(8).chain((80..161).step_by(16)));
        } else {
            l.extend((40..161).step_by(16));
        }
        l
    } else if i.no_padding {
        let from = if v047 { 48 } else { 40 };
        (1..33).chain((from..161).step_by(16)).collect()
    } else {
        [1, 2, 4, 8]
            .into_iter()
            .chain((16..161).step_by(8))
            .collect()
    };
    let g = i.g.unwrap_or(0.0);
    let large = if since(v, "0.4.6.post2") {
        g > 96.0 * GIB
    } else {
        g > 81920.0 && (!since(v, "0.4.6") || i.dp <= 1)
    };
    if large {
        l.extend((160..257).step_by(8));
    }
    if v047 && g > 180_000.0 {
        l.extend((256..513).step_by(16));
    }
    l.sort_unstable();
    l.dedup();
    l
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

#[cfg(test)]
mod tests {
    use super::super::{captured_decode_bs, resolve};
    use crate::facts::Env;
    use crate::sglang::{Parallel, SglangArgs, flagset};
    use serde_json::{Value, json};

    /// The largest decode batch the runner captures for these arguments on a GPU of `mib`.
    fn max_captured(version: &str, values: &[(&str, Value)], mib: u64) -> Option<i64> {
        let args = SglangArgs::with_values(flagset::get(version).unwrap(), values);
        let d = resolve(
            version,
            &args,
            &Env::default(),
            &Parallel::of(&args),
            Some(mib),
            None,
        );
        captured_decode_bs(&d, Some(mib), None).into_iter().max()
    }

    #[test]
    fn the_runner_list_follows_each_release_thresholds() {
        const H20: u64 = 97_871;
        const H200: u64 = 143_771;
        const B200: u64 = 183_359;
        let tp = || ("--tp-size", json!(8));
        // 0.4.5.post2 caps at 160 in its arguments; 0.4.5.post3 grows over 80 GiB.
        assert_eq!(max_captured("0.4.5.post2", &[tp()], H200), Some(160));
        assert_eq!(max_captured("0.4.5.post3", &[tp()], H20), Some(256));
        // 0.4.6 – 0.4.6.post1: one DP rank only.
        let dp = [
            tp(),
            ("--dp-size", json!(8)),
            ("--enable-dp-attention", json!(true)),
        ];
        assert_eq!(max_captured("0.4.6", &dp, H200), Some(160));
        assert_eq!(max_captured("0.4.5.post3", &dp, H200), Some(256));
        // 0.4.6.post2: over 96 GiB, which the H20 is not.
        assert_eq!(max_captured("0.4.6.post2", &[tp()], H20), Some(160));
        assert_eq!(max_captured("0.4.6.post2", &dp, H200), Some(256));
        // 0.4.7: to 512 over 180,000 MiB.
        assert_eq!(max_captured("0.4.7", &[tp()], B200), Some(512));
        assert_eq!(max_captured("0.4.7", &[tp()], H200), Some(256));
    }
}
