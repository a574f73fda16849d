//! The scenario builder every rule test uses.
//!
//! # Writing a case
//!
//! A case is one scenario for one rule: the facts the checks see, and whether that rule must
//! fire. Start from [`c`] with the rule's code, which gives SGLang 0.5.23 on the 8x H100 NVLink
//! fixture box, no arguments, an empty environment and unknown model, host and packages; then
//! change only what the scenario needs:
//!
//! ```text
//! c("AR001").on(R4090).tp(2)                        // TP 2 on a box without P2P: must fire
//! c("AR001").on(R4090).tp(2)
//!     .flag("--disable-custom-all-reduce")
//!     .no()                                         // custom all-reduce is off: must stay quiet
//! c("ATTN007")
//!     .version("0.5.2")                             // another SGLang release
//!     .arg("--attention-backend", json!("fa3"))     // an option and its parsed value
//!     .arg("--kv-cache-dtype", json!("fp8_e5m2"))
//! c("ENV004").on(PRO).env("SGLANG_ENABLE_JIT_DEEPGEMM", "1")   // an environment variable
//! c("PAR001").tp(8).model(heads(28, 4))             // what the model's config says
//! ```
//!
//! A case fires by default; `.no()` turns it into a quiet case: the rule must say nothing.
//! Every checked rule needs at least one firing and one quiet case (see `catalogue.rs`).
//!
//! Put the case in `cases()` of its family's file (`ar.rs` for `AR001`). That file's tests then
//! check that it fires or stays quiet, and snapshot the messages of its firing cases into
//! `snapshots/` (review a new or changed snapshot with `cargo insta review`, or generate them
//! with `INSTA_UPDATE=always cargo test --test rules`). The catalogue-wide tests also apply
//! every firing case's fix and check that the rule stops firing.
//! A new family gets a file like the others and two lines in `main.rs`: its `mod` and its
//! `cases()` in `all_cases`.
//!
//! Options go in as parsed values (`.arg`, `.flag`, `.tp`), exactly as SGLang's argparse would
//! store them; `.tokens` sets the raw command line only for the rules that read the user's
//! spelling (the FLAG family). To run the checks by hand, build the facts with [`world`] and
//! ask [`World::hits`] for one code, or take [`World::ctx`] for [`rules::evaluate`].

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsString;
use std::fmt::Write as _;

use serde_json::{Value, json};
use sglang_launch::facts::model::{self, ModelFacts, ModelLoad};
use sglang_launch::facts::packages::{Cuda, Toolkit};
use sglang_launch::facts::{Env, Packages, Topology};
use sglang_launch::resolve::{Facts, Speculative};
use sglang_launch::rules::{self, ArgEdit, Context, EnvEdit, Fix, HostFacts, RuleSettings};
use sglang_launch::sglang::flagset::{self, KNOWN_VERSIONS, ValueType};
use sglang_launch::sglang::{SglangArgs, release};

// ---------------------------------------------------------------------------------------------
// Fixture boxes (`tests/fixtures/topologies/<name>.json`).

/// 8x RTX PRO 6000 Blackwell on PCIe, no NVLink (SM 12.0): the seed story's box.
pub const PRO: &str = "8x-rtx-pro-6000-pcie";
/// 8x H100 SXM with NVLink (SM 9.0): the default box of a case.
pub const H100: &str = "8x-h100-sxm-nvlink";
/// 8x B200 with NVLink (SM 10.0).
pub const B200: &str = "8x-b200-nvlink";
/// 8x A100 SXM4 80 GB with NVLink (SM 8.0).
pub const A100: &str = "8x-a100-sxm4-80gb-nvlink";
/// 2x RTX 4090 on PCIe, no peer-to-peer (SM 8.9).
pub const R4090: &str = "2x-rtx-4090-pcie";
/// A single L4 (SM 8.9, 24 GB).
pub const L4: &str = "1x-l4";
/// An AMD host: no NVIDIA GPU, eight MI300X (`tests/fixtures/hosts/`, outside the NVIDIA
/// fixture boxes).
pub const MI300X: &str = "hosts/8x-mi300x";
/// A single V100 SXM2 32 GB (SM 7.0).
pub const V100: &str = "1x-v100-sxm2";
/// A single T4 (SM 7.5, 16 GB).
pub const T4: &str = "1x-t4";

/// A [`B200`] box made B300s (SM 10.3): `c(..).on(B200).edit(b300)`.
pub fn b300(t: &mut Topology) {
    for g in &mut t.gpus {
        g.compute_capability = "10.3".into();
        g.name = "NVIDIA B300 SXM6 AC".into();
    }
}

