//! Values for a launcher option or argument: rule codes and names, embedded SGLang releases,
//! profile names, a closed set of choices, or paths (the shell lists those itself).

use std::path::PathBuf;

use clap::{Arg, ValueHint};

use super::reply::{Mode, Reply};
use crate::invocation::cli::{ProfileArg, ProfilesDir};
use crate::invocation::context::{Context, Layers};
use crate::profile::Search;
use crate::rules;
use crate::settings::registry;
use crate::sglang::flagset::KNOWN_VERSIONS;

/// The launcher options typed on the line that change what is offered later on it.
#[derive(Debug, Default)]
pub(crate) struct Line {
    /// Settings typed so far, by key (`sglang-version`, `python`, …), in order.
    settings: Vec<(&'static str, String)>,
    profile: Option<String>,
    profiles_dir: Option<PathBuf>,
}

impl Line {
    pub(crate) fn set(&mut self, id: &str, value: &str) {
        match id {
            "profile" => self.profile = Some(value.to_owned()),
            "dir" => self.profiles_dir = Some(value.into()),
            // A setting's option: its arg id is its key, dashes as underscores.
            _ => {
                let key = registry::settings().find(|(k, _)| k.replace('-', "_") == id);
                if let Some((key, _)) = key {
                    self.settings.push((key, value.to_owned()));
                }
            }
        }
    }

    pub(crate) fn profiles(&self) -> Search {
        Search::from_process(self.profiles_dir.as_deref())
    }

    /// The run context the line would get: its settings merged over the config files, the
    /// profile it names and `SGLANG_LAUNCH_*` as `run` merges them (what cannot be read is
    /// left out: completion never fails; the run reports it). Nothing is run.
    pub(crate) fn context(&self) -> Context {
        let typed: Vec<(&str, &str)> = self
            .settings
            .iter()
            .map(|(k, v)| (*k, v.as_str()))
            .collect();
        let profile = ProfileArg {
            profile: self
                .profile
                .clone()
                .or_else(|| std::env::var("SGLANG_LAUNCH_PROFILE").ok()),
            profiles_dir: ProfilesDir {
                dir: self.profiles_dir.clone(),
            },
        };
        Context::completing(&Layers::lenient(&typed), &profile)
    }
}

/// Values for `arg`, the word being `prefix` + `current`.
pub(crate) fn of(arg: &Arg, line: &Line, prefix: &str, current: &str) -> Reply {
    match arg.get_id().as_str() {
        "allow" | "deny" => return rule_list(prefix, current),
        "rule" => return Reply::words(prefix, current, rule_items()),
        "sglang_version" | "to" => return Reply::words(prefix, current, versions()),
        "profile" => return Reply::words(prefix, current, profiles(line)),
        // `profiles show NAME`
        "name" if arg.is_positional() => return Reply::words(prefix, current, profiles(line)),
        _ => {}
    }
    let choices: Vec<(String, String)> = arg
        .get_possible_values()
        .iter()
        .filter(|v| !v.is_hide_set())
        .map(|v| (v.get_name().to_owned(), about(v.get_help())))
        .collect();
    if !choices.is_empty() {
        return Reply::words(prefix, current, choices);
    }
    match arg.get_value_hint() {
        ValueHint::DirPath => Reply::paths(Mode::Dirs, prefix, current),
        ValueHint::FilePath | ValueHint::AnyPath | ValueHint::ExecutablePath => {
            Reply::paths(Mode::Files, prefix, current)
        }
        // A port, a URL, a name: nothing to offer, and no file names either.
        _ => Reply::words(prefix, current, []),
    }
}

fn about(help: Option<&clap::builder::StyledStr>) -> String {
    help.map(|h| h.to_string()).unwrap_or_default()
}

/// Every rule's code (described by its name) and name (by its code).
fn rule_items() -> Vec<(String, String)> {
    let all = rules::all();
    let codes = all.iter().map(|r| (r.code.to_owned(), r.name.to_owned()));
    let names = all.iter().map(|r| (r.name.to_owned(), r.code.to_owned()));
    codes.chain(names).collect()
}

/// `--allow A,B,…`: the items before the last comma stay as they are, and a rule already
/// listed (by its code or its name) is not offered again.
fn rule_list(prefix: &str, current: &str) -> Reply {
    let (done, last) = current
        .rsplit_once(',')
        .map_or(("", current), |(d, l)| (d, l));
    let prefix = if done.is_empty() && !current.contains(',') {
        prefix.to_owned()
    } else {
        format!("{prefix}{done},")
    };
    let listed: Vec<&str> = done.split(',').map(str::trim).collect();
    let items = rule_items().into_iter().filter(|(word, other)| {
        !listed.contains(&word.as_str()) && !listed.contains(&other.as_str())
    });
    Reply::words(&prefix, last, items)
}

/// The embedded releases, newest first.
fn versions() -> Vec<(String, String)> {
    KNOWN_VERSIONS
        .iter()
        .rev()
        .map(|v| ((*v).to_owned(), String::new()))
        .collect()
}

/// The profiles `profiles list` finds, described by where each comes from.
fn profiles(line: &Line) -> Vec<(String, String)> {
    line.profiles().names()
}
