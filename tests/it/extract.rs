//! A release this build does not embed: its flag set is read from the installed SGLang's own
//! parser by a real python3 (a fake SGLang package here, whose `torch` raises on import), cached
//! per version and install, reused without Python, and rebuilt by `flags refresh`.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

use crate::common;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const VERSION: &str = "0.5.24.dev3+gabc123";

const SERVER_ARGS: &str = r#"
import argparse
import torch  # must be the extractor's stub: the installed torch raises

class ServerArgs:
    @staticmethod
    def add_cli_args(parser):
        parser.add_argument("--model-path", "--model", type=str, required=True)
        parser.add_argument("--tp-size", "--tensor-parallel-size", type=int, default=1, dest="tp_size")
        parser.add_argument("--fork-only-mode", choices=["fast", "exact"], default="fast")
        parser.add_argument("--enable-fork-thing", action="store_true")

def prepare_server_args(argv):
    parser = argparse.ArgumentParser(prog="sglang serve")
    ServerArgs.add_cli_args(parser)
    return parser.parse_args(argv)
"#;

/// A fake SGLang install (under `site/`, put on PYTHONPATH) and a python3 wrapper that logs
/// each start.
struct Fake {
    dir: tempfile::TempDir,
}

impl Fake {
    fn new() -> Fake {
        Fake::of(VERSION)
    }

    /// A fake install claiming `version` (its parser is the fake one either way).
    fn of(version: &str) -> Fake {
        let dir = tempfile::tempdir().unwrap();
        let site = dir.path().join("site");
        let write = |rel: &str, text: &str| {
            let p = site.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        write("sglang/__init__.py", "");
        write("sglang/srt/__init__.py", "");
        write("sglang/srt/server_args.py", SERVER_ARGS);
        common::sglang_dist_info(&site, version, None);
        write(
            "torch/__init__.py",
            "raise RuntimeError('torch was imported')\n",
        );
        let real = which("python3");
        let py = dir.path().join("bin/python3");
        std::fs::create_dir_all(py.parent().unwrap()).unwrap();
        let log = dir.path().join("python-starts.log");
        std::fs::write(
            &py,
            format!(
                "#!/bin/sh\necho start >> '{}'\nexec '{}' \"$@\"\n",
                log.display(),
                real.display()
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&py, std::fs::Permissions::from_mode(0o755)).unwrap();
        Fake { dir }
    }

    /// Marks the install of `version` editable (PEP 610), as `pip install -e` does; its site.
    fn editable(&self, version: &str) -> PathBuf {
        let site = self.site();
        let url = format!("file://{}", site.display());
        common::sglang_dist_info(&site, version, Some(&url));
        site
    }

    fn python(&self) -> PathBuf {
        self.dir.path().join("bin/python3")
    }

    fn site(&self) -> PathBuf {
        self.dir.path().join("site")
    }

    fn dist_info(&self, version: &str) -> PathBuf {
        self.site().join(format!("sglang-{version}.dist-info"))
    }

    fn starts(&self) -> usize {
        std::fs::read_to_string(self.dir.path().join("python-starts.log"))
            .map(|t| t.lines().count())
            .unwrap_or(0)
    }

    fn cache(&self) -> PathBuf {
        self.dir.path().join("cache")
    }

    fn sl(&self) -> Command {
        let mut c = Command::cargo_bin("sglang-launch").unwrap();
        c.current_dir(ROOT)
            .env("NO_COLOR", "1")
            .env("PYTHONPATH", self.dir.path().join("site"))
            .env("XDG_CACHE_HOME", self.cache())
            .env_remove("SGLANG_LAUNCH_SGLANG_VERSION")
            .env_remove("SGLANG_LAUNCH_PYTHON");
        c
    }

    fn plan(&self, python: &Path, sglang: &[&str]) -> Value {
        let topo = format!("{ROOT}/examples/topologies/2x-rtx-4090-pcie.json");
        let out = self
            .sl()
            .args(["plan", "--json", "--python"])
            .arg(python)
            .args(["--topology", &topo, "--"])
            .args(sglang)
            .output()
            .unwrap();
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)))
    }
}

fn which(name: &str) -> PathBuf {
    std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .expect("python3 on PATH")
}

