//! One real start-up record of `tests/fixtures/memory/logs.jsonl` (a verbatim copy of the shared
//! collection): its fields, the model config it is read with, and the facts it lacks.

use serde_json::{Value, json};
use sglang_launch::sglang::{SglangArgs, flagset};

use super::FIXTURES;

pub struct Record(pub Value);

impl Record {
    pub fn f(&self, k: &str) -> Option<f64> {
        self.0.get(k).and_then(Value::as_f64)
    }
    pub fn i(&self, k: &str) -> Option<i64> {
        self.0.get(k).and_then(Value::as_i64)
    }
    pub fn s(&self, k: &str) -> Option<&str> {
        self.0.get(k).and_then(Value::as_str)
    }
    pub fn flag(&self, k: &str) -> bool {
        self.0.get(k).and_then(Value::as_bool) == Some(true)
    }
    pub fn id(&self) -> &str {
        self.s("id").unwrap_or("?")
    }
    pub fn oom(&self) -> bool {
        self.flag("oom")
    }
    /// The OOM happened while serving, after start-up completed.
    pub fn oom_at_runtime(&self) -> bool {
        self.oom()
            && self
                .s("oom_stage")
                .is_some_and(|s| s.starts_with("runtime"))
    }
    pub fn tp(&self) -> i64 {
        self.i("tp_size").unwrap_or(1).max(1)
    }
    pub fn dp_attention(&self) -> bool {
        self.flag("enable_dp_attention")
    }
    /// The GPU as named, else as inferred (the collection labels inferences).
    pub fn gpu_name(&self) -> &str {
        self.s("gpu_model")
            .or(self.s("gpu_model_inferred"))
            .unwrap_or("")
    }
}

/// Models recorded under a name that has no config of its own here, and the config that stands
/// for it (with why).
const ALIASES: &[(&str, &str, &str)] = &[
    (
        "deepseek-ai/DeepSeek-V3-0324",
        "deepseek-ai__DeepSeek-V3",
        "a V3 checkpoint update with V3's architecture",
    ),
    (
        "meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8",
        "meta-llama__Llama-4-Maverick-17B-128E-Instruct",
        "the BF16 config; the record's --quantization fp8 gives the FP8 weights",
    ),
    (
        "DeepSeek-R1-Channel-INT8",
        "deepseek-ai__DeepSeek-R1",
        "R1's shapes with 8-bit channel-wise weights",
    ),
];

/// Records whose checkpoint was already quantised where the stand-in config is 16-bit: the
/// weights load quantised, so there is no online-quantisation load peak to plan.
const PREQUANTISED: &[&str] = &["meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8"];

/// The record's checkpoint is pre-quantised though its stand-in config is not.
pub fn prequantised(r: &Record) -> bool {
    let named = r.s("model").unwrap_or("").split_whitespace().next();
    named.is_some_and(|n| PREQUANTISED.contains(&n))
}

/// Records the planner cannot be judged on though their model config is here, and why.
const UNJUDGED: &[(&str, &str)] = &[(
    "inferencex-2128-dsv4-pro-fp8-8xh200",
    "a dev image (lmsysorg/sglang:deepseek-v4-hopper) names neither its release nor its MoE \
     runner, and DeepSeek-V4's loaded experts depend on both: 119.8 GiB per GPU with 0.5.15's \
     default runner, 125.4 with its Marlin layout, against 125.65 logged (pinned in the planner's \
     own tests)",
)];

/// The model config folder for a record, or why there is none.
pub fn model_dir(r: &Record) -> Result<String, String> {
    if let Some((_, why)) = UNJUDGED.iter().find(|(id, _)| *id == r.id()) {
        return Err((*why).to_owned());
    }
    let source = r.s("source").unwrap_or("").to_ascii_lowercase();
    if source.contains("ktransformers") {
        return Err("not stock SGLang (KTransformers, CPU experts)".into());
    }
    let named = r.s("model").unwrap_or("").split_whitespace().next();
    let Some(name) = named.filter(|n| !n.is_empty()) else {
        return Err("model not stated".into());
    };
    let dir = ALIASES
        .iter()
        .find(|(n, _, _)| *n == name)
        .map_or_else(|| name.replace('/', "__"), |(_, d, _)| (*d).to_owned());
    // The test fixtures' configs, else the field corpus's (real configs too).
    [
        format!("{FIXTURES}/models/{dir}"),
        format!("{FIXTURES}/../field/models/{dir}"),
    ]
    .into_iter()
    .find(|p| std::path::Path::new(p).join("config.json").is_file())
    .ok_or_else(|| format!("no model config ({name})"))
}

/// Why the planner cannot be judged on this record's GPU, if it cannot: it models CUDA devices,
/// and needs the GPU's size.
pub fn plan_skip(r: &Record) -> Option<String> {
    const OTHER: [&str; 9] = [
        "AMD", "Radeon", "Instinct", "MI3", "gfx", "Ascend", "NPU", "Moore", "MUSA",
    ];
    let name = r.gpu_name();
    if OTHER.iter().any(|o| name.contains(o)) {
        return Some(format!(
            "non-NVIDIA ({})",
            name.split(" (").next().unwrap_or(name)
        ));
    }
    if r.f("gpu_mem_total_gb").is_none() && baseline_gib(r).is_none() {
        return Some("no GPU memory".into());
    }
    None
}

