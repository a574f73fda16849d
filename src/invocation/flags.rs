//! `sglang-launch flags list|show|refresh`: the flag sets the launcher parses SGLang's
//! arguments with, and the cache of those read from installed releases it does not embed.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::cli::{FlagsCommand, FlagsShowArgs};
use super::context::Context;
use super::{print_line, print_out};
use crate::exit;
use crate::install::extract;
use crate::install::select::{self, FlagsFrom, Selected};
use crate::out::escape;
use crate::plan::Fatal;
use crate::sglang::flagset::{Action, FlagSet, KNOWN_VERSIONS};
use crate::sglang::release;

pub(crate) fn command(cmd: &FlagsCommand, ctx: &Context) -> Result<i32, Fatal> {
    match cmd {
        FlagsCommand::List => {
            print_out(&list())?;
            Ok(exit::OK)
        }
        FlagsCommand::Show(a) => show(a, ctx),
        FlagsCommand::Refresh(_) => refresh(ctx),
    }
}

fn list() -> String {
    let mut out = format!(
        "embedded ({} releases): {}\n",
        KNOWN_VERSIONS.len(),
        KNOWN_VERSIONS.join(" ")
    );
    let dir = extract::cache_dir();
    let mut cached: Vec<PathBuf> = dir
        .as_ref()
        .and_then(|d| std::fs::read_dir(d).ok())
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    cached.sort();
    // Paths are data: escaped, one line each.
    let where_ = dir.map_or("no cache directory".to_owned(), |d| {
        escape(&d.display().to_string())
    });
    let _ = writeln!(out, "extracted from installs ({where_}): {}", cached.len());
    for p in cached {
        let _ = writeln!(out, "  {}", escape(&p.display().to_string()));
    }
    out
}

fn show(a: &FlagsShowArgs, ctx: &Context) -> Result<i32, Fatal> {
    let wanted = ctx
        .settings()
        .sglang_version
        .as_deref()
        .filter(|v| !v.trim().is_empty());
    if let Some(v) = wanted.filter(|v| !release::looks_like_version(v)) {
        return Err(Fatal::usage(format!(
            "--sglang-version {v:?} is not a version number (like 0.5.23)"
        )));
    }
    let s = ctx.release();
    if a.json {
        print_out(&crate::out::json_safe(
            serde_json::to_string_pretty(s.flags).unwrap_or_default(),
        ))?;
    } else {
        // The provenance quotes a path and the extractor's error, each option line the
        // parser's names and values: data, escaped line by line.
        print_out(&format!("{}\n{}", escape(&provenance(s)), options(s.flags)))?;
    }
    Ok(exit::OK)
}

/// One line: which release, and where its flag set comes from.
fn provenance(s: &Selected) -> String {
    let from = match &s.flags_from {
        FlagsFrom::Embedded if s.source == select::VersionSource::Fallback => format!(
            "no flag set of its own; the embedded {} stands in{}",
            s.flags.version,
            s.extract_error
                .as_ref()
                .map(|e| format!(" (reading the installed parser failed: {e})"))
                .unwrap_or_default()
        ),
        FlagsFrom::Embedded => "embedded".to_owned(),
        FlagsFrom::Extracted { cache, ran_python } => format!(
            "read from the installed SGLang's parser{}{}",
            if *ran_python { " just now" } else { "" },
            cache
                .as_ref()
                .map(|c| format!(", cached in {}", c.display()))
                .unwrap_or_default()
        ),
    };
    let placed = (s.flags.reads_as())
        .map(|era| format!("; an untagged build, checked as a build after {era}"))
        .unwrap_or_default();
    format!(
        "SGLang {}: {} options, {from}{placed}",
        s.requested,
        s.flags.actions.len()
    )
}

fn options(flags: &FlagSet) -> String {
    let mut out = String::new();
    for a in &flags.actions {
        let _ = writeln!(out, "{}", escape(&describe(a)));
    }
    out
}

fn describe(a: &Action) -> String {
    let mut line = format!(
        "{}  {:?}/{:?}",
        a.option_strings.join(", "),
        a.kind,
        a.value_type
    );
    if !a.default.is_null() && !a.default_is_suppress {
        let _ = write!(line, "  default {}", a.default);
    }
    if let Some(c) = &a.choices {
        let c: Vec<String> = c.iter().map(ToString::to_string).collect();
        let _ = write!(line, "  choices {}", c.join("|"));
    }
    if let Some(new) = &a.deprecated_for {
        let _ = write!(line, "  deprecated for {new}");
    }
    line
}

fn refresh(ctx: &Context) -> Result<i32, Fatal> {
    let python = ctx.interpreter();
    let py: &Path = &python.path;
    if !python.found {
        crate::out::report_line(&format!(
            "sglang-launch: error: interpreter {} not found",
            py.display()
        ));
        return Ok(exit::NOT_FOUND);
    }
    let Some(found) = select::find_installed(Some(py)) else {
        crate::out::report_line(&format!(
            "sglang-launch: error: no SGLang installed for {}",
            py.display()
        ));
        return Ok(exit::NOT_FOUND);
    };
    let digest = match select::source_of(&found) {
        select::Source::Embedded => {
            print_line(&format!(
                "SGLang {} is embedded in this build: nothing to read",
                found.version
            ))?;
            return Ok(exit::OK);
        }
        select::Source::Install { digest, .. } => digest,
    };
    let install = extract::Install {
        version: &found.version,
        dist_info: &found.dist_info,
        digest: digest.as_deref(),
    };
    match extract::refresh(py, install) {
        Ok(x) => {
            let cache = x
                .cache
                .as_ref()
                .map_or("not cached (no writable cache directory)".to_owned(), |c| {
                    format!("cached in {}", c.display())
                });
            print_line(&format!(
                "SGLang {} ({}): {} options read from its parser, {cache}",
                found.version,
                found.dist_info.display(),
                x.flags.actions.len()
            ))?;
            Ok(exit::OK)
        }
        Err(e) => {
            crate::out::report_line(&format!(
                "sglang-launch: error: SGLang {}: {e}",
                found.version
            ));
            Ok(exit::BLOCKED)
        }
    }
}
