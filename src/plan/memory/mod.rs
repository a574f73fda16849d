//! The memory planner: KV capacity and our safe `--mem-fraction-static`.
//!
//! Two views of the same GPU:
//! * SGLang's: it reserves `R` MiB of the *smallest total capacity on the node* for graphs and
//!   activations (its heuristic, [`crate::resolve::defaults`]), then at run time gives the KV
//!   cache what is left of `B·mfs` after the weights, where `B` is the free memory measured
//!   after distributed init.
//! * Ours: the free memory of the GPUs the server will actually use, minus each cost we can name
//!   (CUDA context, NCCL and custom all-reduce buffers, CUDA-graph pools for the batch sizes that
//!   will be captured, activations, other processes, a margin). Every term is reported.
//!
//! A model fact no real model has (MEM013) is never planned on: the plan is then an unknown
//! model's, with no fraction of ours and no finding that judges the model's size.
//!
//! Pure: it reads the resolved [`Context`] only.

use crate::sglang::opt;
mod buffers;
mod draft;
mod dsv4;
#[cfg(test)]
mod dsv4_tests;
mod findings;
mod implausible;
pub mod kv;
pub(crate) mod lines;
mod load_peak;
mod loaded;
mod lora;
mod mamba;
mod measured;
pub(crate) mod model;
mod others;
mod split;
#[cfg(test)]
mod split_tests;
mod swa;
mod terms;
#[cfg(test)]
mod terms_tests;
mod v1;

use crate::facts::Gpu;
use crate::plan::v1::{MfsSource, Reserved};
use crate::resolve::Context;
use crate::resolve::defaults::{self, ARG_BOUND, int_arg};
use crate::rules::{Code, Finding};

pub(crate) use kv::KvCell;
#[cfg(test)]
use kv::kv_bytes_per_token;
pub(crate) use measured::Measured;
pub(crate) use model::{Group, MemoryPlan, Role};
pub(crate) use terms::max_running_requests;
pub use terms::{ChunkTokens, activations};
use terms::{MIB, gib};

#[derive(Debug, Clone, PartialEq)]
pub struct MemoryOutcome {
    pub memory: Option<MemoryPlan>,
    pub findings: Vec<Finding>,
    /// Some when the pipeline should add `--mem-fraction-static X` to the arguments.
    pub planned_mem_fraction_static: Option<f64>,
    /// Free memory per GPU before the weights (SGLang's `B`, to which the fraction applies), MiB.
    pub baseline_mib: f64,
    /// The fraction our own reserve terms alone would give, before the cap at SGLang's default.
    pub physics_mem_fraction_static: f64,
}

/// Free memory before the weights, on the GPU that has least of it.
struct Baseline<'g> {
    tightest: &'g Gpu,
    cuda_context: u64,
    nccl: u64,
    custom_allreduce: u64,
    /// SGLang's `B`, MiB.
    mib: f64,
}

/// What the model needs per GPU, and the KV arithmetic over it.
struct Sizing {
    cell: Option<KvCell>,
    /// Target and draft weights (encoders included).
    weights_mib: Option<f64>,
    /// Of the weights: the draft's own and the encoders'.
    draft_mib: f64,
    encoder_mib: f64,
    /// LoRA buffers, allocated before the KV cache is sized.
    lora_mib: f64,
    /// KV-side pools of a fixed size, taken before the tokens are counted (DeepSeek-V4's
    /// compressor state), MiB.
    fixed_kv_mib: f64,
    /// The captured graphs as a start of this line measured them (else estimated), MiB.
    graphs_mib: Option<u64>,
    /// Hybrids: one request's recurrent state, bytes.
    state_per_req: Option<u64>,
    context_len: u64,
    page: u64,
}

/// The static pool's split at one fraction.
struct Pools {
    kv_tokens: u64,
    state: Option<mamba::StatePool>,
}

/// Our reserve terms and the fractions they give.
struct Reserve {
    reserved: Reserved,
    /// The backends' buffers made at the first forward pass (none where a start measured the
    /// capture: they are inside it).
    buffers: Vec<buffers::Buffer>,
    /// Graphs + activations + buffers + margin: what must stay outside the static pool, MiB.
    slack_needed: f64,
    /// What the first use itself takes outside the pool, MiB: graphs, the backends' buffers
    /// and the activations of one prefill chunk and the largest captured decode batch, without
    /// the fragmentation allowance or margin. Below it the launch fails; full-concurrency
    /// decode is load.
    first_use: f64,
    physics: f64,
    planned: f64,
}

/// Plan GPU memory. Never panics on odd inputs: missing GPUs or model facts give a partial result,
/// implausible facts (MEM013) the plan of an unknown model.
pub fn plan(ctx: &Context) -> MemoryOutcome {
    plan_measured(ctx, &Measured::default())
}

