//! Parallelism and multi-node layout.

use super::*;
use crate::sglang::opt;
use crate::sglang::release::at_least;

pub(crate) fn heads(ctx: &Context) -> Vec<Fired> {
    let Some(m) = ctx.model else { return vec![] };
    let attn_tp = (ctx.tp() / ctx.attn_dp().max(1)).max(1) as u64;
    let mut out = vec![];
    if let Some(h) = m.num_attention_heads
        && h > 0
        && h % attn_tp != 0
    {
        out.push(Fired::new(format!(
            "{} has {h} attention heads, not divisible by attention TP {attn_tp}: SGLang fails with '{h} is not divisible by {attn_tp}'; pick TP from the divisors of {h}",
            m.architecture.as_deref().unwrap_or("the model")
        )));
    }
    out
}

/// PAR011: KV heads and the attention TP must divide one another.
pub(crate) fn kv_heads(ctx: &Context) -> Vec<Fired> {
    let Some(m) = ctx.model else { return vec![] };
    let attn_tp = (ctx.tp() / ctx.attn_dp().max(1)).max(1) as u64;
    match m.num_key_value_heads {
        Some(kv)
            if m.kv_lora_rank.is_none()
                && kv > 0
                && ((kv >= attn_tp && !kv.is_multiple_of(attn_tp))
                    || (kv < attn_tp && !attn_tp.is_multiple_of(kv))) =>
        {
            vec![Fired::new(format!(
                "{} has {kv} KV heads and attention TP is {attn_tp}: one must divide the other for KV heads to be split or replicated",
                m.architecture.as_deref().unwrap_or("the model")
            ))]
        }
        _ => vec![],
    }
}

pub(crate) fn dist_init_addr(ctx: &Context) -> Vec<Fired> {
    if ctx.nnodes() < 2
        || ctx.user().given(opt::DIST_INIT_ADDR)
        || ctx
            .env
            .get("SGLANG_DISTRIBUTED_INIT_METHOD_OVERRIDE")
            .is_some()
    {
        return vec![];
    }
    vec![Fired::new(format!(
        "--nnodes {} without --dist-init-addr: every node would rendezvous at 127.0.0.1 and start-up hangs; pass the same HOST:PORT of node 0 on every node",
        ctx.nnodes()
    ))]
}

pub(crate) fn nodes_divide(ctx: &Context) -> Vec<Fired> {
    let (tp, pp, n) = (ctx.tp(), ctx.pp(), ctx.nnodes());
    if (tp * pp) % n == 0 {
        return vec![];
    }
    vec![Fired::new(format!(
        "TP {tp} × PP {pp} = {} GPUs is not divisible by --nnodes {n}: every node must run the same number of GPUs",
        tp * pp
    ))]
}

pub(crate) fn pp_spec(ctx: &Context) -> Vec<Fired> {
    let pp = ctx.pp();
    if pp <= 1 {
        return vec![];
    }
    // Up to 0.5.10.post1 check_server_args rejects PP with any speculative algorithm and with
    // mixed chunked prefill. 0.5.23's check_pipeline_parallel_compat (validation_hook.py) drops
    // the mixed-chunk ban and admits non-multi-layer EAGLE/NEXTN with SGLANG_ENABLE_PP_SPEC=1
    // or on PD prefill nodes; the variable marks the releases with the new check.
    let (reg, _) = ctx.env_registry();
    let relaxed = reg.knows("SGLANG_ENABLE_PP_SPEC");
    let mut what = vec![];
    if let Some(a) = ctx.spec_algo() {
        let prefill = ctx.user().sval(opt::DISAGGREGATION_MODE).as_deref() == Some("prefill");
        let pp_spec = ctx.env.get("SGLANG_ENABLE_PP_SPEC").is_some_and(env_true);
        let admitted = relaxed
            && match a.as_str() {
                "EAGLE" => !ctx.user().flag(opt::ENABLE_MULTI_LAYER_EAGLE) && (prefill || pp_spec),
                "DSPARK" => prefill && !pp_spec,
                _ => false,
            };
        if !admitted {
            what.push(if relaxed {
                format!(
                    "--speculative-algorithm {a} (SGLang {} takes PP only with non-multi-layer EAGLE/NEXTN, and then only with SGLANG_ENABLE_PP_SPEC=1 or --disaggregation-mode prefill)",
                    ctx.version
                )
            } else {
                format!("--speculative-algorithm {a}")
            });
        }
    }
    // The mixed-chunk ban ends at 0.5.11 (SGLang's own checks; tests/evidence/PAR004.jsonl).
    if !crate::sglang::release::at_least(ctx.version, "0.5.11")
        && ctx.user().flag(opt::ENABLE_MIXED_CHUNK)
    {
        what.push(opt::ENABLE_MIXED_CHUNK.into());
    }
    if what.is_empty() {
        return vec![];
    }
    vec![Fired::new(format!(
        "--pp-size {pp} with {}: SGLang rejects the combination at start-up",
        what.join(" and ")
    ))]
}

