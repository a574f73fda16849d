//! The memory planner: SGLang's own defaults per version, KV capacity, and our safe plan.
//!
//! Two views of the same GPU:
//! * SGLang's: it reserves `R` MiB of the *smallest total capacity on the node* for graphs and
//!   activations (its heuristic, [`sglang`]), then at run time gives the KV cache what is left of
//!   `B·mfs` after the weights, where `B` is the free memory measured after distributed init.
//! * Ours: the free memory of the GPUs the server will actually use, minus each cost we can name
//!   (CUDA context, NCCL and custom all-reduce buffers, CUDA-graph pools for the batch sizes that
//!   will be captured, activations, other processes, a margin). Every term is reported.

pub mod kv;
pub mod sglang;

use crate::facts::derived::{self, CustomAllReduce};
use crate::facts::model::ModelFacts;
use crate::facts::{Env, Gpu, Topology};
use crate::plan::json::{Memory, MfsSource, Reserved};
use crate::rules::Hit;
use crate::sglang::SglangArgs;

pub use kv::{KvCell, kv_bytes_per_token};
use sglang::int_arg;
pub use sglang::{Family, SglangDefaults};

const MIB: f64 = 1024.0 * 1024.0;

/// MiB each captured decode graph keeps per layer, on top of SGLang's own pool terms. Logged
/// capture costs with a known config imply 0.8 (24 GiB Llama-3.1-8B), 1.0 (4×L4 QwQ-32B) and
/// 1.45 (4×H100-96G Llama-3.1-8B); 1.5 is the smallest value that covers all stock NVIDIA logs.
/// Llama-4-Maverick FP8 on 8×H100 (6.2 GiB, an upstream bug report) and an Ascend NPU log are
/// above it: [`plan`] caps the fraction at SGLang's default for exactly such cases.
pub const GRAPH_MIB_PER_GRAPH_LAYER: f64 = 1.5;

/// Everything the planner looks at.
pub struct MemoryInput<'a> {
    pub version: &'a str,
    pub args: &'a SglangArgs,
    pub env: &'a Env,
    pub topology: &'a Topology,
    /// Topology indices the server will use.
    pub gpus: &'a [u32],
    pub model: Option<&'a ModelFacts>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct MemoryOutcome {
    pub memory: Option<Memory>,
    pub hits: Vec<Hit>,
    /// Some when the lead should add `--mem-fraction-static X` to the arguments.
    pub planned_mem_fraction_static: Option<f64>,
    /// Free memory per GPU before the weights (SGLang's `B`, to which the fraction applies), MiB.
    pub baseline_mib: f64,
    /// The fraction our own reserve terms alone would give, before the cap at SGLang's default.
    pub physics_mem_fraction_static: f64,
}

/// One finding from the planner. Kept in one place so the `Hit` shape can change in one place.
fn hit(code: &'static str, message: String) -> Hit {
    // MEM codes are catalogue entries (a unit test in rules checks them); severity and
    // allow/deny are applied again by the pipeline through `rules::emit`.
    let rule = crate::rules::lookup(code).expect("MEM codes are in the catalogue");
    Hit {
        code,
        name: rule.name,
        severity: rule.severity,
        message,
        fix: None,
    }
}

/// CUDA context + torch/cuBLAS handles per process, MiB (Hopper and later load larger modules).
fn cuda_context_mib(gpu: &Gpu) -> u64 {
    match gpu.cc() {
        Some((major, _)) if major >= 9 => 600,
        _ => 500,
    }
}

/// NCCL communicator buffers per GPU, MiB: none alone; grows with the ring/tree peers;
/// plus the symmetric-memory pool when `--enable-symm-mem` (4 GiB default, §1.2).
fn nccl_mib(input: &MemoryInput, tp: i64, pp: i64) -> u64 {
    let mut m = 0u64;
    if tp > 1 {
        m += (200 + 100 * tp as u64).min(1400);
    }
    if pp > 1 {
        m += 200;
    }
    if input.args.knows("--enable-symm-mem") && input.args.flag("--enable-symm-mem") {
        let gb = input
            .env
            .get("SGLANG_SYMM_MEM_PREALLOC_GB_SIZE")
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|v| *v >= 0.0)
            .unwrap_or(4.0);
        m += mib_term(gb * 1024.0);
    }
    m
}

