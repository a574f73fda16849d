//! Block-quantised FP8 checkpoints (`weight_block_size`, e.g. 128×128) against the shards that
//! tensor, attention-DP and expert parallelism cut their weights into. SGLang's FP8 linear and
//! MoE methods refuse, while building the model, a shard that is not a whole number of blocks.

use super::*;
use crate::facts::model::ModelFacts;
use crate::sglang::opt;

/// How the server splits the model's weights.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Layout {
    pub(super) tp: u64,
    /// Attention's TP width (TP / attention DP).
    pub(super) attn_tp: u64,
    /// The experts' TP width (TP / EP / MoE-DP).
    pub(super) moe_tp: u64,
    /// The dense MLP layers' TP width (`--moe-dense-tp-size 1` keeps them whole).
    dense_tp: u64,
    /// A DeepSeek-style shared expert's TP width: 1 (replicated) with an all-to-all backend or
    /// `SGLANG_SHARED_EXPERT_TP1`.
    shared_tp: u64,
}

impl Layout {
    pub(super) fn of(ctx: &Context) -> Option<Layout> {
        let tp = u64::try_from(ctx.tp()).ok()?.max(1);
        let attn_dp = u64::try_from(ctx.attn_dp()).ok()?.max(1);
        // An all-to-all backend makes SGLang set EP to TP.
        let ep = if ctx.moe_a2a().is_some() {
            tp
        } else {
            u64::try_from(ctx.ep()).ok()?.max(1)
        };
        let moe_dp = u64::try_from(ctx.user().int(opt::MOE_DP_SIZE).unwrap_or(1))
            .ok()?
            .max(1);
        let dense_tp = if ctx.server.parallel.moe_dense_tp == Some(1) {
            1
        } else {
            tp
        };
        let shared_replicated =
            ctx.moe_a2a().is_some() || ctx.env.truthy("SGLANG_SHARED_EXPERT_TP1");
        Some(Layout {
            tp,
            attn_tp: whole(tp, attn_dp)?,
            moe_tp: whole(tp, ep.checked_mul(moe_dp)?)?,
            dense_tp,
            shared_tp: if shared_replicated { 1 } else { tp },
        })
    }

    /// Plain TP `tp`: no attention DP, no EP.
    fn plain(tp: u64) -> Layout {
        Layout {
            tp,
            attn_tp: tp,
            moe_tp: tp,
            dense_tp: tp,
            shared_tp: tp,
        }
    }
}

/// `a / b` when it divides evenly (other rules report uneven splits).
fn whole(a: u64, b: u64) -> Option<u64> {
    (b > 0 && a.is_multiple_of(b)).then(|| a / b)
}

/// One shard that is not a whole number of blocks.
#[derive(Debug, Clone, PartialEq)]
struct Misfit {
    /// The weight and how it was split, e.g. "moe_intermediate_size 1536 / MoE TP 8".
    what: String,
    shard: u64,
    /// `block_n` (an output dimension) or `block_k` (an input dimension).
    block: (&'static str, u64),
    /// A routed expert's weight (expert parallelism would keep it whole).
    expert: bool,
}

/// Checks one weight dimension of `total` split `shards` ways.
struct Sizes<'a> {
    model: &'a ModelFacts,
    n: u64,
    k: u64,
    out: Vec<Misfit>,
}

impl Sizes<'_> {
    fn check(&mut self, name: &str, total: u64, shards: u64, split: &str, input: bool) {
        let Some(shard) = whole(total, shards) else {
            return;
        };
        let block = if input {
            ("block_k", self.k)
        } else {
            ("block_n", self.n)
        };
        if !shard.is_multiple_of(block.1) {
            self.out.push(Misfit {
                what: format!("{name} {total} / {split} {shards}"),
                shard,
                block,
                expert: split == "MoE TP",
            });
        }
    }

    /// The checkpoint leaves this module unquantised somewhere: SGLang skips the check there.
    fn skipped(&self, fragments: &[&str]) -> bool {
        self.model
            .quant_ignored
            .iter()
            .any(|l| fragments.iter().any(|f| l.contains(f)))
    }
}

