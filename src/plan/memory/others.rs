//! Memory other processes hold (MEM011). SGLang sizes every rank's KV cache from the smallest
//! free memory among its GPUs, so memory held on any one of them shrinks them all.

use super::terms::fmt_gib;
use crate::facts::Gpu;
use crate::rules::{Code, Finding};

/// Below this, "used" memory is the driver's own reservation on an idle GPU, MiB.
const IDLE_USED_MIB: u64 = 1024;

/// MEM011 when other processes hold memory on a used GPU and it costs KV tokens: `freed_tokens`
/// is the same plan with that memory free.
pub(crate) fn finding(gpus: &[&Gpu], tokens: u64, freed_tokens: u64) -> Option<Finding> {
    let busy: Vec<&&Gpu> = gpus
        .iter()
        .filter(|g| g.memory_used_mib.unwrap_or(0) >= IDLE_USED_MIB)
        .collect();
    let worst = busy.first()?;
    let cost = freed_tokens.checked_sub(tokens).filter(|&c| c > 0)?;
    let others = busy[1..]
        .iter()
        .map(|g| {
            let used = g.memory_used_mib.unwrap_or(0) as f64;
            format!("GPU {} {}", g.index, fmt_gib(used))
        })
        .collect::<Vec<_>>();
    let also = if others.is_empty() {
        String::new()
    } else {
        format!(" (also held: {})", others.join(", "))
    };
    Some(Finding::new(
        Code::MEM011,
        format!(
            "GPU {} ({}) already has {} held by other processes{also}; SGLang sizes every \
             rank's KV cache from the least free memory, so this costs {cost} KV tokens on all \
             {} GPUs ({freed_tokens} with that memory free, {tokens} now)",
            worst.index,
            worst.name,
            fmt_gib(worst.memory_used_mib.unwrap_or(0) as f64),
            gpus.len(),
        ),
    ))
}
