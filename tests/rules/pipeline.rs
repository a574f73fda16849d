//! The codes the pipeline emits itself (argument errors, SGLang version, GPU selection, memory
//! plan): no check to call, so each is triggered through the real binary, `check --json`, and
//! the finding's message snapshotted like the checked rules' messages.

use serde_json::Value;

use crate::support::finding_text;

const LLAMA_8B: &str = "tests/fixtures/models/meta-llama__Llama-3.1-8B-Instruct";
const QWQ_32B: &str = "tests/fixtures/models/Qwen__QwQ-32B";

/// `sglang-launch check --json --topology <fixture> <launcher options> -- <SGLang args>`, with
/// the host's own launcher and SGLang settings kept out; the findings of `code`, as snapshot
/// text (at least one).
fn findings(code: &str, topology: &str, launcher: &[&str], sglang: &[&str]) -> String {
    findings_with(&[], code, topology, launcher, sglang)
}

/// [`findings`] with these environment variables set (and the host's own HF_* left out).
fn findings_with(
    env: &[(&str, &str)],
    code: &str,
    topology: &str,
    launcher: &[&str],
    sglang: &[&str],
) -> String {
    let mut cmd = crate::common::launcher();
    cmd.envs(env.iter().copied());
    let out = cmd
        .args(["check", "--json", "--topology"])
        .arg(format!("tests/fixtures/topologies/{topology}.json"))
        .args(launcher)
        .arg("--")
        .args(sglang)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{code}: {e}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let text: String = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == code)
        .map(|f| {
            finding_text(
                f["severity"].as_str().unwrap(),
                code,
                f["message"].as_str().unwrap(),
                f["fix"].as_str(),
            )
        })
        .collect();
    assert!(!text.is_empty(), "{code} not emitted: {:#}", v["findings"]);
    text
}

/// The usual offline planning: SGLang 0.5.23's flag set.
const V0523: &[&str] = &["--sglang-version", "0.5.23"];

#[test]
fn arg001_argparse_rejects_the_line() {
    let text = findings(
        "ARG001",
        "8x-h100-sxm-nvlink",
        V0523,
        &["--model-path", LLAMA_8B, "--bogus-flag"],
    );
    insta::assert_snapshot!("ARG001", text);
}

#[test]
fn ver001_a_version_without_an_embedded_flag_set() {
    let launcher = &["--sglang-version", "0.5.24"];
    let text = findings(
        "VER001",
        "8x-h100-sxm-nvlink",
        launcher,
        &["--model-path", LLAMA_8B],
    );
    insta::assert_snapshot!("VER001", text);
}

/// A source checkout of an embedded release (`B.dev0`) has no flag set of its own: the one
/// before it stands in, and an option only `B` has is a warning naming `B`. Which releases and
/// option depends on the embedded data, so they are named by role in the snapshot.
#[test]
fn arg002_an_option_only_the_newer_neighbour_has() {
    use sglang_launch::sglang::flagset::{self, ActionKind, KNOWN_VERSIONS, Nargs, ValueType};
    let added = |a: &str, b: &str| -> Option<String> {
        let (fa, fb) = (flagset::get(a)?, flagset::get(b)?);
        let in_a = |o: &str| {
            fa.actions
                .iter()
                .flat_map(|x| &x.option_strings)
                .any(|p| p.starts_with(o))
        };
        fb.actions
            .iter()
            .filter(|x| x.kind == ActionKind::Store && x.nargs == Nargs::One && x.choices.is_none())
            .filter(|x| matches!(x.value_type, ValueType::Str | ValueType::None))
            .flat_map(|x| &x.option_strings)
            .find(|o| o.starts_with("--") && !in_a(o))
            .cloned()
    };
    let (older, newer, option) = KNOWN_VERSIONS
        .windows(2)
        .find_map(|w| Some((w[0], w[1], added(w[0], w[1])?)))
        .expect("some embedded release adds an option");
    let version = format!("{newer}.dev0");
    let text = findings(
        "ARG002",
        "8x-h100-sxm-nvlink",
        &["--sglang-version", &version],
        &["--model-path", LLAMA_8B, &option, "x"],
    );
    let text = text
        .replace(&version, "<CHECKOUT>")
        .replace(&option, "<OPTION>")
        .replace(newer, "<NEWER>")
        .replace(older, "<OLDER>");
    insta::assert_snapshot!("ARG002", text);
}

#[test]
fn ver002_no_sglang_installed_and_no_version_given() {
    let launcher = &["--python", "/nonexistent/python3"];
    let text = findings(
        "VER002",
        "8x-h100-sxm-nvlink",
        launcher,
        &["--model-path", LLAMA_8B],
    );
    insta::assert_snapshot!("VER002", text);
}