/// Every shard of `m` under `l` that is not a whole number of `(n, k)` blocks, following the
/// checks of SGLang's FP8 methods: a merged (gate/up, QKV) or TP-split output dimension must
/// be a multiple of `block_n`, a TP-split input dimension a multiple of `block_k`.
fn misfits(m: &ModelFacts, l: Layout, (n, k): (u64, u64)) -> Vec<Misfit> {
    let mut s = Sizes {
        model: m,
        n,
        k,
        out: vec![],
    };
    // In the order SGLang builds them (a layer's attention, then the dense MLP of the first
    // layers, then the experts and the shared expert): its first error is the first misfit.
    attention(&mut s, m, l);
    dense_mlp(&mut s, m, l);
    experts(&mut s, m, l);
    shared_expert(&mut s, m, l);
    s.out
}

fn is_moe(m: &ModelFacts) -> bool {
    m.num_experts.is_some_and(|e| e > 1)
}

/// Routed experts: gate/up always, down when TP > 1 (SGLang's FP8 MoE method). DeepSeek-V4's
/// official experts are MXFP4 (32-wide scale groups) in its FP8 config: its shared expert is the
/// block-FP8 MLP, split TP ways unless replicated.
fn experts(s: &mut Sizes, m: &ModelFacts, l: Layout) {
    if !is_moe(m) {
        return;
    }
    if m.deepseek_v4_official().is_some() {
        let (Some(w), n) = (m.moe_intermediate_size, m.n_shared_experts.unwrap_or(0)) else {
            return;
        };
        let name = "shared_experts (moe_intermediate_size × n_shared_experts)";
        if n > 0 && l.shared_tp > 1 {
            mlp(s, name, w * n, l.shared_tp, l.tp);
        }
        return;
    }
    let (name, width) = match (m.moe_intermediate_size, m.intermediate_size) {
        (Some(w), _) => ("moe_intermediate_size", w),
        (None, Some(w)) => ("intermediate_size", w),
        _ => return,
    };
    s.check(name, width, l.moe_tp, "MoE TP", false);
    if l.tp > 1 {
        s.check(name, width, l.moe_tp, "MoE TP", true);
    }
}

/// The dense MLP (all layers of a dense model, the dense layers of a MoE).
fn dense_mlp(s: &mut Sizes, m: &ModelFacts, l: Layout) {
    let width = if is_moe(m) {
        m.dense_intermediate_size.or_else(|| {
            m.intermediate_size
                .filter(|_| m.first_k_dense_replace.is_some_and(|k| k > 0))
        })
    } else {
        m.intermediate_size
    };
    let Some(width) = width else { return };
    if s.skipped(&[
        "mlp.gate_proj",
        "mlp.up_proj",
        "mlp.gate_up_proj",
        "mlp.down_proj",
    ]) {
        return;
    }
    mlp(s, "intermediate_size", width, l.dense_tp, l.tp);
}

/// A Qwen-MoE-style shared expert: a dense MLP over the full TP.
fn shared_expert(s: &mut Sizes, m: &ModelFacts, l: Layout) {
    let Some(width) = m.shared_expert_intermediate_size else {
        return;
    };
    if s.skipped(&["shared_expert."]) {
        return;
    }
    mlp(s, "shared_expert_intermediate_size", width, l.tp, l.tp);
}

/// gate/up is merged (always checked); down is row-parallel (checked when split TP ways).
fn mlp(s: &mut Sizes, name: &str, width: u64, shards: u64, tp: u64) {
    s.check(name, width, shards, "TP", false);
    if tp > 1 && shards == tp {
        s.check(name, width, shards, "TP", true);
    }
}

