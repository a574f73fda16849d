//! Serving options SGLang's argument validation refuses on their own values: worker counts, the
//! native gRPC server and its sidecar, metrics, watermarking, value ranges, JSON-valued options,
//! and serving features a layout cannot carry. Each part starts at the release whose own code
//! first refuses it (the goldens in tests/evidence/ pin the boundaries).

use serde_json::Value;

use super::*;
use crate::sglang::opt;
use crate::sglang::pytypes::py_float;
use crate::sglang::release::at_least;

/// An integer option given (or defaulted) below `min`, from the release that checks it.
fn below(ctx: &Context, name: &str, min: i64, since: &str) -> Option<String> {
    let n = ctx.user().int(name)?;
    (at_least(ctx.version, since) && n < min)
        .then(|| format!("{name} {n}: it must be at least {min}"))
}

/// SRV013: tokenizer, detokenizer and multimodal worker counts, and the HTTP workers' shared port.
pub(crate) fn worker_counts(ctx: &Context) -> Vec<Fired> {
    let u = ctx.user();
    let mut out: Vec<String> = [
        below(ctx, opt::TOKENIZER_WORKER_NUM, 1, "0.5.2rc0"),
        detokenizer_workers(ctx),
        below(ctx, opt::MM_PROCESSOR_WORKER_NUM, 0, "0.5.17"),
        below(ctx, opt::MM_IO_WORKER_NUM, 0, "0.5.17"),
    ]
    .into_iter()
    .flatten()
    .collect();
    if u.flag(opt::ENABLE_HTTP_WORKER_REUSEPORT) && at_least(ctx.version, "0.5.23") {
        let workers = u.int(opt::TOKENIZER_WORKER_NUM).unwrap_or(1);
        if workers == 1 || u.flag(opt::ENABLE_HTTP2) {
            out.push(format!(
                "{}: it needs {} above 1 and does not work with {}",
                opt::ENABLE_HTTP_WORKER_REUSEPORT,
                opt::TOKENIZER_WORKER_NUM,
                opt::ENABLE_HTTP2
            ));
        }
    }
    refused_at_start(ctx, out)
}

/// `--skip-tokenizer-init` sets the detokenizer workers to 1 before the check.
fn detokenizer_workers(ctx: &Context) -> Option<String> {
    let reset = ctx.user().flag(opt::SKIP_TOKENIZER_INIT);
    below(ctx, opt::DETOKENIZER_WORKER_NUM, 1, "0.5.12").filter(|_| !reset)
}

/// The gRPC port in effect: `--grpc-port`, else `SGLANG_GRPC_PORT` (0.5.16+).
fn grpc_port(ctx: &Context) -> Option<i64> {
    ctx.user().int(opt::GRPC_PORT).or_else(|| {
        let v = ctx.env.get("SGLANG_GRPC_PORT")?;
        v.trim().parse().ok()
    })
}

/// SRV014: the native gRPC server (a `--grpc-port` outside the legacy gRPC modes) and its sidecar,
/// 0.5.16+; the response timeout, 0.5.21+.
pub(crate) fn grpc_server(ctx: &Context) -> Vec<Fired> {
    if !at_least(ctx.version, "0.5.16") {
        return vec![];
    }
    let u = ctx.user();
    let legacy = u.flag(opt::GRPC_MODE) || u.flag(opt::SMG_GRPC_MODE);
    let port = grpc_port(ctx);
    let mut out = sidecar(ctx, legacy, port.is_some());
    // The legacy gRPC modes derive a missing port as --port + 10000.
    let derived = || legacy.then(|| u.int(opt::PORT).map(|p| p.saturating_add(10000)))?;
    if let Some(p) = port.or_else(derived).filter(|p| !(1..=65535).contains(p)) {
        out.push(format!("gRPC port {p}: it must be between 1 and 65535"));
    }
    if port.is_some() && !legacy {
        out.extend(native_grpc_conflicts(ctx));
    }
    let timeout = u.int(opt::GRPC_RESPONSE_TIMEOUT_SECS);
    if let Some(t) = timeout.filter(|t| *t <= 0 && at_least(ctx.version, "0.5.21")) {
        out.push(format!(
            "{} {t}: it must be positive",
            opt::GRPC_RESPONSE_TIMEOUT_SECS
        ));
    }
    refused_at_start(ctx, out)
}

