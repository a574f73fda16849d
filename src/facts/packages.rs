//! The installed Python packages that decide which GPU kernels exist: torch (and the CUDA it
//! was built for), FlashInfer, sgl-kernel, NCCL, cuDNN, Triton, Transformers, DeepGEMM/DeepEP,
//! vLLM.
//!
//! Read from the `*.dist-info` directories of the interpreter SGLang would run, through the same
//! scanner SGLang's own version detection uses ([`site`]); no Python is run. The first
//! directory that has a distribution wins, as it would for `import`.
//!
//! Only for planning this machine: offline planning (`--topology` with `--sglang-version`)
//! describes another machine, whose packages come from the file's `host` record when `detect`
//! wrote one (`HostRecord`), else not at all and the PKG rules stay
//! silent. Tests build them with [`Packages::from_versions`].

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::facts::Env;
use crate::fsread;
use crate::install::site::{self, Dist};

/// Distributions worth reading (PEP 503 normalized names). Everything else in site-packages
/// is skipped without touching its metadata.
pub(crate) const WANTED: &[&str] = &[
    "torch",
    "flashinfer-python",
    "flashinfer",
    "flashinfer-cubin",
    "flashinfer-jit-cache",
    "sgl-kernel",
    "sglang-kernel",
    "triton",
    "transformers",
    "nvidia-nccl-cu12",
    "nvidia-nccl-cu13",
    "nvidia-cudnn-cu12",
    "nvidia-cudnn-cu13",
    "deep-gemm",
    "sgl-deep-gemm",
    "deep-ep",
    "sgl-deep-ep",
    "vllm",
    "sglang",
];

/// One installed distribution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Package {
    /// PEP 503 normalized name.
    pub(crate) name: String,
    /// The full version, local label included (`2.9.1+cu130`).
    pub version: String,
    /// Its `.dist-info` directory (`None` for injected facts).
    pub(crate) dist_info: Option<PathBuf>,
    /// Installed from a URL, a local directory or a checkout (`direct_url.json`, PEP 610),
    /// not from a package index: its build options are the user's, not the index's.
    pub direct: bool,
}

impl Package {
    /// The version without its local label (`2.9.1`).
    pub(crate) fn public(&self) -> &str {
        self.version.split('+').next().unwrap_or_default()
    }

    /// The local label (`cu130` of `2.9.1+cu130`).
    pub(crate) fn local(&self) -> Option<&str> {
        self.version.split_once('+').map(|(_, l)| l)
    }

    /// The CUDA release a `+cuNNN` label names: `cu128` → 12.8, `cu130` → 13.0.
    pub(crate) fn cuda_label(&self) -> Option<Cuda> {
        self.local()?
            .split('.')
            .find_map(|part| part.strip_prefix("cu"))
            .and_then(Cuda::from_digits)
    }
}

impl fmt::Display for Package {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.name, self.version)
    }
}

/// A CUDA release, `major.minor`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Cuda(pub u32, pub u32);

impl Cuda {
    /// `128` → 12.8, `130` → 13.0, `118` → 11.8 (the wheel-label spelling).
    fn from_digits(d: &str) -> Option<Cuda> {
        if d.len() < 3 || !d.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let (major, minor) = d.split_at(d.len() - 1);
        Some(Cuda(major.parse().ok()?, minor.parse().ok()?))
    }

    /// `12.8` or `12.8.1` → 12.8.
    fn from_dotted(s: &str) -> Option<Cuda> {
        let mut it = s.trim().split('.');
        let major = it.next()?.parse().ok()?;
        let minor = it.next().unwrap_or("0").parse().ok()?;
        Some(Cuda(major, minor))
    }
}

impl fmt::Display for Cuda {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.0, self.1)
    }
}

/// What torch was built for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TorchBuild {
    Cuda(Cuda),
    /// A ROCm build (`+rocm6.2`): no CUDA kernels at all.
    Rocm(String),
    /// An Intel XPU build (`+xpu`): no CUDA kernels either.
    Xpu,
    /// A CPU-only build (`+cpu`, or `torch.version.cuda` is None).
    Cpu,
}

