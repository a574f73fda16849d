//! Model facts from the Hugging Face Hub, through the real binary against real HTTP servers on
//! 127.0.0.1 that serve recorded Hub answers and log every request. No outside network.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use assert_cmd::Command;
use serde_json::Value;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const REPO: &str = "meta-llama/Llama-3.1-8B-Instruct";
const SHA: &str = "0e9e39f249a16976918f6564b8830bc894c89659";
const LOCAL: &str = "tests/fixtures/models/meta-llama__Llama-3.1-8B-Instruct";
const TOPOLOGY: &str = "tests/fixtures/topologies/8x-h100-sxm-nvlink.json";
const TOKEN: &str = "hf_TestSecretTokenValue123";

/// One request as the server saw it.
#[derive(Debug, Clone)]
struct Seen {
    target: String,
    authorization: Option<String>,
}

/// What the server does with a request.
enum Answer {
    Send {
        status: u16,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    },
    /// Keep the connection open and say nothing.
    Hang,
}

fn ok(body: impl Into<Vec<u8>>) -> Answer {
    Answer::Send {
        status: 200,
        headers: vec![("Content-Type".into(), "application/json".into())],
        body: body.into(),
    }
}

fn redirect(status: u16, location: &str) -> Answer {
    Answer::Send {
        status,
        headers: vec![("Location".into(), location.into())],
        body: Vec::new(),
    }
}

/// A Hub error: status, `X-Error-Code` and the JSON `error` body the Hub sends.
fn hub_error(status: u16, code: &str, message: &str) -> Answer {
    Answer::Send {
        status,
        headers: vec![
            ("X-Error-Code".into(), code.into()),
            ("X-Error-Message".into(), message.into()),
            ("Content-Type".into(), "application/json".into()),
        ],
        body: serde_json::json!({ "error": message }).to_string().into_bytes(),
    }
}

type Handler = Arc<dyn Fn(&str) -> Answer + Send + Sync>;

/// An HTTP/1.1 server on `ip`, one connection at a time, logging into `log`. Dropping it
/// closes its port.
struct Server {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    fn start(ip: &str, log: Arc<Mutex<Vec<Seen>>>, handler: Handler) -> Server {
        let listener = TcpListener::bind((ip, 0)).unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut hung = Vec::new();
            for stream in listener.incoming() {
                if stopped.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                if let Some(s) = serve(stream, &log, &handler) {
                    hung.push(s);
                }
            }
        });
        Server {
            addr,
            stop,
            thread: Some(thread),
        }
    }

    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accept loop so it sees the flag and drops the listener.
        let _ = TcpStream::connect(self.addr);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Answers one request; returns the stream when told to hang (kept open by the caller).
fn serve(stream: TcpStream, log: &Mutex<Vec<Seen>>, handler: &Handler) -> Option<TcpStream> {
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok();
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut first = String::new();
    reader.read_line(&mut first).ok()?;
    let target = first.split_whitespace().nth(1)?.to_owned();
    let mut authorization = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 || line == "\r\n" {
            break;
        }
        if let Some((k, v)) = line.split_once(':')
            && k.eq_ignore_ascii_case("authorization")
        {
            authorization = Some(v.trim().to_owned());
        }
    }
    log.lock().unwrap().push(Seen {
        target: target.clone(),
        authorization,
    });
    match handler(&target) {
        Answer::Hang => Some(stream),
        Answer::Send {
            status,
            headers,
            body,
        } => {
            let mut out = stream;
            let mut head = format!(
                "HTTP/1.1 {status} X\r\nContent-Length: {}\r\nConnection: close\r\n",
                body.len()
            );
            for (k, v) in headers {
                head.push_str(&format!("{k}: {v}\r\n"));
            }
            head.push_str("\r\n");
            let _ = out.write_all(head.as_bytes());
            let _ = out.write_all(&body);
            None
        }
    }
}

fn fixture(path: &str) -> Vec<u8> {
    std::fs::read(Path::new(ROOT).join(path)).unwrap()
}

/// A Hub serving Llama-3.1-8B-Instruct as huggingface.co does: model info at any revision
/// `main` or `v1.0`, config.json through a same-host redirect (resolve-cache), the index through
/// a redirect to a CDN on another host. `extra` answers first (None: fall through).
struct FakeHub {
    hub: Server,
    _cdn: Server,
    log: Arc<Mutex<Vec<Seen>>>,
}