/// [`plan`], standing on what a start of this line measured where it is known.
pub(crate) fn plan_measured(ctx: &Context, measured: &Measured) -> MemoryOutcome {
    let bad = implausible::findings(ctx);
    let mut outcome = if bad.is_empty() {
        plan_known(ctx, measured)
    } else {
        implausible::unplanned(ctx, bad)
    };
    measured.stood(&mut outcome);
    outcome
}

/// The plan on facts that are all plausible (or absent).
fn plan_known(ctx: &Context, measured: &Measured) -> MemoryOutcome {
    let gpus = terms::used_gpus(ctx.topology, ctx.gpus);
    let Some(&tightest) = gpus.first() else {
        return MemoryOutcome {
            memory: None,
            findings: Vec::new(),
            planned_mem_fraction_static: None,
            baseline_mib: 0.0,
            physics_mem_fraction_static: 0.0,
        };
    };
    let capacity = gpus.iter().map(|g| g.memory_total_mib).min().unwrap_or(0);
    let base = baseline(ctx, tightest);
    let mut sizing = sizing(ctx);
    measured.size(&mut sizing);
    let fixed = ctx.server.fixed_fraction();
    let user_mfs = ctx.server.user_mem_fraction().map(|u| fixed.unwrap_or(u));
    let (reserve, lifted) = reserve_for(ctx, &base, &sizing, user_mfs, capacity);
    let kept = (user_mfs.is_none() && lifted.is_none())
        .then(|| kept_default(ctx, &base, &sizing, &reserve))
        .flatten();
    let (arg_mfs, source) = match user_mfs {
        Some(u) => (u, MfsSource::User),
        None => (kept.unwrap_or(reserve.planned), MfsSource::Planned),
    };
    // The fraction the pools get: before 0.4.9 the model runner shrinks it for a vision model.
    let mfs = arg_mfs * crate::resolve::multimodal::runner_fraction_factor(ctx);
    let pools = sizing.pools_at(ctx, base.mib, mfs);
    let predicted_kv = pools.as_ref().map(|p| p.kv_tokens);
    let kv_tokens = measured.kv_tokens(predicted_kv);
    let state = pools.as_ref().and_then(|p| p.state);
    let fits = sizing
        .rest_mib(base.mib, mfs)
        .map(|r| measured.started() || (r > 0.0 && kv_tokens.is_some_and(|t| t > 0)));
    let mrr = kv_tokens
        .filter(|&t| t > 0)
        .map(|t| state_cap(ctx, sizing.mrr_for(ctx, Some(t)), state));
    let load_peak = sizing
        .weights_mib
        .and_then(|w| load_peak::per_gpu_mib(ctx, w));
    // What the plan gives where the user's fraction is left out, for MEM003 to name: worked
    // out only where the user's fraction falls short.
    let unset_planned = user_mfs
        .filter(|_| fixed.is_none() && reserve.short_at(base.mib, mfs))
        .map(|_| reserve_for(ctx, &base, &sizing, None, capacity).0.planned)
        .filter(|&p| sizing.rest_mib(base.mib, p).is_none_or(|r| r > 0.0));
    let judged = findings::Judged {
        base: &base,
        sizing: &sizing,
        reserve: &reserve,
        user_mfs,
        unset_planned,
        mfs,
        kv_tokens,
        state_mib: state.map(|s| s.mib),
        fits,
        kept_default: kept.is_some(),
    };
    let mut findings = findings::all(ctx, &judged);
    findings.extend(lifted.map(|l| l.finding(&sizing)));
    findings.extend(
        load_peak
            .zip(sizing.weights_mib)
            .and_then(|(peak, w)| load_peak::finding(ctx, peak, w, base.mib, fits == Some(true))),
    );
    // Other processes' cost is a difference of two predictions.
    let others = other_processes(ctx, &gpus, &base, &sizing, mfs, predicted_kv);
    findings.extend(others);
    // The verdict covers every phase of the start: a load peak that does not fit (read from the
    // checkpoint or estimated) and graphs plus the first prefill that do not fit outside the
    // user's pool fail it as surely as weights that do not fit.
    // Unsized weights leave it unknown: MEM003 then stands on stand-in activations alone.
    let phase_short = [Code::MEM010, Code::MEM012, Code::MEM003];
    let fits = match fits {
        Some(_) if findings.iter().any(|h| phase_short.contains(&h.code)) => Some(false),
        f => f,
    };
    // The whole pool: the cell's total counts the draft's KV layers and the window pool.
    let kv_mib = kv_tokens
        .zip(sizing.cell.as_ref())
        .map(|(t, c)| t as f64 * c.total as f64 / MIB + sizing.fixed_kv_mib);
    let d = &ctx.server.defaults;
    let mut memory = MemoryPlan {
        gpu_memory_mib: capacity,
        mem_fraction_static: arg_mfs,
        mem_fraction_static_source: source,
        sglang_default_mem_fraction_static: Some(d.mem_fraction_static),
        sglang_default_chunked_prefill_size: Some(d.chunked_prefill_size),
        sglang_default_cuda_graph_max_bs: d.decode_max_bs,
        weights_per_gpu_gib: sizing.weights_mib.map(|w| (gib(w) * 100.0).round() / 100.0),
        kv_cache_bytes_per_token: sizing.cell.as_ref().map(|c| c.target),
        kv_cache_tokens: kv_tokens,
        max_running_requests: mrr,
        fits,
        swa_kv_cache_tokens: swa_tokens(&sizing, kv_tokens),
        mamba_cache_size: state.map(|s| s.slots),
        load_peak_per_gpu_gib: load_peak.map(|p| (gib(p) * 100.0).round() / 100.0),
        baseline_mib: base.mib.floor() as i64,
        first_use_mib: terms::mib_term(reserve.first_use),
        observed: None,
        observed_use: None,
        terms: Vec::new(),
    };
    let unallocated = sizing
        .rest_mib(base.mib, mfs)
        .zip(kv_mib)
        .map(|(rest, kv)| (rest - state.map_or(0.0, |s| s.mib) - kv).floor() as i64);
    let sizes = sizes(&sizing, &reserve, (kv_tokens, kv_mib, state), unallocated);
    memory.terms = lines::terms(&memory, &sizes);
    MemoryOutcome {
        planned_mem_fraction_static: (source == MfsSource::Planned).then_some(arg_mfs),
        memory: Some(memory),
        findings,
        baseline_mib: base.mib,
        physics_mem_fraction_static: reserve.physics,
    }
}

