//! Installed-package facts through the pipeline: read from the interpreter's venv when planning
//! for this machine's software, from the topology file's recorded `host` when it has one, and
//! otherwise never when planning offline (`--topology` + `--sglang-version`).

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

use sglang_launch::facts::Env;
use sglang_launch::plan::{self, Request};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// `<root>/venv/bin/python` with these distributions in its site-packages.
fn venv(root: &Path, dists: &[&str]) -> PathBuf {
    let v = root.join("venv");
    let site = v.join("lib/python3.11/site-packages");
    fs::create_dir_all(v.join("bin")).unwrap();
    for d in dists {
        fs::create_dir_all(site.join(format!("{d}.dist-info"))).unwrap();
    }
    fs::write(
        v.join("pyvenv.cfg"),
        "home = /nonexistent/bin\ninclude-system-site-packages = false\n",
    )
    .unwrap();
    fs::write(v.join("bin/python"), "").unwrap();
    v.join("bin/python")
}

fn request(python: &Path, version: Option<&str>, line: &str) -> Request {
    Request {
        tokens: line.split_whitespace().map(OsString::from).collect(),
        topology: Some(format!("{ROOT}/examples/topologies/8x-rtx-pro-6000-pcie.json").into()),
        sglang_version: version.map(str::to_owned),
        python: Some(python.to_path_buf()),
        env: Env::default(),
        ..Request::default()
    }
}

fn codes(req: &Request) -> Vec<String> {
    let outcome = plan::build(req).unwrap();
    outcome
        .plan
        .findings
        .iter()
        .map(|f| f.code.clone())
        .collect()
}

#[test]
fn the_interpreters_packages_reach_the_rules() {
    let tmp = tempfile::tempdir().unwrap();
    let py = venv(
        tmp.path(),
        &[
            "sglang-0.5.23",
            "torch-2.6.0+cu124",
            "sgl_kernel-0.1.9",
            "nvidia_nccl_cu12-2.26.2",
        ],
    );
    let line = "--model-path examples/models/Qwen3-32B --tp 8";
    let outcome = plan::build(&request(&py, None, line)).unwrap();
    let pkgs = outcome.packages.as_ref().expect("packages read");
    assert_eq!(pkgs.torch().unwrap().version, "2.6.0+cu124");
    let find = |code: &str| {
        outcome
            .plan
            .findings
            .iter()
            .find(|f| f.code == code)
            .unwrap_or_else(|| panic!("no {code} in {:?}", outcome.plan.findings))
    };
    let torch = find("PKG001");
    assert!(
        torch.message.contains("torch 2.6.0+cu124"),
        "{}",
        torch.message
    );
    assert!(
        torch.message.contains("compute capability 12.0"),
        "{}",
        torch.message
    );
    assert!(!torch.fixed && torch.fix.is_none());
    assert!(find("PKG002").message.contains("sgl-kernel 0.1.9"));
    assert!(find("PKG003").message.contains("nvidia-nccl-cu12 2.26.2"));
    assert_eq!(outcome.plan.verdict, plan::v1::Verdict::Error);
}

#[test]
fn offline_planning_reads_no_packages() {
    let tmp = tempfile::tempdir().unwrap();
    let py = venv(tmp.path(), &["sglang-0.5.23", "torch-2.6.0+cu124"]);
    let req = request(
        &py,
        Some("0.5.23"),
        "--model-path examples/models/Qwen3-32B --tp 8",
    );
    let outcome = plan::build(&req).unwrap();
    assert!(outcome.packages.is_none());
    assert!(codes(&req).iter().all(|c| !c.starts_with("PKG")));
}

#[test]
fn a_healthy_stack_is_quiet() {
    let tmp = tempfile::tempdir().unwrap();
    let py = venv(
        tmp.path(),
        &[
            "sglang-0.5.23",
            "torch-2.14.1+cu130",
            "sglang_kernel-0.4.10",
            "nvidia_nccl_cu13-2.28.3",
            "flashinfer_python-0.7.2",
        ],
    );
    let req = request(&py, None, "--model-path examples/models/Qwen3-32B --tp 8");
    let found = codes(&req);
    assert!(found.iter().all(|c| !c.starts_with("PKG")), "{found:?}");
}

#[test]
fn allow_silences_the_family() {
    let tmp = tempfile::tempdir().unwrap();
    let py = venv(tmp.path(), &["sglang-0.5.23", "torch-2.6.0+cu124"]);
    let mut req = request(&py, None, "--model-path examples/models/Qwen3-32B --tp 8");
    assert!(codes(&req).contains(&"PKG001".to_owned()));
    req.settings.allow = vec!["PKG".into()];
    assert!(codes(&req).iter().all(|c| !c.starts_with("PKG")));
}

