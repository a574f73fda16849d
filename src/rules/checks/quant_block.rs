//! Block-quantised FP8 checkpoints (`weight_block_size`, e.g. 128×128) against the shards that
//! tensor, attention-DP and expert parallelism cut their weights into. SGLang's FP8 linear and
//! MoE methods refuse, while building the model, a shard that is not a whole number of blocks.

use super::*;
use crate::facts::model::ModelFacts;
use crate::sglang::opt;
use crate::sglang::release::at_least;

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

impl Misfit {
    /// "`what` gives N-wide shards, not a multiple of block_n 128".
    fn shards(&self) -> String {
        let (name, size) = self.block;
        format!(
            "{} gives {}-wide shards, not a multiple of {name} {size}",
            self.what, self.shard
        )
    }

    /// What SGLang says when it builds the layer.
    fn refusal(&self) -> String {
        let (name, size) = self.block;
        format!(
            "SGLang stops while building the model ('… = {} is not divisible by weight quantization {name} = {size}')",
            self.shard
        )
    }
}

/// Checks one weight dimension of `total` split `shards` ways.
struct Sizes<'a> {
    model: &'a ModelFacts,
    n: u64,
    k: u64,
    /// The method skips the modules the checkpoint leaves unquantised (FP8's does; w4afp8's
    /// takes no such list).
    honours_ignored: bool,
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
        self.honours_ignored
            && self
                .model
                .quant_ignored
                .iter()
                .any(|l| fragments.iter().any(|f| l.contains(f)))
    }
}

/// What SGLang builds as block FP8: the FP8 method builds every quantised layer, experts
/// included, and skips what the checkpoint leaves unquantised; w4afp8's builds every linear
/// layer (the experts take its own MoE method), Qwen3.5's linear-attention projections too.
#[derive(Debug, Clone, Copy)]
struct Build<'v> {
    experts: bool,
    honours_ignored: bool,
    /// The release, for the linear-attention projections (`None`: not built as block FP8).
    linear_attention: Option<&'v str>,
}

const FP8: Build<'static> = Build {
    experts: true,
    honours_ignored: true,
    linear_attention: None,
};

/// Every shard of `m` under `l` that is not a whole number of `(n, k)` blocks, following the
/// checks of SGLang's FP8 methods: a merged (gate/up, QKV) or TP-split output dimension must
/// be a multiple of `block_n`, a TP-split input dimension a multiple of `block_k`.
fn misfits(m: &ModelFacts, l: Layout, (n, k): (u64, u64), build: Build) -> Vec<Misfit> {
    let mut s = Sizes {
        model: m,
        n,
        k,
        honours_ignored: build.honours_ignored,
        out: vec![],
    };
    // In the order SGLang builds them (a layer's attention, then the dense MLP of the first
    // layers, then the experts and the shared expert): its first error is the first misfit.
    if let Some(v) = build.linear_attention {
        gated_delta_net(&mut s, m, l, v);
    }
    attention(&mut s, m, l);
    dense_mlp(&mut s, m, l);
    if build.experts {
        experts(&mut s, m, l);
    }
    shared_expert(&mut s, m, l);
    s.out
}

/// Qwen3.5's linear-attention layers (the first layers it builds): the merged QKVZ and B/A
/// projections over attention TP, and the output projection's input. From 0.5.10rc0 B and A
/// are one merged layer, checked even unsplit; 0.5.9 builds them apart, checked when split.
fn gated_delta_net(s: &mut Sizes, m: &ModelFacts, l: Layout, version: &str) {
    let (Some(arch), Some(g)) = (m.architecture.as_deref(), m.linear_state.as_ref()) else {
        return;
    };
    if !QWEN3_5.contains(&arch) {
        return;
    }
    let (keys, values) = (g.groups * g.state, g.heads * g.head_dim);
    s.check(
        "linear-attention key heads × head dim",
        keys,
        l.attn_tp,
        "attention TP",
        false,
    );
    s.check(
        "linear-attention value heads × head dim",
        values,
        l.attn_tp,
        "attention TP",
        false,
    );
    if at_least(version, "0.5.10rc0") || l.attn_tp > 1 {
        s.check(
            "linear_num_value_heads (in_proj_ba)",
            g.heads,
            l.attn_tp,
            "attention TP",
            false,
        );
    }
    if l.attn_tp > 1 {
        s.check(
            "linear-attention value heads × head dim",
            values,
            l.attn_tp,
            "attention TP",
            true,
        );
    }
}

/// The Qwen3.5 classes SGLang builds with Gated DeltaNet layers.
const QWEN3_5: &[&str] = &[
    "Qwen3_5ForConditionalGeneration",
    "Qwen3_5MoeForConditionalGeneration",
    "Qwen3_5ForCausalLM",
    "Qwen3_5MoeForCausalLM",
];

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
    let bad = misfits(model, layout, block, FP8);
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

