//! Which SGLang flag set to use: `--sglang-version`, else the installed `sglang-*.dist-info`.
//!
//! Detection reads the file system only (no Python is run, SGLang is not imported): it looks
//! for SGLang's distribution metadata in the `site-packages` directories the interpreter would
//! put on `sys.path`, in that order (see [`super::site`]).

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::extract;
use super::provenance::{self, Provenance};
use super::site;
use crate::sglang::flagset::{self, FlagSet};
use crate::sglang::release::{self, KNOWN_VERSIONS, cmp};

/// How the version was chosen (the plan JSON's `sglang_version_source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum VersionSource {
    Detected,
    Option,
    Fallback,
}

/// Where the version behind a selection came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Origin {
    /// Given on the command line (`--sglang-version` or a profile).
    Option,
    /// Found installed: the `.dist-info` (or `.egg-info`) directory it was read from.
    Installed(PathBuf),
    /// No SGLang installation was found for the interpreter; the newest flag set is used.
    NotDetected,
}

/// Where the flag set in use comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FlagsFrom {
    /// Embedded in this build (exactly the release, or the nearest one on a fallback).
    Embedded,
    /// Read from the installed SGLang's own parser: just now (`ran_python`), or from the
    /// cache file an earlier run wrote.
    Extracted {
        cache: Option<PathBuf>,
        ran_python: bool,
    },
}

/// The flag set chosen for a run.
#[derive(Debug, Clone)]
pub struct Selected {
    /// The version asked for or found installed (may be newer than any known flag set); the
    /// newest known version when nothing was detected.
    pub(crate) requested: String,
    pub(crate) flags: &'static FlagSet,
    pub(crate) source: VersionSource,
    pub(crate) origin: Origin,
    pub(crate) flags_from: FlagsFrom,
    /// Why the installed release's own flag set could not be read (a fallback's reason).
    pub(crate) extract_error: Option<String>,
    /// The install is not the release its version names (a source checkout, a dev image, a
    /// fork): how it differs. Its flag set is then read from the install itself.
    pub(crate) modified: Option<String>,
}

impl Selected {
    /// False when nothing was given and no installed SGLang was found (worth a finding).
    pub(crate) fn detected(&self) -> bool {
        self.origin != Origin::NotDetected
    }

    /// The install may run code from after the release its version names: a checkout, dev image
    /// or fork of a release, or a version this build does not embed below the newest it does (a
    /// `0.5.10.post2.dev346+g…` build of main, whose code a revert may leave unlike either
    /// neighbouring release). An error is proven for it only where every later release reports it.
    pub(crate) fn may_run_later_code(&self) -> bool {
        let newest = KNOWN_VERSIONS[KNOWN_VERSIONS.len() - 1];
        self.modified.is_some()
            || (self.detected()
                && release::exact(&self.requested).is_none()
                && cmp(newest, &self.requested).is_gt())
    }

    /// Approximate mode: the embedded releases whose parsers bound the user's, when the flag
    /// set in use is not the install's own. A modified install whose parser could not be read
    /// is anywhere after its version: every later release may explain an option.
    pub(crate) fn neighbours(&self) -> Option<crate::sglang::approx::Bounds> {
        if self.source != VersionSource::Fallback || !self.detected() {
            return None;
        }
        // Older than every embedded release, nothing bounds it: the oldest alone stands in.
        let below_all = cmp(&self.requested, KNOWN_VERSIONS[0]).is_lt();
        let (releases, open) = match &self.modified {
            Some(_) if !below_all => (crate::sglang::approx::from(&self.requested), true),
            _ => (crate::sglang::approx::neighbours(&self.requested), false),
        };
        Some(crate::sglang::approx::Bounds { releases, open })
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
pub(crate) fn select(option: Option<&str>, python: Option<&Path>) -> Selected {
    choose(option, python, true)
}

/// [`select`] reading files only: an install that is not its release is read from the flag-set
/// cache alone, never by running `python` (a completion's TAB must be instant).
pub(crate) fn select_without_python(option: Option<&str>, python: Option<&Path>) -> Selected {
    choose(option, python, false)
}

fn choose(option: Option<&str>, python: Option<&Path>, may_run: bool) -> Selected {
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
            flags_from: FlagsFrom::Embedded,
            extract_error: None,
            modified: None,
        };
    }
    match find_installed(python) {
        Some(found) => installed(found, python.filter(|_| may_run)),
        None => Selected {
            requested: newest.to_owned(),
            flags: flagset::get(newest).expect("newest flag set is embedded"),
            source: VersionSource::Fallback,
            origin: Origin::NotDetected,
            flags_from: FlagsFrom::Embedded,
            extract_error: None,
            modified: None,
        },
    }
}

