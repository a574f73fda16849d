//! NVML detection end to end, through the fake libnvidia-ml (tests/fake-nvml): the real
//! nvml-wrapper code path (dlopen, symbols, C structs) runs without a GPU.
//!
//! Fields NVML cannot give back verbatim, normalised before comparing:
//! * `source` is always "nvml" and `hostname` is this machine's (the file's are not NVML facts);
//! * `memory_used_mib` absent from a file reads back as `Some(0)` (NVML always reports usage);
//! * `host` is not NVML's: `detect` adds this machine's after reading the GPUs.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, MutexGuard};

use sglang_launch::facts::Topology;
use sglang_launch::facts::nvml::{self, NvmlError};

/// The fake library, built once per test run into a target dir of its own (beside this test's),
/// so the build does not wait on the lock of the `cargo test` that runs us.
fn fake_lib() -> &'static Path {
    crate::common::fake_nvml_lib()
}

/// The fake reads its configuration from this process's environment: one test at a time.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

fn set_env(vars: &[(&str, Option<&str>)]) {
    for (k, v) in vars {
        // SAFETY: tests that touch the environment hold `serial()`, and nothing else in this
        // test binary reads these variables concurrently.
        unsafe {
            match v {
                Some(v) => std::env::set_var(k, v),
                None => std::env::remove_var(k),
            }
        }
    }
}

fn detect_file(path: &Path) -> Result<Topology, NvmlError> {
    let lib = fake_lib();
    let _guard = serial();
    set_env(&[
        ("FAKE_NVML_TOPOLOGY", Some(path.to_str().unwrap())),
        ("FAKE_NVML_INIT_RC", None),
    ]);
    nvml::detect(Some(lib))
}

fn fixtures() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/topologies");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

fn normalise(mut t: Topology, like: &Topology) -> Topology {
    t.source = like.source.clone();
    t.hostname = like.hostname.clone();
    t.host = like.host.clone();
    for (g, want) in t.gpus.iter_mut().zip(&like.gpus) {
        if want.memory_used_mib.is_none() && g.memory_used_mib == Some(0) {
            g.memory_used_mib = None;
        }
    }
    t
}

#[test]
fn detect_reads_back_every_fixture() {
    let files = fixtures();
    assert!(files.len() >= 9);
    for path in files {
        let want = Topology::load(&path).unwrap();
        let got = detect_file(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(got.source, "nvml");
        assert!(got.validate().is_ok(), "{:?}", got.validate());
        // What detect writes, the file format reads.
        Topology::from_json_str(&got.to_json_pretty(), "detected").unwrap();
        let got = normalise(got, &want);
        assert_eq!(got, want, "{}", path.display());
    }
}

const ODD: &str = r#"{
  "schema": "sglang-launch/topology/v1",
  "source": "hand",
  "driver_version": "470.256.02",
  "gpus": [
    { "index": 0, "uuid": "GPU-a", "name": "Old", "pci_bus_id": "00000000:01:00.0",
      "compute_capability": "unknown", "memory_total_mib": 16160, "memory_used_mib": 4000,
      "mig_enabled": true },
    { "index": 1, "uuid": "GPU-b", "name": "Old", "pci_bus_id": "00000000:02:00.0",
      "compute_capability": "7.0", "memory_total_mib": 16160, "numa_node": 1, "pcie_gen": 3 },
    { "index": 2, "uuid": "GPU-c", "name": "Old", "pci_bus_id": "00000000:81:00.0",
      "compute_capability": "7.0", "memory_total_mib": 16160 }
  ],
  "links": [
    { "gpus": [0, 1], "path": "NV", "nvlink": true, "p2p": "disabled_by_regkey" },
    { "gpus": [2, 1], "path": "PIX", "nvlink": false, "p2p": "topology_not_supported" }
  ]
}"#;

