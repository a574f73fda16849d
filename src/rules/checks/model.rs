//! Model architectures the release's model registry cannot resolve. SGLang looks config.json's
//! `architectures` up in its registry (the `EntryClass` of each module under
//! `sglang/srt/models/`) while loading the model. Before the Transformers fallback
//! ([`TRANSFORMERS_FALLBACK_FROM`]) a name it lacks stops the server; from it on SGLang tries its
//! generic Transformers backend, which works only where transformers (or the checkpoint's own
//! code) provides the class.

use super::*;
use crate::facts::model::ModelFacts;
use crate::sglang::architectures::{
    self, Lack, Lookup, MISTRAL_BY_NAME_FROM, TRANSFORMERS_FALLBACK_FROM,
};
use crate::sglang::opt;
use crate::sglang::release::KNOWN_VERSIONS;
use crate::sglang::release::at_least;

/// A checkpoint the registry of the user's release has no class for.
struct Unresolved<'a> {
    /// Where the names come from: the model's config.json, or the draft's.
    source: String,
    facts: &'a ModelFacts,
    /// The release's index in the embedded list.
    at: usize,
}

/// The checkpoints (the served model, then a separate draft) whose `architectures` the
/// release's registry resolves none of.
fn unresolved<'a>(ctx: &Context<'a>) -> Vec<Unresolved<'a>> {
    // Only an embedded release's registry is known: a newer one may have the class.
    let Some(at) = crate::sglang::release::exact(ctx.version) else {
        return vec![];
    };
    if !registry_decides(ctx) {
        return vec![];
    }
    let mut out = vec![];
    if let Some(m) = main_unresolved(ctx, at) {
        out.push(Unresolved {
            source: "config.json `architectures`".into(),
            facts: m,
            at,
        });
    }
    let draft = ctx
        .server
        .speculative
        .as_ref()
        .and_then(|s| s.separate_draft());
    if let (Some(path), Some(m)) = (draft, ctx.draft_facts())
        && !resolves(ctx, m, path, at, true)
    {
        out.push(Unresolved {
            source: format!("`architectures` of the speculative draft model {path}"),
            facts: m,
            at,
        });
    }
    out
}

/// The served model, when the release's registry has none of its names.
fn main_unresolved<'a>(ctx: &Context<'a>, at: usize) -> Option<&'a ModelFacts> {
    let path = ctx.user().sval(opt::MODEL_PATH).unwrap_or_default();
    ctx.model.filter(|m| !resolves(ctx, m, &path, at, false))
}

/// SGLang's own registry is what resolves the names: no external model package
/// (`SGLANG_EXTERNAL_MODEL_PACKAGE` registers classes of its own), no implementation asked for
/// other than SGLang's (`--model-impl transformers` skips the registry on purpose), and config.json
/// read as transformers reads it (another `--model-config-parser` builds the config itself).
fn registry_decides(ctx: &Context) -> bool {
    let external = ctx
        .env
        .get("SGLANG_EXTERNAL_MODEL_PACKAGE")
        .is_some_and(|v| !v.is_empty());
    let own = matches!(
        implementation(ctx).as_deref(),
        None | Some("auto" | "sglang")
    );
    let hf = matches!(
        ctx.user().sval(opt::MODEL_CONFIG_PARSER).as_deref(),
        None | Some("auto" | "hf")
    );
    !external && own && hf
}

/// `--model-impl` (`--impl` on 0.4.7–0.4.9.post2), when this release has it.
fn implementation(ctx: &Context) -> Option<String> {
    ctx.user()
        .sval(opt::MODEL_IMPL)
        .or_else(|| ctx.user().sval(opt::IMPL))
}

