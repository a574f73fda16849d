//! Config.json model types SGLang's configuration loading cannot read. SGLang reads a
//! checkpoint's config.json with transformers' `AutoConfig`, after registering its own
//! configuration classes; a `model_type` neither maps stops start-up before any weight loads.
//! Where config.json's `auto_map` names the checkpoint's own `AutoConfig`, transformers runs that
//! code instead, but only when it is trusted (`--trust-remote-code`).

use super::*;
use crate::facts::model::ModelFacts;
use crate::sglang::architectures::MISTRAL_BY_NAME_FROM;
use crate::sglang::model_types as types;
use crate::sglang::opt;
use crate::sglang::release::{KNOWN_VERSIONS, at_least, exact};

/// A checkpoint whose model type the release's own code does not read.
struct Unread {
    /// Whose config.json: the served model's, or the draft's.
    whose: String,
    model_type: String,
    /// config.json's `auto_map` names an `AutoConfig`: the checkpoint's own code defines the type.
    remote: bool,
}

/// The checkpoints (served model, then a separate draft) whose config.json `model_type` only
/// transformers could read on this release, with the release's index. A checkpoint whose own
/// configuration code is trusted (`--trust-remote-code`) is read by that code: left out.
fn unread(ctx: &Context) -> Option<(usize, Vec<Unread>)> {
    let at = exact(ctx.version)?;
    if !autoconfig_decides(ctx) {
        return None;
    }
    let trusted = ctx.user().flag(opt::TRUST_REMOTE_CODE);
    let mut out = vec![];
    let mut add = |whose: String, m: Option<&ModelFacts>| {
        let keys = m.map(|m| &m.registry);
        let remote = keys.is_some_and(|k| k.auto_config);
        if let Some(t) = keys.and_then(|k| k.model_type.clone())
            && !(remote && trusted)
            && !types::sglang_reads(&t, at)
        {
            out.push(Unread {
                whose,
                model_type: t,
                remote,
            });
        }
    };
    add("config.json".into(), ctx.model);
    let draft = ctx
        .server
        .speculative
        .as_ref()
        .and_then(|s| s.separate_draft());
    if let Some(path) = draft {
        add(
            format!("the draft model {path}'s config.json"),
            ctx.draft_facts(),
        );
    }
    Some((at, out))
}

/// transformers' `AutoConfig` reads the served checkpoint's config.json: not a GGUF file, not a
/// Mistral checkpoint read from `params.json`, no other `--model-config-parser`, and no external
/// model package (which may register configuration classes of its own).
fn autoconfig_decides(ctx: &Context) -> bool {
    let u = ctx.user();
    let path = u.sval(opt::MODEL_PATH).unwrap_or_default();
    let gguf = path.to_ascii_lowercase().ends_with(".gguf")
        || u.sval(opt::LOAD_FORMAT).as_deref() == Some("gguf");
    let mistral =
        at_least(ctx.version, MISTRAL_BY_NAME_FROM) && super::model::mistral_by_name(&path);
    let hf = matches!(
        u.sval(opt::MODEL_CONFIG_PARSER).as_deref(),
        None | Some("auto" | "hf")
    );
    let external = ctx
        .env
        .get("SGLANG_EXTERNAL_MODEL_PACKAGE")
        .is_some_and(|v| !v.is_empty());
    !gguf && !mistral && hf && !external
}

/// The installed transformers, when the launcher read it from the install and it came from a
/// package index (a build from source may map more than its version says).
fn installed<'a>(ctx: &Context<'a>) -> Option<Option<&'a str>> {
    let pkgs = ctx.packages?;
    Some(
        pkgs.get("transformers")
            .filter(|p| !p.direct)
            .map(|p| p.public()),
    )
}

/// What stops start-up, in transformers' words, and where the type can be read.
fn consequence(at: usize, t: &str) -> String {
    let later = match types::first_release_reading(t, at) {
        Some(v) => format!(
            "SGLang {v} is the first release that reads it with its own pinned transformers (`sglang-launch upgrade --to {v}` rewrites the command line for it)"
        ),
        None => format!(
            "no release up to {} reads it with its own pinned transformers",
            KNOWN_VERSIONS.last().copied().unwrap_or_default()
        ),
    };
    format!(
        "its AutoConfig stops start-up before any weight loads ('The checkpoint you are trying to load has model type `{t}` but Transformers does not recognize this architecture'); {later}"
    )
}

/// MODEL006: the installed transformers (or every transformers release) has no configuration
/// class for the model type, and the release registers none; where the checkpoint brings its
/// own, without `--trust-remote-code`.
pub(crate) fn unknown_model_type(ctx: &Context) -> Vec<Fired> {
    let Some((at, unread)) = unread(ctx) else {
        return vec![];
    };
    let installed = installed(ctx);
    unread
        .into_iter()
        .filter_map(|u| {
            let t = &u.model_type;
            let why = match installed {
                Some(Some(v)) if types::transformers_has(t, v) == Some(false) => {
                    let first = types::first_transformers(t)
                        .map(|f| format!(" (transformers {f} is the first that has one)"))
                        .unwrap_or_default();
                    format!("the installed transformers {v} has no configuration class for it{first}")
                }
                None if types::first_transformers(t).is_none() => format!(
                    "no transformers release up to {} has a configuration class for it",
                    types::newest_transformers()
                ),
                _ => return None,
            };
            let text = if u.remote {
                format!(
                    "{}'s model type `{t}` is defined only by the checkpoint's own code (its auto_map names an AutoConfig): {why}, and SGLang {} registers none, so without --trust-remote-code its AutoConfig refuses to run that code and stops start-up before any weight loads ('… Please pass the argument `trust_remote_code=True` to allow custom code to be run'); add --trust-remote-code if you trust the checkpoint's code",
                    u.whose, ctx.version
                )
            } else {
                format!(
                    "{}'s model type `{t}`: {why}, and SGLang {} registers none, so {}",
                    u.whose,
                    ctx.version,
                    consequence(at, t)
                )
            };
            Some(Fired::new(text))
        })
        .collect()
}

/// MODEL007: the installed transformers is not known, and the one the release pins has no
/// configuration class for the model type, which a later transformers has (where the checkpoint
/// brings its own, only without `--trust-remote-code`).
pub(crate) fn pinned_transformers_lacks_type(ctx: &Context) -> Vec<Fired> {
    if ctx.packages.is_some() {
        return vec![];
    }
    let Some((at, unread)) = unread(ctx) else {
        return vec![];
    };
    let Some(pin) = types::pin(at) else {
        return vec![];
    };
    unread
        .into_iter()
        .filter_map(|u| {
            let t = &u.model_type;
            let first = types::first_transformers(t)?;
            (!types::pinned_has(t, pin)).then(|| {
                let lacks = format!(
                    "{}'s model type `{t}`: SGLang {} pins transformers {pin}, which has no configuration class for it (transformers {first} is the first that has one), and registers none itself",
                    u.whose, ctx.version
                );
                Fired::new(if u.remote {
                    format!(
                        "{lacks}; config.json's auto_map names the checkpoint's own AutoConfig, which transformers runs only with --trust-remote-code: unless the installed transformers is {first} or later, its AutoConfig stops start-up without that flag ('… Please pass the argument `trust_remote_code=True` to allow custom code to be run'); add --trust-remote-code if you trust the checkpoint's code"
                    )
                } else {
                    format!(
                        "{lacks}: unless the installed transformers is {first} or later, {}",
                        consequence(at, t)
                    )
                })
            })
        })
        .collect()
}