fn sidecar(ctx: &Context, legacy: bool, port: bool) -> Vec<String> {
    let u = ctx.user();
    let side = u.str(opt::SIDECAR);
    let mut out = vec![];
    if u.given(opt::SIDECAR_ARGS) && side.is_none() {
        out.push(format!(
            "{} without {}: they are the sidecar's arguments",
            opt::SIDECAR_ARGS,
            opt::SIDECAR
        ));
    }
    let Some(side) = side else { return out };
    if side.trim().is_empty() {
        out.push(format!("{} is empty", opt::SIDECAR));
    } else if legacy {
        out.push(format!(
            "{} with {}/{}: the sidecar needs SGLang's native gRPC server",
            opt::SIDECAR,
            opt::GRPC_MODE,
            opt::SMG_GRPC_MODE
        ));
    } else if !port {
        out.push(format!(
            "{} without {} (or SGLANG_GRPC_PORT)",
            opt::SIDECAR,
            opt::GRPC_PORT
        ));
    }
    out
}

/// What the native gRPC server cannot run with.
fn native_grpc_conflicts(ctx: &Context) -> Vec<String> {
    let u = ctx.user();
    let workers = u.int(opt::TOKENIZER_WORKER_NUM).unwrap_or(1);
    let key = [opt::API_KEY, opt::ADMIN_API_KEY]
        .into_iter()
        .find(|k| u.str(k).is_some_and(|s| !s.is_empty()));
    let conflicts = [
        (u.flag(opt::USE_RAY), opt::USE_RAY.to_string()),
        (u.flag(opt::ENCODER_ONLY), opt::ENCODER_ONLY.to_string()),
        (
            workers > 1,
            format!("{} {workers}", opt::TOKENIZER_WORKER_NUM),
        ),
        (key.is_some(), key.unwrap_or_default().to_string()),
    ];
    holding(conflicts)
        .map(|what| {
            format!(
                "the native gRPC server ({} set) with {what}: it does not support it",
                opt::GRPC_PORT
            )
        })
        .collect()
}

/// SRV015: the metrics options' shapes: histogram bucket rules (0.5.2rc2+), custom labels without
/// their header (0.5.3rc0+), a metrics file without its folder (0.5.5.post3+).
pub(crate) fn metrics_options(ctx: &Context) -> Vec<Fired> {
    let u = ctx.user();
    let v = ctx.version;
    let mut out = vec![];
    if at_least(v, "0.5.2rc2") {
        for name in [opt::PROMPT_TOKENS_BUCKETS, opt::GENERATION_TOKENS_BUCKETS] {
            out.extend(bucket_rule(v, name, &strings(u.get_or_default(name))));
        }
    }
    let header = u.str(opt::TOKENIZER_METRICS_CUSTOM_LABELS_HEADER);
    let labels = strings(u.get_or_default(opt::TOKENIZER_METRICS_ALLOWED_CUSTOM_LABELS));
    if at_least(v, "0.5.3rc0") && !labels.is_empty() && header.is_none_or(str::is_empty) {
        out.push(format!(
            "{} without {}",
            opt::TOKENIZER_METRICS_ALLOWED_CUSTOM_LABELS,
            opt::TOKENIZER_METRICS_CUSTOM_LABELS_HEADER
        ));
    }
    if at_least(v, "0.5.5.post3")
        && u.flag(opt::EXPORT_METRICS_TO_FILE)
        && u.str(opt::EXPORT_METRICS_TO_FILE_DIR).is_none()
    {
        out.push(format!(
            "{} without {}",
            opt::EXPORT_METRICS_TO_FILE,
            opt::EXPORT_METRICS_TO_FILE_DIR
        ));
    }
    refused_at_start(ctx, out)
}

/// A list option's items as text (a lone value as one item).
fn strings(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::Array(items)) => items.iter().map(text).collect(),
        Some(Value::Null) | None => vec![],
        Some(other) => vec![text(other)],
    }
}

fn text(v: &Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_string)
}

