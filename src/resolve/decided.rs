//! The values several stages read, each decided once, here, with where it came from: the
//! quantisation in effect, the context length, the KV cache dtype, the user's memory fraction
//! and the ranks per node. Rules, the memory planner and the report read them off the
//! [`Server`](super::Server); nothing else combines the option with its fallback again.

use crate::facts::model::ModelFacts;
use crate::sglang::release::at_least;
use crate::sglang::{Parallel, SglangArgs, opt};

use super::choice::text;

/// Where a value in effect came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    /// The command line (or its `--config` file).
    User,
    /// The option's own default, untouched by SGLang.
    Default,
    /// SGLang's own resolution at start-up (the checkpoint's method, the derived context
    /// length, the layout it derives from the sizes).
    Sglang,
    /// A fix of this run set the option (a rule's, `--fit`'s or the planned fraction).
    Fix,
}

/// A value and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Sourced<T> {
    pub(crate) value: T,
    pub(crate) source: Source,
}

impl<T> Sourced<T> {
    fn new(value: T, source: Source) -> Self {
        Sourced { value, source }
    }

    /// The command line holds it (the user's own, or a fix's).
    pub(crate) fn given(&self) -> bool {
        matches!(self.source, Source::User | Source::Fix)
    }
}

/// The decided values (see the module doc).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Decided {
    /// `--quantization`, else the checkpoint's method (SGLang reads it from the config);
    /// lower-case.
    pub(crate) quantization: Option<Sourced<String>>,
    /// `--context-length` when positive, else SGLang's derivation from the model's config;
    /// `None` while the model is unknown (the planner then sizes a stand-in).
    pub(crate) context_length: Option<Sourced<u64>>,
    /// `--kv-cache-dtype` as given, else its default (`auto`); `None` when the release lacks it.
    pub(crate) kv_cache_dtype: Option<Sourced<String>>,
    /// `--mem-fraction-static` when given (SGLang's default is `defaults.mem_fraction_static`).
    pub(crate) mem_fraction_static: Option<Sourced<f64>>,
    /// Scheduler processes (one GPU each) this node runs.
    pub(crate) ranks_per_node: Sourced<i64>,
}

impl Decided {
    pub(crate) fn of(
        args: &SglangArgs,
        model: Option<&ModelFacts>,
        p: &Parallel,
        gpu: (&str, Option<u32>),
    ) -> Decided {
        Decided {
            quantization: quantization(args, model, gpu.0),
            context_length: context_length(args, model),
            kv_cache_dtype: kv_cache_dtype(args).map(|k| {
                let fp4_dp =
                    text(args, opt::QUANTIZATION).as_deref() == Some("modelopt_fp4") && p.dp > 1;
                dsa_kv_default(k, model, gpu, fp4_dp)
            }),
            mem_fraction_static: user_fraction(args).map(|f| Sourced::new(f, Source::User)),
            ranks_per_node: Sourced::new(p.ranks_per_node(), Source::Sglang),
        }
    }

    /// Marks as [`Source::Fix`] the given values whose option a fix set (`fixed`: option
    /// names, any spelling).
    pub(crate) fn fixed_by(&mut self, args: &SglangArgs, fixed: &[String]) {
        let dest = |o: &str| args.flags.dest_of(o);
        let touched = |o: &str| {
            fixed
                .iter()
                .any(|f| dest(f).is_some() && dest(f) == dest(o))
        };
        let mark = |source: &mut Source, o: &str| {
            if *source == Source::User && touched(o) {
                *source = Source::Fix;
            }
        };
        if let Some(q) = self.quantization.as_mut() {
            mark(&mut q.source, opt::QUANTIZATION);
        }
        if let Some(c) = self.context_length.as_mut() {
            mark(&mut c.source, opt::CONTEXT_LENGTH);
        }
        if let Some(k) = self.kv_cache_dtype.as_mut() {
            mark(&mut k.source, opt::KV_CACHE_DTYPE);
        }
        if let Some(f) = self.mem_fraction_static.as_mut() {
            mark(&mut f.source, opt::MEM_FRACTION_STATIC);
        }
    }
}