/// Planned from a topology file, a `--config` file that is not here is not a block: the
/// machine that runs the server may have it.
#[test]
fn arg003_a_config_file_not_on_this_machine() {
    let sglang = &[
        "--model-path",
        LLAMA_8B,
        "--config",
        "/srv/sglang-launch-missing/server.yaml",
    ];
    let text = findings("ARG003", "8x-h100-sxm-nvlink", V0523, sglang);
    insta::assert_snapshot!("ARG003", text);
}

#[test]
fn top001_more_gpus_than_the_box_has() {
    let sglang = &["--model-path", LLAMA_8B, "--tp", "16"];
    let text = findings("TOP001", "8x-h100-sxm-nvlink", V0523, sglang);
    insta::assert_snapshot!("TOP001", text);
}

#[test]
fn top005_a_server_not_for_an_nvidia_gpu() {
    let sglang = &["--model-path", LLAMA_8B, "--device", "cpu"];
    let text = findings("TOP005", "8x-h100-sxm-nvlink", V0523, sglang);
    insta::assert_snapshot!("TOP005", text);
}

/// An editable install of 0.5.23 (a source checkout) whose parser has an option 0.5.23 lacks:
/// read from the install, and said so.
#[test]
fn ver003_a_source_checkout_reads_its_own_parser() {
    let t = tempfile::tempdir().unwrap();
    let site = t.path().join("site");
    let write = |rel: &str, text: &str| {
        let p = site.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write("sglang/__init__.py", "");
    write("sglang/srt/__init__.py", "");
    write(
        "sglang/srt/server_args.py",
        "import argparse\n\
         def prepare_server_args(argv):\n\
         \x20   p = argparse.ArgumentParser()\n\
         \x20   p.add_argument('--model-path', required=True)\n\
         \x20   p.add_argument('--checkout-only-option')\n\
         \x20   return p.parse_args(argv)\n",
    );
    let url = format!("file://{}", site.display());
    crate::common::sglang_dist_info(&site, "0.5.23", Some(&url));
    let cache = t.path().join("cache");
    let env = [
        ("PYTHONPATH", site.to_str().unwrap()),
        ("XDG_CACHE_HOME", cache.to_str().unwrap()),
    ];
    let python = which::which("python3").unwrap();
    let launcher = ["--python", python.to_str().unwrap()];
    let sglang = &["--model-path", LLAMA_8B, "--checkout-only-option", "x"];
    let text = findings_with(&env, "VER003", "8x-h100-sxm-nvlink", &launcher, sglang)
        .replace(&site.display().to_string(), "<site>")
        .replace(&cache.display().to_string(), "<cache>");
    insta::assert_snapshot!("VER003", text);
}

/// A two-node Slurm job, seen from its second node.
const SLURM_2: &[(&str, &str)] = &[
    ("SLURM_STEP_ID", "0"),
    ("SLURM_NNODES", "2"),
    ("SLURM_NODEID", "1"),
    ("SLURM_JOB_NODELIST", "gpu[07-08]"),
];

#[test]
fn par009_multinode_options_from_the_scheduler() {
    let sglang = &["--model-path", LLAMA_8B, "--tp", "16"];
    let text = findings_with(SLURM_2, "PAR009", "8x-h100-sxm-nvlink", V0523, sglang);
    insta::assert_snapshot!("PAR009", text);
}

#[test]
fn par010_a_flag_that_disagrees_with_the_scheduler() {
    let sglang = &["--model-path", LLAMA_8B, "--tp", "16", "--nnodes", "1"];
    let text = findings_with(SLURM_2, "PAR010", "8x-h100-sxm-nvlink", V0523, sglang);
    insta::assert_snapshot!("PAR010", text);
}

#[test]
fn par012_a_line_that_fits_on_one_node_of_a_job() {
    let sglang = &["--model-path", LLAMA_8B, "--tp", "8"];
    let text = findings_with(SLURM_2, "PAR012", "8x-h100-sxm-nvlink", V0523, sglang);
    insta::assert_snapshot!("PAR012", text);
}

/// Planned for this machine (NVML, here the fake library): a path that is not there.
#[test]
fn mem017_a_model_path_missing_on_this_machine() {
    let out = crate::common::launcher()
        .env("SGLANG_LAUNCH_NVML_LIB", crate::common::fake_nvml_lib())
        .env(
            "FAKE_NVML_TOPOLOGY",
            "tests/fixtures/topologies/8x-h100-sxm-nvlink.json",
        )
        .args(["check", "--json", "--sglang-version", "0.5.23", "--"])
        .args(["--model-path", "/nonexistent/models/Qwen3-8B"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let text: String = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "MEM017")
        .map(|f| {
            format!(
                "{} {}: {}\n",
                f["severity"].as_str().unwrap(),
                f["code"].as_str().unwrap(),
                f["message"].as_str().unwrap()
            )
        })
        .collect();
    assert!(!text.is_empty(), "{v}");
    insta::assert_snapshot!("MEM017", text);
    // For another machine, from its topology file, the path may exist there: MEM001 (info).
    let other = findings(
        "MEM001",
        "8x-h100-sxm-nvlink",
        V0523,
        &["--model-path", "/nonexistent/models/Qwen3-8B"],
    );
    assert!(other.contains("info MEM001"), "{other}");
}

#[test]
fn mem001_model_not_found() {
    let sglang = &["--model-path", "/nonexistent/model"];
    let text = findings("MEM001", "8x-h100-sxm-nvlink", V0523, sglang);
    insta::assert_snapshot!("MEM001", text);
}

#[test]
fn mem002_model_config_override_is_not_an_object() {
    let sglang = &[
        "--model-path",
        LLAMA_8B,
        "--json-model-override-args",
        "[1]",
    ];
    let text = findings("MEM002", "8x-h100-sxm-nvlink", V0523, sglang);
    insta::assert_snapshot!("MEM002", text);
}

#[test]
fn mem003_fraction_leaves_too_little_outside_the_pool() {
    let sglang = &["--model-path", LLAMA_8B, "--mem-fraction-static", "0.97"];
    let text = findings("MEM003", "8x-h100-sxm-nvlink", V0523, sglang);
    insta::assert_snapshot!("MEM003", text);
}

#[test]
fn mem004_fraction_too_low_for_the_weights() {
    let sglang = &["--model-path", LLAMA_8B, "--mem-fraction-static", "0.3"];
    let text = findings("MEM004", "1x-l4", V0523, sglang);
    insta::assert_snapshot!("MEM004", text);
}

#[test]
fn mem005_model_does_not_fit() {
    let text = findings("MEM005", "1x-l4", V0523, &["--model-path", QWQ_32B]);
    insta::assert_snapshot!("MEM005", text);
}

#[test]
fn mem016_default_fraction_leaves_no_room_for_one_request() {
    let r1 = "tests/fixtures/models/deepseek-ai__DeepSeek-R1";
    let sglang = &[
        "--model-path",
        r1,
        "--tp",
        "8",
        "--trust-remote-code",
        "--cuda-graph-max-bs",
        "128",
    ];
    let text = findings(
        "MEM016",
        "8x-h20-nvlink",
        &["--sglang-version", "0.5.5"],
        sglang,
    );
    insta::assert_snapshot!("MEM016", text);
}

#[test]
fn mem006_cuda_graphs_large_next_to_the_kv_cache() {
    let sglang = &[
        "--model-path",
        QWQ_32B,
        "--tp",
        "2",
        "--cuda-graph-max-bs-decode",
        "1024",
    ];
    let text = findings("MEM006", "8x-h100-sxm-nvlink", V0523, sglang);
    insta::assert_snapshot!("MEM006", text);
}

#[test]
fn mem007_kv_cache_smaller_than_one_request() {
    let text = findings("MEM007", "1x-l4", V0523, &["--model-path", LLAMA_8B]);
    insta::assert_snapshot!("MEM007", text);
}

#[test]
fn mem015_fit_shortens_the_context_then_the_requests() {
    let sglang = &[
        "--model-path",
        LLAMA_8B,
        "--context-length",
        "32768",
        "--max-running-requests",
        "16",
    ];
    let launcher = &["--sglang-version", "0.5.23", "--fit"];
    let text = findings("MEM015", "2x-rtx-4090-pcie", launcher, sglang);
    insta::assert_snapshot!("MEM015", text);
}

#[test]
fn mem008_fraction_is_not_a_fraction() {
    let sglang = &["--model-path", LLAMA_8B, "--mem-fraction-static", "1.5"];
    let text = findings("MEM008", "1x-l4", V0523, sglang);
    insta::assert_snapshot!("MEM008", text);
}

/// A one-answer Hub on 127.0.0.1: every request gets `status` with the Hub's `X-Error-Code`.
/// Returns its URL.
fn refusing_hub(status: u16, error_code: &'static str) -> String {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                line.clear();
            }
            let head = format!(
                "HTTP/1.1 {status} X\r\nX-Error-Code: {error_code}\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{{}}"
            );
            let _ = stream.write_all(head.as_bytes());
        }
    });
    url
}