/// QUANT044: a checkpoint SGLang reads as `w4afp8` (a ModelOpt mixed-precision export, or a
/// W4AFP8 one) gets 128×128 block FP8 on every linear layer, whatever the checkpoint holds
/// there: a shard that is not whole blocks stops the model's construction.
pub(crate) fn w4afp8_block_shard(ctx: &Context) -> Vec<Fired> {
    let Some(m) = ctx.model else {
        return vec![];
    };
    // The checkpoint's reading at the release asked about (a later one may read it otherwise).
    let q = ctx.quant_given().or_else(|| m.quant_method_in(ctx.version));
    if q.as_deref() != Some("w4afp8") {
        return vec![];
    }
    let Some(layout) = Layout::of(ctx) else {
        return vec![];
    };
    let build = Build {
        experts: false,
        honours_ignored: false,
        linear_attention: Some(ctx.version),
    };
    let bad = misfits(m, layout, W4AFP8_BLOCK, build);
    let Some(first) = bad.first() else {
        return vec![];
    };
    let loads: Vec<String> = [1u64, 2, 4, 8]
        .into_iter()
        .filter(|&t| t != layout.tp && misfits(m, Layout::plain(t), W4AFP8_BLOCK, build).is_empty())
        .map(|t| t.to_string())
        .collect();
    let mixed = m.quant_method.as_deref() == Some("modelopt_mixed");
    let fix = match (loads.is_empty(), mixed) {
        (true, true) => "no TP size avoids it on this release; SGLang 0.5.15 and later read an export with NVFP4 layers as modelopt_mixed, which builds each layer as the checkpoint says".to_owned(),
        (true, false) => "no TP size avoids it; use a checkpoint of another format".to_owned(),
        (false, _) => format!("TP {} builds it", loads.join(" or ")),
    };
    vec![Fired::new(format!(
        "{} is read by SGLang {} as w4afp8, whose linear method builds every linear layer as 128×128 block FP8 (the checkpoint's own per-layer formats and unquantised modules aside), and {}: {}; {fix}",
        m.architecture.as_deref().unwrap_or("the model"),
        ctx.version,
        first.shards(),
        first.refusal(),
    ))]
}

/// The block w4afp8's linear method always takes.
const W4AFP8_BLOCK: (u64, u64) = (128, 128);

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
        "{} is FP8 block-quantised ({}×{} blocks), but {}{more}: {}; {}",
        m.architecture.as_deref().unwrap_or("the model"),
        block.0,
        block.1,
        first.shards(),
        first.refusal(),
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
        .filter(|&t| t < l.tp && misfits(m, Layout::plain(t), block, FP8).is_empty())
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
        let bad = misfits(&m, Layout::plain(8), b, FP8);
        assert_eq!(bad.len(), 2, "{bad:?}");
        assert_eq!(bad[0].shard, 192);
        assert_eq!(bad[0].block, ("block_n", 128));
        assert_eq!(bad[1].block, ("block_k", 128));
        assert!(misfits(&m, Layout::plain(4), b, FP8).is_empty());
        let ep8 = Layout {
            moe_tp: 1,
            ..Layout::plain(8)
        };
        assert!(misfits(&m, ep8, b, FP8).is_empty());
        // A dense model: Qwen3's intermediate_size is unused by its MoE layers.
        assert!(misfits(&m, Layout::plain(2), b, FP8).is_empty());
    }

    /// w4afp8 builds Qwen3.5's B/A projection (32 value heads) as block FP8: merged from
    /// 0.5.10rc0, so checked even at TP 1; 0.5.9 builds B and A apart, checked when split. The
    /// experts are left to their own method, and the checkpoint's ignore list is not read.
    #[test]
    fn w4afp8_checks_the_linear_attention_projections() {
        let m = ModelFacts {
            architecture: Some("Qwen3_5MoeForConditionalGeneration".into()),
            moe_intermediate_size: Some(96),
            num_experts: Some(256),
            linear_state: Some(crate::facts::model::hybrid::LinearState {
                layers: 30,
                inner: 4096,
                groups: 16,
                heads: 32,
                head_dim: 128,
                state: 128,
                conv_kernel: 4,
                attention_layers: 10,
            }),
            quant_ignored: vec!["linear_attn.in_proj_ba".into()],
            ..Default::default()
        };
        let build = |v| Build {
            experts: false,
            honours_ignored: false,
            linear_attention: Some(v),
        };
        let bad = misfits(&m, Layout::plain(1), W4AFP8_BLOCK, build("0.5.13"));
        assert_eq!(bad.len(), 1, "{bad:?}");
        assert_eq!((bad[0].shard, bad[0].block), (32, ("block_n", 128)));
        assert!(misfits(&m, Layout::plain(1), W4AFP8_BLOCK, build("0.5.9")).is_empty());
        assert_eq!(
            misfits(&m, Layout::plain(2), W4AFP8_BLOCK, build("0.5.9")).len(),
            1
        );
        // Block FP8 proper reads no linear-attention projection, and checks the experts.
        assert!(
            misfits(&m, Layout::plain(1), W4AFP8_BLOCK, FP8)
                .iter()
                .all(|b| b.expert)
        );
    }

    #[test]
    fn kv_heads_fewer_than_tp_are_replicated_whole() {
        let m = ModelFacts {
            num_attention_heads: Some(32),
            num_key_value_heads: Some(4),
            head_dim: Some(64),
            ..Default::default()
        };
        let bad = misfits(&m, Layout::plain(8), (128, 128), FP8);
        assert!(
            bad.iter().any(|b| b.shard == 64 && b.what.contains("KV")),
            "{bad:?}"
        );
        assert!(misfits(&m, Layout::plain(2), (128, 128), FP8).is_empty());
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
        assert!(misfits(&m, Layout::plain(64), (128, 128), FP8).is_empty());
        assert!(!misfits(&m, Layout::plain(256), (128, 128), FP8).is_empty());
        let dpa = Layout {
            attn_tp: 1,
            ..Layout::plain(256)
        };
        assert!(misfits(&m, dpa, (128, 128), FP8).is_empty());
    }
}
