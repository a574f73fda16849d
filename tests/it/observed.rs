//! Prediction meets reality, end to end: `run` records its plan for the process it execs, a real
//! local HTTP server answers `/health` and `/server_info` as SGLang 0.5.x does, `wait-ready
//! --pid` keeps what the server reported next to the plan, and the next `check` of the same
//! line on the same machine shows it, while another machine's plan does not.

use crate::common;

use std::io::Write;
use std::net::TcpListener;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn topo(name: &str) -> String {
    format!("{ROOT}/examples/topologies/{name}.json")
}

/// A server on a free port: `/health` answers 200, `/server_info` the body SGLang 0.5.x gives
/// (its resolved arguments and, per DP rank, `memory_usage` in GiB), anything else 404.
fn sglang_like_server(info: Value) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let mut stream = stream.unwrap();
            let first = common::request_line(&stream);
            let (status, body) = if first.starts_with("GET /health ") {
                (200, String::new())
            } else if first.starts_with("GET /server_info ") {
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
    let pid = child.id();
    let record = state.join(format!("sglang-launch/runs/{pid}.json"));
    let start = Instant::now();
    while !record.exists() && start.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(record.exists(), "run records its plan for process {pid}");
    // The server really got 3% fewer KV tokens and chose another attention backend.
    let real_tokens = tokens * 97 / 100;
    let port = sglang_like_server(serde_json::json!({
        "attention_backend": "triton", "version": "0.5.23",
        "internal_states": [{"attention_backend": "triton", "memory_usage":
            {"weight": 7.64, "kvcache": 60.1, "token_capacity": real_tokens, "graph": 1.1}}]
    }));
    let out = common::launcher()
        .args([
            "wait-ready",
            "--port",
            &port.to_string(),
            "--timeout",
            "20",
            "--pid",
        ])
        .arg(pid.to_string())
        .env("XDG_STATE_HOME", &state)
        .output()
        .unwrap();
    let _ = child.kill();
    let _ = child.wait();
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
    // It started here with this very line: the verdict stands on that.
    assert_eq!(again["memory"]["fits"], Value::Bool(true));
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
