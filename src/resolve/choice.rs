//! What SGLang's own resolution reads, gathered once from the facts, who made a choice, and the
//! small helpers the per-topic resolution modules (attention, vision, MoE, speculative
//! parameters, switches) share.

use super::Facts;
use crate::sglang::opt;
use serde::Serialize;
use serde_json::Value;

use crate::facts::Env;
use crate::facts::model::ModelFacts;
use crate::sglang::SglangArgs;

/// The inputs of SGLang's start-up choices.
pub struct Inputs<'a> {
    pub version: &'a str,
    pub args: &'a SglangArgs,
    pub env: &'a Env,
    /// `architectures[0]` of the model's config.
    pub arch: Option<&'a str>,
    pub mla: bool,
    pub multimodal: bool,
    /// Compute-capability major of the first GPU the server uses (SGLang asks device 0).
    pub cc_major: Option<u32>,
    /// The speculative algorithm after SGLang's renames (NEXTN → EAGLE).
    pub spec: Option<String>,
    /// `--speculative-eagle-topk` as given.
    pub user_topk: Option<i64>,
    /// K and V rows of different widths (not MLA).
    pub asymmetric_kv: bool,
    /// The model's attention has sinks (GPT-OSS).
    pub attention_sinks: bool,
    /// The checkpoint's quantisation method, lower-case (`--quantization` wins).
    pub quant: Option<String>,
}

impl<'a> Inputs<'a> {
    pub fn of(f: &Facts<'a>) -> Inputs<'a> {
        let model = f.model;
        let arch = model.and_then(|m| m.architecture.as_deref());
        Inputs {
            version: f.version,
            args: f.args,
            env: f.env,
            arch,
            mla: model.is_some_and(ModelFacts::is_mla),
            multimodal: super::multimodal::served(f.version, f.args, model),
            cc_major: f
                .gpus
                .first()
                .and_then(|&g| f.topology.gpu(g))
                .and_then(|g| g.cc())
                .map(|c| c.0),
            spec: super::defaults::speculative_algorithm(f.args),
            user_topk: f
                .args
                .is_set(opt::SPECULATIVE_EAGLE_TOPK)
                .then(|| f.args.int(opt::SPECULATIVE_EAGLE_TOPK))
                .flatten(),
            asymmetric_kv: model.is_some_and(asymmetric_kv),
            attention_sinks: arch == Some("GptOssForCausalLM"),
            quant: text(f.args, opt::QUANTIZATION)
                .or_else(|| model.and_then(|m| m.quant_method.clone()))
                .map(|q| q.to_ascii_lowercase()),
        }
    }

    /// SGLang's "no speculative top-k, or top-k 1 with one-token pages" test, on the user's
    /// values (it runs before the speculative defaults are filled in).
    pub fn spec_topk_one_or_unset(&self) -> bool {
        match self.user_topk {
            None => true,
            Some(1) => self.args.int(opt::PAGE_SIZE).is_none_or(|p| p <= 1),
            Some(_) => false,
        }
    }

    pub fn kv_cache_dtype(&self) -> String {
        text(self.args, opt::KV_CACHE_DTYPE).unwrap_or_else(|| "auto".into())
    }

    /// An `EnvBool` switch of SGLang's (true/1/yes/y), or `default` when unset.
    pub fn env_bool(&self, name: &str, default: bool) -> bool {
        self.env.get(name).map_or(default, |v| {
            matches!(
                v.trim().to_ascii_lowercase().as_str(),
                "true" | "1" | "yes" | "y"
            )
        })
    }

    /// A boolean switch this release knows and the user turned on.
    pub fn flag(&self, opt: &str) -> bool {
        self.args.knows(opt) && self.args.flag(opt)
    }
}

fn asymmetric_kv(m: &ModelFacts) -> bool {
    !m.is_mla()
        && m.v_head_dim
            .zip(m.head_dim_or_derived())
            .is_some_and(|(v, k)| v != k)
}

/// The user's value for a backend option, when given.
pub fn user_text(args: &SglangArgs, opt: &str) -> Option<Chosen> {
    args.is_set(opt)
        .then(|| text(args, opt))
        .flatten()
        .map(|value| Chosen {
            value,
            source: ChoiceSource::User,
        })
}

/// A value SGLang picks.
pub fn sglang(value: &str) -> Chosen {
    Chosen {
        value: value.to_owned(),
        source: ChoiceSource::Sglang,
    }
}

/// Who made a choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ChoiceSource {
    /// The command line (or its `--config` file).
    User,
    /// SGLang's own resolution at start-up.
    Sglang,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Chosen {
    pub value: String,
    pub source: ChoiceSource,
}

/// An option's value (given or default) as text: strings as-is, numbers printed; `None` for
/// null or an option this version lacks.
pub fn text(args: &SglangArgs, opt: &str) -> Option<String> {
    match args.get_or_default(opt)? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}
