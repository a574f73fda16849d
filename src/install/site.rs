//! Installed Python distributions, found the way Python finds them but without running it:
//! the interpreter (a pyenv shim stands for the version it selects), the `site-packages`
//! directories it would put on `sys.path` (PYTHONPATH, a venv's own or the installation
//! prefix's, the user site, the Debian system dirs), and the `*.dist-info` / `*.egg-info`
//! directories in them. Both SGLang's version detection and the package facts read through
//! this one scanner.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::fsread::{self, PYTHON_VERSION};
use crate::sglang::release::cmp;

/// The interpreter to inspect: the given path (a bare name is looked up on PATH), else
/// [`default_interpreter`].
fn interpreter(python: Option<&Path>) -> Option<PathBuf> {
    match python {
        Some(p) if p.components().count() > 1 || p.is_absolute() => {
            Some(std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf()))
        }
        Some(p) => which::which(p).ok(),
        None => default_interpreter(),
    }
}

/// The interpreter SGLang runs under when `--python` is not given: the one of the environment
/// the launcher was installed into (pip puts `sglang-launch` in the same `bin/` as SGLang's
/// `python3`, and a unit's `ExecStart=/venv/bin/sglang-launch` does not activate the venv),
/// also when called through a symlink to it (`~/bin/sglang-launch`) if that environment has
/// SGLang, else `python3`, else `python` on PATH.
pub(crate) fn default_interpreter() -> Option<PathBuf> {
    // Asked by the plan and by the version detection: looked up once per run.
    static FOUND: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    FOUND
        .get_or_init(|| {
            let argv0 = std::env::args_os().next().map(PathBuf::from);
            argv0
                .and_then(|a| installed_beside(&a).or_else(|| linked_beside(&a)))
                .or_else(|| which::which("python3").ok())
                .or_else(|| which::which("python").ok())
        })
        .clone()
}

/// `python3` (or `python`) next to the launcher as invoked (`argv[0]`, symlinks not followed:
/// `uv tool` links its own venv's binary into `~/.local/bin`, and that venv has no SGLang),
/// when that directory is a venv's or a conda environment's `bin/`.
fn installed_beside(argv0: &Path) -> Option<PathBuf> {
    let invoked = invoked(argv0)?;
    let bin = invoked.parent()?;
    let root = bin.parent()?;
    if !root.join("pyvenv.cfg").is_file() && !root.join("conda-meta").is_dir() {
        return None;
    }
    ["python3", "python"]
        .iter()
        .map(|n| bin.join(n))
        .find(|p| p.is_file())
}

/// [`installed_beside`] the file the launcher's symlinks lead to, when that environment has
/// SGLang: `uv tool`'s link leads to a venv of the launcher alone, where PATH's python3 is
/// the better guess.
fn linked_beside(argv0: &Path) -> Option<PathBuf> {
    let invoked = invoked(argv0)?;
    let target = std::fs::canonicalize(&invoked).ok()?;
    if target == invoked {
        return None;
    }
    let python = installed_beside(&target)?;
    let root = target.parent()?.parent()?;
    let has_sglang = lib_dirs(root, None)
        .iter()
        .any(|lib| !dists_in(&lib.join("site-packages"), |n| n == "sglang").is_empty());
    has_sglang.then_some(python)
}

