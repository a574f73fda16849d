//! The expert-pack load format (`--load-format expert_pack`, 0.5.19+): MoE experts streamed from
//! one packed file on a single GPU.

use serde_json::Value;

use super::*;
use crate::sglang::opt;

/// The environment variable SGLang reads the pack's path from when the loader config has none.
const PACK_PATH_ENV: &str = "SGLANG_EXPERT_PACK_PATH";

/// SRV022: what SGLang refuses about an expert-pack server while it resolves the arguments. It
/// collects every problem before it raises; each is one line here.
pub(crate) fn expert_pack(ctx: &Context) -> Vec<Fired> {
    let u = ctx.user();
    if u.str(opt::LOAD_FORMAT) != Some("expert_pack") {
        return vec![];
    }
    let mut why: Vec<String> = layout_refused(ctx);
    why.extend(holding([
        (
            u.flag(opt::ENFORCE_SHARED_EXPERTS_FUSION),
            opt::ENFORCE_SHARED_EXPERTS_FUSION.to_owned(),
        ),
        (
            u.flag(opt::ENABLE_WATERFILL),
            opt::ENABLE_WATERFILL.to_owned(),
        ),
    ]));
    why.extend(
        [
            opt::CUDA_GRAPH_BACKEND_DECODE,
            opt::CUDA_GRAPH_BACKEND_PREFILL,
        ]
        .into_iter()
        .filter_map(|o| {
            u.str(o)
                .filter(|b| *b != "disabled")
                .map(|b| format!("{o} {b}"))
        }),
    );
    why.extend(pack_path_missing(ctx));
    why.extend(model_type_refused(ctx));
    let why = why
        .into_iter()
        .map(|w| format!("{} expert_pack with {w}", opt::LOAD_FORMAT))
        .collect();
    refused_at_start(ctx, why)
}

/// The pack runs on one GPU: TP, DP, attention DP and EP all 1.
fn layout_refused(ctx: &Context) -> Vec<String> {
    let sizes = [
        ("TP", ctx.tp()),
        // DP attention's size is counted once (through 0.5.21 SGLang reads it as the DP size).
        ("DP", ctx.dp_replicas()),
        ("attention DP", ctx.attn_dp()),
        ("EP", ctx.ep()),
    ];
    (sizes.into_iter())
        .filter(|(_, n)| *n != 1)
        .map(|(what, n)| format!("{what} {n} (it must be 1)"))
        .collect()
}

/// The pack's path: `pack_path` in `--model-loader-extra-config`, or the environment. Judged where
/// the model's config was read from a folder (a raw GGUF file prepares its own).
fn pack_path_missing(ctx: &Context) -> Option<String> {
    let text = ctx
        .user()
        .str(opt::MODEL_LOADER_EXTRA_CONFIG)
        .unwrap_or("{}");
    let config: Value = serde_json::from_str(text).ok()?;
    let Value::Object(map) = config else {
        return Some(format!(
            "a {} that is not a JSON object",
            opt::MODEL_LOADER_EXTRA_CONFIG
        ));
    };
    let given = map
        .get("pack_path")
        .is_some_and(|p| !p.is_null() && p != "")
        || ctx.env.get(PACK_PATH_ENV).is_some_and(|p| !p.is_empty());
    (ctx.model.is_some() && !given).then(|| {
        format!(
            "no pack_path in {} and no {PACK_PATH_ENV}",
            opt::MODEL_LOADER_EXTRA_CONFIG
        )
    })
}

/// The model types the pack loader takes: DeepSeek-V4 and Kimi-K3's text model (`kimi_linear`).
/// Judged where the config is read.
fn model_type_refused(ctx: &Context) -> Option<String> {
    let t = ctx.model?.registry.model_type.as_deref()?;
    (!matches!(t, "deepseek_v4" | "kimi_linear"))
        .then(|| format!("a model of type {t} (it loads deepseek_v4 and kimi_linear)"))
}
