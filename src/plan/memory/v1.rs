//! plan/v1's `memory` object, projected from the memory plan: each field the contract names
//! reads the term of its role. A term the contract does not name is in the table only.

use super::model::{MemoryPlan, Role};
use crate::plan::v1::{Memory, Reserved, StaticTerms, TermLine};

impl From<&MemoryPlan> for Memory {
    fn from(m: &MemoryPlan) -> Memory {
        let size = |r: Role| m.mib(r).and_then(|v| u64::try_from(v).ok());
        let or_zero = |r: Role| size(r).unwrap_or(0);
        Memory {
            gpu_memory_mib: m.gpu_memory_mib,
            mem_fraction_static: m.mem_fraction_static,
            mem_fraction_static_source: m.mem_fraction_static_source,
            sglang_default_mem_fraction_static: m.sglang_default_mem_fraction_static,
            sglang_default_chunked_prefill_size: m.sglang_default_chunked_prefill_size,
            sglang_default_cuda_graph_max_bs: m.sglang_default_cuda_graph_max_bs,
            weights_per_gpu_gib: m.weights_per_gpu_gib,
            kv_cache_bytes_per_token: m.kv_cache_bytes_per_token,
            kv_cache_tokens: m.kv_cache_tokens,
            max_running_requests: m.max_running_requests,
            reserved_mib: Reserved {
                cuda_context: or_zero(Role::CudaContext),
                nccl: or_zero(Role::Nccl),
                custom_allreduce: or_zero(Role::CustomAllReduce),
                cuda_graphs: or_zero(Role::CudaGraphs),
                activations: or_zero(Role::Activations),
                other_processes: or_zero(Role::OtherProcesses),
                margin: or_zero(Role::Margin),
            },
            fits: m.fits,
            static_mib: StaticTerms {
                encoder_weights: or_zero(Role::EncoderWeights),
                draft_weights: or_zero(Role::DraftWeights),
                lora: or_zero(Role::Lora),
                mamba_state: or_zero(Role::MambaState),
                swa_kv_cache: or_zero(Role::SwaKvCache),
            },
            swa_kv_cache_tokens: m.swa_kv_cache_tokens,
            mamba_cache_size: m.mamba_cache_size,
            load_peak_per_gpu_gib: m.load_peak_per_gpu_gib,
            baseline_mib: m.baseline_mib,
            weights_per_gpu_mib: size(Role::Weights),
            kv_cache_mib: size(Role::KvCache),
            static_unallocated_mib: m.mib(Role::Unallocated).and_then(|v| i64::try_from(v).ok()),
            first_use_mib: m.first_use_mib,
            captured_mib: m.captured_mib(),
            observed: m.observed.clone(),
            observed_use: m.observed_use.clone(),
            terms: m
                .terms
                .iter()
                .filter_map(|t| {
                    Some(TermLine {
                        term: key(t.role),
                        group: key(t.role.group()),
                        label: t.label.clone(),
                        mib: t.line?,
                        observed: t.observed,
                    })
                })
                .collect(),
        }
    }
}

/// A role's or group's key, as its serde name gives it.
fn key(v: impl serde::Serialize) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        _ => String::new(),
    }
}

impl MemoryPlan {
    /// The plan/v1 object of this plan.
    pub fn v1(&self) -> Memory {
        Memory::from(self)
    }
}