/// SGLang's own default, where our reserve for full load leaves the weights no room at a
/// smaller fraction but the default holds them, a KV cache and what the start itself uses
/// (graphs, the first batch): the line starts as SGLang runs it, and only the load is in doubt.
fn kept_default(ctx: &Context, base: &Baseline, sizing: &Sizing, reserve: &Reserve) -> Option<f64> {
    let default = ctx.server.defaults.mem_fraction_static;
    // The pools get the fraction as the model runner shrinks it (a vision model before 0.4.9).
    let factor = crate::resolve::multimodal::runner_fraction_factor(ctx);
    let no_kv = |f: f64| {
        sizing
            .pools_at(ctx, base.mib, f * factor)
            .is_none_or(|p| p.kv_tokens == 0)
    };
    let kept = reserve.planned < default
        && no_kv(reserve.planned)
        && !no_kv(default)
        && !reserve.short_at(base.mib, default);
    kept.then_some(default)
}

/// The reserve at the user's fraction, else at SGLang's default unless that is lifted.
fn reserve_for(
    ctx: &Context,
    base: &Baseline,
    sizing: &Sizing,
    user_mfs: Option<f64>,
    capacity: u64,
) -> (Reserve, Option<Lifted>) {
    let default_mfs = ctx.server.defaults.mem_fraction_static;
    let at = user_mfs.unwrap_or(default_mfs);
    let reserve = reserve(ctx, base, sizing, at, capacity);
    // No larger fraction where SGLang sets its own over any given.
    let liftable = user_mfs.is_none() && ctx.server.fixed_fraction().is_none();
    let lifted = liftable
        .then(|| lift(ctx, base, sizing, &reserve, capacity))
        .flatten();
    match lifted {
        Some(l) => (reserve_lifted(ctx, base, sizing, capacity, l.to), Some(l)),
        None => (reserve, None),
    }
}

impl Reserve {
    /// At fraction `mfs` of the baseline, less stays outside the pool than the first use takes.
    fn short_at(&self, baseline_mib: f64, mfs: f64) -> bool {
        baseline_mib * (1.0 - mfs) < self.first_use
    }

    /// The backends' buffers together, MiB.
    fn buffers_mib(&self) -> f64 {
        buffers::total_mib(&self.buffers)
    }
}

/// Tensor and pipeline sizes, bounded so the arithmetic below cannot overflow.
fn tp_pp(ctx: &Context) -> (i64, i64) {
    let p = &ctx.server.parallel;
    (p.tp.min(ARG_BOUND), p.pp.min(ARG_BOUND))
}

/// Pre-load baseline B (SGLang's `pre_model_load_memory`): free memory after the CUDA context
/// and the communicators exist.
fn baseline<'g>(ctx: &Context, tightest: &'g Gpu) -> Baseline<'g> {
    let (tp, pp) = tp_pp(ctx);
    let cuda_context = terms::cuda_context_mib(tightest);
    let nccl = terms::nccl_mib(ctx, tp, pp);
    let custom_allreduce = terms::custom_allreduce_mib(ctx.server.custom_all_reduce, tightest, tp);
    let free = tightest.memory_free_mib();
    Baseline {
        tightest,
        cuda_context,
        nccl,
        custom_allreduce,
        mib: free as f64 - (cuda_context + nccl + custom_allreduce) as f64,
    }
}

