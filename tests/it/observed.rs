//! Prediction meets reality, end to end: `run` records its plan for the process it execs, a real
//! local HTTP server answers `/health` and `/server_info` as SGLang 0.5.x does (or
//! `/get_server_info` as 0.4.x does), `wait-ready --pid` keeps what the server reported next to
//! the plan, and the next `check` of the same line on the same machine stands on it, while
//! another machine's, release's or line's plan does not.

use crate::common;

use std::io::Write;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn topo(name: &str) -> String {
    format!("{ROOT}/examples/topologies/{name}.json")
}

/// Which SGLang the fake server answers as: 0.5.x has `/server_info` (and still the old path),
/// 0.4.x only `/get_server_info`.
#[derive(Clone, Copy, PartialEq)]
enum Answers {
    V05,
    V04,
}

/// A server on a free port: `/health` answers 200, the server-info path the body SGLang gives
/// (its resolved arguments and, per DP rank, `memory_usage` in GiB), anything else 404.
fn sglang_like(info: Value, answers: Answers) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let mut stream = stream.unwrap();
            let first = common::request_line(&stream);
            let info_path = first.starts_with("GET /get_server_info ")
                || (answers == Answers::V05 && first.starts_with("GET /server_info "));
            let (status, body) = if first.starts_with("GET /health ") {
                (200, String::new())
            } else if info_path {
                (200, info.to_string())
            } else {
                (404, String::new())
            };
            let reply = format!(
                "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(reply.as_bytes());
        }
    });
    port
}

fn sglang_like_server(info: Value) -> u16 {
    sglang_like(info, Answers::V05)
}

const LINE: &[&str] = &["--model-path", "examples/models/Qwen3-32B", "--tp", "8"];

fn check_json(state: &Path, py: &Path, topology: &str) -> Value {
    let out = common::launcher()
        .args(["check", "--json", "--python"])
        .arg(py)
        .args(["--topology", &topo(topology), "--"])
        .args(LINE)
        .env("XDG_STATE_HOME", state)
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `sglang-launch check` with these launcher options and SGLang arguments: its exit code, and
/// its plan/v1 JSON or (`json` false) its report.
fn check(state: &Path, py: &Path, options: &[&str], line: &[&str], json: bool) -> (i32, String) {
    let mut cmd = common::launcher();
    cmd.arg("check");
    if json {
        cmd.arg("--json");
    }
    let out = cmd
        .arg("--python")
        .arg(py)
        .args(options)
        .arg("--")
        .args(line)
        .env("XDG_STATE_HOME", state)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    (out.status.code().unwrap_or(-1), text)
}

fn plan(state: &Path, py: &Path, options: &[&str], line: &[&str]) -> (i32, Value) {
    let (code, text) = check(state, py, options, line, true);
    let v = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    (code, v)
}

/// The plan `run` records for process `pid`, once written (within 20 s).
fn await_record(state: &Path, pid: u32) -> Value {
    let record = state.join(format!("sglang-launch/runs/{pid}.json"));
    let begun = Instant::now();
    let read = || -> Option<Value> { serde_json::from_slice(&std::fs::read(&record).ok()?).ok() };
    while read().is_none() && begun.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(50));
    }
    read().unwrap_or_else(|| panic!("run records its plan for process {pid}"))
}

/// `wait-ready --pid` for the `run` process `child` against the server on `port`; the child is
/// stopped afterwards.
fn wait_ready(state: &Path, port: u16, child: &mut std::process::Child) -> std::process::Output {
    let out = common::launcher()
        .args([
            "wait-ready",
            "--port",
            &port.to_string(),
            "--timeout",
            "20",
            "--pid",
        ])
        .arg(child.id().to_string())
        .env("XDG_STATE_HOME", state)
        .output()
        .unwrap();
    let _ = child.kill();
    let _ = child.wait();
    out
}

/// `run` with these options execs the fake interpreter (which stays up, with the launcher's
/// PID); a server answering as `answers` with what `real(planned)` makes of the plan `run`
/// recorded; `wait-ready --pid` keeps the start. Returns what `wait-ready` said.
fn start(
    state: &Path,
    py: &Path,
    (options, line): (&[&str], &[&str]),
    answers: Answers,
    real: impl Fn(&Value) -> Value,
) -> String {
    let mut child = common::launcher_std()
        .args(["run", "--python"])
        .arg(py)
        .args(options)
        .arg("--")
        .args(line)
        .env("XDG_STATE_HOME", state)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let planned = await_record(state, child.id());
    let port = sglang_like(real(&planned["planned"]), answers);
    let out = wait_ready(state, port, &mut child);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("observed: "), "{err}");
    err
}

