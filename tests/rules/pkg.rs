//! PKG: installed Python packages against the GPUs (torch, sgl-kernel, NCCL, cuDNN, FlashInfer).

use serde_json::json;

use crate::support::{B200, Case, L4, PRO, assert_cases, c, messages, model, vlm};

/// Every PKG case: the facts, and whether the rule fires.
pub fn cases() -> Vec<Case> {
    [pkg001_to_pkg003(), pkg004_to_pkg005(), pkg006()].concat()
}

fn pkg001_to_pkg003() -> Vec<Case> {
    vec![
        c("PKG001").on(PRO).tp(8).pkgs(&[("torch", "2.6.0+cu124")]),
        c("PKG001").on(B200).pkgs(&[("torch", "2.7.1+cu126")]),
        c("PKG001").on(PRO).pkgs(&[("torch", "2.9.1+cu128")]).no(),
        c("PKG001").on(PRO).pkgs(&[("torch", "2.9.1+cu130")]).no(),
        c("PKG001").pkgs(&[("torch", "2.6.0+cu124")]).no(),
        c("PKG001").pkgs(&[("torch", "2.8.0+cpu")]),
        c("PKG001").on(L4).pkgs(&[("torch", "2.5.1+rocm6.2")]),
        c("PKG001").on(L4).pkgs(&[("torch", "2.8.0+xpu")]),
        c("PKG001")
            .edit(|t| {
                t.gpus
                    .iter_mut()
                    .for_each(|g| g.compute_capability = "7.0".into())
            })
            .pkgs(&[("torch", "2.9.1+cu130")]),
        c("PKG001")
            .edit(|t| {
                t.gpus
                    .iter_mut()
                    .for_each(|g| g.compute_capability = "7.0".into())
            })
            .pkgs(&[("torch", "2.9.1+cu128")])
            .no(),
        // Unlabelled PyPI torch without torch/version.py: the build is unknown.
        c("PKG001").on(PRO).pkgs(&[("torch", "2.6.0")]).no(),
        // Packages unknown (offline planning): silent.
        c("PKG001").on(PRO).no(),
        c("PKG002").on(PRO).pkgs(&[("sgl-kernel", "0.1.9")]),
        c("PKG002").on(PRO).pkgs(&[("sgl_kernel", "0.2.7+cu126")]),
        c("PKG002")
            .on(PRO)
            .pkgs(&[("sgl-kernel", "0.2.7+cu128")])
            .no(),
        c("PKG002")
            .on(PRO)
            .pkgs(&[("sglang-kernel", "0.4.10")])
            .no(),
        c("PKG002").pkgs(&[("sgl-kernel", "0.1.9")]).no(),
        // A source build (PEP 610 direct_url.json) may well have sm_120.
        c("PKG002")
            .on(PRO)
            .pkgs(&[("sgl-kernel", "0.1.9")])
            .edit_pkgs(|p| p.packages.values_mut().for_each(|k| k.direct = true))
            .no(),
        c("PKG003")
            .on(PRO)
            .tp(2)
            .pkgs(&[("torch", "2.7.1+cu128"), ("nvidia-nccl-cu12", "2.26.2")]),
        c("PKG003")
            .on(PRO)
            .tp(2)
            .pkgs(&[("torch", "2.7.1+cu128"), ("nvidia-nccl-cu12", "2.27.3")])
            .no(),
        c("PKG003")
            .on(PRO)
            .pkgs(&[("nvidia-nccl-cu12", "2.26.2")])
            .no(),
        c("PKG003")
            .tp(8)
            .pkgs(&[("nvidia-nccl-cu12", "2.26.2")])
            .no(),
    ]
}

