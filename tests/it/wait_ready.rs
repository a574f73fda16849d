//! `wait-ready` against real local HTTP servers.

use crate::common;

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Output};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use sglang_launch::exit;

const BIN: &str = env!("CARGO_BIN_EXE_sglang-launch");

/// A server on a free port that answers each request with `status(n)` (n counts from 0);
/// returns the port and the count of requests seen, each of them a GET of /health.
fn server(status: fn(usize) -> u16) -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(AtomicUsize::new(0));
    let count = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            answer(stream.unwrap(), &count, status);
        }
    });
    (port, seen)
}

/// Reads one request's head and answers it. A `GET /health` is counted before the reply
/// goes out, so a client that has its answer can never see the count lag behind.
fn answer(mut stream: TcpStream, count: &AtomicUsize, status: fn(usize) -> u16) {
    let first = common::request_line(&stream);
    let n = count.load(Ordering::SeqCst);
    if first.starts_with("GET /health HTTP/1.1") {
        count.fetch_add(1, Ordering::SeqCst);
    }
    let reply = format!(
        "HTTP/1.1 {} X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        status(n)
    );
    // A client that gave up has closed its end; that is its business, not the server's.
    let _ = stream.write_all(reply.as_bytes());
}

fn wait_ready(args: &[&str]) -> (Output, Duration) {
    let start = Instant::now();
    let out = Command::new(BIN)
        .arg("wait-ready")
        .args(args)
        .output()
        .unwrap();
    (out, start.elapsed())
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn ready_after_two_503s() {
    let (port, seen) = server(|n| if n < 2 { 503 } else { 200 });
    let (out, took) = wait_ready(&["--port", &port.to_string(), "--timeout", "20"]);
    assert_eq!(out.status.code(), Some(exit::OK), "{}", stderr(&out));
    assert!(seen.load(Ordering::SeqCst) >= 3);
    // Backoff: 0.5 s, then 1 s before the third request.
    assert!(took >= Duration::from_millis(1400), "{took:?}");
    assert!(stderr(&out).contains("answered 200"), "{}", stderr(&out));
}

#[test]
fn always_503_times_out_naming_url_time_and_status() {
    let (port, seen) = server(|_| 503);
    let (out, took) = wait_ready(&["--port", &port.to_string(), "--timeout", "2"]);
    assert_eq!(out.status.code(), Some(exit::NOT_READY));
    let msg = stderr(&out);
    let url = format!("http://127.0.0.1:{port}/health");
    assert!(
        msg.contains(&format!("{url} did not answer 200 within 2.")),
        "{msg}"
    );
    assert!(msg.contains("last: HTTP 503"), "{msg}");
    assert!(seen.load(Ordering::SeqCst) >= 3);
    assert!(took < Duration::from_secs(6), "{took:?}");
}

#[test]
fn closed_port_times_out_with_the_connection_error() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/health");
    let (out, _) = wait_ready(&["--url", &url, "--timeout", "1"]);
    assert_eq!(out.status.code(), Some(exit::NOT_READY));
    let msg = stderr(&out);
    assert!(msg.contains(&format!("{url} did not answer 200")), "{msg}");
    assert!(!msg.contains("last: HTTP"), "{msg}");
}

#[test]
fn a_gone_process_stops_the_wait_at_once() {
    let mut child = Command::new("true").spawn().unwrap();
    let pid = child.id().to_string();
    child.wait().unwrap();
    let (port, _) = server(|_| 503);
    let (out, took) = wait_ready(&["--port", &port.to_string(), "--pid", &pid]);
    assert_eq!(out.status.code(), Some(exit::NOT_READY));
    assert!(took < Duration::from_secs(2), "{took:?}");
    let msg = stderr(&out);
    assert!(msg.contains(&format!("process {pid} is gone")), "{msg}");
}

#[test]
fn a_live_process_does_not_stop_the_wait() {
    let (port, seen) = server(|n| if n < 1 { 503 } else { 200 });
    let pid = std::process::id().to_string();
    let (out, _) = wait_ready(&[
        "--port",
        &port.to_string(),
        "--pid",
        &pid,
        "--timeout",
        "10",
    ]);
    assert_eq!(out.status.code(), Some(exit::OK), "{}", stderr(&out));
    assert!(seen.load(Ordering::SeqCst) >= 2);
}

#[test]
fn bad_input_is_a_usage_error() {
    for args in [
        vec!["--url", "localhost:30000/health"],
        vec!["--url", "http://h/health", "--port", "1"],
        vec!["--timeout", "0"],
        vec!["--pid", "0"],
    ] {
        let (out, _) = wait_ready(&args);
        assert_eq!(
            out.status.code(),
            Some(exit::USAGE),
            "{args:?}: {}",
            stderr(&out)
        );
    }
}

/// A server on a free port that answers `GET path` with `reply(path)` (status line and
/// headers, no body); returns its port.
fn replying(reply: impl Fn(&str) -> String + Send + 'static) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let mut stream = stream.unwrap();
            let first = common::request_line(&stream);
            let path = first.split_whitespace().nth(1).unwrap_or("").to_owned();
            let head = reply(&path);
            let text = format!("{head}Content-Length: 0\r\nConnection: close\r\n\r\n");
            let _ = stream.write_all(text.as_bytes());
        }
    });
    port
}

/// Only the URL asked counts: a 302 to another port (another server) answering 200 is not
/// ready, and says why; a redirect within the same server is followed.
#[test]
fn a_redirect_to_another_server_is_not_ready() {
    let elsewhere = replying(|_| "HTTP/1.1 200 OK\r\n".into());
    let port = replying(move |_| {
        format!("HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:{elsewhere}/health\r\n")
    });
    let (out, took) = wait_ready(&["--port", &port.to_string(), "--timeout", "1"]);
    let msg = stderr(&out);
    assert_eq!(out.status.code(), Some(exit::NOT_READY), "{msg}");
    assert!(
        msg.contains(&format!(
            "http://127.0.0.1:{port}/health did not answer 200"
        )) && msg.contains(&format!(
            "redirect to another server (http://127.0.0.1:{elsewhere})"
        )),
        "{msg}"
    );
    assert!(took < Duration::from_secs(3), "{took:?}");

    let same = replying(|path| match path {
        "/health" => "HTTP/1.1 307 Temporary Redirect\r\nLocation: /health/ok\r\n".into(),
        _ => "HTTP/1.1 200 OK\r\n".into(),
    });
    let (out, _) = wait_ready(&["--port", &same.to_string(), "--timeout", "5"]);
    assert_eq!(out.status.code(), Some(exit::OK), "{}", stderr(&out));
}