/// A copy of topology `name` with `change` made to it, in `dir`.
fn topology_with(dir: &Path, name: &str, change: impl Fn(&mut Value)) -> String {
    let mut t: Value = serde_json::from_str(&std::fs::read_to_string(topo(name)).unwrap()).unwrap();
    change(&mut t);
    let path: PathBuf = dir.join(format!(
        "{name}-{}.json",
        std::fs::read_dir(dir).unwrap().count()
    ));
    std::fs::write(&path, t.to_string()).unwrap();
    path.display().to_string()
}

fn codes(plan: &Value) -> Vec<String> {
    plan["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| !f["fixed"].as_bool().unwrap())
        .map(|f| f["code"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_started_server_teaches_the_next_plan_of_the_same_line_on_this_machine() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    // The "server" process: what `run` execs stays alive, with the launcher's PID.
    let py = common::venv_with(dir.path(), "#!/bin/sh\nsleep 30\n", 0o755);
    let planned = check_json(&state, &py, "8x-rtx-pro-6000-pcie");
    let tokens = planned["memory"]["kv_cache_tokens"].as_u64().unwrap();
    assert!(planned["memory"]["observed"].is_null());
    let mut child = common::launcher_std()
        .args(["run", "--python"])
        .arg(&py)
        .args(["--topology", &topo("8x-rtx-pro-6000-pcie"), "--"])
        .args(LINE)
        .env("XDG_STATE_HOME", &state)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    await_record(&state, child.id());
    // The server really got 3% fewer KV tokens and chose another attention backend.
    let real_tokens = tokens * 97 / 100;
    let port = sglang_like_server(serde_json::json!({
        "attention_backend": "triton", "version": "0.5.23",
        "internal_states": [{"attention_backend": "triton", "memory_usage":
            {"weight": 7.64, "kvcache": 60.1, "token_capacity": real_tokens, "graph": 1.1}}]
    }));
    let out = wait_ready(&state, port, &mut child);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("observed: weights 7.64 GiB"), "{err}");
    assert!(
        err.contains(&format!(
            "KV cache {real_tokens} tokens (planned {tokens}, -3.0%)"
        )),
        "{err}"
    );
    assert!(
        err.contains("SGLang chose the triton attention backend"),
        "{err}"
    );
    // The next plan of the same line here carries it, in JSON and in the report.
    let again = check_json(&state, &py, "8x-rtx-pro-6000-pcie");
    let seen = &again["memory"]["observed"];
    assert_eq!(
        seen["real"]["kv_cache_tokens"].as_u64(),
        Some(real_tokens),
        "{seen}"
    );
    assert_eq!(seen["planned"]["kv_cache_tokens"].as_u64(), Some(tokens));
    // It started here with this very line: the verdict stands on that, and the plan on what it
    // measured, the planner's own figures kept beside.
    assert_eq!(again["memory"]["fits"], Value::Bool(true));
    let used = &again["memory"]["observed_use"];
    assert_eq!(used["started"], Value::Bool(true), "{used}");
    assert_eq!(
        again["memory"]["kv_cache_tokens"].as_u64(),
        Some(real_tokens)
    );
    assert_eq!(used["predicted"]["kv_cache_tokens"].as_u64(), Some(tokens));
    assert_eq!(again["memory"]["weights_per_gpu_gib"].as_f64(), Some(7.64));
    assert_eq!(
        again["memory"]["reserved_mib"]["cuda_graphs"].as_u64(),
        Some(1127)
    );
    let human = common::launcher()
        .args(["check", "--python"])
        .arg(&py)
        .args(["--topology", &topo("8x-rtx-pro-6000-pcie"), "--"])
        .args(LINE)
        .env("XDG_STATE_HOME", &state)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(text.contains("observed on this machine"), "{text}");
    assert!(
        text.contains("fits: yes: this line started on this machine"),
        "{text}"
    );
    assert!(
        text.contains("KV cache (observed)") && text.contains("from this machine's start on "),
        "{text}"
    );
    // Another machine's plan never does; `observed` lists the store.
    let other = check_json(&state, &py, "8x-h100-sxm-nvlink");
    assert!(other["memory"]["observed"].is_null());
    let list = common::launcher()
        .args(["observed", "--json"])
        .env("XDG_STATE_HOME", &state)
        .output()
        .unwrap();
    let all: Value = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!(all.as_array().map(Vec::len), Some(1), "{all}");
    // A store others could have written steers nothing, and the check says why.
    use std::os::unix::fs::PermissionsExt;
    let store = state.join("sglang-launch/observations.jsonl");
    std::fs::set_permissions(&store, std::fs::Permissions::from_mode(0o666)).unwrap();
    let out = common::launcher()
        .args(["check", "--json", "--python"])
        .arg(&py)
        .args(["--topology", &topo("8x-rtx-pro-6000-pcie"), "--"])
        .args(LINE)
        .env("XDG_STATE_HOME", &state)
        .output()
        .unwrap();
    let plan: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(plan["memory"]["observed"].is_null(), "{}", plan["memory"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("observations.jsonl: refused")
            && err.contains("its observations are not used"),
        "{err}"
    );
}

#[test]
fn wait_ready_for_a_process_run_did_not_start_keeps_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let port = sglang_like_server(Value::Null);
    let out = common::launcher()
        .args(["wait-ready", "--port", &port.to_string(), "--pid"])
        .arg(std::process::id().to_string())
        .env("XDG_STATE_HOME", dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("observed"));
    assert!(!dir.path().join("sglang-launch/observations.jsonl").exists());
}

#[test]
fn a_line_predicted_not_to_start_that_started_here_is_not_blocked_there_only() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let py = common::venv_with(dir.path(), "#!/bin/sh\nsleep 30\n", 0o755);
    let model = format!("{ROOT}/tests/fixtures/models/meta-llama__Llama-3.1-8B-Instruct");
    let line: &[&str] = &["--model-path", &model, "--mem-fraction-static", "0.66"];
    let l4 = topo("1x-l4");
    let options: &[&str] = &["--sglang-version", "0.4.10.post2", "--topology", &l4];
    // Predicted too low for the weights (MEM004): blocked.
    let (code, before) = plan(&state, &py, options, line);
    assert_eq!(code, 1);
    assert!(
        codes(&before).contains(&"MEM004".to_owned()),
        "{}",
        before["findings"]
    );
    // Launched anyway, it started with 4000 tokens: a 0.4.x server says so at
    // /get_server_info, its graphs as `cuda_graph`.
    let warn = [options, &["--mode", "warn"]].concat();
    let said = start(&state, &py, (&warn, line), Answers::V04, |_| {
        json!({"internal_states": [{"memory_usage":
            {"weight": 14.2, "kvcache": 0.49, "token_capacity": 4000, "cuda_graph": 0.4}}]})
    });
    assert!(said.contains("KV cache 4000 tokens"), "{said}");
    // The same line here: not blocked, and what it really holds is said.
    let (code, after) = plan(&state, &py, options, line);
    assert_eq!(code, 0, "{}", after["findings"]);
    let found = codes(&after);
    assert!(!found.contains(&"MEM004".to_owned()), "{found:?}");
    let mem = &after["memory"];
    assert_eq!(
        (mem["fits"].clone(), mem["kv_cache_tokens"].as_u64()),
        (json!(true), Some(4000))
    );
    assert_eq!(mem["observed_use"]["started"], json!(true));
    assert_eq!(mem["observed_use"]["predicted"]["fits"], json!(false));
    let mem007 = after["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "MEM007")
        .unwrap_or_else(|| panic!("{}", after["findings"]));
    assert!(
        mem007["message"]
            .as_str()
            .unwrap()
            .contains("this line started on this machine on "),
        "{mem007}"
    );
    let (_, report) = check(&state, &py, options, line, false);
    assert!(report.contains("weights (observed)"), "{report}");
    assert!(
        report.contains("fits: yes: this line started on this machine on "),
        "{report}"
    );
    // `run` launches it now: the plan it would exec is not refused.
    let dry = common::launcher()
        .args(["run", "--dry-run", "--python"])
        .arg(&py)
        .args(options)
        .arg("--")
        .args(line)
        .env("XDG_STATE_HOME", &state)
        .output()
        .unwrap();
    assert_eq!(
        dry.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&dry.stderr)
    );
    // Any other key part and nothing is used: the release, a memory-shaping option, the GPU's
    // model or memory, the host.
    let unused = |options: &[&str], line: &[&str]| {
        let (code, v) = plan(&state, &py, options, line);
        assert!(
            v["memory"]["observed"].is_null(),
            "{options:?} {line:?}: {}",
            v["memory"]
        );
        assert!(v["memory"]["observed_use"].is_null());
        code
    };
    let other_release = ["--sglang-version", "0.4.10.post1", "--topology", &l4];
    assert_eq!(unused(&other_release, line), 1);
    let shorter = [line, &["--context-length", "8192"]].concat();
    assert_eq!(unused(options, &shorter), 1);
    let by_hand = ["--model-path", &model, "--mem-fraction-static", "0.67"];
    unused(options, &by_hand);
    let bigger = topology_with(dir.path(), "1x-l4", |t| {
        t["gpus"][0]["memory_total_mib"] = json!(24000)
    });
    unused(
        &["--sglang-version", "0.4.10.post2", "--topology", &bigger],
        line,
    );
    let other_gpu = topology_with(dir.path(), "1x-l4", |t| {
        t["gpus"][0]["name"] = json!("NVIDIA L40S")
    });
    unused(
        &["--sglang-version", "0.4.10.post2", "--topology", &other_gpu],
        line,
    );
    let other_host = topology_with(dir.path(), "1x-l4", |t| t["hostname"] = json!("elsewhere"));
    assert_eq!(
        unused(
            &[
                "--sglang-version",
                "0.4.10.post2",
                "--topology",
                &other_host
            ],
            line
        ),
        1
    );
    // Another machine's store is not this one's either.
    let elsewhere = dir.path().join("elsewhere");
    assert_eq!(unused_in(&elsewhere, &py, options, line), 1);
    // Asked to plan from predictions only, the start is left out: blocked as predicted.
    let predicted = [options, &["--ignore-observed"]].concat();
    assert_eq!(unused(&predicted, line), 1);
}

/// `check` against the store in `state`: uses no start.
fn unused_in(state: &Path, py: &Path, options: &[&str], line: &[&str]) -> i32 {
    let (code, v) = plan(state, py, options, line);
    assert!(v["memory"]["observed"].is_null(), "{}", v["memory"]);
    code
}

#[test]
fn a_line_the_launcher_plans_another_fraction_for_keeps_only_what_does_not_depend_on_it() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let py = common::venv_with(dir.path(), "#!/bin/sh\nsleep 30\n", 0o755);
    let h100 = topo("8x-h100-sxm-nvlink");
    let options: &[&str] = &["--topology", &h100];
    let (_, alone) = plan(&state, &py, options, LINE);
    let said = start(&state, &py, (options, LINE), Answers::V05, |p| {
        let tokens = p["kv_cache_tokens"].as_u64().unwrap();
        json!({"attention_backend": "fa3", "version": "0.5.23",
            "internal_states": [{"attention_backend": "fa3", "memory_usage":
                {"weight": 7.5, "kvcache": 55.0, "token_capacity": tokens - 1000, "graph": 1.25}}]})
    });
    assert!(said.contains("CUDA graphs 1.25 GiB"), "{said}");
    // Another process now holds 20 GiB of GPU 0: the launcher gives the server less memory,
    // and the tokens that start got do not hold for it.
    let busy = topology_with(dir.path(), "8x-h100-sxm-nvlink", |t| {
        t["gpus"][0]["memory_used_mib"] = json!(20480)
    });
    let (_, v) = plan(&state, &py, &["--topology", &busy], LINE);
    let mem = &v["memory"];
    let used = &mem["observed_use"];
    assert_eq!(used["started"], json!(false), "{mem}");
    // Its KV tokens are planned, on the lighter weights it measured.
    let tokens = mem["kv_cache_tokens"].as_u64().unwrap();
    assert_ne!(
        Some(tokens),
        mem["observed"]["real"]["kv_cache_tokens"].as_u64()
    );
    assert!(
        Some(tokens) > used["predicted"]["kv_cache_tokens"].as_u64(),
        "{mem}"
    );
    assert!(Some(tokens) < alone["memory"]["kv_cache_tokens"].as_u64());
    // What the start measured of the line itself still stands: its weights and graphs.
    assert_eq!(
        (used["weights"].clone(), used["cuda_graphs"].clone()),
        (json!(true), json!(true))
    );
    assert_eq!(mem["weights_per_gpu_gib"].as_f64(), Some(7.5));
    assert_eq!(mem["reserved_mib"]["cuda_graphs"].as_u64(), Some(1280));
    let (_, report) = check(&state, &py, &["--topology", &busy], LINE, false);
    assert!(report.contains("so its KV cache is planned"), "{report}");
    assert!(!report.contains("KV cache (observed)"), "{report}");
    assert!(
        !report.contains("this line started on this machine"),
        "{report}"
    );
    // Back on the free GPUs it is the line that started, on all it measured.
    let (_, v) = plan(&state, &py, options, LINE);
    assert_eq!(
        v["memory"]["observed_use"]["started"],
        json!(true),
        "{}",
        v["memory"]
    );
}