/// The installed packages of one interpreter.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Packages {
    /// By normalized name; the first search directory that has one wins.
    pub packages: BTreeMap<String, Package>,
    /// From `torch/version.py` (`cuda = '12.8'`, `hip = …`), else torch's local label; `None`
    /// when neither says (a source build without either, or no torch).
    pub(crate) torch_build: Option<TorchBuild>,
    /// The CUDA toolkit FlashInfer's JIT would compile with (see [`Packages::with_toolkit`]).
    pub cuda_toolkit: Option<Toolkit>,
}

/// A CUDA toolkit on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Toolkit {
    pub home: PathBuf,
    /// Whether `<home>/bin/nvcc` exists (FlashInfer falls back to torch's CUDA version without).
    pub nvcc: bool,
    /// From `<home>/version.json` (CUDA 11.1+) or `version.txt`; `None` when unreadable.
    pub version: Option<Cuda>,
}

impl Packages {
    /// Reads the packages installed for `python` (default: `python3` on PATH), file system only.
    pub(crate) fn detect(python: Option<&Path>) -> Packages {
        Self::detect_in(&site::search_dirs(python))
    }

    /// Reads the packages from these site directories, in `sys.path` order.
    pub(crate) fn detect_in(dirs: &[PathBuf]) -> Packages {
        let mut out = Packages::default();
        for (name, Dist { version, path, .. }) in site::find(dirs, |n| WANTED.contains(&n)) {
            let package = Package {
                name: name.clone(),
                version,
                direct: path.join("direct_url.json").is_file(),
                dist_info: Some(path),
            };
            out.packages.insert(name, package);
        }
        let version_py = out
            .get("torch")
            .and_then(|t| t.dist_info.as_deref())
            .and_then(Path::parent)
            .map(|site| site.join("torch").join("version.py"));
        out.torch_build = version_py
            .and_then(|p| fsread::optional_string(&p, fsread::PYTHON_ENV))
            .and_then(|text| torch_build_from_version_py(&text))
            .or_else(|| out.get("torch").and_then(torch_build_from_label));
        out
    }

    /// Facts for tests and callers that know the versions: `("torch", "2.9.1+cu130")`, …
    /// torch's build comes from its label.
    pub fn from_versions(pairs: &[(&str, &str)]) -> Packages {
        let mut out = Packages::default();
        for (name, v) in pairs {
            let name = site::normalize(name);
            out.packages.insert(
                name.clone(),
                Package {
                    name,
                    version: (*v).to_owned(),
                    dist_info: None,
                    direct: false,
                },
            );
        }
        out.torch_build = out.get("torch").and_then(torch_build_from_label);
        out
    }

    /// Adds the CUDA toolkit FlashInfer would find in the server's environment: `CUDA_HOME`,
    /// else `CUDA_PATH`, else the directory above `nvcc` on `PATH`, else `/usr/local/cuda`.
    pub(crate) fn with_toolkit(mut self, env: &Env) -> Packages {
        self.cuda_toolkit = find_toolkit(env, Path::new("/usr/local/cuda"));
        self
    }

    /// A package by any spelling of its name (`flashinfer_python`, `Flashinfer-Python`).
    pub(crate) fn get(&self, name: &str) -> Option<&Package> {
        self.packages.get(&site::normalize(name))
    }

    pub fn torch(&self) -> Option<&Package> {
        self.get("torch")
    }

    /// FlashInfer (`flashinfer-python`, or the older `flashinfer` distribution).
    pub(crate) fn flashinfer(&self) -> Option<&Package> {
        self.get("flashinfer-python")
            .or_else(|| self.get("flashinfer"))
    }

    /// SGLang's kernel wheel (`sglang-kernel` from 0.5.10, `sgl-kernel` before).
    pub(crate) fn sgl_kernel(&self) -> Option<&Package> {
        self.get("sglang-kernel").or_else(|| self.get("sgl-kernel"))
    }

    /// The NCCL wheel torch loads: the one matching torch's CUDA major when both are present.
    pub(crate) fn nccl(&self) -> Option<&Package> {
        self.by_cuda_major("nvidia-nccl-cu12", "nvidia-nccl-cu13")
    }