/// Hub findings: a scratch cache, the Hub at `endpoint`, `--online` with the topology file.
fn hub_findings(code: &str, endpoint: &str) -> String {
    let home = tempfile::tempdir().unwrap();
    let home = home.path().to_str().unwrap();
    let env = [
        ("HOME", home),
        ("XDG_CACHE_HOME", home),
        ("HF_HOME", home),
        ("HF_ENDPOINT", endpoint),
    ];
    let launcher = &["--sglang-version", "0.5.23", "--online"];
    let sglang = &["--model-path", "meta-llama/Llama-3.1-8B-Instruct"];
    findings_with(&env, code, "8x-h100-sxm-nvlink", launcher, sglang).replace(endpoint, "<HUB>")
}

#[test]
fn hub001_gated_repo_without_a_token() {
    let text = hub_findings("HUB001", &refusing_hub(401, "GatedRepo"));
    insta::assert_snapshot!("HUB001", text);
}

#[test]
fn hub002_repo_not_found() {
    let text = hub_findings("HUB002", &refusing_hub(401, "RepoNotFound"));
    insta::assert_snapshot!("HUB002", text);
}

#[test]
fn hub003_hub_unreachable() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let text = hub_findings("HUB003", &format!("http://127.0.0.1:{port}"));
    insta::assert_snapshot!("HUB003", text);
}

