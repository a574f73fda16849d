//! Buffers a backend allocates once at its first forward pass, after SGLang has sized the KV
//! pool: fixed sizes that must fit outside the static pool next to the graphs and activations.
//! Each is a term of its own; a new one is a [`Role`] and a line in [`at_first_use`].

use super::model::Role;
use super::terms::{MIB, mib_term};
use crate::resolve::Context;
use crate::resolve::moe;
use crate::sglang::opt;
use crate::sglang::release::at_least;

/// One buffer, per GPU.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Buffer {
    pub(crate) role: Role,
    /// As the table names it.
    pub(crate) label: &'static str,
    pub(crate) mib: u64,
}

/// The buffers the line's backends allocate at their first use (graph capture included), for
/// the decode batch sizes it captures and its context length.
pub(super) fn at_first_use(ctx: &Context, captured: &[i64], context_len: u64) -> Vec<Buffer> {
    [deepep(ctx), fa3_page_tables(ctx, captured, context_len)]
        .into_iter()
        .flatten()
        .collect()
}

/// FlashAttention-3's context-sized decode page tables, when decode runs on it.
fn fa3_page_tables(ctx: &Context, captured: &[i64], context_len: u64) -> Option<Buffer> {
    let fa3 = ctx
        .server
        .backends
        .decode()
        .is_some_and(|b| b.value == "fa3");
    let mib = fa3_page_tables_mib(ctx.version, captured, context_len, ctx.server.page_size);
    (fa3 && mib > 0).then_some(Buffer {
        role: Role::AttentionPageTables,
        label: "FA3 decode page tables",
        mib,
    })
}

/// FlashAttention-3's decode page tables, MiB, made while the graphs are captured: one int32
/// table of the largest batch × the context's pages for replay and, before 0.4.10.post2, a copy
/// of it per captured batch size (taken by indexing, which copies). Sized by the context, they
/// are what long-context lines spend on graphs (Llama-4 at 1M tokens: over 15 GiB at 0.4.6).
pub(super) fn fa3_page_tables_mib(
    version: &str,
    decode_bs: &[i64],
    context_len: u64,
    page: u64,
) -> u64 {
    let pages = context_len.div_ceil(page.max(1)) as f64;
    let max_bs = decode_bs.iter().copied().max().unwrap_or(0).max(0) as f64;
    let copies: i64 = if at_least(version, "0.4.10.post2") {
        0
    } else {
        decode_bs.iter().copied().filter(|&b| b > 0).sum()
    };
    mib_term((max_bs + copies as f64) * pages * 4.0 / MIB)
}

/// The buffers together, MiB.
pub(super) fn total_mib(buffers: &[Buffer]) -> f64 {
    buffers.iter().map(|b| b.mib as f64).sum()
}

/// SGLang's DeepEP buffer, one per rank of the TP group, made at the first dispatch: normal
/// mode's NVLink buffer, and the NVSHMEM buffer of low-latency mode (or of normal mode across
/// nodes); `auto`, the default, makes both. Sized as DeepEP's own size hints size them for its
/// default configs (20 SMs) and BF16 tokens, the NVSHMEM part in the 512 MiB granules DeepEP
/// maps its heap in. `--deepep-config` tunes only the normal part, which is the smaller.
fn deepep(ctx: &Context) -> Option<Buffer> {
    if ctx.server.moe_a2a.as_deref() != Some("deepep") {
        return None;
    }
    let m = ctx.model?;
    // Bytes as f64: any figure a config or a variable gives stays finite, never overflows.
    let hidden = m.hidden_size? as f64;
    let redundant = ctx
        .args
        .int(opt::EP_NUM_REDUNDANT_EXPERTS)
        .unwrap_or(0)
        .max(0);
    let experts = m.num_experts? as f64 + redundant as f64;
    let ranks = u64::try_from(ctx.server.parallel.tp).ok()?.max(1);
    let mode = ctx.server.backends.deepep_mode.as_deref().unwrap_or("auto");
    let tokens = moe::deepep_dispatch_tokens(ctx.env).max(0) as f64;
    let (nvl, mut rdma) = match mode {
        "low_latency" => (0.0, 0.0),
        _ => normal_bytes(hidden * 2.0, ranks)?,
    };
    if mode != "normal" {
        rdma = rdma.max(low_latency_bytes(tokens, hidden, ranks as f64, experts));
    }
    let rdma = align(rdma, 512.0 * MIB);
    Some(Buffer {
        role: Role::DeepepBuffers,
        label: "DeepEP all-to-all buffers",
        // A saturating cast: an absurd input gives an absurd, finite term.
        mib: ((nvl + rdma) / MIB).ceil() as u64,
    })
}

