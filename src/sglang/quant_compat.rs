//! When SGLang's model config refuses a `--quantization` that is not the checkpoint's
//! `quant_method`, per release: `data/quant-compat.json`, generated from each release's
//! `_verify_quantization` and quantisation methods by `scripts/gen-quant-compat.py`.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;

use super::release;

#[derive(Deserialize)]
struct Data {
    releases: Vec<String>,
    tables: Vec<Table>,
    by_release: Vec<usize>,
}

#[derive(Deserialize)]
struct Table {
    /// `--quantization` → the checkpoint methods it is accepted with.
    compatible: BTreeMap<String, Vec<String>>,
    /// Methods that requantise any checkpoint online.
    requantize: Vec<String>,
    overrides: Vec<Override>,
    /// The methods a ROCm build of the release takes (`rocm_supported_quantization`).
    rocm: Vec<String>,
    /// config.json methods the release replaces by one parsed from the rest of the config before
    /// comparing (a `modelopt` checkpoint's `quant_algo` from 0.5.10).
    #[serde(default)]
    reparsed: Vec<String>,
}

/// A method's `override_quantization_method` may return a method (which then stands for both
/// sides) for these given and checkpoint methods (`None`: any).
#[derive(Deserialize)]
struct Override {
    given: Option<Vec<String>>,
    checkpoint: Option<Vec<String>>,
    /// Registered from vLLM: it may fire for any pair where vLLM is installed.
    vllm: bool,
    /// It returns a method only in a ROCm build.
    #[serde(default)]
    rocm: bool,
}

/// What is known of the install beside the release: whether vLLM is absent, and whether the
/// host's GPUs are NVIDIA's (so no ROCm build runs the line).
#[derive(Clone, Copy, Default)]
pub(crate) struct Install {
    pub(crate) vllm_absent: bool,
    pub(crate) nvidia: bool,
}

fn data() -> &'static Data {
    static DATA: OnceLock<Data> = OnceLock::new();
    DATA.get_or_init(|| {
        serde_json::from_str(include_str!("../../data/quant-compat.json"))
            .expect("data/quant-compat.json is generated valid")
    })
}

fn covers(set: Option<&Vec<String>>, m: &str) -> bool {
    set.is_none_or(|s| s.iter().any(|x| x == m))
}

/// Whether release `version` refuses `--quantization given` for a checkpoint whose
/// `quant_method` is `checkpoint` for sure: an embedded release (exactly), the methods differ,
/// the pair is not in its compatibility table, the release compares the checkpoint's method as
/// written, and no override can apply (one from vLLM can, unless vLLM is absent; a ROCm-only one
/// can, unless the host is NVIDIA's).
pub(crate) fn refuses(version: &str, given: &str, checkpoint: &str, install: Install) -> bool {
    let Some(table) = table_of(version) else {
        return false;
    };
    if given == checkpoint
        || table.requantize.iter().any(|m| m == given)
        || table.reparsed.iter().any(|m| m == checkpoint)
    {
        return false;
    }
    let compatible = table.compatible.get(given);
    if compatible.is_some_and(|c| c.iter().any(|m| m == checkpoint)) {
        return false;
    }
    !table.overrides.iter().any(|o| {
        if o.vllm {
            return !install.vllm_absent;
        }
        if o.rocm && install.nvidia {
            return false;
        }
        covers(o.given.as_ref(), given) && covers(o.checkpoint.as_ref(), checkpoint)
    })
}

/// Whether a ROCm build of release `version` refuses the quantisation method in effect: an
/// embedded release (exactly) whose ROCm list lacks it.
pub(crate) fn rocm_refuses(version: &str, method: &str) -> bool {
    table_of(version).is_some_and(|t| !t.rocm.is_empty() && !t.rocm.iter().any(|m| m == method))
}

/// The table of an embedded release, by its exact version.
fn table_of(version: &str) -> Option<&'static Table> {
    let d = data();
    release::position(version)
        .and_then(|i| release::KNOWN_VERSIONS.get(i))
        .and_then(|v| d.releases.iter().position(|r| r == v))
        .and_then(|i| d.by_release.get(i))
        .and_then(|&t| d.tables.get(t))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_follow_the_release() {
        let absent = Install {
            vllm_absent: true,
            nvidia: false,
        };
        // A different method with no override or compatibility: refused.
        assert!(refuses("0.5.5", "gptq", "awq", absent));
        assert!(refuses("0.5.23", "fp8", "awq", absent));
        // Marlin takes over AWQ / GPTQ checkpoints; ModelOpt FP4 is compatible with modelopt.
        assert!(!refuses("0.5.5", "awq_marlin", "awq", absent));
        assert!(!refuses("0.5.5", "gptq_marlin", "gptq", absent));
        assert!(!refuses("0.5.5", "modelopt_fp4", "modelopt", absent));
        assert!(!refuses("0.5.5", "w8a8_fp8", "compressed-tensors", absent));
        assert!(!refuses("0.5.23", "quark_mxfp4", "fp8", absent));
        // vLLM's overrides cannot be read: unknown where it may be installed.
        assert!(!refuses("0.5.3", "gptq", "awq", Install::default()));
        assert!(refuses("0.5.3", "gptq", "awq", absent));
        // Not an embedded release: unknown.
        assert!(!refuses("0.5.24.dev1", "gptq", "awq", absent));
        assert_eq!(data().releases.len(), data().by_release.len());
    }

    #[test]
    fn petits_override_takes_a_modelopt_checkpoint_only_in_a_rocm_build() {
        let nvidia = Install {
            vllm_absent: true,
            nvidia: true,
        };
        let unknown = Install {
            vllm_absent: true,
            nvidia: false,
        };
        assert!(refuses("0.5.9", "fp8", "modelopt", nvidia));
        assert!(!refuses("0.5.9", "fp8", "modelopt", unknown));
        // From 0.5.10 the method compared is parsed from quant_algo, which an override takes.
        assert!(!refuses("0.5.10", "fp8", "modelopt", nvidia));
        assert!(refuses("0.5.10", "fp8", "awq", nvidia));
        // Before Petit was registered nothing takes the pair over, wherever it runs.
        assert!(refuses("0.4.9", "fp8", "modelopt", unknown));
    }

    #[test]
    fn rocm_takes_the_methods_its_release_lists() {
        // MXFP8 joined the ROCm list in 0.5.14.
        assert!(rocm_refuses("0.5.13.post1", "mxfp8"));
        assert!(!rocm_refuses("0.5.14", "mxfp8"));
        assert!(!rocm_refuses("0.5.13.post1", "fp8"));
        assert!(rocm_refuses("0.5.23", "modelopt_fp4"));
        assert!(!rocm_refuses("0.5.24.dev1", "mxfp8"));
    }
}