/// Where an install's flag set comes from: the embedded data (the install is the release's
/// files), or the install itself.
#[derive(Debug, Clone)]
pub(crate) enum Source {
    Embedded,
    Install {
        /// The digest of its parser files, when it is a modified embedded release.
        digest: Option<String>,
        /// How it differs from the release its version names (None: a release not embedded).
        modified: Option<String>,
    },
}

/// Where the flag set of this install comes from (reads its metadata, never runs Python).
pub(crate) fn source_of(found: &Installed) -> Source {
    if flag_set_for(&found.version).is_err() {
        return Source::Install {
            digest: None,
            modified: unembedded_modified(found),
        };
    }
    match provenance::inspect(&found.dist_info, &found.version) {
        Provenance::Release => Source::Embedded,
        Provenance::Modified { why, digest } => Source::Install {
            digest,
            modified: Some(why),
        },
    }
}

/// A version this build does not embed is read from the install either way. It counts as
/// modified (its code anywhere after its version, with options of its own) when it is a source
/// install or a build from between releases; a release's own wheel does not.
fn unembedded_modified(found: &Installed) -> Option<String> {
    match provenance::inspect(&found.dist_info, &found.version) {
        Provenance::Modified { why, .. } => Some(why),
        Provenance::Release => release::is_source_build(&found.version)
            .then(|| "a build from between releases".to_owned()),
    }
}

/// The installed release's flag set: embedded (when the install is that release's files), else
/// read from the install (cached), else the nearest embedded one.
fn installed(found: Installed, python: Option<&Path>) -> Selected {
    let mut selected = Selected {
        requested: found.version.clone(),
        flags: flag_set_for(&found.version).unwrap_or_else(|f| f),
        source: VersionSource::Detected,
        origin: Origin::Installed(found.dist_info.clone()),
        flags_from: FlagsFrom::Embedded,
        extract_error: None,
        modified: None,
    };
    let digest = match source_of(&found) {
        Source::Embedded => return selected,
        Source::Install { digest, modified } => {
            selected.modified = modified;
            digest
        }
    };
    let install = extract::Install {
        version: &found.version,
        dist_info: &found.dist_info,
        digest: digest.as_deref(),
    };
    let read = match python {
        Some(py) => extract::load_or_extract(py, install).map_err(|e| e.to_string()),
        None => extract::cached(install).ok_or_else(|| "no Python interpreter to run".to_owned()),
    };
    match read {
        Ok(mut x) => {
            if release::untagged(&found.version) {
                x.flags.place_untagged();
            }
            // Lives for the rest of the process, as the embedded sets do.
            selected.flags = Box::leak(Box::new(x.flags));
            selected.flags_from = FlagsFrom::Extracted {
                cache: x.cache,
                ran_python: x.ran_python,
            };
        }
        Err(why) => {
            selected.source = VersionSource::Fallback;
            selected.extract_error = Some(why);
        }
    }
    selected
}

/// An installed SGLang distribution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Installed {
    pub(crate) version: String,
    pub(crate) dist_info: PathBuf,
}

/// Whether SGLang is installed for the interpreter (same search as detection): the launcher
/// can answer 127 instead of exec'ing a Python that cannot import it.
pub(crate) fn sglang_installed(python: Option<&Path>) -> bool {
    find_installed(python).is_some()
}

/// The SGLang installed for the interpreter, if any: the first search directory that has it
/// (the newest there if stale copies linger).
pub(crate) fn find_installed(python: Option<&Path>) -> Option<Installed> {
    site::find_one(&site::search_dirs(python), "sglang").map(|d| Installed {
        version: d.version,
        dist_info: d.path,
    })
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
        let s = select(Some("0.5.7.post2"), None);
        assert_eq!(
            (s.flags.version.as_str(), s.source),
            ("0.5.7", VersionSource::Fallback)
        );
        assert_eq!(s.requested, "0.5.7.post2");
        let s = select(Some("0.9.0"), None);
        assert_eq!(s.flags.version, "0.5.23");
        let s = select(Some("0.3.0"), None);
        assert_eq!(
            (s.flags.version.as_str(), s.source),
            ("0.4.0", VersionSource::Fallback)
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
        let py = venv(tmp.path(), &["SGLang-0.5.12.post3.dist-info"], false);
        let s = select(None, Some(&py));
        assert_eq!(s.requested, "0.5.12.post3");
        assert_eq!(
            (s.flags.version.as_str(), s.source),
            ("0.5.12.post1", VersionSource::Fallback)
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
        let dirs = site::search_dirs(Some(&py));
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
        assert!(!site::search_dirs(Some(&py)).contains(&base_site));
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