    /// The cuDNN wheel torch loads, chosen like [`Packages::nccl`].
    pub(crate) fn cudnn(&self) -> Option<&Package> {
        self.by_cuda_major("nvidia-cudnn-cu12", "nvidia-cudnn-cu13")
    }

    fn by_cuda_major(&self, cu12: &str, cu13: &str) -> Option<&Package> {
        let (a, b) = (self.get(cu12), self.get(cu13));
        match self.torch_build {
            Some(TorchBuild::Cuda(Cuda(13, _))) => b.or(a),
            _ => a.or(b),
        }
    }

    /// One line for reports: the kernel-deciding packages that are installed, e.g.
    /// `torch 2.9.1+cu130 (CUDA 13.0) · flashinfer-python 0.7.2 · sglang-kernel 0.4.10 · nvidia-nccl-cu13 2.28.3`.
    pub(crate) fn summary(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        if let Some(t) = self.torch() {
            parts.push(match &self.torch_build {
                Some(TorchBuild::Cuda(c)) if t.cuda_label() != Some(*c) => {
                    format!("{t} (CUDA {c})")
                }
                Some(TorchBuild::Rocm(h)) if t.local().is_none() => format!("{t} (ROCm {h})"),
                Some(TorchBuild::Cpu) if t.local().is_none() => format!("{t} (CPU)"),
                Some(TorchBuild::Xpu) if t.local().is_none() => format!("{t} (XPU)"),
                _ => t.to_string(),
            });
        }
        let rest = [
            self.flashinfer(),
            self.sgl_kernel(),
            self.nccl(),
            self.cudnn(),
            self.get("triton"),
            self.get("transformers"),
        ];
        parts.extend(rest.into_iter().flatten().map(Package::to_string));
        if let Some(t) = self.cuda_toolkit.as_ref().filter(|t| t.nvcc) {
            match t.version {
                Some(v) => parts.push(format!("nvcc {v}")),
                None => parts.push("nvcc (version unknown)".into()),
            }
        }
        parts.join(" · ")
    }

    /// The CUDA release torch was built for (`None`: CPU/ROCm build, unknown, or no torch).
    pub(crate) fn torch_cuda(&self) -> Option<Cuda> {
        match &self.torch_build {
            Some(TorchBuild::Cuda(c)) => Some(*c),
            _ => None,
        }
    }
}

