//! The resolved model of the server: what SGLang will run, worked out once per round of fixes
//! from the parsed arguments, the version, the GPUs and the model. Rules and the memory planner
//! read this and nothing else; it is pure (no I/O: every file was read before).
//!
//! [`Facts`] is what was gathered, [`Server`] what SGLang will make of it, and [`Context`] the
//! pair that checks and the planner take.

pub(crate) mod a2a;
pub(crate) mod allreduce;
pub(crate) mod args;
pub(crate) mod attention;
pub(crate) mod choice;
pub(crate) mod decided;
pub mod defaults;
pub(crate) mod graphs;
pub(crate) mod inputs;
pub(crate) mod moe;
pub(crate) mod multimodal;
pub(crate) mod nemotron_h;
pub(crate) mod quant_copy;
pub(crate) mod server;
pub(crate) mod specparams;
pub(crate) mod switches;
pub mod vision;

pub(crate) use allreduce::CustomAllReduce;
pub use attention::legacy_mla;
pub(crate) use attention::no_buffer_family;
pub(crate) use attention::{CHOSEN_IN_SERVER_ARGS, DETERMINISTIC_FIRST};
pub(crate) use defaults::{Family, SglangDefaults};
pub(crate) use server::{Backends, ChoiceSource, DraftSource, TpGroup};
pub use server::{Chosen, Server, Speculative};
pub(crate) use specparams::SpecParams;
pub(crate) use switches::{Switch, Switches};

use crate::facts::host::HostFacts;
use crate::facts::model::{ModelFacts, ModelLoad};
use crate::facts::{Env, Packages, Topology};
use crate::sglang::SglangArgs;

/// The compute-capability majors a release's `is_blackwell()` / `is_blackwell_supported()`
/// count (SGLang's Blackwell gates): SM10x until 0.5.4.post1, SM10x and SM12x until
/// 0.5.8.post1, SM10x–SM12x from 0.5.9.
pub(crate) fn blackwell_majors(version: &str) -> &'static [u32] {
    use crate::sglang::release::at_least;
    if !at_least(version, "0.5.4.post2") {
        &[10]
    } else if !at_least(version, "0.5.9") {
        &[10, 12]
    } else {
        &[10, 11, 12]
    }
}

/// Everything gathered for one evaluation: borrowed, already read.
#[derive(Clone, Copy)]
pub struct Facts<'a> {
    /// The SGLang version whose flag set is in use.
    pub version: &'a str,
    pub args: &'a SglangArgs,
    pub env: &'a Env,
    pub topology: &'a Topology,
    /// Topology indices the server will use, in launch order.
    pub gpus: &'a [u32],
    pub model: Option<&'a ModelFacts>,
    /// The speculative draft model as read (`None`: no separate draft path).
    pub draft: Option<&'a ModelLoad>,
    /// Facts about the host outside the GPUs (`/dev/shm`, container, RDMA). `None`: unknown,
    /// and the rules that need them stay silent.
    pub host: Option<&'a HostFacts>,
    /// The Python packages installed for the interpreter (or recorded in the topology file).
    /// `None`: unknown (offline planning without a record), and the PKG rules stay silent.
    pub packages: Option<&'a Packages>,
}

/// What checks and the memory planner look at: the facts and the server resolved from them.
pub struct Context<'a> {
    pub(crate) version: &'a str,
    pub(crate) args: &'a SglangArgs,
    pub(crate) env: &'a Env,
    pub(crate) topology: &'a Topology,
    pub(crate) gpus: &'a [u32],
    pub(crate) model: Option<&'a ModelFacts>,
    pub(crate) draft: Option<&'a ModelLoad>,
    pub(crate) host: Option<&'a HostFacts>,
    pub(crate) packages: Option<&'a Packages>,
    pub server: Server,
}

impl<'a> Context<'a> {
    /// Resolves the server for these facts.
    pub fn new(f: Facts<'a>) -> Context<'a> {
        Context {
            server: Server::resolve(&f),
            version: f.version,
            args: f.args,
            env: f.env,
            topology: f.topology,
            gpus: f.gpus,
            model: f.model,
            draft: f.draft,
            host: f.host,
            packages: f.packages,
        }
    }

    /// The same facts and resolved server, judged by another release's checks.
    pub(crate) fn at_version(&self, version: &'a str) -> Context<'a> {
        Context {
            version,
            server: self.server.clone(),
            ..*self
        }
    }

    /// Marks the values whose options a fix of this run set (`fixed`) as [`Source::Fix`].
    pub(crate) fn fixed_by(mut self, fixed: &[String]) -> Context<'a> {
        self.server = self.server.fixed_by(self.args, fixed);
        self
    }

    /// SGLang builds the model's vision tower (see [`multimodal::served`]).
    pub(crate) fn multimodal_served(&self) -> bool {
        multimodal::served(self.version, self.args, self.model)
    }

    /// The draft model's facts, when it was read.
    pub(crate) fn draft_facts(&self) -> Option<&'a ModelFacts> {
        self.draft.and_then(|d| d.facts.as_ref())
    }
}