/// Share of a node's GPU memory the weights may take for one node to still be a sensible home
/// (the rest is KV cache, activations and CUDA graphs).
const ONE_NODE_WEIGHT_SHARE: f64 = 0.7;

pub(crate) fn tp_across_nodes(ctx: &Context) -> Vec<Fired> {
    let (n, pp, tp) = (ctx.nnodes(), ctx.pp(), ctx.tp());
    let spans = n / pp;
    if n < 2 || spans <= 1 {
        return vec![];
    }
    // TP across nodes is SGLang's documented recipe for models too big for one node (DeepSeek
    // V3/R1 on 2x8 H100/H20), and with DP attention the attention all-reduce stays in a rank's
    // node. Only a model known to fit one node's GPUs makes spanning a pure loss.
    if ctx.dp_attention() {
        return vec![];
    }
    let Some(weights) = ctx.model.and_then(|m| {
        m.weight_bytes
            .or_else(|| crate::facts::model::estimate_weight_bytes(m))
    }) else {
        return vec![];
    };
    let node_mib: u64 = ctx.used().iter().map(|g| g.memory_total_mib).sum();
    let node_bytes = node_mib as f64 * 1024.0 * 1024.0;
    // With PP each stage holds 1/PP of the weights.
    let stage = weights as f64 / pp as f64;
    if node_bytes <= 0.0 || stage > ONE_NODE_WEIGHT_SHARE * node_bytes {
        return vec![];
    }
    let gib = |b: f64| b / f64::from(1u32 << 30);
    vec![Fired::new(format!(
        "TP {tp} spans {spans} nodes (--nnodes {n}, PP {pp}), but {} ({:.0} GiB) fit on this node's {} GPUs ({:.0} GiB): every all-reduce crosses the network and custom all-reduce is off; run one TP {} server per node (behind a router) or PP across nodes",
        if pp > 1 {
            "a pipeline stage's weights"
        } else {
            "the weights"
        },
        gib(stage),
        ctx.used().len(),
        gib(node_bytes),
        ctx.used().len(),
    ))]
}

pub(crate) fn node_rank(ctx: &Context) -> Vec<Fired> {
    let (r, n) = (ctx.user().int(opt::NODE_RANK).unwrap_or(0), ctx.nnodes());
    if r >= 0 && r < n {
        return vec![];
    }
    vec![Fired::new(format!(
        "--node-rank {r} is outside 0..{} for --nnodes {n}",
        n - 1
    ))]
}