/// The release loads this checkpoint under one of its names, or the launcher cannot tell: no
/// names, a model type the release gives architectures of its own, or a Mistral checkpoint the
/// release reads from `params.json`.
fn resolves(ctx: &Context, m: &ModelFacts, path: &str, at: usize, draft: bool) -> bool {
    let keys = &m.registry;
    if keys.architectures.is_empty() {
        return true;
    }
    if keys
        .model_type
        .as_deref()
        .is_some_and(|t| architectures::config_type_rewritten(t, at))
    {
        return true;
    }
    if at_least(ctx.version, MISTRAL_BY_NAME_FROM) && mistral_by_name(path) {
        return true;
    }
    keys.architectures
        .iter()
        .any(|a| architectures::lookup(a, at, draft) != Lookup::Missing)
}

/// The names SGLang's Mistral heuristic reads from `params.json` instead of config.json (the
/// union of every release's list).
pub(crate) fn mistral_by_name(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    ["mistral-large-3", "mistral-small-4", "leanstral"]
        .iter()
        .any(|n| lower.contains(n))
        || (lower.contains("eagle") && lower.contains("mistral"))
}

/// `A`, or `any of A, B`.
fn names(m: &ModelFacts) -> String {
    match m.registry.architectures.as_slice() {
        [one] => one.clone(),
        all => format!("any of {}", all.join(", ")),
    }
}

/// Which releases implement one of the names: the first later one, else the last earlier one.
fn elsewhere(m: &ModelFacts, at: usize) -> String {
    let newest = KNOWN_VERSIONS.last().copied().unwrap_or_default();
    let mut next = None;
    let mut prev = None;
    for a in &m.registry.architectures {
        let (n, p) = architectures::releases_with(a, at);
        next = next.or(n.map(|v| (a, v)));
        prev = prev.or(p.map(|v| (a, v)));
    }
    match (next, prev) {
        (Some((a, v)), _) => format!(
            "the first release that implements {a} is {v} (`sglang-launch upgrade --to {v}` rewrites the command line for it)"
        ),
        (None, Some((a, v))) => format!(
            "no later release up to {newest} implements it (the last that implemented {a} was {v})"
        ),
        (None, None) => format!("no release up to {newest} implements it"),
    }
}

/// The classes `--language-model-only` serves, by the release that added each.
const LANGUAGE_MODEL_ONLY: &[(&str, &str)] = &[
    ("MuseGlimmerForConditionalGeneration", "0.5.18"),
    ("Cosmos3ForConditionalGeneration", "0.5.20"),
    ("Cosmos3EdgeForConditionalGeneration", "0.5.20"),
    ("DeepseekV4ForCausalLM", "0.5.22"),
];

/// The options `--language-model-only` refuses to run with.
const NOT_WITH_LANGUAGE_MODEL_ONLY: &[&str] = &[
    opt::ENCODER_ONLY,
    opt::LANGUAGE_ONLY,
    opt::ENABLE_PREFIX_MM_CACHE,
    opt::ENABLE_BROADCAST_MM_INPUTS_PROCESS,
    opt::MM_ENABLE_DP_ENCODER,
];

/// MODEL003: SGLang's start-up checks of `--language-model-only`, in its order.
pub(crate) fn language_model_only(ctx: &Context) -> Vec<Fired> {
    let u = ctx.user();
    if !u.flag(opt::LANGUAGE_MODEL_ONLY) {
        return vec![];
    }
    let refused = |why: String| {
        vec![Fired::new(format!(
            "--language-model-only {why}: SGLang {} raises at start-up",
            ctx.version
        ))]
    };
    if let Some(other) = NOT_WITH_LANGUAGE_MODEL_ONLY.iter().find(|o| u.flag(o)) {
        return refused(format!("with {other}"));
    }
    if u.str(opt::DISAGGREGATION_MODE).is_some_and(|m| m != "null") {
        return refused("on a PD prefill or decode server".into());
    }
    let Some(m) = ctx.model else {
        return vec![];
    };
    let served: Vec<&str> = LANGUAGE_MODEL_ONLY
        .iter()
        .filter(|(_, from)| at_least(ctx.version, from))
        .map(|(a, _)| *a)
        .collect();
    let archs: Vec<String> = match (&m.registry.architectures, &m.architecture) {
        (listed, _) if !listed.is_empty() => listed.clone(),
        (_, Some(one)) => vec![one.clone()],
        _ => return vec![],
    };
    if archs.iter().any(|a| served.contains(&a.as_str())) {
        return vec![];
    }
    refused(format!(
        "for {}: it serves only {} that way",
        python_list(&archs),
        served.join(", ")
    ))
}

