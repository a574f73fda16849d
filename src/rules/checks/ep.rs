//! Expert parallelism and MoE all-to-all backends.

use super::*;
use crate::resolve::moe;
use crate::sglang::opt;
use crate::sglang::release::at_least;

pub(crate) fn flashinfer_a2a_runner(ctx: &Context) -> Vec<Fired> {
    if ctx.moe_a2a().as_deref() != Some("flashinfer") {
        return vec![];
    }
    let runner = ctx
        .user()
        .sval(opt::MOE_RUNNER_BACKEND)
        .unwrap_or_else(|| "auto".into());
    // The runners SGLang's check accepts grew release by release (tests/evidence/EP001.jsonl).
    let all = [
        "flashinfer_cutlass",
        "flashinfer_cutedsl",
        "flashinfer_trtllm_routed",
        "flashinfer_trtllm",
        "deep_gemm",
    ];
    let ok: &[&str] = if at_least(ctx.version, "0.5.19") {
        &all
    } else if at_least(ctx.version, "0.5.15") {
        &all[..3]
    } else if at_least(ctx.version, "0.5.13") {
        &all[..2]
    } else {
        &all[..1]
    };
    if ok.contains(&runner.as_str()) {
        return vec![];
    }
    if runner == "auto" && at_least(ctx.version, "0.5.19") && auto_runner_picked(ctx) {
        return vec![];
    }
    vec![Fired::new(format!(
        "--moe-a2a-backend flashinfer with --moe-runner-backend {runner}: SGLang {} asserts the runner is one of {}",
        ctx.version,
        ok.join(", ")
    ))]
}

/// Architectures whose own SGLang hooks (0.5.19–0.5.23) may pick the MoE runner for a
/// quantised checkpoint. DeepSeek's own pick waits for no all-to-all, so it is not here.
const OWN_RUNNER_ARCHS: &[&str] = &[
    "DeepseekV4ForCausalLM",
    "Gemma4ForCausalLM",
    "Gemma4ForConditionalGeneration",
    "Glm4MoeForCausalLM",
    "GptOssForCausalLM",
    "Llama4ForCausalLM",
    "Llama4ForConditionalGeneration",
    "MiMoV2FlashForCausalLM",
    "MiMoV2ForCausalLM",
    "MiniMaxM2ForCausalLM",
    "MiniMaxM3SparseForCausalLM",
    "MiniMaxM3SparseForConditionalGeneration",
    "NemotronHForCausalLM",
    "NemotronHPuzzleForCausalLM",
    "Qwen3MoeForCausalLM",
    "Qwen3VLMoeForConditionalGeneration",
];

/// Whether 0.5.19+ may move a runner left at `auto` under the FlashInfer all-to-all: for
/// quantisation SGLang resolves the runner from (MXFP8, online NVFP4, ModelOpt FP4), or a
/// quantised checkpoint of a model with its own pick (or of a model not read). A BF16 model,
/// and a quantised one of another architecture, stay on `auto`.
fn auto_runner_picked(ctx: &Context) -> bool {
    let Some(q) = ctx.quant() else {
        return false;
    };
    matches!(q.as_str(), "mxfp8" | "nvfp4_online" | "modelopt_fp4")
        || ctx
            .model_arch()
            .is_none_or(|a| OWN_RUNNER_ARCHS.contains(&a))
}

pub(crate) fn flashinfer_a2a_dp(ctx: &Context) -> Vec<Fired> {
    if ctx.moe_a2a().as_deref() != Some("flashinfer") {
        return vec![];
    }
    let (dp, tp) = (ctx.attn_dp(), ctx.tp());
    if dp == tp {
        return vec![];
    }
    vec![Fired::new(format!(
        "--moe-a2a-backend flashinfer requires attention DP equal to TP (got attention DP {dp}, TP {tp})"
    ))]
}

pub(crate) fn deepep_p2p(ctx: &Context) -> Vec<Fired> {
    if !ctx.moe_a2a().is_some_and(|a| a.starts_with("deepep")) {
        return vec![];
    }
    let g = ctx.tp_gpus();
    let broken = ctx.topology.p2p_broken_pairs(g);
    if g.len() < 2 || broken.is_empty() {
        return vec![];
    }
    let (a, b) = broken[0];
    vec![Fired::new(format!(
        "DeepEP needs CUDA peer access between every pair of its GPUs, but GPUs {a} and {b} have none ({} pairs without P2P); it crashes in deep_ep.cpp",
        broken.len()
    ))]
}

