//! Model facts from the Hugging Face Hub, through the real binary against real HTTP servers on
//! 127.0.0.1 that serve recorded Hub answers and log every request. No outside network.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common;

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
        body: serde_json::json!({ "error": message })
            .to_string()
            .into_bytes(),
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
    let mut cmd = common::launcher();
    let h = home.0.path();
    cmd.env("HOME", h)
        .env("XDG_CACHE_HOME", h.join("cache"))
        .env("HF_HOME", h.join("hf"));
    for (k, v) in env {
        cmd.env(k, v);
    }
    let start = Instant::now();
    let out = cmd
        .args([
            "check",
            "--json",
            "--topology",
            TOPOLOGY,
            "--sglang-version",
            "0.5.23",
        ])
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
    assert!(
        on_disk.json["memory"]["weights_per_gpu_gib"].is_number(),
        "{}",
        on_disk.text
    );
    assert_eq!(
        fetched.json["memory"], on_disk.json["memory"],
        "{}",
        fetched.text
    );
    assert!(
        !fetched
            .codes()
            .iter()
            .any(|c| c.starts_with("HUB") || c == "MEM001")
    );
    let seen = hub.seen();
    let targets: Vec<&str> = seen.iter().map(|s| s.target.as_str()).collect();
    assert_eq!(
        targets,
        [
            format!(
                "/api/models/{REPO}/revision/main?expand=sha&expand=siblings&expand=safetensors"
            ),
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
    assert_eq!(
        again.json["memory"], on_disk.json["memory"],
        "{}",
        again.text
    );
    assert!(!again.codes().iter().any(|c| c.starts_with("HUB")));
}

#[test]
fn the_token_reaches_the_hub_and_its_own_redirects_but_never_the_cdn_or_any_output() {
    let home = Home::new();
    let hub = FakeHub::start(|_| None);
    let endpoint = hub.url();
    let env = [("HF_ENDPOINT", endpoint.as_str()), ("HF_TOKEN", TOKEN)];
    let run = check(&home, &env, ONLINE, &["--model-path", REPO]);
    assert!(
        run.json["memory"]["weights_per_gpu_gib"].is_number(),
        "{}",
        run.text
    );
    let bearer = format!("Bearer {TOKEN}");
    for s in hub.seen() {
        let want = (!s.target.starts_with("/cdn/")).then_some(bearer.as_str());
        assert_eq!(s.authorization.as_deref(), want, "{}", s.target);
    }
    assert!(!run.text.contains(TOKEN));
}

#[test]
fn revision_reaches_the_url_and_keys_the_cache() {
    let home = Home::new();
    let hub = FakeHub::start(|_| None);
    let endpoint = hub.url();
    let env = [("HF_ENDPOINT", endpoint.as_str())];
    let run = check(
        &home,
        &env,
        ONLINE,
        &["--model-path", REPO, "--revision", "v1.0"],
    );
    assert!(
        !run.codes().iter().any(|c| c.starts_with("HUB")),
        "{}",
        run.text
    );
    let first = &hub.seen()[0].target;
    assert!(
        first.starts_with(&format!("/api/models/{REPO}/revision/v1.0?")),
        "{first}"
    );
    // Another revision is another snapshot: asked for again, and this one does not exist.
    let run = check(
        &home,
        &env,
        ONLINE,
        &["--model-path", REPO, "--revision", "v9"],
    );
    let f = run.finding("HUB002");
    assert_eq!(f["severity"], "error");
    let msg = f["message"].as_str().unwrap();
    assert!(msg.contains("v9") && msg.contains("--revision"), "{msg}");
    assert!(!run.codes().contains(&"MEM001".to_owned()));
}

#[test]
fn a_gated_repo_without_a_valid_token_blocks_with_hub001_and_shows_no_token() {
    let home = Home::new();
    let gated = |t: &str| {
        t.starts_with("/api/models/").then(|| {
            hub_error(
                401,
                "GatedRepo",
                "Access to model meta-llama/Llama-3.1-8B-Instruct is restricted.",
            )
        })
    };
    let hub = FakeHub::start(gated);
    let endpoint = hub.url();
    let env = [("HF_ENDPOINT", endpoint.as_str())];
    let run = check(&home, &env, ONLINE, &["--model-path", REPO]);
    let f = run.finding("HUB001");
    assert_eq!(f["severity"], "error");
    assert_eq!(run.json["verdict"], "error");
    let msg = f["message"].as_str().unwrap();
    assert!(msg.contains(REPO) && msg.contains("HF_TOKEN"), "{msg}");
    assert!(!run.codes().contains(&"MEM001".to_owned()));

    // A token without access: 403, and the token appears nowhere, JSON or human report.
    let denied = FakeHub::start(|t: &str| {
        t.starts_with("/api/models/")
            .then(|| hub_error(403, "GatedRepo", "Access to model is restricted."))
    });
    let endpoint = denied.url();
    let env = [
        ("HF_ENDPOINT", endpoint.as_str()),
        ("HUGGING_FACE_HUB_TOKEN", TOKEN),
    ];
    let run = check(&home, &env, ONLINE, &["--model-path", REPO]);
    let msg = run.finding("HUB001")["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(msg.contains("no access"), "{msg}");
    assert!(!run.text.contains(TOKEN));
    let out = common::launcher()
        .env("HOME", home.0.path())
        .env("XDG_CACHE_HOME", home.0.path().join("cache"))
        .env("HF_HOME", home.0.path().join("hf"))
        .env("HF_ENDPOINT", &endpoint)
        .env("HF_TOKEN", TOKEN)
        .args([
            "plan",
            "--online",
            "--topology",
            TOPOLOGY,
            "--sglang-version",
            "0.5.23",
            "--",
        ])
        .args(["--model-path", REPO])
        .output()
        .unwrap();
    let human = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(human.contains("HUB001"), "{human}");
    assert!(!human.contains(TOKEN), "{human}");
}

#[test]
fn a_repo_that_does_not_exist_is_hub002() {
    let home = Home::new();
    let hub = FakeHub::start(|_| None);
    let endpoint = hub.url();
    let env = [("HF_ENDPOINT", endpoint.as_str())];
    // The Hub answers 401 RepoNotFound to an anonymous request for a missing repo.
    let run = check(&home, &env, ONLINE, &["--model-path", "org/no-such-model"]);
    let msg = run.finding("HUB002")["message"].as_str().unwrap();
    assert!(
        msg.contains("org/no-such-model") && msg.contains("--model-path"),
        "{msg}"
    );
    assert!(!run.codes().iter().any(|c| c == "HUB001" || c == "MEM001"));
}

#[test]
fn a_closed_port_is_a_hub003_warning_and_the_check_goes_on_at_once() {
    let home = Home::new();
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let endpoint = format!("http://127.0.0.1:{port}");
    let env = [("HF_ENDPOINT", endpoint.as_str())];
    let run = check(&home, &env, ONLINE, &["--model-path", REPO]);
    let f = run.finding("HUB003");
    assert_eq!(f["severity"], "warning");
    assert_ne!(run.json["verdict"], "error");
    assert!(f["message"].as_str().unwrap().contains(&endpoint));
    assert!(run.took < Duration::from_secs(3), "{:?}", run.took);
}

#[test]
fn a_hub_that_never_answers_costs_at_most_the_total_deadline() {
    let home = Home::new();
    let hub = FakeHub::start(|_| Some(Answer::Hang));
    let endpoint = hub.url();
    let env = [("HF_ENDPOINT", endpoint.as_str())];
    let run = check(
        &home,
        &env,
        ONLINE,
        &[
            "--model-path",
            REPO,
            "--speculative-algorithm",
            "EAGLE",
            "--speculative-draft-model-path",
            "org/draft",
        ],
    );
    assert!(run.codes().contains(&"HUB003".to_owned()), "{}", run.text);
    // Two models, one deadline: not 3 s each.
    assert!(run.took >= Duration::from_millis(2900), "{:?}", run.took);
    assert!(run.took < Duration::from_millis(4500), "{:?}", run.took);
}

#[test]
fn offline_switches_make_no_request() {
    let hub = FakeHub::start(|_| None);
    let endpoint = hub.url();
    type Case<'a> = (&'a [(&'a str, &'a str)], &'a [&'a str]);
    let cases: [Case; 4] = [
        (&[("HF_HUB_OFFLINE", "1")], ONLINE),
        (&[], &["--online", "--offline"]),
        (&[("SGLANG_LAUNCH_OFFLINE", "1")], ONLINE),
        // --topology without --online.
        (&[], &[]),
    ];
    for (extra, launcher) in cases {
        let home = Home::new();
        let mut env = vec![("HF_ENDPOINT", endpoint.as_str())];
        env.extend_from_slice(extra);
        let run = check(&home, &env, launcher, &["--model-path", REPO]);
        assert!(
            run.codes().contains(&"MEM001".to_owned()),
            "{extra:?} {launcher:?}"
        );
        assert!(
            hub.seen().is_empty(),
            "{extra:?} {launcher:?}: {:?}",
            hub.seen()
        );
    }
    // SGLANG_LAUNCH_ONLINE=1 is --online.
    let home = Home::new();
    let env = [
        ("HF_ENDPOINT", endpoint.as_str()),
        ("SGLANG_LAUNCH_ONLINE", "1"),
    ];
    let run = check(&home, &env, &[], &["--model-path", REPO]);
    assert!(!run.codes().contains(&"MEM001".to_owned()), "{}", run.text);
    assert!(!hub.seen().is_empty());
}