/// Normal mode's NVLink and RDMA bytes: the larger of the dispatch and combine configs'
/// hints. DeepEP has configs for these rank counts only (and refuses others).
fn normal_bytes(hidden_bytes: f64, ranks: u64) -> Option<(f64, f64)> {
    let (nvl_recv, send_d, send_c) = moe::deepep_normal_config(ranks)?;
    let channels = 10.0;
    let nvl_ranks = ranks.min(8) as f64;
    let rdma_ranks = (ranks / 8).max(1) as f64;
    // A token's hidden states, source meta, top-k indices and weights, and scales.
    let per_token = hidden_bytes + 8.0 + 128.0 * 8.0 + 128.0 * 4.0 + 128.0 * 4.0;
    let nvl = channels * nvl_ranks * (2.0 * rdma_ranks + 3.0) * 4.0
        + channels * nvl_ranks * nvl_recv * per_token;
    if ranks <= 8 {
        return Some((align(nvl, 128.0), 0.0));
    }
    let rdma_recv = align(128.0, send_d.max(send_c));
    let rdma = channels * rdma_ranks * (8.0 * 2.0 + 2.0) * 2.0 * 4.0
        + channels * rdma_ranks * rdma_recv * (per_token + 16.0) * 2.0
        + MIB;
    Some((align(nvl, 128.0), align(rdma, 128.0)))
}

/// Low-latency mode's RDMA bytes: double send, receive and signalling buffers for
/// `tokens` per rank to every expert.
fn low_latency_bytes(tokens: f64, hidden: f64, ranks: f64, experts: f64) -> f64 {
    let scales = (hidden / 128.0).floor();
    let dispatch_msg = 16.0 + (hidden * 2.0).max(hidden + scales * 4.0);
    let combine_msg = scales * 4.0 + hidden * 2.0;
    let send = (tokens * dispatch_msg).max(experts * tokens * combine_msg);
    let recv = (experts * tokens * dispatch_msg).max(experts * tokens * combine_msg);
    let signal = align(experts * 8.0 + (experts / ranks).floor() * 4.0, 128.0);
    let total = 2.0 * (send + recv + signal);
    // DeepEP rounds up past the next 128 bytes.
    ((total + 128.0) / 128.0).floor() * 128.0
}

/// `v` rounded up to a multiple of `to`.
fn align(v: f64, to: f64) -> f64 {
    (v / to).ceil() * to
}

#[cfg(test)]
mod tests {
    use super::super::tests::{model, node};
    use super::super::{MemoryOutcome, plan};
    use super::*;
    use crate::facts::Env;
    use crate::resolve::Facts;
    use crate::sglang::{SglangArgs, flagset};
    use serde_json::{Value, json};

    const H200: u64 = 143771;

    /// DeepSeek-V3 at TP 8 on eight H200s under 0.5.5, with these arguments and variables.
    fn dsv3(values: &[(&str, Value)], vars: &[(&str, &str)]) -> MemoryOutcome {
        dsv3_on("0.5.5", values, vars)
    }

    fn dsv3_on(version: &str, values: &[(&str, Value)], vars: &[(&str, &str)]) -> MemoryOutcome {
        let m = model("deepseek-ai__DeepSeek-V3");
        let topo = node(8, H200, 0, "9.0", true);
        let mut all = vec![(opt::TP_SIZE, json!(8))];
        all.extend(values.iter().cloned());
        let args = SglangArgs::with_values(flagset::get(version).unwrap(), &all);
        let env = Env::from_raw(vars.iter().map(|(k, v)| ((*k).into(), (*v).into())));
        let gpus: Vec<u32> = (0..8).collect();
        plan(&Context::new(Facts {
            version,
            args: &args,
            env: &env,
            topology: &topo,
            gpus: &gpus,
            model: Some(&m),
            draft: None,
            host: None,
            packages: None,
        }))
    }

    fn term(o: &MemoryOutcome) -> Option<(u64, Option<i64>)> {
        let t = o.memory.as_ref()?.term(Role::DeepepBuffers)?;
        Some((u64::try_from(t.mib).ok()?, t.line))
    }

    const DEEPEP: (&str, &str) = (opt::MOE_A2A_BACKEND, "deepep");

    #[test]
    fn low_latency_bytes_follow_deepseek_v3_dimensions() {
        // hidden 7168, 256 experts, 128 tokens per rank, 8 ranks: four buffers of 256 × 128
        // combine messages (7168 × 2 + 56 scales × 4 B), two signalling blocks.
        let want = 2.0 * (2.0 * 256.0 * 128.0 * 14560.0 + align(256.0 * 8.0 + 32.0 * 4.0, 128.0));
        let got = low_latency_bytes(128.0, 7168.0, 8.0, 256.0);
        assert_eq!(got, ((want + 128.0) / 128.0).floor() * 128.0);
        assert_eq!(got, 1_908_412_800.0);
    }

