//! Newer parallel layouts SGLang validates while it resolves the arguments: DWDP expert
//! partitioning (0.5.17+), decode context parallelism's settings (0.5.15+), layer-norm sequence
//! parallelism (0.5.19+) and Elastic EP's scale-up (0.5.16+).

use super::*;
use crate::sglang::opt;
use crate::sglang::release::at_least;

/// PAR026: DWDP (`--dwdp-size` above 1) other than over the whole TP group of an aggregated or
/// prefill server without EPLB, speculative decoding, PP or two-batch overlap.
pub(crate) fn dwdp_layout(ctx: &Context) -> Vec<Fired> {
    let u = ctx.user();
    let Some(size) = u.int(opt::DWDP_SIZE).filter(|s| *s > 1) else {
        return vec![];
    };
    let name = opt::DWDP_SIZE;
    let mode = u.str(opt::DISAGGREGATION_MODE).unwrap_or("null");
    let mut out = vec![];
    if size != ctx.tp() {
        out.push(format!(
            "{name} {size} with TP {}: they must be equal",
            ctx.tp()
        ));
    }
    let conflicts = [
        (
            mode == "decode",
            format!("{} decode", opt::DISAGGREGATION_MODE),
        ),
        (u.flag(opt::ENABLE_EPLB), opt::ENABLE_EPLB.to_owned()),
        (ctx.spec_algo().is_some(), "speculative decoding".to_owned()),
        (ctx.pp() > 1, format!("PP {}", ctx.pp())),
        (
            u.flag(opt::ENABLE_TWO_BATCH_OVERLAP),
            opt::ENABLE_TWO_BATCH_OVERLAP.to_owned(),
        ),
    ];
    out.extend(
        holding(conflicts)
            .map(|what| format!("{name} {size} with {what}, which DWDP does not take")),
    );
    refused_at_start(ctx, out)
}

/// PAR027: decode context parallelism's settings: a size below 1 (0.5.15+); on CUDA before
/// 0.5.17, any speculative algorithm; the a2a exchanges or Q-projection replication without a
/// DCP size above 1, replication with the AllGather/ReduceScatter exchange (0.5.17+); prefill
/// context parallelism beside it (0.5.22+).
pub(crate) fn dcp_settings(ctx: &Context) -> Vec<Fired> {
    let u = ctx.user();
    let v = ctx.version;
    let Some(dcp) = u.int(opt::DCP_SIZE) else {
        return vec![];
    };
    let name = opt::DCP_SIZE;
    let mut out = vec![];
    if dcp < 1 {
        out.push(format!("{name} {dcp}: it must be at least 1"));
    }
    if dcp > 1 && !at_least(v, "0.5.17") && ctx.spec_algo().is_some() {
        out.push(format!(
            "{name} {dcp} with speculative decoding, which it does not take on CUDA"
        ));
    }
    if at_least(v, "0.5.17") {
        out.extend(dcp_exchange(ctx, dcp));
        out.extend(dcp_hicache(ctx, dcp));
    }
    if dcp > 1 && at_least(v, "0.5.22") && u.flag(opt::ENABLE_PREFILL_CP) {
        out.push(format!("{name} {dcp} with {}", opt::ENABLE_PREFILL_CP));
    }
    refused_at_start(ctx, out)
}

/// The exchange backend (0.5.17+): the user's, the parser's default (ag_rs before 0.5.20), or
/// from 0.5.20 SGLang's pick (ag_rs at DCP 1, an all-to-all on CUDA above it).
fn dcp_exchange(ctx: &Context, dcp: i64) -> Vec<String> {
    let u = ctx.user();
    let backend = u
        .str(opt::DCP_COMM_BACKEND)
        .unwrap_or(if dcp > 1 { "a2a" } else { "ag_rs" });
    let a2a = matches!(backend, "a2a" | "fi_a2a");
    let name = opt::DCP_COMM_BACKEND;
    let mut out = vec![];
    if a2a && dcp <= 1 {
        out.push(format!(
            "{name} {backend} with {} {dcp}: it needs DCP above 1",
            opt::DCP_SIZE
        ));
    }
    if u.flag(opt::DCP_REPLICATE_Q_PROJ) {
        let q = opt::DCP_REPLICATE_Q_PROJ;
        if dcp <= 1 {
            out.push(format!(
                "{q} with {} {dcp}: it needs DCP above 1",
                opt::DCP_SIZE
            ));
        } else if !a2a {
            out.push(format!("{q} with {name} {backend}: it takes a2a or fi_a2a"));
        }
    }
    out
}

