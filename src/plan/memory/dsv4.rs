//! DeepSeek-V4's KV pools as SGLang sizes them on CUDA (its DSV4 pool configurator, read in
//! 0.5.12 to 0.5.23). One latent row per token (448 FP8 values, 64 BF16 rope values, scales:
//! 584 bytes), not split over TP. Per full token the pools hold:
//!
//! * a sliding-window pool on every layer, at `swa_full_tokens_ratio` of the tokens (0.1 unless
//!   the user gives another ratio);
//! * on ratio-4 layers, a compressed row per 4 tokens plus the indexer's 132-byte key, and a
//!   compressor state ring (8 rows, 16 with a draft; FP32, 2·2·512 + 2·2·128 values a row) per
//!   sliding-window page;
//! * on ratio-128 layers, a compressed row per 128 tokens.
//!
//! From 0.5.21 each page is padded to a multiple of 576 bytes (pages of 256 tokens, 64 ratio-4
//! rows, 2 ratio-128 rows) and the state ring counts per page instead of per window. The
//! ratio-128 compressor state is a fixed pool from 0.5.15: a 128-row ring (256 with a draft) per
//! request slot plus one, subtracted before the tokens are counted; 0.5.12–0.5.14 price it per
//! token instead. With a draft the whole per-token figure grows by (layers + 1) / layers.

use super::kv::KvCell;
use crate::facts::model::ModelFacts;
use crate::facts::model::deepseek_v4::V4Layout;
use crate::resolve::Context;
use crate::sglang::opt;
use crate::sglang::release::at_least;

/// Bytes of one latent row.
const ROW: f64 = 584.0;
/// Bytes of one indexer key (128 FP8 values and an FP32 scale).
const INDEXER_ROW: f64 = 132.0;
/// Bytes of one ratio-4 compressor state row (with the indexer's), FP32.
const STATE4_ROW: f64 = (2.0 * 2.0 * 512.0 + 2.0 * 2.0 * 128.0) * 4.0;
/// Bytes of one ratio-128 compressor state row, FP32.
const STATE128_ROW: f64 = 1024.0 * 4.0;
/// SGLang's sliding window and page for this model.
const WINDOW: f64 = 128.0;
const PAGE: f64 = 256.0;

/// The KV cell per full token, and the fixed state pool taken before the tokens, bytes.
pub(crate) struct Pools {
    pub(crate) cell: KvCell,
    pub(crate) fixed_bytes: f64,
}

/// DeepSeek-V4's pools on this line; `None` for any other model.
pub(crate) fn pools(ctx: &Context, m: &ModelFacts) -> Option<Pools> {
    let layout = m.deepseek_v4.as_ref()?;
    let v = ctx.version;
    if !at_least(v, "0.5.12") {
        return None;
    }
    let p = &ctx.server.parallel;
    let draft = ctx
        .server
        .speculative
        .as_ref()
        .is_some_and(|s| s.uses_draft_model());
    let (layers, n4, n128) = counts(layout, m.num_hidden_layers?, p.pp as u64, v);
    let ratio = swa_ratio(ctx);
    let ring4 = if draft { 16.0 } else { 8.0 };
    let mut per_token = if at_least(v, "0.5.21") {
        ratio * (layers * padded(PAGE) + ring4 / PAGE * STATE4_ROW * n4)
            + n4 * (padded(PAGE / 4.0) / 4.0 + INDEXER_ROW / 4.0)
            + n128 * padded(PAGE / 128.0) / 128.0
    } else {
        ratio * (layers * ROW + ring4 / WINDOW * STATE4_ROW * n4)
            + n4 * (ROW + INDEXER_ROW) / 4.0
            + n128 * ROW / 128.0
    };
    if !at_least(v, "0.5.15") {
        per_token += ratio * STATE128_ROW * n128;
    }
    if draft && layers > 0.0 {
        per_token *= (layers + 1.0) / layers;
    }
    let bytes = per_token.ceil() as u64;
    Some(Pools {
        cell: KvCell {
            target: bytes,
            total: bytes,
            swa_ratio: None,
            swa_token_bytes: 0,
        },
        fixed_bytes: if at_least(v, "0.5.15") {
            fixed_state(ctx, draft, n128)
        } else {
            0.0
        },
    })
}

/// Layers on the first pipeline stage, and among them the ratio-4 and ratio-128 ones (0.5.12
/// counts every entry of `compress_ratios`, MTP's included).
fn counts(l: &V4Layout, layers: u64, pp: u64, v: &str) -> (f64, f64, f64) {
    let all = if at_least(v, "0.5.13") {
        (layers as usize).min(l.compress_ratios.len())
    } else {
        l.compress_ratios.len()
    };
    let stage = all.div_ceil(pp.max(1) as usize);
    let used = &l.compress_ratios[..stage];
    let n = |r: u64| used.iter().filter(|x| **x == r).count() as f64;
    (
        stage as f64,
        n(4),
        used.iter().filter(|x| **x > 4).count() as f64,
    )
}

/// A page of `rows` latent rows padded to a multiple of 576 bytes, per row.
fn padded(rows: f64) -> f64 {
    (rows * ROW / 576.0).ceil() * 576.0 / rows
}

/// `--swa-full-tokens-ratio` when the user gives a value other than the option's default,
/// else the 0.1 SGLang sets for this model.
fn swa_ratio(ctx: &Context) -> f64 {
    ctx.args
        .get(opt::SWA_FULL_TOKENS_RATIO)
        .and_then(serde_json::Value::as_f64)
        .filter(|r| *r > 0.0 && *r <= 1.0 && (*r - 0.8).abs() > 1e-9)
        .unwrap_or(0.1)
}

/// The ratio-128 state pool: per DP worker, a ring per request slot plus one and one more ring,
/// in whole 128-row blocks, on each ratio-128 layer. DeepSeek-V4 caps the requests at 256
/// unless the user sets them.
fn fixed_state(ctx: &Context, draft: bool, n128: f64) -> f64 {
    let ring = if draft { 256.0 } else { 128.0 };
    let requests = ctx
        .args
        .int(opt::MAX_RUNNING_REQUESTS)
        .filter(|r| *r > 0)
        .unwrap_or(256) as f64;
    let per_worker = (requests / ctx.server.parallel.attn_dp.max(1) as f64)
        .floor()
        .max(1.0);
    let rows = (((per_worker + 1.0) * ring + ring + 1.0) / 128.0).ceil() * 128.0;
    rows * STATE128_ROW * n128
}