pub(crate) fn a2a_pcie(ctx: &Context) -> Vec<Fired> {
    let Some(a) = ctx.moe_a2a() else {
        return vec![];
    };
    if !ctx.tp_pcie_only()
        || !ctx.topology.p2p_broken_pairs(ctx.tp_gpus()).is_empty() && a.starts_with("deepep")
    {
        return vec![];
    }
    vec![Fired::new(format!(
        "--moe-a2a-backend {a} on PCIe-only GPUs ({}): all-to-all dispatch saturates PCIe and adds dispatch buffers (on 8x RTX PRO 6000 it ended in an assertion and OOM); plain TP MoE is usually faster here",
        ctx.describe_used()
    ))]
}

pub(crate) fn tbo_without_a2a(ctx: &Context) -> Vec<Fired> {
    // From 0.5.15 SGLang accepts two-batch overlap without all-to-all under DP attention.
    if !ctx.user().flag(opt::ENABLE_TWO_BATCH_OVERLAP)
        || ctx.moe_a2a().is_some()
        || (at_least(ctx.version, "0.5.15") && ctx.dp_attention())
    {
        return vec![];
    }
    vec![Fired::new(
        "--enable-two-batch-overlap without an all-to-all backend (--moe-a2a-backend none): SGLang rejects it".to_string(),
    )]
}

/// EP034: from 0.5.13 SGLang's DSA branch refuses two-batch overlap on a model whose layers
/// share the indexer's top-k (`index_topk_freq` above 1, an `S` in `index_topk_pattern`, and from
/// 0.5.20 a `shared` entry in `indexer_types`): the overlapped path passes no top-k between layers.
pub(crate) fn tbo_dsa_index_sharing(ctx: &Context) -> Vec<Fired> {
    let v = ctx.version;
    let Some(m) = ctx.model.filter(|m| m.is_dsa(v)) else {
        return vec![];
    };
    if !ctx.user().flag(opt::ENABLE_TWO_BATCH_OVERLAP) || !at_least(v, "0.5.13") {
        return vec![];
    }
    let s = &m.dsa_index_sharing;
    let why = match s.freq {
        Some(f) if f > 1 => format!("index_topk_freq {f}"),
        _ if s.pattern_shared => "an S (shared) layer in index_topk_pattern".to_owned(),
        _ if s.types_shared && at_least(v, "0.5.20") => "shared layers in indexer_types".to_owned(),
        _ => return vec![],
    };
    vec![Fired::new(format!(
        "{} on a DSA model whose config shares the indexer's top-k across layers ({why}): SGLang {v} refuses it before loading ('not supported with DSA index-topk sharing'), since the overlapped path passes no top-k from layer to layer; drop the option",
        opt::ENABLE_TWO_BATCH_OVERLAP
    ))]
}

pub(crate) fn deepep_normal(ctx: &Context) -> Vec<Fired> {
    if ctx.deepep_mode() != Some("normal")
        || ctx.user().sval(opt::DISAGGREGATION_MODE).as_deref() == Some("prefill")
        || ctx.cuda_graph_disabled()
    {
        return vec![];
    }
    // From 0.4.6.post3 SGLang turns the graphs off itself; before, it captures them and fails.
    if !crate::sglang::release::at_least(ctx.version, "0.4.6.post3") {
        return vec![Fired::new(format!(
            "--deepep-mode normal with CUDA graphs: SGLang {} captures decode graphs through DeepEP's normal kernels, which cannot be captured ('Capture cuda graph failed', sglang#6218); disable CUDA graphs or use low_latency",
            ctx.version
        ))
        .with_fix(add_flag(opt::DISABLE_CUDA_GRAPH))];
    }
    vec![Fired::new(
        "--deepep-mode normal: SGLang disables CUDA graphs with DeepEP's normal kernels, so decode runs eagerly; use auto or low_latency outside PD prefill".to_string(),
    )]
}