/// What `validate_buckets_rule` refuses in one bucket rule (`tse`, `default`, and `custom`,
/// spelled `customer` up to 0.5.3rc0).
fn bucket_rule(v: &str, name: &str, rule: &[String]) -> Option<String> {
    let kind = rule.first()?;
    let custom = if at_least(v, "0.5.3rc2") {
        "custom"
    } else {
        "customer"
    };
    let bad = match kind.as_str() {
        "tse" => tse_rule(rule),
        "default" => (rule.len() != 1).then(|| "the default rule takes no values".to_string()),
        k if k == custom => custom_rule(&rule[1..]),
        _ => Some(format!("the rule must be tse, default or {custom}")),
    }?;
    Some(format!("{name} {}: {bad}", rule.join(" ")))
}

fn tse_rule(rule: &[String]) -> Option<String> {
    if rule.len() != 4 {
        return Some("the tse rule takes exactly three values: middle, base, count".into());
    }
    let count = rule[3].trim().replace('_', "").parse::<i64>().ok();
    let (Some(middle), Some(base), Some(count)) = (py_float(&rule[1]), py_float(&rule[2]), count)
    else {
        return Some("the tse rule's values must be a number, a number and an integer".into());
    };
    (base <= 1.0 || count <= 0 || middle <= 0.0)
        .then(|| "the tse rule needs a base above 1 and a positive middle and count".into())
}

fn custom_rule(values: &[String]) -> Option<String> {
    if values.is_empty() {
        return Some("the custom rule needs at least one bucket".into());
    }
    let Some(nums) = values
        .iter()
        .map(|s| py_float(s))
        .collect::<Option<Vec<f64>>>()
    else {
        return Some("the custom rule's buckets must be numbers".into());
    };
    let distinct = (nums.iter().enumerate()).all(|(i, a)| nums[..i].iter().all(|b| b != a));
    if !distinct {
        return Some("the custom rule's buckets repeat a value".into());
    }
    (nums.iter().any(|n| *n < 0.0)).then(|| "the custom rule's buckets must not be negative".into())
}

/// SRV016: watermarking (0.5.22+) with what it does not support.
pub(crate) fn watermark(ctx: &Context) -> Vec<Fired> {
    let u = ctx.user();
    if !at_least(ctx.version, "0.5.22") {
        return vec![];
    }
    if !u.flag(opt::ENABLE_WATERMARK) {
        let config = u.given(opt::WATERMARK_CONFIG);
        return refused_at_start(
            ctx,
            config
                .then(|| {
                    format!(
                        "{} without {}",
                        opt::WATERMARK_CONFIG,
                        opt::ENABLE_WATERMARK
                    )
                })
                .into_iter()
                .collect(),
        );
    }
    let spec = ctx.spec_algo();
    let pd = u.sval(opt::DISAGGREGATION_MODE).filter(|m| m != "null");
    let others = [
        (
            u.flag(opt::ENABLE_CUSTOM_LOGIT_PROCESSOR),
            opt::ENABLE_CUSTOM_LOGIT_PROCESSOR.to_string(),
        ),
        (
            u.str(opt::DLLM_ALGORITHM).is_some(),
            opt::DLLM_ALGORITHM.to_string(),
        ),
        (
            pd.is_some(),
            format!(
                "{} {}",
                opt::DISAGGREGATION_MODE,
                pd.clone().unwrap_or_default()
            ),
        ),
        (
            spec.as_deref()
                .is_some_and(|a| !matches!(a, "NGRAM" | "EAGLE" | "EAGLE3")),
            format!(
                "--speculative-algorithm {}",
                spec.clone().unwrap_or_default()
            ),
        ),
        (
            spec.is_some() && ctx.pp() > 1,
            "speculative decoding under pipeline parallelism".into(),
        ),
        (
            u.flag(opt::SPECULATIVE_USE_REJECTION_SAMPLING),
            opt::SPECULATIVE_USE_REJECTION_SAMPLING.into(),
        ),
        (
            ctx.env.truthy("SGLANG_RUST_SERVER"),
            "SGLANG_RUST_SERVER".into(),
        ),
    ];
    let out = holding(others)
        .map(|what| {
            format!(
                "{} with {what}: watermarking does not support it",
                opt::ENABLE_WATERMARK
            )
        })
        .collect();
    refused_at_start(ctx, out)
}

