//! Installed packages versus the GPUs and the model. Every check is silent when the packages
//! are unknown (`ctx.packages` is `None`: offline planning) or the package is not installed.
//! None has a fix: the launcher never installs packages, the message says what to install.

use super::*;
use crate::facts::packages::{Cuda, Package, TorchBuild};
use crate::sglang::release;

/// The first CUDA release that compiles for Blackwell (sm_100, sm_120).
const BLACKWELL_CUDA: Cuda = Cuda(12, 8);
/// CUDA 13 dropped Maxwell, Pascal and Volta: its builds start at sm_75.
const CUDA13_MIN_CC: (u32, u32) = (7, 5);

fn pkg<'a>(
    ctx: &'a Context,
    f: impl Fn(&'a crate::facts::Packages) -> Option<&'a Package>,
) -> Option<&'a Package> {
    ctx.packages.and_then(f)
}

/// `sm_100/sm_120` for the GPUs' compute capabilities, in order, without repeats.
fn sm_names(gpus: &[&crate::facts::Gpu]) -> String {
    let mut names: Vec<String> = Vec::new();
    for (m, n) in gpus.iter().filter_map(|g| g.cc()) {
        let name = format!("sm_{m}{n}");
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names.join("/")
}

pub(crate) fn torch_build(ctx: &Context) -> Vec<Fired> {
    let Some(pkgs) = ctx.packages else {
        return vec![];
    };
    let Some(torch) = pkgs.torch() else {
        return vec![];
    };
    match &pkgs.torch_build {
        Some(TorchBuild::Cpu) => {
            let used = ctx.used();
            if used.is_empty() {
                return vec![];
            }
            vec![Fired::new(format!(
                "torch {} is a CPU-only build with no CUDA kernels; {}; install a CUDA build of torch (the version SGLang {} pins, from PyPI or download.pytorch.org/whl/cu128 or newer)",
                torch.version,
                Context::describe(&used),
                ctx.version
            ))]
        }
        Some(b @ (TorchBuild::Rocm(_) | TorchBuild::Xpu)) => {
            let used = ctx.used();
            if used.is_empty() {
                return vec![];
            }
            let kind = match b {
                TorchBuild::Rocm(hip) => format!("a ROCm (HIP {hip})"),
                _ => "an Intel XPU".to_owned(),
            };
            vec![Fired::new(format!(
                "torch {} is {kind} build with no CUDA kernels; {}; install a CUDA build of torch",
                torch.version,
                Context::describe(&used)
            ))]
        }
        Some(TorchBuild::Cuda(cuda)) => {
            let cuda = *cuda;
            let mut out = Vec::new();
            if cuda < BLACKWELL_CUDA {
                let bw = ctx.gpus_where(|(m, _)| m == 10 || m == 12);
                if !bw.is_empty() {
                    out.push(Fired::new(format!(
                        "torch {} is a CUDA {cuda} build with no {} kernels; {}; 'no kernel image is available' at the first CUDA op; install a torch build for CUDA 12.8 or newer (cu128, cu129, cu130)",
                        torch.version,
                        sm_names(&bw),
                        Context::describe(&bw)
                    )));
                }
            }
            if cuda >= Cuda(13, 0) {
                let old = ctx.gpus_where(|cc| cc < CUDA13_MIN_CC);
                if !old.is_empty() {
                    out.push(Fired::new(format!(
                        "torch {} is a CUDA {cuda} build; CUDA 13 dropped compute capability below 7.5; {}; install a CUDA 12 build of torch (cu126, cu128)",
                        torch.version,
                        Context::describe(&old)
                    )));
                }
            }
            out
        }
        None => vec![],
    }
}

pub(crate) fn sgl_kernel_sm120(ctx: &Context) -> Vec<Fired> {
    let Some(k) = pkg(ctx, |p| p.sgl_kernel()) else {
        return vec![];
    };
    let sm12 = ctx.gpus_where(|(m, _)| m == 12);
    if sm12.is_empty() {
        return vec![];
    }
    let why = match k.cuda_label() {
        Some(cuda) if cuda < BLACKWELL_CUDA => format!("is a CUDA {cuda} build"),
        Some(_) => return vec![],
        // PyPI's unlabelled 0.1.x wheels were the CUDA 12.4 builds (cu128 ones were labelled);
        // a source build or a URL install says nothing about the index's choice.
        None if !k.direct && !release::at_least(k.public(), "0.2.0") => {
            "is a PyPI wheel of the 0.1 series, built with CUDA 12.4".to_owned()
        }
        None => return vec![],
    };
    vec![Fired::new(format!(
        "{} {} {why}, without sm_120 kernels; {}; the first kernel (RMSNorm) fails with 'no kernel image is available'; install a cu128 or newer build of {}",
        k.name,
        k.version,
        Context::describe(&sm12),
        k.name
    ))]
}

pub(crate) fn nccl_2_26_2(ctx: &Context) -> Vec<Fired> {
    let Some(nccl) = pkg(ctx, |p| p.nccl()) else {
        return vec![];
    };
    if nccl.public() != "2.26.2" || ctx.tp() < 2 {
        return vec![];
    }
    let gpus: Vec<u32> = ctx.tp_gpus().to_vec();
    let sm12: Vec<_> = ctx
        .used()
        .into_iter()
        .filter(|g| gpus.contains(&g.index) && g.cc().is_some_and(|(m, _)| m == 12))
        .collect();
    if sm12.is_empty() {
        return vec![];
    }
    vec![Fired::new(format!(
        "{} {} with TP {}; {}: NCCL 2.26.2 hits illegal memory accesses on collectives of 512 KiB and more on these GPUs; pip install -U {}",
        nccl.name,
        nccl.version,
        ctx.tp(),
        Context::describe(&sm12),
        nccl.name
    ))]
}

pub(crate) fn torch_2_9_1_cudnn(ctx: &Context) -> Vec<Fired> {
    let (Some(torch), Some(cudnn)) = (pkg(ctx, |p| p.torch()), pkg(ctx, |p| p.cudnn())) else {
        return vec![];
    };
    if torch.public() != "2.9.1"
        || !ctx.multimodal_served()
        || ctx.env.truthy("SGLANG_DISABLE_CUDNN_CHECK")
    {
        return vec![];
    }
    // SGLang compares major.minor (9.10 < 9.15).
    let mm: Vec<u64> = cudnn
        .public()
        .split('.')
        .take(2)
        .map_while(|p| p.parse().ok())
        .collect();
    let [major, minor] = mm[..] else {
        return vec![];
    };
    if (major, minor) >= (9, 15) {
        return vec![];
    }
    // The check exists in 0.5.6–0.5.9, which run on the 0.5.5 flag set: the installed SGLang
    // says which release it really is (the flag set's version when SGLang is not a wheel).
    let sglang = pkg(ctx, |p| p.get("sglang")).map_or(ctx.version, |p| p.version.as_str());
    if !release::at_least(sglang, "0.5.6") || release::at_least(sglang, "0.5.10") {
        return vec![];
    }
    vec![Fired::new(format!(
        "torch {} with {} {} and a multimodal model: SGLang {sglang} refuses to start (PyTorch 2.9.1's Conv3d is slow and memory-hungry with cuDNN older than 9.15); pip install '{}>=9.15', or set SGLANG_DISABLE_CUDNN_CHECK=1 to accept it",
        torch.version, cudnn.name, cudnn.version, cudnn.name
    ))]
}

pub(crate) fn nvfp4_flashinfer(ctx: &Context) -> Vec<Fired> {
    let Some(fi) = pkg(ctx, |p| p.flashinfer()) else {
        return vec![];
    };
    let Some(q) = ctx.quant().filter(|q| {
        matches!(
            q.as_str(),
            "modelopt_fp4" | "nvfp4" | "modelopt_nvfp4" | "nvfp4_online"
        )
    }) else {
        return vec![];
    };
    if fi.public() != "0.6.3" {
        return vec![];
    }
    let sm12 = ctx.gpus_where(|(m, _)| m == 12);
    if sm12.is_empty() {
        return vec![];
    }
    vec![Fired::new(format!(
        "{} {} with {q} on {}: this FlashInfer's SM120 mm_fp4 returns all zeros (cutlass) or errors (cudnn, trtllm); install another FlashInfer release and run an accuracy smoke test",
        fi.name,
        fi.version,
        Context::describe(&sm12)
    ))]
}

pub(crate) fn flashinfer_jit_cuda(ctx: &Context) -> Vec<Fired> {
    let Some(pkgs) = ctx.packages else {
        return vec![];
    };
    let Some(fi) = pkgs.flashinfer() else {
        return vec![];
    };
    // Prebuilt modules: nothing is compiled for the kernels SGLang uses.
    if pkgs.get("flashinfer-jit-cache").is_some() {
        return vec![];
    }
    // `12.0f`-style entries bypass FlashInfer's toolkit gate: the user chose the target.
    if ctx.env.get("FLASHINFER_CUDA_ARCH_LIST").is_some_and(|l| {
        l.split_whitespace()
            .any(|a| a.starts_with("12.") && a.ends_with(|c: char| c.is_ascii_alphabetic()))
    }) {
        return vec![];
    }
    // FlashInfer asks nvcc, and falls back to torch's CUDA when there is no nvcc.
    let (cuda, from) = match &pkgs.cuda_toolkit {
        Some(t) if t.nvcc => match t.version {
            Some(v) => (v, format!("nvcc {v} in {}", t.home.display())),
            None => return vec![],
        },
        _ => match pkgs.torch_cuda() {
            Some(v) => (v, format!("no nvcc, so torch's CUDA {v}")),
            None => return vec![],
        },
    };
    // [0.6.7, 0.7.1) gate every SM 12.x on CUDA 12.9; from 0.7.1 SM 12.0 needs 12.8, SM 12.1+
    // 12.9; nvcc itself learnt sm_120 in 12.8 and sm_121 in 12.9.
    let gated = release::at_least(fi.public(), "0.6.7") && !release::at_least(fi.public(), "0.7.1");
    let needs = |(_, minor): (u32, u32)| {
        if gated || minor > 0 {
            Cuda(12, 9)
        } else {
            BLACKWELL_CUDA
        }
    };
    let bad = ctx.gpus_where(|cc| cc.0 == 12 && cuda < needs(cc));
    let Some(need) = bad.iter().filter_map(|g| g.cc()).map(needs).max() else {
        return vec![];
    };
    vec![Fired::new(format!(
        "{} {} JIT-compiles its kernels with {from}; {} need CUDA {need} or newer ('No supported CUDA architectures found for major versions [12]'); point CUDA_HOME at a CUDA {need}+ toolkit, or install flashinfer-jit-cache {}",
        fi.name,
        fi.version,
        Context::describe(&bad),
        fi.public()
    ))]
}