fn sizing(ctx: &Context) -> Sizing {
    let model = ctx.model;
    let draft = ctx.draft_facts();
    let p = &ctx.server.parallel;
    let spec = ctx.server.speculative.as_ref();
    let split = p.tp.max(1) as f64 * p.pp.max(1) as f64;
    let encoder_mib = model.map_or(0.0, |m| m.encoder_bytes() as f64 / split / MIB);
    // Towers in the checkpoint that SGLang does not build for a text-only model.
    let skipped_mib = if crate::resolve::multimodal::towers_skipped(ctx.version, ctx.args, model) {
        encoder_mib
    } else {
        0.0
    };
    let added = model.map_or_else(Default::default, |m| loaded::added_bytes_per_gpu(ctx, m));
    let v4 = model.and_then(|m| dsv4::pools(ctx, m));
    Sizing {
        fixed_kv_mib: v4.as_ref().map_or(0.0, |v| v.fixed_bytes / MIB),
        cell: match v4 {
            Some(v) => Some(v.cell),
            None => model.and_then(|m| {
                let dtype = ctx.server.kv_cache_dtype();
                let major = ctx.majors().into_iter().max();
                kv::kv_cell(ctx.args, dtype, major, p, spec, m, draft)
            }),
        },
        // `--cpu-offload-gb` keeps that many GiB of each rank's weights in host memory.
        weights_mib: model
            .and_then(|m| {
                let split = kv::Split::of(ctx.version, ctx.args, ctx.env, p, m);
                kv::weights_per_gpu_bytes(p, &split, spec, m, draft)
            })
            .map(|b| b as f64 + added.target + added.draft)
            .map(|b| (b / MIB - skipped_mib - offloaded_mib(ctx)).max(0.0)),
        draft_mib: model.map_or(0.0, |m| {
            (draft::draft_weights_per_gpu(p, spec, m, draft) + added.draft) / MIB
        }),
        encoder_mib: encoder_mib - skipped_mib,
        lora_mib: lora::buffers_mib(ctx).unwrap_or(0.0),
        graphs_mib: None,
        state_per_req: mamba::per_request_bytes(ctx),
        context_len: ctx.server.context_length().unwrap_or(4096),
        page: ctx.server.page_size,
    }
}

/// The weights `--cpu-offload-gb` moves to host memory per rank, MiB.
fn offloaded_mib(ctx: &Context) -> f64 {
    ctx.args
        .float(opt::CPU_OFFLOAD_GB)
        .filter(|g| g.is_finite() && *g > 0.0)
        .map_or(0.0, |g| g * 1024.0)
}

/// SGLang caps the requests at the state slots (a third of them with the radix cache on).
fn state_cap(ctx: &Context, mrr: u64, state: Option<mamba::StatePool>) -> u64 {
    match state {
        Some(s) => {
            // The fixed-pool releases turn the radix cache off for these models themselves.
            let per = if ctx.server.switches.radix_cache.on && !mamba::fixed_pool(ctx) {
                3
            } else {
                1
            };
            mrr.min(s.slots / per).max(1)
        }
        None => mrr,
    }
}

/// What each term of the table holds, MiB.
fn sizes(
    s: &Sizing,
    reserve: &Reserve,
    (kv_tokens, kv_mib, state): (Option<u64>, Option<f64>, Option<mamba::StatePool>),
    unallocated: Option<i64>,
) -> lines::Sizes {
    let swa = swa_tokens(s, kv_tokens)
        .zip(s.cell.as_ref())
        .map_or(0.0, |(t, c)| t as f64 * c.swa_token_bytes as f64 / MIB);
    let r = &reserve.reserved;
    lines::Sizes {
        other_processes: r.other_processes,
        cuda_context: r.cuda_context,
        nccl: r.nccl,
        custom_allreduce: r.custom_allreduce,
        weights: s.weights_mib.map(|w| w.floor() as u64),
        draft_weights: terms::mib_term(s.draft_mib),
        encoder_weights: terms::mib_term(s.encoder_mib),
        lora: terms::mib_term(s.lora_mib),
        mamba_state: terms::mib_term(state.map_or(0.0, |p| p.mib)),
        swa_kv_cache: terms::mib_term(swa),
        kv_cache: kv_mib.map(|k| k.floor() as u64),
        // Rounded up: with the tokens' share (rounded down) it meets the pool's own rounding.
        fixed_kv: s.fixed_kv_mib.ceil() as u64,
        unallocated,
        cuda_graphs: r.cuda_graphs,
        activations: r.activations,
        buffers: reserve.buffers.clone(),
        margin: r.margin,
    }
}

