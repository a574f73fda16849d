//! Multi-node options from the scheduler: under Slurm or a LeaderWorkerSet, `--nnodes`,
//! `--node-rank` and `--dist-init-addr` are added where the user gave none (PAR009, one change
//! per option, naming its variables), but only when the layout asked for needs more GPUs than
//! this node has (else each node runs its own server, PAR012) and this process is one node of
//! the job (an `srun` step with one task per node). A flag the user gave always stays; one
//! that disagrees with the scheduler is a warning (PAR010). A scheduler variable the derivation
//! needs but cannot read stops the launch, naming it. Runs before the rules, so the GPU count,
//! PAR002/PAR003/PAR006 and the memory plan see the multi-node line.

use super::arguments::Parsed;
use super::fixes;
use crate::facts::Env;
use crate::facts::scheduler::{self, Given, MultiNode};
use crate::rules::{ArgEdit, Code, Finding, Fix, RuleSettings};
use crate::sglang::opt;
use crate::sglang::{SglangArgs, approx};

pub(crate) struct Step {
    pub(crate) args: SglangArgs,
    pub(crate) findings: Vec<Finding>,
}

/// This node's side of the question: the GPUs one node of the line asks for (as if it ran
/// alone) and the GPUs CUDA shows here (`None`: unknown).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Local {
    pub(crate) needed: usize,
    pub(crate) visible: Option<usize>,
}

impl Local {
    /// The line runs on this node's GPUs alone.
    fn fits(self) -> bool {
        self.visible.is_some_and(|v| self.needed <= v)
    }
}

/// `neighbours`: approximate mode's releases; an option is derived only if all of them have it,
/// as for the rules' fixes. `--allow PAR009` derives nothing; `--no-fix` reports what it would.
/// `visible`: the GPUs CUDA shows on this node. `Err`: a scheduler variable the derivation
/// needs cannot be read (what to fix, named).
pub(crate) fn step(
    args: SglangArgs,
    (env, visible): (&Env, Option<usize>),
    neighbours: Option<&approx::Bounds>,
    no_fix: bool,
    settings: &RuleSettings,
) -> Result<Step, String> {
    let parsed = Parsed::of(&args, neighbours);
    let knows =
        |option: &str| args.knows(option) && neighbours.is_none_or(|n| approx::all_have(n, option));
    let local = Local {
        needed: crate::facts::gpus::gpus_needed(parsed.view(&args)),
        visible,
    };
    let job = Job {
        env,
        local,
        knows: &knows,
    };
    // `--allow PAR009`: nothing is derived, so no scheduler variable is needed either.
    let off = !settings.enabled(Code::PAR009);
    let hits = match derive(parsed.view(&args), scheduler::read(env), &job) {
        Err(_) if off => Vec::new(),
        derived => derived?,
    };
    // An allowed rule's derivation is not made; the plan drops its findings with the others.
    let made = |h: &Finding| !no_fix && settings.enabled(h.code);
    let edits: Vec<ArgEdit> = hits
        .iter()
        .filter(|h| made(h))
        .flat_map(|h| h.fix.iter().flat_map(|f| f.args.clone()))
        .collect();
    let findings = hits
        .into_iter()
        .map(|h| {
            let made = made(&h);
            finding(h, !no_fix, made)
        })
        .collect();
    let args = if edits.is_empty() {
        args
    } else {
        fixes::apply_args(&args, &edits)
    };
    Ok(Step { args, findings })
}

fn finding(hit: Finding, apply: bool, made: bool) -> Finding {
    let derived = hit.fix.is_some();
    let mut f = hit.fixed(derived && made);
    if derived && !apply {
        f.message.push_str("; not added (--no-fix)");
    }
    f
}

/// What the derivation reads besides the line and the scheduler's facts. `knows`: the flag set
/// in use has the option.
pub(crate) struct Job<'a> {
    pub(crate) env: &'a Env,
    pub(crate) local: Local,
    pub(crate) knows: &'a dyn Fn(&str) -> bool,
}