fn pkg004_to_pkg005() -> Vec<Case> {
    vec![
        c("PKG004").version("0.5.5").model(vlm()).pkgs(&[
            ("sglang", "0.5.9"),
            ("torch", "2.9.1+cu128"),
            ("nvidia-cudnn-cu12", "9.10.2.21"),
        ]),
        c("PKG004")
            .version("0.5.5")
            .model(vlm())
            .pkgs(&[
                ("sglang", "0.5.5"),
                ("torch", "2.9.1+cu128"),
                ("nvidia-cudnn-cu12", "9.10.2.21"),
            ])
            .no(),
        c("PKG004")
            .version("0.5.5")
            .model(vlm())
            .pkgs(&[
                ("sglang", "0.5.7"),
                ("torch", "2.9.1+cu128"),
                ("nvidia-cudnn-cu12", "9.16.0.29"),
            ])
            .no(),
        c("PKG004")
            .version("0.5.5")
            .model(vlm())
            .env("SGLANG_DISABLE_CUDNN_CHECK", "1")
            .pkgs(&[
                ("sglang", "0.5.7"),
                ("torch", "2.9.1+cu128"),
                ("nvidia-cudnn-cu12", "9.10.2.21"),
            ])
            .no(),
        c("PKG004")
            .version("0.5.5")
            .model(model("Qwen2ForCausalLM"))
            .pkgs(&[
                ("sglang", "0.5.7"),
                ("torch", "2.9.1+cu128"),
                ("nvidia-cudnn-cu12", "9.10.2.21"),
            ])
            .no(),
        c("PKG004")
            .version("0.5.23")
            .model(vlm())
            .pkgs(&[
                ("sglang", "0.5.7"),
                ("torch", "2.9.1+cu128"),
                ("nvidia-cudnn-cu12", "9.10.2.21"),
            ])
            .no(),
        c("PKG005")
            .on(PRO)
            .arg("--quantization", json!("modelopt_fp4"))
            .pkgs(&[("flashinfer-python", "0.6.3")]),
        c("PKG005")
            .on(PRO)
            .arg("--quantization", json!("modelopt_fp4"))
            .pkgs(&[("flashinfer-python", "0.6.7.post3")])
            .no(),
        c("PKG005")
            .on(B200)
            .arg("--quantization", json!("modelopt_fp4"))
            .pkgs(&[("flashinfer_python", "0.6.3")])
            .no(),
    ]
}

fn pkg006() -> Vec<Case> {
    vec![
        c("PKG006")
            .on(PRO)
            .pkgs(&[("flashinfer-python", "0.6.7.post3")])
            .toolkit(true, Some((12, 8))),
        c("PKG006")
            .on(PRO)
            .pkgs(&[("flashinfer-python", "0.7.2")])
            .toolkit(true, Some((12, 8)))
            .no(),
        c("PKG006")
            .on(PRO)
            .pkgs(&[("flashinfer-python", "0.7.2")])
            .toolkit(true, Some((12, 6))),
        c("PKG006")
            .on(PRO)
            .pkgs(&[("flashinfer-python", "0.5.3")])
            .toolkit(true, Some((12, 6))),
        c("PKG006")
            .on(PRO)
            .pkgs(&[
                ("flashinfer-python", "0.6.7.post3"),
                ("flashinfer-jit-cache", "0.6.7.post3"),
            ])
            .toolkit(true, Some((12, 8)))
            .no(),
        c("PKG006")
            .on(PRO)
            .pkgs(&[("flashinfer-python", "0.6.7.post3")])
            .toolkit(true, Some((12, 9)))
            .no(),
        // No nvcc: FlashInfer goes by torch's CUDA.
        c("PKG006")
            .on(PRO)
            .pkgs(&[
                ("torch", "2.9.1+cu128"),
                ("flashinfer-python", "0.6.7.post3"),
            ])
            .toolkit(false, None),
        c("PKG006")
            .on(PRO)
            .pkgs(&[
                ("torch", "2.9.1+cu130"),
                ("flashinfer-python", "0.6.7.post3"),
            ])
            .no(),
        c("PKG006")
            .on(PRO)
            .pkgs(&[("torch", "2.9.1+cu126"), ("flashinfer-python", "0.6.3")]),
        c("PKG006")
            .on(PRO)
            .pkgs(&[("flashinfer-python", "0.6.7.post3")])
            .toolkit(true, None)
            .no(),
        c("PKG006")
            .pkgs(&[("flashinfer-python", "0.6.7.post3")])
            .toolkit(true, Some((12, 4)))
            .no(),
        c("PKG006")
            .on(PRO)
            .env("FLASHINFER_CUDA_ARCH_LIST", "12.0f")
            .pkgs(&[("flashinfer-python", "0.6.7.post3")])
            .toolkit(true, Some((12, 8)))
            .no(),
        // GB10 (SM 12.1) needs 12.9 in every release.
        c("PKG006")
            .on(PRO)
            .edit(|t| {
                t.gpus
                    .iter_mut()
                    .for_each(|g| g.compute_capability = "12.1".into())
            })
            .pkgs(&[("flashinfer-python", "0.7.2")])
            .toolkit(true, Some((12, 8))),
    ]
}

#[test]
fn cases_fire_or_stay_quiet() {
    assert_cases("PKG", &cases());
}

#[test]
fn messages_match_the_snapshots() {
    for (code, text) in messages(&cases()) {
        insta::assert_snapshot!(code, text);
    }
}
