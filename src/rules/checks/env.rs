//! Environment variables against SGLang's per-release registry.

use super::*;
use crate::rules::{EnvEdit, Fix};
use crate::sglang::envs::{self, Registry, RegistryFrom};
use crate::sglang::opt;

/// SGLang-prefixed names the registry checks cover (kernel variables have their own rules).
/// The launcher's own variables (`SGLANG_LAUNCH_*`) are not SGLang's.
fn ours(name: &str) -> bool {
    (name.starts_with("SGLANG_") || name.starts_with("SGL_"))
        && !name.starts_with("SGLANG_LAUNCH_")
        && !envs::KERNEL_ENVS.iter().any(|(n, _)| *n == name)
}

/// The environment holds a name some SGLang release knows: only then is a registry decoded.
fn concerns_sglang(ctx: &Context) -> bool {
    ctx.env
        .vars
        .keys()
        .any(|n| envs::may_know(n) && !n.starts_with("SGLANG_LAUNCH_"))
}

fn registry_note(ctx: &Context) -> String {
    let (reg, from) = ctx.env_registry();
    let mut s = format!("SGLang {}", reg.version);
    match from {
        RegistryFrom::Exact => {}
        RegistryFrom::Nearest => s = format!("{s}'s registry, the nearest to {}", ctx.version),
        RegistryFrom::Install => {
            s = format!(
                "this install's own registry, its environ.py, with other reads as in SGLang {}",
                releases_read(ctx.version)
            )
        }
    }
    if !reg.typed_registry {
        s.push_str("; a release without a typed registry, so the list comes from its source reads");
    }
    s
}

/// The embedded releases whose reads outside the registry stand in for an install's.
fn releases_read(version: &str) -> String {
    use crate::sglang::release::{KNOWN_VERSIONS, nearest};
    let (named, newest) = (KNOWN_VERSIONS[nearest(version)], KNOWN_VERSIONS.last());
    match newest.filter(|n| **n != named) {
        Some(n) => format!("{named} and {n}"),
        None => named.to_owned(),
    }
}

/// Other releases that read `name`.
fn known_elsewhere(name: &str, current: &Registry) -> Vec<&'static str> {
    let mut out = envs::releases_knowing(name);
    out.retain(|v| *v != current.version);
    out
}

/// `SGL_X` → `SGLANG_X` when this release rewrites the prefix and only knows the new name.
fn prefix_target(reg: &Registry, name: &str) -> Option<String> {
    let rest = name.strip_prefix("SGL_")?;
    let new = format!("SGLANG_{rest}");
    (reg.sgl_prefix_rewrite && !reg.knows(name)).then_some(new)
}

/// Names known from forks or local patches, with what upstream offers instead.
const FORK_ONLY: &[(&str, &str)] = &[
    (
        "SGLANG_FORCE_CUSTOM_AR_PCIE",
        "no upstream release reads it (a local patch or fork); upstream keeps custom all-reduce off on more than two PCIe-only GPUs",
    ),
    (
        "SGLANG_CUSTOM_AR_ALLOW_PCIE",
        "only a V100 fork (haohervchb/sglang-V100) reads it",
    ),
];

/// Unknown names that get a finding of their own (with a "did you mean"); the rest share one.
const NAMED_UNKNOWN: usize = 32;

pub(crate) fn unknown(ctx: &Context) -> Vec<Fired> {
    if !concerns_sglang(ctx) {
        return vec![];
    }
    let (reg, _) = ctx.env_registry();
    let unknown: Vec<&String> = (ctx.env.vars.keys())
        .filter(|n| ours(n) && !reg.knows(n))
        .filter(|n| !prefix_target(reg, n).is_some_and(|t| reg.knows(&t)))
        .filter(|n| known_elsewhere(n, reg).is_empty())
        .collect();
    let mut out: Vec<Fired> = (unknown.iter().take(NAMED_UNKNOWN))
        .map(|name| {
            let hint = match (FORK_ONLY.iter().find(|(n, _)| n == name), reg.suggest(name)) {
                (Some((_, note)), _) => format!("; {note}"),
                (None, Some(s)) => format!("; did you mean {s}?"),
                (None, None) => String::new(),
            };
            Fired::new(format!(
                "{name} is not an SGLang environment variable ({}): it has no effect upstream{hint}",
                registry_note(ctx)
            ))
        })
        .collect();
    // Edit distances to every known name for thousands of variables would take minutes.
    if let Some(rest) = unknown.get(NAMED_UNKNOWN..).filter(|r| !r.is_empty()) {
        let some: Vec<&str> = rest.iter().take(3).map(|n| n.as_str()).collect();
        out.push(Fired::new(format!(
            "… and {} more variables that are not SGLang environment variables ({}; {}, …): they have no effect upstream",
            rest.len(),
            registry_note(ctx),
            some.join(", ")
        )));
    }
    out
}