/// Pure: what the scheduler's facts make of this line.
pub(crate) fn derive(
    args: &SglangArgs,
    facts: Option<Result<MultiNode, String>>,
    job: &Job,
) -> Result<Vec<Finding>, String> {
    let user_nnodes = args.get(opt::NNODES).and(args.int(opt::NNODES));
    let m = match facts {
        None => return Ok(Vec::new()),
        // Nothing to derive: the user gave the node count, or the line fits on this node.
        Some(Err(_)) if user_nnodes.is_some() || job.local.fits() => return Ok(Vec::new()),
        Some(Err(why)) => {
            return Err(format!(
                "{why}: fix the variable, or give --nnodes, --node-rank and --dist-init-addr yourself"
            ));
        }
        Some(Ok(m)) => m,
    };
    // One node: nothing to say, whatever the user's flags.
    if m.nnodes.value < 2 || !(job.knows)(opt::NNODES) {
        return Ok(Vec::new());
    }
    let name = m.scheduler.describe();
    let mut hits = Vec::new();
    match user_nnodes {
        Some(user) if user != m.nnodes.value => {
            return Ok(vec![conflict(format!(
                "--nnodes {user} is kept, but the {name} has {} nodes ({}); --node-rank and --dist-init-addr are not derived",
                m.nnodes.value, m.nnodes.why
            ))]);
        }
        Some(_) => {}
        None => match job.local.visible {
            Some(visible) if job.local.fits() => {
                return Ok(vec![own_server(name, &m, job.local.needed, visible)]);
            }
            _ => hits.push(derived(name, opt::NNODES, &m.nnodes)),
        },
    }
    if let Some(why) = &m.not_a_node {
        // Nothing is derived for a process that is not one node of the job.
        let rest = [opt::NODE_RANK, opt::DIST_INIT_ADDR];
        if hits.is_empty() && rest.iter().all(|o| args.is_set(o)) {
            return Ok(hits);
        }
        return Ok(vec![conflict(format!(
            "{name} with {} nodes: {why}; nothing derived",
            m.nnodes.value
        ))]);
    }
    hits.extend(node_rank(args, &m, job.knows)?);
    hits.extend(dist_init_addr(args, &m, job)?);
    Ok(hits)
}

/// The line fits on this node: each node of the job runs a server of its own.
fn own_server(name: &str, m: &MultiNode, needed: usize, visible: usize) -> Finding {
    Finding::new(
        Code::PAR012,
        format!(
            "{name} with {} nodes ({}): this line needs {needed} GPU{} and this node has {visible}, so each node runs a server of its own; nothing derived (give --nnodes {} for one server across the nodes)",
            m.nnodes.value,
            m.nnodes.why,
            if needed == 1 { "" } else { "s" },
            m.nnodes.value
        ),
    )
}

/// The variable that would give `option`, when it is set but unreadable.
fn unreadable(m: &MultiNode, option: &str) -> Result<(), String> {
    match m.unreadable.iter().find(|(o, _)| *o == option) {
        Some((_, why)) => Err(format!(
            "{why}: {option} cannot be derived for this {}; fix the variable, or give {option} yourself",
            m.scheduler.describe()
        )),
        None => Ok(()),
    }
}

fn node_rank(
    args: &SglangArgs,
    m: &MultiNode,
    knows: &dyn Fn(&str) -> bool,
) -> Result<Option<Finding>, String> {
    if !knows(opt::NODE_RANK) {
        return Ok(None);
    }
    if !args.is_set(opt::NODE_RANK) {
        unreadable(m, opt::NODE_RANK)?;
        let Some(rank) = &m.node_rank else {
            return Ok(None);
        };
        return Ok(Some(derived(m.scheduler.describe(), opt::NODE_RANK, rank)));
    }
    let (Some(user), Some(rank)) = (args.int(opt::NODE_RANK), &m.node_rank) else {
        return Ok(None);
    };
    Ok((user != rank.value).then(|| {
        conflict(format!(
            "--node-rank {user} is kept, but this {} process runs on node {} ({}): two nodes with one rank never finish the rendezvous",
            m.scheduler.describe(),
            rank.value,
            rank.why
        ))
    }))
}