pub(crate) fn pd_mooncake_rdma(ctx: &Context) -> Vec<Fired> {
    let mode = ctx
        .user()
        .sval(opt::DISAGGREGATION_MODE)
        .unwrap_or_default();
    if (mode != "prefill" && mode != "decode")
        || ctx
            .user()
            .sval(opt::DISAGGREGATION_TRANSFER_BACKEND)
            .as_deref()
            != Some("mooncake")
        || !ctx.host.is_some_and(crate::facts::host::HostFacts::no_rdma)
        || (crate::sglang::release::at_least(ctx.version, "0.5.9")
            && !pd_ib_devices(ctx).is_empty())
    {
        // PAR023 says it as the error it is where SGLang checks the devices named.
        return vec![];
    }
    let tcp = if ctx
        .args
        .flags
        .action(opt::DISAGGREGATION_TRANSFER_BACKEND)
        .is_some_and(|a| {
            a.choices
                .as_ref()
                .is_some_and(|c| c.iter().any(|v| v == "mooncake_tcp"))
        }) {
        " or --disaggregation-transfer-backend mooncake_tcp"
    } else {
        ""
    };
    vec![Fired::new(format!(
        "PD disaggregation ({mode}) with the mooncake transfer backend, but this host has no RDMA device in /sys/class/infiniband: the KV transfer engine cannot start; install the RDMA stack, or use nixl{tcp}"
    ))]
}

pub(crate) fn moe_dense_tp(ctx: &Context) -> Vec<Fired> {
    let Some(n) = ctx
        .args
        .get(opt::MOE_DENSE_TP_SIZE)
        .and_then(serde_json::Value::as_i64)
    else {
        return vec![];
    };
    let tp_ok = crate::sglang::release::at_least(ctx.version, "0.5.14");
    if n == 1 || (tp_ok && n == ctx.tp()) {
        return vec![];
    }
    vec![Fired::new(format!(
        "--moe-dense-tp-size {n}: SGLang {} supports only 1{}",
        ctx.version,
        if tp_ok {
            format!(" or the TP size ({})", ctx.tp())
        } else {
            String::new()
        }
    ))]
}

/// PAR013: a PD decode server with DP above 1 on 0.5.2–0.5.7, where SGLang asserts the prefill
/// side is round-robin balanced (`--prefill-round-robin-balance`) unless it runs in its own CI.
pub(crate) fn pd_decode_dp_round_robin(ctx: &Context) -> Vec<Fired> {
    let decode = ctx.user().sval(opt::DISAGGREGATION_MODE).as_deref() == Some("decode");
    let in_ci = ctx
        .env
        .get("SGLANG_IS_IN_CI")
        .is_some_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "1" | "true"));
    if !decode || ctx.dp() <= 1 || ctx.user().flag(opt::PREFILL_ROUND_ROBIN_BALANCE) || in_ci {
        return vec![];
    }
    // 0.5.3-0.5.5 set DP to TP themselves for DeepSeek's sparse attention.
    let whose = if ctx.user().given(opt::DP_SIZE) {
        ""
    } else {
        " (SGLang's own, for DeepSeek's sparse attention)"
    };
    vec![Fired::new(format!(
        "{} decode with DP {}{whose}: SGLang {} requires {} on the decode server (and the prefill server launched with round-robin load balancing), and refuses the line otherwise",
        opt::DISAGGREGATION_MODE,
        ctx.dp(),
        ctx.version,
        opt::PREFILL_ROUND_ROBIN_BALANCE
    ))]
}

/// PAR014: the prefill server's view of the decode layout: a decode server may not set it, and
/// a prefill server's decode TP must divide or be a multiple of its own TP.
pub(crate) fn pd_decode_layout(ctx: &Context) -> Vec<Fired> {
    let u = ctx.user();
    let mode = u.sval(opt::DISAGGREGATION_MODE);
    let v = ctx.version;
    let given: Vec<&str> = [opt::DISAGGREGATION_DECODE_TP, opt::DISAGGREGATION_DECODE_DP]
        .into_iter()
        .filter(|o| u.given(o))
        .collect();
    match mode.as_deref() {
        Some("decode") if !given.is_empty() => vec![Fired::new(format!(
            "{} decode with {}: SGLang {v} sets these on the prefill server only and refuses them on the decode server",
            opt::DISAGGREGATION_MODE,
            given.join(" and ")
        ))],
        Some("prefill") => {
            let (tp, decode_tp) = (ctx.tp().max(1), u.int(opt::DISAGGREGATION_DECODE_TP));
            match decode_tp.filter(|&d| d > 0 && tp.max(d) % tp.min(d) != 0) {
                Some(d) => vec![Fired::new(format!(
                    "{} prefill with TP {tp} and {} {d}: SGLang {v} transfers KV between TP sizes only when one is a multiple of the other, and refuses the line",
                    opt::DISAGGREGATION_MODE,
                    opt::DISAGGREGATION_DECODE_TP
                ))],
                None => vec![],
            }
        }
        _ => vec![],
    }
}

