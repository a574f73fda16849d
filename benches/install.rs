//! `cargo bench --bench install`: reading an SGLang install that is not the release its version
//! names (a source checkout, a dev image). Targets: the first run reads the install's parser in
//! ≤ 2 s; later runs read the cache in ≤ 50 ms; a pristine wheel install costs the check nothing
//! measurable (its RECORD is read, no Python started).
//!
//! The install is an editable one (PEP 610 `direct_url.json`) claiming 0.5.23. By default its
//! `sglang` package is a small stand-in parser; with `SGLANG_LAUNCH_BENCH_SGLANG=<site-packages
//! holding a real sglang 0.5.23>` and `SGLANG_LAUNCH_BENCH_PYTHON=<a python with SGLang's few
//! import-time packages>` it is a copy of that real tree with one line added to
//! `server_args.py` (the figures in the README were measured so).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

const STAND_IN: &str = "import argparse\n\
def prepare_server_args(argv):\n\
\x20   p = argparse.ArgumentParser()\n\
\x20   p.add_argument('--model-path', required=True)\n\
\x20   p.add_argument('--tp-size', type=int, default=1)\n\
\x20   p.add_argument('--checkout-only-option')\n\
\x20   return p.parse_args(argv)\n";

/// An editable 0.5.23 install in `dir/site`, its package the real tree or the stand-in.
fn install(dir: &Path) -> PathBuf {
    let site = dir.join("site");
    std::fs::create_dir_all(&site).unwrap();
    match std::env::var_os("SGLANG_LAUNCH_BENCH_SGLANG") {
        Some(real) => {
            // A copy of the real tree with one local change: a checkout ahead of the release.
            // -L: a symlinked tree is copied, never edited in place.
            let status = Command::new("cp")
                .arg("-rL")
                .arg(Path::new(&real).join("sglang"))
                .arg(&site)
                .status()
                .unwrap();
            assert!(status.success(), "copy the SGLang tree");
            let server_args = site.join("sglang/srt/server_args.py");
            let mut text = std::fs::read_to_string(&server_args).unwrap();
            text.push_str("\n# a local change\n");
            std::fs::write(&server_args, text).unwrap();
        }
        None => {
            std::fs::create_dir_all(site.join("sglang/srt")).unwrap();
            std::fs::write(site.join("sglang/__init__.py"), "").unwrap();
            std::fs::write(site.join("sglang/srt/__init__.py"), "").unwrap();
            std::fs::write(site.join("sglang/srt/server_args.py"), STAND_IN).unwrap();
        }
    }
    let info = site.join("sglang-0.5.23.dist-info");
    std::fs::create_dir_all(&info).unwrap();
    std::fs::write(
        info.join("METADATA"),
        "Metadata-Version: 2.1\nName: sglang\nVersion: 0.5.23\n",
    )
    .unwrap();
    std::fs::write(
        info.join("direct_url.json"),
        format!(
            r#"{{"url": "file://{}", "dir_info": {{"editable": true}}}}"#,
            site.display()
        ),
    )
    .unwrap();
    site
}

/// One `check` of this install; its wall time.
fn check(bin: &str, python: &Path, site: &Path, cache: &Path) -> Duration {
    let start = Instant::now();
    let status = Command::new(bin)
        .current_dir(ROOT)
        .args(["check", "--python"])
        .arg(python)
        .arg("--topology")
        .arg(format!(
            "{ROOT}/examples/topologies/8x-h100-sxm-nvlink.json"
        ))
        .args(["--", "--model-path", "m", "--tp-size", "8"])
        .env("PYTHONPATH", site)
        .env("XDG_CACHE_HOME", cache)
        .env("NO_COLOR", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("run sglang-launch");
    assert!(status.code().is_some(), "check ran");
    start.elapsed()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let bin = format!("{ROOT}/target/release/sglang-launch");
    assert!(
        Path::new(&bin).is_file(),
        "build the release binary first: cargo build --release"
    );
    let python = std::env::var_os("SGLANG_LAUNCH_BENCH_PYTHON")
        .map(PathBuf::from)
        .or_else(|| which::which("python3").ok())
        .expect("a python3");
    let what = if std::env::var_os("SGLANG_LAUNCH_BENCH_SGLANG").is_some() {
        "a real SGLang tree"
    } else {
        "the stand-in parser"
    };
    let runs = 20;
    let (mut first, mut cached) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        let dir = tempfile::tempdir().unwrap();
        let site = install(dir.path());
        let cache = dir.path().join("cache");
        first.push(check(&bin, &python, &site, &cache));
        // The parser was read, not fallen back from: its cache file exists.
        let cached_files = std::fs::read_dir(cache.join("sglang-launch/flags"))
            .map(|d| d.count())
            .unwrap_or(0);
        assert_eq!(cached_files, 1, "the install's parser was read and cached");
        for _ in 0..runs / 5 {
            cached.push(check(&bin, &python, &site, &cache));
        }
    }
    println!("an editable install of 0.5.23 ({what}), `check` with a topology file");
    println!(
        "  first run (parser read from the install): median {:.0} ms over {} installs (target <= 2000 ms)",
        median(first.clone()).as_secs_f64() * 1e3,
        first.len()
    );
    println!(
        "  later runs (from the cache):              median {:.1} ms over {} runs (target <= 50 ms)",
        median(cached.clone()).as_secs_f64() * 1e3,
        cached.len()
    );
}