/// A user's address is never compared: an IP and a host name may well be the same node.
fn dist_init_addr(args: &SglangArgs, m: &MultiNode, job: &Job) -> Result<Option<Finding>, String> {
    let given = args.is_set(opt::DIST_INIT_ADDR)
        || job
            .env
            .get("SGLANG_DISTRIBUTED_INIT_METHOD_OVERRIDE")
            .is_some();
    if given || !(job.knows)(opt::DIST_INIT_ADDR) {
        return Ok(None);
    }
    unreadable(m, opt::DIST_INIT_ADDR)?;
    Ok(m.dist_init_addr
        .as_ref()
        .map(|addr| derived(m.scheduler.describe(), opt::DIST_INIT_ADDR, addr)))
}

fn derived<T: std::fmt::Display>(job: &str, option: &str, given: &Given<T>) -> Finding {
    let value = given.value.to_string();
    Finding::new(
        Code::PAR009,
        format!("{job}: {option} {value} from {}", given.why),
    )
    .with_fix(Some(Fix {
        summary: format!("added {option} {value} ({})", given.source),
        args: vec![ArgEdit::Set {
            option: option.to_owned(),
            value,
        }],
        env: Vec::new(),
    }))
}

fn conflict(message: String) -> Finding {
    Finding::new(Code::PAR010, message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sglang::{self, flagset};

    const SLURM: &[(&str, &str)] = &[
        ("SLURM_STEP_ID", "0"),
        ("SLURM_NNODES", "2"),
        ("SLURM_NODEID", "1"),
        ("SLURM_JOB_NODELIST", "gpu[07-08]"),
    ];
    const LWS: &[(&str, &str)] = &[
        ("LWS_GROUP_SIZE", "2"),
        ("LWS_WORKER_INDEX", "0"),
        ("LWS_LEADER_ADDRESS", "llm-0.llm.ns"),
    ];

    fn parse(tokens: &[&str]) -> SglangArgs {
        let flags = flagset::get("0.5.23").unwrap();
        sglang::parse(flags, tokens.iter().map(Into::into).collect())
    }

    /// (code, message, change) of each finding for this line under this environment, on a
    /// node with 8 GPUs.
    fn run(env: &[(&str, &str)], tokens: &[&str], no_fix: bool) -> (Vec<String>, Vec<String>) {
        try_run(env, tokens, no_fix).unwrap()
    }

    fn try_run(
        env: &[(&str, &str)],
        tokens: &[&str],
        no_fix: bool,
    ) -> Result<(Vec<String>, Vec<String>), String> {
        let env = Env::from_pairs(env.iter().copied());
        let mut base = vec!["--model-path", "m", "--tp", "16"];
        base.extend(tokens);
        let s = step(
            parse(&base),
            (&env, Some(8)),
            None,
            no_fix,
            &RuleSettings::default(),
        )?;
        let added = s.args.tokens[4..]
            .iter()
            .map(|t| t.to_string_lossy().into_owned())
            .collect();
        let lines = s
            .findings
            .iter()
            .map(|f| format!("{} {} [{}]", f.code, f.message, f.applied().unwrap_or("")))
            .collect();
        Ok((added, lines))
    }

    #[test]
    fn slurm_derives_every_option_with_its_source() {
        let (added, lines) = run(SLURM, &[], false);
        assert_eq!(
            added,
            [
                "--nnodes",
                "2",
                "--node-rank",
                "1",
                "--dist-init-addr",
                "gpu07:20000"
            ]
        );
        assert_eq!(
            lines,
            [
                "PAR009 Slurm job: --nnodes 2 from SLURM_NNODES=2 [added --nnodes 2 (SLURM_NNODES)]",
                "PAR009 Slurm job: --node-rank 1 from SLURM_NODEID=1 [added --node-rank 1 (SLURM_NODEID)]",
                "PAR009 Slurm job: --dist-init-addr gpu07:20000 from SLURM_JOB_NODELIST=gpu[07-08]: first of 2 hosts; port 20000, as in SGLang's multi-node examples (MASTER_PORT unset) [added --dist-init-addr gpu07:20000 (SLURM_JOB_NODELIST, port 20000)]",
            ]
        );
    }

    #[test]
    fn leaderworkerset_derives_the_same_options() {
        let (added, _) = run(LWS, &[], false);
        assert_eq!(
            added,
            [
                "--nnodes",
                "2",
                "--node-rank",
                "0",
                "--dist-init-addr",
                "llm-0.llm.ns:20000"
            ]
        );
    }

    #[test]
    fn explicit_flags_win_and_disagreements_are_warnings() {
        // Agreeing flags: kept, nothing said; the rest derived.
        let (added, lines) = run(
            SLURM,
            &["--nnodes", "2", "--dist-init-addr", "10.0.0.7:5000"],
            false,
        );
        assert_eq!(
            added,
            [
                "--nnodes",
                "2",
                "--dist-init-addr",
                "10.0.0.7:5000",
                "--node-rank",
                "1"
            ]
        );
        assert_eq!(lines.len(), 1, "{lines:?}");
        // A different node count: kept, and nothing else derived from a job it does not match.
        let (added, lines) = run(SLURM, &["--nnodes", "1"], false);
        assert_eq!(added, ["--nnodes", "1"]);
        assert_eq!(
            lines,
            [
                "PAR010 --nnodes 1 is kept, but the Slurm job has 2 nodes (SLURM_NNODES=2); --node-rank and --dist-init-addr are not derived []"
            ]
        );
        // A different rank: kept and reported; the others derived.
        let (added, lines) = run(SLURM, &["--node-rank", "0"], false);
        assert_eq!(added[..4], ["--node-rank", "0", "--nnodes", "2"]);
        assert!(lines.iter().any(|l| l.starts_with(
            "PAR010 --node-rank 0 is kept, but this Slurm job process runs on node 1 (SLURM_NODEID=1)"
        )), "{lines:?}");
    }

    #[test]
    fn no_fix_reports_what_it_would_add_and_adds_nothing() {
        let (added, lines) = run(SLURM, &[], true);
        assert!(added.is_empty(), "{added:?}");
        assert_eq!(lines.len(), 3);
        assert_eq!(
            lines[0],
            "PAR009 Slurm job: --nnodes 2 from SLURM_NNODES=2; not added (--no-fix) []"
        );
    }

    #[test]
    fn one_node_or_no_scheduler_derives_nothing() {
        for env in [&[("SLURM_NNODES", "1"), ("SLURM_NODEID", "0")][..], &[]] {
            let (added, lines) = run(env, &["--nnodes", "2"], false);
            assert_eq!((added.len(), lines.len()), (2, 0), "{env:?}");
        }
    }

    #[test]
    fn an_unreadable_variable_the_derivation_needs_stops_it() {
        let err = try_run(&[("SLURM_NNODES", "x")], &[], false).unwrap_err();
        assert_eq!(
            err,
            "SLURM_NNODES=\"x\" is not a number ≥ 1: fix the variable, or give --nnodes, --node-rank and --dist-init-addr yourself"
        );
        let lws = [
            ("LWS_GROUP_SIZE", "2"),
            ("LWS_WORKER_INDEX", "abc"),
            ("LWS_LEADER_ADDRESS", "llm-0"),
        ];
        let err = try_run(&lws, &[], false).unwrap_err();
        assert!(
            err.starts_with(
                "LWS_WORKER_INDEX=\"abc\" is not a number ≥ 0: --node-rank cannot be derived"
            ),
            "{err}"
        );
        let env = [&SLURM[..3], &[("SLURM_JOB_NODELIST", "gpu[07-08")]].concat();
        let err = try_run(&env, &[], false).unwrap_err();
        assert!(err.contains("SLURM_JOB_NODELIST=\"gpu[07-08\" has a '[' without its ']'"));
        // Not needed: the user gave the option.
        let (added, _) = run(&lws, &["--node-rank", "1"], false);
        assert!(added.contains(&"--dist-init-addr".to_owned()), "{added:?}");
    }

    /// A variable no derivation needs never stops a line: one that fits this node, or with the
    /// derivation turned off (`--allow PAR009`).
    #[test]
    fn an_unreadable_variable_nothing_needs_blocks_nothing() {
        let env = Env::from_pairs([("SLURM_NNODES", "x")]);
        let small = parse(&["--model-path", "m", "--tp", "8"]);
        let s = step(
            small,
            (&env, Some(8)),
            None,
            false,
            &RuleSettings::default(),
        )
        .unwrap();
        assert!(s.findings.is_empty());
        let allow = RuleSettings {
            allow: vec!["PAR009".into()],
            ..RuleSettings::default()
        };
        let wide = parse(&["--model-path", "m", "--tp", "16"]);
        let s = step(wide, (&env, Some(8)), None, false, &allow).unwrap();
        assert_eq!((s.args.tokens.len(), s.findings.len()), (4, 0));
    }

    #[test]
    fn a_line_that_fits_on_the_node_runs_as_a_server_per_node() {
        let env = Env::from_pairs(SLURM.iter().copied());
        let args = parse(&["--model-path", "m", "--tp", "8"]);
        let s = step(args, (&env, Some(8)), None, false, &RuleSettings::default()).unwrap();
        assert_eq!(s.args.tokens.len(), 4);
        assert_eq!(s.findings.len(), 1);
        assert_eq!(s.findings[0].code, crate::rules::Code::PAR012);
        assert!(s.findings[0].message.contains(
            "this line needs 8 GPUs and this node has 8, so each node runs a server of its own"
        ));
        // DP replicas of their own count: 2 × TP 8 does not fit on 8 GPUs.
        let args = parse(&["--model-path", "m", "--tp", "8", "--dp", "2"]);
        let s = step(args, (&env, Some(8)), None, false, &RuleSettings::default()).unwrap();
        assert_eq!(s.findings[0].code, crate::rules::Code::PAR009);
    }

    #[test]
    fn nothing_is_derived_outside_an_srun_step_or_with_several_tasks_per_node() {
        let batch: Vec<_> = SLURM[1..].to_vec();
        let (added, lines) = run(&batch, &[], false);
        assert!(added.is_empty(), "{added:?}");
        assert_eq!(lines.len(), 1);
        assert!(
            lines[0].starts_with("PAR010 Slurm job with 2 nodes: this is the job's batch shell"),
            "{lines:?}"
        );
        assert!(
            lines[0].contains("srun --ntasks-per-node=1 sglang-launch"),
            "{lines:?}"
        );
        let many = [SLURM, &[("SLURM_STEP_NUM_TASKS", "16")]].concat();
        let (added, lines) = run(&many, &[], false);
        assert!(added.is_empty(), "{added:?}");
        assert!(
            lines[0].contains("SLURM_STEP_NUM_TASKS=16 tasks on 2 nodes"),
            "{lines:?}"
        );
        // Every option given: nothing to derive, nothing to say.
        let (_, lines) = run(
            &batch,
            &[
                "--nnodes",
                "2",
                "--node-rank",
                "0",
                "--dist-init-addr",
                "h:1",
            ],
            false,
        );
        assert!(lines.is_empty(), "{lines:?}");
    }

    #[test]
    fn only_options_the_flag_set_has_and_not_when_allowed() {
        let env = Env::from_pairs(SLURM.iter().copied());
        let args = parse(&["--model-path", "m"]);
        let facts = || scheduler::read(&env);
        let local = Local {
            needed: 16,
            visible: Some(8),
        };
        let job = |knows: &'static dyn Fn(&str) -> bool| Job {
            env: &env,
            local,
            knows,
        };
        let none = derive(&args, facts(), &job(&|_| false)).unwrap();
        assert!(none.is_empty());
        let some = derive(&args, facts(), &job(&|o| o != "--dist-init-addr")).unwrap();
        assert_eq!(some.len(), 2);
        let settings = RuleSettings {
            allow: vec!["PAR009".into()],
            ..RuleSettings::default()
        };
        let wide = parse(&["--model-path", "m", "--tp", "16"]);
        let s = step(wide, (&env, Some(8)), None, false, &settings).unwrap();
        assert_eq!(s.args.tokens.len(), 4);
        assert!(s.findings.iter().all(|f| !f.fixed), "{:?}", s.findings);
        // The override variable stands in for the address.
        let env = Env::from_pairs(
            [
                SLURM,
                &[("SGLANG_DISTRIBUTED_INIT_METHOD_OVERRIDE", "tcp://h:1")],
            ]
            .concat(),
        );
        let job = Job {
            env: &env,
            local,
            knows: &|_| true,
        };
        let hits = derive(&args, scheduler::read(&env), &job).unwrap();
        assert!(hits.iter().all(|h| !h.message.contains("--dist-init-addr")));
    }
}