pub(crate) fn deepep_dispatch_tokens(ctx: &Context) -> Vec<Fired> {
    if ctx.deepep_mode().is_none_or(|m| m == "normal") {
        return vec![];
    }
    // A dense model has no MoE layer, so nothing is ever dispatched through DeepEP.
    if ctx.model.is_some() && !ctx.model_is_moe() {
        return vec![];
    }
    // The largest captured batch after SGLang's own caps: its default capture list too, which
    // reaches past the default budget on large GPUs (to 256 from 0.4.6, 512 later).
    let Some(bs) = ctx.decode_graph_max_bs() else {
        return vec![];
    };
    let draft = if ctx.spec_algo().is_some() {
        ctx.user()
            .int(opt::SPECULATIVE_NUM_DRAFT_TOKENS)
            .unwrap_or(1)
            .max(1)
    } else {
        1
    };
    let (need, split) = dispatch_tokens_per_rank(ctx, bs.saturating_mul(draft));
    let var = moe::DEEPEP_DISPATCH_VAR;
    let limit = moe::deepep_dispatch_tokens(ctx.env);
    if need <= limit {
        return vec![];
    }
    vec![Fired::new(format!(
        "DeepEP low-latency dispatch of up to {need} tokens per rank (CUDA-graph max batch {bs}{}{split}) exceeds {var}={limit}: deep_ep.cpp asserts; raise the variable to at least {need} or lower the batch",
        if draft > 1 {
            format!(" × {draft} draft tokens")
        } else {
            String::new()
        }
    ))]
}

/// The tokens one rank hands DeepEP for a batch of `tokens`, and how the batch was split (for
/// the message). The MoE layers run scattered: each attention-TP rank dispatches its share, and
/// two-batch overlap dispatches each half on its own.
fn dispatch_tokens_per_rank(ctx: &Context, tokens: i64) -> (i64, String) {
    let attn_tp = (ctx.tp() / ctx.attn_dp().max(1)).max(1);
    let halves = if ctx.user().flag(opt::ENABLE_TWO_BATCH_OVERLAP) {
        2
    } else {
        1
    };
    let ways = attn_tp.saturating_mul(halves);
    let need = tokens / ways + i64::from(tokens % ways != 0);
    let mut split = String::new();
    if attn_tp > 1 {
        split.push_str(&format!(", over {attn_tp} attention-TP ranks"));
    }
    if halves > 1 {
        split.push_str(", in two overlapped halves");
    }
    (need, split)
}

/// The MoE runner in effect: SGLang's pick, else the user's value, else `auto`.
pub(super) fn moe_runner(ctx: &Context) -> String {
    (ctx.server.backends.moe_runner.as_ref())
        .map(|c| c.value.clone())
        .or_else(|| ctx.user().sval(opt::MOE_RUNNER_BACKEND))
        .unwrap_or_else(|| "auto".into())
}

/// The variable that sizes FlashInfer's all-to-all dispatch workspace, tokens per rank.
const FLASHINFER_DISPATCH_VAR: &str = "SGLANG_FLASHINFER_NUM_MAX_DISPATCH_TOKENS_PER_RANK";

/// EP014: 0.5.13 to 0.5.21 refuse FlashInfer's all-to-all with the CuteDSL runner when its
/// dispatch budget (tokens per rank × EP) is below the largest MoE forward SGLang can run: the
/// prefill budget, the prefill graph's largest capture, the decode graph's batch × draft tokens.
pub(crate) fn flashinfer_cutedsl_budget(ctx: &Context) -> Vec<Fired> {
    let decode_side = ctx.user().str(opt::DISAGGREGATION_MODE) == Some("decode");
    if ctx.moe_a2a().as_deref() != Some("flashinfer")
        || moe_runner(ctx) != "flashinfer_cutedsl"
        || decode_side
    {
        return vec![];
    }
    let d = &ctx.server.defaults;
    let prefill = ctx.user().int(opt::MAX_PREFILL_TOKENS).unwrap_or(16384);
    if prefill <= 0 {
        return vec![];
    }
    let graph = if d.prefill_graph {
        d.prefill_bs.iter().copied().max().unwrap_or(0)
    } else {
        0
    };
    let per_req = ctx
        .server
        .spec_params
        .map_or(1, |p| p.num_draft_tokens.value.max(1));
    let decode = d.decode_max_bs.unwrap_or(0) * per_req;
    let need = prefill.max(graph).max(decode);
    let per_rank = (ctx.env.get(FLASHINFER_DISPATCH_VAR))
        .and_then(|v| v.trim().parse::<i64>().ok())
        .filter(|v| *v != 0)
        .unwrap_or(1024);
    let ep = ctx.ep().max(1);
    if per_rank * ep >= need {
        return vec![];
    }
    let want = (need + ep - 1) / ep;
    vec![Fired::new(format!(
        "--moe-a2a-backend flashinfer with the flashinfer_cutedsl runner: the largest MoE forward is {need} tokens, but {FLASHINFER_DISPATCH_VAR}={per_rank} × EP {ep} covers {}; SGLang {} refuses to start; set {FLASHINFER_DISPATCH_VAR}={want} or lower --max-prefill-tokens",
        per_rank * ep,
        ctx.version
    ))]
}

