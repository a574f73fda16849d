//! Derived views of the facts that many checks share. All of them are total: unknown or odd
//! facts (no GPUs, unparsable compute capability, missing links, options this version lacks)
//! give "unknown" answers, never a panic.

use crate::sglang::opt;
use std::collections::BTreeSet;

use super::{ArgEdit, Context, EnvEdit, Fix};
use crate::facts::Gpu;
use crate::sglang::envs::{Registry, RegistryFrom};

impl Context<'_> {
    /// The used GPUs the topology knows, in selection order.
    pub(crate) fn used(&self) -> Vec<&Gpu> {
        self.gpus
            .iter()
            .filter_map(|&i| self.topology.gpu(i))
            .collect()
    }

    /// Compute-capability majors of the used GPUs (unparsable ones left out).
    pub(crate) fn majors(&self) -> BTreeSet<u32> {
        self.used()
            .iter()
            .filter_map(|g| g.cc().map(|c| c.0))
            .collect()
    }

    /// Used GPUs whose compute capability makes `bad` true.
    pub(crate) fn gpus_where(&self, bad: impl Fn((u32, u32)) -> bool) -> Vec<&Gpu> {
        self.used()
            .into_iter()
            .filter(|g| g.cc().is_some_and(&bad))
            .collect()
    }

    pub(crate) fn tp(&self) -> i64 {
        self.server.parallel.tp
    }

    pub(crate) fn pp(&self) -> i64 {
        self.server.parallel.pp
    }

    pub(crate) fn dp(&self) -> i64 {
        self.server.parallel.dp
    }

    /// EP size as given; 0.4.x/0.5.2's `--enable-ep-moe` meant EP = TP.
    pub(crate) fn ep(&self) -> i64 {
        self.server.parallel.ep
    }

    pub(crate) fn nnodes(&self) -> i64 {
        self.server.parallel.nnodes
    }

    /// EP as the line gives it (1 when not): SGLang's argument checks see this, before an
    /// all-to-all backend sets EP to TP.
    pub(crate) fn ep_given(&self) -> i64 {
        self.user().int(opt::EP_SIZE).unwrap_or(1)
    }

    /// Attention-DP size (1 when off).
    pub(crate) fn attn_dp(&self) -> i64 {
        self.server.parallel.attn_dp
    }

    /// Data-parallel replicas (1 under DP attention, whose DP ranks live inside the TP group).
    pub(crate) fn dp_replicas(&self) -> i64 {
        self.server.parallel.replicas
    }

    /// The DP ranks SGLang runs: replicas times attention-DP groups (one of the two is 1).
    pub(crate) fn dp_ranks(&self) -> i64 {
        self.dp_replicas().max(1) * self.attn_dp().max(1)
    }

    pub(crate) fn dp_attention(&self) -> bool {
        self.server.parallel.dp_attention
    }

    /// The GPUs of the first TP group on this node (what SGLang's all-reduce gates look at).
    pub(crate) fn tp_gpus(&self) -> &[u32] {
        self.server.tp_gpus()
    }

    /// Every pair of the TP group is NVLinked (false for an empty or one-GPU group).
    pub(crate) fn tp_nvlinked(&self) -> bool {
        self.server.tp_groups.first().is_some_and(|g| g.nvlink)
    }

    /// The TP group has more than one GPU and none of its pairs is known to be NVLinked.
    pub(crate) fn tp_pcie_only(&self) -> bool {
        let g = self.tp_gpus();
        g.len() > 1
            && crate::facts::topology::pairs(g)
                .all(|(a, b)| !self.topology.link(a, b).is_some_and(|l| l.nvlink))
    }

    /// The environment registry in use: the install's own when the flag set was read from the
    /// install, else the embedded one of this version.
    pub(crate) fn env_registry(&self) -> (&Registry, RegistryFrom) {
        if let Some(r) = self.user().command_line().flags.install_registry() {
            return (r, RegistryFrom::Install);
        }
        match crate::sglang::envs::for_version(self.version) {
            (r, true) => (r, RegistryFrom::Exact),
            (r, false) => (r, RegistryFrom::Nearest),
        }
    }

    /// The DeepSeek sparse-attention prefill and decode backends, each as (option, value) under
    /// the spelling that holds it (`--dsa-…`, or `--nsa-…`: the older releases' name and, from
    /// 0.5.13, an alias of the same value), given or the release's default.
    pub(crate) fn dsa_backends(&self) -> [Option<(&'static str, String)>; 2] {
        [
            [opt::DSA_PREFILL_BACKEND, opt::NSA_PREFILL_BACKEND],
            [opt::DSA_DECODE_BACKEND, opt::NSA_DECODE_BACKEND],
        ]
        .map(|names| {
            names
                .into_iter()
                .find_map(|o| self.user().sval(o).map(|v| (o, v)))
        })
    }

    /// Attention backends chosen explicitly: (option, value) for the main, prefill and decode ones.
    pub(crate) fn attention_backends(&self) -> Vec<(&'static str, String)> {
        [
            opt::ATTENTION_BACKEND,
            opt::PREFILL_ATTENTION_BACKEND,
            opt::DECODE_ATTENTION_BACKEND,
        ]
        .into_iter()
        .filter_map(|o| self.user().sval(o).map(|v| (o, v)))
        .collect()
    }

    /// `"--option value"` for each explicit attention backend whose name matches `pred`.
    pub(crate) fn backends_where(&self, pred: impl Fn(&str) -> bool) -> Vec<String> {
        self.attention_backends()
            .into_iter()
            .filter(|(_, v)| pred(v))
            .map(|(o, v)| format!("{o} {v}"))
            .collect()
    }

    /// The attention backends in effect whose name matches `pred`: `"--option value"` for the
    /// user's, `"value (SGLang's choice: no --attention-backend given)"` for the main backend
    /// SGLang picks on its own for this GPU, model and release.
    pub(crate) fn effective_backends_where(&self, pred: impl Fn(&str) -> bool) -> Vec<String> {
        let b = &self.server.backends;
        let mut out = Vec::new();
        if let Some(a) = b.attention.as_ref().filter(|a| pred(&a.value)) {
            out.push(match a.source {
                crate::resolve::ChoiceSource::User => format!("--attention-backend {}", a.value),
                crate::resolve::ChoiceSource::Sglang => format!(
                    "{} (SGLang's choice: no --attention-backend given)",
                    a.value
                ),
            });
        }
        for (o, c) in [
            (opt::PREFILL_ATTENTION_BACKEND, &b.prefill_attention),
            (opt::DECODE_ATTENTION_BACKEND, &b.decode_attention),
        ] {
            if let Some(c) = c.as_ref().filter(|c| pred(&c.value)) {
                out.push(match c.source {
                    crate::resolve::ChoiceSource::User => format!("{o} {}", c.value),
                    crate::resolve::ChoiceSource::Sglang => {
                        format!("{} (SGLang's choice for {o})", c.value)
                    }
                });
            }
        }
        out
    }

    /// The backend decode will use, when chosen explicitly.
    pub(crate) fn decode_backend(&self) -> Option<String> {
        self.user()
            .sval(opt::DECODE_ATTENTION_BACKEND)
            .or_else(|| self.user().sval(opt::ATTENTION_BACKEND))
    }

    /// `--speculative-algorithm`, upper-cased, `NEXTN` as `EAGLE` (SGLang does the same).
    pub(crate) fn spec_algo(&self) -> Option<String> {
        self.server
            .speculative
            .as_ref()
            .map(|s| s.algorithm.clone())
    }

    /// EAGLE-family speculative decoding (EAGLE, EAGLE3, NEXTN/MTP).
    pub(crate) fn spec_eagle(&self) -> bool {
        self.server.speculative.as_ref().is_some_and(|s| s.eagle())
    }

    /// The MoE all-to-all backend in use (`none` as `None`).
    pub(crate) fn moe_a2a(&self) -> Option<String> {
        self.server.moe_a2a.clone()
    }

    /// DeepEP's dispatch mode in effect, after SGLang's own changes (`None`: DeepEP is not the
    /// all-to-all backend).
    pub(crate) fn deepep_mode(&self) -> Option<&str> {
        self.server.backends.deepep_mode.as_deref()
    }

    pub(crate) fn model_arch(&self) -> Option<&str> {
        self.model?.architecture.as_deref()
    }

    pub(crate) fn model_is_mla(&self) -> bool {
        self.model.is_some_and(|m| m.kv_lora_rank.is_some())
    }

    pub(crate) fn model_is_moe(&self) -> bool {
        self.model
            .is_some_and(|m| m.num_experts.is_some_and(|n| n > 1))
    }

    /// Quantisation in effect: `--quantization`, else the checkpoint's `quant_method`.
    pub(crate) fn quant(&self) -> Option<String> {
        self.server.quantization().map(str::to_owned)
    }

    /// The quantisation the command line names (`--quantization`, the user's or a fix's).
    pub(crate) fn quant_given(&self) -> Option<String> {
        let q = self.server.quantization_sourced()?;
        q.given().then(|| q.value.clone())
    }

    /// The KV cache dtype in effect (`None`: the release lacks `--kv-cache-dtype`).
    pub(crate) fn kv_cache_dtype(&self) -> Option<&str> {
        self.server.kv_cache_dtype()
    }

    /// The decode CUDA-graph max batch size the user gave, under any version's spelling.
    pub(crate) fn cuda_graph_max_bs_given(&self) -> Option<i64> {
        [opt::CUDA_GRAPH_MAX_BS_DECODE, opt::CUDA_GRAPH_MAX_BS]
            .into_iter()
            .find(|o| self.user().given(o))
            .and_then(|o| self.user().int(o))
    }

    /// The decode batch sizes the user asked to capture (`--cuda-graph-bs` / `-decode`): the
    /// largest one.
    pub(crate) fn cuda_graph_bs_given(&self) -> Option<i64> {
        [opt::CUDA_GRAPH_BS_DECODE, opt::CUDA_GRAPH_BS]
            .into_iter()
            .find(|o| self.user().given(o))
            .and_then(|o| self.user().command_line().get(o))
            .and_then(|v| match v {
                serde_json::Value::Array(a) => a.iter().filter_map(serde_json::Value::as_i64).max(),
                other => other.as_i64(),
            })
    }

    /// The largest decode batch SGLang captures a CUDA graph for on one rank, after its own caps:
    /// the capture list (or max batch) as resolved, cut at the request pool of one DP rank
    /// (`max_running_requests // attn_dp_size`; the resolved value includes SGLang's own 48 for
    /// speculative decoding). `None` when no decode graph is captured or nothing sizes it.
    pub(crate) fn decode_graph_max_bs(&self) -> Option<i64> {
        let d = &self.server.defaults;
        if !d.decode_graph || self.cuda_graph_disabled() {
            return None;
        }
        let listed = d
            .decode_bs
            .as_ref()
            .or(d.runner_bs.as_ref())
            .and_then(|l| l.iter().copied().max());
        let asked = self
            .cuda_graph_bs_given()
            .or(self.cuda_graph_max_bs_given());
        let base = listed.or(d.decode_max_bs).or(asked)?;
        let per_rank = d
            .max_running_requests
            .map(|m| (m / d.attn_dp_size.max(1)).max(1));
        Some(per_rank.map_or(base, |cap| base.min(cap)))
    }

    /// The MoE runner the line names, as SGLang's argument checks see it: `None` where SGLang
    /// replaces it with its own first (GPT-OSS's MXFP4 runner on Blackwell in 0.5.1–0.5.4.post3,
    /// a ModelOpt Nemotron-H's CUTLASS runner in 0.5.6–0.5.10.post1).
    pub(crate) fn named_moe_runner(&self) -> Option<String> {
        let named = self.user().sval(opt::MOE_RUNNER_BACKEND)?;
        let replaced = (self.server.backends.moe_runner.as_ref()).is_some_and(|c| {
            matches!(c.source, crate::resolve::ChoiceSource::Sglang) && c.value != named
        });
        (!replaced).then_some(named)
    }

    /// LoRA is on: `--enable-lora`, or adapters named at start-up (which turn it on).
    pub(crate) fn lora(&self) -> bool {
        self.user().flag(opt::ENABLE_LORA) || self.user().given(opt::LORA_PATHS)
    }

    /// What turns deterministic inference on, for messages: its flag, or an RL on-policy target
    /// (`None`: off).
    pub(crate) fn deterministic_by(&self) -> Option<String> {
        if !self.server.deterministic {
            return None;
        }
        let u = self.user();
        Some(match u.sval(opt::RL_ON_POLICY_TARGET) {
            Some(t) if !u.flag(opt::ENABLE_DETERMINISTIC_INFERENCE) => format!(
                "{} {t} (which turns deterministic inference on)",
                opt::RL_ON_POLICY_TARGET
            ),
            _ => opt::ENABLE_DETERMINISTIC_INFERENCE.to_owned(),
        })
    }

    pub(crate) fn cuda_graph_disabled(&self) -> bool {
        self.user().command_line().flag(opt::DISABLE_CUDA_GRAPH)
            || self
                .user()
                .command_line()
                .flag(opt::DISABLE_DECODE_CUDA_GRAPH)
            || self.user().sval(opt::CUDA_GRAPH_BACKEND_DECODE).as_deref() == Some("disabled")
    }

    /// "10.x/12.x" for these compute-capability majors.
    pub(crate) fn majors_text(majors: &[u32]) -> String {
        majors
            .iter()
            .map(|m| format!("{m}.x"))
            .collect::<Vec<_>>()
            .join("/")
    }

    /// "GPU 0–7: NVIDIA B200, compute capability 10.0" for these GPUs, grouped by model.
    pub(crate) fn describe(gpus: &[&Gpu]) -> String {
        let mut groups: Vec<(String, String, Vec<u32>)> = Vec::new();
        for g in gpus {
            match groups
                .iter_mut()
                .find(|(n, c, _)| *n == g.name && *c == g.compute_capability)
            {
                Some(grp) => grp.2.push(g.index),
                None => groups.push((g.name.clone(), g.compute_capability.clone(), vec![g.index])),
            }
        }
        if groups.is_empty() {
            return "no GPUs".into();
        }
        groups
            .iter()
            .map(|(n, c, ix)| {
                let label = if ix.len() == 1 { "GPU" } else { "GPUs" };
                format!("{label} {}: {n}, compute capability {c}", ranges(ix))
            })
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// [`Context::describe`] for every used GPU.
    pub(crate) fn describe_used(&self) -> String {
        Self::describe(&self.used())
    }
}

/// `0–3, 6` for [0,1,2,3,6].
pub(crate) fn ranges(ix: &[u32]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ix.len() {
        let mut j = i;
        while j + 1 < ix.len() && ix[j + 1] == ix[j] + 1 {
            j += 1;
        }
        out.push(if j > i + 1 {
            format!("{}–{}", ix[i], ix[j])
        } else if j == i + 1 {
            format!("{}, {}", ix[i], ix[j])
        } else {
            ix[i].to_string()
        });
        i = j + 1;
    }
    out.join(", ")
}

/// Fix helpers.
pub(crate) fn remove(opt: &str) -> Fix {
    Fix {
        summary: format!("removed {opt}"),
        args: vec![ArgEdit::Remove { option: opt.into() }],
        env: vec![],
    }
}

pub(crate) fn add_flag(opt: &str) -> Fix {
    Fix {
        summary: format!("added {opt}"),
        args: vec![ArgEdit::AddFlag { option: opt.into() }],
        env: vec![],
    }
}

pub(crate) fn set_arg(opt: &str, value: &str) -> Fix {
    Fix {
        summary: format!("set {opt} {value}"),
        args: vec![ArgEdit::Set {
            option: opt.into(),
            value: value.into(),
        }],
        env: vec![],
    }
}

pub(crate) fn set_env(name: &str, value: &str) -> Fix {
    Fix {
        summary: format!("set {name}={value}"),
        args: vec![],
        env: vec![EnvEdit::Set {
            name: name.into(),
            value: value.into(),
        }],
    }
}

pub(crate) fn unset_env(names: &[&str]) -> Fix {
    Fix {
        summary: format!("unset {}", names.join(", ")),
        args: vec![],
        env: names
            .iter()
            .map(|n| EnvEdit::Unset { name: (*n).into() })
            .collect(),
    }
}

/// An NCCL switch is on: NCCL reads these as integers, non-zero meaning on.
pub(crate) fn nccl_on(v: &str) -> bool {
    v.trim().parse::<i64>().is_ok_and(|n| n != 0)
}

/// An integer variable as SGLang's `EnvInt` reads it: `default` when unset, `None` when set to
/// something that is not an integer (SGLang would stop on it, so a rule leaves it alone).
pub(crate) fn env_int(env: &crate::facts::Env, name: &str, default: i64) -> Option<i64> {
    env.get(name)
        .map_or(Some(default), |v| v.trim().parse::<i64>().ok())
}

/// A value in SGLang's boolean spelling (`EnvBool`): true/1/yes/y, any case.
pub(crate) fn env_true(v: &str) -> bool {
    crate::sglang::envs::bool_on(v)
}

/// A value SGLang's `EnvBool` reads as off: false/0/no/n, any case (anything else it refuses).
pub(crate) fn env_false(v: &str) -> bool {
    matches!(v.to_ascii_lowercase().as_str(), "false" | "0" | "no" | "n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_ranges_read_naturally() {
        assert_eq!(ranges(&[0, 1, 2, 3, 4, 5, 6, 7]), "0–7");
        assert_eq!(ranges(&[0, 1, 3]), "0, 1, 3");
        assert_eq!(ranges(&[2]), "2");
        assert_eq!(ranges(&[]), "");
    }
}