#[test]
fn fit_stands_on_a_start_of_the_line_it_would_lower() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let py = common::venv_with(dir.path(), "#!/bin/sh\nsleep 30\n", 0o755);
    let h100 = topo("8x-h100-sxm-nvlink");
    let options: &[&str] = &["--topology", &h100];
    // One GPU for 32B: predicted to hold less than one 40960-token request; --fit would lower
    // the context length.
    let line: &[&str] = &["--model-path", "examples/models/Qwen3-32B"];
    let fit = [options, &["--fit"]].concat();
    let (_, predicted) = plan(&state, &py, &fit, line);
    assert!(has_fixed(&predicted, "MEM015"), "{}", predicted["findings"]);
    // It really started with room for two such requests, at the figures planned.
    start(&state, &py, (options, line), Answers::V05, |p| {
        json!({"internal_states": [{"memory_usage": {
            "weight": p["weights_gib"], "kvcache": 10.0, "token_capacity": 2 * 40960,
            "graph": p["cuda_graphs_gib"]}}]})
    });
    let (code, v) = plan(&state, &py, &fit, line);
    assert_eq!(code, 0);
    assert!(!has_fixed(&v, "MEM015"), "{}", v["findings"]);
    assert!(
        !codes(&v).contains(&"MEM007".to_owned()),
        "{}",
        v["findings"]
    );
    assert_eq!(v["memory"]["observed_use"]["started"], json!(true));
    assert_eq!(v["memory"]["kv_cache_tokens"].as_u64(), Some(2 * 40960));
    let (_, report) = check(&state, &py, options, line, false);
    assert!(
        report.contains("2 requests at 40960 tokens at once"),
        "{report}"
    );
}