/// EP013: DeepEP's normal kernels read a default config per group size, and it ships them for
/// these sizes only.
pub(crate) fn deepep_rank_count(ctx: &Context) -> Vec<Fired> {
    let tp = ctx.tp();
    if ctx.moe_a2a().is_none_or(|a| a != "deepep")
        || ctx.deepep_mode() == Some("low_latency")
        || ctx.user().sval(opt::DEEPEP_CONFIG).is_some()
        || tp < 2
        || u64::try_from(tp).is_ok_and(|r| moe::deepep_normal_config(r).is_some())
    {
        return vec![];
    }
    let sizes: Vec<String> = moe::DEEPEP_NORMAL_CONFIGS
        .iter()
        .map(|c| c.0.to_string())
        .collect();
    let sizes = match sizes.split_last() {
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    };
    vec![Fired::new(format!(
        "DeepEP's normal kernels with TP {tp}: DeepEP ships dispatch and combine configs for {sizes} ranks only and asserts 'Unsupported number of EP ranks' at the first dispatch, after the weights load; use one of those TP sizes, --deepep-mode low_latency, or a tuned --deepep-config"
    ))]
}

pub(crate) fn eplb_without_ep(ctx: &Context) -> Vec<Fired> {
    if !ctx.user().flag(opt::ENABLE_EPLB) || ctx.ep() > 1 || ctx.moe_a2a().is_some() {
        return vec![];
    }
    vec![Fired::new(
        "--enable-eplb with expert parallelism off (--ep-size 1, no all-to-all backend): SGLang rejects it".to_string(),
    )]
}

/// EP012: before 0.4.10 nothing refuses EPLB without EP up front; across nodes its rebalancer
/// then asserts the expert-parallel GPUs divide evenly over the nodes (EP 1 over 2 nodes).
pub(crate) fn eplb_without_ep_multinode(ctx: &Context) -> Vec<Fired> {
    if !ctx.user().flag(opt::ENABLE_EPLB)
        || ctx.ep() > 1
        || ctx.moe_a2a().is_some()
        || ctx.nnodes() < 2
    {
        return vec![];
    }
    vec![Fired::new(format!(
        "--enable-eplb with expert parallelism off (--ep-size 1) across {} nodes: SGLang {}'s expert rebalancer asserts 'num_gpus % num_nodes == 0' once it runs; set --ep-size to the TP size",
        ctx.nnodes(),
        ctx.version
    ))]
}

pub(crate) fn runner_ep(ctx: &Context) -> Vec<Fired> {
    // triton_kernel's layer asserts EP 1 whoever chose it (SGLang does for GPT-OSS on SM120 in
    // 0.5.10-0.5.13.post1); the other runners are checked as the user named them.
    let resolved = ctx.server.backends.moe_runner.as_ref();
    let picked_triton_kernel = resolved.is_some_and(|c| c.value == "triton_kernel");
    let named = ctx.named_moe_runner().filter(|r| r != "auto");
    let (runner, whose) = match named {
        Some(r) => (r, opt::MOE_RUNNER_BACKEND),
        None if picked_triton_kernel => ("triton_kernel".to_owned(), "SGLang's own MoE runner"),
        None => return vec![],
    };
    let tp = ctx.tp();
    let ep = if ctx.moe_a2a().is_some() {
        tp
    } else {
        ctx.ep()
    };
    // The argument check sees the line's EP (triton_kernel's layer, built later, sees TP).
    let checked_ep = if ctx.moe_a2a().is_some() {
        ctx.ep_given()
    } else {
        ep
    };
    // The cutlass check came with 0.5.4.post3.
    let cutlass_checked = at_least(ctx.version, "0.5.4.post3");
    // What SGLang's checks refuse (tests/evidence/EP009.jsonl): triton_kernel with EP only for
    // GPT-OSS, cutlass with EP only under FP8 quantisation (mxfp8 from 0.5.9), and the
    // flashinfer runners with EP other than 1 or TP (cutedsl from 0.5.11).
    // The field also holds the checkpoint's method where SGLang copies it in (DeepSeek-V3 on
    // SM100 from 0.5.5, more families from 0.5.6).
    let q = super::quant::checked_quantization(ctx);
    let fp8_cutlass = q.as_deref() == Some("fp8")
        || (q.as_deref() == Some("mxfp8") && at_least(ctx.version, "0.5.9"));
    let gpt_oss = ctx.model_arch() == Some("GptOssForCausalLM");
    let bad = match runner.as_str() {
        "triton_kernel" if ep > 1 && gpt_oss => {
            format!("supports --ep-size 1 only for GPT-OSS (EP is {ep})")
        }
        "cutlass" if checked_ep > 1 && fp8_cutlass && cutlass_checked => {
            format!("supports --ep-size 1 only with FP8 quantisation (EP is {checked_ep})")
        }
        "flashinfer_cutlass" if checked_ep != 1 && checked_ep != tp => {
            format!("needs EP 1 or EP = TP (EP {checked_ep}, TP {tp})")
        }
        "flashinfer_cutedsl"
            if checked_ep != 1 && checked_ep != tp && at_least(ctx.version, "0.5.11") =>
        {
            format!("needs EP 1 or EP = TP (EP {checked_ep}, TP {tp})")
        }
        _ => return vec![],
    };
    vec![Fired::new(format!("{whose} {runner} {bad}"))]
}