/// SRV017: options whose values SGLang range-checks.
pub(crate) fn value_ranges(ctx: &Context) -> Vec<Fired> {
    let u = ctx.user();
    let v = ctx.version;
    let mut out: Vec<String> = [
        below(ctx, opt::ASR_MAX_BUFFER_SECONDS, 1, "0.5.13"),
        below(ctx, opt::ASR_MAX_CONCURRENT_SESSIONS, 1, "0.5.13"),
        below(ctx, opt::MM_PREPROCESS_CACHE_SIZE_MB, 0, "0.5.18"),
        below(ctx, opt::PREFILL_DECODE_INTERVAL, 0, "0.5.19"),
        below(ctx, opt::SAMPLING_MASK_MAX_TOKENS, 1, "0.5.20"),
        below(ctx, opt::PREFILL_DECODE_INTERVAL_MIN_BS, 0, "0.5.23"),
        below(ctx, opt::PP_MAX_MICRO_BATCH_SIZE, 1, "0.5.11"),
        prefill_graph_context(ctx),
    ]
    .into_iter()
    .flatten()
    .collect();
    let gc = strings(u.get_or_default(opt::GC_THRESHOLD));
    if at_least(v, "0.5.10") && gc.len() > 3 {
        out.push(format!(
            "{} {}: it takes 1 to 3 integers",
            opt::GC_THRESHOLD,
            gc.join(" ")
        ));
    }
    let sweep = u.int(opt::KV_CANARY_SWEEP_INTERVAL).unwrap_or(0);
    if at_least(v, "0.5.13") && sweep > 0 && u.str(opt::KV_CANARY).is_none_or(|c| c == "none") {
        out.push(format!(
            "{} {sweep} without {} log or raise",
            opt::KV_CANARY_SWEEP_INTERVAL,
            opt::KV_CANARY
        ));
    }
    let conservativeness = u
        .get_or_default(opt::SCHEDULE_CONSERVATIVENESS)
        .and_then(Value::as_f64);
    if let Some(c) = conservativeness.filter(|c| *c < 0.0 && at_least(v, "0.5.5")) {
        out.push(format!(
            "{} {c}: it must not be negative",
            opt::SCHEDULE_CONSERVATIVENESS
        ));
    }
    out.extend(http2_ranges(ctx));
    refused_at_start(ctx, out)
}

/// The prefill CUDA graph's longest context (0.5.21+): positive, and within the context length
/// the server runs (`--context-length`, else the one SGLang derives from the model's config;
/// not judged without the config). SGLang checks it whether or not the prefill graph is captured.
fn prefill_graph_context(ctx: &Context) -> Option<String> {
    let name = opt::CUDA_GRAPH_PREFILL_MAX_CONTEXT;
    let n = ctx.user().int(name)?;
    if !at_least(ctx.version, "0.5.21") {
        return None;
    }
    if n <= 0 {
        return Some(format!("{name} {n}: it must be positive"));
    }
    let context = ctx.model?.context_length?;
    (n as u64 > context).then(|| format!("{name} {n}: above the context length {context}"))
}

/// HTTP/2's stream and window limits, checked with `--enable-http2` (0.5.18+ and 0.5.19+).
fn http2_ranges(ctx: &Context) -> Vec<String> {
    let u = ctx.user();
    if !u.flag(opt::ENABLE_HTTP2) {
        return vec![];
    }
    let limits = [
        (
            opt::HTTP2_MAX_CONCURRENT_STREAMS,
            1,
            (1i64 << 32) - 1,
            "0.5.18",
        ),
        (
            opt::HTTP2_INITIAL_CONNECTION_WINDOW_SIZE,
            1024,
            (1i64 << 31) - 1,
            "0.5.19",
        ),
    ];
    (limits.into_iter())
        .filter(|(_, _, _, since)| at_least(ctx.version, since))
        .filter_map(|(name, lo, hi, _)| {
            let n = u.int(name)?;
            (!(lo..=hi).contains(&n))
                .then(|| format!("{name} {n}: it must be between {lo} and {hi}"))
        })
        .collect()
}