fn attention(s: &mut Sizes, m: &ModelFacts, l: Layout) {
    let Some(heads) = m.num_attention_heads.filter(|&h| h > 0) else {
        return;
    };
    if s.skipped(&["self_attn."]) {
        return;
    }
    // Unmerged projections are checked only when split the full TP ways.
    let split = l.tp > 1 && l.attn_tp == l.tp;
    if m.is_mla() {
        let (Some(nope), Some(rope), Some(v)) =
            (m.qk_nope_head_dim, m.qk_rope_head_dim, m.v_head_dim)
        else {
            return;
        };
        if split {
            s.check(
                "query heads × (qk_nope + qk_rope)",
                heads * (nope + rope),
                l.attn_tp,
                "attention TP",
                false,
            );
            s.check(
                "heads × (qk_nope + v_head_dim)",
                heads * (nope + v),
                l.attn_tp,
                "attention TP",
                false,
            );
            s.check(
                "heads × v_head_dim",
                heads * v,
                l.attn_tp,
                "attention TP",
                true,
            );
        }
        return;
    }
    let Some(hd) = m.head_dim_or_derived().filter(|&d| d > 0) else {
        return;
    };
    // QKV is merged: every part is checked. KV heads fewer than the TP width are replicated.
    s.check(
        "query heads × head_dim",
        heads * hd,
        l.attn_tp,
        "attention TP",
        false,
    );
    let kv = m.num_key_value_heads.unwrap_or(heads);
    if kv >= l.attn_tp {
        s.check(
            "KV heads × head_dim",
            kv * hd,
            l.attn_tp,
            "attention TP",
            false,
        );
    } else if !hd.is_multiple_of(s.n) {
        s.out.push(Misfit {
            what: format!(
                "{kv} KV heads over attention TP {} (one replicated head of head_dim {hd} per GPU)",
                l.attn_tp
            ),
            shard: hd,
            block: ("block_n", s.n),
            expert: false,
        });
    }
    if split {
        s.check(
            "heads × head_dim",
            heads * hd,
            l.attn_tp,
            "attention TP",
            true,
        );
    }
}

/// A block-FP8 checkpoint at a layout, and its shards that are not whole blocks.
struct Misfits<'c> {
    model: &'c ModelFacts,
    layout: Layout,
    block: (u64, u64),
    bad: Vec<Misfit>,
}

/// The shards of a block-FP8 checkpoint that are not whole blocks at this layout.
fn block_misfits<'c>(ctx: &Context<'c>) -> Option<Misfits<'c>> {
    let model = ctx.model?;
    let block = model.weight_block_size?;
    if ctx.quant().as_deref() != Some("fp8") {
        return None;
    }
    let layout = Layout::of(ctx)?;
    let bad = misfits(model, layout, block);
    (!bad.is_empty()).then_some(Misfits {
        model,
        layout,
        block,
        bad,
    })
}

/// A misfit of the MoE experts' or a shared expert's gate/up shards: what version-pinned
/// reports show SGLang stopping on.
fn evidenced(b: &Misfit) -> bool {
    b.expert || b.what.starts_with("moe_intermediate_size") || b.what.starts_with("shared_expert")
}

/// QUANT006: the experts' (or a shared expert's) shards are not whole blocks.
pub(crate) fn fp8_block_shard(ctx: &Context) -> Vec<Fired> {
    match block_misfits(ctx) {
        Some(f) if f.bad.iter().any(evidenced) => {
            vec![Fired::new(misfit_message(
                ctx, f.model, f.layout, f.block, &f.bad,
            ))]
        }
        _ => vec![],
    }
}

/// QUANT008: only attention or dense-MLP shards are not whole blocks.
pub(crate) fn fp8_block_shard_dense(ctx: &Context) -> Vec<Fired> {
    match block_misfits(ctx) {
        Some(f) if !f.bad.iter().any(evidenced) => {
            vec![Fired::new(misfit_message(
                ctx, f.model, f.layout, f.block, &f.bad,
            ))]
        }
        _ => vec![],
    }
}

fn misfit_message(
    ctx: &Context,
    m: &ModelFacts,
    layout: Layout,
    block: (u64, u64),
    bad: &[Misfit],
) -> String {
    let first = &bad[0];
    let more = match bad.len() {
        1 => String::new(),
        2 => " (and one more weight)".to_string(),
        n => format!(" (and {} more weights)", n - 1),
    };
    format!(
        "{} is FP8 block-quantised ({}×{} blocks), but {} gives {}-wide shards, not a multiple of {} {}{more}: SGLang stops while building the model ('… = {} is not divisible by weight quantization {} = {}'); {}",
        m.architecture.as_deref().unwrap_or("the model"),
        block.0,
        block.1,
        first.what,
        first.shard,
        first.block.0,
        first.block.1,
        first.shard,
        first.block.0,
        first.block.1,
        advice(ctx, m, layout, block, bad),
    )
}

