//! The checks, one function per rule, grouped by family. Each looks at the state after any
//! fix it proposes would be applied, so a fixed command line no longer fires (the planning
//! pipeline's fixpoint loop converges).

pub(crate) mod a2a_dispatch;
pub(crate) mod a2a_models;
pub(crate) mod a2a_options;
pub(crate) mod ar;
pub(crate) mod arch;
pub(crate) mod attn;
pub(crate) mod attn_fp8kv;
pub(crate) mod attn_gemma4;
pub(crate) mod attn_kind;
pub(crate) mod attn_mis;
pub(crate) mod attn_pp;
pub(crate) mod auto;
pub(crate) mod cache;
pub(crate) mod cache_storage;
pub(crate) mod cg;
pub(crate) mod comm;
pub(crate) mod deepep_moe;
pub(crate) mod deepep_v2_budget;
pub(crate) mod dpa;
pub(crate) mod elastic_ep;
pub(crate) mod env;
pub(crate) mod ep;
pub(crate) mod expert_pack;
pub(crate) mod expert_remap;
pub(crate) mod flag;
pub(crate) mod kernel_plugins;
pub(crate) mod kv4;
pub(crate) mod kv_shard;
pub(crate) mod linker;
pub(crate) mod load_publish;
pub(crate) mod lora_moe;
pub(crate) mod mamba_cache;
pub(crate) mod mamba_track;
pub(crate) mod matrix;
pub(crate) mod mega_moe_budget;
pub(crate) mod model;
pub(crate) mod model_options;
pub(crate) mod model_type;
pub(crate) mod moe_cutlass;
pub(crate) mod moe_nvfp4;
pub(crate) mod nemotron_latent;
pub(crate) mod offload;
pub(crate) mod par;
pub(crate) mod par_layout;
pub(crate) mod par_pd;
pub(crate) mod pkg;
pub(crate) mod prefill_only;
pub(crate) mod quant;
pub(crate) mod quant_block;
pub(crate) mod quant_compat;
pub(crate) mod quant_ct;
pub(crate) mod quant_fusion;
pub(crate) mod quant_group;
pub(crate) mod quant_moe_int;
pub(crate) mod quant_plain;
pub(crate) mod quant_vllm;
pub(crate) mod replayssm;
pub(crate) mod sampling_prefs;
pub(crate) mod serve_cli;
pub(crate) mod session_cache;
pub(crate) mod spec;
pub(crate) mod spec_adaptive;
pub(crate) mod spec_auto;
pub(crate) mod spec_capture;
pub(crate) mod spec_draft_backend;
pub(crate) mod spec_loading;
pub(crate) mod spec_target;
pub(crate) mod spec_verify;
pub(crate) mod srv;
pub(crate) mod srv_options;
pub(crate) mod top;
pub(crate) mod unified;
pub(crate) mod xllm;

pub(crate) use super::view::*;
pub(crate) use super::{Context, Fired};

/// The values of the conditions that hold, in order: the argument handlers list what they
/// refuse as (condition, what) pairs.
pub(crate) fn holding<T>(
    conditions: impl IntoIterator<Item = (bool, T)>,
) -> impl Iterator<Item = T> {
    (conditions.into_iter()).filter_map(|(on, what)| on.then_some(what))
}

/// One finding per reason, each saying the release refuses the line before the server starts
/// (what SGLang's argument handling raises).
pub(crate) fn refused_at_start(ctx: &Context, reasons: Vec<String>) -> Vec<Fired> {
    (reasons.into_iter())
        .map(|why| {
            Fired::new(format!(
                "{why}; SGLang {} refuses it before the server starts",
                ctx.version
            ))
        })
        .collect()
}
