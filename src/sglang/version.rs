//! Which SGLang flag set to use: `--sglang-version`, else the installed `sglang-*.dist-info`.
//!
//! Detection reads the file system only (no Python is run, SGLang is not imported): it resolves
//! the interpreter, works out the `site-packages` directories that interpreter would put on
//! `sys.path` (PYTHONPATH, a venv's own or the installation prefix's, the user site, the Debian
//! system dirs) and looks for SGLang's distribution metadata there, in that order.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::flagset::{self, FlagSet};
use super::release::{self, KNOWN_VERSIONS};

/// Version ordering lives with the release list; re-exported for the many callers that compare.
pub use super::release::{at_least, cmp, looks_like_version};

/// How the version was chosen (plan/v1 `sglang_version_source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum VersionSource {
    Detected,
    Option,
    Fallback,
}

/// Where the version behind a selection came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Given on the command line (`--sglang-version` or a profile).
    Option,
    /// Found installed: the `.dist-info` (or `.egg-info`) directory it was read from.
    Installed(PathBuf),
    /// No SGLang installation was found for the interpreter; the newest flag set is used.
    NotDetected,
}

/// The flag set chosen for a run.
#[derive(Debug, Clone)]
pub struct Selected {
    /// The version asked for or found installed (may be newer than any known flag set); the
    /// newest known version when nothing was detected.
    pub requested: String,
    pub flags: &'static FlagSet,
    pub source: VersionSource,
    pub origin: Origin,
}

impl Selected {
    /// False when nothing was given and no installed SGLang was found (worth a finding).
    pub fn detected(&self) -> bool {
        self.origin != Origin::NotDetected
    }
}

/// The known flag set for `version`: the same release (in release order) → `Ok`, else the
/// nearest older known one (the oldest for versions older than all) → `Err`.
fn flag_set_for(version: &str) -> Result<&'static FlagSet, &'static FlagSet> {
    let known = KNOWN_VERSIONS[release::nearest(version)];
    let flags = flagset::get(known).expect("every KNOWN_VERSIONS entry is embedded");
    if cmp(known, version).is_eq() {
        Ok(flags)
    } else {
        Err(flags)
    }
}

/// Choose the flag set: the `--sglang-version` option if given, else the version installed for
/// `python` (default: `python3` on PATH), else the newest known.
pub fn select(option: Option<&str>, python: Option<&Path>) -> Selected {
    let newest = KNOWN_VERSIONS[KNOWN_VERSIONS.len() - 1];
    if let Some(v) = option.map(str::trim).filter(|v| !v.is_empty()) {
        let (flags, source) = match flag_set_for(v) {
            Ok(f) => (f, VersionSource::Option),
            Err(f) => (f, VersionSource::Fallback),
        };
        return Selected {
            requested: v.to_owned(),
            flags,
            source,
            origin: Origin::Option,
        };
    }
    match find_installed(python) {
        Some(found) => {
            let (flags, source) = match flag_set_for(&found.version) {
                Ok(f) => (f, VersionSource::Detected),
                Err(f) => (f, VersionSource::Fallback),
            };
            Selected {
                requested: found.version,
                flags,
                source,
                origin: Origin::Installed(found.dist_info),
            }
        }
        None => Selected {
            requested: newest.to_owned(),
            flags: flagset::get(newest).expect("newest flag set is embedded"),
            source: VersionSource::Fallback,
            origin: Origin::NotDetected,
        },
    }
}

/// An installed SGLang distribution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    pub version: String,
    pub dist_info: PathBuf,
}

/// Whether SGLang is installed for the interpreter (same search as detection): the launcher
/// can answer 127 instead of exec'ing a Python that cannot import it.
pub fn sglang_installed(python: Option<&Path>) -> bool {
    find_installed(python).is_some()
}