/// What would load: EP for the experts, or the TP sizes whose shards are whole blocks.
fn advice(ctx: &Context, m: &ModelFacts, l: Layout, block: (u64, u64), bad: &[Misfit]) -> String {
    let mut parts = vec![];
    let only_experts = bad.iter().all(|b| b.expert);
    let experts_ok_with_ep = m.num_experts.is_some_and(|e| e.is_multiple_of(l.tp));
    if only_experts && experts_ok_with_ep && ctx.user().knows(opt::EP_SIZE) {
        parts.push(format!(
            "--ep-size {} keeps every expert whole on one GPU",
            l.tp
        ));
    }
    let fits: Vec<String> = [1u64, 2, 4, 8, 16, 32]
        .into_iter()
        .filter(|&t| t < l.tp && misfits(m, Layout::plain(t), block).is_empty())
        .map(|t| t.to_string())
        .collect();
    if let Some((last, rest)) = fits.split_last() {
        let list = if rest.is_empty() {
            last.clone()
        } else {
            format!("{} or {last}", rest.join(", "))
        };
        parts.push(format!("TP {list} loads (with replicas for more GPUs)"));
    }
    if parts.is_empty() {
        return "use a BF16 or per-tensor FP8 checkpoint at this TP".into();
    }
    parts.join(", or ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn qwen3_235b() -> ModelFacts {
        ModelFacts {
            architecture: Some("Qwen3MoeForCausalLM".into()),
            num_attention_heads: Some(64),
            num_key_value_heads: Some(4),
            head_dim: Some(128),
            intermediate_size: Some(12288),
            moe_intermediate_size: Some(1536),
            num_experts: Some(128),
            ..Default::default()
        }
    }

    #[test]
    fn moe_shards_follow_tp_over_ep() {
        let m = qwen3_235b();
        let b = (128, 128);
        let bad = misfits(&m, Layout::plain(8), b);
        assert_eq!(bad.len(), 2, "{bad:?}");
        assert_eq!(bad[0].shard, 192);
        assert_eq!(bad[0].block, ("block_n", 128));
        assert_eq!(bad[1].block, ("block_k", 128));
        assert!(misfits(&m, Layout::plain(4), b).is_empty());
        let ep8 = Layout {
            moe_tp: 1,
            ..Layout::plain(8)
        };
        assert!(misfits(&m, ep8, b).is_empty());
        // A dense model: Qwen3's intermediate_size is unused by its MoE layers.
        assert!(misfits(&m, Layout::plain(2), b).is_empty());
    }

    #[test]
    fn kv_heads_fewer_than_tp_are_replicated_whole() {
        let m = ModelFacts {
            num_attention_heads: Some(32),
            num_key_value_heads: Some(4),
            head_dim: Some(64),
            ..Default::default()
        };
        let bad = misfits(&m, Layout::plain(8), (128, 128));
        assert!(
            bad.iter().any(|b| b.shard == 64 && b.what.contains("KV")),
            "{bad:?}"
        );
        assert!(misfits(&m, Layout::plain(2), (128, 128)).is_empty());
    }

    #[test]
    fn attention_dp_skips_the_unmerged_checks() {
        let m = ModelFacts {
            num_attention_heads: Some(128),
            kv_lora_rank: Some(512),
            qk_nope_head_dim: Some(128),
            qk_rope_head_dim: Some(64),
            v_head_dim: Some(128),
            ..Default::default()
        };
        // 128 heads over TP 64: 2 × 128 = 256 fits; over 256 ranks 64 would not.
        assert!(misfits(&m, Layout::plain(64), (128, 128)).is_empty());
        assert!(!misfits(&m, Layout::plain(256), (128, 128)).is_empty());
        let dpa = Layout {
            attn_tp: 1,
            ..Layout::plain(256)
        };
        assert!(misfits(&m, dpa, (128, 128)).is_empty());
    }
}