/// MODEL001: a release without the Transformers fallback stops on a name its registry lacks.
pub(crate) fn unsupported(ctx: &Context) -> Vec<Fired> {
    if at_least(ctx.version, TRANSFORMERS_FALLBACK_FROM) {
        return vec![];
    }
    unresolved(ctx)
        .into_iter()
        .map(|u| {
            let archs = &u.facts.registry.architectures;
            Fired::new(format!(
                "SGLang {} has no model class for {} ({}) and no fallback implementation: it stops while loading the model ('Model architectures {} are not supported for now'); {}",
                ctx.version,
                names(u.facts),
                u.source,
                python_list(archs),
                elsewhere(u.facts, u.at),
            ))
        })
        .collect()
}

/// MODEL002: from the fallback on, SGLang serves an unknown name through its generic
/// Transformers backend, if transformers or the checkpoint's own code has the class.
pub(crate) fn transformers_fallback(ctx: &Context) -> Vec<Fired> {
    if !at_least(ctx.version, TRANSFORMERS_FALLBACK_FROM) {
        return vec![];
    }
    unresolved(ctx)
        .into_iter()
        .map(|u| {
            let first = u.facts.registry.architectures.first().cloned().unwrap_or_default();
            let needs = if u.facts.registry.auto_model {
                "config.json's auto_map names an AutoModel, which it loads from the checkpoint's own code (--trust-remote-code); if that code does not load, or is not compatible with SGLang's attention backends, it stops while loading the model".to_owned()
            } else {
                format!("config.json's auto_map names no AutoModel, so unless the installed transformers has a class named {first} (one compatible with SGLang's attention backends) it stops while loading the model ('Cannot find model module. '{first}' is not a registered model in the Transformers library')")
            };
            Fired::new(format!(
                "SGLang {} has no model class for {} ({}): it falls back to its generic Transformers backend (slower; some features unavailable), and {needs}; for SGLang's own implementation, {}",
                ctx.version,
                names(u.facts),
                u.source,
                elsewhere(u.facts, u.at),
            ))
        })
        .collect()
}

/// MODEL004: 0.4.7 to 0.5.9's Transformers backend asserts it is not asked for embeddings, and
/// the start-up warmup of an embedding server asks.
pub(crate) fn transformers_embedding(ctx: &Context) -> Vec<Fired> {
    let user = ctx.user();
    if !user.flag(opt::IS_EMBEDDING) || user.flag(opt::SKIP_SERVER_WARMUP) {
        return vec![];
    }
    let why = if implementation(ctx).as_deref() == Some("transformers") {
        let named = if user.given(opt::MODEL_IMPL) {
            opt::MODEL_IMPL
        } else {
            opt::IMPL
        };
        format!("asked for with {named} transformers")
    } else if let Some(m) = crate::sglang::release::exact(ctx.version)
        .filter(|_| registry_decides(ctx))
        .and_then(|at| main_unresolved(ctx, at))
    {
        format!("its fallback for {}, which it has no class for", names(m))
    } else {
        return vec![];
    };
    vec![Fired::new(format!(
        "--is-embedding with SGLang's generic Transformers backend ({why}): SGLang {}'s Transformers backend asserts 'embedding is not supported yet' at its first forward, the start-up warmup; 0.5.10 serves embeddings through it",
        ctx.version
    ))]
}

