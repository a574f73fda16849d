//! The multi-node job a scheduler started this process in, as its environment tells:
//! Kubernetes LeaderWorkerSet (`LWS_*`, one pod per node) or Slurm (`SLURM_*`, one task per
//! node). Read from [`Env`] only; what the launcher makes of it is `plan::multinode`.

pub mod hostlist;

use super::Env;

/// SGLang's multi-node examples rendezvous on port 20000; `MASTER_PORT` wins when the job sets
/// one, since a job that sets it has picked a port its nodes may use.
pub const DEFAULT_PORT: u16 = 20000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheduler {
    Lws,
    Slurm,
}

impl Scheduler {
    pub fn describe(self) -> &'static str {
        match self {
            Scheduler::Lws => "LeaderWorkerSet group",
            Scheduler::Slurm => "Slurm job",
        }
    }
}

/// A value the scheduler gives: `source` names the variables (for the change line), `why`
/// shows them with their values (for the finding).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Given<T> {
    pub value: T,
    pub source: String,
    pub why: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MultiNode {
    pub scheduler: Scheduler,
    pub nnodes: Given<i64>,
    pub node_rank: Option<Given<i64>>,
    pub dist_init_addr: Option<Given<String>>,
    /// Variables that are set but unreadable, and why: nothing is derived from them.
    pub unreadable: Vec<String>,
}

/// The scheduler's multi-node facts: `None` outside a scheduler, `Err` (why) when its node
/// count is unreadable. LeaderWorkerSet first: its variables are set only by its controller.
pub fn read(env: &Env) -> Option<Result<MultiNode, String>> {
    if let Some(size) = env.get("LWS_GROUP_SIZE") {
        return Some(lws(env, size));
    }
    let nodes = first_set(env, &["SLURM_STEP_NUM_NODES", "SLURM_NNODES"])?;
    Some(slurm(env, nodes))
}

fn lws(env: &Env, size: &str) -> Result<MultiNode, String> {
    let mut unreadable = Vec::new();
    let nnodes = number("LWS_GROUP_SIZE", size, 1)?;
    let node_rank = optional_number(env, "LWS_WORKER_INDEX", &mut unreadable);
    let leader = env
        .get("LWS_LEADER_ADDRESS")
        .map(str::trim)
        .filter(|a| !a.is_empty());
    let dist_init_addr = leader.and_then(|host| {
        let host = Given {
            value: host.to_owned(),
            source: "LWS_LEADER_ADDRESS".into(),
            why: format!("LWS_LEADER_ADDRESS={host}"),
        };
        with_port(env, host, &mut unreadable)
    });
    Ok(MultiNode {
        scheduler: Scheduler::Lws,
        nnodes,
        node_rank,
        dist_init_addr,
        unreadable,
    })
}

/// Step-scoped variables before job-scoped ones: inside `srun` they describe the nodes that
/// actually run this step.
fn slurm(env: &Env, (name, nodes): (&'static str, &str)) -> Result<MultiNode, String> {
    let mut unreadable = Vec::new();
    let nnodes = number(name, nodes, 1)?;
    let node_rank = optional_number(env, "SLURM_NODEID", &mut unreadable);
    let first = first_set(env, &["SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST"])
        .and_then(|list| first_host(list, &mut unreadable));
    let dist_init_addr = first.and_then(|host| with_port(env, host, &mut unreadable));
    Ok(MultiNode {
        scheduler: Scheduler::Slurm,
        nnodes,
        node_rank,
        dist_init_addr,
        unreadable,
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

fn optional_number(env: &Env, name: &str, unreadable: &mut Vec<String>) -> Option<Given<i64>> {
    number(name, env.get(name)?, 0)
        .map_err(|e| unreadable.push(e))
        .ok()
}

/// The first host of a compressed Slurm hostlist.
fn first_host((name, list): (&str, &str), unreadable: &mut Vec<String>) -> Option<Given<String>> {
    match hostlist::expand(list) {
        Ok(hosts) => Some(Given {
            value: hosts[0].clone(),
            source: name.to_owned(),
            why: format!("{name}={list}: first of {} hosts", hosts.len()),
        }),
        Err(e) => {
            unreadable.push(format!("{name}={list:?} {e}"));
            None
        }
    }
}

/// `HOST:PORT`, the port from `MASTER_PORT` when set, else [`DEFAULT_PORT`].
fn with_port(
    env: &Env,
    host: Given<String>,
    unreadable: &mut Vec<String>,
) -> Option<Given<String>> {
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
                unreadable.push(format!("MASTER_PORT={p:?} is not a port"));
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
                "SLURM_NODEID=\"-1\" is not a number ≥ 0",
                "SLURM_JOB_NODELIST=\"gpu[07-08\" has a '[' without its ']'",
            ]
        );
        let m = multinode(&[
            ("LWS_GROUP_SIZE", "2"),
            ("LWS_LEADER_ADDRESS", "l"),
            ("MASTER_PORT", "70000"),
        ]);
        assert_eq!(values(&m), (2, None, None));
        assert_eq!(m.unreadable, ["MASTER_PORT=\"70000\" is not a port"]);
    }
}