fn codes(plan: &Value) -> Vec<String> {
    plan["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| format!("{} {}", f["code"], f["message"]))
        .collect()
}

#[test]
fn a_release_not_embedded_is_read_from_its_parser_then_from_the_cache() {
    let fake = Fake::new();
    let sglang = ["--model", "m", "--fork-only-mode", "exact", "--tp", "2"];
    let p = fake.plan(&fake.python(), &sglang);
    assert_eq!(fake.starts(), 1, "the extractor runs once");
    assert_eq!(p["sglang_version"], VERSION);
    let found = codes(&p);
    // The fork's own option and choice parse; no fallback warning, no argument error.
    assert!(
        !found
            .iter()
            .any(|c| c.contains("VER001") || c.contains("ARG001")),
        "{found:#?}"
    );
    let cached: Vec<_> = std::fs::read_dir(fake.cache().join("sglang-launch/flags"))
        .unwrap()
        .collect();
    assert_eq!(cached.len(), 1);

    // Second run: the cache answers, Python is not started, even when it is gone.
    std::fs::remove_file(fake.python()).unwrap();
    let p2 = fake.plan(&fake.python(), &sglang);
    assert_eq!(fake.starts(), 1);
    assert_eq!(p2["sglang_version"], VERSION);
    assert!(!codes(&p2).iter().any(|c| c.contains("VER001")));

    // An invalid choice of the fork's option is the fork's own argparse error.
    let p3 = fake.plan(&fake.python(), &["--model", "m", "--fork-only-mode", "x"]);
    let errors = codes(&p3).join("\n");
    assert!(
        errors.contains("invalid choice: 'x' (choose from 'fast', 'exact')"),
        "{errors}"
    );
}

#[test]
fn flags_refresh_rebuilds_the_cache_and_show_says_where_it_came_from() {
    let fake = Fake::new();
    let out = fake
        .sl()
        .args(["flags", "refresh", "--python"])
        .arg(fake.python())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains(&format!("SGLang {VERSION}")) && text.contains("5 options"),
        "{text}"
    );
    assert_eq!(fake.starts(), 1);
    let out = fake
        .sl()
        .args(["flags", "show", "--python"])
        .arg(fake.python())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(fake.starts(), 1, "show reads the cache");
    assert!(
        text.contains("read from the installed SGLang's parser, cached in"),
        "{text}"
    );
    assert!(
        text.contains(r#"--fork-only-mode  Store/None  default "fast"  choices "fast"|"exact""#),
        "{text}"
    );
    // refresh always runs the parser again
    fake.sl()
        .args(["flags", "refresh", "--python"])
        .arg(fake.python())
        .assert()
        .success();
    assert_eq!(fake.starts(), 2);
}

#[test]
fn a_failing_extraction_falls_back_and_says_why() {
    let fake = Fake::new();
    // SGLang's parser module itself is broken: nothing to read, the nearest set stands in.
    std::fs::write(
        fake.dir.path().join("site/sglang/srt/server_args.py"),
        "raise ImportError('broken checkout')\n",
    )
    .unwrap();
    let p = fake.plan(&fake.python(), &["--model-path", "m"]);
    let found = codes(&p).join("\n");
    assert!(found.contains("VER001"), "{found}");
    assert!(found.contains("broken checkout"), "{found}");
    assert!(
        found.contains("the 0.5.23 release's data stands in"),
        "{found}"
    );
}

/// A source checkout of an embedded release (`pip install -e`, as dev images do): the version
/// string is 0.5.23's, the parser has an option 0.5.23 lacks. The install's own parser is read
/// (VER003 says so), the option runs, a typo is still an argparse error, and the next run reads
/// the cache keyed by the parser files' content without starting Python.
#[test]
fn an_editable_install_of_an_embedded_release_reads_its_own_parser() {
    let fake = Fake::of("0.5.23");
    let site = fake.editable("0.5.23");
    let sglang = [
        "--model-path",
        "m",
        "--fork-only-mode",
        "exact",
        "--tp",
        "2",
    ];
    let p = fake.plan(&fake.python(), &sglang);
    assert_eq!(fake.starts(), 1, "the extractor runs once");
    let found = codes(&p).join("\n");
    assert!(found.contains("VER003"), "{found}");
    assert!(found.contains("an editable install"), "{found}");
    assert!(
        !found.contains("ARG001") && !found.contains("FLAG004"),
        "{found}"
    );
    let typo = fake.plan(
        &fake.python(),
        &["--model-path", "m", "--fork-only-mod", "exact", "--bogus"],
    );
    assert!(
        codes(&typo).join("\n").contains("ARG001"),
        "a typo stays an error"
    );
    assert_eq!(fake.starts(), 1, "the cache answers");

    // The checkout changes (a new option): its content digest changes, so it is read again.
    let server_args = site.join("sglang/srt/server_args.py");
    let changed = std::fs::read_to_string(&server_args)
        .unwrap()
        .replace("\"--enable-fork-thing\"", "\"--enable-fork-thing-2\"");
    std::fs::write(&server_args, changed).unwrap();
    let p = fake.plan(
        &fake.python(),
        &["--model-path", "m", "--enable-fork-thing-2"],
    );
    assert_eq!(fake.starts(), 2, "new content, new read");
    assert!(!codes(&p).join("\n").contains("ARG001"));
}

/// An editable install whose parser cannot be read (its module raises): a fork may add an
/// option close to one the release has, and only its own parser could prove a typo. Such an
/// option is a warning naming argparse's suggestion; a bad value still blocks.
#[test]
fn an_unreadable_modified_install_warns_on_a_close_unknown_option() {
    let fake = Fake::of("0.5.22");
    let site = fake.editable("0.5.22");
    std::fs::write(
        site.join("sglang/srt/server_args.py"),
        "raise ImportError('broken checkout')\n",
    )
    .unwrap();
    let fork = ["--model-path", "m", "--disable-overlap-schedulr"];
    let p = fake.plan(&fake.python(), &fork);
    let found = codes(&p).join("\n");
    assert!(!found.contains("ARG001"), "{found}");
    let warned: Vec<&Value> = p["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "ARG002")
        .collect();
    assert_eq!(warned.len(), 1, "{found}");
    assert_eq!(warned[0]["severity"], "warning");
    let msg = warned[0]["message"].as_str().unwrap();
    assert!(msg.contains("its own parser could not be read"), "{msg}");
    assert!(msg.contains("typo of --disable-overlap-schedule"), "{msg}");
    assert_ne!(p["verdict"], "error");
    let bad = fake.plan(&fake.python(), &["--model-path", "m", "--tp", "two"]);
    assert!(
        codes(&bad).join("\n").contains("ARG001"),
        "a bad value blocks"
    );
}

/// A wheel whose RECORD lists other parser files than the release's (a fork built with the
/// release's version) is read from its own parser too.
#[test]
fn a_wheel_with_other_parser_files_reads_its_own_parser() {
    let fake = Fake::of("0.5.23");
    std::fs::write(
        fake.dist_info("0.5.23").join("RECORD"),
        "sglang/srt/server_args.py,sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU,0\n",
    )
    .unwrap();
    let p = fake.plan(
        &fake.python(),
        &["--model-path", "m", "--enable-fork-thing"],
    );
    assert_eq!(fake.starts(), 1);
    let found = codes(&p).join("\n");
    assert!(
        found.contains("VER003") && found.contains("not the release's"),
        "{found}"
    );
    assert!(!found.contains("ARG001"), "{found}");
}

/// The release's own files (RECORD as pip wrote it for 0.5.23's wheel): the embedded data holds,
/// no Python is started, and an option 0.5.23 lacks stays an error.
#[test]
fn a_pristine_install_keeps_the_embedded_data() {
    let fake = Fake::of("0.5.23");
    std::fs::copy(
        format!("{ROOT}/tests/fixtures/record-0.5.23-parser.txt"),
        fake.dist_info("0.5.23").join("RECORD"),
    )
    .unwrap();
    // pip writes the files before RECORD: none is newer than it.
    let record = fake.dist_info("0.5.23").join("RECORD");
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(60);
    std::fs::File::options()
        .write(true)
        .open(&record)
        .unwrap()
        .set_modified(later)
        .unwrap();
    let p = fake.plan(
        &fake.python(),
        &["--model-path", "m", "--enable-fork-thing"],
    );
    assert_eq!(fake.starts(), 0, "no Python for a pristine release");
    let found = codes(&p).join("\n");
    assert!(!found.contains("VER003"), "{found}");
    assert!(found.contains("ARG001"), "{found}");

    // RECORD's entries are kept for the next check, which reads them instead of RECORD; a
    // RECORD rewritten by a reinstall (another size) is read again.
    let kept = || {
        std::fs::read_dir(fake.cache().join("sglang-launch/flags"))
            .map(|d| {
                d.filter(|e| {
                    let name = e.as_ref().unwrap().file_name();
                    name.to_string_lossy().starts_with("record-")
                })
                .count()
            })
            .unwrap_or(0)
    };
    assert_eq!(kept(), 1);
    let again = codes(&fake.plan(&fake.python(), &["--model-path", "m"])).join("\n");
    assert!(!again.contains("VER003"), "{again}");
    assert_eq!(kept(), 1, "the same RECORD, the same entry");
    let mut text = std::fs::read_to_string(&record).unwrap();
    text.push_str("sglang/srt/arg_groups/extra.py,sha256=AAEC,3\n");
    std::fs::write(&record, text).unwrap();
    let edited = codes(&fake.plan(&fake.python(), &["--model-path", "m"])).join("\n");
    assert!(
        edited.contains("VER003"),
        "a RECORD that changed is read again: {edited}"
    );
    assert_eq!(kept(), 2);
}

/// The same checkout's environment registry is its own `environ.py` (read in the same run): a
/// variable only the checkout defines is known there and typed by it, one it lacks is still
/// ENV001, and 0.5.23's own registry, without the install, knows neither.
#[test]
fn an_editable_install_reads_its_own_environment_registry() {
    let fake = Fake::of("0.5.23");
    let site = fake.editable("0.5.23");
    std::fs::write(
        site.join("sglang/srt/environ.py"),
        "class Envs:\n    SGLANG_FORK_KNOB = EnvInt(4)\n    SGLANG_FORK_SWITCH = EnvBool(False)\n",
    )
    .unwrap();
    let run = |env: &[(&str, &str)], python: bool| {
        let topo = format!("{ROOT}/examples/topologies/2x-rtx-4090-pcie.json");
        let mut c = fake.sl();
        c.args(["plan", "--json", "--topology", &topo]);
        if python {
            c.arg("--python").arg(fake.python());
        } else {
            c.args(["--sglang-version", "0.5.23"]);
        }
        c.args(["--", "--model-path", "m"])
            .envs(env.iter().copied());
        let out = c.output().unwrap();
        let plan: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
        codes(&plan).join("\n")
    };
    let known = run(&[("SGLANG_FORK_KNOB", "8")], true);
    assert!(!known.contains("ENV001"), "{known}");
    assert!(known.contains("VER003"), "{known}");
    let typo = run(&[("SGLANG_FORK_KNOBB", "8")], true);
    assert!(
        typo.contains("ENV001") && typo.contains("this install's own registry"),
        "{typo}"
    );
    assert!(
        typo.contains("SGLANG_FORK_KNOB"),
        "suggests the install's name: {typo}"
    );
    let bad = run(&[("SGLANG_FORK_KNOB", "lots")], true);
    assert!(bad.contains("ENV005"), "typed by the install: {bad}");
    let release = run(&[("SGLANG_FORK_KNOB", "8")], false);
    assert!(release.contains("ENV001"), "{release}");
}

/// The one flag-cache file of a fake install (after a first run wrote it).
fn cache_file(fake: &Fake) -> PathBuf {
    let dir = fake.cache().join("sglang-launch/flags");
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("0.5.24")
        })
        .expect("a flag cache")
}