/// PAR015: prefill context parallelism names no strategy (0.5.14+, where both options arrive).
pub(crate) fn prefill_cp_strategy(ctx: &Context) -> Vec<Fired> {
    let user = ctx.user();
    if !user.flag(opt::ENABLE_PREFILL_CP) || user.given(opt::CP_STRATEGY) {
        return vec![];
    }
    vec![Fired::new(format!(
        "{} without {}: SGLang {} has no default strategy and refuses the line; add {} zigzag or interleave",
        opt::ENABLE_PREFILL_CP,
        opt::CP_STRATEGY,
        ctx.version,
        opt::CP_STRATEGY
    ))]
}

/// PAR016: decode context parallelism for DeepSeek sparse attention (0.5.22+), which SGLang
/// refuses with HiCache or HiSparse, PD disaggregation, or a tree draft, in that order.
pub(crate) fn dsa_dcp(ctx: &Context) -> Vec<Fired> {
    let user = ctx.user();
    let dcp = user.int(opt::DCP_SIZE).unwrap_or(1);
    if dcp <= 1 || !ctx.model.is_some_and(|m| m.is_dsa(ctx.version)) {
        return vec![];
    }
    let cache = [opt::ENABLE_HISPARSE, opt::ENABLE_HIERARCHICAL_CACHE]
        .into_iter()
        .find(|o| user.flag(o))
        .map(str::to_owned);
    let pd = user
        .sval(opt::DISAGGREGATION_MODE)
        .filter(|m| m != "null")
        .map(|m| format!("{} {m}", opt::DISAGGREGATION_MODE));
    let topk = user
        .given(opt::SPECULATIVE_EAGLE_TOPK)
        .then(|| user.int(opt::SPECULATIVE_EAGLE_TOPK))
        .flatten()
        .filter(|&k| k != 1)
        .map(|k| format!("{} {k}", opt::SPECULATIVE_EAGLE_TOPK));
    cache
        .or(pd)
        .or(topk)
        .map(|what| {
            Fired::new(format!(
                "{} {dcp} with {what}: SGLang {} refuses decode context parallelism for DeepSeek sparse attention with HiCache or HiSparse, PD disaggregation, or a draft top-k other than 1",
                opt::DCP_SIZE,
                ctx.version
            ))
        })
        .into_iter()
        .collect()
}

/// PAR017: 0.5.15 and 0.5.16 refuse decode context parallelism with any draft on CUDA; from
/// 0.5.17 the trtllm_mla backend refuses it when it decodes (SGLang's own pick for DeepSeek on
/// Blackwell included), as the model runner builds it.
pub(crate) fn dcp_speculative(ctx: &Context) -> Vec<Fired> {
    let dcp = ctx.user().int(opt::DCP_SIZE).unwrap_or(1);
    let Some(algo) = ctx.spec_algo() else {
        return vec![];
    };
    if dcp <= 1 {
        return vec![];
    }
    if at_least(ctx.version, "0.5.17") {
        return dcp_speculative_trtllm_mla(ctx, dcp, &algo);
    }
    vec![Fired::new(format!(
        "{} {dcp} with --speculative-algorithm {algo}: SGLang {} refuses decode context parallelism with any speculative algorithm on CUDA, before loading the model; drop one of them, or use 0.5.17 or later",
        opt::DCP_SIZE,
        ctx.version
    ))]
}