#[test]
fn mem009_config_too_incomplete_to_plan() {
    let model = "tests/fixtures/models/synthetic__unknown-type-no-heads";
    let text = findings("MEM009", "1x-l4", V0523, &["--model-path", model]);
    insta::assert_snapshot!("MEM009", text);
}

#[test]
fn mem013_implausible_fact_is_named_and_not_planned_on() {
    let sglang = &[
        "--model-path",
        LLAMA_8B,
        "--json-model-override-args",
        r#"{"num_hidden_layers": 1000000000000, "hidden_size": "4096"}"#,
    ];
    let text = findings("MEM013", "1x-l4", V0523, sglang);
    insta::assert_snapshot!("MEM013", text);
}

#[test]
fn mem010_online_quantisation_load_peak_does_not_fit() {
    let sglang = &[
        "--model-path",
        QWQ_32B,
        "--tp",
        "2",
        "--quantization",
        "fp8",
    ];
    let text = findings("MEM010", "2x-rtx-4090-pcie", V0523, sglang);
    insta::assert_snapshot!("MEM010", text);
}

#[test]
fn mem011_other_processes_cost_every_rank_kv_tokens() {
    let sglang = &["--model-path", LLAMA_8B, "--tp", "2"];
    let text = findings("MEM011", "2x-h100-one-busy", V0523, sglang);
    insta::assert_snapshot!("MEM011", text);
}

#[test]
fn mem018_estimated_size_of_an_unmodelled_layout_only_warns() {
    // Nemotron-NAS sizes each layer by its own block config, which the estimate does not follow:
    // its figure (far above the real checkpoint) does not block the line.
    let nas = &[
        "--model-path",
        "tests/field/models/nvidia__Llama-3_3-Nemotron-Super-49B-v1",
        "--tp",
        "1",
        "--trust-remote-code",
    ];
    let text = findings("MEM018", "8x-h100-sxm-nvlink", V0523, nas);
    insta::assert_snapshot!("MEM018", text);
}

#[test]
fn mem018_paged_experts_only_warn_that_the_model_does_not_fit() {
    // 0.5.23's paged experts keep 8 of each layer's 128 experts on the GPU: the plan, which
    // counts them all, may not block on them (Qwen3-30B-A3B-FP8 on one 24 GB L4).
    let paged = &[
        "--model-path",
        "tests/fixtures/models/Qwen__Qwen3-30B-A3B-FP8",
        "--enable-paged-experts",
        "--paged-experts-num-resident",
        "8",
    ];
    let text = findings("MEM018", "1x-l4", V0523, paged);
    assert!(
        text.starts_with("warning MEM018: model does not fit")
            && text.contains("--enable-paged-experts keeps only --paged-experts-num-resident"),
        "{text}"
    );
    let plain = findings("MEM005", "1x-l4", V0523, &paged[..2]);
    assert!(plain.contains("error"), "{plain}");
}

#[test]
fn mem012_online_quantisation_load_peak_estimated() {
    let sglang = &[
        "--model-path",
        "tests/fixtures/models/deepseek-ai__DeepSeek-R1-Distill-Qwen-32B",
        "--tp",
        "2",
        "--quantization",
        "fp8",
    ];
    let text = findings("MEM012", "2x-rtx-4090-pcie", V0523, sglang);
    insta::assert_snapshot!("MEM012", text);
}
