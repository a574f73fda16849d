//! Reading everything the evaluation needs, each path once: the interpreter and its packages,
//! the GPUs, the host, the starts kept on this machine, and the models the arguments name.

use std::path::{Path, PathBuf};

use super::{Error, Request};
use crate::facts::host::HostFacts;
use crate::facts::hub;
use crate::facts::model::{self, ModelLoad, ModelProblem, Unavailable};
use crate::facts::{self, Env, Packages, Topology};
use crate::observe::{Observation, store};
use crate::resolve::Speculative;
use crate::sglang::{SglangArgs, version};

/// The interpreter that would run SGLang.
#[derive(Debug, Clone)]
pub struct Interpreter {
    /// Absolute path when found, else what the user asked for.
    pub path: PathBuf,
    pub found: bool,
}

/// Resolves `--python` (a path, or a name looked up on PATH); default: the environment the
/// launcher is installed in, else `python3` on PATH.
pub fn resolve_interpreter(python: Option<&Path>) -> Interpreter {
    if python.is_none()
        && let Some(path) = crate::sglang::site::default_interpreter()
    {
        return Interpreter { path, found: true };
    }
    let wanted = python.unwrap_or(Path::new("python3"));
    if wanted.components().count() > 1 {
        return Interpreter {
            path: wanted.to_path_buf(),
            found: wanted.is_file(),
        };
    }
    match which::which(wanted) {
        Ok(path) => Interpreter { path, found: true },
        Err(_) => Interpreter {
            path: wanted.to_path_buf(),
            found: false,
        },
    }
}

/// Reads the GPUs: the topology file when given, else NVML.
pub fn load_topology(file: Option<&Path>, nvml_lib: Option<&Path>) -> Result<Topology, Error> {
    match file {
        Some(path) => Ok(Topology::load(path)?),
        None => {
            let lib = nvml_lib
                .map(Path::to_path_buf)
                .or_else(facts::nvml::default_lib_path);
            Ok(facts::nvml::detect(lib.as_deref())?)
        }
    }
}

/// Facts that do not depend on the SGLang arguments.
pub struct Machine {
    pub interpreter: Interpreter,
    pub selected: version::Selected,
    pub topology: Topology,
    pub host: Option<HostFacts>,
    pub packages: Option<Packages>,
    /// Approximate mode: the flag set in use is not the user's release's (see
    /// [`crate::sglang::approx`]); the embedded releases around it.
    pub neighbours: Option<Vec<&'static str>>,
    /// The starts kept in the observation store, oldest first (empty unless asked for).
    pub observations: Vec<Observation>,
}

pub fn machine(req: &Request) -> Result<Machine, Error> {
    let (interpreter, selected) = req.chosen.clone().unwrap_or_else(|| {
        let interpreter = resolve_interpreter(req.python.as_deref());
        let selected = version::select(
            req.sglang_version.as_deref(),
            interpreter.found.then_some(interpreter.path.as_path()),
        );
        (interpreter, selected)
    });
    let topology = match &req.gpus {
        Some(t) => t.clone(),
        None => load_topology(req.topology.as_deref(), req.nvml_lib.as_deref())?,
    };
    // A topology file describes its machine, host facts and packages included when `detect`
    // recorded them. Otherwise packages come from the local interpreter, except when planning
    // offline for another machine (`--topology` with `--sglang-version`) or for an interpreter
    // that does not exist; host facts only from this host. `None` keeps their rules silent.
    let recorded = topology.host.as_ref();
    let offline = req.topology.is_some() && req.sglang_version.is_some();
    let packages = recorded.and_then(|h| h.installed()).or_else(|| {
        (!offline && interpreter.found)
            .then(|| Packages::detect(Some(interpreter.path.as_path())).with_toolkit(&req.env))
    });
    let host = match req.topology {
        Some(_) => recorded.and_then(|h| h.host_facts()),
        None => Some(HostFacts::probe()),
    };
    // Nothing found and nothing asked for is not a release to approximate: the newest flag set
    // is assumed (VER002 says so), and the launcher cannot start SGLang there anyway.
    let neighbours = selected.neighbours();
    let observations = if req.observations {
        store::all()
    } else {
        Vec::new()
    };
    Ok(Machine {
        observations,
        neighbours,
        host,
        interpreter,
        selected,
        topology,
        packages,
    })
}

/// Models read so far, by path and the arguments that shape their facts: a fix round that
/// names the same model with the same such arguments reads nothing again. A Hub id not on
/// disk is fetched from the Hub (one session, one deadline, per check).
pub struct Models {
    loaded: Vec<(String, ModelLoad)>,
    hub: hub::Session,
}

/// The SGLang options [`model::load`] reads besides the path.
const SHAPING: [&str; 6] = [
    "--revision",
    "--json-model-override-args",
    "--context-length",
    "--kv-cache-dtype",
    "--quantization",
    "--dtype",
];

/// The cache key: the path, and the shaping options' values as given.
fn key(path: &str, args: &SglangArgs) -> String {
    SHAPING.iter().fold(path.to_owned(), |mut k, o| {
        k.push('\0');
        if let Some(v) = args.get(o) {
            k.push_str(&v.to_string());
        }
        k
    })
}

impl Models {
    pub fn new(hub: hub::Settings) -> Models {
        Models {
            loaded: Vec::new(),
            hub: hub::Session::new(hub),
        }
    }

    /// Reads the target and the separate draft the arguments name, where not read yet.
    pub fn read_for(&mut self, args: &SglangArgs, env: &Env) {
        if let Some(path) = args.str("--model-path") {
            self.read(path, args.str("--revision"), env, args);
        }
        if let Some(path) = self.draft_path(args) {
            let revision = args.str("--speculative-draft-model-revision");
            self.read(&path, revision, env, args);
        }
    }

    fn read(&mut self, path: &str, revision: Option<&str>, env: &Env, args: &SglangArgs) {
        let key = key(path, args);
        if self.loaded.iter().any(|(k, _)| *k == key) {
            return;
        }
        let mut load = model::load_at(path, revision, env, args);
        let not_local = matches!(
            load.problem,
            Some(ModelProblem::Unavailable(
                Unavailable::NotCached { .. } | Unavailable::RevisionNotCached { .. }
            ))
        );
        if not_local {
            match self.hub.snapshot(path, revision) {
                Ok(Some(dir)) => load = model::load_dir(dir, args),
                Ok(None) => {}
                Err(problem) => {
                    load = ModelLoad {
                        facts: None,
                        problem: Some(problem.into()),
                    }
                }
            }
        }
        self.loaded.push((key, load));
    }

    fn get(&self, path: &str, args: &SglangArgs) -> Option<&ModelLoad> {
        let key = key(path, args);
        self.loaded.iter().find(|(k, _)| *k == key).map(|(_, m)| m)
    }

    /// The target model as read (after [`Models::read_for`]).
    pub fn main(&self, args: &SglangArgs) -> Option<&ModelLoad> {
        self.get(args.str("--model-path")?, args)
    }

    /// The separate speculative draft as read (after [`Models::read_for`]).
    pub fn draft(&self, args: &SglangArgs) -> Option<&ModelLoad> {
        self.get(&self.draft_path(args)?, args)
    }

    fn draft_path(&self, args: &SglangArgs) -> Option<String> {
        let main = self.main(args).and_then(|m| m.facts.as_ref());
        Speculative::of(args, main)?
            .separate_draft()
            .map(str::to_owned)
    }
}