#[test]
fn the_separate_draft_is_fetched_too() {
    let home = Home::new();
    // A draft repo without an index: its weight bytes come from the model-info API.
    let info = r#"{"_id":"1","id":"org/draft","sha":"d1","siblings":[{"rfilename":"config.json"},{"rfilename":"model.safetensors"}],"safetensors":{"parameters":{"BF16":250000000},"total":250000000}}"#;
    let hub = FakeHub::start(move |t: &str| match t.split('?').next().unwrap() {
        "/api/models/org/draft/revision/main" => Some(ok(info)),
        "/org/draft/resolve/d1/config.json" => Some(ok(fixture(&format!("{LOCAL}/config.json")))),
        _ => None,
    });
    let endpoint = hub.url();
    let env = [("HF_ENDPOINT", endpoint.as_str())];
    let spec = [
        "--model-path",
        REPO,
        "--speculative-algorithm",
        "EAGLE",
        "--speculative-draft-model-path",
        "org/draft",
    ];
    let run = check(&home, &env, ONLINE, &spec);
    let seen: Vec<String> = hub.seen().into_iter().map(|s| s.target).collect();
    assert!(
        seen.iter()
            .any(|t| t == "/org/draft/resolve/d1/config.json"),
        "{seen:?}"
    );
    // SPEC011 fires when the draft's weights are unknown: here they are known.
    assert!(
        !run.codes()
            .iter()
            .any(|c| c == "SPEC011" || c.starts_with("HUB")),
        "{}",
        run.text
    );
    // Its weight bytes, from the parameter counts, are recorded in its snapshot for the loader.
    let root = home.0.path().join("cache/sglang-launch/hub");
    let endpoint_dir = std::fs::read_dir(&root)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let record = endpoint_dir.join("org%2Fdraft/main/sglang-launch-weights.json");
    let v: Value = serde_json::from_slice(&std::fs::read(&record).unwrap()).unwrap();
    assert_eq!(v["total_size"], 500_000_000);
}