/// `--mem-fraction-static` when given, as the number argparse made of it.
pub(crate) fn user_fraction(args: &SglangArgs) -> Option<f64> {
    args.is_set(opt::MEM_FRACTION_STATIC)
        .then(|| args.float(opt::MEM_FRACTION_STATIC))
        .flatten()
}

/// `--kv-cache-dtype` as given, else its default; `None` when the release lacks the option.
pub(crate) fn kv_cache_dtype(args: &SglangArgs) -> Option<Sourced<String>> {
    let source = if args.is_set(opt::KV_CACHE_DTYPE) {
        Source::User
    } else {
        Source::Default
    };
    text(args, opt::KV_CACHE_DTYPE).map(|v| Sourced::new(v, source))
}

/// DeepSeek sparse attention's `auto` KV cache (any before 0.5.4.post2) is FP8 (E4M3) on SM100
/// and newer, bfloat16 below (0.5.4.post2 on), from 0.5.3rc2 where SGLang serves it; and
/// DeepSeek-V4's on any GPU (`gpu`: the release and the compute-capability major SGLang reads).
fn dsa_kv_default(
    k: Sourced<String>,
    model: Option<&ModelFacts>,
    (version, major): (&str, Option<u32>),
    fp4_dp: bool,
) -> Sourced<String> {
    let newer = major.is_some_and(|m| m >= 10);
    // DeepSeek-V4 (0.5.12 on) keeps its cache in FP8 E4M3 on every CUDA GPU.
    let v4 = model.and_then(|m| m.architecture.as_deref())
        == Some(crate::facts::model::deepseek_v4::ARCH)
        && major.is_some()
        && at_least(version, "0.5.12");
    let dsa = major.is_some() && super::attention::dsa_served(version, model);
    let spelled = at_least(version, "0.5.4.post2");
    // 0.5.10rc0 alone keeps `auto` at bfloat16 on every GPU, but for a ModelOpt FP4
    // `--quantization` with a DP size above 1 on SM100 and newer.
    if dsa && version == "0.5.10rc0" && k.value == "auto" {
        let dtype = if fp4_dp && newer {
            "fp8_e4m3"
        } else {
            "bfloat16"
        };
        return Sourced::new(dtype.to_owned(), Source::Sglang);
    }
    // 0.5.3 – 0.5.4.post1 set it on SM100 over any value given.
    let over_any = dsa && newer && !spelled;
    if over_any || k.value == "auto" && (v4 || dsa && newer) {
        return Sourced::new("fp8_e4m3".to_owned(), Source::Sglang);
    }
    // From 0.5.4.post2 the 16-bit cache is spelled out: `auto` below SM100, and `bf16`.
    if dsa && spelled && k.value == "auto" {
        return Sourced::new("bfloat16".to_owned(), Source::Sglang);
    }
    if dsa && spelled && k.value == "bf16" {
        return Sourced::new("bfloat16".to_owned(), k.source);
    }
    k
}

/// `--quantization` wins over the checkpoint's method (as the release reads it); SGLang
/// refusing a pair that disagrees is QUANT009's, not a choice.
fn quantization(
    args: &SglangArgs,
    model: Option<&ModelFacts>,
    version: &str,
) -> Option<Sourced<String>> {
    let lower = |q: String| q.to_ascii_lowercase();
    match text(args, opt::QUANTIZATION) {
        Some(q) => Some(Sourced::new(lower(q), Source::User)),
        None => model
            .and_then(|m| m.quant_method_in(version))
            .map(|q| Sourced::new(lower(q), Source::Sglang)),
    }
}

/// A positive `--context-length`, else the model's (SGLang's derivation for this release).
pub(crate) fn context_length(
    args: &SglangArgs,
    model: Option<&ModelFacts>,
) -> Option<Sourced<u64>> {
    let model = model?;
    let user = args
        .is_set(opt::CONTEXT_LENGTH)
        .then(|| args.int(opt::CONTEXT_LENGTH))
        .flatten()
        .and_then(|c| u64::try_from(c).ok())
        .filter(|&c| c > 0);
    match user {
        Some(c) => Some(Sourced::new(c, Source::User)),
        None => model
            .context_length
            .map(|c| Sourced::new(c, Source::Sglang)),
    }
}
