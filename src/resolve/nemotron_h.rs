//! NVIDIA's Nemotron-H hybrids (Mamba and attention layers, MoE in Nemotron 3): the MoE runner
//! and the SM100 attention backend SGLang's own NemotronH branch picks, per release
//! (`tests/resolution/*.jsonl`, the `nemotronh/` lines). Its Mamba cache follows the other
//! hybrids' (the attention module's `no_buffer` family).

use super::decided::Source;
use super::inputs::Inputs;
use crate::sglang::opt;
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

/// The attention backend the branch picks when none is named: FlashInfer on SM100 (0.5.7–0.5.8
/// only with the radix cache on, and on 0.5.8 without a draft); from 0.5.19 TRT-LLM MHA on SM100
/// (with a draft only under a speculative top-k of 1) and triton on other Blackwell GPUs under a
/// draft.
pub(crate) fn attention(i: &Inputs, none_given: bool) -> Option<&'static str> {
    let (arch, cc) = (i.arch?, i.cc_major()?);
    let v = i.version;
    if !is(arch, v) || !at_least(v, "0.5.7") {
        return None;
    }
    if at_least(v, "0.5.19") {
        return newer_attention(i, cc, none_given);
    }
    let radix = !i.flag(opt::DISABLE_RADIX_CACHE);
    let early = !at_least(v, "0.5.9");
    let early_ok = radix && !(at_least(v, "0.5.8") && i.spec.is_some());
    (cc == 10 && (!early || early_ok)).then_some("flashinfer")
}

/// 0.5.19+: the override registry's pick, on Blackwell with no backend of the three named.
fn newer_attention(i: &Inputs, cc: u32, none_given: bool) -> Option<&'static str> {
    if !none_given || !super::blackwell_majors(i.version).contains(&cc) {
        return None;
    }
    if i.spec.is_none() {
        return (cc == 10).then_some("trtllm_mha");
    }
    let topk_one = i.user_topk.is_none_or(|k| k == 1);
    Some(if cc == 10 && topk_one {
        "trtllm_mha"
    } else {
        "triton"
    })
}