#[test]
fn an_oversized_file_is_refused_and_named() {
    let home = Home::new();
    let huge = vec![b' '; 3 * 1024 * 1024];
    let hub = FakeHub::start(move |t: &str| {
        t.starts_with("/api/resolve-cache/")
            .then(|| ok(huge.clone()))
    });
    let endpoint = hub.url();
    let env = [("HF_ENDPOINT", endpoint.as_str())];
    let run = check(&home, &env, ONLINE, &["--model-path", REPO]);
    let msg = run.finding("HUB003")["message"].as_str().unwrap();
    assert!(
        msg.contains("config.json") && msg.contains("larger than"),
        "{msg}"
    );
    // Nothing half-fetched is cached.
    assert!(
        std::fs::read_dir(home.0.path().join("cache/sglang-launch/hub"))
            .map(|d| d.count() == 0)
            .unwrap_or(true)
    );
}

#[test]
fn a_missing_optional_file_does_not_stop_the_fetch() {
    let home = Home::new();
    let hub = FakeHub::start(|t: &str| {
        t.ends_with("/generation_config.json")
            .then(|| hub_error(404, "EntryNotFound", "Entry not found"))
    });
    let endpoint = hub.url();
    let env = [("HF_ENDPOINT", endpoint.as_str())];
    let run = check(&home, &env, ONLINE, &["--model-path", REPO]);
    assert!(
        !run.codes().iter().any(|c| c.starts_with("HUB")),
        "{}",
        run.text
    );
    assert!(run.json["memory"]["weights_per_gpu_gib"].is_number());
}

