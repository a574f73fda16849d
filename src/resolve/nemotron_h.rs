//! NVIDIA's Nemotron-H hybrids (Mamba and attention layers, MoE in Nemotron 3): the MoE runner
//! and the SM100 attention backend SGLang's own NemotronH branch picks, per release
//! (`tests/resolution/*.jsonl`, the `nemotronh/` lines). Its Mamba cache follows the other
//! hybrids' (the attention module's `no_buffer` family).

use super::decided::Source;
use super::inputs::Inputs;
use crate::sglang::release::at_least;

/// The first release with a NemotronH branch in its argument handling.
const FIRST: &str = "0.5.6";

/// One of the architectures SGLang's NemotronH branch takes.
pub(crate) fn is(arch: &str, version: &str) -> bool {
    let puzzle = arch == "NemotronHPuzzleForCausalLM" && at_least(version, "0.5.13");
    (arch == "NemotronHForCausalLM" || puzzle) && at_least(version, FIRST)
}

/// The quantisation SGLang's model config settles on is ModelOpt's (the branch's trigger):
/// a ModelOpt method named or read from the checkpoint (`modelopt_mixed` counts from 0.5.10;
/// before, the model config still says `modelopt` for such a checkpoint).
fn modelopt(i: &Inputs) -> bool {
    match i.quant() {
        Some("modelopt" | "modelopt_fp8" | "modelopt_fp4" | "modelopt_mixed") => true,
        Some(_) => {
            let from_checkpoint = i
                .decided
                .quantization
                .as_ref()
                .is_some_and(|q| q.source == Source::Sglang);
            from_checkpoint
                && i.model
                    .is_some_and(|m| m.config_quant_method.as_deref() == Some("modelopt"))
        }
        None => false,
    }
}

/// 0.5.6–0.5.10.post1 give a ModelOpt checkpoint FlashInfer's CUTLASS MoE runner, over whatever
/// `--moe-runner-backend` says.
pub(crate) fn forced_runner(i: &Inputs) -> Option<&'static str> {
    let arch = i.arch?;
    let window = !at_least(i.version, "0.5.11");
    (is(arch, i.version) && window && modelopt(i)).then_some("flashinfer_cutlass")
}

/// From 0.5.11 the runner SGLang picks when none is named: TRT-LLM's on SM100 without an
/// all-to-all backend, else CUTLASS; from 0.5.13 also for an unquantised checkpoint, and Marlin
/// for NVFP4 weights on SM80–SM90.
pub(crate) fn runner(i: &Inputs, cc: u32, no_a2a: bool) -> Option<&'static str> {
    let v = i.version;
    let unquantised = at_least(v, "0.5.13") && i.quant().is_none();
    if !at_least(v, "0.5.11") || !(modelopt(i) || unquantised) {
        return None;
    }
    if cc == 10 && no_a2a {
        return Some("flashinfer_trtllm");
    }
    let nvfp4 = matches!(i.quant(), Some("modelopt_fp4" | "modelopt_mixed"))
        || i.model
            .is_some_and(|m| m.quant_method.as_deref() == Some("modelopt_fp4"));
    if at_least(v, "0.5.13") && nvfp4 && (8..10).contains(&cc) {
        return Some("marlin");
    }
    Some("flashinfer_cutlass")
}

/// From 0.5.7 the branch serves it on FlashInfer on SM100 when no attention backend is named.
pub(crate) fn sm100_attention(i: &Inputs) -> Option<&'static str> {
    let arch = i.arch?;
    let on = is(arch, i.version) && at_least(i.version, "0.5.7") && i.cc_major()? == 10;
    on.then_some("flashinfer")
}