/// Where SGLang takes a deprecated name's value: the name it reads instead, whether the old
/// name's value wins over it, and how SGLang converts the value on the way.
struct Forward {
    new: String,
    old_wins: bool,
    transform: Option<String>,
}

pub(crate) fn deprecated_alias(ctx: &Context) -> Vec<Fired> {
    if !concerns_sglang(ctx) {
        return vec![];
    }
    let (reg, _) = ctx.env_registry();
    let mut out = vec![];
    for (name, _) in ctx.env.vars.iter().filter(|(n, _)| ours(n)) {
        if let Some(d) = reg.deprecated.iter().find(|d| &d.name == name)
            && d.replacement.is_none()
            && reg.var(name).is_some()
        {
            // Still read, with a start-up deprecation warning; nothing to rename it to.
            out.push(Fired::new(format!(
                "{name} is deprecated in SGLang {}: still read, but SGLang warns at start-up and will drop it",
                reg.version
            )));
            continue;
        }
        if let Some(fwd) = forward_of(reg, name) {
            out.push(rename(ctx, reg, name, fwd));
        }
    }
    out
}

fn forward_of(reg: &Registry, name: &str) -> Option<Forward> {
    if let Some(v) = reg
        .registry
        .iter()
        .find(|e| e.alias.as_deref() == Some(name))
    {
        return Some(Forward {
            new: v.name.clone(),
            old_wins: false,
            transform: None,
        });
    }
    if let Some(d) = reg.deprecated.iter().find(|d| d.name == name) {
        return d.replacement.clone().map(|new| Forward {
            new,
            old_wins: true,
            transform: d.transform.clone(),
        });
    }
    prefix_target(reg, name)
        .filter(|n| reg.knows(n))
        .map(|new| Forward {
            new,
            old_wins: true,
            transform: None,
        })
}

/// The value SGLang gives the replacement for `value` (`None`: a conversion this launcher does
/// not know, so it renames nothing).
fn forwarded(value: &str, transform: Option<&str>) -> Option<String> {
    match transform {
        None => Some(value.to_owned()),
        Some("invert_bool") => {
            let on = env_true(value);
            Some(if on { "0" } else { "1" }.to_owned())
        }
        Some("ms_to_s") => value
            .trim()
            .parse::<f64>()
            .ok()
            .map(|ms| (ms / 1000.0).to_string()),
        Some(_) => None,
    }
}

/// One name turns a feature off where the other turns it on (`..._DISABLE_X` / `..._ENABLE_X`).
fn opposite_sense(a: &str, b: &str) -> bool {
    let stem = |n: &str, word: &str| n.split_once(word).map(|(_, rest)| rest.to_owned());
    let pair =
        |x: &str, y: &str| stem(x, "_DISABLE_").is_some_and(|s| stem(y, "_ENABLE_") == Some(s));
    pair(a, b) || pair(b, a)
}

