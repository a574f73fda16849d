//! ≤ 0.5.2: the reserve by capacity tier.

use super::inputs::Inputs;
use super::{GIB, SglangDefaults, apply_reserve};

/// ≤ 0.5.2: the reserve `R` is a per-capacity-tier constant plus a TP·PP term.
pub(super) fn v0410(i: &Inputs, out: &mut SglangDefaults) {
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