pub(crate) fn a2a_forces_ep(ctx: &Context) -> Vec<Fired> {
    let Some(a) = ctx.moe_a2a() else {
        return vec![];
    };
    // The layout already reads EP as TP here: compare the user's value.
    let given = ctx.ep_given();
    if !ctx.user().given(opt::EP_SIZE) || given == ctx.tp() {
        return vec![];
    }
    vec![Fired::new(format!(
        "--moe-a2a-backend {a} makes SGLang set EP to TP ({}), overriding --ep-size {given}",
        ctx.tp()
    ))]
}

pub(crate) fn deepep_internode_rdma(ctx: &Context) -> Vec<Fired> {
    if !ctx.moe_a2a().is_some_and(|a| a.starts_with("deepep")) || ctx.nnodes() < 2 {
        return vec![];
    }
    if !ctx.host.is_some_and(crate::facts::host::HostFacts::no_rdma) {
        return vec![];
    }
    vec![Fired::new(format!(
        "DeepEP across {} nodes, but this host has no RDMA device in /sys/class/infiniband: internode DeepEP needs NVSHMEM over InfiniBand/RoCE (IBGDA) and fails at NVSHMEM init",
        ctx.nnodes()
    ))]
}

/// EP015: before 0.4.3.post3 the EP MoE layer has per-tensor FP8 scales only, and a block-FP8
/// checkpoint's per-block scales have nowhere to load.
pub(crate) fn ep_moe_block_fp8(ctx: &Context) -> Vec<Fired> {
    const EP_MOE_ARCHS: &[&str] = &[
        "DeepseekV2ForCausalLM",
        "DeepseekV3ForCausalLM",
        "MixtralForCausalLM",
    ];
    let Some(m) = ctx.model.filter(|_| ctx.user().flag(opt::ENABLE_EP_MOE)) else {
        return vec![];
    };
    let arch = m.architecture.as_deref().unwrap_or_default();
    let block_fp8 = m.weight_block_size.is_some() && ctx.quant().as_deref() == Some("fp8");
    if !block_fp8 || !EP_MOE_ARCHS.contains(&arch) {
        return vec![];
    }
    vec![Fired::new(format!(
        "--enable-ep-moe with a block-FP8 checkpoint ({arch}): SGLang {}'s EP MoE layer has no per-block scales, so loading stops with KeyError '…experts.w2_weight_scale_inv'; 0.4.3.post3 added them",
        ctx.version
    ))]
}

/// The DeepEP, Mooncake or NIXL all-to-all, whose dispatch outputs and fused functions the
/// MoE runners below do not take.
fn dispatching_a2a(ctx: &Context) -> Option<String> {
    ctx.moe_a2a()
        .filter(|a| matches!(a.as_str(), "deepep" | "mooncake" | "nixl"))
}

/// An all-to-all for which no release registers a fused function of the fused-only runners:
/// the dispatching ones, and Mega MoE (0.5.12+), whose name the runner looks the pair up by.
fn fused_lookup_a2a(ctx: &Context) -> Option<String> {
    dispatching_a2a(ctx).or_else(|| ctx.moe_a2a().filter(|a| a == "megamoe"))
}