/// The interpreter to inspect: the given path (a bare name is looked up on PATH), else
/// `python3`, else `python` on PATH.
fn interpreter(python: Option<&Path>) -> Option<PathBuf> {
    match python {
        Some(p) if p.components().count() > 1 || p.is_absolute() => {
            Some(std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf()))
        }
        Some(p) => which::which(p).ok(),
        None => which::which("python3")
            .or_else(|_| which::which("python"))
            .ok(),
    }
}

/// A pyenv shim (`<root>/shims/python3`, a shell script) stands for the interpreter of the
/// selected pyenv version: `PYENV_VERSION`, else the nearest `.python-version` from the current
/// directory up, else `<root>/version`. `None` when it is not a shim or names no installed
/// version (e.g. "system").
fn pyenv_target(exe: &Path) -> Option<PathBuf> {
    let cwd = std::env::current_dir().ok();
    pyenv_target_in(exe, std::env::var("PYENV_VERSION").ok(), cwd.as_deref())
}

fn pyenv_target_in(exe: &Path, env_version: Option<String>, cwd: Option<&Path>) -> Option<PathBuf> {
    let shims = exe.parent()?;
    if shims.file_name()? != "shims" {
        return None;
    }
    let root = shims.parent()?;
    let versions = root.join("versions");
    if !versions.is_dir() {
        return None;
    }
    let first_word = |text: &str| {
        text.split(|c: char| c.is_whitespace() || c == ':')
            .find(|w| !w.is_empty() && !w.starts_with('#'))
            .map(str::to_owned)
    };
    let from_env = env_version.and_then(|v| first_word(&v));
    let from_local = || {
        cwd?.ancestors()
            .find_map(|d| std::fs::read_to_string(d.join(".python-version")).ok())
            .and_then(|t| first_word(&t))
    };
    let from_global = || {
        std::fs::read_to_string(root.join("version"))
            .ok()
            .and_then(|t| first_word(&t))
    };
    let version = from_env.or_else(from_local).or_else(from_global)?;
    let target = versions.join(version).join("bin").join(exe.file_name()?);
    target.exists().then_some(target)
}

/// `lib/python3.*` directories under a prefix, the interpreter's own version first when its
/// file name says it (`python3.11`).
fn lib_dirs(prefix: &Path, hint: Option<&str>) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for lib in ["lib", "lib64"] {
        let Ok(rd) = std::fs::read_dir(prefix.join(lib)) else {
            continue;
        };
        let mut found: Vec<PathBuf> = rd
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("python3"))
            .map(|e| e.path())
            .collect();
        found.sort();
        found.reverse(); // newest minor first when several
        if let Some(h) = hint {
            found.sort_by_key(|p| p.file_name().is_none_or(|n| n.to_string_lossy() != h));
        }
        dirs.extend(found);
    }
    dirs
}

/// The directories Python would search for `sglang`, in `sys.path` order.
pub fn search_dirs(python: Option<&Path>) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(pp) = std::env::var_os("PYTHONPATH") {
        dirs.extend(std::env::split_paths(&pp).filter(|p| !p.as_os_str().is_empty()));
    }
    let Some(exe) = interpreter(python) else {
        return dirs;
    };
    let exe = pyenv_target(&exe).unwrap_or(exe);
    let name = exe.file_name().map(|n| n.to_string_lossy().into_owned());
    let hint = name
        .as_deref()
        .filter(|n| n.starts_with("python3."))
        .map(str::to_owned);
    let resolved = std::fs::canonicalize(&exe).unwrap_or_else(|_| exe.clone());
    let resolved_hint = resolved
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| n.starts_with("python3."));
    let hint = hint.or(resolved_hint);
    let site = |prefix: &Path, out: &mut Vec<PathBuf>| {
        for lib in lib_dirs(prefix, hint.as_deref()) {
            out.push(lib.join("site-packages"));
            out.push(lib.join("dist-packages"));
        }
    };
    // A venv: `<venv>/bin/python` (unresolved) with `<venv>/pyvenv.cfg`.
    let venv = exe
        .parent()
        .and_then(Path::parent)
        .filter(|v| v.join("pyvenv.cfg").is_file());
    let mut system_site = true;
    if let Some(v) = venv {
        let cfg = std::fs::read_to_string(v.join("pyvenv.cfg")).unwrap_or_default();
        system_site = cfg.lines().any(|l| {
            let mut kv = l.splitn(2, '=');
            kv.next().map(str::trim) == Some("include-system-site-packages")
                && kv
                    .next()
                    .map(str::trim)
                    .is_some_and(|x| x.eq_ignore_ascii_case("true"))
        });
        site(v, &mut dirs);
    }
    if system_site {
        if let Some(home) = std::env::var_os("HOME") {
            site(&Path::new(&home).join(".local"), &mut dirs);
        }
        // The base installation (pyenv, conda, /usr, /usr/local): <prefix>/bin/python3.X
        if let Some(prefix) = resolved.parent().and_then(Path::parent) {
            site(prefix, &mut dirs);
        }
        site(Path::new("/usr/local"), &mut dirs);
        dirs.push(PathBuf::from("/usr/lib/python3/dist-packages"));
        site(Path::new("/usr"), &mut dirs);
    }
    let mut seen = std::collections::HashSet::new();
    dirs.retain(|d| seen.insert(d.clone()));
    dirs
}