/// The launcher's path as invoked (absolute, symlinks not followed): `argv[0]`, or where PATH
/// finds a bare name.
fn invoked(argv0: &Path) -> Option<PathBuf> {
    if argv0.components().count() > 1 {
        std::path::absolute(argv0).ok()
    } else {
        which::which(argv0).ok()
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
            .find_map(|d| fsread::optional_string(&d.join(".python-version"), PYTHON_VERSION))
            .and_then(|t| first_word(&t))
    };
    let from_global = || {
        fsread::optional_string(&root.join("version"), PYTHON_VERSION).and_then(|t| first_word(&t))
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

/// The directories Python would search for distributions, in `sys.path` order.
pub(crate) fn search_dirs(python: Option<&Path>) -> Vec<PathBuf> {
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
        let cfg =
            fsread::optional_string(&v.join("pyvenv.cfg"), fsread::PYTHON_ENV).unwrap_or_default();
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
pub(crate) fn normalize(name: &str) -> String {
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
        let head = fsread::head(&dir.join(f), fsread::PACKAGE_METADATA, u64::MAX);
        let text = match head {
            Ok(h) => String::from_utf8_lossy(&h.bytes).into_owned(),
            Err(e) => {
                fsread::warn_unless_missing(&e);
                continue;
            }
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
pub(crate) struct Dist {
    /// PEP 503 normalized name (`flashinfer-python`, `nvidia-nccl-cu12`).
    pub(crate) name: String,
    /// The full version, local label included (`2.9.1+cu130`).
    pub(crate) version: String,
    pub(crate) path: PathBuf,
}

/// The distributions in one directory whose normalized name `wanted` accepts, in directory
/// order (stale copies of one distribution may all be listed). Versions come from the
/// directory name; only odd names (`sglang.egg-info`) cost a read of the metadata.
fn dists_in(dir: &Path, wanted: impl Fn(&str) -> bool) -> Vec<Dist> {
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

/// The distributions in one directory that `wanted` accepts, one per name: the newest when
/// stale copies linger (what a reinstall left behind last), the first in directory order
/// among equal versions.
fn newest_in(dir: &Path, wanted: impl Fn(&str) -> bool) -> Vec<Dist> {
    let mut found = dists_in(dir, wanted);
    found.sort_by(|a, b| cmp(&b.version, &a.version));
    let mut seen: Vec<String> = Vec::new();
    found.retain(|d| {
        let first = !seen.contains(&d.name);
        if first {
            seen.push(d.name.clone());
        }
        first
    });
    found
}

/// The distributions `wanted` accepts in these directories (in `sys.path` order), by
/// normalized name: for each, the first directory that has it wins, as it would for `import`.
pub(crate) fn find(dirs: &[PathBuf], wanted: impl Fn(&str) -> bool) -> BTreeMap<String, Dist> {
    let mut out = BTreeMap::new();
    for dir in dirs {
        for d in newest_in(dir, &wanted) {
            out.entry(d.name.clone()).or_insert(d);
        }
    }
    out
}

/// One distribution (by normalized name), as [`find`] would give it; stops at the first
/// directory that has it.
pub(crate) fn find_one(dirs: &[PathBuf], name: &str) -> Option<Dist> {
    dirs.iter()
        .find_map(|dir| newest_in(dir, |n| n == name).into_iter().next())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_interpreter_beside_a_launcher_in_a_venv_or_conda_env_is_its_default() {
        let t = tempfile::tempdir().unwrap();
        for (env, marker_is_dir) in [("venv", false), ("conda", true), ("plain", false)] {
            let bin = t.path().join(env).join("bin");
            fs::create_dir_all(&bin).unwrap();
            fs::write(bin.join("python3"), "").unwrap();
            match (env, marker_is_dir) {
                ("plain", _) => {}
                (_, true) => fs::create_dir(t.path().join(env).join("conda-meta")).unwrap(),
                _ => fs::write(t.path().join(env).join("pyvenv.cfg"), "").unwrap(),
            }
            let found = installed_beside(&bin.join("sglang-launch"));
            if env == "plain" {
                assert_eq!(found, None, "a bin/ that is no environment's");
            } else {
                assert_eq!(found, Some(bin.join("python3")), "{env}");
            }
        }
    }
    use std::fs;

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

    #[test]
    fn the_first_directory_then_the_newest_copy_wins() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
        for d in [
            a.join("sglang-0.5.5.dist-info"),
            a.join("SGLang-0.5.10.post1.dist-info"),
            a.join("torch-2.9.1.dist-info"),
            b.join("sglang-0.5.23.dist-info"),
            b.join("triton-3.5.0.dist-info"),
        ] {
            fs::create_dir_all(d).unwrap();
        }
        let dirs = [a.clone(), b, tmp.path().join("missing")];
        let all = find(&dirs, |_| true);
        assert_eq!(all["sglang"].version, "0.5.10.post1");
        assert!(all["sglang"].path.starts_with(&a));
        assert_eq!(all["triton"].version, "3.5.0");
        assert_eq!(all.len(), 3);
        assert_eq!(find_one(&dirs, "sglang"), Some(all["sglang"].clone()));
        assert_eq!(find_one(&dirs, "vllm"), None);
        assert!(find(&dirs, |n| n == "numpy").is_empty());
    }
}
