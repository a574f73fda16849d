//! SGLang's native xLLM / K2 Horizon model (0.5.20+): what its model module refuses when it is
//! built, after the weights are found and before any layer exists.

use super::*;
use crate::facts::model::xllm::Xllm;
use crate::sglang::opt;

/// The classes of SGLang's native xLLM module; K2 Horizon's first settles its config.
const XLLM: &str = "XllmForCausalLM";
const K2_HORIZON: &str = "K2HorizonForCausalLM";

/// One refusal: what the line does, SGLang's words for it, and what serves instead.
struct Refusal {
    what: String,
    says: &'static str,
    instead: String,
}

/// MODEL010: what the native xLLM / K2 Horizon model refuses as it is built: a K2 Horizon MoVA
/// config without the router's source sharding, a model dtype other than bfloat16, weights
/// quantised other than by compressed-tensors, two-batch overlap, and expert remapping.
pub(crate) fn native_refusals(ctx: &Context) -> Vec<Fired> {
    let Some((arch, x)) = native(ctx) else {
        return vec![];
    };
    let refusals = [
        router_partitions(ctx, arch, x),
        dtype(ctx),
        quantisation(ctx),
        two_batch_overlap(ctx),
        expert_remap(ctx),
    ];
    let model = if arch == K2_HORIZON {
        "K2 Horizon"
    } else {
        "xLLM"
    };
    (refusals.into_iter().flatten())
        .map(|r| {
            Fired::new(format!(
                "{}: SGLang {}'s native {model} model refuses it when it is built, after the weights are found ('{}'); {}",
                r.what, ctx.version, r.says, r.instead
            ))
        })
        .collect()
}

/// The class SGLang builds and the family's fields, for a native xLLM-family checkpoint.
fn native<'a>(ctx: &Context<'a>) -> Option<(&'a str, &'a Xllm)> {
    let m = ctx.model?;
    let arch = (m.architecture.as_deref()).filter(|a| [XLLM, K2_HORIZON].contains(a))?;
    Some((arch, m.xllm.as_ref()?))
}

/// K2 Horizon's MoVA needs the router's source sharding named (1 or 2, dividing the hidden size).
fn router_partitions(ctx: &Context, arch: &str, x: &Xllm) -> Option<Refusal> {
    if arch != K2_HORIZON || x.mova_experts == 0 {
        return None;
    }
    let key = "xllm_source_router_gemm_partitions";
    let instead = format!(
        "once the checkpoint's training layout is confirmed, pass {} '{{\"{key}\": 2}}' (1 only for a single-partition source checkpoint)",
        opt::JSON_MODEL_OVERRIDE_ARGS
    );
    let Some(given) = x.router_partitions.as_deref() else {
        return Some(Refusal {
            what: format!(
                "K2 Horizon MoVA ({} value experts) without {key} in config.json or {}, the router's source sharding, which SGLang will not infer",
                x.mova_experts,
                opt::JSON_MODEL_OVERRIDE_ARGS
            ),
            says: "K2Horizon MoVA requires explicit source router GEMM provenance",
            instead,
        });
    };
    let hidden = ctx.model.and_then(|m| m.hidden_size).unwrap_or(0);
    let fits = match given {
        "1" => true,
        "2" => hidden.is_multiple_of(2),
        _ => false,
    };
    (!fits).then(|| Refusal {
        what: format!("{key}={given}, where SGLang takes the integer 1 or 2 dividing the hidden size ({hidden})"),
        says: "when present it must be the integer 1 or 2",
        instead,
    })
}

/// The model must run in bfloat16; `--dtype auto` on a float32 config runs it in float16.
fn dtype(ctx: &Context) -> Option<Refusal> {
    let (dtype, named) = super::quant_plain::model_dtype(ctx)?;
    (dtype != "bfloat16").then(|| {
        let from = if named {
            opt::DTYPE.to_owned()
        } else {
            format!("{} auto on the config's dtype", opt::DTYPE)
        };
        Refusal {
            what: format!(
                "the model would run in {dtype} ({from}), where the native path takes only bfloat16"
            ),
            says: "requires --dtype bfloat16",
            instead: format!("add {} bfloat16", opt::DTYPE),
        }
    })
}

/// Quantised weights must be compressed-tensors.
fn quantisation(ctx: &Context) -> Option<Refusal> {
    let method = ctx.quant()?;
    (method != "compressed-tensors").then(|| Refusal {
        what: format!("{method} weights, where the native path takes only compressed-tensors ones"),
        says: "supports only compressed-tensors quantized model weights",
        instead: "serve the BF16 checkpoint or a compressed-tensors export".into(),
    })
}

fn two_batch_overlap(ctx: &Context) -> Option<Refusal> {
    (ctx.user().flag(opt::ENABLE_TWO_BATCH_OVERLAP)).then(|| Refusal {
        what: format!(
            "{}, which the native path does not support yet",
            opt::ENABLE_TWO_BATCH_OVERLAP
        ),
        says: "does not yet support --enable-two-batch-overlap",
        instead: format!("drop {}", opt::ENABLE_TWO_BATCH_OVERLAP),
    })
}

/// EPLB, redundant experts or a non-trivial initial placement: all need expert remapping.
fn expert_remap(ctx: &Context) -> Option<Refusal> {
    let u = ctx.user();
    let remap = u.flag(opt::ENABLE_EPLB)
        || u.int(opt::EP_NUM_REDUNDANT_EXPERTS).is_some_and(|n| n > 0)
        || u.str(opt::INIT_EXPERT_LOCATION)
            .is_some_and(|l| l != "trivial");
    remap.then(|| Refusal {
        what: format!(
            "{}, {} or a non-trivial {}, which need expert remapping the native path does not do yet",
            opt::ENABLE_EPLB,
            opt::EP_NUM_REDUNDANT_EXPERTS,
            opt::INIT_EXPERT_LOCATION
        ),
        says: "does not yet support EPLB, non-trivial initial expert placement, or redundant experts",
        instead: "leave experts where they load".into(),
    })
}