/// From 0.5.17: decode on trtllm_mla (named, or SGLang's pick) with DCP and a draft.
fn dcp_speculative_trtllm_mla(ctx: &Context, dcp: i64, algo: &str) -> Vec<Fired> {
    let Some(decode) = ctx
        .server
        .backends
        .decode()
        .filter(|c| c.value == "trtllm_mla")
    else {
        return vec![];
    };
    let whose = match decode.source {
        crate::resolve::ChoiceSource::User => "",
        crate::resolve::ChoiceSource::Sglang => " (SGLang's pick)",
    };
    let others = if at_least(ctx.version, "0.5.23") {
        "cutedsl_mla"
    } else {
        "cutedsl_mla or tokenspeed_mla"
    };
    vec![Fired::new(format!(
        "{} {dcp} with --speculative-algorithm {algo} and trtllm_mla decoding{whose}: SGLang {}'s trtllm_mla backend refuses decode context parallelism with a draft when the model runner builds it, after loading the weights; decode with {others} (--decode-attention-backend)",
        opt::DCP_SIZE,
        ctx.version
    ))]
}

/// PAR019: DeepSeek sparse attention's prefill context parallelism where 0.5.6–0.5.13 assert
/// against it: a TP other than 8 (to 0.5.11; above 8 from 0.5.12), a PD decode server (from
/// 0.5.8).
pub(crate) fn dsa_prefill_cp(ctx: &Context) -> Vec<Fired> {
    let user = ctx.user();
    let cp = [
        opt::ENABLE_NSA_PREFILL_CONTEXT_PARALLEL,
        opt::ENABLE_DSA_PREFILL_CONTEXT_PARALLEL,
    ]
    .into_iter()
    .find(|o| user.flag(o));
    let (Some(cp), true) = (cp, ctx.model.is_some_and(|m| m.is_dsa(ctx.version))) else {
        return vec![];
    };
    use crate::sglang::release::at_least;
    let (v, tp) = (ctx.version, ctx.tp());
    let why = if tp != 8 && !at_least(v, "0.5.12") {
        format!("runs only on one machine at TP 8 (TP here: {tp})")
    } else if tp > 8 {
        format!("runs only on one machine, at TP 8 or less (TP here: {tp})")
    } else if at_least(v, "0.5.8")
        && user.sval(opt::DISAGGREGATION_MODE).as_deref() == Some("decode")
    {
        "runs only on prefill servers, not on this PD decode server".to_owned()
    } else {
        return vec![];
    };
    vec![Fired::new(format!(
        "{cp}: SGLang {v} asserts that sparse-attention prefill context parallelism {why}, before the server starts"
    ))]
}