/// Custom all-reduce buffers per GPU, MiB (sglang-internals §3.4).
fn custom_allreduce_mib(kind: CustomAllReduce, gpu: &Gpu, ws: i64) -> u64 {
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
fn used_gpus<'a>(topology: &'a Topology, gpus: &[u32]) -> Vec<&'a Gpu> {
    let mut v: Vec<&Gpu> = gpus.iter().filter_map(|&i| topology.gpu(i)).collect();
    v.sort_by_key(|g| g.memory_free_mib());
    v
}

/// A reserve term in whole MiB, bounded so that sums of terms cannot overflow.
fn mib_term(mib: f64) -> u64 {
    if mib.is_nan() {
        return 0;
    }
    mib.clamp(0.0, 1e12).ceil() as u64
}

fn gib(mib: f64) -> f64 {
    mib / 1024.0
}

fn fmt_gib(mib: f64) -> String {
    format!("{:.1} GiB", gib(mib))
}

/// Activation + workspace memory outside the static pool, MiB, term by term.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Activations {
    /// One prefill chunk's live tensors: ~16 hidden-sized buffers (residual, norms, qkv,
    /// attention out, all-reduce) and the gate+up+act of the MLP shard, as computed.
    pub chunk: f64,
    /// fp32 logits for a full decode batch over the TP shard of the vocabulary.
    pub logits: f64,
    /// The req-to-token table (int32, requests × context).
    pub req_to_token: f64,
    /// Attention/sampling workspaces allocated after the KV pool.
    pub workspace: f64,
}

impl Activations {
    /// What the run itself needs, without an allowance for fragmentation.
    pub fn needed_mib(&self) -> f64 {
        self.chunk + self.logits + self.req_to_token + self.workspace
    }
    /// What we reserve: the chunk doubled for the caching allocator's fragmentation and
    /// transient copies (kernel scratch, dtype casts).
    pub fn reserve_mib(&self) -> u64 {
        mib_term(self.needed_mib() + self.chunk)
    }
}

