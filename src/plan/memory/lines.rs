//! The planner's figures as terms, each with its label and its own line in the table: the
//! lines of each group follow SGLang's arithmetic, and what the static pool or the reserve
//! outside it leaves over, or lacks, has a line of its own, so the table always adds up.

use super::buffers::Buffer;
use super::model::{Group, MemoryPlan, Role, Term, sum, unallocated_label};

/// What each term holds, MiB per GPU, as the planner sized it.
pub(crate) struct Sizes {
    pub(crate) other_processes: u64,
    pub(crate) cuda_context: u64,
    pub(crate) nccl: u64,
    pub(crate) custom_allreduce: u64,
    /// Target, draft and encoders; `None`: not sized.
    pub(crate) weights: Option<u64>,
    pub(crate) draft_weights: u64,
    pub(crate) encoder_weights: u64,
    pub(crate) lora: u64,
    pub(crate) mamba_state: u64,
    pub(crate) swa_kv_cache: u64,
    /// The whole KV pool; `None`: not sized.
    pub(crate) kv_cache: Option<u64>,
    /// Of the KV pool: state of a fixed size, on the target's line (DeepSeek-V4's compressor).
    pub(crate) fixed_kv: u64,
    pub(crate) unallocated: Option<i64>,
    pub(crate) cuda_graphs: u64,
    pub(crate) activations: u64,
    /// Made at the first forward pass, each its own line.
    pub(crate) buffers: Vec<Buffer>,
    pub(crate) margin: u64,
}

fn term(role: Role, label: impl Into<String>, mib: impl Into<i128>, line: Option<i64>) -> Term {
    Term {
        role,
        label: label.into(),
        mib: mib.into(),
        line,
        observed: false,
    }
}

/// A term whose line is itself.
fn shown(role: Role, label: &str, mib: u64) -> Term {
    term(role, label, mib, Some(int(mib)))
}

/// A size as a line (an absurd one capped, so that the sums stay in range).
fn int(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX / 4)
}

/// The terms of `m` (its figures set, its terms not yet) from the planner's sizes.
pub(crate) fn terms(m: &MemoryPlan, s: &Sizes) -> Vec<Term> {
    let mut t = vec![
        shown(Role::OtherProcesses, "other processes", s.other_processes),
        shown(Role::CudaContext, "CUDA context", s.cuda_context),
        shown(Role::Nccl, "NCCL / symm-mem buffers", s.nccl),
        shown(
            Role::CustomAllReduce,
            "custom all-reduce",
            s.custom_allreduce,
        ),
    ];
    static_pool(m, s, &mut t);
    t.extend([
        shown(Role::CudaGraphs, "CUDA graphs", s.cuda_graphs),
        shown(Role::Activations, "activations + workspaces", s.activations),
    ]);
    t.extend(s.buffers.iter().map(|b| shown(b.role, b.label, b.mib)));
    t.push(shown(Role::Margin, "margin", s.margin));
    let lines = |t: &[Term], g: Group| sum(t.iter().filter(|t| t.role.group() == g));
    let left = m
        .baseline_mib
        .saturating_sub(lines(&t, Group::StaticPool))
        .saturating_sub(lines(&t, Group::Outside));
    let label = if left >= 0 {
        "left free"
    } else {
        "short of the reserve above"
    };
    t.push(term(Role::LeftFree, label, left, Some(left)));
    t
}

/// The static pool: weights, LoRA, state and KV pools, what is left.
fn static_pool(m: &MemoryPlan, s: &Sizes, t: &mut Vec<Term>) {
    let start = t.len();
    let (draft, enc) = (int(s.draft_weights), int(s.encoder_weights));
    let parts = s.weights.is_some();
    if let Some(w) = s.weights {
        let label = if draft + enc > 0 {
            "model weights"
        } else {
            "weights"
        };
        let own = int(w).saturating_sub(draft).saturating_sub(enc);
        t.push(term(Role::Weights, label, w, Some(own)));
    }
    let line = |on: bool, v: i64| (on && v > 0).then_some(v);
    t.push(term(
        Role::DraftWeights,
        "draft model weights",
        s.draft_weights,
        line(parts, draft),
    ));
    t.push(term(
        Role::EncoderWeights,
        "vision / audio encoders",
        s.encoder_weights,
        line(parts, enc),
    ));
    t.push(term(
        Role::Lora,
        "LoRA buffers",
        s.lora,
        line(true, int(s.lora)),
    ));
    let slots = m.mamba_cache_size;
    t.push(term(
        Role::MambaState,
        format!("Mamba state pool ({} slots)", slots.unwrap_or(0)),
        s.mamba_state,
        slots.map(|_| int(s.mamba_state)),
    ));
    match (s.kv_cache, s.unallocated) {
        (Some(kv), Some(left)) => {
            kv_terms(m, s, kv, t);
            t.push(term(
                Role::Unallocated,
                unallocated_label(left.into(), false),
                left,
                Some(left),
            ));
        }
        (kv, left) => {
            let nominal = (m.baseline_mib as f64 * m.mem_fraction_static).floor() as i64;
            let known = sum(t[start..].iter());
            let what = if parts {
                "KV cache (not sized)"
            } else {
                "weights and KV cache (not sized)"
            };
            let rest = nominal.saturating_sub(known);
            t.push(term(Role::NotSized, what, rest, Some(rest)));
            t.extend(kv.map(|kv| term(Role::KvCache, "KV cache", kv, None)));
            t.extend(left.map(|l| term(Role::Unallocated, "left unallocated", l, None)));
            t.push(term(Role::SwaKvCache, "", s.swa_kv_cache, None));
        }
    }
}

/// The KV pool: the target's layers (its sliding-window pool apart) and the draft's.
fn kv_terms(m: &MemoryPlan, s: &Sizes, kv: u64, t: &mut Vec<Term>) {
    let kv_line = int(kv);
    let target = match (m.kv_cache_tokens, m.kv_cache_bytes_per_token) {
        (Some(tk), Some(b)) => {
            let mib = (tk as f64 * b as f64 / (1024.0 * 1024.0)).floor();
            (mib as i64).saturating_add(int(s.fixed_kv)).min(kv_line)
        }
        _ => kv_line,
    };
    let swa = if m.swa_kv_cache_tokens.is_some() {
        int(s.swa_kv_cache).min(target)
    } else {
        0
    };
    let (label, swa_line) = if swa > 0 {
        ("KV cache, full-attention layers", Some(swa))
    } else {
        ("KV cache", None)
    };
    t.push(term(Role::KvCache, label, kv, Some(target - swa)));
    t.push(term(
        Role::SwaKvCache,
        "KV cache, sliding-window pool",
        s.swa_kv_cache,
        swa_line,
    ));
    let draft = kv_line - target;
    t.push(term(
        Role::DraftKvCache,
        "KV cache, draft model layers",
        draft,
        (draft > 0).then_some(draft),
    ));
}
