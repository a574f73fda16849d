//! `--quantization` against the checkpoint's own quantisation method.

use super::*;
use crate::sglang::quant_compat::Install;

/// The value SGLang accepts for this checkpoint besides none: its own method, or the Marlin
/// method that takes it over on recent GPUs.
fn accepted(checkpoint: &str) -> String {
    match checkpoint {
        "awq" => "`awq` or `awq_marlin`".to_owned(),
        "gptq" => "`gptq` or `gptq_marlin`".to_owned(),
        "modelopt" => "`modelopt`".to_owned(),
        m => format!("`{m}`"),
    }
}

/// `--quantization` as given and the checkpoint's config.json `quant_method`, when both are set.
/// From this release SGLang copies the text config's attributes its top level lacks onto the top
/// level (`get_config`), the language model's `quantization_config` among them.
const NESTED_QUANT_FROM: &str = "0.4.4";

fn pair<'a>(ctx: &Context<'a>) -> Option<(String, &'a str)> {
    let given = ctx.quant_given()?;
    let m = ctx.model?;
    // A language model's own method reaches the comparison only once SGLang copies it up.
    if m.config_quant_nested && !crate::sglang::release::at_least(ctx.version, NESTED_QUANT_FROM) {
        return None;
    }
    // A ModelOpt mixed-precision block the release parses into w4afp8 is held as that method.
    if m.config_read_as_w4afp8(ctx.version) {
        return Some((given, "w4afp8"));
    }
    Some((given, m.config_quant_method.as_deref()?))
}

/// QUANT009: the release's model config refuses `--quantization` for this checkpoint
/// (a different method, not compatible, no override can take the pair over).
pub(crate) fn quant_method_mismatch(ctx: &Context) -> Vec<Fired> {
    let Some((given, checkpoint)) = pair(ctx) else {
        return hf_quant_mismatch(ctx);
    };
    if !crate::sglang::quant_compat::refuses(ctx.version, &given, checkpoint, install(ctx)) {
        return vec![];
    }
    let says = if checkpoint == "w4afp8" {
        format!(
            "a ModelOpt mixed-precision block SGLang {} reads as",
            ctx.version
        )
    } else {
        "quant_method".to_owned()
    };
    vec![Fired::new(format!(
        "--quantization {given} on a checkpoint whose config.json says {says} {checkpoint}: SGLang {} refuses the pair at start-up ('Quantization method specified in the model config ({checkpoint}) does not match …'); drop --quantization (SGLang reads the checkpoint's method) or give {}",
        ctx.version,
        accepted(checkpoint)
    ))]
}

fn install(ctx: &Context) -> Install {
    Install {
        vllm_absent: ctx.packages.is_some_and(|p| p.get("vllm").is_none()),
        nvidia: !ctx.topology.gpus.is_empty(),
    }
}

/// QUANT009 for a ModelOpt checkpoint whose quantisation is in `hf_quant_config.json`: every
/// method the release may read the file as refuses `--quantization`.
fn hf_quant_mismatch(ctx: &Context) -> Vec<Fired> {
    let (Some(given), Some(m)) = (ctx.quant_given(), ctx.model) else {
        return vec![];
    };
    // From 0.5.3.post1 a Hub checkpoint's file is fetched from the Hub, which offline mode
    // (huggingface_hub reads either variable) skips.
    let offline = ["HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"]
        .iter()
        .any(|v| ctx.env.truthy(v));
    let hub = m.hf_quant.as_ref().is_some_and(|h| h.hub);
    if hub && offline && crate::sglang::release::at_least(ctx.version, "0.5.3.post1") {
        return vec![];
    }
    let read = m.hf_quant_methods_in(ctx.version);
    let refused =
        |c: &String| crate::sglang::quant_compat::refuses(ctx.version, &given, c, install(ctx));
    let Some(first) = read.first() else {
        return vec![];
    };
    if !read.iter().all(refused) {
        return vec![];
    }
    // Where a Hub and a local checkpoint are read apart, no one method suits both.
    let or_give = match read.as_slice() {
        [only] => format!(" or give {}", accepted(only)),
        _ => String::new(),
    };
    vec![Fired::new(format!(
        "--quantization {given} on a ModelOpt checkpoint whose hf_quant_config.json SGLang {} reads as quant_method {}: it refuses the pair at start-up ('Quantization method specified in the model config ({first}) does not match …'); drop --quantization (SGLang reads the checkpoint's method){or_give}",
        ctx.version,
        read.join(" or "),
    ))]
}

/// QUANT017: a pair QUANT009 would refuse but for vLLM's methods, whose overrides may take any
/// pair over where vLLM is installed (before 0.5.4.post2), and the packages do not show vLLM
/// absent.
pub(crate) fn quant_method_mismatch_unless_vllm(ctx: &Context) -> Vec<Fired> {
    let Some((given, checkpoint)) = pair(ctx) else {
        return vec![];
    };
    let vllm = ctx.packages.map(|p| p.get("vllm"));
    let nvidia = !ctx.topology.gpus.is_empty();
    let refuses = |vllm_absent| {
        let install = Install {
            vllm_absent,
            nvidia,
        };
        crate::sglang::quant_compat::refuses(ctx.version, &given, checkpoint, install)
    };
    if matches!(vllm, Some(None)) || !refuses(true) || refuses(false) {
        return vec![];
    }
    let unless = match vllm.flatten() {
        Some(v) => format!("unless one of the methods of the installed {v} takes it over"),
        None => "unless vLLM is installed beside it and one of its methods takes the pair over; the install is not known here".to_owned(),
    };
    vec![Fired::new(format!(
        "--quantization {given} on a checkpoint whose config.json says quant_method {checkpoint}: SGLang {} refuses the pair at start-up ({unless}); drop --quantization or give {}",
        ctx.version,
        accepted(checkpoint)
    ))]
}