/// SRV018: JSON-valued options of the wrong shape: chat-template arguments that are not an
/// object (0.5.16+), an unknown modality in the per-request limits (0.5.7+), watermarking in the
/// preferred sampling parameters (0.5.22+), and what those parameters may not hold without a
/// tokenizer (0.5.14+).
pub(crate) fn json_options(ctx: &Context) -> Vec<Fired> {
    let u = ctx.user();
    let v = ctx.version;
    let mut out = vec![];
    let kwargs = u.get_or_default(opt::DEFAULT_CHAT_TEMPLATE_KWARGS);
    if at_least(v, "0.5.16") && kwargs.is_some_and(|k| !k.is_null() && !k.is_object()) {
        out.push(format!(
            "{}: it must be a JSON object",
            opt::DEFAULT_CHAT_TEMPLATE_KWARGS
        ));
    }
    let limits = json_object(u.get_or_default(opt::LIMIT_MM_DATA_PER_REQUEST));
    let odd = limits.and_then(|m| {
        m.keys()
            .find(|k| !["image", "video", "audio"].contains(&k.as_str()))
            .cloned()
    });
    if let Some(k) = odd.filter(|_| at_least(v, "0.5.7")) {
        out.push(format!(
            "{} names the modality {k:?}: SGLang knows image, video and audio",
            opt::LIMIT_MM_DATA_PER_REQUEST
        ));
    }
    let preferred = json_object(u.get_or_default(opt::PREFERRED_SAMPLING_PARAMS));
    if at_least(v, "0.5.22")
        && preferred
            .as_ref()
            .is_some_and(|p| p.contains_key("watermark"))
    {
        out.push(format!(
            "{} sets watermark, which it does not take",
            opt::PREFERRED_SAMPLING_PARAMS
        ));
    }
    if let Some(p) = &preferred {
        out.extend(super::sampling_prefs::without_tokenizer(ctx, p));
    }
    refused_at_start(ctx, out)
}

/// A JSON option's object, whether the parser decoded it or kept the text.
fn json_object(v: Option<&Value>) -> Option<serde_json::Map<String, Value>> {
    match v? {
        Value::Object(m) => Some(m.clone()),
        Value::String(s) => serde_json::from_str::<Value>(s).ok()?.as_object().cloned(),
        _ => None,
    }
}

/// SRV019: serving features a layout cannot carry: the response store in PD disaggregation
/// (0.5.20+), CUDA IPC feature transport across nodes (0.5.16+), CUDA VMM transport or a
/// free-slots delay under pipeline parallelism (0.5.18+).
pub(crate) fn serving_layout(ctx: &Context) -> Vec<Fired> {
    let u = ctx.user();
    let v = ctx.version;
    let mut out = vec![];
    let pd = u
        .sval(opt::DISAGGREGATION_MODE)
        .filter(|m| m == "prefill" || m == "decode");
    if let Some(m) = pd.filter(|_| u.flag(opt::ENABLE_RESPONSE_STORE) && at_least(v, "0.5.20")) {
        out.push(format!(
            "{} with {} {m}: a PD server does not keep responses",
            opt::ENABLE_RESPONSE_STORE,
            opt::DISAGGREGATION_MODE
        ));
    }
    // From 0.5.17 an encoder-only server moves the features over the CPU whatever is asked.
    let encoder = u.flag(opt::ENCODER_ONLY) && at_least(v, "0.5.17");
    let transport = u.str(opt::MM_FEATURE_TRANSPORT).filter(|_| !encoder);
    if transport == Some("cuda_ipc") && ctx.nnodes() != 1 && at_least(v, "0.5.16") {
        out.push(format!(
            "{} cuda_ipc across {} nodes: it works on one node",
            opt::MM_FEATURE_TRANSPORT,
            ctx.nnodes()
        ));
    }
    if ctx.pp() > 1 && at_least(v, "0.5.18") {
        if transport == Some("cuda_vmm") {
            out.push(format!(
                "{} cuda_vmm with --pp-size {}: pipeline parallelism does not support it",
                opt::MM_FEATURE_TRANSPORT,
                ctx.pp()
            ));
        }
        if u.int(opt::MIN_FREE_SLOTS_DELAY).is_some() {
            out.push(format!(
                "{} with --pp-size {}: pipeline parallelism does not support it",
                opt::MIN_FREE_SLOTS_DELAY,
                ctx.pp()
            ));
        }
    }
    refused_at_start(ctx, out)
}