#[test]
fn unsupported_fields_become_none_and_unknown_pairs_stay_absent() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("odd.json");
    std::fs::write(&path, ODD).unwrap();
    let t = detect_file(&path).unwrap();
    assert_eq!(t.driver_version.as_deref(), Some("470.256.02"));
    assert_eq!(t.cuda_driver_version, None);
    let g0 = &t.gpus[0];
    assert_eq!(g0.compute_capability, "unknown");
    assert_eq!(g0.cc(), None);
    assert!(g0.mig_enabled);
    assert_eq!(g0.memory_used_mib, Some(4000));
    assert_eq!(
        (g0.numa_node, g0.pcie_gen, g0.pcie_width),
        (None, None, None)
    );
    assert_eq!(
        (t.gpus[1].numa_node, t.gpus[1].pcie_gen),
        (Some(1), Some(3))
    );
    assert_eq!(t.links.len(), 2, "{:?}", t.links);
    let l01 = t.link(0, 1).unwrap();
    assert_eq!(
        (l01.path.as_str(), l01.nvlink, l01.p2p.as_str()),
        ("NV", true, "disabled_by_regkey")
    );
    let l12 = t.link(1, 2).unwrap();
    assert_eq!(l12.gpus, [1, 2]);
    assert_eq!(
        (l12.path.as_str(), l12.p2p.as_str()),
        ("PIX", "topology_not_supported")
    );
    assert!(t.link(0, 2).is_none());
}