/// PAR020: options of one PD role on the other, or without what they build on: the decode KV
/// offload and the host-pool retraction backup are a decode server's, the offload writes to a
/// HiCache storage backend and owns the decode host pool, and a prefill server cannot run the
/// fake transfer backend. Each test from the first release that makes it.
pub(crate) fn pd_role_options(ctx: &Context) -> Vec<Fired> {
    let u = ctx.user();
    let at = |v| crate::sglang::release::at_least(ctx.version, v);
    let mode = u.sval(opt::DISAGGREGATION_MODE).unwrap_or_default();
    let decode = mode == "decode";
    let offload = u.flag(opt::DISAGGREGATION_DECODE_ENABLE_OFFLOAD_KVCACHE);
    let backup_opt = u.str(opt::DISAGGREGATION_DECODE_RETRACTION_BACKUP);
    // Host KV buffering (0.5.21+) sets the host-pool backup itself unless cpu_tensor is asked
    // for (PAR024 refuses that).
    let buffering = super::par_pd::host_receive(ctx)
        .filter(|(_, on)| *on && backup_opt != Some("cpu_tensor"))
        .map(|(t, _)| t);
    let host_pool = backup_opt == Some("host_pool") || buffering.is_some();
    let priority_preempts =
        u.flag(opt::ENABLE_PRIORITY_SCHEDULING) && !u.flag(opt::DISABLE_PRIORITY_PREEMPTION);
    let offload_opt = opt::DISAGGREGATION_DECODE_ENABLE_OFFLOAD_KVCACHE;
    let backup = match buffering.filter(|_| backup_opt != Some("host_pool")) {
        Some(t) => format!(
            "{} {t} (it sets the host_pool retraction backup)",
            opt::DISAGGREGATION_DECODE_HOST_RECEIVE_THRESHOLD
        ),
        None => "--disaggregation-decode-retraction-backup host_pool".to_string(),
    };
    [
        (
            offload && !decode,
            format!("{offload_opt} on a server that is not a PD decode server"),
        ),
        (
            offload && decode && at("0.5.10rc0") && !u.given(opt::HICACHE_STORAGE_BACKEND),
            format!("{offload_opt} without {}", opt::HICACHE_STORAGE_BACKEND),
        ),
        (
            offload && decode && host_pool,
            format!("{offload_opt} with {backup} (both build the decode host pool)"),
        ),
        (
            host_pool && !decode,
            format!("{backup} on a server that is not a PD decode server"),
        ),
        (
            host_pool && u.int(opt::DCP_SIZE).unwrap_or(1) > 1,
            format!("{backup} with {} above 1", opt::DCP_SIZE),
        ),
        (
            host_pool && priority_preempts,
            format!(
                "{backup} with priority scheduling that may preempt (add {})",
                opt::DISABLE_PRIORITY_PREEMPTION
            ),
        ),
        (
            mode == "prefill"
                && at("0.5.10rc0")
                && u.str(opt::DISAGGREGATION_TRANSFER_BACKEND) == Some("fake"),
            format!(
                "{} fake on a prefill server",
                opt::DISAGGREGATION_TRANSFER_BACKEND
            ),
        ),
    ]
    .into_iter()
    .filter(|(fires, _)| *fires)
    .map(|(_, why)| Fired::new(format!("{why}: SGLang {} refuses the line", ctx.version)))
    .collect()
}

/// PAR021: a PD decode server's own radix cache (0.5.11+), which SGLang refuses with HiSparse
/// and over the transfer backends it cannot take: nixl only in 0.5.11, nixl or mooncake in
/// 0.5.12–0.5.13, any but the fake one after.
pub(crate) fn pd_decode_radix_cache(ctx: &Context) -> Vec<Fired> {
    let u = ctx.user();
    if u.sval(opt::DISAGGREGATION_MODE).as_deref() != Some("decode")
        || !u.flag(opt::DISAGGREGATION_DECODE_ENABLE_RADIX_CACHE)
    {
        return vec![];
    }
    let backend = u
        .sval(opt::DISAGGREGATION_TRANSFER_BACKEND)
        .unwrap_or_default();
    let at = |v| crate::sglang::release::at_least(ctx.version, v);
    let takes: &[&str] = match () {
        _ if !at("0.5.12") => &["nixl"],
        _ if !at("0.5.14") => &["nixl", "mooncake"],
        _ => &[],
    };
    let why = if u.flag(opt::ENABLE_HISPARSE) {
        format!("with {}", opt::ENABLE_HISPARSE)
    } else if backend == "fake" || !(takes.is_empty() || takes.contains(&backend.as_str())) {
        let only = if takes.is_empty() {
            String::new()
        } else {
            format!(" (it takes {} only)", takes.join(" or "))
        };
        format!("over the {backend} transfer backend{only}")
    } else {
        return vec![];
    };
    vec![Fired::new(format!(
        "{} on a PD decode server {why}: SGLang {} refuses the line",
        opt::DISAGGREGATION_DECODE_ENABLE_RADIX_CACHE,
        ctx.version
    ))]
}