/// The fused-only MoE runner the MoE method builds for this line, and whether it is SGLang's
/// own pick for `auto` (the NVFP4 method's: Marlin on SM80–SM90 from 0.5.13, the TRT-LLM runner
/// on SM100 from 0.5.11; Nemotron-H is sent elsewhere).
fn fused_only_runner(ctx: &Context) -> Option<(&'static str, bool)> {
    let v = ctx.version;
    let quant = ctx.quant().unwrap_or_default();
    let nvfp4 = quant == "modelopt_fp4";
    let given = ctx.user().sval(opt::MOE_RUNNER_BACKEND);
    match given.as_deref().filter(|r| *r != "auto") {
        Some("flashinfer_trtllm") if quant == "fp8" || nvfp4 => Some(("flashinfer_trtllm", false)),
        Some("flashinfer_trtllm_routed") if quant == "fp8" => {
            Some(("flashinfer_trtllm_routed", false))
        }
        Some("marlin") if nvfp4 && at_least(v, "0.5.13") => Some(("marlin", false)),
        Some(_) => None,
        // NVIDIA's DeepSeek-V4 NVFP4 export: SGLang's DeepSeek-V4 arguments pick the runner,
        // with an all-to-all backend too.
        None if dsv4_nvfp4_pick(ctx).is_some() => dsv4_nvfp4_pick(ctx).map(|r| (r, true)),
        None if !nvfp4 || ctx.model_arch() == Some("NemotronHForCausalLM") => None,
        None => {
            let gpus = ctx.used();
            let all = |f: fn((u32, u32)) -> bool| {
                !gpus.is_empty() && gpus.iter().all(|g| g.cc().is_some_and(f))
            };
            if all(|c| c >= (8, 0) && c.0 < 10) && at_least(v, "0.5.13") {
                Some(("marlin", true))
            } else if all(|c| c.0 == 10) && at_least(v, "0.5.11") {
                Some(("flashinfer_trtllm", true))
            } else {
                None
            }
        }
    }
}

/// The runner SGLang picks for NVIDIA's DeepSeek-V4 NVFP4 export when none is named, as the
/// server's resolution holds it (with an all-to-all backend too).
fn dsv4_nvfp4_pick(ctx: &Context) -> Option<&'static str> {
    const ROUTED: &str = "flashinfer_trtllm_routed";
    let picked = (ctx.server.backends.moe_runner.as_ref())
        .is_some_and(|c| c.source == crate::resolve::ChoiceSource::Sglang && c.value == ROUTED);
    (picked && crate::resolve::moe::deepseek_v4_nvfp4(ctx.model)).then_some(ROUTED)
}

/// EP016: the FlashInfer TRT-LLM and Marlin MoE runners run only through a fused function,
/// which no release registers for the DeepEP, Mooncake, NIXL or Mega MoE all-to-all.
pub(crate) fn trtllm_runner_a2a(ctx: &Context) -> Vec<Fired> {
    let Some(a2a) = fused_lookup_a2a(ctx) else {
        return vec![];
    };
    let Some((runner, auto)) = fused_only_runner(ctx) else {
        return vec![];
    };
    let dsv4_nvfp4 = crate::resolve::moe::deepseek_v4_nvfp4(ctx.model);
    let experts = if dsv4_nvfp4 {
        "NVFP4".to_owned()
    } else {
        ctx.quant().unwrap_or_default()
    };
    let how = match auto {
        true if dsv4_nvfp4 => format!(
            "--moe-runner-backend auto (SGLang picks {runner} for DeepSeek-V4's NVFP4 experts)"
        ),
        true => format!(
            "--moe-runner-backend auto (the {experts} MoE method picks {runner} on these GPUs)"
        ),
        false => format!("--moe-runner-backend {runner}"),
    };
    vec![Fired::new(format!(
        "{how} with --moe-a2a-backend {a2a} ({experts} MoE): SGLang {} has no fused function for this runner with the {a2a} all-to-all and the runner has no other path, so building the model raises NotImplementedError ('… requires a fused func for a2a backend {a2a}, but none is registered'); name a runner that takes the all-to-all (flashinfer_cutedsl for NVFP4 on SM100, deep_gemm for FP8), or drop the all-to-all backend",
        ctx.version
    ))]
}