#[test]
fn no_library_is_a_clear_error() {
    let missing = Path::new("/nonexistent/libnvidia-ml.so.1");
    let e = nvml::detect(Some(missing)).unwrap_err();
    assert!(matches!(e, NvmlError::NoLibrary { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(msg.contains("/nonexistent/libnvidia-ml.so.1"), "{msg}");
    assert!(msg.contains("--topology FILE"), "{msg}");
    assert!(!msg.contains('\n'));
}

#[test]
fn driver_not_loaded_is_a_clear_error() {
    let lib = fake_lib();
    let _guard = serial();
    set_env(&[("FAKE_NVML_INIT_RC", Some("9"))]);
    let e = nvml::detect(Some(lib)).unwrap_err();
    set_env(&[("FAKE_NVML_INIT_RC", None)]);
    assert!(matches!(e, NvmlError::DriverNotLoaded { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(
        msg.contains("driver is not loaded") && msg.contains("--topology FILE"),
        "{msg}"
    );
}

#[test]
fn version_mismatch_is_a_clear_error() {
    let lib = fake_lib();
    let _guard = serial();
    set_env(&[("FAKE_NVML_INIT_RC", Some("18"))]);
    let e = nvml::detect(Some(lib)).unwrap_err();
    set_env(&[("FAKE_NVML_INIT_RC", None)]);
    assert!(matches!(e, NvmlError::VersionMismatch { .. }), "{e:?}");
}

#[test]
fn a_library_without_nvml_symbols_is_a_clear_error() {
    // libc loads fine but exports no NVML function.
    let e = nvml::detect(Some(Path::new("libc.so.6"))).unwrap_err();
    match &e {
        NvmlError::MissingSymbol { symbol, .. } => assert_eq!(symbol, "nvmlInit_v2"),
        other => panic!("{other:?}"),
    }
    assert!(e.to_string().contains("--topology FILE"));
}

#[test]
fn lib_path_comes_from_the_environment() {
    let _guard = serial();
    set_env(&[(nvml::LIB_ENV, Some("/opt/nvidia/libnvidia-ml.so.1"))]);
    assert_eq!(
        nvml::default_lib_path(),
        Some(PathBuf::from("/opt/nvidia/libnvidia-ml.so.1"))
    );
    set_env(&[(nvml::LIB_ENV, Some(""))]);
    assert_eq!(nvml::default_lib_path(), None);
    set_env(&[(nvml::LIB_ENV, None)]);
    assert_eq!(nvml::default_lib_path(), None);
}

/// On a machine with an NVIDIA driver: `cargo test --test it nvml:: -- --ignored`. Detects through
/// the real libnvidia-ml and cross-checks against `nvidia-smi`.
#[test]
#[ignore = "needs an NVIDIA GPU and driver"]
fn real_nvml_matches_nvidia_smi() {
    let t = nvml::detect(nvml::default_lib_path().as_deref()).unwrap_or_else(|e| panic!("{e}"));
    println!("{}", t.to_json_pretty());
    t.validate().unwrap();
    Topology::from_json_str(&t.to_json_pretty(), "detected").unwrap();
    let Ok(out) = Command::new("nvidia-smi")
        .args([
            "--query-gpu=index,uuid,name,pci.bus_id,memory.total,compute_cap",
            "--format=csv,noheader,nounits",
        ])
        .output()
    else {
        eprintln!("no nvidia-smi: skipping the cross-check");
        return;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<Vec<String>> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split(',').map(|f| f.trim().to_owned()).collect())
        .collect();
    assert_eq!(rows.len(), t.gpus.len(), "{text}");
    for (row, g) in rows.iter().zip(&t.gpus) {
        assert_eq!(row[0], g.index.to_string());
        assert_eq!(row[1], g.uuid);
        assert_eq!(row[2], g.name);
        assert_eq!(row[3], g.pci_bus_id);
        assert_eq!(row[4], g.memory_total_mib.to_string());
        assert_eq!(row[5], g.compute_capability);
    }
    // `nvidia-smi topo -m`: GPU rows, one column per GPU.
    let topo = Command::new("nvidia-smi")
        .args(["topo", "-m"])
        .output()
        .unwrap();
    let topo = String::from_utf8_lossy(&topo.stdout);
    println!("{topo}");
    let n = t.gpus.len();
    for line in topo.lines() {
        let cells: Vec<&str> = line.split_whitespace().collect();
        let Some(i) = cells
            .first()
            .and_then(|c| c.strip_prefix("GPU"))
            .and_then(|i| i.parse::<u32>().ok())
        else {
            continue;
        };
        for (j, cell) in cells.iter().skip(1).take(n).enumerate() {
            let j = j as u32;
            if i == j {
                continue;
            }
            let link = t.link(i, j).unwrap_or_else(|| panic!("no link {i}-{j}"));
            assert_eq!(link.path, *cell, "GPU{i} GPU{j}");
        }
    }
}

/// `detect --json` through the binary records the host and the interpreter's packages beside the
/// GPUs, and a plan for that file elsewhere (offline) judges them.
#[test]
fn detect_records_the_host_and_the_packages() {
    let lib = fake_lib();
    let tmp = tempfile::tempdir().unwrap();
    let venv = tmp.path().join("venv");
    let site = venv.join("lib/python3.11/site-packages");
    for d in [
        "torch-2.7.1+cu126",
        "nvidia_nccl_cu12-2.26.2",
        "sgl_kernel-0.1.9",
    ] {
        std::fs::create_dir_all(site.join(format!("{d}.dist-info"))).unwrap();
    }
    std::fs::create_dir_all(venv.join("bin")).unwrap();
    std::fs::write(venv.join("bin/python"), "").unwrap();
    std::fs::write(
        venv.join("pyvenv.cfg"),
        "home = /nonexistent/bin\ninclude-system-site-packages = false\n",
    )
    .unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/topologies/8x-rtx-pro-6000-pcie.json");
    let bin = env!("CARGO_BIN_EXE_sglang-launch");
    let out = Command::new(bin)
        .args(["detect", "--json", "--python"])
        .arg(venv.join("bin/python"))
        .env("SGLANG_LAUNCH_NVML_LIB", lib)
        .env("FAKE_NVML_TOPOLOGY", &fixture)
        .env_remove("FAKE_NVML_INIT_RC")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let t = Topology::from_json_str(&text, "detected").unwrap();
    let host = t.host.as_ref().expect("host recorded");
    let pkgs = host.packages.as_ref().unwrap();
    assert_eq!(pkgs.get("torch").map(String::as_str), Some("2.7.1+cu126"));
    assert_eq!(host.torch_build.as_deref(), Some("cuda 12.6"));
    assert!(host.shm_present.is_some() && host.rdma_devices.is_some());
    let file = tmp.path().join("box.json");
    std::fs::write(&file, &text).unwrap();
    let out = Command::new(bin)
        .args([
            "check",
            "--json",
            "--sglang-version",
            "0.5.23",
            "--topology",
        ])
        .arg(&file)
        .args(["--", "--model-path", "m", "--tp", "8"])
        .env_remove("SGLANG_LAUNCH_PYTHON")
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let codes: Vec<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["code"].as_str())
        .collect();
    for code in ["PKG001", "PKG002", "PKG003"] {
        assert!(codes.contains(&code), "no {code} in {codes:?}");
    }
}

/// `detect` and `detect --json` of a box (the fake NVML reading a fixture), whole. What only this
/// machine can say (`/dev/shm`, a container, RDMA devices, `nvcc`) is replaced; the GPUs, the
/// links and the interpreter's packages are the fixture's and the test's.
#[test]
fn detect_prints_the_box() {
    let tmp = tempfile::tempdir().unwrap();
    let venv = tmp.path().join("venv");
    let site = venv.join("lib/python3.11/site-packages");
    std::fs::create_dir_all(site.join("torch-2.7.1+cu126.dist-info")).unwrap();
    std::fs::create_dir_all(venv.join("bin")).unwrap();
    std::fs::write(venv.join("bin/python"), "").unwrap();
    std::fs::write(venv.join("pyvenv.cfg"), "home = /nonexistent/bin\n").unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/topologies/4x-a100-pcie-40gb-nvlink-pairs.json");
    let mut text = String::new();
    for json in [&[][..], &["--json"]] {
        let mut cmd = crate::common::launcher();
        cmd.arg("detect")
            .args(json)
            .arg("--python")
            .arg(venv.join("bin/python"))
            .env("SGLANG_LAUNCH_NVML_LIB", fake_lib())
            .env("FAKE_NVML_TOPOLOGY", &fixture);
        let paths = [(tmp.path(), "[T]")];
        let (out, shown) = crate::common::transcript_of(&mut cmd, &paths);
        let stdout = String::from_utf8(out.stdout).unwrap();
        let mine = this_machine(&stdout, !json.is_empty());
        text += &shown.replace(
            &crate::common::normalise(&stdout, &paths),
            &crate::common::normalise(&mine, &paths),
        );
    }
    insta::assert_snapshot!(text);
}

/// `detect`'s output with the facts of the machine the tests run on replaced: its name and
/// `/dev/shm`, container, RDMA and `nvcc` facts.
fn this_machine(stdout: &str, json: bool) -> String {
    const KEYS: [&str; 5] = [
        "shm_present",
        "shm_bytes",
        "in_container",
        "rdma_devices",
        "nvcc_version",
    ];
    if !json {
        let mut lines: Vec<String> = stdout.lines().map(str::to_owned).collect();
        if let Some((_, rest)) = lines[0].split_once(": ") {
            lines[0] = format!("[hostname]: {rest}");
        }
        for l in lines.iter_mut().filter(|l| l.starts_with("host: ")) {
            *l = "host: [this machine]".to_owned();
        }
        return lines.join("\n") + "\n";
    }
    let mut v: serde_json::Value = serde_json::from_str(stdout).unwrap();
    v["hostname"] = "[hostname]".into();
    if let Some(host) = v["host"].as_object_mut() {
        for k in KEYS {
            if let Some(value) = host.get_mut(k) {
                *value = "[this machine]".into();
            }
        }
    }
    serde_json::to_string_pretty(&v).unwrap() + "\n"
}