/// A fixture topology by file name, e.g. `topo(H100)` or `topo("8x-h20-nvlink")`.
pub fn topo(name: &str) -> Topology {
    // Read once per fixture: the catalogue tests build thousands of worlds.
    static READ: std::sync::LazyLock<std::sync::Mutex<HashMap<String, Topology>>> =
        std::sync::LazyLock::new(Default::default);
    let mut read = READ.lock().unwrap();
    read.entry(name.to_owned())
        .or_insert_with(|| {
            let dir = if name.contains('/') {
                ""
            } else {
                "topologies/"
            };
            let path = format!(
                "{}/tests/fixtures/{dir}{name}.json",
                env!("CARGO_MANIFEST_DIR")
            );
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
        })
        .clone()
}

// ---------------------------------------------------------------------------------------------
// Cases.

/// One scenario for one rule: the facts, and whether the rule must fire.
#[derive(Clone)]
pub struct Case {
    /// The rule under test; only its hits count. `"X"` in scenarios that look at everything.
    pub code: &'static str,
    /// SGLang version: picks the flag set and the rules that apply.
    pub version: &'static str,
    /// Fixture topology file name (see [`topo`]).
    pub topo: &'static str,
    /// Topology indices the server uses; `None`: every GPU of the box.
    pub gpus: Option<Vec<u32>>,
    /// Parsed SGLang options and their values, by option name (`--tp-size`).
    pub args: Vec<(&'static str, Value)>,
    /// The raw command line, for rules that read the user's spelling.
    pub tokens: Vec<&'static str>,
    pub env: Vec<(&'static str, String)>,
    pub model: Option<ModelFacts>,
    /// The speculative draft's facts; `None`: read from the path the arguments name.
    pub draft: Option<ModelFacts>,
    pub host: Option<HostFacts>,
    pub packages: Option<Packages>,
    /// An edit to the loaded topology (rename a GPU, enable MIG, …).
    pub edit: Option<fn(&mut Topology)>,
    /// Set CUDA_VISIBLE_DEVICES to these GPUs' UUIDs.
    pub uuids: Option<Vec<u32>>,
    /// Whether the rule must fire (the default) or stay quiet ([`Case::no`]).
    pub fires: bool,
}

/// A case for rule `code` that must fire: SGLang 0.5.23 on [`H100`], nothing else known.
pub fn c(code: &'static str) -> Case {
    Case {
        code,
        version: "0.5.23",
        topo: H100,
        gpus: None,
        args: vec![],
        tokens: vec![],
        env: vec![],
        model: None,
        draft: None,
        host: None,
        packages: None,
        edit: None,
        uuids: None,
        fires: true,
    }
}

impl Case {
    /// The SGLang version (`"0.5.5"`); the default is 0.5.23.
    pub fn version(mut self, v: &'static str) -> Self {
        self.version = v;
        self
    }

    /// The fixture box ([`PRO`], [`B200`], …); the default is [`H100`].
    pub fn on(mut self, topo: &'static str) -> Self {
        self.topo = topo;
        self
    }

    /// An SGLang option with its parsed value: `.arg("--page-size", json!(64))`.
    pub fn arg(mut self, option: &'static str, value: Value) -> Self {
        self.args.push((option, value));
        self
    }

    /// A boolean SGLang flag that is set: `.flag("--enable-dp-attention")`.
    pub fn flag(self, option: &'static str) -> Self {
        self.arg(option, json!(true))
    }

    /// `--tp-size n`.
    pub fn tp(self, n: i64) -> Self {
        self.arg("--tp-size", json!(n))
    }

    /// An environment variable the server would see.
    pub fn env(mut self, name: &'static str, value: &str) -> Self {
        self.env.push((name, value.to_string()));
        self
    }

    /// The raw SGLang command line as the user typed it (FLAG rules read the spelling).
    pub fn tokens(mut self, t: &[&'static str]) -> Self {
        self.tokens = t.to_vec();
        self
    }

    /// What the model's config says: see [`model`], [`mla`], [`moe`], [`vlm`], [`heads`].
    pub fn model(mut self, m: ModelFacts) -> Self {
        self.model = Some(m);
        self
    }

    /// The facts of the draft checkpoint the arguments name.
    pub fn draft(mut self, m: ModelFacts) -> Self {
        self.draft = Some(m);
        self
    }

    /// Host facts (`/dev/shm`, container, InfiniBand): see [`host`] and [`no_rdma`].
    pub fn host(mut self, h: HostFacts) -> Self {
        self.host = Some(h);
        self
    }

    /// Installed Python packages by name and version: `.pkgs(&[("torch", "2.9.1+cu128")])`.
    pub fn pkgs(mut self, p: &[(&str, &str)]) -> Self {
        self.packages = Some(Packages::from_versions(p));
        self
    }

    /// An edit to the installed packages (after [`Case::pkgs`]).
    pub fn edit_pkgs(mut self, e: fn(&mut Packages)) -> Self {
        e(self.packages.get_or_insert_with(Packages::default));
        self
    }

    /// The CUDA toolkit FlashInfer would find: `nvcc` present or not, and its version.
    pub fn toolkit(mut self, nvcc: bool, version: Option<(u32, u32)>) -> Self {
        let p = self.packages.get_or_insert_with(Packages::default);
        p.cuda_toolkit = Some(Toolkit {
            home: "/usr/local/cuda".into(),
            nvcc,
            version: version.map(|(a, b)| Cuda(a, b)),
        });
        self
    }

    /// An edit to the loaded topology: `.edit(|t| t.gpus[0].mig_enabled = true)`.
    pub fn edit(mut self, e: fn(&mut Topology)) -> Self {
        self.edit = Some(e);
        self
    }

    /// The topology indices the server uses; the default is every GPU.
    pub fn gpus(mut self, g: &[u32]) -> Self {
        self.gpus = Some(g.to_vec());
        self
    }

    /// CUDA_VISIBLE_DEVICES set to these GPUs' UUIDs.
    pub fn uuids(mut self, g: &[u32]) -> Self {
        self.uuids = Some(g.to_vec());
        self
    }

    /// The same scenario for another rule (one row split across codes).
    pub fn code(mut self, code: &'static str) -> Self {
        self.code = code;
        self
    }

    /// The rule must stay quiet on this case.
    pub fn no(mut self) -> Self {
        self.fires = false;
        self
    }
}

// ---------------------------------------------------------------------------------------------
// Model and host facts.

/// A dense model of this architecture: 64 attention heads, 8 KV heads, nothing else known.
pub fn model(arch: &str) -> ModelFacts {
    ModelFacts {
        architecture: Some(arch.into()),
        num_attention_heads: Some(64),
        num_key_value_heads: Some(8),
        ..Default::default()
    }
}

/// DeepSeek-V3-like MLA: KV LoRA rank 512, 128 heads.
pub fn mla() -> ModelFacts {
    ModelFacts {
        kv_lora_rank: Some(512),
        num_attention_heads: Some(128),
        num_key_value_heads: Some(128),
        ..model("DeepseekV3ForCausalLM")
    }
}

/// A DeepSeek sparse-attention model of this architecture: MLA with a 2048-token indexer.
pub fn dsa(arch: &str) -> ModelFacts {
    ModelFacts {
        index_topk: Some(2048),
        index_head_dim: Some(128),
        ..ModelFacts {
            architecture: Some(arch.into()),
            ..mla()
        }
    }
}

/// A Qwen3 MoE with 128 experts.
pub fn moe() -> ModelFacts {
    ModelFacts {
        num_experts: Some(128),
        ..model("Qwen3MoeForCausalLM")
    }
}

/// A multimodal (vision-language) Qwen2.5-VL.
pub fn vlm() -> ModelFacts {
    ModelFacts {
        is_multimodal: true,
        ..model("Qwen2_5_VLForConditionalGeneration")
    }
}

/// A dense Qwen2 with `h` attention heads and `kv` KV heads.
pub fn heads(h: u64, kv: u64) -> ModelFacts {
    ModelFacts {
        num_attention_heads: Some(h),
        num_key_value_heads: Some(kv),
        ..model("Qwen2ForCausalLM")
    }
}

/// The facts of a fixture checkpoint (`tests/fixtures/models/<name>/config.json`), read as the
/// pipeline reads them.
pub fn checkpoint(name: &str) -> ModelFacts {
    let dir = format!(
        "{}/tests/fixtures/models/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let args = SglangArgs::with_values(flags_for("0.5.23"), &[]);
    model::load(&dir, &Env::default(), &args).facts.unwrap()
}

/// A container with two InfiniBand devices and `/dev/shm` present or not, of this size.
pub fn host(present: bool, bytes: Option<u64>) -> HostFacts {
    HostFacts {
        shm_present: present,
        shm_bytes: bytes,
        in_container: Some(true),
        ib_devices: Some(vec!["mlx5_0".into(), "mlx5_1".into()]),
    }
}

/// A container with a 16 GiB `/dev/shm` and no InfiniBand device.
pub fn no_rdma() -> HostFacts {
    HostFacts {
        ib_devices: Some(vec![]),
        ..host(true, Some(16 << 30))
    }
}

// ---------------------------------------------------------------------------------------------
// Running cases.

/// The facts of a case, owned, so a fix can be applied and the rule re-run.
pub struct World {
    pub version: &'static str,
    pub args: SglangArgs,
    pub env: Env,
    pub topo: Topology,
    pub gpus: Vec<u32>,
    pub model: Option<ModelFacts>,
    pub host: Option<HostFacts>,
    pub packages: Option<Packages>,
    /// The separate speculative draft the arguments name, read as the planner reads it.
    pub draft: Option<ModelLoad>,
}

/// The embedded flag set of `v`, or of the nearest older release (the oldest for older ones).
pub fn flags_for(v: &str) -> &'static flagset::FlagSet {
    flagset::get(v).unwrap_or_else(|| {
        let older = KNOWN_VERSIONS
            .iter()
            .rev()
            .find(|k| release::cmp(k, v).is_le())
            .unwrap_or(&KNOWN_VERSIONS[0]);
        flagset::get(older).unwrap()
    })
}

/// The facts a case describes.
pub fn world(case: &Case) -> World {
    let mut topo = topo(case.topo);
    if let Some(e) = case.edit {
        e(&mut topo);
    }
    let mut args = SglangArgs::with_values(flags_for(case.version), &case.args);
    args.tokens = case.tokens.iter().map(OsString::from).collect();
    let mut env: Vec<(String, String)> = case
        .env
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    if let Some(u) = &case.uuids {
        let list: Vec<String> = u
            .iter()
            .map(|&i| topo.gpu(i).unwrap().uuid.clone())
            .collect();
        env.push(("CUDA_VISIBLE_DEVICES".into(), list.join(",")));
    }
    let env = Env::from_pairs(env);
    let draft = Speculative::of(&args, case.model.as_ref())
        .and_then(|s| s.separate_draft().map(str::to_owned))
        .map(|path| match &case.draft {
            Some(facts) => ModelLoad::from(facts.clone()),
            None => model::load(&path, &env, &args),
        });
    World {
        version: case.version,
        args,
        env,
        draft,
        gpus: case
            .gpus
            .clone()
            .unwrap_or_else(|| topo.gpus.iter().map(|g| g.index).collect()),
        topo,
        model: case.model.clone(),
        host: case.host.clone(),
        packages: case.packages.clone(),
    }
}

impl World {
    /// What the checks see. The only place the tests build a [`rules::Context`]: when its shape
    /// changes, this is the one function to change.
    pub fn ctx(&self) -> Context<'_> {
        Context::new(Facts {
            version: self.version,
            args: &self.args,
            env: &self.env,
            topology: &self.topo,
            gpus: &self.gpus,
            model: self.model.as_ref(),
            draft: self.draft.as_ref(),
            host: self.host.as_ref(),
            packages: self.packages.as_ref(),
        })
    }

    /// The hits of one rule, as [`rules::evaluate`] reports them with default settings.
    pub fn hits(&self, code: &str) -> Vec<rules::Finding> {
        rules::evaluate(&self.ctx(), &RuleSettings::default())
            .into_iter()
            .filter(|h| h.code.as_str() == code)
            .collect()
    }

    /// What the pipeline's fix applier does, on the parser-free representation of the tests.
    pub fn apply(&mut self, fix: &Fix) {
        for e in &fix.args {
            self.apply_arg(e);
        }
        for e in &fix.env {
            match e {
                EnvEdit::Set { name, value } => {
                    self.env.vars.insert(name.clone(), value.clone());
                }
                EnvEdit::Unset { name } => {
                    self.env.vars.remove(name);
                }
            }
        }
    }

    fn apply_arg(&mut self, e: &ArgEdit) {
        match e {
            ArgEdit::Drop { written } => self.args.tokens.retain(|t| t != written.as_str()),
            ArgEdit::DropOption { written } => drop_option(&mut self.args.tokens, written),
            ArgEdit::NamePositional { option } => {
                let first = self.args.tokens.first().map(|t| t.to_string_lossy());
                if let Some(value) = first
                    .filter(|t| !t.starts_with('-'))
                    .map(|t| t.into_owned())
                {
                    self.args.tokens.insert(0, option.into());
                    let d = self
                        .args
                        .flags
                        .dest_of(option)
                        .expect("fix names a known option");
                    self.args.values.insert(d.to_string(), json!(value));
                }
            }
            ArgEdit::Remove { option } => {
                if let Some(d) = self.args.flags.dest_of(option) {
                    self.args.values.remove(d);
                }
                remove_tokens(&mut self.args.tokens, option);
            }
            ArgEdit::Set { option, value } => {
                let a = self
                    .args
                    .flags
                    .action(option)
                    .expect("fix names a known option");
                let v = match a.value_type {
                    ValueType::Int | ValueType::HumanInt => {
                        json!(value.parse::<i64>().unwrap())
                    }
                    ValueType::Float => json!(value.parse::<f64>().unwrap()),
                    _ => json!(value),
                };
                self.args.values.insert(a.dest.clone(), v);
            }
            ArgEdit::AddFlag { option } => {
                let d = self
                    .args
                    .flags
                    .dest_of(option)
                    .expect("fix names a known option");
                self.args.values.insert(d.to_string(), json!(true));
            }
            ArgEdit::Rename { from, to } => {
                assert!(
                    self.args.flags.action(to).is_some(),
                    "rename target {to} is known"
                );
                for t in self.args.tokens.iter_mut() {
                    let s = t.to_string_lossy().into_owned();
                    if s == *from {
                        *t = OsString::from(to);
                    } else if let Some(v) = s.strip_prefix(&format!("{from}=")) {
                        *t = OsString::from(format!("{to}={v}"));
                    }
                }
                if let (Some(a), Some(b)) =
                    (self.args.flags.dest_of(from), self.args.flags.dest_of(to))
                    && let Some(v) = self.args.values.remove(a)
                {
                    self.args.values.insert(b.to_string(), v);
                }
            }
        }
    }
}

fn remove_tokens(tokens: &mut Vec<OsString>, option: &str) {
    let mut out = Vec::new();
    let mut skip_value = false;
    for t in tokens.drain(..) {
        let s = t.to_string_lossy().into_owned();
        if skip_value && !s.starts_with("--") {
            skip_value = false;
            continue;
        }
        skip_value = false;
        if s == option {
            skip_value = true;
            continue;
        }
        if s.starts_with(&format!("{option}=")) {
            continue;
        }
        out.push(t);
    }
    *tokens = out;
}

// ---------------------------------------------------------------------------------------------
// What every family file asserts.

/// Every case fires (or stays quiet) as it says, with one-line messages.
pub fn assert_cases(family: &str, cases: &[Case]) {
    let mut failures = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        let w = world(case);
        let hits = w.hits(case.code);
        if hits.is_empty() == case.fires {
            failures.push(format!(
                "{family} case {i} {} on {} {} (expected {}): {:?}",
                case.code,
                case.topo,
                case.version,
                if case.fires { "a hit" } else { "no hit" },
                hits.iter().map(|h| &h.message).collect::<Vec<_>>()
            ));
        }
        for h in &hits {
            assert!(
                !h.message.is_empty() && !h.message.contains('\n'),
                "{}: one-line message",
                h.code
            );
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// One snapshot text per code: for each firing case, one line `severity CODE: message` per hit
/// and `  fix: <summary>` under a hit that carries a fix.
pub fn messages(cases: &[Case]) -> BTreeMap<&'static str, String> {
    let mut out: BTreeMap<&'static str, String> = BTreeMap::new();
    for case in cases.iter().filter(|c| c.fires) {
        let text = out.entry(case.code).or_default();
        for h in world(case).hits(case.code) {
            let fix = h.fix.as_ref().map(|f| f.summary.as_str());
            text.push_str(&finding_text(
                h.severity.as_str(),
                h.code.as_str(),
                &h.message,
                fix,
            ));
        }
    }
    out
}

/// One finding in a snapshot: `severity CODE: message`, then `  fix: <summary>` when it has a
/// fix, each line ending in a newline.
pub fn finding_text(severity: &str, code: &str, message: &str, fix: Option<&str>) -> String {
    let mut text = format!("{severity} {code}: {message}\n");
    if let Some(summary) = fix {
        writeln!(text, "  fix: {summary}").unwrap();
    }
    text
}

/// An option no flag set has, with the value after it (`--x V`), or `--x=V`.
fn drop_option(tokens: &mut Vec<OsString>, written: &str) {
    let mut out = Vec::with_capacity(tokens.len());
    let mut it = std::mem::take(tokens).into_iter().peekable();
    while let Some(t) = it.next() {
        let s = t.to_string_lossy();
        if s == written {
            it.next_if(|v| !v.to_string_lossy().starts_with('-'));
        } else if !s.strip_prefix(written).is_some_and(|r| r.starts_with('=')) {
            out.push(t);
        }
    }
    *tokens = out;
}