/// Normalized distribution name (PEP 503: case-insensitive, runs of `-_.` equal).
pub fn normalize(name: &str) -> String {
    let mut out = String::new();
    let mut sep = false;
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            sep = true;
        } else {
            if sep && !out.is_empty() {
                out.push('-');
            }
            sep = false;
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

/// The `Version:` header of a METADATA / PKG-INFO file.
fn metadata_version(dir: &Path) -> Option<String> {
    for f in ["METADATA", "PKG-INFO"] {
        let Ok(text) = std::fs::read_to_string(dir.join(f)) else {
            continue;
        };
        for line in text.lines() {
            if line.is_empty() {
                break; // end of the headers
            }
            if let Some(v) = line.strip_prefix("Version:") {
                return Some(v.trim().to_owned());
            }
        }
    }
    None
}

/// An installed distribution: its `.dist-info` (or `.egg-info`) directory in one search dir.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dist {
    /// PEP 503 normalized name (`flashinfer-python`, `nvidia-nccl-cu12`).
    pub name: String,
    /// The full version, local label included (`2.9.1+cu130`).
    pub version: String,
    pub path: PathBuf,
}

/// The distributions in one directory whose normalized name `wanted` accepts, in directory
/// order (stale copies of one distribution may all be listed). Versions come from the
/// directory name; only odd names (`sglang.egg-info`) cost a read of the metadata.
pub fn dists_in(dir: &Path, wanted: impl Fn(&str) -> bool) -> Vec<Dist> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in rd.flatten() {
        let file_name = entry.file_name();
        let name = file_name.to_string_lossy();
        let Some(stem) = name
            .strip_suffix(".dist-info")
            .or_else(|| name.strip_suffix(".egg-info"))
        else {
            continue;
        };
        let (dist, version) = match stem.split_once('-') {
            Some((d, v)) => (d, Some(v)),
            None => (stem, None),
        };
        let dist = normalize(dist);
        if !wanted(&dist) {
            continue;
        }
        let path = entry.path();
        // `sglang-0.5.23.dist-info` carries the version (an egg-info may add `-py3.11`).
        let version = match version.filter(|v| v.starts_with(|c: char| c.is_ascii_digit())) {
            Some(v) => v.split_once('-').map_or(v, |(v, _)| v).to_owned(),
            None => match metadata_version(&path) {
                Some(v) => v,
                None => continue,
            },
        };
        out.push(Dist {
            name: dist,
            version,
            path,
        });
    }
    out
}

/// SGLang's distribution metadata in one directory (the newest if stale copies linger).
fn installed_in(dir: &Path) -> Option<Installed> {
    dists_in(dir, |n| n == "sglang")
        .into_iter()
        .max_by(|a, b| cmp(&a.version, &b.version))
        .map(|d| Installed {
            version: d.version,
            dist_info: d.path,
        })
}

