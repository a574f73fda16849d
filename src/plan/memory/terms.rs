//! The reserve terms of the memory plan: what each GPU needs besides weights and KV cache.

use super::Context;
use crate::facts::model::ModelFacts;
use crate::facts::{Gpu, Topology};
use crate::resolve::{CustomAllReduce, Family, SglangDefaults};
use crate::sglang::opt;

pub(super) const MIB: f64 = 1024.0 * 1024.0;

/// MiB each captured decode graph keeps per layer, on top of SGLang's own pool terms. Logged
/// capture costs with a known config imply 0.8 (24 GiB Llama-3.1-8B), 1.0 (4×L4 QwQ-32B) and
/// 1.45 (4×H100-96G Llama-3.1-8B); 1.5 is the smallest value that covers all stock NVIDIA logs.
/// Llama-4-Maverick FP8 on 8×H100 (6.2 GiB, an upstream bug report) and an Ascend NPU log are
/// above it: [`super::plan`] caps the fraction at SGLang's default for exactly such cases.
pub(crate) const GRAPH_MIB_PER_GRAPH_LAYER: f64 = 1.5;

/// MiB each captured decode graph's pool grows by per gathered batch slot (max batch × DP ranks)
/// under attention DP. Bound by the one DP-attention log that sizes its graph pools:
/// sglang-6027 (DeepSeek-V3, tp16/dp16 on H100, 0.4.6.post2, max batch 160) held 3.63 GiB in
/// them, 1.26 GiB above our non-DP graph term for the same model and batch list: 1.26 GiB over
/// 160 × 16 slots is 0.51 MiB (rounded up). SGLang's own reserve heuristic adds 3 MiB per slot,
/// 6× what that server used.
pub(crate) const DP_GRAPH_MIB_PER_GATHERED_SLOT: f64 = 0.51;

/// CUDA context + torch/cuBLAS handles per process, MiB (Hopper and later load larger modules).
pub(super) fn cuda_context_mib(gpu: &Gpu) -> u64 {
    match gpu.cc() {
        Some((major, _)) if major >= 9 => 600,
        _ => 500,
    }
}

/// NCCL communicator buffers per GPU, MiB: none alone; grows with the ring/tree peers;
/// plus the symmetric-memory pool when `--enable-symm-mem` (4 GiB by default).
pub(super) fn nccl_mib(ctx: &Context, tp: i64, pp: i64) -> u64 {
    let mut m = 0u64;
    if tp > 1 {
        m += (200 + 100 * tp as u64).min(1400);
    }
    if pp > 1 {
        m += 200;
    }
    if ctx.args.knows(opt::ENABLE_SYMM_MEM) && ctx.args.flag(opt::ENABLE_SYMM_MEM) {
        let gb = ctx
            .env
            .get("SGLANG_SYMM_MEM_PREALLOC_GB_SIZE")
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|v| *v >= 0.0)
            .unwrap_or(4.0);
        m += mib_term(gb * 1024.0);
    }
    m
}

/// Custom all-reduce buffers per GPU, MiB: the IPC buffers, or the symmetric-memory pool.
pub(super) fn custom_allreduce_mib(kind: CustomAllReduce, gpu: &Gpu, ws: i64) -> u64 {
    match kind {
        CustomAllReduce::Off(_) => 0,
        // meta + staging buffer + rank data, 8 MiB each
        CustomAllReduce::Legacy => 24,
        CustomAllReduce::V2 => {
            let ws = ws.max(2) as u64;
            let symmetric = match gpu.cc() {
                Some((10, _)) | Some((11, _)) | Some((12, _)) => 48,
                _ if ws == 2 => 80,
                _ if ws <= 4 => 34,
                _ => 18,
            };
            // plus the graph-address table: 131072 entries × ws × 8 B
            symmetric + ws
        }
    }
}