/// A cache file someone else could have written is not read: the parser runs again, says so,
/// and the rewritten file is ours.
#[test]
fn a_cache_file_someone_else_could_have_written_is_rebuilt() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let fake = Fake::new();
    let sglang = ["--model", "m", "--tp", "2"];
    fake.plan(&fake.python(), &sglang);
    let file = cache_file(&fake);
    // An option of its own, planted in the cache.
    let text = std::fs::read_to_string(&file).unwrap();
    let planted = text.replacen("\"--fork-only-mode\"", "\"--planted-by-nobody\"", 1);
    assert_ne!(text, planted);
    std::fs::write(&file, planted).unwrap();
    if nix::unistd::geteuid().is_root() {
        nix::unistd::chown(&file, Some(nix::unistd::Uid::from_raw(65534)), None).unwrap();
    } else {
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).unwrap();
    }
    let out = fake
        .sl()
        .args(["flags", "show", "--python"])
        .arg(fake.python())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("ignoring a cache file") && stderr.contains(&file.display().to_string()),
        "{stderr}"
    );
    assert_eq!(fake.starts(), 2, "the parser was read again");
    let meta = std::fs::metadata(&file).unwrap();
    assert_eq!(meta.uid(), nix::unistd::geteuid().as_raw());
    assert_eq!(meta.mode() & 0o022, 0);
    assert!(!std::fs::read_to_string(&file).unwrap().contains("planted"));
}