/// Tokens of the sliding-window pool, when the release gives it one.
fn swa_tokens(s: &Sizing, kv_tokens: Option<u64>) -> Option<u64> {
    let r = s.cell.as_ref()?.swa_ratio?;
    Some((kv_tokens? as f64 * r) as u64 / s.page.max(1) * s.page.max(1))
}

/// MEM011: the KV tokens other processes' memory costs, against the same plan with it free.
fn other_processes(
    ctx: &Context,
    gpus: &[&Gpu],
    base: &Baseline,
    sizing: &Sizing,
    mfs: f64,
    kv_tokens: Option<u64>,
) -> Option<Finding> {
    let overheads = (base.cuda_context + base.nccl + base.custom_allreduce) as f64;
    let freed_free = gpus.iter().map(|g| g.memory_total_mib).min()? as f64;
    let freed = sizing.pools_at(ctx, freed_free - overheads, mfs)?.kv_tokens;
    others::finding(gpus, kv_tokens?, freed)
}

impl Sizing {
    /// What the static pool leaves after the weights and LoRA buffers, MiB.
    fn rest_mib(&self, baseline_mib: f64, mfs: f64) -> Option<f64> {
        Some(baseline_mib * mfs - self.weights_mib? - self.lora_mib)
    }

    /// The state pool and KV tokens SGLang profiles at fraction `mfs` of the baseline.
    fn pools_at(&self, ctx: &Context, baseline_mib: f64, mfs: f64) -> Option<Pools> {
        let cell = self.cell.as_ref()?;
        let rest = self.rest_mib(baseline_mib, mfs)?;
        let state = self.state_per_req.map(|b| mamba::pool(ctx, b, rest));
        let kv_rest = rest - state.map_or(0.0, |s| s.mib) - self.fixed_kv_mib;
        Some(Pools {
            kv_tokens: kv::tokens_from_rest(kv_rest, cell, self.page, ctx.args),
            state,
        })
    }

    /// KV tokens SGLang profiles at fraction `mfs` of the baseline.
    fn kv_tokens_at(&self, ctx: &Context, baseline_mib: f64, mfs: f64) -> Option<u64> {
        self.pools_at(ctx, baseline_mib, mfs).map(|p| p.kv_tokens)
    }

    /// Requests the server admits for a KV pool of `tokens` (SGLang's estimate).
    fn mrr_for(&self, ctx: &Context, tokens: Option<u64>) -> u64 {
        let d = &ctx.server.defaults;
        match tokens {
            Some(t) => max_running_requests(
                defaults::Family::of(ctx.version),
                t,
                self.context_len,
                int_arg(ctx.args, opt::MAX_RUNNING_REQUESTS),
                d.max_running_requests,
                d.attn_dp_size,
            ),
            None => d
                .max_running_requests
                .map(|m| m.max(1) as u64)
                .unwrap_or(2048),
        }
    }
}

/// SGLang's default fraction raised to ours, and why: the default leaves the KV cache no room
/// for one request at the context length (or none at all), while our reserve outside the pool
/// still holds at a larger fraction.
struct Lifted {
    from: f64,
    to: f64,
    /// KV tokens at SGLang's default (0: the weights alone fill its pool).
    tokens_at_default: u64,
}

impl Lifted {
    fn finding(&self, sizing: &Sizing) -> Finding {
        Finding::new(
            Code::MEM016,
            format!(
                "SGLang's default --mem-fraction-static {:.3} leaves the KV cache {} tokens, less than one {}-token request; the launcher plans {:.3}, the largest fraction that keeps the CUDA graphs, activations and margin outside the pool",
                self.from, self.tokens_at_default, sizing.context_len, self.to
            ),
        )
    }
}

/// [`Lifted`], when SGLang's default is too small for one request and ours is larger.
fn lift(
    ctx: &Context,
    base: &Baseline,
    sizing: &Sizing,
    reserve: &Reserve,
    capacity: u64,
) -> Option<Lifted> {
    sizing.weights_mib?;
    sizing.cell.as_ref()?;
    let from = ctx.server.defaults.mem_fraction_static;
    let tokens = |f: f64| sizing.kv_tokens_at(ctx, base.mib, f).unwrap_or(0);
    let tokens_at_default = if sizing.rest_mib(base.mib, from)? > 0.0 {
        tokens(from)
    } else {
        0
    };
    if tokens_at_default >= sizing.context_len || reserve.physics <= from {
        return None;
    }
    // The reserve again, sized for the requests the larger pool admits.
    let to = reserve_lifted(ctx, base, sizing, capacity, reserve.physics).physics;
    (to > from && tokens(to) > tokens_at_default).then_some(Lifted {
        from,
        to,
        tokens_at_default,
    })
}

