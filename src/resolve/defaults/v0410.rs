//! 0.4.7.post1 – 0.5.3rc0: the reserve by capacity tier.

use super::Gen;
use super::since::since;
use super::tiers::decode_bs_v04;
use super::{GIB, SglangDefaults, apply_reserve};

/// 0.4.7.post1 – 0.5.3rc0: the reserve `R` is a per-capacity-tier constant plus a TP·PP term,
/// plus speculative decoding (STANDALONE: 6 GiB from 0.5.2) and DP-attention terms.
pub(super) fn v0410(i: &Gen, out: &mut SglangDefaults) {
    let ps = (i.tp * i.pp) as f64;
    out.decode_max_bs = i
        .user_decode_max
        .or_else(|| decode_bs_v04(i.family, i.version, i.g, i.tp));
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
        match i.spec.as_deref() {
            Some("STANDALONE") if since(i.version, "0.5.2") => r += 6.0 * GIB,
            Some(_) => r += 2.0 * GIB,
            None => {}
        }
        if i.attn_dp > 1 {
            r += 4.0 * GIB;
        }
        apply_reserve(out, g, r);
    }
}