/// A cache file is held to what a fresh extraction must be: an option string no parser has
/// (a terminal escape) or an absurd default makes it ignored and rebuilt.
#[test]
fn an_implausible_cache_file_is_rebuilt() {
    let fake = Fake::new();
    let sglang = ["--model", "m", "--tp", "2"];
    fake.plan(&fake.python(), &sglang);
    let file = cache_file(&fake);
    let text = std::fs::read_to_string(&file).unwrap();
    for bad in [
        text.replacen("\"--fork-only-mode\"", "\"--evil\\u001b[31m\"", 1),
        // --tp-size's default (the fake parser's only default of 1).
        text.replacen("\"default\":1,", "\"default\":1000000000000,", 1),
    ] {
        assert_ne!(text, bad);
        std::fs::write(&file, bad).unwrap();
        let before = fake.starts();
        let p = fake.plan(&fake.python(), &sglang);
        assert_eq!(p["sglang_version"], VERSION);
        assert_eq!(fake.starts(), before + 1, "the parser was read again");
    }
}

/// A build from between tags (setuptools-scm's `.devN+g…`, here a PR build's) whose parser
/// cannot be read: an option no release has may be its own, so it warns (ARG002). A release this
/// build does not embed is bounded by its neighbours, and the same option stays an error.
#[test]
fn a_build_from_between_tags_may_have_options_no_release_has() {
    let run = |version: &str| -> Value {
        let dir = tempfile::tempdir().unwrap();
        let py = common::venv_with(dir.path(), "#!/bin/sh\nexit 1\n", 0o755);
        let site = dir.path().join("venv/lib/python3.11/site-packages");
        std::fs::remove_dir_all(site.join("sglang-0.5.23.dist-info")).unwrap();
        common::sglang_dist_info(&site, version, None);
        let topo = format!("{ROOT}/examples/topologies/8x-h200-nvlink.json");
        let model = format!("{ROOT}/tests/fixtures/models/meta-llama__Llama-3.1-8B-Instruct");
        let out = common::launcher()
            .args(["check", "--json", "--topology", &topo, "--python"])
            .arg(&py)
            .args(["--", "--model-path", &model, "--enable-mtp"])
            .env("XDG_CACHE_HOME", dir.path().join("cache"))
            .output()
            .unwrap();
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let with = |plan: &Value, code: &str| -> Vec<String> {
        (plan["findings"].as_array().unwrap().iter())
            .filter(|f| f["code"] == code)
            .map(|f| f["message"].as_str().unwrap().to_owned())
            .collect()
    };
    let build = run("0.5.6.post2.dev7970+pr.15207.g62f95e0c6");
    assert!(with(&build, "ARG001").is_empty(), "{}", build["findings"]);
    let warned = with(&build, "ARG002");
    assert!(
        warned.len() == 1 && warned[0].contains("--enable-mtp"),
        "{warned:?}"
    );
    assert!(with(&build, "VER001")[0].contains("a build from between releases"));
    let release = run("0.5.6.post3");
    let refused = with(&release, "ARG001");
    assert!(
        refused.len() == 1 && refused[0].contains("--enable-mtp"),
        "{}",
        release["findings"]
    );
}

/// A build whose tree reached no tag (`0.0.0.dev1+g…`, as a shallow clone builds) names no
/// release: its options place it. Here `--enable-waterfill` (first in 0.5.16) puts it after
/// 0.5.15.post1, where every release refuses two-batch overlap without an all-to-all backend
/// (EP005, from 0.5.7): an error, where read as setuptools-scm's first release it was not
/// even checked.
#[test]
fn an_untagged_build_is_checked_as_the_release_its_options_place_it_after() {
    let version = "0.0.0.dev1+g033446bb05";
    let fake = Fake::of(version);
    let site = fake.editable(version);
    let server_args = SERVER_ARGS.replace(
        "        parser.add_argument(\"--enable-fork-thing\", action=\"store_true\")\n",
        "        parser.add_argument(\"--enable-two-batch-overlap\", action=\"store_true\")\n        \
         parser.add_argument(\"--enable-waterfill\", action=\"store_true\")\n",
    );
    assert_ne!(server_args, SERVER_ARGS);
    std::fs::write(site.join("sglang/srt/server_args.py"), server_args).unwrap();
    let p = fake.plan(
        &fake.python(),
        &["--model-path", "m", "--enable-two-batch-overlap"],
    );
    let found = codes(&p).join("\n");
    assert!(
        found.contains("VER003") && found.contains("place it after SGLang 0.5.15.post1"),
        "{found}"
    );
    let ep005: Vec<&Value> = (p["findings"].as_array().unwrap().iter())
        .filter(|f| f["code"] == "EP005")
        .collect();
    assert!(
        ep005.len() == 1 && ep005[0]["severity"] == "error",
        "{found}"
    );
    assert_eq!(p["sglang_version"], version, "the plan names the install");
}
