//! Serving options SGLang's argument validation rejects (0.5.x `check_server_args`).

use super::*;
use crate::sglang::opt;

/// Object-store URIs SGLang exempts from the colon check (`is_runai_obj_uri`, runai_utils.py).
const OBJ_SCHEMES: &[&str] = &["s3://", "gs://", "az://"];

pub(crate) fn served_model_name_colon(ctx: &Context) -> Vec<Fired> {
    // Unset, SGLang defaults the served name to --model-path (_handle_missing_default_values)
    // before validating it.
    let (name, from) = match ctx.user().sval(opt::SERVED_MODEL_NAME) {
        Some(n) => (n, opt::SERVED_MODEL_NAME),
        None => match ctx.user().sval(opt::MODEL_PATH) {
            Some(p) => (p, opt::MODEL_PATH),
            None => return vec![],
        },
    };
    let lower = name.to_ascii_lowercase();
    if !name.contains(':') || OBJ_SCHEMES.iter().any(|s| lower.starts_with(s)) {
        return vec![];
    }
    let msg = if from == opt::SERVED_MODEL_NAME {
        format!(
            "--served-model-name {name:?} contains ':', which SGLang reserves for the model:adapter LoRA syntax and rejects"
        )
    } else {
        format!(
            "--model-path {name:?} contains ':' and no --served-model-name is given: SGLang serves the model under its path and rejects the ':' (reserved for model:adapter LoRA syntax); add --served-model-name without one"
        )
    };
    vec![Fired::new(msg)]
}

pub(crate) fn priority_policy(ctx: &Context) -> Vec<Fired> {
    if !ctx.user().flag(opt::ENABLE_PRIORITY_SCHEDULING) {
        return vec![];
    }
    let policy = ctx
        .user()
        .sval(opt::SCHEDULE_POLICY)
        .unwrap_or_else(|| "fcfs".into());
    if policy == "fcfs" || policy == "lof" {
        return vec![];
    }
    vec![Fired::new(format!(
        "--enable-priority-scheduling with --schedule-policy {policy}: priority scheduling works with fcfs or lof only"
    ))]
}

pub(crate) fn retraction_priority(ctx: &Context) -> Vec<Fired> {
    if ctx.user().sval(opt::RETRACTION_POLICY).as_deref() != Some("priority")
        || ctx.user().flag(opt::ENABLE_PRIORITY_SCHEDULING)
    {
        return vec![];
    }
    vec![Fired::new(
        "--retraction-policy priority without --enable-priority-scheduling: SGLang rejects it"
            .to_string(),
    )]
}

pub(crate) fn grpc_port(ctx: &Context) -> Vec<Fired> {
    let (Some(g), Some(p)) = (ctx.user().int(opt::GRPC_PORT), ctx.user().int(opt::PORT)) else {
        return vec![];
    };
    if g != p || ctx.user().flag(opt::GRPC_MODE) || ctx.user().flag(opt::SMG_GRPC_MODE) {
        return vec![];
    }
    vec![Fired::new(format!(
        "--grpc-port {g} is the same as --port {p}: the two servers cannot bind one port"
    ))]
}

pub(crate) fn tokenizer_batching(ctx: &Context) -> Vec<Fired> {
    if !(ctx.user().flag(opt::ENABLE_TOKENIZER_BATCH_ENCODE)
        && ctx.user().flag(opt::ENABLE_DYNAMIC_BATCH_TOKENIZER))
    {
        return vec![];
    }
    vec![Fired::new(
        "--enable-tokenizer-batch-encode with --enable-dynamic-batch-tokenizer: SGLang accepts one tokenizer batching approach".to_string(),
    )]
}

pub(crate) fn quant_communications(ctx: &Context) -> Vec<Fired> {
    if !ctx.user().flag(opt::ENABLE_QUANT_COMMUNICATIONS) {
        return vec![];
    }
    let nvidia = ctx.used();
    let why = if ctx.tp() == 1 {
        "it is only used with TP > 1".to_string()
    } else if !nvidia.is_empty() {
        format!(
            "it is implemented for Ascend NPUs only, and this server runs on {}",
            Context::describe(&nvidia)
        )
    } else {
        return vec![];
    };
    vec![
        Fired::new(format!(
            "--enable-quant-communications: {why}; SGLang rejects it"
        ))
        .with_fix(remove(opt::ENABLE_QUANT_COMMUNICATIONS)),
    ]
}