fn has_fixed(plan: &Value, code: &str) -> bool {
    plan["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["code"] == code && f["fixed"] == json!(true))
}

#[test]
fn a_start_of_the_line_as_written_is_not_the_line_a_fix_changes_nor_the_other_way() {
    let dir = tempfile::tempdir().unwrap();
    let py = common::venv_with(dir.path(), "#!/bin/sh\nsleep 30\n", 0o755);
    let h100 = topo("8x-h100-sxm-nvlink");
    let options: &[&str] = &["--sglang-version", "0.5.10.post1", "--topology", &h100];
    // SGLang rejects multi-item scoring with the radix cache or chunked prefill on: the
    // launcher's fix sets --chunked-prefill-size -1, an option that shapes memory.
    let line = [LINE, &["--multi-item-scoring-delimiter", "151643"]].concat();
    let no_fix = [options, &["--no-fix"]].concat();
    let real = |p: &Value| {
        json!({"internal_states": [{"memory_usage": {"weight": p["weights_gib"],
            "kvcache": 50.0, "token_capacity": p["kv_cache_tokens"], "graph": 1.0}}]})
    };
    let used = |state: &Path, options: &[&str]| {
        let (_, v) = plan(state, &py, options, &line);
        !v["memory"]["observed"].is_null()
    };
    // Started as written (--no-fix, launched anyway): the fixed line does not use it.
    let as_written = dir.path().join("as-written");
    let warn = [&no_fix[..], &["--mode", "warn"]].concat();
    start(&as_written, &py, (&warn, &line), Answers::V05, real);
    assert!(used(&as_written, &no_fix));
    assert!(!used(&as_written, options));
    // Started as fixed: the line as written does not use it.
    let as_fixed = dir.path().join("as-fixed");
    start(&as_fixed, &py, (options, &line), Answers::V05, real);
    assert!(used(&as_fixed, options));
    assert!(!used(&as_fixed, &no_fix));
}
