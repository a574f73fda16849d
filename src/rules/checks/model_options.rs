//! Options SGLang takes for one model family only and refuses on any other, whatever their value.

use super::*;
use crate::sglang::opt;
use crate::sglang::release::at_least;

/// The architectures whose attention linears SGLang replicates across context-parallel ranks,
/// the only ones `--enable-cp-decode-attn-tp` runs on (0.5.17–0.5.23).
const CP_DECODE_ATTN_TP: &[&str] = &[
    "DeepseekV4ForCausalLM",
    "DeepseekV4ForCausalLMNextN",
    "DeepseekV4ForCausalLMDSpark",
    "GlmMoeDsaForCausalLM",
    "GlmMoeDsaForCausalLMNextN",
];

/// MODEL008: an option of one model family on a model outside it, one finding each. Judged only
/// where the model's config is read.
pub(crate) fn model_options(ctx: &Context) -> Vec<Fired> {
    let (Some(model), Some(arch)) = (ctx.model, ctx.model_arch()) else {
        return vec![];
    };
    let u = ctx.user();
    let v = ctx.version;
    let checks = [
        (
            u.given(opt::SHARED_EXPERTS_TP_SIZE)
                && at_least(v, "0.5.21")
                && arch != "KimiK3ForConditionalGeneration",
            format!("{} on {arch}: it is Kimi-K3's", opt::SHARED_EXPERTS_TP_SIZE),
        ),
        // DeepSeek sparse attention needs the indexer's top-k in the config, whatever the
        // architecture's name (each release's own list of names moves).
        (
            u.flag(opt::ENABLE_DSA_CACHE_LAYER_SPLIT)
                && at_least(v, "0.5.16")
                && model.index_topk.is_none(),
            format!(
                "{} on {arch}, which has no DeepSeek sparse attention (no index_topk in its config)",
                opt::ENABLE_DSA_CACHE_LAYER_SPLIT
            ),
        ),
        (
            u.flag(opt::ENABLE_CP_DECODE_ATTN_TP)
                && at_least(v, "0.5.17")
                && !CP_DECODE_ATTN_TP.contains(&arch),
            format!(
                "{} on {arch}: it runs on DeepSeek-V4 and GLM DSA models only",
                opt::ENABLE_CP_DECODE_ATTN_TP
            ),
        ),
    ];
    refused_at_start(ctx, holding(checks).collect())
}
