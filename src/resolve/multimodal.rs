//! Whether SGLang serves a model's multimodal part. A few vision-language architectures are
//! served text-only unless `--enable-multimodal` is given (SGLang's model config turns their
//! multimodal part off by default); everything that depends on the vision tower (its backend,
//! the fraction reserved for it, the prefill graphs) follows this one answer.

use crate::facts::model::ModelFacts;
use crate::sglang::SglangArgs;
use crate::sglang::opt;
use crate::sglang::release::at_least;

/// Architectures served text-only by default, with the release each joined the list.
const TEXT_ONLY_BY_DEFAULT: &[(&str, &str)] = &[
    ("Gemma3ForConditionalGeneration", "0.4.6"),
    ("Llama4ForConditionalGeneration", "0.4.6"),
    ("Step3VLForConditionalGeneration", "0.4.10.post1"),
    ("InklingForConditionalGeneration", "0.5.16"),
];

/// Architectures whose model class does not build (or load) its vision and audio towers when
/// the multimodal part is off, with the release each started to: the checkpoint's towers then
/// take no GPU memory.
const SKIPS_TOWERS_WHEN_TEXT_ONLY: &[(&str, &str)] = &[
    ("Llama4ForConditionalGeneration", "0.4.9.post4"),
    ("InklingForConditionalGeneration", "0.5.16"),
];

/// The release from which `--model-impl transformers` keeps the multimodal part on.
const TRANSFORMERS_IMPL_KEEPS: &str = "0.5.10";

/// The model has a vision tower and SGLang builds it.
pub(crate) fn served(version: &str, args: &SglangArgs, model: Option<&ModelFacts>) -> bool {
    let Some(m) = model.filter(|m| m.is_multimodal) else {
        return false;
    };
    if args.flag(opt::ENABLE_MULTIMODAL) {
        return true;
    }
    !text_only_by_default(version, args, m.architecture.as_deref())
}

/// The model's encoder towers are in its checkpoint but SGLang neither builds nor loads them:
/// the model is served text-only and its class skips them.
pub(crate) fn towers_skipped(version: &str, args: &SglangArgs, model: Option<&ModelFacts>) -> bool {
    let Some(m) = model.filter(|m| m.is_multimodal) else {
        return false;
    };
    let skips = m.architecture.as_deref().is_some_and(|a| {
        SKIPS_TOWERS_WHEN_TEXT_ONLY
            .iter()
            .any(|(name, since)| *name == a && at_least(version, since))
    });
    skips && !served(version, args, model)
}

/// What the model runner multiplies the fraction by (the user's or the default) before 0.4.9
/// when it serves a vision model: 0.95 from 0.4.0.post2, 0.90 from 0.4.4.post4. From 0.4.9 the
/// default fraction is reduced in `ServerArgs` instead (the defaults module).
pub(crate) fn runner_fraction_factor(ctx: &super::Context) -> f64 {
    let v = ctx.version;
    if !ctx.multimodal_served() || at_least(v, "0.4.9") || !at_least(v, "0.4.0.post2") {
        1.0
    } else if at_least(v, "0.4.4.post4") {
        0.90
    } else {
        0.95
    }
}

/// SGLang turns this architecture's multimodal part off unless asked for it.
pub(crate) fn text_only_by_default(version: &str, args: &SglangArgs, arch: Option<&str>) -> bool {
    let listed = arch.is_some_and(|a| {
        TEXT_ONLY_BY_DEFAULT
            .iter()
            .any(|(name, since)| *name == a && at_least(version, since))
    });
    let transformers_impl = args.str(opt::MODEL_IMPL) == Some("transformers")
        && at_least(version, TRANSFORMERS_IMPL_KEEPS);
    listed && !transformers_impl
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sglang::{flagset, parser};

    fn args(version: &str, extra: &[&str]) -> SglangArgs {
        let mut argv = vec!["--model-path", "m"];
        argv.extend_from_slice(extra);
        let argv = argv.iter().map(std::ffi::OsString::from).collect();
        parser::parse(flagset::get(version).unwrap(), argv)
    }

    fn vlm(arch: &str) -> ModelFacts {
        ModelFacts {
            architecture: Some(arch.into()),
            is_multimodal: true,
            ..ModelFacts::default()
        }
    }

    #[test]
    fn gemma3_and_llama4_are_text_only_unless_asked() {
        let gemma = vlm("Gemma3ForConditionalGeneration");
        assert!(!served("0.5.23", &args("0.5.23", &[]), Some(&gemma)));
        let on = args("0.5.23", &["--enable-multimodal"]);
        assert!(served("0.5.23", &on, Some(&gemma)));
        let qwen = vlm("Qwen2_5_VLForConditionalGeneration");
        assert!(served("0.5.23", &args("0.5.23", &[]), Some(&qwen)));
        // Before the list existed every vision model was served whole.
        assert!(served("0.4.5", &args("0.4.5", &[]), Some(&gemma)));
    }

    #[test]
    fn the_transformers_implementation_keeps_it_from_0_5_10() {
        let llama4 = vlm("Llama4ForConditionalGeneration");
        let impl_tf = |v| args(v, &["--model-impl", "transformers"]);
        assert!(served("0.5.10", &impl_tf("0.5.10"), Some(&llama4)));
        assert!(!served("0.5.8", &impl_tf("0.5.8"), Some(&llama4)));
    }
}