fn rename(ctx: &Context, reg: &Registry, name: &str, fwd: Forward) -> Fired {
    let new = &fwd.new;
    let old_v = ctx.env.get(name).unwrap_or_default();
    let value = forwarded(old_v, fwd.transform.as_deref());
    let converted = match (fwd.transform.as_deref(), &value) {
        (Some(_), Some(v)) => format!(" ({name}={old_v} is {new}={v}: SGLang converts the value)"),
        (Some(t), None) => format!(" (SGLang converts the value with {t})"),
        _ => String::new(),
    };
    let msg = format!(
        "{name} is a deprecated name in SGLang {}; use {new}{converted}",
        reg.version
    );
    // Both names set to different values: which one the user meant is unknowable, and a
    // rename would silently replace the value under the new name. Say which one SGLang
    // uses and leave the choice to the user.
    if ctx
        .env
        .get(new)
        .is_some_and(|v| Some(v) != value.as_deref())
    {
        let used = if fwd.old_wins {
            format!("SGLang copies {name} over {new}, so {name}'s value is the one in effect")
        } else {
            format!("SGLang reads {new} and ignores {name}")
        };
        return Fired::new(format!(
            "{msg}; {new} is set too, to a different value: {used}; keep the one you mean under {new} and unset {name}"
        ));
    }
    let Some(value) = value else {
        return Fired::new(msg);
    };
    if fwd.transform.is_none() && opposite_sense(name, new) {
        return Fired::new(format!(
            "{msg}: SGLang {} copies {name}'s value into {new} unchanged although the names mean the opposite, so {name}={old_v} gives {new}={old_v}; set {new} to what you mean and unset {name}",
            reg.version
        ));
    }
    let fix = if ctx.env.get(new).is_some() && !fwd.old_wins {
        unset_env(&[name])
    } else {
        Fix {
            summary: format!("renamed {name} to {new}"),
            args: vec![],
            env: vec![
                EnvEdit::Set {
                    name: new.clone(),
                    value,
                },
                EnvEdit::Unset {
                    name: name.to_owned(),
                },
            ],
        }
    };
    Fired::new(msg).with_fix(fix)
}

pub(crate) fn removed(ctx: &Context) -> Vec<Fired> {
    if !concerns_sglang(ctx) {
        return vec![];
    }
    let (reg, _) = ctx.env_registry();
    let mut out = vec![];
    for name in ctx.env.vars.keys().filter(|n| ours(n)) {
        let why = if reg.var(name).is_none()
            && reg
                .deprecated
                .iter()
                .any(|d| &d.name == name && d.replacement.is_none())
        {
            format!(
                "SGLang {} lists it as deprecated and ignores it",
                reg.version
            )
        } else if !reg.knows(name) && prefix_target(reg, name).is_none_or(|n| !reg.knows(&n)) {
            let other = known_elsewhere(name, reg);
            if other.is_empty() {
                continue;
            }
            format!(
                "read by SGLang {}, but not by {}",
                other.join(", "),
                registry_note(ctx)
            )
        } else {
            continue;
        };
        out.push(Fired::new(format!("{name} has no effect: {why}")).with_fix(unset_env(&[name])));
    }
    out
}

type Ineffective = fn(&Context, &str) -> Option<String>;

fn nvidia(ctx: &Context) -> bool {
    let used = ctx.used();
    !used.is_empty() && used.iter().all(|g| g.cc().is_some())
}