/// The SGLang installed for the interpreter, if any: the first search directory that has it.
pub fn find_installed(python: Option<&Path>) -> Option<Installed> {
    search_dirs(python).iter().find_map(|d| installed_in(d))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn option_selects_exact_or_nearest_older() {
        let s = select(Some("0.5.5"), None);
        assert_eq!(
            (s.flags.version.as_str(), s.source),
            ("0.5.5", VersionSource::Option)
        );
        let s = select(Some("0.5.7"), None);
        assert_eq!(
            (s.flags.version.as_str(), s.source),
            ("0.5.5", VersionSource::Fallback)
        );
        assert_eq!(s.requested, "0.5.7");
        let s = select(Some("0.9.0"), None);
        assert_eq!(s.flags.version, "0.5.23");
        let s = select(Some("0.3.0"), None);
        assert_eq!(
            (s.flags.version.as_str(), s.source),
            ("0.4.10.post2", VersionSource::Fallback)
        );
        let s = select(Some("0.5.10.post1"), None);
        assert_eq!(s.source, VersionSource::Option);
        assert!(s.detected());
    }

    /// A venv laid out like `python3 -m venv`: bin/python → a base interpreter elsewhere.
    fn venv(root: &Path, site_entries: &[&str], system: bool) -> PathBuf {
        let base = root.join("base");
        fs::create_dir_all(base.join("bin")).unwrap();
        fs::create_dir_all(base.join("lib/python3.11/site-packages")).unwrap();
        fs::write(base.join("bin/python3.11"), "").unwrap();
        let v = root.join("venv");
        fs::create_dir_all(v.join("bin")).unwrap();
        let site = v.join("lib/python3.11/site-packages");
        fs::create_dir_all(&site).unwrap();
        for e in site_entries {
            fs::create_dir_all(site.join(e)).unwrap();
        }
        fs::write(
            v.join("pyvenv.cfg"),
            format!(
                "home = {}\ninclude-system-site-packages = {system}\n",
                base.join("bin").display()
            ),
        )
        .unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(base.join("bin/python3.11"), v.join("bin/python")).unwrap();
        v.join("bin/python")
    }

    #[cfg(unix)]
    #[test]
    fn detects_the_venvs_dist_info() {
        let tmp = tempfile::tempdir().unwrap();
        let py = venv(
            tmp.path(),
            &[
                "sglang-0.5.10.post1.dist-info",
                "sglang",
                "numpy-2.0.dist-info",
            ],
            false,
        );
        let t = std::time::Instant::now();
        let s = select(None, Some(&py));
        let took = t.elapsed();
        assert_eq!(s.requested, "0.5.10.post1");
        assert_eq!(
            (s.flags.version.as_str(), s.source),
            ("0.5.10.post1", VersionSource::Detected)
        );
        assert!(
            matches!(&s.origin, Origin::Installed(p) if p.ends_with("sglang-0.5.10.post1.dist-info"))
        );
        assert!(sglang_installed(Some(&py)));
        assert!(took.as_millis() < 200, "detection took {took:?}");
    }

    #[cfg(unix)]
    #[test]
    fn unknown_installed_version_falls_back_to_nearest_older() {
        let tmp = tempfile::tempdir().unwrap();
        let py = venv(tmp.path(), &["SGLang-0.5.12.dist-info"], false);
        let s = select(None, Some(&py));
        assert_eq!(s.requested, "0.5.12");
        assert_eq!(
            (s.flags.version.as_str(), s.source),
            ("0.5.10.post1", VersionSource::Fallback)
        );
    }

    #[cfg(unix)]
    #[test]
    fn odd_names_read_the_metadata() {
        let tmp = tempfile::tempdir().unwrap();
        let py = venv(tmp.path(), &["sglang.egg-info"], false);
        let egg = tmp
            .path()
            .join("venv/lib/python3.11/site-packages/sglang.egg-info");
        fs::write(
            egg.join("PKG-INFO"),
            "Metadata-Version: 2.1\nName: sglang\nVersion: 0.5.2\n\nbody\n",
        )
        .unwrap();
        let s = select(None, Some(&py));
        assert_eq!(
            (s.requested.as_str(), s.source),
            ("0.5.2", VersionSource::Detected)
        );
    }

    #[cfg(unix)]
    #[test]
    fn nothing_installed_uses_the_newest_and_says_so() {
        let tmp = tempfile::tempdir().unwrap();
        let py = venv(tmp.path(), &["numpy-2.0.dist-info"], false);
        let s = select(None, Some(&py));
        assert_eq!(s.flags.version, *KNOWN_VERSIONS.last().unwrap());
        assert_eq!(s.source, VersionSource::Fallback);
        assert_eq!(s.origin, Origin::NotDetected);
        assert!(!s.detected());
        assert!(!sglang_installed(Some(&py)));
    }

    #[cfg(unix)]
    #[test]
    fn system_site_packages_are_searched_only_when_the_venv_allows() {
        let tmp = tempfile::tempdir().unwrap();
        let py = venv(tmp.path(), &[], true);
        let base_site = tmp.path().join("base/lib/python3.11/site-packages");
        fs::create_dir_all(base_site.join("sglang-0.5.23.dist-info")).unwrap();
        let dirs = search_dirs(Some(&py));
        let venv_i = dirs
            .iter()
            .position(|d| d.starts_with(tmp.path().join("venv")))
            .unwrap();
        let base_i = dirs.iter().position(|d| *d == base_site).unwrap();
        assert!(venv_i < base_i);
        assert_eq!(select(None, Some(&py)).requested, "0.5.23");
        fs::write(
            tmp.path().join("venv/pyvenv.cfg"),
            "include-system-site-packages = false\n",
        )
        .unwrap();
        assert!(!search_dirs(Some(&py)).contains(&base_site));
    }

    #[cfg(unix)]
    #[test]
    fn pyenv_shims_stand_for_the_selected_version() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("pyenv");
        fs::create_dir_all(root.join("shims")).unwrap();
        fs::write(root.join("shims/python3"), "#!/bin/sh\n").unwrap();
        let bin = root.join("versions/3.12.1/bin");
        fs::create_dir_all(&bin).unwrap();
        fs::write(bin.join("python3"), "").unwrap();
        fs::write(root.join("version"), "3.12.1\n").unwrap();
        let shim = root.join("shims/python3");
        let target = bin.join("python3");
        assert_eq!(
            pyenv_target_in(&shim, None, Some(&root)),
            Some(target.clone())
        );
        assert_eq!(
            pyenv_target_in(&shim, Some("3.12.1:3.11".into()), None),
            Some(target.clone())
        );
        assert_eq!(pyenv_target_in(&shim, Some("system".into()), None), None);
        fs::write(tmp.path().join(".python-version"), "3.12.1\n").unwrap();
        fs::write(root.join("version"), "system\n").unwrap();
        assert_eq!(
            pyenv_target_in(&shim, None, Some(&root.join("shims"))),
            Some(target)
        );
        assert_eq!(pyenv_target(&bin.join("python3")), None);
    }

    /// Timing on a real interpreter: `SGLANG_LAUNCH_TEST_PYTHON=/path/to/venv/bin/python
    /// cargo test --lib detect_real_interpreter -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn detect_real_interpreter() {
        let py = std::env::var_os("SGLANG_LAUNCH_TEST_PYTHON").map(PathBuf::from);
        let t = std::time::Instant::now();
        let s = select(None, py.as_deref());
        let cold = t.elapsed();
        let t = std::time::Instant::now();
        let _ = select(None, py.as_deref());
        eprintln!(
            "{} {:?} {:?}: cold {cold:?}, warm {:?}",
            s.requested,
            s.source,
            s.origin,
            t.elapsed()
        );
    }
}