fn find_toolkit(env: &Env, default: &Path) -> Option<Toolkit> {
    let set = |k: &str| env.get(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    let on_path = || {
        std::env::split_paths(env.get("PATH")?)
            .map(|d| d.join("nvcc"))
            .find(|n| n.is_file())
            .and_then(|n| Some(n.parent()?.parent()?.to_path_buf()))
    };
    let home = set("CUDA_HOME")
        .or_else(|| set("CUDA_PATH"))
        .or_else(on_path)
        .or_else(|| default.is_dir().then(|| default.to_path_buf()))?;
    Some(Toolkit {
        nvcc: home.join("bin").join("nvcc").is_file(),
        version: toolkit_version(&home),
        home,
    })
}

/// `{"cuda": {"version": "12.8.1"}}` in version.json, or `CUDA Version 11.0.228` in version.txt.
fn toolkit_version(home: &Path) -> Option<Cuda> {
    if let Some(text) = fsread::optional_string(&home.join("version.json"), fsread::PYTHON_ENV) {
        let v: serde_json::Value = serde_json::from_str(&text).ok()?;
        return Cuda::from_dotted(v.get("cuda")?.get("version")?.as_str()?);
    }
    let text = fsread::optional_string(&home.join("version.txt"), fsread::PYTHON_ENV)?;
    Cuda::from_dotted(text.trim().strip_prefix("CUDA Version")?)
}

/// `cuda: Optional[str] = '12.8'` / `hip: Optional[str] = None` lines of `torch/version.py`.
fn torch_build_from_version_py(text: &str) -> Option<TorchBuild> {
    let value = |key: &str| -> Option<Option<String>> {
        text.lines().find_map(|l| {
            let rest = l.trim().strip_prefix(key)?;
            let rest = rest.trim_start();
            // `cuda = '12.8'` or `cuda: Optional[str] = '12.8'`
            let rest = if let Some(r) = rest.strip_prefix(':') {
                r.split_once('=')?.1
            } else {
                rest.strip_prefix('=')?
            };
            let v = rest.trim().trim_matches(|c| c == '\'' || c == '"');
            Some((v != "None" && !v.is_empty()).then(|| v.to_owned()))
        })
    };
    let cuda = value("cuda")?;
    if let Some(c) = cuda {
        return Cuda::from_dotted(&c).map(TorchBuild::Cuda);
    }
    if let Some(h) = value("hip").flatten() {
        return Some(TorchBuild::Rocm(h));
    }
    if value("xpu").flatten().is_some() {
        return Some(TorchBuild::Xpu);
    }
    Some(TorchBuild::Cpu)
}

/// `+cu128` → CUDA 12.8, `+rocm6.2` → ROCm, `+cpu` → CPU; no label says nothing.
fn torch_build_from_label(torch: &Package) -> Option<TorchBuild> {
    let label = torch.local()?;
    if let Some(c) = torch.cuda_label() {
        return Some(TorchBuild::Cuda(c));
    }
    if let Some(r) = label.strip_prefix("rocm") {
        return Some(TorchBuild::Rocm(r.to_owned()));
    }
    match label {
        "cpu" => Some(TorchBuild::Cpu),
        "xpu" => Some(TorchBuild::Xpu),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_name_cuda_releases() {
        let p = Packages::from_versions(&[("torch", "2.9.1+cu130"), ("sgl_kernel", "0.1.9")]);
        assert_eq!(p.torch_cuda(), Some(Cuda(13, 0)));
        assert_eq!(p.torch().unwrap().public(), "2.9.1");
        assert_eq!(p.sgl_kernel().unwrap().cuda_label(), None);
        let p = Packages::from_versions(&[("torch", "2.6.0+cu124")]);
        assert_eq!(p.torch_cuda(), Some(Cuda(12, 4)));
        let p = Packages::from_versions(&[("torch", "2.5.1+rocm6.2")]);
        assert_eq!(p.torch_build, Some(TorchBuild::Rocm("6.2".into())));
        let p = Packages::from_versions(&[("torch", "2.8.0+cpu")]);
        assert_eq!(p.torch_build, Some(TorchBuild::Cpu));
        let p = Packages::from_versions(&[("torch", "2.8.0")]);
        assert_eq!(p.torch_build, None);
        let p = Packages::from_versions(&[("torch", "2.8.0+cuXYZ")]);
        assert_eq!(p.torch_build, None);
    }

    #[test]
    fn version_py_is_read_in_both_spellings() {
        let new = "__version__ = '2.9.1+cu130'\ndebug = False\ncuda: Optional[str] = '13.0'\nhip: Optional[str] = None\n";
        assert_eq!(
            torch_build_from_version_py(new),
            Some(TorchBuild::Cuda(Cuda(13, 0)))
        );
        let old = "__version__ = '2.1.0'\ncuda = '11.8'\n";
        assert_eq!(
            torch_build_from_version_py(old),
            Some(TorchBuild::Cuda(Cuda(11, 8)))
        );
        let cpu = "cuda: Optional[str] = None\nhip: Optional[str] = None\n";
        assert_eq!(torch_build_from_version_py(cpu), Some(TorchBuild::Cpu));
        let rocm = "cuda: Optional[str] = None\nhip: Optional[str] = '6.2.41133'\n";
        assert_eq!(
            torch_build_from_version_py(rocm),
            Some(TorchBuild::Rocm("6.2.41133".into()))
        );
        let xpu = "cuda: Optional[str] = None\nhip: Optional[str] = None\nxpu: Optional[str] = '20250101'\n";
        assert_eq!(torch_build_from_version_py(xpu), Some(TorchBuild::Xpu));
        assert_eq!(torch_build_from_version_py("garbage"), None);
        // `cuda_home = ...` must not be read as `cuda`.
        assert_eq!(torch_build_from_version_py("cudax = '1'\n"), None);
    }

    #[test]
    fn summary_names_the_kernel_deciding_packages() {
        let mut p = Packages::from_versions(&[
            ("torch", "2.9.1"),
            ("flashinfer_python", "0.7.2"),
            ("sglang-kernel", "0.4.10"),
            ("numpy", "2.0"),
        ]);
        p.torch_build = Some(TorchBuild::Cuda(Cuda(12, 8)));
        assert_eq!(
            p.summary(),
            "torch 2.9.1 (CUDA 12.8) · flashinfer-python 0.7.2 · sglang-kernel 0.4.10"
        );
        let p = Packages::from_versions(&[("torch", "2.9.1+cu130")]);
        assert_eq!(p.summary(), "torch 2.9.1+cu130");
        assert_eq!(Packages::default().summary(), "");
    }

    #[test]
    fn nccl_and_cudnn_follow_torchs_cuda_major() {
        let p = Packages::from_versions(&[
            ("torch", "2.9.1+cu130"),
            ("nvidia-nccl-cu12", "2.27.5"),
            ("nvidia-nccl-cu13", "2.28.3"),
        ]);
        assert_eq!(p.nccl().unwrap().version, "2.28.3");
        let p = Packages::from_versions(&[
            ("torch", "2.7.1+cu126"),
            ("nvidia_nccl_cu12", "2.26.2"),
            ("nvidia-nccl-cu13", "2.28.3"),
        ]);
        assert_eq!(p.nccl().unwrap().version, "2.26.2");
        assert_eq!(p.cudnn(), None);
    }

    /// A venv laid out like `python3 -m venv`, with these entries in its site-packages.
    #[cfg(unix)]
    fn venv(root: &Path, entries: &[&str]) -> (PathBuf, PathBuf) {
        use std::fs;
        let v = root.join("venv");
        fs::create_dir_all(v.join("bin")).unwrap();
        let site = v.join("lib/python3.11/site-packages");
        fs::create_dir_all(&site).unwrap();
        for e in entries {
            fs::create_dir_all(site.join(e)).unwrap();
        }
        fs::write(
            v.join("pyvenv.cfg"),
            "home = /nonexistent/bin\ninclude-system-site-packages = false\n",
        )
        .unwrap();
        fs::write(v.join("bin/python"), "").unwrap();
        (v.join("bin/python"), site)
    }

    #[cfg(unix)]
    #[test]
    fn detects_a_venvs_packages_without_python() {
        let tmp = tempfile::tempdir().unwrap();
        let (py, site) = venv(
            tmp.path(),
            &[
                "torch-2.9.1+cu130.dist-info",
                "torch-2.8.0.dist-info", // a stale copy: the newest wins
                "torch",
                "flashinfer_python-0.5.3.dist-info",
                "sgl_kernel-0.3.16.post5.dist-info",
                "nvidia_nccl_cu12-2.27.5.dist-info",
                "numpy-2.0.dist-info",
                "transformers-4.57.1.dist-info",
            ],
        );
        std::fs::write(
            site.join("torch/version.py"),
            "__version__ = '2.9.1+cu130'\ncuda: Optional[str] = '13.0'\nhip: Optional[str] = None\n",
        )
        .unwrap();
        let p = Packages::detect(Some(&py));
        assert_eq!(p.torch().unwrap().version, "2.9.1+cu130");
        assert!(
            p.torch()
                .unwrap()
                .dist_info
                .as_deref()
                .is_some_and(|d| d.starts_with(&site))
        );
        assert_eq!(p.torch_cuda(), Some(Cuda(13, 0)));
        assert_eq!(p.flashinfer().unwrap().version, "0.5.3");
        assert_eq!(p.sgl_kernel().unwrap().version, "0.3.16.post5");
        assert_eq!(p.nccl().unwrap().version, "2.27.5");
        assert_eq!(p.get("Transformers").unwrap().public(), "4.57.1");
        assert_eq!(
            p.get("numpy"),
            None,
            "only the wanted distributions are read"
        );

        // version.py is authoritative: an unlabelled wheel still says what it was built for.
        std::fs::remove_dir(site.join("torch-2.9.1+cu130.dist-info")).unwrap();
        std::fs::write(site.join("torch/version.py"), "cuda = '12.6'\n").unwrap();
        let p = Packages::detect(Some(&py));
        assert_eq!(p.torch().unwrap().version, "2.8.0");
        assert_eq!(p.torch_cuda(), Some(Cuda(12, 6)));

        // Warm detection stays well inside the launcher's budget (1 ms on a real venv; loose
        // here because the test machine is shared).
        let t = std::time::Instant::now();
        let _ = Packages::detect(Some(&py));
        let took = t.elapsed();
        assert!(took.as_millis() < 50, "detection took {took:?}");
    }

    #[test]
    fn the_first_site_directory_wins() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
        std::fs::create_dir_all(a.join("nvidia_nccl_cu12-2.26.2.dist-info")).unwrap();
        std::fs::create_dir_all(b.join("nvidia_nccl_cu12-2.28.3.dist-info")).unwrap();
        std::fs::create_dir_all(b.join("Flashinfer-0.2.5.dist-info")).unwrap();
        let p = Packages::detect_in(&[a.clone(), b.clone(), tmp.path().join("missing")]);
        assert_eq!(p.nccl().unwrap().version, "2.26.2");
        assert_eq!(p.flashinfer().unwrap().name, "flashinfer");
        assert_eq!(p.torch_build, None);
        let p = Packages::detect_in(&[b, a]);
        assert_eq!(p.nccl().unwrap().version, "2.28.3");
        assert_eq!(Packages::detect_in(&[]), Packages::default());
    }

    #[test]
    fn finds_the_toolkit_flashinfer_would_use() {
        use std::fs;
        let tmp = tempfile::tempdir().unwrap();
        let a = tmp.path().join("cuda-12.8");
        fs::create_dir_all(a.join("bin")).unwrap();
        fs::write(a.join("bin/nvcc"), "").unwrap();
        fs::write(
            a.join("version.json"),
            r#"{"cuda": {"name": "CUDA SDK", "version": "12.8.1"}}"#,
        )
        .unwrap();
        let b = tmp.path().join("cuda-11.0");
        fs::create_dir_all(&b).unwrap();
        fs::write(b.join("version.txt"), "CUDA Version 11.0.228\n").unwrap();
        let none = tmp.path().join("none");

        let env = Env::from_pairs([("CUDA_HOME", a.to_str().unwrap())]);
        let t = find_toolkit(&env, &none).unwrap();
        assert_eq!((t.nvcc, t.version), (true, Some(Cuda(12, 8))));
        // An empty CUDA_HOME is skipped, as Python's `or` would.
        let env = Env::from_pairs([("CUDA_HOME", ""), ("CUDA_PATH", b.to_str().unwrap())]);
        let t = find_toolkit(&env, &none).unwrap();
        assert_eq!((t.nvcc, t.version), (false, Some(Cuda(11, 0))));
        let path = std::env::join_paths([tmp.path().join("x"), a.join("bin")]).unwrap();
        let env = Env::from_pairs([("PATH", path.to_str().unwrap())]);
        assert_eq!(find_toolkit(&env, &none).unwrap().home, a);
        assert_eq!(find_toolkit(&Env::default(), &b).unwrap().home, b);
        assert_eq!(find_toolkit(&Env::default(), &none), None);
        fs::write(a.join("version.json"), "not json").unwrap();
        let env = Env::from_pairs([("CUDA_HOME", a.to_str().unwrap())]);
        assert_eq!(find_toolkit(&env, &none).unwrap().version, None);
    }

    /// Timing on a real interpreter: `SGLANG_LAUNCH_TEST_PYTHON=/path/to/venv/bin/python
    /// cargo test --lib detect_real_packages -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn detect_real_packages() {
        let py = std::env::var_os("SGLANG_LAUNCH_TEST_PYTHON").map(PathBuf::from);
        let t = std::time::Instant::now();
        let env = Env::from_process();
        let p = Packages::detect(py.as_deref()).with_toolkit(&env);
        let cold = t.elapsed();
        let n = 200;
        let t = std::time::Instant::now();
        for _ in 0..n {
            std::hint::black_box(Packages::detect(py.as_deref()).with_toolkit(&env));
        }
        eprintln!(
            "{:?}\ntorch build {:?}; cold {cold:?}, warm {:?}",
            p.packages
                .values()
                .map(|p| p.to_string())
                .collect::<Vec<_>>(),
            p.torch_build,
            t.elapsed() / n
        );
    }
}