    #[test]
    fn normal_bytes_need_a_config_for_the_rank_count() {
        // 10 channels × 8 peers × 256 tokens × (14336 + 2056 B), plus the head counters.
        let (nvl, rdma) = normal_bytes(14336.0, 8).unwrap();
        assert_eq!(
            nvl,
            align(10.0 * 8.0 * 5.0 * 4.0 + 10.0 * 8.0 * 256.0 * 16392.0, 128.0)
        );
        assert_eq!(rdma, 0.0);
        // Across nodes the RDMA buffer appears; DeepEP has no config for 12 ranks.
        assert!(normal_bytes(14336.0, 16).unwrap().1 > 0.0);
        assert_eq!(normal_bytes(14336.0, 12), None);
    }

    #[test]
    fn deepseek_v3_with_deepep_reserves_its_buffers_outside_the_pool() {
        let plain = dsv3(&[], &[]);
        let with = dsv3(&[(DEEPEP.0, json!(DEEPEP.1))], &[]);
        // auto: the NVLink buffer (321 MiB) and the low-latency one in four 512 MiB granules.
        assert_eq!(term(&with), Some((2369, Some(2369))));
        assert_eq!(term(&plain), None);
        let m = with.memory.as_ref().unwrap();
        let t = m.term(Role::DeepepBuffers).unwrap();
        assert_eq!(t.label, "DeepEP all-to-all buffers");
        assert_eq!(t.role.group(), super::super::Group::Outside);
        // plan/v1 lists it with the table's other lines, which add up to the GPU.
        let wire = m.v1();
        let line = wire
            .terms
            .iter()
            .find(|t| t.term == "deepep_buffers")
            .unwrap();
        assert_eq!((line.group.as_str(), line.mib), ("outside", 2369));
        let total: i64 = wire.terms.iter().map(|t| t.mib).sum();
        assert_eq!(total, wire.gpu_memory_mib as i64);
        // The first use and the reserve grow by them: the planned fraction leaves them room.
        let first = |o: &MemoryOutcome| o.memory.as_ref().unwrap().first_use_mib;
        assert!(first(&with) >= first(&plain) + 2369);
        assert!(with.physics_mem_fraction_static < plain.physics_mem_fraction_static);
    }

    #[test]
    fn the_mode_and_the_dispatch_budget_size_the_buffers() {
        let mode = |m: &str| {
            term(&dsv3(
                &[(DEEPEP.0, json!(DEEPEP.1)), (opt::DEEPEP_MODE, json!(m))],
                &[],
            ))
        };
        // Normal mode on one node: the NVLink buffer only; low latency: the NVSHMEM one only.
        assert_eq!(mode("normal"), Some((321, Some(321))));
        assert_eq!(mode("low_latency"), Some((2048, Some(2048))));
        // Twice the tokens per rank: 3.6 GiB, in eight granules.
        let var = moe::DEEPEP_DISPATCH_VAR;
        let big = dsv3(&[(DEEPEP.0, json!(DEEPEP.1))], &[(var, "256")]);
        assert_eq!(term(&big), Some((321 + 4096, Some(321 + 4096))));
        // Absurd figures give a huge term (so no fit), never an overflow.
        let absurd = dsv3(
            &[
                (DEEPEP.0, json!(DEEPEP.1)),
                (opt::EP_NUM_REDUNDANT_EXPERTS, json!(i64::MAX)),
            ],
            &[(var, "9223372036854775807")],
        );
        assert!(term(&absurd).is_some_and(|(mib, _)| mib > 1 << 40));
        assert_eq!(absurd.memory.unwrap().fits, Some(false));
    }

    #[test]
    fn the_cutedsl_runner_takes_low_latency_mode_from_0_5_17() {
        let cutedsl = [
            (DEEPEP.0, json!(DEEPEP.1)),
            (opt::MOE_RUNNER_BACKEND, json!("flashinfer_cutedsl")),
        ];
        // SGLang turns auto into low_latency for this runner: no NVLink buffer.
        assert_eq!(
            term(&dsv3_on("0.5.17", &cutedsl, &[])),
            Some((2048, Some(2048)))
        );
        assert_eq!(
            term(&dsv3_on("0.5.16", &cutedsl, &[])),
            Some((2369, Some(2369)))
        );
    }
}