/// EP017: DeepSeek-V4's MXFP4 experts on the FlashInfer MXFP4 runner with the DeepEP, Mooncake
/// or NIXL all-to-all (0.5.12+): the MXFP4 MoE methods read the routing from a field the
/// dispatchers' outputs do not carry (or, on the CUTLASS path, build a runner with no fused
/// function for the all-to-all).
pub(crate) fn dsv4_mxfp4_runner_a2a(ctx: &Context) -> Vec<Fired> {
    let Some(a2a) = dispatching_a2a(ctx) else {
        return vec![];
    };
    let runner = ctx.user().sval(opt::MOE_RUNNER_BACKEND);
    let mxfp4 = ctx.model.and_then(|m| m.deepseek_v4_official()).is_some();
    // SGLang reads the experts as FP8 when the variable says so.
    let fp8_experts = ctx
        .env
        .get("SGLANG_DSV4_FP4_EXPERTS")
        .is_some_and(|v| !env_true(v));
    if runner.as_deref() != Some("flashinfer_mxfp4") || !mxfp4 || fp8_experts {
        return vec![];
    }
    vec![Fired::new(format!(
        "DeepSeek-V4's MXFP4 experts with --moe-runner-backend flashinfer_mxfp4 and --moe-a2a-backend {a2a}: SGLang {}'s MXFP4 MoE methods read the routing as a top-k output the {a2a} dispatch does not carry, and the first forward stops ('… DispatchOutput' object has no attribute 'topk_output'); leave the MoE runner to SGLang, or drop the all-to-all backend",
        ctx.version
    ))]
}

/// EP018: the CuteDSL MoE runner's DeepEP entry takes only low-latency dispatch output. 0.5.17+
/// refuse a named `normal` (and turn `auto` into `low_latency` themselves); 0.5.13–0.5.16 send an
/// NVFP4 MoE's prefill through normal dispatch under `auto` too, and the first prefill stops.
pub(crate) fn deepep_cutedsl_normal(ctx: &Context) -> Vec<Fired> {
    let v = ctx.version;
    let Some(mode) = ctx.deepep_mode() else {
        return vec![];
    };
    if moe_runner(ctx) != "flashinfer_cutedsl" {
        return vec![];
    }
    if at_least(v, "0.5.17") {
        if mode != "normal" {
            return vec![];
        }
        return vec![Fired::new(format!(
            "--deepep-mode normal with --moe-runner-backend flashinfer_cutedsl: SGLang {v} refuses it at start-up ('flashinfer_cutedsl FP4 MoE only supports DeepEP low_latency dispatch'); use --deepep-mode low_latency or leave it auto"
        ))];
    }
    let decode_side = ctx.user().str(opt::DISAGGREGATION_MODE) == Some("decode");
    let nvfp4 = ctx.quant().as_deref() == Some("modelopt_fp4");
    if mode == "low_latency" || !nvfp4 || decode_side && mode == "auto" {
        return vec![];
    }
    let fired = Fired::new(format!(
        "--moe-runner-backend flashinfer_cutedsl with DeepEP's {mode} mode (NVFP4 MoE): SGLang {v} sends prefill batches through DeepEP's normal dispatch, which the CuteDSL runner cannot unpack, and the first prefill (the warm-up) stops ('ValueError: not enough values to unpack (expected 6, got 5)', sglang#29521); use --deepep-mode low_latency"
    ));
    if mode == "normal" {
        return vec![fired];
    }
    vec![fired.with_fix(set_arg(opt::DEEPEP_MODE, "low_latency"))]
}