/// PAR022: MoE data parallelism (`--moe-dp-size` > 1, 0.5.9+), which SGLang runs only as the
/// MoE side of attention context parallelism: it asserts a layout that divides TP, no PP, EP
/// filling what MoE DP leaves of TP, and (0.5.11+) an attention CP size equal to it. Prefill CP
/// sets the attention CP size itself, so that test is left to lines without it.
pub(crate) fn moe_dp_layout(ctx: &Context) -> Vec<Fired> {
    let u = ctx.user();
    let moe_dp = u.int(opt::MOE_DP_SIZE).unwrap_or(1);
    if moe_dp <= 1 {
        return vec![];
    }
    // SGLang asserts the layout before an all-to-all backend sets EP to TP.
    let ep = ctx.ep_given();
    let (tp, attn_cp) = (ctx.tp(), u.int(opt::ATTN_CP_SIZE).unwrap_or(1));
    let prefill_cp =
        u.flag(opt::ENABLE_PREFILL_CP) || u.flag(opt::ENABLE_NSA_PREFILL_CONTEXT_PARALLEL);
    let why = if tp % moe_dp != 0 {
        format!("TP {tp} is not a multiple of it")
    } else if ep * moe_dp > tp || (ep > 1 && ep * moe_dp != tp) {
        format!("EP {ep} times it is not TP {tp}")
    } else if ctx.pp() > 1 {
        format!("with --pp-size {}", ctx.pp())
    } else if !prefill_cp
        && attn_cp != moe_dp
        && crate::sglang::release::at_least(ctx.version, "0.5.11")
    {
        format!(
            "with an attention CP size of {attn_cp} (it runs as the MoE side of context parallelism; give --attn-cp-size {moe_dp})"
        )
    } else {
        return vec![];
    };
    vec![Fired::new(format!(
        "{} {moe_dp}: {why}: SGLang {} refuses the line",
        opt::MOE_DP_SIZE,
        ctx.version
    ))]
}

/// PAR023: the RDMA devices named for mooncake's KV transfer (0.5.9+), which SGLang checks
/// against `/sys/class/infiniband` before it starts: the class must exist and hold every device
/// named. A per-GPU mapping (0.5.13+) is checked for the class only; without the host's devices
/// (an offline topology without them), only a value naming no device at all.
pub(crate) fn pd_ib_devices(ctx: &Context) -> Vec<Fired> {
    let u = ctx.user();
    let pd = matches!(
        u.sval(opt::DISAGGREGATION_MODE).as_deref(),
        Some("prefill" | "decode")
    );
    let mooncake = (pd && u.str(opt::DISAGGREGATION_TRANSFER_BACKEND) == Some("mooncake"))
        || u.str(opt::ENCODER_TRANSFER_BACKEND) == Some("mooncake");
    let Some(value) = u.str(opt::DISAGGREGATION_IB_DEVICE).filter(|_| mooncake) else {
        return vec![];
    };
    // Per-GPU mappings arrive in 0.5.13; before, a mapping is split into names like any list.
    let trimmed = value.trim();
    let mapping = crate::sglang::release::at_least(ctx.version, "0.5.13")
        && (trimmed.starts_with('{') || trimmed.ends_with(".json"));
    let names: Vec<&str> = value
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .collect();
    let host = ctx.host.and_then(|h| h.ib_devices.as_ref());
    let missing: Vec<&str> = match host {
        Some(have) if !mapping => names
            .iter()
            .copied()
            .filter(|n| !have.iter().any(|h| h == n))
            .collect(),
        _ => vec![],
    };
    let why = if names.is_empty() {
        " names no device".to_string()
    } else if host.is_some_and(Vec::is_empty) {
        ", but this host has no RDMA device in /sys/class/infiniband".to_string()
    } else if !missing.is_empty() {
        let have = host.map(|h| h.join(", ")).unwrap_or_default();
        format!(
            " names {}, which this host lacks (it has {have})",
            missing.join(", ")
        )
    } else if !crate::sglang::release::at_least(ctx.version, "0.5.10rc0")
        && names
            .iter()
            .enumerate()
            .any(|(i, n)| names[..i].contains(n))
    {
        " names a device twice".to_string()
    } else {
        return vec![];
    };
    vec![Fired::new(format!(
        "{} {value:?} for mooncake's KV transfer{why}: SGLang {} checks the devices before it starts and refuses the line",
        opt::DISAGGREGATION_IB_DEVICE,
        ctx.version
    ))]
}
