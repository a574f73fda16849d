//! Reading everything the evaluation needs, each path once: the interpreter and its packages,
//! the GPUs, the host, the starts kept on this machine, and the models the arguments name.

use crate::sglang::opt;
use std::path::{Path, PathBuf};

use super::{Error, Request};
use crate::facts::host::HostFacts;
use crate::facts::hub;
use crate::facts::model::{self, ModelFiles, ModelLoad, ModelProblem};
use crate::facts::{self, Env, Packages, Topology};
use crate::install::select;
use crate::observe::{Observation, store};
use crate::resolve::Speculative;
use crate::sglang::SglangArgs;

/// The interpreter that would run SGLang.
#[derive(Debug, Clone)]
pub struct Interpreter {
    /// Absolute path when found, else what the user asked for.
    pub(crate) path: PathBuf,
    pub(crate) found: bool,
}

/// Resolves `--python` (a path, or a name looked up on PATH); default: the environment the
/// launcher is installed in, else `python3` on PATH.
pub(crate) fn resolve_interpreter(python: Option<&Path>) -> Interpreter {
    if python.is_none()
        && let Some(path) = crate::install::site::default_interpreter()
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
pub(crate) fn load_topology(
    file: Option<&Path>,
    nvml_lib: Option<&Path>,
) -> Result<Topology, Error> {
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
pub(crate) struct Machine {
    pub(crate) interpreter: Interpreter,
    pub(crate) selected: select::Selected,
    pub(crate) topology: Topology,
    pub(crate) host: Option<HostFacts>,
    pub(crate) packages: Option<Packages>,
    /// Approximate mode: the flag set in use is not the user's release's (see
    /// [`crate::sglang::approx`]); the embedded releases around it.
    pub(crate) neighbours: Option<crate::sglang::approx::Bounds>,
    /// The starts kept in the observation store, oldest first (empty unless asked for).
    pub(crate) observations: Vec<Observation>,
}

pub(crate) fn machine(req: &Request) -> Result<Machine, Error> {
    let (interpreter, selected) = req.chosen.clone().unwrap_or_else(|| {
        let interpreter = resolve_interpreter(req.python.as_deref());
        let selected = select::select(
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

/// The models a line names (the target, then its separate draft), read before evaluation, a
/// Hub id not on disk fetched from the Hub (one session, one deadline, per check). The stages
/// derive facts from them under each round's arguments ([`Models::derive_for`]), reading
/// nothing: the one fix that names a model's place (FLAG009: `sglang serve`'s bare first value
/// as `--model-path`) names one read here.
pub(crate) struct Models {
    /// What each place holds (path, revision and download directory), or why it can't be read.
    files: Vec<(String, Result<ModelFiles, ModelProblem>)>,
    /// Facts by place and the options that shape them.
    derived: Vec<(String, ModelLoad)>,
}

/// The SGLang options [`ModelFiles::facts`] reads.
const SHAPING: [&str; 5] = [
    opt::JSON_MODEL_OVERRIDE_ARGS,
    opt::CONTEXT_LENGTH,
    opt::KV_CACHE_DTYPE,
    opt::QUANTIZATION,
    opt::DTYPE,
];

/// The target's path and revision.
fn target(args: &SglangArgs) -> Option<(&str, Option<&str>)> {
    Some((args.str(opt::MODEL_PATH)?, args.str(opt::REVISION)))
}

/// `sglang serve`'s bare first value, its model path, for a line naming no `--model-path`
/// (FLAG009's fix names it so).
fn serve_positional(args: &SglangArgs) -> Option<(&str, Option<&str>)> {
    let path = crate::rules::serve_model_path(&args.tokens)?;
    Some((path, args.str(opt::REVISION)))
}

/// Where a model is read from: its path, revision and `--download-dir`.
fn place(path: &str, revision: Option<&str>, args: &SglangArgs) -> String {
    let dir = args.str(opt::DOWNLOAD_DIR).unwrap_or_default();
    format!("{path}\0{}\0{dir}", revision.unwrap_or_default())
}

/// The place and the shaping options' values as given.
fn shaped(place: &str, args: &SglangArgs) -> String {
    SHAPING.iter().fold(place.to_owned(), |mut k, o| {
        k.push('\0');
        if let Some(v) = args.get(o) {
            k.push_str(&v.to_string());
        }
        k
    })
}

impl Models {
    /// No model read: a line the launcher does not plan.
    pub(crate) fn none() -> Models {
        Models {
            files: Vec::new(),
            derived: Vec::new(),
        }
    }

    /// All the reading a line's models need: each place once.
    pub(crate) fn gather(args: &SglangArgs, env: &Env, hub: hub::Settings) -> Models {
        let mut models = Models::none();
        let mut session = hub::Session::new(hub);
        if let Some((path, revision)) = target(args).or_else(|| serve_positional(args)) {
            models.fetch(&mut session, path, revision, env, args);
        }
        // The draft's path may come from the target's config (its MTP layers).
        models.derive_for(args);
        if let Some((path, revision)) = models.draft_of(args) {
            models.fetch(&mut session, &path, revision, env, args);
        }
        models
    }

    fn fetch(
        &mut self,
        session: &mut hub::Session,
        path: &str,
        revision: Option<&str>,
        env: &Env,
        args: &SglangArgs,
    ) {
        let key = place(path, revision, args);
        if self.files.iter().any(|(k, _)| *k == key) {
            return;
        }
        let read = match model::locate(path, revision, env, args) {
            Ok(dir) => Ok(ModelFiles::read(dir)),
            Err(not_local) => match session.snapshot(path, revision) {
                Ok(Some(dir)) => Ok(ModelFiles::read(dir)),
                Ok(None) => Err(not_local.into()),
                Err(problem) => Err(problem.into()),
            },
        };
        self.files.push((key, read));
    }

    /// The facts of the target and the separate draft under these arguments, where not derived
    /// yet (pure: from what [`Models::gather`] read).
    pub(crate) fn derive_for(&mut self, args: &SglangArgs) {
        if let Some((path, revision)) = target(args) {
            self.derive(place(path, revision, args), args);
        }
        if let Some((path, revision)) = self.draft_of(args) {
            self.derive(place(&path, revision, args), args);
        }
    }

    fn derive(&mut self, place: String, args: &SglangArgs) {
        let key = shaped(&place, args);
        if self.derived.iter().any(|(k, _)| *k == key) {
            return;
        }
        let load = match self.files.iter().find(|(k, _)| *k == place) {
            Some((_, Ok(files))) => files.facts(args),
            Some((_, Err(problem))) => ModelLoad {
                facts: None,
                problem: Some(problem.clone()),
            },
            None => return,
        };
        self.derived.push((key, load));
    }

    fn get(&self, place: String, args: &SglangArgs) -> Option<&ModelLoad> {
        let key = shaped(&place, args);
        self.derived.iter().find(|(k, _)| *k == key).map(|(_, m)| m)
    }

    /// The target model as derived (after [`Models::derive_for`]).
    pub(crate) fn main(&self, args: &SglangArgs) -> Option<&ModelLoad> {
        let (path, revision) = target(args)?;
        self.get(place(path, revision, args), args)
    }

    /// The separate speculative draft as derived (after [`Models::derive_for`]).
    pub(crate) fn draft(&self, args: &SglangArgs) -> Option<&ModelLoad> {
        let (path, revision) = self.draft_of(args)?;
        self.get(place(&path, revision, args), args)
    }

    /// The separate draft's path and revision, when the line runs one.
    fn draft_of<'a>(&self, args: &'a SglangArgs) -> Option<(String, Option<&'a str>)> {
        let main = self.main(args).and_then(|m| m.facts.as_ref());
        let path = Speculative::of(args, main)?.separate_draft()?.to_owned();
        Some((path, args.str(opt::SPECULATIVE_DRAFT_MODEL_REVISION)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sglang::{flagset, parse};

    fn args(extra: &[&str], model: &Path) -> SglangArgs {
        let mut tokens = vec![opt::MODEL_PATH.into(), model.as_os_str().to_owned()];
        tokens.extend(extra.iter().map(Into::into));
        parse(flagset::get("0.5.23").unwrap(), tokens)
    }

    /// The fix rounds and `--fit` change shaping options; the facts they get come from what was
    /// read first, even with the files gone.
    #[test]
    fn rounds_derive_facts_without_reading() {
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/models/Qwen__Qwen2.5-7B-Instruct");
        let dir = std::env::temp_dir().join(format!("sgl-gather-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for f in ["config.json", "model.safetensors.index.json"] {
            std::fs::copy(fixture.join(f), dir.join(f)).unwrap();
        }
        let env = Env::default();
        let first = args(&[], &dir);
        let mut models = Models::gather(&first, &env, hub::Settings::from_env(&env, false));
        std::fs::remove_dir_all(&dir).unwrap();
        let later = args(&[opt::CONTEXT_LENGTH, "4096"], &dir);
        models.derive_for(&later);
        let facts = |a| models.main(a).and_then(|m: &ModelLoad| m.facts.clone());
        assert_eq!(facts(&later).unwrap().context_length, Some(4096));
        assert_eq!(facts(&first).unwrap().context_length, Some(32768));
        assert!(facts(&later).unwrap().weight_bytes.is_some());
    }
}