/// Activations for a `tokens`-token prefill chunk and `mrr` requests of up to `ctx` tokens.
pub fn activations(
    model: Option<&ModelFacts>,
    tokens: i64,
    tp: i64,
    mrr: u64,
    ctx: u64,
) -> Activations {
    let tokens = tokens.max(2048) as f64;
    let tp = tp.max(1) as f64;
    let (per_token, vocab) = match model {
        Some(m) => {
            let h = m.hidden_size.unwrap_or(4096) as f64;
            let inter = m
                .moe_intermediate_size
                .map(|mi| mi as f64 * m.num_experts_per_tok.unwrap_or(1) as f64)
                .or(m.intermediate_size.map(|i| i as f64))
                .unwrap_or(4.0 * h);
            let b = m.dtype_bytes() as f64;
            (
                (16.0 * h + 3.0 * inter / tp) * b,
                m.vocab_size.unwrap_or(128_000) as f64,
            )
        }
        // Unknown model: SGLang's own 1.5 MiB per token (already a reserve, so halved here).
        None => (0.75 * MIB, 128_000.0),
    };
    Activations {
        chunk: tokens * per_token / MIB,
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
/// but the per-layer constant varies 6× between them (tests/memory.rs prints the table), which
/// is why [`plan`] never plans above SGLang's own default fraction.
fn cuda_graphs_mib(
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
        m += max_bs * attn_dp as f64 * 3.0;
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
pub fn max_running_requests(
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

/// Plan GPU memory. Never panics on odd inputs: missing GPUs or model facts give a partial result.
pub fn plan(input: &MemoryInput) -> MemoryOutcome {
    let args = input.args;
    let mut hits = Vec::new();
    let gpus = used_gpus(input.topology, input.gpus);
    let Some(&tightest) = gpus.first() else {
        return MemoryOutcome {
            memory: None,
            hits,
            planned_mem_fraction_static: None,
            baseline_mib: 0.0,
            physics_mem_fraction_static: 0.0,
        };
    };
    // SGLang's capacity: min total over every GPU on the node (CUDA_VISIBLE_DEVICES ignored).
    let sglang_gpu_mem = input
        .topology
        .gpus
        .iter()
        .map(|g| g.memory_total_mib)
        .min()
        .unwrap_or(tightest.memory_total_mib);
    let model = input.model;
    let defaults = sglang::resolve(input.version, args, input.env, Some(sglang_gpu_mem), model);
    let family = Family::of(input.version);
    let tp = int_arg(args, "--tp-size").unwrap_or(1).max(1);
    let pp = int_arg(args, "--pp-size").unwrap_or(1).max(1);
    let spec = sglang::speculative_algorithm(args);
    let capacity = gpus.iter().map(|g| g.memory_total_mib).min().unwrap_or(0);

    let user_mfs = args
        .is_set("--mem-fraction-static")
        .then(|| args.float("--mem-fraction-static"))
        .flatten();

    // Pre-load baseline B (SGLang's `pre_model_load_memory`): free memory after context and
    // communicators exist.
    let cuda_context = cuda_context_mib(tightest);
    let nccl = nccl_mib(input, tp, pp);
    let tp_gpus: Vec<u32> = input.gpus.iter().copied().take(tp as usize).collect();
    let car_kind =
        derived::custom_allreduce(input.version, args, input.env, input.topology, &tp_gpus);
    let custom_allreduce = custom_allreduce_mib(car_kind, tightest, tp);
    let other = tightest.memory_used_mib.unwrap_or(0);
    let free = tightest.memory_free_mib();
    let baseline_mib = free as f64 - (cuda_context + nccl + custom_allreduce) as f64;

    let cell = model.and_then(|m| kv::kv_cell(input.version, args, input.env, m));
    let weights_mib = model
        .and_then(|m| kv::weights_per_gpu_bytes(args, input.env, m))
        .map(|b| b as f64 / MIB);
    let context_len = model.and_then(|m| m.context_length).unwrap_or(4096);
    let page = sglang::page_size(
        input.version,
        args,
        model.is_some_and(ModelFacts::is_mla),
        tightest.cc().map(|c| c.0),
    );

    // Requests the server will admit (for graphs, logits and the req-to-token table): SGLang's
    // estimate from a first pass at the KV size under its default fraction.
    let mfs_for_estimate = user_mfs.unwrap_or(defaults.mem_fraction_static);
    let kv_tokens_at = |mfs: f64| -> Option<u64> {
        let cell = cell.as_ref()?;
        let w = weights_mib?;
        let rest_mib = baseline_mib - w - baseline_mib * (1.0 - mfs);
        Some(kv::tokens_from_rest(rest_mib, cell, page, args))
    };
    let mrr_for = |tokens: Option<u64>| -> u64 {
        match tokens {
            Some(t) => max_running_requests(
                family,
                t,
                context_len,
                int_arg(args, "--max-running-requests"),
                defaults.max_running_requests,
                defaults.attn_dp_size,
            ),
            None => defaults
                .max_running_requests
                .map(|m| m.max(1) as u64)
                .unwrap_or(2048),
        }
    };
    let mrr_estimate = mrr_for(kv_tokens_at(mfs_for_estimate));
    let captured = sglang::captured_decode_bs(&defaults, Some(sglang_gpu_mem), Some(mrr_estimate));
    let cuda_graphs = cuda_graphs_mib(
        &captured,
        &defaults,
        model,
        spec.is_some(),
        defaults.attn_dp_size,
    );
    let chunk = if defaults.chunked_prefill_size > 0 {
        defaults.chunked_prefill_size
    } else {
        int_arg(args, "--max-prefill-tokens").unwrap_or(16384)
    };
    // With attention DP each rank prefills its share of the chunk, but the MLP/MoE layers run
    // on the tokens gathered from every DP rank: the whole chunk.
    let gathered = chunk.saturating_mul(defaults.attn_dp_size.max(1));
    let activations = activations(model, gathered, tp, mrr_estimate, context_len).reserve_mib();
    let margin = ((capacity as f64 * 0.02) as u64).max(1024);
    let reserved = Reserved {
        cuda_context,
        nccl,
        custom_allreduce,
        cuda_graphs,
        activations,
        other_processes: other,
        margin,
    };
    let slack_needed = (cuda_graphs + activations + margin) as f64;

    // Our own fraction: the part of B not needed by graphs, activations and the margin, rounded
    // down.
    let physics = if baseline_mib > 0.0 {
        (((1.0 - slack_needed / baseline_mib) * 1000.0).floor() / 1000.0).clamp(0.05, 0.98)
    } else {
        0.05
    };
    // Policy: never above SGLang's own default. Our graph and activation terms are estimates
    // (graph capture in real logs costs 0.9–5.7 MiB per graph per layer, and a DP-attention
    // server OOMed at run time on a 2.6 GiB transient no shape formula predicts), while the
    // default's reserve is what every stock server in the logs started with. Raising the
    // fraction above it would need each reserve term to be evidenced for this model and GPU,
    // and none is. So our terms can only take memory from the KV cache, never give it.
    // A default at or below the floor (SGLang's 1.5 MiB per prefill token on a huge chunk can
    // even go negative) is not a fraction SGLang can run with, so it caps nothing.
    let planned = if defaults.mem_fraction_static >= 0.05 {
        physics.min(defaults.mem_fraction_static)
    } else {
        physics
    };
    let (mfs, source) = match user_mfs {
        Some(u) => (u, MfsSource::User),
        None => (planned, MfsSource::Planned),
    };

    let kv_tokens = kv_tokens_at(mfs);
    let rest_mib = weights_mib.map(|w| baseline_mib - w - baseline_mib * (1.0 - mfs));
    let fits = rest_mib.map(|r| r > 0.0 && kv_tokens.is_some_and(|t| t > 0));
    let mrr = kv_tokens.filter(|&t| t > 0).map(|t| mrr_for(Some(t)));

    // Findings.
    if model.is_none() {
        hits.push(hit(
            "MEM001",
            "model config not available offline: weights and KV cache not planned; \
             SGLang's defaults shown"
                .into(),
        ));
    }
    let slack_mib = baseline_mib * (1.0 - mfs);
    if let (Some(u), Some(w)) = (user_mfs, weights_mib)
        && baseline_mib * u <= w
    {
        hits.push(hit(
            "MEM004",
            format!(
                "--mem-fraction-static {u} is too low for the weights: {} static vs {} of weights \
                     per GPU; SGLang will fail with no room for the KV cache; use at least {:.3} \
                     (planned {planned:.3})",
                fmt_gib(baseline_mib * u),
                fmt_gib(w),
                (w / baseline_mib + 0.005).min(0.99),
            ),
        ));
    }
    if let Some(u) = user_mfs
        && slack_mib < slack_needed
    {
        hits.push(hit(
            "MEM003",
            format!(
                "--mem-fraction-static {u} leaves {} outside the static pool but CUDA graphs, \
                     activations and margin need {} (graphs {}, activations {}); expect OOM during \
                     capture or under load; planned value {planned:.3}",
                fmt_gib(slack_mib),
                fmt_gib(slack_needed),
                fmt_gib(cuda_graphs as f64),
                fmt_gib(activations as f64),
            ),
        ));
    }
    if user_mfs.is_none() && fits == Some(false) {
        let w = weights_mib.unwrap_or(0.0);
        let projected = w + slack_needed + (cuda_context + nccl + custom_allreduce) as f64;
        // The smallest power-of-two TP at which the weights leave a tenth of the free memory
        // for the KV cache after the same overheads.
        let total_w = w * (tp * pp) as f64;
        let overheads = slack_needed + (cuda_context + nccl + custom_allreduce) as f64;
        let bigger_tp = [2i64, 4, 8, 16, 32, 64]
            .into_iter()
            .filter(|&t| t > tp)
            .find(|&t| total_w / (t * pp) as f64 + overheads < free as f64 * 0.9);
        let mut ways = vec![match bigger_tp {
            Some(t) => format!("--tp-size {t} (now {tp}; more nodes if the box has fewer GPUs)"),
            None => format!("a larger --tp-size (now {tp})"),
        }];
        if model.is_some_and(|m| m.weight_bits.is_none_or(|b| b >= 16)) {
            ways.push("an FP8 or 4-bit checkpoint".into());
        }
        ways.push("a shorter --context-length".into());
        let graph_flag = if args.knows("--cuda-graph-max-bs-decode") {
            "--cuda-graph-max-bs-decode"
        } else {
            "--cuda-graph-max-bs"
        };
        ways.push(format!("a lower {graph_flag}"));
        if args.str("--kv-cache-dtype").is_none_or(|k| k == "auto") {
            ways.push("--kv-cache-dtype fp8_e5m2".into());
        }
        hits.push(hit(
            "MEM005",
            format!(
                "model does not fit: projected {} per GPU (weights {}, graphs+activations+margin {}) \
                 vs {} free on GPU {}; try {}",
                fmt_gib(projected),
                fmt_gib(w),
                fmt_gib(slack_needed),
                fmt_gib(free as f64),
                tightest.index,
                ways.join(", "),
            ),
        ));
    }
    if let (Some(t), Some(c), Some(true)) = (kv_tokens, cell.as_ref(), fits) {
        let kv_mib = t as f64 * c.total as f64 / MIB;
        if cuda_graphs as f64 > 0.25 * kv_mib && cuda_graphs > 1024 {
            hits.push(hit(
                "MEM006",
                format!(
                    "CUDA-graph buffers ({}) are large next to the KV cache ({}); a lower decode max \
                     batch size frees KV space",
                    fmt_gib(cuda_graphs as f64),
                    fmt_gib(kv_mib),
                ),
            ));
        }
    }

    let memory = Memory {
        gpu_memory_mib: capacity,
        mem_fraction_static: mfs,
        mem_fraction_static_source: source,
        sglang_default_mem_fraction_static: Some(defaults.mem_fraction_static),
        sglang_default_chunked_prefill_size: Some(defaults.chunked_prefill_size),
        sglang_default_cuda_graph_max_bs: defaults.decode_max_bs,
        weights_per_gpu_gib: weights_mib.map(|w| (gib(w) * 100.0).round() / 100.0),
        kv_cache_bytes_per_token: cell.as_ref().map(|c| c.target),
        kv_cache_tokens: kv_tokens,
        max_running_requests: mrr,
        reserved_mib: reserved,
        fits,
    };
    MemoryOutcome {
        planned_mem_fraction_static: (source == MfsSource::Planned).then_some(planned),
        memory: Some(memory),
        hits,
        baseline_mib,
        physics_mem_fraction_static: physics,
    }
}

/// Compact human table: capacity, each reserve term, weights, KV pool, tokens, requests.
pub fn render_table(m: &Memory) -> String {
    render_table_with_context(m, None)
}

/// [`render_table`] plus how many requests fit at full `context_len` tokens at once.
pub fn render_table_with_context(m: &Memory, context_len: Option<u64>) -> String {
    let r = &m.reserved_mib;
    let mut out = String::new();
    let line = |out: &mut String, k: &str, v: String| {
        out.push_str(&format!("  {k:<28} {v:>14}\n"));
    };
    let mib = |v: u64| format!("{v} MiB");
    line(&mut out, "GPU capacity", mib(m.gpu_memory_mib));
    line(&mut out, "- other processes", mib(r.other_processes));
    line(&mut out, "- CUDA context", mib(r.cuda_context));
    line(&mut out, "- NCCL / symm-mem buffers", mib(r.nccl));
    line(&mut out, "- custom all-reduce", mib(r.custom_allreduce));
    line(&mut out, "- CUDA graphs", mib(r.cuda_graphs));
    line(&mut out, "- activations + workspaces", mib(r.activations));
    line(&mut out, "- margin", mib(r.margin));
    match m.weights_per_gpu_gib {
        Some(w) => line(&mut out, "weights per GPU", format!("{w:.2} GiB")),
        None => line(&mut out, "weights per GPU", "unknown".into()),
    }
    if let (Some(t), Some(b)) = (m.kv_cache_tokens, m.kv_cache_bytes_per_token) {
        line(
            &mut out,
            "KV cache pool",
            format!("{:.2} GiB", t as f64 * b as f64 / (1024.0 * MIB)),
        );
        line(&mut out, "KV bytes per token", b.to_string());
        line(&mut out, "KV tokens", t.to_string());
    }
    if let Some(r) = m.max_running_requests {
        line(&mut out, "max running requests", r.to_string());
    }
    if let (Some(t), Some(c)) = (m.kv_cache_tokens, context_len.filter(|&c| c > 0)) {
        line(
            &mut out,
            &format!("requests at {c} tokens"),
            (t / c).to_string(),
        );
    }
    let src = match m.mem_fraction_static_source {
        MfsSource::User => "user",
        MfsSource::Planned => "planned",
    };
    let sg = m
        .sglang_default_mem_fraction_static
        .map(|v| format!(" (SGLang default {v:.3})"))
        .unwrap_or_default();
    out.push_str(&format!(
        "  --mem-fraction-static {:.3} [{src}]{sg}\n",
        m.mem_fraction_static
    ));
    match m.fits {
        Some(true) => out.push_str("  fits: yes\n"),
        Some(false) => out.push_str("  fits: NO\n"),
        None => out.push_str("  fits: unknown (model not available)\n"),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sglang::flagset;
    use serde_json::{Value, json};

    fn node(n: u32, total_mib: u64, used_mib: u64, cc: &str, nvlink: bool) -> Topology {
        let gpus = (0..n)
            .map(|i| Gpu {
                index: i,
                uuid: format!("GPU-{i}"),
                name: "test".into(),
                pci_bus_id: format!("0000:{i:02x}:00.0"),
                compute_capability: cc.into(),
                memory_total_mib: total_mib,
                memory_used_mib: Some(used_mib),
                mig_enabled: false,
                numa_node: None,
                pcie_gen: None,
                pcie_width: None,
            })
            .collect();
        let links = crate::facts::topology::pairs(&(0..n).collect::<Vec<_>>())
            .map(|(a, b)| crate::facts::Link {
                gpus: [a, b],
                path: if nvlink { "NV18".into() } else { "SYS".into() },
                nvlink,
                p2p: "ok".into(),
            })
            .collect();
        Topology {
            schema: crate::facts::topology::SCHEMA.into(),
            source: "test".into(),
            hostname: None,
            driver_version: None,
            cuda_driver_version: None,
            gpus,
            links,
        }
    }

    fn model(name: &str) -> ModelFacts {
        let dir = format!(
            "{}/tests/fixtures/models/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        let args = SglangArgs::with_values(flagset::get("0.5.23").unwrap(), &[]);
        crate::facts::model::load(&dir, &Env::default(), &args)
            .facts
            .unwrap()
    }

    fn run(
        version: &str,
        values: &[(&str, Value)],
        topo: &Topology,
        m: Option<&ModelFacts>,
    ) -> MemoryOutcome {
        let args = SglangArgs::with_values(flagset::get(version).unwrap(), values);
        let gpus: Vec<u32> =
            (0..int_arg(&args, "--tp-size").unwrap_or(1).clamp(1, 64) as u32).collect();
        plan(&MemoryInput {
            version,
            args: &args,
            env: &Env::default(),
            topology: topo,
            gpus: &gpus,
            model: m,
        })
    }

    fn codes(o: &MemoryOutcome) -> Vec<&'static str> {
        o.hits.iter().map(|h| h.code).collect()
    }

    #[test]
    fn llama8b_on_h100_is_planned_and_fits() {
        let m = model("meta-llama__Llama-3.1-8B-Instruct");
        let topo = node(8, 81559, 0, "9.0", true);
        let o = run("0.5.23", &[("--tp-size", json!(1))], &topo, Some(&m));
        let mem = o.memory.clone().unwrap();
        assert_eq!(mem.mem_fraction_static_source, MfsSource::Planned);
        assert_eq!(o.planned_mem_fraction_static, Some(mem.mem_fraction_static));
        assert_eq!(mem.sglang_default_mem_fraction_static, Some(0.83));
        assert_eq!(mem.kv_cache_bytes_per_token, Some(131072));
        assert_eq!(mem.weights_per_gpu_gib, Some(14.96));
        assert_eq!(mem.fits, Some(true));
        assert!(
            mem.mem_fraction_static > 0.8 && mem.mem_fraction_static < 0.95,
            "{mem:?}"
        );
        let tokens = mem.kv_cache_tokens.unwrap();
        assert!(tokens > 400_000 && tokens < 520_000, "{tokens}");
        assert!(codes(&o).is_empty(), "{:?}", o.hits);
        let t = render_table(&mem);
        assert!(
            t.contains("KV tokens") && t.contains("planned") && t.contains("0.830"),
            "{t}"
        );
    }

    #[test]
    fn planned_fraction_is_capped_at_the_default_and_lowered_by_our_terms() {
        let m = model("meta-llama__Llama-3.1-8B-Instruct");
        let topo = node(8, 81559, 0, "9.0", true);
        // Our terms alone would give more than the default: the default is planned.
        let o = run("0.5.23", &[("--tp-size", json!(8))], &topo, Some(&m));
        let mem = o.memory.clone().unwrap();
        let default = mem.sglang_default_mem_fraction_static.unwrap();
        assert!(o.physics_mem_fraction_static > default, "{o:?}");
        assert_eq!(o.planned_mem_fraction_static, Some(default));
        // 4096 requests at 128k context on a 24 GiB L4: the req-to-token table alone is 2 GiB,
        // which SGLang 0.5.5's reserve does not count; ours is lower than its default.
        let l4 = node(1, 23034, 0, "8.9", false);
        let big = run(
            "0.5.5",
            &[("--max-running-requests", json!(4096))],
            &l4,
            Some(&m),
        );
        let d = big
            .memory
            .as_ref()
            .unwrap()
            .sglang_default_mem_fraction_static
            .unwrap();
        let p = big.planned_mem_fraction_static.unwrap();
        assert!(p < d, "planned {p} default {d}");
        assert_eq!(p, big.physics_mem_fraction_static);
        let r = &big.memory.unwrap().reserved_mib;
        let slack = big.baseline_mib * (1.0 - p);
        assert!(slack >= (r.cuda_graphs + r.activations + r.margin) as f64);
        // A default below the floor (a 64k-token chunk) caps nothing: the plan stays in range.
        let huge = run(
            "0.5.23",
            &[
                ("--tp-size", json!(8)),
                ("--chunked-prefill-size", json!(65536)),
            ],
            &topo,
            Some(&m),
        );
        let d = huge
            .memory
            .as_ref()
            .unwrap()
            .sglang_default_mem_fraction_static
            .unwrap();
        assert!(d < 0.05, "{d}");
        let p = huge.planned_mem_fraction_static.unwrap();
        assert!((0.05..=0.98).contains(&p), "{p}");
    }

    #[test]
    fn attention_dp_prices_the_gathered_chunk() {
        let m = model("oracle/DeepSeek-V3");
        let topo = node(8, 143771, 0, "9.0", true);
        let plain = run("0.5.5", &[("--tp-size", json!(8))], &topo, Some(&m));
        let dp = run(
            "0.5.5",
            &[
                ("--tp-size", json!(8)),
                ("--dp-size", json!(8)),
                ("--enable-dp-attention", json!(true)),
            ],
            &topo,
            Some(&m),
        );
        let act = |o: &MemoryOutcome| o.memory.as_ref().unwrap().reserved_mib.activations;
        // Each rank prefills an eighth of the chunk, but its MoE layers see all of it: the
        // same chunk term (logits and the request pool differ a little).
        let (d, p) = (act(&dp) as f64, act(&plain) as f64);
        assert!(d > 0.95 * p, "{d} vs {p}");
    }

    #[test]
    fn user_fraction_is_kept_and_checked_both_ways() {
        let m = model("meta-llama__Llama-3.1-8B-Instruct");
        let topo = node(1, 24564, 0, "8.9", false);
        let high = run(
            "0.5.23",
            &[("--mem-fraction-static", json!(0.99))],
            &topo,
            Some(&m),
        );
        assert_eq!(
            high.memory.as_ref().unwrap().mem_fraction_static_source,
            MfsSource::User
        );
        assert_eq!(high.planned_mem_fraction_static, None);
        assert!(codes(&high).contains(&"MEM003"), "{:?}", high.hits);
        let low = run(
            "0.5.23",
            &[("--mem-fraction-static", json!(0.5))],
            &topo,
            Some(&m),
        );
        assert!(codes(&low).contains(&"MEM004"), "{:?}", low.hits);
        assert_eq!(low.memory.unwrap().fits, Some(false));
    }

    #[test]
    fn too_big_model_gives_mem005_with_ways_out() {
        let m = model("Qwen__QwQ-32B");
        let topo = node(4, 24564, 0, "8.9", false);
        let o = run("0.5.23", &[("--tp-size", json!(2))], &topo, Some(&m));
        let h = o.hits.iter().find(|h| h.code == "MEM005").expect("MEM005");
        assert!(
            h.message.contains("projected") && h.message.contains("GiB"),
            "{}",
            h.message
        );
        assert!(
            h.message.contains("--tp-size") && h.message.contains("--cuda-graph-max-bs-decode")
        );
        assert!(h.message.contains("fp8_e5m2"));
        assert_eq!(o.memory.unwrap().fits, Some(false));
        // 61 GiB of BF16 weights: split over four 24 GiB GPUs it fits.
        let o2 = run("0.5.23", &[("--tp-size", json!(4))], &topo, Some(&m));
        assert_eq!(o2.memory.as_ref().unwrap().fits, Some(true), "{o2:?}");
        assert!(!codes(&o2).contains(&"MEM005"), "{:?}", o2.hits);
    }

    #[test]
    fn unknown_model_still_reports_sglang_defaults() {
        let topo = node(8, 81559, 0, "9.0", true);
        let o = run("0.5.5", &[("--tp-size", json!(8))], &topo, None);
        assert_eq!(codes(&o), vec!["MEM001"]);
        let mem = o.memory.unwrap();
        assert_eq!(mem.sglang_default_mem_fraction_static, Some(0.818));
        assert_eq!(mem.weights_per_gpu_gib, None);
        assert_eq!(mem.kv_cache_tokens, None);
        assert_eq!(mem.fits, None);
    }

    #[test]
    fn other_processes_and_custom_allreduce_are_reserved() {
        let m = model("meta-llama__Llama-3.1-8B-Instruct");
        let busy = node(2, 81559, 10240, "9.0", false);
        let o = run("0.5.5", &[("--tp-size", json!(2))], &busy, Some(&m));
        let r = o.memory.unwrap().reserved_mib;
        assert_eq!(r.other_processes, 10240);
        assert_eq!(r.custom_allreduce, 24, "2 PCIe GPUs keep legacy custom AR");
        assert!(r.nccl > 0);
        let free = node(2, 81559, 0, "9.0", false);
        let a = run("0.5.5", &[("--tp-size", json!(2))], &free, Some(&m));
        assert!(
            a.memory.unwrap().kv_cache_tokens.unwrap()
                > run("0.5.5", &[("--tp-size", json!(2))], &busy, Some(&m))
                    .memory
                    .unwrap()
                    .kv_cache_tokens
                    .unwrap()
        );
    }

    #[test]
    fn kv_cells_mla_gqa_replication_and_fp8() {
        let env = Env::default();
        let flags = flagset::get("0.5.23").unwrap();
        let ds = model("oracle/DeepSeek-V3");
        let a = SglangArgs::with_values(flags, &[("--tp-size", json!(8))]);
        // (512 + 64) × 61 layers × 2 B
        assert_eq!(kv_bytes_per_token("0.5.23", &a, &env, &ds), Some(70272));
        let q = model("Qwen__QwQ-32B");
        // 8 KV heads over tp 16: replicated to 1 per GPU
        let a16 = SglangArgs::with_values(flags, &[("--tp-size", json!(16))]);
        assert_eq!(
            kv_bytes_per_token("0.5.23", &a16, &env, &q),
            Some(2 * 128 * 64 * 2)
        );
        let fp8 = SglangArgs::with_values(
            flags,
            &[
                ("--tp-size", json!(2)),
                ("--kv-cache-dtype", json!("fp8_e5m2")),
            ],
        );
        assert_eq!(
            kv_bytes_per_token("0.5.23", &fp8, &env, &q),
            Some(4 * 2 * 128 * 64)
        );
        // MTP draft layer priced into the pool under speculative decoding
        let spec = SglangArgs::with_values(
            flags,
            &[
                ("--tp-size", json!(8)),
                ("--speculative-algorithm", json!("EAGLE")),
            ],
        );
        let cell = kv::kv_cell("0.5.23", &spec, &env, &ds).unwrap();
        assert_eq!((cell.target, cell.total), (70272, 70272 + 1152));
    }

    #[test]
    fn absurd_arguments_and_configs_do_not_panic() {
        let topo = node(8, 81559, 0, "9.0", true);
        let big = json!(i64::MAX);
        for version in ["0.4.10.post2", "0.5.5", "0.5.10.post1", "0.5.23"] {
            let graph_flag = if version == "0.5.23" {
                "--cuda-graph-max-bs-decode"
            } else {
                "--cuda-graph-max-bs"
            };
            let values = [
                ("--tp-size", big.clone()),
                ("--pp-size", big.clone()),
                ("--chunked-prefill-size", big.clone()),
                ("--max-running-requests", big.clone()),
                (graph_flag, big.clone()),
                ("--disable-cuda-graph-padding", json!(true)),
                ("--mem-fraction-static", json!(-3.0)),
            ];
            let mut m = model("meta-llama__Llama-3.1-8B-Instruct");
            m.num_hidden_layers = Some(u64::MAX);
            m.num_key_value_heads = Some(0);
            let _ = run(version, &values, &topo, Some(&m));
            m.hidden_size = Some(0);
            m.num_attention_heads = Some(0);
            m.head_dim = None;
            let _ = run(version, &values, &topo, Some(&m));
        }
    }

    #[test]
    fn no_gpus_is_no_plan_not_a_panic() {
        let topo = node(0, 0, 0, "9.0", false);
        let o = run("0.5.23", &[], &topo, None);
        assert!(o.memory.is_none());
    }
}