/// MODEL005: 0.5.2's GLM-4V MoE class skips the constructor that sets an attribute its
/// inherited forward reads.
pub(crate) fn glm4v_moe_attribute(ctx: &Context) -> Vec<Fired> {
    const ARCH: &str = "Glm4vMoeForConditionalGeneration";
    let named = ctx
        .model
        .is_some_and(|m| m.registry.architectures.iter().any(|a| a == ARCH));
    if !named {
        return vec![];
    }
    vec![Fired::new(format!(
        "{ARCH} on SGLang {}: its forward reads capture_aux_hidden_states, which this class never sets (AttributeError at the first forward, during start-up); 0.5.3rc0 sets it",
        ctx.version
    ))]
}

/// The class the release's registry picks for the model (the first of config.json's names it
/// has, unless its configuration code renames the model type), with the release's index.
fn registry_pick<'a>(ctx: &Context<'a>) -> Option<(&'a str, usize)> {
    let (at, m) = (crate::sglang::release::exact(ctx.version)?, ctx.model?);
    if !registry_decides(ctx) {
        return None;
    }
    let rewritten = (m.registry.model_type.as_deref())
        .is_some_and(|t| architectures::config_type_rewritten(t, at));
    let arch = (m.registry.architectures.iter())
        .find(|a| architectures::lookup(a, at, false) != Lookup::Missing)
        .filter(|_| !rewritten)?;
    Some((arch, at))
}

/// The class the registry picks ([`registry_pick`]), when that class lacks `what`: with the first
/// later release whose class has it.
pub(crate) fn class_lacking<'a>(
    ctx: &Context<'a>,
    what: Lack,
) -> Option<(&'a str, Option<&'static str>)> {
    let (arch, at) = registry_pick(ctx)?;
    Some((arch, architectures::lacks(arch, at, what)?))
}

/// `['A', 'B']`, as Python prints a list of strings.
fn python_list(names: &[String]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
    format!("[{}]", quoted.join(", "))
}

/// PAR018: with `--pp-size` > 1 SGLang asserts, once the weights are loaded, that the model's
/// `forward` takes `pp_proxy_tensors`; the class the registry picks (the first of config.json's
/// names it has) may not.
pub(crate) fn pp_unsupported(ctx: &Context) -> Vec<Fired> {
    if ctx.pp() < 2 {
        return vec![];
    }
    let Some((arch, later)) = class_lacking(ctx, Lack::PipelineForward) else {
        return vec![];
    };
    let upgrade = later.map_or(String::new(), |v| {
        format!(", or SGLang {v}, the first release whose {arch} has it")
    });
    vec![Fired::new(format!(
        "--pp-size {} with {arch}: SGLang {}'s class for it has no pipeline-parallel forward (no pp_proxy_tensors), so after loading the weights start-up stops with 'Pipeline Parallel is not compatible with this model.'; use TP (across nodes if need be) instead of PP{upgrade}",
        ctx.pp(),
        ctx.version
    ))]
}

/// MODEL009: before 0.5.10 the Qwen3-VL MoE loader looks every expert tensor up among the
/// stage's own parameters, so a layer another pipeline stage holds stops the load.
pub(crate) fn qwen3_vl_moe_pp(ctx: &Context) -> Vec<Fired> {
    const ARCH: &str = "Qwen3VLMoeForConditionalGeneration";
    let dummy = ctx.user().sval(opt::LOAD_FORMAT).as_deref() == Some("dummy");
    if ctx.pp() < 2 || dummy || registry_pick(ctx).map(|(arch, _)| arch) != Some(ARCH) {
        return vec![];
    }
    vec![Fired::new(format!(
        "--pp-size {} with {ARCH}: SGLang {}'s loader looks every expert weight up among the stage's own layers, so the load stops with a KeyError for the first MoE layer another stage holds (e.g. 'model.layers.N.mlp.experts.w2_weight'); use TP alone (across nodes if need be), or SGLang 0.5.10, which skips the other stages' layers",
        ctx.pp(),
        ctx.version
    ))]
}
