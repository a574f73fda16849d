//! Reading a profile and the ones it extends, and merging them parent first.

use std::collections::BTreeMap;

use serde::Serialize;
use serde::de::DeserializeOwned;
use toml::Spanned;

use super::error::{ProfileError, line_col};
use super::schema::{Hardware, Launcher, ProfileFile};
use super::source::{Found, Search};

/// One `[args]` or `[env]` entry, with the file and position it came from.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Setting {
    pub(crate) key: String,
    pub(crate) value: toml::Value,
    /// The file that set it (after `extends`, the last one).
    pub(crate) origin: String,
    /// `origin:line:col` of the key, for messages.
    pub(crate) at: String,
}

impl Setting {
    /// The value as a command line or an environment has it (a string as is, else TOML's text).
    pub(crate) fn text(&self) -> String {
        match &self.value {
            toml::Value::String(v) => v.clone(),
            other => other.to_string(),
        }
    }
}

/// A profile after `extends`: what it sets and where each part comes from.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    pub(crate) name: String,
    pub(crate) description: Option<String>,
    /// The files read, the named profile first, then what it extends.
    pub(crate) chain: Vec<String>,
    pub(crate) args: Vec<Setting>,
    pub(crate) env: Vec<Setting>,
    pub(crate) launcher: Launcher,
    pub(crate) hardware: Hardware,
    /// `launcher.KEY` / `hardware.KEY` → the file that set it.
    pub(crate) from: BTreeMap<String, String>,
}

/// Finds and merges `name` and everything it extends.
pub(crate) fn load(search: &Search, name: &str) -> Result<Profile, ProfileError> {
    let mut files: Vec<(Found, ProfileFile)> = Vec::new();
    let mut wanted = name.to_owned();
    loop {
        let found = match search.find(&wanted)? {
            Some(f) => f,
            None => return Err(missing(search, &wanted, files.last())),
        };
        let file = parse(&found)?;
        let parent = file.extends.as_ref().map(|e| e.get_ref().clone());
        files.push((found, file));
        let Some(parent) = parent else { break };
        if let Some(i) = files.iter().position(|(f, _)| f.name == parent) {
            return Err(cycle(&files, i));
        }
        wanted = parent;
    }
    Ok(merge(name, &files))
}

/// Parses one file; unknown keys and wrong types are refused with their position.
pub(crate) fn parse(found: &Found) -> Result<ProfileFile, ProfileError> {
    toml::from_str(&found.text).map_err(|e| {
        let what = e.message().trim_end();
        let hint = "see the README's Profiles section for the schema";
        ProfileError::at(
            &found.origin,
            &found.text,
            e.span(),
            &format!("{what}; {hint}"),
        )
    })
}

fn missing(search: &Search, name: &str, child: Option<&(Found, ProfileFile)>) -> ProfileError {
    let names: Vec<String> = search.names().into_iter().map(|(n, _)| n).collect();
    let hint = names
        .iter()
        .map(|n| (strsim::jaro_winkler(name, n), n))
        .filter(|(s, _)| *s > 0.75)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, n)| format!(" (did you mean {n}?)"))
        .unwrap_or_default();
    let dirs: Vec<String> = search
        .dirs
        .iter()
        .map(|d| d.display().to_string())
        .collect();
    let message = format!(
        "no profile named {name:?}{hint}; available: {}. Searched {} and the shipped profiles \
         (`sglang-launch profiles list`)",
        names.join(", "),
        dirs.join(", ")
    );
    match child {
        Some((found, file)) => {
            let span = file.extends.as_ref().map(Spanned::span);
            ProfileError::at(
                &found.origin,
                &found.text,
                span,
                &format!("extends: {message}"),
            )
        }
        None => ProfileError(message),
    }
}

fn cycle(files: &[(Found, ProfileFile)], from: usize) -> ProfileError {
    let mut names: Vec<&str> = files[from..].iter().map(|(f, _)| f.name.as_str()).collect();
    names.push(&files[from].0.name);
    let (last, file) = files.last().expect("a cycle has a file");
    let span = file.extends.as_ref().map(Spanned::span);
    let message = format!(
        "extends forms a cycle: {}; remove one of these `extends`",
        names.join(" → ")
    );
    ProfileError::at(&last.origin, &last.text, span, &message)
}

/// Parent first, so the child's keys win; each key remembers its file.
fn merge(name: &str, files: &[(Found, ProfileFile)]) -> Profile {
    let mut args = Vec::new();
    let mut env = Vec::new();
    let mut launcher = toml::Table::new();
    let mut hardware = toml::Table::new();
    let mut from = BTreeMap::new();
    let mut description = None;
    for (found, file) in files.iter().rev() {
        description = file.description.clone().or(description);
        overlay_settings(&mut args, &file.args, found);
        overlay_settings(&mut env, &file.env, found);
        overlay_table(&mut launcher, &file.launcher, "launcher", found, &mut from);
        overlay_table(&mut hardware, &file.hardware, "hardware", found, &mut from);
    }
    Profile {
        name: name.to_owned(),
        description,
        chain: files.iter().map(|(f, _)| f.origin.clone()).collect(),
        args,
        env,
        launcher: typed(launcher),
        hardware: typed(hardware),
        from,
    }
}

/// Entries in file order; a key already set by a parent is replaced where it stood.
fn overlay_settings(
    into: &mut Vec<Setting>,
    table: &BTreeMap<Spanned<String>, Spanned<toml::Value>>,
    found: &Found,
) {
    let mut entries: Vec<_> = table.iter().collect();
    entries.sort_by_key(|(k, _)| k.span().start);
    for (key, value) in entries {
        let (line, col) = line_col(&found.text, key.span().start);
        let setting = Setting {
            key: key.get_ref().clone(),
            value: value.get_ref().clone(),
            origin: found.origin.clone(),
            at: format!("{}:{line}:{col}", found.origin),
        };
        match into.iter_mut().find(|s| s.key == setting.key) {
            Some(old) => *old = setting,
            None => into.push(setting),
        }
    }
}

fn overlay_table<T: Serialize>(
    into: &mut toml::Table,
    part: &T,
    section: &str,
    found: &Found,
    from: &mut BTreeMap<String, String>,
) {
    let table = toml::Table::try_from(part).expect("a parsed section serializes");
    for (k, v) in table {
        from.insert(format!("{section}.{k}"), found.origin.clone());
        into.insert(k, v);
    }
}

/// The merged table back in its typed form: every part was already checked on its own.
fn typed<T: DeserializeOwned + Default>(table: toml::Table) -> T {
    toml::Value::Table(table).try_into().unwrap_or_default()
}
