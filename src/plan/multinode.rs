//! Multi-node options from the scheduler: under Slurm or a LeaderWorkerSet, `--nnodes`,
//! `--node-rank` and `--dist-init-addr` are added where the user gave none (PAR009, one change
//! per option, naming its variables). A flag the user gave always stays; one that disagrees with
//! the scheduler is a warning (PAR010), as is a scheduler variable that cannot be read. Runs
//! before the rules, so the GPU count, PAR002/PAR003/PAR006 and the memory plan see the
//! multi-node line.

use super::arguments::Parsed;
use super::findings::from_hit;
use super::fixes;
use super::json::Finding;
use crate::facts::Env;
use crate::facts::scheduler::{self, Given, MultiNode};
use crate::rules::{ArgEdit, Code, Fix, Hit, RuleSettings};
use crate::sglang::{SglangArgs, approx};

pub struct Step {
    pub args: SglangArgs,
    /// Already under the user's --allow/--deny.
    pub findings: Vec<Finding>,
}

/// `neighbours`: approximate mode's releases; an option is derived only if all of them have it,
/// as for the rules' fixes. `--allow PAR009` derives nothing; `--no-fix` reports what it would.
pub fn step(
    args: SglangArgs,
    env: &Env,
    neighbours: Option<&[&'static str]>,
    no_fix: bool,
    settings: &RuleSettings,
) -> Step {
    let parsed = Parsed::of(&args, neighbours);
    let knows =
        |option: &str| args.knows(option) && neighbours.is_none_or(|n| approx::all_have(n, option));
    let hits = settings.apply(derive(
        parsed.view(&args),
        scheduler::read(env),
        env,
        &knows,
    ));
    let apply = !no_fix;
    let edits: Vec<ArgEdit> = hits
        .iter()
        .filter(|_| apply)
        .flat_map(|h| h.fix.iter().flat_map(|f| f.args.clone()))
        .collect();
    let findings = hits.iter().map(|h| finding(h, apply)).collect();
    let args = if edits.is_empty() {
        args
    } else {
        fixes::apply_args(&args, &edits)
    };
    Step { args, findings }
}

fn finding(hit: &Hit, apply: bool) -> Finding {
    let derived = hit.fix.is_some();
    let mut f = from_hit(hit, derived && apply);
    if derived && !apply {
        f.message.push_str("; not added (--no-fix)");
    }
    f
}

/// Pure: what the scheduler's facts make of this line. `knows`: the flag set in use has the
/// option.
pub fn derive(
    args: &SglangArgs,
    facts: Option<Result<MultiNode, String>>,
    env: &Env,
    knows: &dyn Fn(&str) -> bool,
) -> Vec<Hit> {
    let m = match facts {
        None => return Vec::new(),
        Some(Err(why)) => return vec![conflict(format!("{why}: no multi-node option derived"))],
        Some(Ok(m)) => m,
    };
    let job = m.scheduler.describe();
    let mut hits: Vec<Hit> = m
        .unreadable
        .iter()
        .map(|u| conflict(format!("{job}: {u}; not derived")))
        .collect();
    // One node: nothing to say, whatever the user's flags.
    if m.nnodes.value < 2 || !knows("--nnodes") {
        return hits;
    }
    if let Some(user) = args.get("--nnodes").and(args.int("--nnodes")) {
        if user != m.nnodes.value {
            hits.push(conflict(format!(
                "--nnodes {user} is kept, but the {job} has {} nodes ({}); --node-rank and --dist-init-addr are not derived",
                m.nnodes.value, m.nnodes.why
            )));
            return hits;
        }
    } else {
        hits.push(derived(job, "--nnodes", &m.nnodes));
    }
    hits.extend(node_rank(args, &m, knows));
    hits.extend(dist_init_addr(args, &m, env, knows));
    hits
}

fn node_rank(args: &SglangArgs, m: &MultiNode, knows: &dyn Fn(&str) -> bool) -> Option<Hit> {
    let rank = m.node_rank.as_ref().filter(|_| knows("--node-rank"))?;
    if !args.is_set("--node-rank") {
        return Some(derived(m.scheduler.describe(), "--node-rank", rank));
    }
    let user = args.int("--node-rank")?;
    (user != rank.value).then(|| {
        conflict(format!(
            "--node-rank {user} is kept, but this {} process runs on node {} ({}): two nodes with one rank never finish the rendezvous",
            m.scheduler.describe(),
            rank.value,
            rank.why
        ))
    })
}

/// A user's address is never compared: an IP and a host name may well be the same node.
fn dist_init_addr(
    args: &SglangArgs,
    m: &MultiNode,
    env: &Env,
    knows: &dyn Fn(&str) -> bool,
) -> Option<Hit> {
    let given = args.is_set("--dist-init-addr")
        || env.get("SGLANG_DISTRIBUTED_INIT_METHOD_OVERRIDE").is_some();
    let addr = m.dist_init_addr.as_ref()?;
    (!given && knows("--dist-init-addr"))
        .then(|| derived(m.scheduler.describe(), "--dist-init-addr", addr))
}

fn derived<T: std::fmt::Display>(job: &str, option: &str, given: &Given<T>) -> Hit {
    let value = given.value.to_string();
    Hit::new(
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

fn conflict(message: String) -> Hit {
    Hit::new(Code::PAR010, message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sglang::{self, flagset};

    const SLURM: &[(&str, &str)] = &[
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

    /// (code, message, change) of each finding for this line under this environment.
    fn run(env: &[(&str, &str)], tokens: &[&str], no_fix: bool) -> (Vec<String>, Vec<String>) {
        let env = Env::from_pairs(env.iter().copied());
        let mut base = vec!["--model-path", "m", "--tp", "16"];
        base.extend(tokens);
        let s = step(parse(&base), &env, None, no_fix, &RuleSettings::default());
        let added = s.args.tokens[4..]
            .iter()
            .map(|t| t.to_string_lossy().into_owned())
            .collect();
        let lines = s
            .findings
            .iter()
            .map(|f| {
                format!(
                    "{} {} [{}]",
                    f.code,
                    f.message,
                    f.fix.as_deref().unwrap_or("")
                )
            })
            .collect();
        (added, lines)
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
    fn unreadable_variables_are_warnings_and_derive_nothing_from_them() {
        let (added, lines) = run(&[("SLURM_NNODES", "x")], &[], false);
        assert!(added.is_empty());
        assert_eq!(
            lines,
            ["PAR010 SLURM_NNODES=\"x\" is not a number ≥ 1: no multi-node option derived []"]
        );
        let env = [("SLURM_NNODES", "2"), ("SLURM_JOB_NODELIST", "gpu[07-08")];
        let (added, lines) = run(&env, &[], false);
        assert_eq!(added, ["--nnodes", "2"]);
        assert_eq!(
            lines[0],
            "PAR010 Slurm job: SLURM_JOB_NODELIST=\"gpu[07-08\" has a '[' without its ']'; not derived []"
        );
    }

    #[test]
    fn only_options_the_flag_set_has_and_not_when_allowed() {
        let env = Env::from_pairs(SLURM.iter().copied());
        let args = parse(&["--model-path", "m"]);
        let facts = || scheduler::read(&env);
        let none = derive(&args, facts(), &env, &|_| false);
        assert!(none.is_empty());
        let some = derive(&args, facts(), &env, &|o| o != "--dist-init-addr");
        assert_eq!(some.len(), 2);
        let settings = RuleSettings {
            allow: vec!["PAR009".into()],
            ..RuleSettings::default()
        };
        let s = step(args.clone(), &env, None, false, &settings);
        assert_eq!((s.args.tokens.len(), s.findings.len()), (2, 0));
        // The override variable stands in for the address.
        let env = Env::from_pairs(
            [
                SLURM,
                &[("SGLANG_DISTRIBUTED_INIT_METHOD_OVERRIDE", "tcp://h:1")],
            ]
            .concat(),
        );
        let hits = derive(&args, scheduler::read(&env), &env, &|_| true);
        assert!(hits.iter().all(|h| !h.message.contains("--dist-init-addr")));
    }
}