const INEFFECTIVE: &[(&str, Ineffective)] = &[
    // custom_all_reduce_utils.py `can_p2p`: with exactly "1" SGLang asks the driver
    // (can_device_access_peer) instead of its P2P test, which without --enable-p2p-check is
    // patched to say yes; so it matters with or without the flag, but only where custom
    // all-reduce gets that far.
    ("SGLANG_SKIP_P2P_CHECK", |ctx, v| {
        if v != "1" {
            return Some(format!(
                "SGLang compares it with \"1\" exactly, so {v:?} leaves the P2P check as it is"
            ));
        }
        match ctx.server.custom_all_reduce {
            crate::resolve::CustomAllReduce::Off(r) => Some(format!(
                "it only feeds custom all-reduce's P2P test, and custom all-reduce is off here ({r})"
            )),
            _ => None,
        }
    }),
    ("SGLANG_ENABLE_PCIE_IPC_ALLREDUCE", |ctx, v| {
        if !env_true(v) {
            return None;
        }
        if ![2, 4, 8].contains(&ctx.tp()) {
            Some(format!(
                "the PCIe IPC all-reduce serves TP 2, 4 or 8 only (TP {})",
                ctx.tp()
            ))
        } else if ctx.tp_nvlinked() {
            Some("the TP group is fully NVLinked, so custom all-reduce runs first".into())
        } else {
            None
        }
    }),
    ("SGLANG_USE_1STAGE_ALLREDUCE", |ctx, _| {
        nvidia(ctx).then(|| "it is read on ROCm only".into())
    }),
    ("SGLANG_USE_AITER", |ctx, _| {
        nvidia(ctx).then(|| "AITER is AMD ROCm only".into())
    }),
    ("SGLANG_USE_AITER_AR", |ctx, _| {
        nvidia(ctx).then(|| "AITER all-reduce is AMD ROCm only".into())
    }),
    ("SGLANG_ENABLE_JIT_DEEPGEMM", |ctx, v| {
        let sm12 = ctx.gpus_where(|(m, _)| m == 12);
        (env_true(v) && !sm12.is_empty()).then(|| {
            format!(
                "{}: SGLang turns DeepGEMM off on SM120, which it has no kernels for",
                Context::describe(&sm12)
            )
        })
    }),
    ("SGLANG_ENABLE_SPEC_V2", |ctx, _| {
        ctx.spec_algo()
            .is_none()
            .then(|| "no --speculative-algorithm is set".into())
    }),
    (
        "SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK",
        |ctx, _| {
            ctx.moe_a2a()
                .is_none_or(|a| a != "deepep")
                .then(|| "--moe-a2a-backend is not deepep".into())
        },
    ),
    ("SGLANG_OPT_USE_CUSTOM_ALL_REDUCE_V2", |ctx, v| {
        (env_true(v) && ctx.tp() > 1 && !ctx.tp_nvlinked())
            .then(|| "the V2 custom all-reduce needs a fully NVLinked TP group".into())
    }),
];

pub(crate) fn ineffective(ctx: &Context) -> Vec<Fired> {
    if !concerns_sglang(ctx) {
        return vec![];
    }
    let mut out = vec![];
    let (reg, _) = ctx.env_registry();
    for (name, why) in INEFFECTIVE {
        let Some(v) = ctx.env.get(name) else { continue };
        if !reg.knows(name) {
            continue; // ENV001/ENV003 speak for names this release does not read
        }
        if let Some(reason) = why(ctx, v) {
            out.push(
                Fired::new(format!("{name}={v} has no effect here: {reason}"))
                    .with_fix(unset_env(&[name])),
            );
        }
    }
    out
}

fn valid(ty: &str, v: &str) -> bool {
    let t = v.trim();
    match ty {
        "bool" => matches!(
            v.to_ascii_lowercase().as_str(),
            "true" | "1" | "yes" | "y" | "false" | "0" | "no" | "n"
        ),
        "int" => t.replace('_', "").parse::<i64>().is_ok(),
        "float" => t.replace('_', "").parse::<f64>().is_ok(),
        "json" => serde_json::from_str::<serde_json::Value>(v).is_ok(),
        _ => true,
    }
}

pub(crate) fn bad_value(ctx: &Context) -> Vec<Fired> {
    if !concerns_sglang(ctx) {
        return vec![];
    }
    // Types are checked only against the release's own registry (or the install's).
    let (reg, from) = ctx.env_registry();
    if from == RegistryFrom::Nearest {
        return vec![];
    }
    let mut out = vec![];
    for (name, v) in &ctx.env.vars {
        let Some(var) = reg.var(name) else { continue };
        if !valid(&var.ty, v) {
            out.push(
                Fired::new(format!(
                    "{name}={v:?} is not a valid {} for SGLang {}: SGLang warns and uses the default ({}) instead",
                    var.ty, reg.version, var.default
                ))
                .with_fix(unset_env(&[name])),
            );
        }
    }
    out
}

/// `--context-length` above what SGLang derives from the config, and the override variable not
/// set to a true value: (the given length, the derived one).
pub(crate) fn longer_context(ctx: &Context) -> Option<(i64, u64)> {
    // SGLang compares with the context length it derives (context keys × RoPE factor).
    let max = ctx
        .model
        .and_then(|m| m.derived_context_length.or(m.max_position_embeddings))?;
    let cl = ctx
        .user()
        .command_line()
        .get(opt::CONTEXT_LENGTH)
        .and_then(serde_json::Value::as_i64)?;
    let allowed = [
        "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN",
        "SGLANG_IS_IN_CI",
    ]
    .iter()
    .any(|v| ctx.env.get(v).is_some_and(env_true));
    (cl > max as i64 && !allowed).then_some((cl, max))
}