#[test]
fn the_servers_cuda_home_decides_flashinfers_toolkit() {
    let tmp = tempfile::tempdir().unwrap();
    let py = venv(
        tmp.path(),
        &[
            "sglang-0.5.10.post1",
            "torch-2.9.1+cu130",
            "flashinfer_python-0.6.7.post3",
        ],
    );
    let cuda = tmp.path().join("cuda-12.8");
    fs::create_dir_all(cuda.join("bin")).unwrap();
    fs::write(cuda.join("bin/nvcc"), "").unwrap();
    fs::write(
        cuda.join("version.json"),
        r#"{"cuda": {"name": "CUDA SDK", "version": "12.8.93"}}"#,
    )
    .unwrap();
    let mut req = request(&py, None, "--model-path examples/models/Qwen3-32B --tp 8");
    req.env = Env::from_pairs([("CUDA_HOME", cuda.to_str().unwrap())]);
    let outcome = plan::build(&req).unwrap();
    let f = outcome
        .plan
        .findings
        .iter()
        .find(|f| f.code == "PKG006")
        .expect("PKG006");
    assert!(f.message.contains("nvcc 12.8"), "{}", f.message);
    assert!(f.message.contains("CUDA 12.9"), "{}", f.message);
    // A 12.9 toolkit is enough.
    fs::write(
        cuda.join("version.json"),
        r#"{"cuda": {"name": "CUDA SDK", "version": "12.9.1"}}"#,
    )
    .unwrap();
    assert!(!codes(&req).contains(&"PKG006".to_owned()));
}

/// A copy of the RTX PRO 6000 box with this `host` record, as `detect --json` would write it.
fn recorded(dir: &Path, host: serde_json::Value) -> PathBuf {
    let src = format!("{ROOT}/examples/topologies/8x-rtx-pro-6000-pcie.json");
    let mut topo: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(src).unwrap()).unwrap();
    topo["host"] = host;
    let path = dir.join("box.json");
    fs::write(&path, serde_json::to_string_pretty(&topo).unwrap()).unwrap();
    path
}

#[test]
fn offline_planning_reads_the_recorded_host() {
    let tmp = tempfile::tempdir().unwrap();
    // No interpreter at all: everything comes from the file.
    let py = tmp.path().join("no-python");
    let host = serde_json::json!({
        "shm_present": true,
        "shm_bytes": 64u64 << 20,
        "in_container": true,
        "rdma_devices": [],
        "packages": {"torch": "2.7.1", "nvidia-nccl-cu12": "2.26.2", "sglang": "0.5.23"},
        "torch_build": "cuda 12.6"
    });
    let mut req = request(
        &py,
        Some("0.5.23"),
        "--model-path examples/models/Qwen3-32B --tp 8",
    );
    req.topology = Some(recorded(tmp.path(), host));
    let outcome = plan::build(&req).unwrap();
    let pkgs = outcome.packages.as_ref().expect("packages from the file");
    assert_eq!(pkgs.torch().unwrap().version, "2.7.1");
    let found = codes(&req);
    // torch built for CUDA 12.6 on SM 12.0, NCCL 2.26.2 on Blackwell workstation cards, and
    // Docker's 64 MiB /dev/shm, all from the recorded facts.
    for code in ["PKG001", "PKG003", "COMM002"] {
        assert!(found.contains(&code.to_owned()), "no {code} in {found:?}");
    }
    // The same box without a record: neither family has facts to judge.
    req.topology = Some(format!("{ROOT}/examples/topologies/8x-rtx-pro-6000-pcie.json").into());
    let found = codes(&req);
    assert!(
        found
            .iter()
            .all(|c| !c.starts_with("PKG") && c != "COMM002"),
        "{found:?}"
    );
}

/// The install's transformers decides whether SGLang can read config.json's model type: GLM-5's
/// `glm_moe_dsa` arrives in transformers 5.2.0, and 0.5.9 (which pins 4.57.1) registers no class
/// for it. Read from the interpreter the line would run, the pinned one blocks; one that has the
/// class does not; planned offline without the install, the pin only warns.
#[test]
fn the_installs_transformers_decides_whether_the_model_type_is_read() {
    let line = format!("--model-path {ROOT}/tests/fixtures/models/zai-org__GLM-5-FP8 --tp 8");
    let tmp = tempfile::tempdir().unwrap();
    let pinned = venv(tmp.path(), &["sglang-0.5.9", "transformers-4.57.1"]);
    let found = codes(&request(&pinned, None, &line));
    assert!(found.contains(&"MODEL006".to_owned()), "{found:?}");
    let newer_dir = tempfile::tempdir().unwrap();
    let newer = venv(newer_dir.path(), &["sglang-0.5.9", "transformers-5.2.0"]);
    let found = codes(&request(&newer, None, &line));
    assert!(
        !found.iter().any(|c| c == "MODEL006" || c == "MODEL007"),
        "{found:?}"
    );
    let offline = Request {
        python: None,
        ..request(&pinned, Some("0.5.9"), &line)
    };
    let found = codes(&offline);
    assert!(
        found.contains(&"MODEL007".to_owned()) && !found.contains(&"MODEL006".to_owned()),
        "{found:?}"
    );
}
