//! The run context: the launcher's settings with each one's source, the profile, the
//! environment, and the interpreter and SGLang release those settings choose. Built once per
//! run by the entry layer and handed to every command, so no two commands (or two steps of
//! one) can pick another release or interpreter for the same settings, or name another source.
//!
//! The interpreter and release are found on first use: `--mode off` and commands that never
//! parse SGLang's arguments read no install and run no Python. The completion engine builds its
//! context here too (from layers it reads leniently) and asks for the same release without
//! running Python.

use std::cell::OnceCell;
use std::ffi::OsString;
use std::path::Path;

use clap::ArgMatches;

use super::cli::ProfileArg;
use crate::facts::{Env, Topology};
use crate::install::select;
use crate::plan::{Fatal, Interpreter, Request, resolve_interpreter};
use crate::profile::{self, Profile, Search};
use crate::rules::RuleSettings;
use crate::settings::{self, Inputs, Resolved, Settings};
use crate::sglang::FlagSet;

/// The layers under the profile's (files, `SGLANG_LAUNCH_*`, the options typed), read once: a
/// command that plans several profiles combines each with them.
#[derive(Debug, Clone)]
pub(crate) struct Layers(Inputs);

impl Layers {
    /// The files, the environment and the options typed in `matches` (the innermost
    /// subcommand's: its options are the command-line layer).
    pub(crate) fn read(matches: &ArgMatches) -> Result<Layers, Fatal> {
        settings::inputs(innermost(matches))
            .map(Layers)
            .map_err(fatal)
    }

    /// The layers of a line being completed, `typed` its settings so far (`(key, value)`): a
    /// file, variable or value that cannot be read or is invalid is left out, never an error.
    pub(crate) fn lenient(typed: &[(&str, &str)]) -> Layers {
        Layers(settings::inputs_lenient(typed))
    }
}

fn innermost(matches: &ArgMatches) -> &ArgMatches {
    let mut m = matches;
    while let Some((_, sub)) = m.subcommand() {
        m = sub;
    }
    m
}

pub(crate) struct Context {
    pub(crate) resolved: Resolved,
    pub(crate) profile: Option<Profile>,
    /// The environment the launcher was started in (what the server would inherit).
    pub(crate) env: Env,
    interpreter: OnceCell<Interpreter>,
    release: OnceCell<select::Selected>,
}

impl Context {
    /// The settings merged with `profile`'s `[launcher]` table as the profile layer.
    pub(crate) fn new(layers: &Layers, profile: Option<Profile>) -> Result<Context, Fatal> {
        let mut inputs = layers.0.clone();
        inputs.profile = profile.as_ref().map(launcher_layer).transpose()?;
        let resolved = settings::combine(inputs).map_err(fatal)?;
        Ok(Context::of_resolved(resolved, profile))
    }

    fn of_resolved(resolved: Resolved, profile: Option<Profile>) -> Context {
        Context {
            resolved,
            profile,
            env: Env::from_process(),
            interpreter: OnceCell::new(),
            release: OnceCell::new(),
        }
    }

    /// The context of a line being completed ([`Layers::lenient`], and the profile it names):
    /// never an error; a profile that cannot be loaded or merged is left out.
    pub(crate) fn completing(layers: &Layers, profile: &ProfileArg) -> Context {
        let profile = load(profile).ok().flatten();
        Context::new(layers, profile)
            .or_else(|_| Context::new(layers, None))
            .unwrap_or_else(|_| Context::of_resolved(unmerged(), None))
    }

    /// The context of `matches`, with the profile they name (if any) loaded first.
    pub(crate) fn build(matches: &ArgMatches, profile: &ProfileArg) -> Result<Self, Fatal> {
        let profile = load(profile)?;
        Context::new(&Layers::read(matches)?, profile)
    }

    /// Takes over what `earlier` already found when the settings that choose it are the same
    /// (the drop-in form reads the release before the line's final parse).
    pub(crate) fn reusing(self, earlier: Option<Context>) -> Context {
        let Some(e) = earlier else { return self };
        let (a, b) = (self.settings(), e.settings());
        if a.python != b.python || a.sglang_version != b.sglang_version {
            return self;
        }
        Context {
            interpreter: e.interpreter,
            release: e.release,
            ..self
        }
    }

    /// Settings from nowhere in particular, no profile, an empty environment (unit tests).
    #[cfg(test)]
    pub(crate) fn of(settings: Settings) -> Context {
        let resolved = Resolved {
            settings,
            sources: Vec::new(),
        };
        Context {
            env: Env::default(),
            ..Context::of_resolved(resolved, None)
        }
    }

    pub(crate) fn settings(&self) -> &Settings {
        &self.resolved.settings
    }

    /// The interpreter that runs SGLang: `python`, else the one beside the launcher, else PATH's.
    pub(crate) fn interpreter(&self) -> &Interpreter {
        self.interpreter
            .get_or_init(|| resolve_interpreter(self.settings().python.as_deref()))
    }