/// The free memory SGLang's fraction applied to: `Load weight begin`, or after-load + usage.
pub fn baseline_gib(r: &Record) -> Option<f64> {
    r.f("load_begin_avail_gb")
        .or_else(|| Some(r.f("weight_load_end_avail_gb")? + r.f("weight_mem_usage_gb")?))
}

/// The release the record ran, when it names one we model (0.4.0 and later), and the flag set it
/// parses with: the nearest embedded one at or below it (0.4.10.post2 for older or unknown).
pub fn version(r: &Record) -> (String, &'static str) {
    let stated = r.s("sglang_version").unwrap_or("");
    let v = stated
        .split_whitespace()
        .next()
        .unwrap_or("")
        .trim_start_matches('v');
    let modelled = v.starts_with("0.") && sglang_launch::sglang::release::at_least(v, "0.4.0");
    let known = ["0.5.23", "0.5.10.post1", "0.5.5", "0.5.2", "0.4.10.post2"];
    let flags = known
        .iter()
        .copied()
        .find(|k| modelled && sglang_launch::sglang::release::at_least(v, k))
        .unwrap_or("0.4.10.post2");
    (if modelled { v } else { flags }.to_owned(), flags)
}

/// The record's `--quantization`, from its free-text field (first word).
fn quantization(r: &Record) -> Option<&'static str> {
    let q = r.s("quantization")?.to_ascii_lowercase();
    let first = q.split_whitespace().next()?;
    Some(match first {
        "awq" => "awq",
        "gptq" => "gptq",
        "fp8" => "fp8",
        "w8a8" if q.contains("int8") => "w8a8_int8",
        _ => return None,
    })
}

/// The launch arguments the record gives, as SGLang would parse them; without its
/// `--mem-fraction-static` when `fraction` is false (what our plan would choose).
pub fn args(r: &Record, model_dir: &str, flags: &'static str, fraction: bool) -> SglangArgs {
    let mut vals: Vec<(&str, Value)> = vec![
        ("--model-path", json!(model_dir)),
        ("--tp-size", json!(r.tp())),
    ];
    let ints = [
        ("context_length_arg", "--context-length"),
        ("chunked_prefill_size", "--chunked-prefill-size"),
        ("cuda_graph_max_bs", "--cuda-graph-max-bs"),
        ("max_total_tokens_arg", "--max-total-tokens"),
        ("max_running_requests_arg", "--max-running-requests"),
    ];
    for (field, opt) in ints {
        if let Some(v) = r.i(field) {
            vals.push((opt, json!(v)));
        }
    }
    if let Some(m) = r.f("mem_fraction_static").filter(|_| fraction) {
        vals.push(("--mem-fraction-static", json!(m)));
    }
    if r.flag("cuda_graph_disabled") {
        vals.push(("--disable-cuda-graph", json!(true)));
    }
    if let Some(q) = quantization(r) {
        vals.push(("--quantization", json!(q)));
    }
    // The backend and KV cache dtype, as the record's own command line names them.
    for opt in ["--attention-backend", "--kv-cache-dtype"] {
        if let Some(v) = raw_value(r, opt) {
            vals.push((opt, json!(v)));
        }
    }
    if r.dp_attention() {
        vals.push(("--enable-dp-attention", json!(true)));
        vals.push(("--dp-size", json!(r.i("dp_size").unwrap_or(1))));
    }
    SglangArgs::with_values(flagset::get(flags).unwrap(), &vals)
}

/// The value that follows `option` in the record's raw text (the command it quotes).
fn raw_value<'a>(r: &'a Record, option: &str) -> Option<&'a str> {
    let raw = r.s("raw")?;
    let mut words = raw.split_whitespace();
    words.find(|w| *w == option)?;
    words.next()
}

/// The figures of a CUDA OOM message in the record's raw text (GiB): what PyTorch held
/// (allocated + reserved but unallocated) and the allocation that failed.
pub fn oom_message(r: &Record) -> Option<(f64, f64)> {
    let raw = r.s("raw")?;
    let tried = gib_after(raw, "Tried to allocate ")?;
    let allocated = gib_after(raw, "Of the allocated memory ")?;
    let unallocated = gib_before(raw, " GiB is reserved by PyTorch but unallocated").unwrap_or(0.0);
    Some((allocated + unallocated, tried))
}

/// The CUDA-graph pools an OOM message reports (`… GiB allocated in private pools`), GiB.
pub fn graph_pools_gib(r: &Record) -> Option<f64> {
    gib_after(r.s("raw")?, "with ").filter(|_| {
        r.s("raw")
            .is_some_and(|t| t.contains("allocated in private pools"))
    })
}

/// The `<x> GiB` figure right after `label`.
fn gib_after(text: &str, label: &str) -> Option<f64> {
    let rest = &text[text.find(label)? + label.len()..];
    let (num, unit) = rest.split_once(' ')?;
    unit.starts_with("GiB").then(|| num.parse().ok()).flatten()
}

/// The figure right before `label` (which starts with its unit).
fn gib_before(text: &str, label: &str) -> Option<f64> {
    text[..text.find(label)?].rsplit(' ').next()?.parse().ok()
}
