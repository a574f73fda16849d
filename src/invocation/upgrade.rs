//! `sglang-launch upgrade --to VERSION [-- ARGS]`: reads the command line with the release in
//! use, rewrites it for the target, and reports every difference between the two releases.

use std::ffi::OsString;

use crate::exit;
use crate::facts::Env;
use crate::plan::Fatal;
use crate::report::shell_join;
use crate::report::upgrade::{Advice, ConfigAdvice, EnvYouSet};
use crate::secrets;
use crate::sglang::advice::{DefaultChanged, EnvDiff, FlagDiff};
use crate::sglang::rewrite::{Rewritten, remaining_error, rewrite};
use crate::sglang::{SglangArgs, envs, flagset, parse, release};

use super::cli::UpgradeArgs;
use super::context::Context;

/// The target's exact flag set: advice for "roughly that release" would be wrong advice.
fn target(v: &str) -> Result<&'static flagset::FlagSet, Fatal> {
    flagset::get(v.trim()).ok_or_else(|| {
        let known = release::KNOWN_VERSIONS;
        Fatal::usage(format!(
            "--to {v}: this build has no flag set for SGLang {v}; name an embedded release \
             exactly ({} … {}, with its .postN or rcN)",
            known[0],
            known[known.len() - 1]
        ))
    })
}

pub(crate) fn upgrade(a: &UpgradeArgs, tokens: Vec<OsString>, ctx: &Context) -> Result<i32, Fatal> {
    let to = target(&a.to)?;
    let sel = ctx.release();
    let args = parse(sel.flags, tokens);
    let config_text = args.config.as_ref().and_then(|c| {
        let file = std::path::Path::new(&c.file);
        crate::fsread::optional_string(file, crate::fsread::SGLANG_CONFIG)
    });
    let r = rewrite(&args, to, config_text.as_deref());
    let env = &ctx.env;
    let advice = advise(&args, &r, env, &sel.requested, a.show_secrets);
    if a.print_args {
        if let Some(why) = &advice.rejected_by_target {
            crate::out::report_line(&crate::out::escape(&format!(
                "sglang-launch: SGLang {} would still reject this line: {why}; change it by hand (exit 1)",
                advice.to
            )));
        }
        if !a.show_secrets {
            secrets::install_early(&args.tokens, env);
        }
        // Quoted as they are: `shell_join` hides the registered secrets.
        let real: Vec<String> = r
            .tokens
            .iter()
            .map(|t| crate::report::quote(std::ffi::OsStr::new(&*t.to_string_lossy())))
            .collect();
        let (masked, real) = (shell_join(&advice.command), real.join(" "));
        super::print_args(&masked, &real, a.show_secrets)?;
        return Ok(exit_code(&advice));
    }
    let text = if a.json {
        crate::report::upgrade::json(&advice)
    } else {
        crate::report::upgrade::human(&advice, a.all)
    };
    if a.show_secrets {
        super::print_verbatim(&text)?;
    } else {
        secrets::install_early(&args.tokens, env);
        if a.json {
            super::print_out(&text)?;
        } else {
            super::print_report(&text)?;
        }
    }
    Ok(exit_code(&advice))
}

/// 1 when the target's parser would still reject the line.
fn exit_code(advice: &Advice) -> i32 {
    if advice.rejected_by_target.is_some() {
        exit::BLOCKED
    } else {
        exit::OK
    }
}

fn advise(
    args: &SglangArgs,
    r: &Rewritten,
    env: &Env,
    requested: &str,
    show_secrets: bool,
) -> Advice {
    let (from, to) = (args.flags.version.as_str(), r.parsed.flags.version.as_str());
    let mut hide = secrets::redactor(args, env);
    hide.extend(secrets::secret_values(&r.parsed, env));
    let scrub = |t: &str| {
        if show_secrets {
            t.to_owned()
        } else {
            hide.redact(t)
        }
    };
    let command = if show_secrets {
        r.tokens
            .iter()
            .map(|t| t.to_string_lossy().into_owned())
            .collect()
    } else {
        secrets::mask_tokens_lossy(&r.parsed, &r.tokens)
    };
    let options = FlagDiff::between(args.flags, r.parsed.flags);
    let env_diff = EnvDiff::between(envs::for_version(from).0, envs::for_version(to).0);
    Advice {
        from: from.to_owned(),
        from_approximate: (requested != from).then(|| {
            format!("SGLang {requested} has no embedded flag set; {from}'s stands in for it")
        }),
        to: to.to_owned(),
        command: command.iter().map(|t| scrub(t)).collect(),
        edits: r.edits.clone(),
        config: r.config.as_ref().map(|(file, text)| ConfigAdvice {
            file: file.clone(),
            text: scrub(text),
            edits: r.config_edits.clone(),
        }),
        rejected_now: args.errors.first().map(|e| scrub(&e.to_string())),
        rejected_by_target: remaining_error(r).map(|e| scrub(&e.to_string())),
        env_you_set: env_you_set(&env_diff, env),
        defaults_you_rely_on: relied_on(&options.default_changed, args),
        options,
        env: env_diff,
    }
}

fn env_you_set(d: &EnvDiff, env: &Env) -> Vec<EnvYouSet> {
    let renamed = d.renamed.iter().map(|r| EnvYouSet {
        name: r.from.clone(),
        now_read_as: Some(r.to.clone()),
        converted: r.converted.clone(),
    });
    let removed = d.removed.iter().map(|n| EnvYouSet {
        name: n.clone(),
        now_read_as: None,
        converted: None,
    });
    renamed
        .chain(removed)
        .filter(|e| env.vars.contains_key(&e.name))
        .collect()
}

fn relied_on(changed: &[DefaultChanged], args: &SglangArgs) -> Vec<DefaultChanged> {
    if args.tokens.is_empty() {
        return Vec::new();
    }
    changed
        .iter()
        .filter(|d| !args.is_set(&d.option))
        .cloned()
        .collect()
}