/// The GPUs the server uses, smallest free memory first.
pub(super) fn used_gpus<'a>(topology: &'a Topology, gpus: &[u32]) -> Vec<&'a Gpu> {
    let mut v: Vec<&Gpu> = gpus.iter().filter_map(|&i| topology.gpu(i)).collect();
    v.sort_by_key(|g| g.memory_free_mib());
    v
}

/// A reserve term in whole MiB, bounded so that sums of terms cannot overflow.
pub(super) fn mib_term(mib: f64) -> u64 {
    if mib.is_nan() {
        return 0;
    }
    mib.clamp(0.0, 1e12).ceil() as u64
}

pub(super) fn gib(mib: f64) -> f64 {
    mib / 1024.0
}

pub(super) fn fmt_gib(mib: f64) -> String {
    format!("{:.1} GiB", gib(mib))
}

/// Activation + workspace memory outside the static pool, MiB, term by term.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Activations {
    /// One prefill chunk's live tensors: ~16 hidden-sized buffers (residual, norms, qkv,
    /// attention out, all-reduce) and the gate+up+act of the MLP shard, as computed.
    pub(crate) chunk: f64,
    /// fp32 logits for a full decode batch over the TP shard of the vocabulary.
    pub(crate) logits: f64,
    /// The req-to-token table (int32, requests × context).
    pub(crate) req_to_token: f64,
    /// Attention/sampling workspaces allocated after the KV pool.
    pub(crate) workspace: f64,
}

impl Activations {
    /// What the run itself needs, without an allowance for fragmentation.
    pub fn needed_mib(&self) -> f64 {
        self.chunk + self.logits + self.req_to_token + self.workspace
    }
    /// What we reserve: the chunk doubled for the caching allocator's fragmentation and
    /// transient copies (kernel scratch, dtype casts).
    pub(crate) fn reserve_mib(&self) -> u64 {
        mib_term(self.needed_mib() + self.chunk)
    }
}

/// The tokens one prefill step puts through a rank's layers. Without attention DP both are the
/// chunk. With it (SGLang's `dp_gather`, 0.4.4 – 0.5.x) attention runs on the rank's own share
/// of the chunk (`--chunked-prefill-size` is divided among the DP ranks), while the MLP/MoE
/// layers run on the tokens gathered from every rank of the DP group: at most the undivided
/// chunk.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChunkTokens {
    pub(crate) local: i64,
    pub(crate) gathered: i64,
}

impl ChunkTokens {
    /// `local` tokens on each of `attn_dp` ranks.
    pub fn of(local: i64, attn_dp: i64) -> ChunkTokens {
        ChunkTokens {
            local,
            gathered: local.saturating_mul(attn_dp.max(1)),
        }
    }
}

/// Bytes per token of a layer's two parts: attention side (14 hidden-sized buffers: residual,
/// norms, qkv, attention out) and MLP side (its input and output, 2 hidden-sized, plus the
/// gate+up+act of the MLP shard). Their sum is the 16 buffers + MLP shard of a plain TP layer.
/// `expert_tp` is the TP size each expert is split by (TP / EP).
fn per_token_bytes(m: &ModelFacts, tp: f64, expert_tp: f64) -> (f64, f64) {
    let h = m.hidden_size.unwrap_or(4096) as f64;
    let b = m.dtype_bytes() as f64;
    let mlp = match (m.moe_intermediate_size, m.num_experts) {
        (Some(mi), Some(e)) if e > 1 => moe_elements(h, mi as f64 / expert_tp, m),
        _ => 3.0 * m.intermediate_size.map_or(4.0 * h, |i| i as f64) / tp,
    };
    (14.0 * h * b, (2.0 * h + mlp) * b)
}

/// Elements per token of the fused MoE kernel's buffers for experts split to `shard` columns:
/// per routed expert the gate/up output (2 × shard), freed before the down projection's output
/// (hidden-sized, summed over the experts only afterwards), while the activated half (shard)
/// lives through both. The down output is what makes big chunks expensive: top-k × hidden.
fn moe_elements(h: f64, shard: f64, m: &ModelFacts) -> f64 {
    let topk = m.num_experts_per_tok.unwrap_or(1).max(1) as f64;
    topk * (shard + (2.0 * shard).max(h))
}

