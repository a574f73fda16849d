//! Serving options SGLang's argument validation rejects (0.5.x `check_server_args`).

use super::*;
use crate::sglang::opt;
use crate::sglang::release::at_least;

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

/// SRV007: the LoRA settings SGLang's argument check asserts against before the server starts.
pub(crate) fn lora_settings(ctx: &Context) -> Vec<Fired> {
    let u = ctx.user();
    let Some(per_batch) = u.int(opt::MAX_LORAS_PER_BATCH) else {
        return vec![];
    };
    let mut out = Vec::new();
    if per_batch <= 0 {
        out.push(format!(
            "--max-loras-per-batch {per_batch}: it must be positive"
        ));
    }
    // Until 0.5.0rc0 LoRA runs only without the radix cache, and until 0.4.6.post1 without
    // CUDA graphs too.
    let v = ctx.version;
    // The assertion reads the values in effect: a PD decode server's radix cache is off already.
    let sw = &ctx.server.switches;
    if u.given(opt::LORA_PATHS) {
        if !at_least(v, "0.5.0rc1") && sw.radix_cache.on {
            out.push("--lora-paths with the radix cache on: this release runs LoRA only with --disable-radix-cache".to_string());
        }
        if !at_least(v, "0.4.6.post2") && sw.cuda_graph.on {
            out.push("--lora-paths with CUDA graphs on: this release runs LoRA only with --disable-cuda-graph".to_string());
        }
    }
    let paths = match u.get_or_default(opt::LORA_PATHS) {
        Some(serde_json::Value::Array(a)) => a.len(),
        Some(serde_json::Value::Object(m)) => m.len(),
        _ => 0,
    };
    // `--lora-paths` turns LoRA on unless `--enable-lora` is explicitly off; the checks below
    // came with `--enable-lora`.
    if !u.knows(opt::ENABLE_LORA) {
        return asserted(ctx, out);
    }
    let explicit = u
        .get_or_default(opt::ENABLE_LORA)
        .and_then(serde_json::Value::as_bool);
    if !(explicit == Some(true) || (paths > 0 && explicit.is_none())) {
        return asserted(ctx, out);
    }
    let modules: Vec<&str> = match u.get_or_default(opt::LORA_TARGET_MODULES) {
        Some(serde_json::Value::Array(a)) => a.iter().filter_map(|m| m.as_str()).collect(),
        _ => vec![],
    };
    if modules.contains(&"all") && modules.len() > 1 {
        out.push(format!(
            "--lora-target-modules {}: 'all' must be the only module",
            modules.join(" ")
        ));
    }
    let sized = u.int(opt::MAX_LORA_RANK).is_some_and(|r| r != 0) && !modules.is_empty();
    if paths == 0 && !sized {
        out.push(
            "LoRA without --lora-paths: SGLang then needs both --max-lora-rank and --lora-target-modules to size the adapters"
                .to_string(),
        );
    }
    let loaded = u
        .given(opt::MAX_LOADED_LORAS)
        .then(|| u.int(opt::MAX_LOADED_LORAS))
        .flatten();
    out.extend(lora_loading(ctx, per_batch, loaded));
    if let Some(loaded) = loaded {
        if loaded < per_batch {
            out.push(format!(
                "--max-loaded-loras {loaded} below --max-loras-per-batch {per_batch}{}",
                if u.given(opt::MAX_LORAS_PER_BATCH) {
                    ""
                } else {
                    " (the default)"
                }
            ));
        }
        if paths as i64 > loaded {
            out.push(format!(
                "{paths} --lora-paths with --max-loaded-loras {loaded}: no more adapters than that may be loaded"
            ));
        }
    }
    asserted(ctx, out)
}

