//! The multi-node job a scheduler started this process in, as its environment tells:
//! Kubernetes LeaderWorkerSet (`LWS_*`, one pod per node) or Slurm (`SLURM_*`; a step started
//! by `srun` has `SLURM_STEP_ID`, the batch shell has not). Read from [`Env`] only; what the
//! launcher makes of it is `plan::multinode`.

use crate::sglang::opt;
pub mod hostlist;

use super::Env;

/// SGLang's multi-node examples rendezvous on port 20000; `MASTER_PORT` wins when the job sets
/// one, since a job that sets it has picked a port its nodes may use (as `MASTER_ADDR` names
/// the host).
pub(crate) const DEFAULT_PORT: u16 = 20000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scheduler {
    Lws,
    Slurm,
}

impl Scheduler {
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Scheduler::Lws => "LeaderWorkerSet group",
            Scheduler::Slurm => "Slurm job",
        }
    }
}

/// A value the scheduler gives: `source` names the variables (for the change line), `why`
/// shows them with their values (for the finding).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Given<T> {
    pub(crate) value: T,
    pub(crate) source: String,
    pub(crate) why: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MultiNode {
    pub(crate) scheduler: Scheduler,
    pub(crate) nnodes: Given<i64>,
    pub(crate) node_rank: Option<Given<i64>>,
    pub(crate) dist_init_addr: Option<Given<String>>,
    /// Variables that are set but unreadable: the option each would give, and why.
    pub(crate) unreadable: Vec<(&'static str, String)>,
    /// Why this process cannot be one node of the job (Slurm's batch shell, several tasks per
    /// node), with what to run instead.
    pub(crate) not_a_node: Option<String>,
}

/// The scheduler's multi-node facts: `None` outside a scheduler, `Err` (why) when its node
/// count is unreadable. LeaderWorkerSet first: its variables are set only by its controller.
pub(crate) fn read(env: &Env) -> Option<Result<MultiNode, String>> {
    if let Some(size) = env.get("LWS_GROUP_SIZE") {
        return Some(lws(env, size));
    }
    let nodes = first_set(env, &["SLURM_STEP_NUM_NODES", "SLURM_NNODES"])?;
    Some(slurm(env, nodes))
}

fn lws(env: &Env, size: &str) -> Result<MultiNode, String> {
    let mut unreadable = Vec::new();
    let nnodes = number("LWS_GROUP_SIZE", size, 1)?;
    let node_rank = optional_number(env, "LWS_WORKER_INDEX", opt::NODE_RANK, &mut unreadable);
    let leader = env
        .get("LWS_LEADER_ADDRESS")
        .map(str::trim)
        .filter(|a| !a.is_empty());
    let leader = leader.map(|host| Given {
        value: host.to_owned(),
        source: "LWS_LEADER_ADDRESS".into(),
        why: format!("LWS_LEADER_ADDRESS={host}"),
    });
    let dist_init_addr = with_port(env, leader, &mut unreadable);
    Ok(MultiNode {
        scheduler: Scheduler::Lws,
        nnodes,
        node_rank,
        dist_init_addr,
        unreadable,
        not_a_node: None,
    })
}

/// Step-scoped variables before job-scoped ones: inside `srun` they describe the nodes that
/// actually run this step.
fn slurm(env: &Env, (name, nodes): (&'static str, &str)) -> Result<MultiNode, String> {
    let mut unreadable = Vec::new();
    let nnodes = number(name, nodes, 1)?;
    let node_rank = optional_number(env, "SLURM_NODEID", opt::NODE_RANK, &mut unreadable);
    let first = first_set(env, &["SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST"])
        .and_then(|list| first_host(list, &mut unreadable));
    let dist_init_addr = with_port(env, first, &mut unreadable);
    let not_a_node = slurm_not_a_node(env, nnodes.value);
    Ok(MultiNode {
        scheduler: Scheduler::Slurm,
        nnodes,
        node_rank,
        dist_init_addr,
        unreadable,
        not_a_node,
    })
}

/// Outside an `srun` step every node's rank reads 0 (the batch shell runs on the first node
/// only); with several tasks per node each task would start its own server on the same GPUs.
fn slurm_not_a_node(env: &Env, nodes: i64) -> Option<String> {
    let run = "run it as `srun --ntasks-per-node=1 sglang-launch …`, one task per node";
    if env.get("SLURM_STEP_ID").is_none() {
        return Some(format!(
            "this is the job's batch shell, not an srun step (SLURM_STEP_ID unset): {run}"
        ));
    }
    let (name, tasks) = first_set(env, &["SLURM_STEP_NUM_TASKS", "SLURM_NTASKS"])?;
    let tasks = tasks.trim().parse::<i64>().ok()?;
    (tasks > nodes).then(|| {
        format!(
            "{name}={tasks} tasks on {nodes} nodes: every task on a node would start a server on the same GPUs; {run}"
        )
    })
}

fn first_set<'a>(env: &'a Env, names: &[&'static str]) -> Option<(&'static str, &'a str)> {
    names.iter().find_map(|&n| env.get(n).map(|v| (n, v)))
}

/// A count of at least `min`, with its variable.
fn number(name: &str, value: &str, min: i64) -> Result<Given<i64>, String> {
    match value.trim().parse::<i64>() {
        Ok(n) if n >= min => Ok(Given {
            value: n,
            source: name.to_owned(),
            why: format!("{name}={n}"),
        }),
        _ => Err(format!("{name}={value:?} is not a number ≥ {min}")),
    }
}

fn optional_number(
    env: &Env,
    name: &str,
    option: &'static str,
    unreadable: &mut Vec<(&'static str, String)>,
) -> Option<Given<i64>> {
    number(name, env.get(name)?, 0)
        .map_err(|e| unreadable.push((option, e)))
        .ok()
}

/// The first host of a compressed Slurm hostlist.
fn first_host(
    (name, list): (&str, &str),
    unreadable: &mut Vec<(&'static str, String)>,
) -> Option<Given<String>> {
    match hostlist::expand(list) {
        Ok(hosts) => Some(Given {
            value: hosts[0].clone(),
            source: name.to_owned(),
            why: format!("{name}={list}: first of {} hosts", hosts.len()),
        }),
        Err(e) => {
            unreadable.push((opt::DIST_INIT_ADDR, format!("{name}={list:?} {e}")));
            None
        }
    }
}

/// `HOST:PORT`: the host from `MASTER_ADDR` when set, the port from `MASTER_PORT` when set,
/// else [`DEFAULT_PORT`].
fn with_port(
    env: &Env,
    host: Option<Given<String>>,
    unreadable: &mut Vec<(&'static str, String)>,
) -> Option<Given<String>> {
    let host = match env.get("MASTER_ADDR").map(str::trim) {
        Some(addr) if !addr.is_empty() => Given {
            value: addr.to_owned(),
            source: "MASTER_ADDR".into(),
            why: format!("MASTER_ADDR={addr}"),
        },
        _ => host?,
    };
    let (port, source, why) = match env.get("MASTER_PORT") {
        None => (
            DEFAULT_PORT,
            format!("{}, port {DEFAULT_PORT}", host.source),
            format!("port {DEFAULT_PORT}, as in SGLang's multi-node examples (MASTER_PORT unset)"),
        ),
        Some(p) => match p.trim().parse::<u16>() {
            Ok(port) if port > 0 => (
                port,
                format!("{}, MASTER_PORT", host.source),
                format!("MASTER_PORT={port}"),
            ),
            _ => {
                unreadable.push((
                    opt::DIST_INIT_ADDR,
                    format!("MASTER_PORT={p:?} is not a port"),
                ));
                return None;
            }
        },
    };
    // An IPv6 address needs brackets before the port.
    let addr = if host.value.contains(':') {
        format!("[{}]:{port}", host.value)
    } else {
        format!("{}:{port}", host.value)
    };
    Some(Given {
        value: addr,
        source,
        why: format!("{}; {why}", host.why),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_env(pairs: &[(&str, &str)]) -> Option<Result<MultiNode, String>> {
        read(&Env::from_pairs(pairs.iter().copied()))
    }

    fn multinode(pairs: &[(&str, &str)]) -> MultiNode {
        read_env(pairs).expect("a scheduler").expect("readable")
    }

    fn values(m: &MultiNode) -> (i64, Option<i64>, Option<&str>) {
        (
            m.nnodes.value,
            m.node_rank.as_ref().map(|g| g.value),
            m.dist_init_addr.as_ref().map(|g| g.value.as_str()),
        )
    }

    #[test]
    fn outside_a_scheduler_nothing_is_read() {
        assert_eq!(
            read_env(&[("SLURM_JOB_ID", "7"), ("MASTER_PORT", "1")]),
            None
        );
    }

    #[test]
    fn slurm_step_scope_before_job_scope() {
        let m = multinode(&[
            ("SLURM_NNODES", "4"),
            ("SLURM_STEP_NUM_NODES", "2"),
            ("SLURM_NODEID", "1"),
            ("SLURM_JOB_NODELIST", "gpu[01-04]"),
            ("SLURM_STEP_NODELIST", "gpu[03-04]"),
        ]);
        assert_eq!(m.scheduler, Scheduler::Slurm);
        assert_eq!(values(&m), (2, Some(1), Some("gpu03:20000")));
        assert_eq!(m.nnodes.source, "SLURM_STEP_NUM_NODES");
        assert_eq!(
            m.dist_init_addr.unwrap().source,
            "SLURM_STEP_NODELIST, port 20000"
        );
        let m = multinode(&[
            ("SLURM_NNODES", "2"),
            ("SLURM_NODEID", "0"),
            ("SLURM_JOB_NODELIST", "gpu[07-08,10],login1"),
            ("MASTER_PORT", "29500"),
        ]);
        assert_eq!(values(&m), (2, Some(0), Some("gpu07:29500")));
        assert_eq!(m.nnodes.why, "SLURM_NNODES=2");
        assert!(m.unreadable.is_empty());
    }

    #[test]
    fn leaderworkerset_before_slurm() {
        let m = multinode(&[
            ("LWS_GROUP_SIZE", "2"),
            ("LWS_WORKER_INDEX", "1"),
            ("LWS_LEADER_ADDRESS", "llm-0.llm.default"),
            ("SLURM_NNODES", "8"),
        ]);
        assert_eq!(m.scheduler, Scheduler::Lws);
        assert_eq!(values(&m), (2, Some(1), Some("llm-0.llm.default:20000")));
        let m = multinode(&[("LWS_GROUP_SIZE", "2"), ("LWS_LEADER_ADDRESS", "fd00::1")]);
        assert_eq!(values(&m), (2, None, Some("[fd00::1]:20000")));
    }

    #[test]
    fn unreadable_values_are_named_and_derive_nothing() {
        assert_eq!(
            read_env(&[("SLURM_NNODES", "two")]),
            Some(Err("SLURM_NNODES=\"two\" is not a number ≥ 1".into()))
        );
        assert!(matches!(read_env(&[("LWS_GROUP_SIZE", "0")]), Some(Err(_))));
        let m = multinode(&[
            ("SLURM_NNODES", "2"),
            ("SLURM_NODEID", "-1"),
            ("SLURM_JOB_NODELIST", "gpu[07-08"),
        ]);
        assert_eq!(values(&m), (2, None, None));
        assert_eq!(
            m.unreadable,
            [
                (
                    "--node-rank",
                    "SLURM_NODEID=\"-1\" is not a number ≥ 0".into()
                ),
                (
                    "--dist-init-addr",
                    "SLURM_JOB_NODELIST=\"gpu[07-08\" has a '[' without its ']'".into()
                ),
            ]
        );
        let m = multinode(&[
            ("LWS_GROUP_SIZE", "2"),
            ("LWS_LEADER_ADDRESS", "l"),
            ("MASTER_PORT", "70000"),
        ]);
        assert_eq!(values(&m), (2, None, None));
        assert_eq!(
            m.unreadable,
            [(
                "--dist-init-addr",
                "MASTER_PORT=\"70000\" is not a port".into()
            )]
        );
    }

    #[test]
    fn master_addr_names_the_host_like_master_port_the_port() {
        let m = multinode(&[
            ("LWS_GROUP_SIZE", "2"),
            ("LWS_LEADER_ADDRESS", "llm-0.llm"),
            ("MASTER_ADDR", "10.0.0.9"),
            ("MASTER_PORT", "29500"),
        ]);
        let addr = m.dist_init_addr.unwrap();
        assert_eq!(addr.value, "10.0.0.9:29500");
        assert_eq!(addr.source, "MASTER_ADDR, MASTER_PORT");
        // Without a leader or nodelist, MASTER_ADDR alone still gives the address.
        let m = multinode(&[("SLURM_NNODES", "2"), ("MASTER_ADDR", "head")]);
        assert_eq!(m.dist_init_addr.unwrap().value, "head:20000");
    }

    #[test]
    fn only_an_srun_step_with_one_task_per_node_is_a_node() {
        let job = [("SLURM_NNODES", "2"), ("SLURM_NODEID", "0")];
        let batch = multinode(&job).not_a_node.unwrap();
        assert!(batch.contains("batch shell") && batch.contains("srun --ntasks-per-node=1"));
        let step = [
            &job[..],
            &[("SLURM_STEP_ID", "0"), ("SLURM_STEP_NUM_TASKS", "2")],
        ]
        .concat();
        assert_eq!(multinode(&step).not_a_node, None);
        let many = [
            &job[..],
            &[("SLURM_STEP_ID", "0"), ("SLURM_STEP_NUM_TASKS", "16")],
        ]
        .concat();
        let why = multinode(&many).not_a_node.unwrap();
        assert!(
            why.starts_with("SLURM_STEP_NUM_TASKS=16 tasks on 2 nodes"),
            "{why}"
        );
        // A LeaderWorkerSet pod is always one node.
        let pod = multinode(&[("LWS_GROUP_SIZE", "2"), ("LWS_WORKER_INDEX", "1")]);
        assert_eq!(pod.not_a_node, None);
    }
}