/// HiCache beside DCP above 1 (0.5.17+): only for MLA models, with DSPARK as the only draft
/// (none at all in 0.5.17), a storage backend only in 0.5.23 and then not buffer-only.
fn dcp_hicache(ctx: &Context, dcp: i64) -> Vec<String> {
    let u = ctx.user();
    let v = ctx.version;
    if dcp <= 1 || !u.flag(opt::ENABLE_HIERARCHICAL_CACHE) {
        return vec![];
    }
    let spec = ctx
        .spec_algo()
        .filter(|a| a != "DSPARK" || !at_least(v, "0.5.18"));
    let storage = u.sval(opt::HICACHE_STORAGE_BACKEND).is_some();
    let buffer_only = u.str(opt::HICACHE_HOST_MEMORY_MODE) == Some("buffer_only");
    let checks = [
        (
            ctx.model.is_some_and(|m| !m.is_mla()),
            "a model without MLA".to_owned(),
        ),
        (spec.is_some(), "speculative decoding".to_owned()),
        (
            storage && (buffer_only || !at_least(v, "0.5.23")),
            opt::HICACHE_STORAGE_BACKEND.to_owned(),
        ),
    ];
    holding(checks)
        .map(|what| format!("HiCache with {} {dcp} and {what}", opt::DCP_SIZE))
        .collect()
}

/// The architectures layer-norm sequence parallelism takes (Muse Spark's from 0.5.23).
fn layernorm_sp_arch(v: &str, arch: &str) -> bool {
    arch == "Qwen3ForCausalLM"
        || (at_least(v, "0.5.23") && arch == "MuseSparkForConditionalGeneration")
}

/// PAR028: `--enable-layernorm-sp` (0.5.19+) on an architecture it does not take, at TP 1, with
/// DP attention, speculative decoding (Muse Spark's DFLASH aside) or PP (0.5.22+); its MegaMoE
/// switch without it (0.5.23).
pub(crate) fn layernorm_sp(ctx: &Context) -> Vec<Fired> {
    let u = ctx.user();
    let v = ctx.version;
    let name = opt::ENABLE_LAYERNORM_SP;
    if !u.flag(name) {
        let megamoe = opt::ENABLE_MEGAMOE_FOR_LAYERNORM_SP;
        let out = u.flag(megamoe).then(|| format!("{megamoe} without {name}"));
        return refused_at_start(ctx, out.into_iter().collect());
    }
    let arch = ctx.model_arch();
    let muse = arch == Some("MuseSparkForConditionalGeneration");
    let spec = ctx.spec_algo().filter(|a| !(muse && a == "DFLASH"));
    let checks = [
        (
            arch.is_some_and(|a| !layernorm_sp_arch(v, a)),
            format!("the model's {}", arch.unwrap_or_default()),
        ),
        (ctx.tp() <= 1, "TP 1".to_owned()),
        (ctx.dp_attention(), "DP attention".to_owned()),
        (spec.is_some(), "speculative decoding".to_owned()),
        (
            ctx.pp() > 1 && at_least(v, "0.5.22"),
            format!("PP {}", ctx.pp()),
        ),
    ];
    let out = holding(checks)
        .map(|what| format!("{name} with {what}, which it does not take"))
        .collect();
    refused_at_start(ctx, out)
}

/// EP022: Elastic EP's sizes (0.5.16+): `--max-ep-size` without a backend or not positive, an
/// initial size without scale-up (a backend and a maximum above TP), and what scale-up needs:
/// a positive timeout, one tokenizer worker, no Ray, no expert backup, the DP LM head, attention
/// DP, and MoE dense TP 1 under attention TP (0.5.23).
pub(crate) fn elastic_ep_sizes(ctx: &Context) -> Vec<Fired> {
    let u = ctx.user();
    let backend = u.sval(opt::ELASTIC_EP_BACKEND).filter(|b| b != "none");
    let max = u.int(opt::MAX_EP_SIZE);
    let mut out = vec![];
    if let Some(m) = max {
        if backend.is_none() {
            out.push(format!(
                "{} {m} without {}",
                opt::MAX_EP_SIZE,
                opt::ELASTIC_EP_BACKEND
            ));
        } else if m <= 0 {
            out.push(format!("{} {m}: it must be positive", opt::MAX_EP_SIZE));
        }
    }
    let scaling = backend.is_some() && max.is_some_and(|m| m > ctx.tp());
    if u.is_set(opt::ELASTIC_EP_INITIAL_SIZE) && !scaling {
        out.push(format!(
            "{} without scale-up ({} and a {} above TP {})",
            opt::ELASTIC_EP_INITIAL_SIZE,
            opt::ELASTIC_EP_BACKEND,
            opt::MAX_EP_SIZE,
            ctx.tp()
        ));
    }
    if scaling {
        out.extend(scale_up_needs(ctx));
    }
    refused_at_start(ctx, out)
}