/// Overlap loading pins the adapters in CPU memory: at most twice a batch's (0.5.8+). 0.5.11's
/// virtual experts run on the triton LoRA backend only.
fn lora_loading(ctx: &Context, per_batch: i64, loaded: Option<i64>) -> Vec<String> {
    let u = ctx.user();
    let mut out = Vec::new();
    let limit = per_batch * 2;
    if u.flag(opt::ENABLE_LORA_OVERLAP_LOADING) && loaded.is_none_or(|l| l > limit) {
        let given = loaded.map_or("no --max-loaded-loras".to_string(), |l| {
            format!("--max-loaded-loras {l}")
        });
        out.push(format!(
            "--enable-lora-overlap-loading with {given}: it needs --max-loaded-loras of at most twice --max-loras-per-batch ({limit})"
        ));
    }
    let backend = u.str(opt::LORA_BACKEND).unwrap_or_default();
    if ctx.version == "0.5.11" && u.flag(opt::LORA_USE_VIRTUAL_EXPERTS) && backend != "triton" {
        out.push(format!(
            "--lora-use-virtual-experts with the {backend} LoRA backend: this release needs --lora-backend triton for it"
        ));
    }
    out
}

/// Each problem as a finding of the argument check that refuses it.
fn asserted(ctx: &Context, problems: Vec<String>) -> Vec<Fired> {
    problems
        .into_iter()
        .map(|p| {
            Fired::new(format!(
                "{p}; SGLang {} asserts this in its argument check and stops before the server starts",
                ctx.version
            ))
        })
        .collect()
}

/// SRV008: TLS options SGLang (0.5.10rc0+) refuses without their partner.
pub(crate) fn tls_pairs(ctx: &Context) -> Vec<Fired> {
    let u = ctx.user();
    if !u.knows(opt::SSL_KEYFILE) {
        return vec![];
    }
    let set = |o: &str| u.str(o).is_some_and(|v| !v.is_empty());
    let (key, cert) = (set(opt::SSL_KEYFILE), set(opt::SSL_CERTFILE));
    let mut out = Vec::new();
    match (key, cert) {
        (true, false) => out.push(format!(
            "{} without {}",
            opt::SSL_KEYFILE,
            opt::SSL_CERTFILE
        )),
        (false, true) => out.push(format!(
            "{} without {}",
            opt::SSL_CERTFILE,
            opt::SSL_KEYFILE
        )),
        (false, false) => {
            for o in [opt::SSL_CA_CERTS, opt::SSL_KEYFILE_PASSWORD] {
                if set(o) {
                    out.push(format!(
                        "{o} without {} and {}",
                        opt::SSL_CERTFILE,
                        opt::SSL_KEYFILE
                    ));
                }
            }
        }
        (true, true) => {}
    }
    if u.flag(opt::ENABLE_SSL_REFRESH) && !(key && cert) {
        out.push(format!(
            "{} without both {} and {}",
            opt::ENABLE_SSL_REFRESH,
            opt::SSL_CERTFILE,
            opt::SSL_KEYFILE
        ));
    }
    out.into_iter()
        .map(|p| {
            Fired::new(format!(
                "{p}: SGLang {} refuses the TLS options before the server starts; give the certificate and its key together (or none of the TLS options)",
                ctx.version
            ))
        })
        .collect()
}

/// SRV009: 0.5.11 to 0.5.15.post1 derive a gRPC port for every server, `SGLANG_GRPC_PORT` or
/// else `--port` + 10000, and refuse one outside 1–65535.
pub(crate) fn grpc_port_range(ctx: &Context) -> Vec<Fired> {
    use crate::sglang::release::at_least;
    if !at_least(ctx.version, "0.5.11") || at_least(ctx.version, "0.5.16") {
        return vec![];
    }
    let (grpc, from) = match ctx.env.get("SGLANG_GRPC_PORT") {
        Some(v) => match v.trim().parse::<i64>() {
            Ok(p) => (p, format!("SGLANG_GRPC_PORT={p}")),
            Err(_) => return vec![],
        },
        None => match ctx.user().int(opt::PORT) {
            Some(p) => (
                p.saturating_add(10000),
                format!(
                    "{} {p} (SGLang derives its gRPC port as --port + 10000)",
                    opt::PORT
                ),
            ),
            None => return vec![],
        },
    };
    if (1..=65535).contains(&grpc) {
        return vec![];
    }
    vec![Fired::new(format!(
        "{from}: the gRPC port {grpc} is outside 1–65535, and SGLang {} refuses it before the server starts even with gRPC off; use a --port up to 55535, or set SGLANG_GRPC_PORT to a free port in range",
        ctx.version
    ))]
}