/// The reserve with its requests estimated at fraction `mfs`, planning its own fraction.
fn reserve_lifted(
    ctx: &Context,
    base: &Baseline,
    sizing: &Sizing,
    capacity: u64,
    mfs: f64,
) -> Reserve {
    let mut r = reserve(ctx, base, sizing, mfs, capacity);
    r.planned = r.physics;
    r
}

/// The reserve outside the static pool, with the requests the server admits estimated from the
/// KV cache at fraction `mfs_for_estimate` (the user's, else SGLang's default).
fn reserve(
    ctx: &Context,
    base: &Baseline,
    sizing: &Sizing,
    mfs_for_estimate: f64,
    capacity: u64,
) -> Reserve {
    let d = &ctx.server.defaults;
    let (tp, _) = tp_pp(ctx);
    let mrr_estimate = sizing.mrr_for(ctx, sizing.kv_tokens_at(ctx, base.mib, mfs_for_estimate));
    let captured = defaults::captured_decode_bs(d, ctx.server.gpu_memory_mib, Some(mrr_estimate));
    let spec = ctx.server.speculative.is_some();
    let cuda_graphs = sizing
        .graphs_mib
        .unwrap_or_else(|| terms::cuda_graphs_mib(&captured, d, ctx.model, spec, d.attn_dp_size));
    let chunk = forward_step_tokens(ctx, mrr_estimate);
    // SGLang's chunk is already each DP rank's share; the MLP/MoE layers see all shares.
    let tokens = ChunkTokens::of(chunk, d.attn_dp_size);
    let ep = ctx.server.parallel.ep;
    let act = |mrr| activations(ctx.model, tokens, (tp, ep), mrr, sizing.context_len);
    let activations = act(mrr_estimate).reserve_mib();
    let largest_graph = captured.iter().copied().max().unwrap_or(1).max(1) as u64;
    let first_batch = act(mrr_estimate.min(largest_graph));
    let buffers = match sizing.graphs_mib {
        Some(_) => Vec::new(),
        None => buffers::at_first_use(ctx, &captured, sizing.context_len),
    };
    let buffers_mib = buffers::total_mib(&buffers);
    // The req-to-token table is sized by the full request pool whatever the batch.
    let first_use = cuda_graphs as f64 + first_batch.needed_mib() - first_batch.req_to_token
        + act(mrr_estimate).req_to_token
        + buffers_mib;
    let margin = ((capacity as f64 * 0.02) as u64).max(1024);
    let slack_needed = (cuda_graphs + activations + margin) as f64 + buffers_mib;
    let (physics, planned) = fractions(base.mib, slack_needed, d.mem_fraction_static);
    Reserve {
        reserved: Reserved {
            cuda_context: base.cuda_context,
            nccl: base.nccl,
            custom_allreduce: base.custom_allreduce,
            cuda_graphs,
            activations,
            other_processes: base.tightest.memory_used_mib.unwrap_or(0),
            margin,
        },
        buffers,
        slack_needed,
        first_use,
        physics,
        planned,
    }
}

/// The most tokens one forward step runs: a prefill chunk, except on a PD decode server, which
/// receives its KV cache from the prefill server and only ever runs decode batches (each request's
/// draft tokens with speculative decoding), whatever `--chunked-prefill-size` says.
fn forward_step_tokens(ctx: &Context, mrr: u64) -> i64 {
    let d = &ctx.server.defaults;
    let chunk = if d.chunked_prefill_size > 0 {
        d.chunked_prefill_size
    } else {
        int_arg(ctx.args, opt::MAX_PREFILL_TOKENS).unwrap_or(16384)
    };
    let decode_only = ctx.args.knows(opt::DISAGGREGATION_MODE)
        && ctx.args.str(opt::DISAGGREGATION_MODE) == Some("decode");
    if !decode_only {
        return chunk;
    }
    let per_req = ctx
        .server
        .speculative
        .as_ref()
        .and(ctx.server.spec_params)
        .map_or(1, |p| p.num_draft_tokens.value.max(1));
    let batch = i64::try_from(mrr)
        .unwrap_or(i64::MAX)
        .saturating_mul(per_req);
    chunk.min(batch)
}