/// ENV006: the releases whose model config refuses a longer context unless the variable is set.
pub(crate) fn context_length(ctx: &Context) -> Vec<Fired> {
    let Some((cl, max)) = longer_context(ctx) else {
        return vec![];
    };
    vec![Fired::new(format!(
        "--context-length {cl} exceeds the context length SGLang derives from the model's config, {max}: SGLang {} raises ValueError at start-up unless SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 (and without rope scaling outputs degrade past {max})",
        ctx.version
    ))]
}

/// ENV009: releases before 0.5.1 (allowed by default from 0.4.4; before, refused at load).
pub(crate) fn context_length_allowed(ctx: &Context) -> Vec<Fired> {
    let Some((cl, max)) = longer_context(ctx) else {
        return vec![];
    };
    let allows = crate::sglang::release::at_least(ctx.version, "0.4.4");
    // Where the release only warns, a RoPE scaling that reaches the length (Qwen's YaRN
    // override) is what the model needs there: nothing degrades.
    let scaled = ctx.model.and_then(|m| m.rope_scaled_length);
    if allows && scaled.is_some_and(|s| s >= cl as u64) {
        return vec![];
    }
    let what = if allows {
        "allows it by default and only warns"
    } else {
        "raises ValueError when the model is loaded unless SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1"
    };
    vec![Fired::new(format!(
        "--context-length {cl} exceeds the context length SGLang derives from the model's config, {max}: SGLang {} {what}; without rope scaling outputs degrade past {max}",
        ctx.version
    ))]
}

pub(crate) fn deterministic(ctx: &Context) -> Vec<Fired> {
    let Some(by) = ctx.deterministic_by().filter(|_| ctx.tp() >= 2) else {
        return vec![];
    };
    vec![Fired::new(format!(
        "{by} at TP {}: SGLang turns custom all-reduce and torch symmetric memory off and pins NCCL to tree all-reduce with fixed channels; expect lower throughput",
        ctx.tp()
    ))]
}

pub(crate) fn device_order(ctx: &Context) -> Vec<Fired> {
    let Some(cvd) = ctx.env.get("CUDA_VISIBLE_DEVICES") else {
        return vec![];
    };
    let by_index = cvd
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .all(|s| s.parse::<u32>().is_ok());
    if !by_index || ctx.env.get("CUDA_DEVICE_ORDER") == Some("PCI_BUS_ID") {
        return vec![];
    }
    // CUDA's default order (fastest first) only differs from NVML's PCI order on mixed GPUs.
    let g = &ctx.topology.gpus;
    if g.iter()
        .all(|x| g.first().is_some_and(|f| f.name == x.name))
    {
        return vec![];
    }
    vec![Fired::new(format!(
        "CUDA_VISIBLE_DEVICES={cvd} without CUDA_DEVICE_ORDER=PCI_BUS_ID on a host with different GPU models: CUDA numbers GPUs fastest-first, NVML (and SGLang's NVLink check) by PCI bus, so the indices may name other GPUs"
    ))]
}

/// ENV010: the transfer backends SGLang's check takes the PD staging buffer with.
pub(crate) fn staging_buffer_backend(ctx: &Context) -> Vec<Fired> {
    let var = "SGLANG_DISAGG_STAGING_BUFFER";
    let u = ctx.user();
    let pd = matches!(u.str(opt::DISAGGREGATION_MODE), Some("prefill" | "decode"));
    if !pd || !ctx.env.get(var).is_some_and(env_true) {
        return vec![];
    }
    let backend = u
        .str(opt::DISAGGREGATION_TRANSFER_BACKEND)
        .unwrap_or("mooncake");
    let ok: &[&str] = if crate::sglang::release::at_least(ctx.version, "0.5.12") {
        &["mooncake", "nixl"]
    } else {
        &["mooncake"]
    };
    if ok.contains(&backend) {
        return vec![];
    }
    vec![Fired::new(format!(
        "{var} with --disaggregation-transfer-backend {backend}: SGLang {} takes the staging buffer only with {}, and refuses the line",
        ctx.version,
        ok.join(" or ")
    ))]
}