/// SRV010: the encoder/language split (EPD) roles SGLang refuses: one server both encoder-only
/// and language-only, an encoder-only server in PD disaggregation, the multimodal prefix cache off
/// an encoder-only server, and (0.5.7–0.5.12.post1) a language-only server with no encoder URLs.
pub(crate) fn epd_roles(ctx: &Context) -> Vec<Fired> {
    let u = ctx.user();
    let v = ctx.version;
    let (encoder, language) = (u.flag(opt::ENCODER_ONLY), u.flag(opt::LANGUAGE_ONLY));
    let pd = u
        .sval(opt::DISAGGREGATION_MODE)
        .filter(|m| m == "prefill" || m == "decode");
    let mut out = vec![];
    if encoder && language {
        out.push(Fired::new(format!(
            "{} with {}: SGLang {v} refuses a server that is both",
            opt::ENCODER_ONLY,
            opt::LANGUAGE_ONLY
        )));
    }
    if let Some(m) = pd.filter(|_| encoder) {
        out.push(Fired::new(format!(
            "{} with {} {m}: SGLang {v} refuses an encoder-only server in PD disaggregation",
            opt::ENCODER_ONLY,
            opt::DISAGGREGATION_MODE
        )));
    }
    if u.flag(opt::ENABLE_PREFIX_MM_CACHE) && !encoder {
        out.push(Fired::new(format!(
            "{} without {}: SGLang {v} keeps the multimodal prefix cache on an encoder-only server only, and refuses the line",
            opt::ENABLE_PREFIX_MM_CACHE,
            opt::ENCODER_ONLY
        )));
    }
    let urls = u.given(opt::ENCODER_URLS);
    if language && !urls && !at_least(v, "0.5.13") {
        out.push(Fired::new(format!(
            "{} without {}: SGLang {v} needs at least one encoder URL (from 0.5.13 encoders may register themselves)",
            opt::LANGUAGE_ONLY,
            opt::ENCODER_URLS
        )));
    }
    out
}

/// SRV011: 0.5.5.post1 to 0.5.15 send a vision model's PD warmup, a `/generate` payload, to the
/// chat endpoint, which refuses it; the server is then marked unhealthy.
pub(crate) fn pd_vision_warmup(ctx: &Context) -> Vec<Fired> {
    let u = ctx.user();
    let pd = u
        .str(opt::DISAGGREGATION_MODE)
        .filter(|m| matches!(*m, "prefill" | "decode"));
    let Some(mode) = pd else {
        return vec![];
    };
    if !ctx.multimodal_served()
        || u.flag(opt::SKIP_TOKENIZER_INIT)
        || u.flag(opt::SKIP_SERVER_WARMUP)
    {
        return vec![];
    }
    vec![Fired::new(format!(
        "{} on a PD {mode} server: SGLang {} sends its warmup to the chat endpoint with a /generate payload, the warmup fails ('disaggregation mode warm Up Failed') and the server is marked unhealthy; 0.5.16 fixed it",
        ctx.model_arch().unwrap_or("this vision-language model"),
        ctx.version
    ))
    .with_fix(add_flag(opt::SKIP_SERVER_WARMUP))]
}

/// SRV012: an encoder/language split server for a model whose architecture the release's split
/// does not take (0.5.10rc0+, the list in `data/encoder-split.json`). A name the release's
/// configuration code may rewrite before the check is left alone.
pub(crate) fn epd_architecture(ctx: &Context) -> Vec<Fired> {
    let u = ctx.user();
    let role = [opt::ENCODER_ONLY, opt::LANGUAGE_ONLY]
        .into_iter()
        .find(|o| u.flag(o));
    let (Some(role), Some(arch)) = (role, ctx.model_arch()) else {
        return vec![];
    };
    let rewritten = crate::sglang::release::position(ctx.version).is_some_and(|at| {
        crate::sglang::architectures::lookup(arch, at, false)
            == crate::sglang::architectures::Lookup::Rewritten
    });
    if rewritten || crate::sglang::encoder_split::takes(arch, ctx.version) != Some(false) {
        return vec![];
    }
    vec![Fired::new(format!(
        "{role} for {arch}: SGLang {} splits the vision or audio encoder off only for the architectures it lists, and refuses this one",
        ctx.version
    ))]
}