/// Our own fraction (the part of B not needed by graphs, activations and the margin, rounded
/// down), and the planned one.
///
/// Policy: never above SGLang's own default where the default works ([`lift`] is the one
/// exception: a default that leaves no room for one request). Our graph and activation terms are estimates
/// (graph capture in real logs costs 0.9–5.7 MiB per graph per layer, and a DP-attention
/// server OOMed at run time on a 2.6 GiB transient no shape formula predicts), while the
/// default's reserve is what every stock server in the logs started with. Raising the
/// fraction above it would need each reserve term to be evidenced for this model and GPU,
/// and none is. So our terms can only take memory from the KV cache, never give it.
/// A default at or below the floor (SGLang's 1.5 MiB per prefill token on a huge chunk can
/// even go negative) is not a fraction SGLang can run with, so it caps nothing.
fn fractions(baseline_mib: f64, slack_needed: f64, sglang_default: f64) -> (f64, f64) {
    let physics = if baseline_mib > 0.0 {
        (((1.0 - slack_needed / baseline_mib) * 1000.0).floor() / 1000.0).clamp(0.05, 0.98)
    } else {
        0.05
    };
    let planned = if sglang_default >= 0.05 {
        physics.min(sglang_default)
    } else {
        physics
    };
    (physics, planned)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::facts::model::ModelFacts;
    use crate::facts::{Env, Topology};
    use crate::resolve::{Facts, Speculative};
    use crate::sglang::{Parallel, SglangArgs, flagset};
    use serde_json::{Value, json};

    pub(super) fn node(n: u32, total_mib: u64, used_mib: u64, cc: &str, nvlink: bool) -> Topology {
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
            host: None,
            accelerators: Vec::new(),
        }
    }

    pub(super) fn model(name: &str) -> ModelFacts {
        let dir = format!(
            "{}/tests/fixtures/models/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        let args = SglangArgs::with_values(flagset::get("0.5.23").unwrap(), &[]);
        crate::facts::model::load(&dir, &Env::default(), &args)
            .facts
            .unwrap()
    }

    pub(super) fn run(
        version: &str,
        values: &[(&str, Value)],
        topo: &Topology,
        m: Option<&ModelFacts>,
    ) -> MemoryOutcome {
        let args = SglangArgs::with_values(flagset::get(version).unwrap(), values);
        let gpus: Vec<u32> =
            (0..int_arg(&args, "--tp-size").unwrap_or(1).clamp(1, 64) as u32).collect();
        plan(&Context::new(Facts {
            version,
            args: &args,
            env: &Env::default(),
            topology: topo,
            gpus: &gpus,
            model: m,
            draft: None,
            host: None,
            packages: None,
        }))
    }

    pub(super) fn codes(o: &MemoryOutcome) -> Vec<&'static str> {
        o.findings.iter().map(|h| h.code.as_str()).collect()
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
        assert!(codes(&o).is_empty(), "{:?}", o.findings);
    }

    #[test]
    fn before_0_4_9_the_runner_shrinks_a_vision_models_pool() {
        let m = model("google__gemma-3-27b-it");
        assert!(m.is_multimodal);
        let topo = node(8, 81559, 0, "9.0", true);
        let at = |v: &str| {
            let mut values = vec![
                ("--tp-size", json!(1)),
                ("--mem-fraction-static", json!(0.8)),
            ];
            // Gemma 3 is served text-only unless asked, from 0.4.6.
            if flagset::get(v)
                .unwrap()
                .action("--enable-multimodal")
                .is_some()
            {
                values.push(("--enable-multimodal", json!(true)));
            }
            let mem = run(v, &values, &topo, Some(&m)).memory.unwrap();
            // The fraction shown is the user's; the pool is what the runner leaves of it.
            assert_eq!(mem.mem_fraction_static, 0.8);
            (mem.v1().weights_per_gpu_mib.unwrap() + mem.v1().kv_cache_mib.unwrap()) as f64
        };
        let (v048, v049) = (at("0.4.8"), at("0.4.9"));
        let ratio = v048 / v049;
        assert!((ratio - 0.90).abs() < 0.005, "{v048} / {v049} = {ratio}");
        let v044 = at("0.4.4");
        assert!((v044 / v049 - 0.95).abs() < 0.005, "{v044} / {v049}");
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
        let r = &big.memory.unwrap().v1().reserved_mib;
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
    fn attention_dp_prices_attention_on_the_share_and_mlp_on_the_gathered_chunk() {
        let m = model("oracle/DeepSeek-V3");
        let chunk = |t| activations(Some(&m), t, (16, 1), 2048, 4096).chunk;
        let share = chunk(ChunkTokens::of(4096, 1));
        let dp = chunk(ChunkTokens::of(4096, 16));
        let whole = chunk(ChunkTokens::of(65536, 1));
        // The MoE layers see all 16 shares, attention only its own.
        assert!(dp > share, "{dp} vs {share}");
        assert!(dp < whole, "{dp} vs {whole}");
    }

    #[test]
    fn moe_prefill_prices_the_down_output_of_every_routed_expert() {
        let m = model("oracle/DeepSeek-V3");
        let chunk = |tp_ep| activations(Some(&m), ChunkTokens::of(8192, 1), tp_ep, 1, 1).chunk;
        // Per token: 14 hidden-sized buffers, MLP in/out, and 8 routed experts each holding the
        // activated shard (2048 / 8) beside its hidden-sized down output: (14 + 2 + 8 × (256 +
        // 7168)) × 7168-wide bf16 terms.
        let per_token = (16.0 * 7168.0 + 8.0 * (256.0 + 7168.0)) * 2.0;
        let tp8 = chunk((8, 1));
        assert!((tp8 - 8192.0 * per_token / MIB).abs() < 1.0, "{tp8}");
        assert!(
            tp8 > 1000.0,
            "an 8k chunk of DeepSeek-V3 needs about a GiB: {tp8}"
        );
        // With EP each rank's experts are whole: the activated shard is 2048 wide.
        let ep8 = chunk((8, 8));
        let per_token_ep = (16.0 * 7168.0 + 8.0 * (2048.0 + 7168.0)) * 2.0;
        assert!((ep8 - 8192.0 * per_token_ep / MIB).abs() < 1.0, "{ep8}");
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
        assert!(codes(&high).contains(&"MEM003"), "{:?}", high.findings);
        let low = run(
            "0.5.23",
            &[("--mem-fraction-static", json!(0.5))],
            &topo,
            Some(&m),
        );
        assert!(codes(&low).contains(&"MEM004"), "{:?}", low.findings);
        assert_eq!(low.memory.unwrap().fits, Some(false));
    }

    #[test]
    fn too_big_model_gives_mem005_with_ways_out() {
        let m = model("Qwen__QwQ-32B");
        let topo = node(4, 24564, 0, "8.9", false);
        let o = run("0.5.23", &[("--tp-size", json!(2))], &topo, Some(&m));
        let h = o
            .findings
            .iter()
            .find(|h| h.code == crate::rules::Code::MEM005)
            .expect("MEM005");
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
        assert!(!codes(&o2).contains(&"MEM005"), "{:?}", o2.findings);
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

    /// A high fraction with the model unknown: graphs and activations are stand-ins, so whether
    /// the server fits stays unknown rather than a "no" no finding backs.
    #[test]
    fn unknown_model_with_a_high_fraction_does_not_say_it_does_not_fit() {
        let topo = node(4, 49140, 0, "8.9", false);
        let args = [
            ("--tp-size", json!(4)),
            ("--mem-fraction-static", json!(0.98)),
        ];
        let o = run("0.5.3.post1", &args, &topo, None);
        assert_eq!(o.memory.unwrap().fits, None);
    }

    #[test]
    fn other_processes_and_custom_allreduce_are_reserved() {
        let m = model("meta-llama__Llama-3.1-8B-Instruct");
        let busy = node(2, 81559, 10240, "9.0", false);
        let o = run("0.5.5", &[("--tp-size", json!(2))], &busy, Some(&m));
        let r = o.memory.unwrap().v1().reserved_mib;
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
        let flags = flagset::get("0.5.23").unwrap();
        let ds = model("oracle/DeepSeek-V3");
        let a = SglangArgs::with_values(flags, &[("--tp-size", json!(8))]);
        // (512 + 64) × 61 layers × 2 B
        assert_eq!(kv_bytes_per_token(&a, &Parallel::of(&a), &ds), Some(70272));
        let q = model("Qwen__QwQ-32B");
        // 8 KV heads over tp 16: replicated to 1 per GPU
        let a16 = SglangArgs::with_values(flags, &[("--tp-size", json!(16))]);
        assert_eq!(
            kv_bytes_per_token(&a16, &Parallel::of(&a16), &q),
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
            kv_bytes_per_token(&fp8, &Parallel::of(&fp8), &q),
            Some(4 * 2 * 128 * 64)
        );
        // Block-scaled formats: one scale byte per 32 MXFP8 or per 16 FP4 values (4 heads ×
        // 128 × 64 layers × K and V = 65536 values per token on each GPU).
        let per_token = |dtype: &str| {
            let a = SglangArgs::with_values(
                flags,
                &[("--tp-size", json!(2)), ("--kv-cache-dtype", json!(dtype))],
            );
            kv_bytes_per_token(&a, &Parallel::of(&a), &q)
        };
        assert_eq!(per_token("mxfp8"), Some(65536 + 65536 / 32));
        for fp4 in ["nvfp4", "fp4_mx_block16"] {
            assert_eq!(per_token(fp4), Some(65536 / 2 + 65536 / 16), "{fp4}");
        }
        // MTP draft layer priced into the pool under speculative decoding
        let spec = SglangArgs::with_values(
            flags,
            &[
                ("--tp-size", json!(8)),
                ("--speculative-algorithm", json!("EAGLE")),
            ],
        );
        let draft = Speculative::of(&spec, Some(&ds));
        let cell = kv::kv_cell(
            &spec,
            None,
            None,
            &Parallel::of(&spec),
            draft.as_ref(),
            &ds,
            None,
        )
        .unwrap();
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