/// With no home and no cache directory the files are kept in a new private directory, never at
/// a name someone could make first (`sglang-launch-hub-<pid>`, planted here for the PIDs to come).
#[test]
fn without_a_cache_directory_no_planted_directory_is_read() {
    let home = Home::new();
    let tmp = home.0.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let last: u32 = std::fs::read_to_string("/proc/sys/kernel/ns_last_pid")
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(1);
    let mut planted =
        serde_json::from_slice::<Value>(&fixture(&format!("{LOCAL}/config.json"))).unwrap();
    planted["num_hidden_layers"] = 100_000_000.into();
    for pid in last + 1..last + 200 {
        let d = tmp.join(format!("sglang-launch-hub-{pid}"));
        std::fs::create_dir(&d).unwrap();
        std::fs::write(d.join("config.json"), planted.to_string()).unwrap();
    }
    let hub = FakeHub::start(|_| None);
    let mut cmd = common::launcher();
    cmd.env_remove("HOME")
        .env_remove("XDG_CACHE_HOME")
        .env("TMPDIR", &tmp)
        .env("HF_HOME", home.0.path().join("hf"))
        .env("HF_ENDPOINT", hub.url())
        .args(["check", "--json", "--online", "--topology", TOPOLOGY])
        .args(["--sglang-version", "0.5.23", "--", "--model-path", REPO]);
    let out = cmd.output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        !text.contains("MEM013"),
        "the planted config was read: {text}"
    );
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(json["memory"]["weights_per_gpu_gib"].is_number(), "{text}");
    assert!(hub.seen().iter().any(|s| s.target.ends_with("config.json")));
    let left = std::fs::read_dir(&tmp).unwrap().count();
    assert_eq!(
        left, 199,
        "the private directory is removed after the check"
    );
}

/// The token goes to the endpoint's own origin only: a redirect to another port of the same
/// host (another server, whoever runs it) gets the file asked for, never the token.
#[test]
fn the_token_never_follows_a_redirect_to_another_port_of_the_same_host() {
    let home = Home::new();
    let other_log = Arc::new(Mutex::new(Vec::new()));
    let other = Server::start(
        "127.0.0.1",
        other_log.clone(),
        Arc::new(|t: &str| match t {
            "/elsewhere/config.json" => ok(fixture(&format!("{LOCAL}/config.json"))),
            _ => hub_error(404, "EntryNotFound", "no such object"),
        }),
    );
    let to = format!("{}/elsewhere/config.json", other.url());
    let hub = FakeHub::start(move |t: &str| {
        t.ends_with(&format!("/resolve/{SHA}/config.json"))
            .then(|| redirect(302, &to))
    });
    let endpoint = hub.url();
    let env = [("HF_ENDPOINT", endpoint.as_str()), ("HF_TOKEN", TOKEN)];
    let run = check(&home, &env, ONLINE, &["--model-path", REPO]);
    assert!(
        run.json["memory"]["weights_per_gpu_gib"].is_number(),
        "{}",
        run.text
    );
    let seen = other_log.lock().unwrap().clone();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].authorization, None, "the other port got the token");
    let bearer = format!("Bearer {TOKEN}");
    assert!(
        hub.seen()
            .iter()
            .filter(|s| !s.target.starts_with("/cdn/"))
            .all(|s| s.authorization.as_deref() == Some(bearer.as_str())),
        "the Hub itself still gets it"
    );
}

/// A cached snapshot someone else could have written is not believed: the files are fetched
/// again (into a private directory), and the warning names the file.
#[test]
fn a_cached_file_someone_else_could_have_written_is_fetched_again() {
    use std::os::unix::fs::PermissionsExt;
    let home = Home::new();
    let hub = FakeHub::start(|_| None);
    let endpoint = hub.url();
    let env = [("HF_ENDPOINT", endpoint.as_str())];
    let first = check(&home, &env, ONLINE, &["--model-path", REPO]);
    let config = common::files_named(
        &home.0.path().join("cache/sglang-launch/hub"),
        "config.json",
    )
    .pop()
    .expect("a cached config.json");
    std::fs::write(&config, r#"{"num_hidden_layers": 100000000}"#).unwrap();
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o666)).unwrap();
    let again = check(&home, &env, ONLINE, &["--model-path", REPO]);
    assert!(again.text.contains("refused"), "{}", again.text);
    assert!(
        again.text.contains("fetching the model's files again"),
        "{}",
        again.text
    );
    assert!(
        !again.codes().iter().any(|c| c == "MEM013"),
        "{}",
        again.text
    );
    assert_eq!(again.json["memory"], first.json["memory"]);
}