/// EP019: the CuteDSL MoE runner runs without an all-to-all or with DeepEP's (0.5.11+) or
/// FlashInfer's (0.5.13+, EP001 before); SGLang's argument check refuses any other, and from
/// 0.5.18 DeepEP's too with per-token NVFP4 activations (online NVFP4, or the variable).
pub(crate) fn cutedsl_a2a(ctx: &Context) -> Vec<Fired> {
    let Some(a2a) = ctx.moe_a2a() else {
        return vec![];
    };
    if moe_runner(ctx) != "flashinfer_cutedsl" {
        return vec![];
    }
    let v = ctx.version;
    let per_token = (ctx.env.get(PER_TOKEN_VAR)).is_some_and(env_true)
        || ctx.quant().as_deref() == Some("nvfp4_online");
    let why = match a2a.as_str() {
        "flashinfer" => return vec![],
        "deepep" if per_token && at_least(v, "0.5.18") => {
            "refuses DeepEP's all-to-all with per-token NVFP4 activations (--quantization nvfp4_online or SGLANG_FLASHINFER_NVFP4_PER_TOKEN_ACTIVATION): 'flashinfer_cutedsl per-token NVFP4 activation requires moe_a2a_backend='none' or 'flashinfer''"
        }
        "deepep" => return vec![],
        _ => {
            "asserts this runner takes no all-to-all, DeepEP's or FlashInfer's ('flashinfer_cutedsl supports moe_a2a_backend=…')"
        }
    };
    vec![Fired::new(format!(
        "--moe-runner-backend flashinfer_cutedsl with --moe-a2a-backend {a2a}: SGLang {v}'s argument check {why}, before the server starts; use another all-to-all backend this runner takes, or leave it out"
    ))]
}

/// The variable that opts serialized NVFP4 checkpoints into per-token activation scales.
const PER_TOKEN_VAR: &str = "SGLANG_FLASHINFER_NVFP4_PER_TOKEN_ACTIVATION";

/// EP020: a dispatch algorithm that picks a replica per rank (`static`, `lp`) without an
/// all-to-all backend, where every EP rank runs the MoE over the same tokens (0.5.17+). The
/// megamoe runner and prefill context parallelism bring their own all-to-all: quiet there.
pub(crate) fn ep_dispatch_without_a2a(ctx: &Context) -> Vec<Fired> {
    let u = ctx.user();
    let Some(algo) = u.str(opt::EP_DISPATCH_ALGORITHM) else {
        return vec![];
    };
    let own_a2a = moe_runner(ctx) == "megamoe"
        || u.flag(opt::ENABLE_PREFILL_CP)
        || u.flag(opt::ENABLE_NSA_PREFILL_CONTEXT_PARALLEL);
    let no_a2a = ctx.moe_a2a().is_none_or(|a| a == "none");
    if !matches!(algo, "static" | "lp") || !no_a2a || own_a2a {
        return vec![];
    }
    vec![Fired::new(format!(
        "{} {algo} without an all-to-all backend: every EP rank runs the MoE over the same tokens, so SGLang {} refuses a per-rank replica pick; use dynamic, or an all-to-all backend",
        opt::EP_DISPATCH_ALGORITHM,
        ctx.version
    ))]
}

/// EP021: elastic EP's joining options (0.5.16+): a join mode needs an elastic backend; a
/// scale-up joiner runs as node rank 1 with a join rank offset above 0, which only it may give;
/// a maximum EP size needs an elastic backend and must be positive.
pub(crate) fn elastic_ep_join(ctx: &Context) -> Vec<Fired> {
    let u = ctx.user();
    let backend = u.given(opt::ELASTIC_EP_BACKEND);
    let mode = u.str(opt::ELASTIC_EP_JOIN_MODE);
    let offset = u.int(opt::ELASTIC_EP_JOIN_RANK_OFFSET).unwrap_or(0);
    let max = u.int(opt::MAX_EP_SIZE);
    let scale = mode == Some("scale");
    let node_rank = u.int(opt::NODE_RANK).unwrap_or(0);
    let (join, off, max_opt) = (
        opt::ELASTIC_EP_JOIN_MODE,
        opt::ELASTIC_EP_JOIN_RANK_OFFSET,
        opt::MAX_EP_SIZE,
    );
    let why = match () {
        _ if mode.is_some() && !backend => format!("{join} without {}", opt::ELASTIC_EP_BACKEND),
        _ if scale && node_rank != 1 => {
            format!("{join} scale at --node-rank {node_rank} (a scale-up joiner is node rank 1)")
        }
        _ if scale && offset <= 0 => format!("{join} scale without {off} (the current EP size)"),
        _ if offset != 0 && !scale => format!("{off} {offset} without {join} scale"),
        _ if offset < 0 => format!("{off} {offset} below 0"),
        _ if max.is_some() && !backend => format!("{max_opt} without {}", opt::ELASTIC_EP_BACKEND),
        _ if max.is_some_and(|m| m <= 0) => {
            format!("{max_opt} {} (it must be positive)", max.unwrap_or(0))
        }
        _ => return vec![],
    };
    vec![Fired::new(format!(
        "{why}: SGLang {} refuses the line",
        ctx.version
    ))]
}