impl FakeHub {
    fn start(extra: impl Fn(&str) -> Option<Answer> + Send + Sync + 'static) -> FakeHub {
        let log = Arc::new(Mutex::new(Vec::new()));
        let cdn = Server::start(
            "127.0.0.2",
            log.clone(),
            Arc::new(|t: &str| match t {
                "/cdn/llama-index" => ok(fixture(&format!("{LOCAL}/model.safetensors.index.json"))),
                _ => hub_error(404, "EntryNotFound", "no such object"),
            }),
        );
        let cdn_url = cdn.url();
        let handler = move |target: &str| {
            if let Some(a) = extra(target) {
                return a;
            }
            let path = target.split('?').next().unwrap_or(target);
            let info = format!("/api/models/{REPO}/revision/");
            let resolve = format!("/{REPO}/resolve/{SHA}/");
            let cache = format!("/api/resolve-cache/models/{REPO}/{SHA}/");
            if let Some(rev) = path.strip_prefix(&info) {
                return match rev {
                    "main" | "v1.0" => ok(fixture("tests/fixtures/hub/llama-3.1-8b-info.json")),
                    _ => hub_error(404, "RevisionNotFound", &format!("Invalid rev id: {rev}")),
                };
            }
            match path.strip_prefix(&resolve) {
                Some("config.json") => return redirect(307, &format!("{cache}config.json")),
                Some("generation_config.json") => {
                    return ok(fixture("tests/fixtures/hub/generation_config.json"));
                }
                Some("model.safetensors.index.json") => {
                    return redirect(302, &format!("{cdn_url}/cdn/llama-index"));
                }
                _ => {}
            }
            match path.strip_prefix(&cache) {
                Some("config.json") => ok(fixture(&format!("{LOCAL}/config.json"))),
                _ => hub_error(401, "RepoNotFound", "Repository not found"),
            }
        };
        let hub = Server::start("127.0.0.1", log.clone(), Arc::new(handler));
        FakeHub {
            hub,
            _cdn: cdn,
            log,
        }
    }

    fn url(&self) -> String {
        self.hub.url()
    }

    fn seen(&self) -> Vec<Seen> {
        self.log.lock().unwrap().clone()
    }
}

/// A scratch home: an empty HF cache and our cache, both inside.
struct Home(tempfile::TempDir);

impl Home {
    fn new() -> Home {
        Home(tempfile::tempdir().unwrap())
    }
}

/// The binary's output.
struct Run {
    json: Value,
    text: String,
    took: Duration,
}

impl Run {
    fn codes(&self) -> Vec<String> {
        self.json["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["code"].as_str().unwrap().to_owned())
            .collect()
    }

    fn finding(&self, code: &str) -> &Value {
        self.json["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["code"] == code)
            .unwrap_or_else(|| panic!("no {code}: {:#}", self.json["findings"]))
    }
}

/// `check --json --topology … --sglang-version 0.5.23 <launcher> -- <sglang>` with only `env`
/// of the Hugging Face and launcher settings.
fn check(home: &Home, env: &[(&str, &str)], launcher: &[&str], sglang: &[&str]) -> Run {
    let mut cmd = Command::cargo_bin("sglang-launch").unwrap();
    cmd.current_dir(ROOT).env("NO_COLOR", "1");
    for (k, _) in std::env::vars() {
        let k_up = k.to_ascii_uppercase();
        if k.starts_with("SGLANG_")
            || k.starts_with("HF_")
            || k.starts_with("HUGGING")
            || k_up.ends_with("_PROXY")
            || k == "CUDA_VISIBLE_DEVICES"
        {
            cmd.env_remove(k);
        }
    }
    let h = home.0.path();
    cmd.env("HOME", h)
        .env("XDG_CACHE_HOME", h.join("cache"))
        .env("HF_HOME", h.join("hf"));
    for (k, v) in env {
        cmd.env(k, v);
    }
    let start = Instant::now();
    let out = cmd
        .args(["check", "--json", "--topology", TOPOLOGY, "--sglang-version", "0.5.23"])
        .args(launcher)
        .arg("--")
        .args(sglang)
        .output()
        .unwrap();
    let took = start.elapsed();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let json = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {text}"));
    Run { json, text, took }
}

const ONLINE: &[&str] = &["--online"];

#[test]
fn a_hub_model_plans_exactly_as_its_files_on_disk_and_the_second_check_is_offline() {
    let home = Home::new();
    let hub = FakeHub::start(|_| None);
    let endpoint = hub.url();
    let env = [("HF_ENDPOINT", endpoint.as_str())];
    let on_disk = check(&home, &env, &[], &["--model-path", LOCAL]);
    let fetched = check(&home, &env, ONLINE, &["--model-path", REPO]);
    assert!(on_disk.json["memory"]["weights_per_gpu_gib"].is_number(), "{}", on_disk.text);
    assert_eq!(fetched.json["memory"], on_disk.json["memory"], "{}", fetched.text);
    assert!(!fetched.codes().iter().any(|c| c.starts_with("HUB") || c == "MEM001"));
    let seen = hub.seen();
    let targets: Vec<&str> = seen.iter().map(|s| s.target.as_str()).collect();
    assert_eq!(
        targets,
        [
            format!("/api/models/{REPO}/revision/main?expand=sha&expand=siblings&expand=safetensors"),
            format!("/{REPO}/resolve/{SHA}/config.json"),
            format!("/api/resolve-cache/models/{REPO}/{SHA}/config.json"),
            format!("/{REPO}/resolve/{SHA}/generation_config.json"),
            format!("/{REPO}/resolve/{SHA}/model.safetensors.index.json"),
            "/cdn/llama-index".to_owned(),
        ]
    );
    // The cache holds a snapshot the loader reads; the user's HF cache is left alone.
    let cached = home.0.path().join("cache/sglang-launch/hub");
    assert!(cached.is_dir());
    assert!(!home.0.path().join("hf").exists());

    // The Hub stopped (its port closed): the same plan from our cache, no finding.
    drop(hub);
    let again = check(&home, &env, ONLINE, &["--model-path", REPO]);
    assert_eq!(again.json["memory"], on_disk.json["memory"], "{}", again.text);
    assert!(!again.codes().iter().any(|c| c.starts_with("HUB")));
}