/// What Elastic EP's scale-up refuses, one line each.
fn scale_up_needs(ctx: &Context) -> Vec<String> {
    let u = ctx.user();
    let v = ctx.version;
    let attn_tp = ctx.tp() / ctx.attn_dp().max(1);
    let dense_tp = u.int(opt::MOE_DENSE_TP_SIZE);
    let checks = [
        (
            (u.get_or_default(opt::ELASTIC_EP_SCALE_TIMEOUT))
                .and_then(serde_json::Value::as_f64)
                .is_some_and(|t| t <= 0.0),
            format!("with {} not above 0", opt::ELASTIC_EP_SCALE_TIMEOUT),
        ),
        (
            u.int(opt::TOKENIZER_WORKER_NUM).is_some_and(|n| n != 1),
            format!("with {} other than 1", opt::TOKENIZER_WORKER_NUM),
        ),
        (u.flag(opt::USE_RAY), format!("with {}", opt::USE_RAY)),
        (
            u.flag(opt::ENABLE_ELASTIC_EXPERT_BACKUP),
            format!("with {}", opt::ENABLE_ELASTIC_EXPERT_BACKUP),
        ),
        (
            !u.flag(opt::ENABLE_DP_LM_HEAD),
            format!("without {}", opt::ENABLE_DP_LM_HEAD),
        ),
        (!ctx.dp_attention(), "without DP attention".to_owned()),
        (
            at_least(v, "0.5.23") && attn_tp > 1 && dense_tp != Some(1),
            format!(
                "with attention TP {attn_tp} and no {} 1",
                opt::MOE_DENSE_TP_SIZE
            ),
        ),
    ];
    holding(checks)
        .chain(scale_up_layout(ctx))
        .map(|what| format!("Elastic EP scale-up {what}"))
        .collect()
}

/// The layout scale-up needs (0.5.16+): one stage, no attention CP or MoE DP, EP over the whole
/// TP group on the NIXL all-to-all, round-robin request routing, and on the Mooncake backend a
/// first EP size equal to TP.
fn scale_up_layout(ctx: &Context) -> impl Iterator<Item = String> {
    let u = ctx.user();
    let one = |o| u.int(o).unwrap_or(1) == 1;
    let prefill = u.str(opt::DISAGGREGATION_MODE) == Some("prefill");
    let balance = u.str(opt::LOAD_BALANCE_METHOD).unwrap_or("auto");
    let routed = balance == "round_robin" || (balance == "auto" && !prefill);
    let joining = u.str(opt::ELASTIC_EP_JOIN_MODE) == Some("scale");
    let initial = u.int(opt::ELASTIC_EP_INITIAL_SIZE);
    let a2a = ctx.moe_a2a().unwrap_or_else(|| "none".to_owned());
    let dp_size = if ctx.dp_attention() {
        ctx.attn_dp()
    } else {
        ctx.dp()
    };
    holding([
        (
            u.str(opt::ELASTIC_EP_BACKEND) != Some("mooncake"),
            format!("on a {} other than mooncake", opt::ELASTIC_EP_BACKEND),
        ),
        (
            !joining && initial.is_some_and(|i| i != ctx.tp()),
            format!(
                "with {} other than TP {}",
                opt::ELASTIC_EP_INITIAL_SIZE,
                ctx.tp()
            ),
        ),
        (
            !routed,
            format!(
                "with {} {balance}{}, not round_robin",
                opt::LOAD_BALANCE_METHOD,
                if balance == "auto" {
                    " (follow_bootstrap_room on a PD prefill server)"
                } else {
                    ""
                }
            ),
        ),
        (ctx.pp() != 1, "with pipeline parallelism".to_owned()),
        // 0.5.16–0.5.21: DP over the whole TP group as well.
        (
            !at_least(ctx.version, "0.5.22") && dp_size != ctx.tp(),
            format!("with DP size {dp_size} other than TP {}", ctx.tp()),
        ),
        // 0.5.16–0.5.20 recapture no graph after a scale, so the decode graph must be off.
        (
            !at_least(ctx.version, "0.5.21") && ctx.server.switches.cuda_graph.on,
            "with the decode CUDA graph on (pass --disable-cuda-graph)".to_owned(),
        ),
        (!one(opt::ATTN_CP_SIZE), "with attention CP".to_owned()),
        (
            !one(opt::MOE_DP_SIZE),
            format!("with {} other than 1", opt::MOE_DP_SIZE),
        ),
        (
            ctx.ep() != ctx.tp(),
            format!("with EP {} other than TP {}", ctx.ep(), ctx.tp()),
        ),
        (
            a2a != "nixl",
            format!("without {} nixl (in effect: {a2a})", opt::MOE_A2A_BACKEND),
        ),
    ])
}