/// Activations for a prefill step of `tokens` and `mrr` requests of up to `ctx` tokens.
pub fn activations(
    model: Option<&ModelFacts>,
    tokens: ChunkTokens,
    (tp, ep): (i64, i64),
    mrr: u64,
    ctx: u64,
) -> Activations {
    let local = tokens.local.max(2048) as f64;
    let gathered = (tokens.gathered as f64).max(local);
    let expert_tp = (tp / ep.max(1)).max(1) as f64;
    let tp = tp.max(1) as f64;
    let (chunk, vocab) = match model {
        Some(m) => {
            let (attn, mlp) = per_token_bytes(m, tp, expert_tp);
            (
                local * attn + gathered * mlp,
                m.vocab_size.unwrap_or(128_000) as f64,
            )
        }
        // Unknown model: SGLang's own 1.5 MiB per token (already a reserve, so halved here).
        None => (gathered * 0.75 * MIB, 128_000.0),
    };
    Activations {
        chunk: chunk / MIB,
        logits: mrr.min(4096) as f64 * vocab / tp * 4.0 / MIB,
        req_to_token: (mrr as f64 + 1.0) * ctx as f64 * 4.0 / MIB,
        workspace: 384.0,
    }
}

/// CUDA-graph pools, MiB, from the batch sizes that will be captured: SGLang's pool estimate
/// (2 MiB per slot of the largest decode batch, 8 MiB per prefill bucket or 1.5 GiB with MLA)
/// plus what each captured decode graph keeps for itself, [`GRAPH_MIB_PER_GRAPH_LAYER`] per
/// layer; doubled for speculative decoding (draft decode + extend graphs).
///
/// This is an estimate, not a bound: capture costs in public logs grow with graphs × layers
/// but the per-layer constant varies 6× between them (tests/it/memory.rs prints the table), which
/// is why [`super::plan`] never plans above SGLang's own default fraction.
pub(super) fn cuda_graphs_mib(
    decode_bs: &[i64],
    d: &SglangDefaults,
    model: Option<&ModelFacts>,
    spec: bool,
    attn_dp: i64,
) -> u64 {
    let mla = model.is_some_and(ModelFacts::is_mla);
    let layers = model.and_then(|m| m.num_hidden_layers).unwrap_or(32) as f64;
    let max_bs = decode_bs.iter().copied().max().unwrap_or(0).max(0) as f64;
    let mut m = max_bs * 2.0 + decode_bs.len() as f64 * layers * GRAPH_MIB_PER_GRAPH_LAYER;
    if attn_dp > 1 {
        m += max_bs * attn_dp as f64 * DP_GRAPH_MIB_PER_GATHERED_SLOT;
    }
    if spec {
        m *= 2.0;
    }
    if d.prefill_graph {
        m += if mla {
            1536.0
        } else {
            d.prefill_bs.len() as f64 * 8.0
        };
    }
    mib_term(m)
}

/// The estimated number of requests SGLang lets run at once (req-pool size), per version.
pub(crate) fn max_running_requests(
    family: Family,
    tokens: u64,
    context_len: u64,
    user: Option<i64>,
    spec48: Option<i64>,
    attn_dp: i64,
) -> u64 {
    let ctx = context_len.max(1);
    let estimated = ((tokens as f64 / ctx as f64 * 512.0) as u64).clamp(2048, 4096);
    let half = tokens / 2;
    match user.or(spec48) {
        Some(u) => {
            let u = if family >= Family::V0510 {
                (u / attn_dp.max(1)).max(1) as u64
            } else {
                u.max(1) as u64
            };
            u.min(half).max(1)
        }
        None => estimated.min(half).max(1),
    }
}
