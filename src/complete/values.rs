//! Values for a launcher option or argument: rule codes and names, embedded SGLang releases,
//! profile names, a closed set of choices, or paths (the shell lists those itself).

use std::path::PathBuf;

use clap::{Arg, ValueHint};

use super::reply::{Mode, Reply};
use crate::profile::Search;
use crate::rules;
use crate::settings::{self, Inputs, Settings, files};
use crate::sglang::flagset::KNOWN_VERSIONS;

/// The launcher options typed on the line that change what is offered later on it.
#[derive(Debug, Default)]
pub struct Line {
    sglang_version: Option<String>,
    python: Option<PathBuf>,
    profile: Option<String>,
    profiles_dir: Option<PathBuf>,
}

impl Line {
    pub fn set(&mut self, id: &str, value: &str) {
        match id {
            "sglang_version" => self.sglang_version = Some(value.to_owned()),
            "python" => self.python = Some(value.into()),
            "profile" => self.profile = Some(value.to_owned()),
            "dir" => self.profiles_dir = Some(value.into()),
            _ => {}
        }
    }

    pub fn profiles(&self) -> Search {
        Search::from_process(self.profiles_dir.as_deref())
    }

    /// The release and interpreter the line would use: typed here, else the layered settings
    /// (config files, the named profile, `SGLANG_LAUNCH_*`), as `run` would merge them.
    pub fn release(&self) -> (Option<String>, Option<PathBuf>) {
        let merged = self.layered();
        (
            self.sglang_version.clone().or(merged.sglang_version),
            self.python.clone().or(merged.python),
        )
    }

    /// Unreadable or invalid layers are skipped: completion never fails, `run` reports them.
    fn layered(&self) -> Settings {
        let files = files::paths(|n| std::env::var_os(n))
            .iter()
            .filter_map(|p| files::read(p).ok().flatten())
            .collect();
        let env = settings::env::layers(|n| std::env::var(n).ok()).unwrap_or_default();
        let name = self
            .profile
            .clone()
            .or_else(|| std::env::var("SGLANG_LAUNCH_PROFILE").ok())
            .filter(|n| !n.trim().is_empty());
        let profile = name.and_then(|n| {
            let mut table = crate::profile::launcher_table(&self.profiles(), &n).ok()?;
            // Read by the profile schema, but no launcher setting.
            table.remove("mode");
            Some((n, table))
        });
        let inputs = Inputs {
            files,
            profile,
            env,
            cli: None,
        };
        settings::combine(inputs)
            .map(|r| r.settings)
            .unwrap_or_default()
    }
}

/// Values for `arg`, the word being `prefix` + `current`.
pub fn of(arg: &Arg, line: &Line, prefix: &str, current: &str) -> Reply {
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