    /// The release in use: `sglang-version`, else the interpreter's SGLang, else the newest.
    pub(crate) fn release(&self) -> &select::Selected {
        self.release
            .get_or_init(|| self.choose_release(select::select))
    }

    /// [`Self::release`] found without running Python (a completion's TAB must be instant): the
    /// same choice, except that an install that is not its release is read from the flag-set
    /// cache only.
    pub(crate) fn release_without_python(&self) -> select::Selected {
        match self.release.get() {
            Some(chosen) => chosen.clone(),
            None => self.choose_release(select::select_without_python),
        }
    }

    /// `sglang-version`, with the interpreter it would otherwise be read from (when found).
    fn choose_release(
        &self,
        how: fn(Option<&str>, Option<&Path>) -> select::Selected,
    ) -> select::Selected {
        let python = self.interpreter();
        how(
            self.settings().sglang_version.as_deref(),
            python.found.then_some(python.path.as_path()),
        )
    }

    /// The flag set SGLang's arguments are parsed with.
    pub(crate) fn flags(&self) -> &'static FlagSet {
        self.release().flags
    }

    /// Where `sglang-version` comes from, as the report names it; `None` when unset.
    pub(crate) fn version_label(&self) -> Option<String> {
        self.settings().sglang_version.as_ref()?;
        self.resolved.source("sglang-version").map(label)
    }

    /// A planning request for SGLang's `tokens`, in the environment `env`, on the GPUs already
    /// read (if any), with this context's interpreter and release.
    pub(crate) fn request(
        &self,
        tokens: Vec<OsString>,
        env: Env,
        gpus: Option<Topology>,
    ) -> Request {
        let s = self.settings();
        Request {
            tokens,
            gpus,
            topology: s.topology.clone(),
            sglang_version: s.sglang_version.clone(),
            sglang_version_from: self.version_label(),
            python: s.python.clone(),
            chosen: Some((self.interpreter().clone(), self.release().clone())),
            nvml_lib: s.nvml_lib.clone(),
            settings: RuleSettings {
                // Every layer drops empty items (`--allow AR001,` names one rule).
                allow: s.allow.clone(),
                deny: s.deny.clone(),
                strict: s.strict,
            },
            no_fix: s.no_fix,
            // Planning for another machine from its topology file stays offline unless asked.
            hub: !s.offline && (s.topology.is_none() || s.online),
            fit: s.fit,
            fit_request_tokens: s.fit_request_tokens,
            env,
            env_changes: Default::default(),
            pass_through: None,
            observations: !s.ignore_observed,
        }
    }
}

/// The built-in defaults, no source named (not reached: checked layers always merge).
fn unmerged() -> Resolved {
    Resolved {
        settings: Settings::default(),
        sources: Vec::new(),
    }
}

/// The profile `--profile` / `SGLANG_LAUNCH_PROFILE` names, if any.
fn load(arg: &ProfileArg) -> Result<Option<Profile>, Fatal> {
    let Some(name) = arg.profile.as_deref().filter(|n| !n.trim().is_empty()) else {
        return Ok(None);
    };
    let search = Search::from_process(arg.profiles_dir.dir.as_deref());
    profile::load(&search, name)
        .map(Some)
        .map_err(|e| Fatal::usage(e.0))
}

/// The profile's `[launcher]` table, as the profile layer of the layered settings (a bad
/// `mode` value is refused there, naming the profile).
fn launcher_layer(p: &Profile) -> Result<(String, toml::Table), Fatal> {
    let table = toml::Table::try_from(&p.launcher)
        .map_err(|e| Fatal::usage(format!("profile {}: [launcher]: {e}", p.name)))?;
    Ok((p.name.clone(), table))
}

/// A settings error: it names its file or variable; say where the keys are documented.
fn fatal(message: String) -> Fatal {
    Fatal::usage(message).with_note(
        "(settings and their types: docs/config.md; `sglang-launch config show` prints the merged ones)",
    )
}

/// A setting's source (as `config show` names it) as the report names it: the option, the
/// variable, the profile, or `config FILE`.
fn label(source: &str) -> String {
    let layer = settings::Source::CommandLine.to_string();
    match source {
        s if s == layer => "--sglang-version".to_owned(),
        s => match s.strip_prefix("env ") {
            Some(var) => var.to_owned(),
            None if s.starts_with("profile ") => s.to_owned(),
            None => format!("config {s}"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_name_the_option_the_variable_the_profile_or_the_file() {
        assert_eq!(label("command line"), "--sglang-version");
        assert_eq!(
            label("env SGLANG_LAUNCH_SGLANG_VERSION"),
            "SGLANG_LAUNCH_SGLANG_VERSION"
        );
        assert_eq!(label("profile gpu"), "profile gpu");
        assert_eq!(
            label("/etc/sglang-launch/config.toml"),
            "config /etc/sglang-launch/config.toml"
        );
    }
}
