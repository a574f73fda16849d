//! sglang-launch: a drop-in front end for `python -m sglang.launch_server`.
//!
//! The modules are the pipeline's layers, and dependencies point down it only (README
//! "Architecture"; `tests/it/structure.rs` checks it): `out` and `fsread` (every write and every
//! file read) → `sglang` (SGLang's argument model per release, from embedded data) → `install`
//! (the installed SGLang and its Python) → `facts` (GPUs, host, packages, model files, the Hub)
//! → `observe` (starts kept on this machine) → `profile`, `secrets` → `resolve` (the server SGLang
//! will run) → `rules` (the catalogue and the one finding type) → `plan` (reading first, then
//! fixes to a fixpoint, memory, the plan/v1 projection) → `report`, `exec`, `service` →
//! `settings` (layered launcher settings) → `invocation` (the run context and the commands) →
//! `complete`, `docs`.

pub(crate) mod complete;
pub mod docs;
pub(crate) mod exec;
pub mod facts;
pub(crate) mod fsread;
pub mod install;
pub mod invocation;
pub(crate) mod observe;
pub(crate) mod out;
pub mod plan;
pub(crate) mod profile;
pub mod report;
pub mod resolve;
pub mod rules;
pub(crate) mod secrets;
pub(crate) mod service;
pub mod settings;
pub mod sglang;

/// Exit codes (documented in README.md and docs/plan-v1.md).
pub mod exit {
    /// Launchable (check/plan), or a successful command.
    pub const OK: i32 = 0;
    /// `check`/`plan`: blocked by an error finding (or a warning under `--strict`), as a
    /// linter says it.
    pub const BLOCKED: i32 = 1;
    /// The launcher's own usage or input error (unreadable topology file, unknown option, …).
    pub const USAGE: i32 = 2;
    /// `wait-ready`: the server did not answer in time, or its process exited first.
    pub const NOT_READY: i32 = 3;
    /// `run` and the drop-in form: the NVIDIA driver could not be read (not loaded yet at boot,
    /// or not installed); nothing was launched. sysexits' EX_TEMPFAIL: a service manager may
    /// try again, as the generated unit does.
    pub const NO_DRIVER: i32 = 75;
    /// `run` and the drop-in form: the launch was refused for its configuration (error
    /// findings, a profile for other hardware); sysexits' EX_CONFIG, so a supervisor can tell a
    /// refusal (do not restart) from SGLang's own crash (exit 1).
    pub const CONFIG: i32 = 78;
    /// The interpreter or SGLang itself could not be found; nothing was launched.
    pub const NOT_FOUND: i32 = 127;
}
