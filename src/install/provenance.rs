//! Whether an installed SGLang is the release its version string names. A source checkout
//! (`pip install -e python`), a dev image, a build of other sources or a patched fork keeps the
//! last release's version string while its parser has options that release lacks: the embedded
//! data would then block what the install runs.
//!
//! Evidence, cheapest first: PEP 610's `direct_url.json` (an editable, VCS or source-directory
//! install), then a digest of the files the parser and the environment registry are defined in
//! (`sglang/srt/server_args.py`, `environ.py`, `arg_groups/**.py`) against the digest of the
//! release's wheel (`data/flags/install-digests.json`, from each wheel's RECORD). A wheel install
//! is read from its own RECORD (one file, no hashing); a file edited after the install (newer
//! than RECORD) or a source tree is hashed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::SystemTime;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use percent_encoding::percent_decode_str;
use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::extract;
use crate::fsread;

#[derive(Deserialize)]
struct Digests {
    releases: BTreeMap<String, Entry>,
}

#[derive(Deserialize)]
struct Entry {
    digest: String,
}

fn embedded() -> &'static BTreeMap<String, Entry> {
    static D: OnceLock<BTreeMap<String, Entry>> = OnceLock::new();
    D.get_or_init(|| {
        let text = include_str!("../../data/flags/install-digests.json");
        serde_json::from_str::<Digests>(text)
            .map(|d| d.releases)
            .unwrap_or_default()
    })
}

/// The release's digest, for a version this build embeds.
pub(crate) fn release_digest(version: &str) -> Option<&'static str> {
    embedded().get(version).map(|e| e.digest.as_str())
}

/// What the install is, as far as its parser goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Provenance {
    /// The release's own files.
    Release,
    /// Not the release's files: why (for the report), and the digest of what is installed
    /// when it could be computed (the key of its flag cache).
    Modified { why: String, digest: Option<String> },
}

/// Whether the files a wheel path names are in the digest.
fn covered(path: &str) -> bool {
    path == "sglang/srt/server_args.py"
        || path == "sglang/srt/environ.py"
        || (path.starts_with("sglang/srt/arg_groups/") && path.ends_with(".py"))
}

/// The digest over `(path, hex sha256)` pairs, as the generator computes it.
fn digest_of(mut files: Vec<(String, String)>) -> String {
    files.sort();
    let mut h = Sha256::new();
    for (path, hash) in &files {
        h.update(path.as_bytes());
        h.update([0]);
        h.update(hash.as_bytes());
        h.update(b"\n");
    }
    hex(&h.finalize())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Inspects the install behind `dist_info` (its `.dist-info` directory) claiming `version`.
pub(crate) fn inspect(dist_info: &Path, version: &str) -> Provenance {
    let want = release_digest(version);
    if let Some(source) = direct_url(dist_info) {
        return from_source(source, want);
    }
    let Some(record) = record_entries(dist_info) else {
        // No RECORD (an egg-info, a distro package): nothing to compare; trust the version.
        return Provenance::Release;
    };
    let site = dist_info.parent().unwrap_or(Path::new("."));
    let listed = digest_of(record.clone());
    let edited = edited_after_install(site, dist_info, &record);
    let found = if edited {
        tree_digest(site).unwrap_or(listed)
    } else {
        listed
    };
    match want {
        Some(w) if w == found => Provenance::Release,
        Some(_) => Provenance::Modified {
            why: if edited {
                "its parser files were edited after it was installed".to_owned()
            } else {
                "its parser files are not the release's (a fork, or a build of other sources)"
                    .to_owned()
            },
            digest: Some(found),
        },
        // A release this build does not embed: its own parser is read anyway.
        None => Provenance::Release,
    }
}

/// Where PEP 610 says the install came from, when not from a wheel archive.
struct Source {
    what: String,
    /// The local directory holding the `sglang` package, when the URL is a `file:` one.
    dir: Option<PathBuf>,
}

fn direct_url(dist_info: &Path) -> Option<Source> {
    let text = fsread::optional_string(&dist_info.join("direct_url.json"), fsread::PYTHON_ENV)?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    let url = v["url"].as_str().unwrap_or("");
    let local = url
        .strip_prefix("file://")
        .map(|p| PathBuf::from(&*percent_decode_str(p).decode_utf8_lossy()));
    let what = if v["dir_info"]["editable"] == true {
        format!("an editable install of {url}")
    } else if let Some(vcs) = v["vcs_info"]["vcs"].as_str() {
        let commit = v["vcs_info"]["commit_id"].as_str().unwrap_or("?");
        format!("installed from {vcs} {url} at {commit}")
    } else if v.get("dir_info").is_some() {
        format!("built from the source directory {url}")
    } else {
        return None; // archive_info: a wheel or sdist file; its RECORD says what it holds
    };
    Some(Source {
        what,
        dir: local.filter(|_| v.get("dir_info").is_some()),
    })
}

/// A source install: the release's files (a checkout at the release's tag) or not.
fn from_source(source: Source, want: Option<&str>) -> Provenance {
    let found = source.dir.as_deref().and_then(|d| {
        // `pip install -e python` points at the directory that holds `sglang/`.
        [d.to_path_buf(), d.join("python")]
            .into_iter()
            .find(|d| d.join("sglang/srt/server_args.py").is_file())
            .and_then(|d| tree_digest(&d))
    });
    match (want, &found) {
        (Some(w), Some(f)) if w == f => Provenance::Release,
        _ => Provenance::Modified {
            why: source.what,
            digest: found,
        },
    }
}

/// RECORD's covered entries, kept in a small cache file per install while RECORD (written once
/// by the installer) is unchanged: RECORD runs to most of a megabyte and this runs on every
/// check of an installed SGLang.
fn record_entries(dist_info: &Path) -> Option<Vec<(String, String)>> {
    let record = dist_info.join("RECORD");
    let (len, stamp) = (
        std::fs::metadata(&record).ok()?.len(),
        extract::mtime(&record)?,
    );
    let key = format!("{}\0{len}\0{stamp:?}", record.display());
    let cache = extract::cache_dir().map(|d| {
        d.join(format!(
            "record-{:016x}.json",
            extract::fnv1a(key.as_bytes())
        ))
    });
    let cached = cache.as_deref().and_then(|p| {
        let bytes = extract::read_cache(p)?;
        serde_json::from_slice(&bytes).ok()
    });
    if cached.is_some() {
        return cached;
    }
    let entries = record_files(dist_info)?;
    if let Some(p) = cache {
        extract::write_atomic(&p, &serde_json::to_vec(&entries).unwrap_or_default());
    }
    Some(entries)
}

/// `(path, hex sha256)` of the covered files RECORD lists.
fn record_files(dist_info: &Path) -> Option<Vec<(String, String)>> {
    let bytes = fsread::read(&dist_info.join("RECORD"), fsread::PACKAGE_RECORD)
        .map_err(|e| fsread::warn_unless_missing(&e))
        .ok()?;
    let mut out = Vec::new();
    // Thousands of lines, a few dozen covered, found by their prefix (SIMD search) rather than
    // by walking every line: this runs on every check of an installed SGLang.
    for prefix in [
        "sglang/srt/arg_groups/",
        "sglang/srt/server_args.py,",
        "sglang/srt/environ.py,",
    ] {
        let starts = memchr::memmem::find_iter(&bytes, prefix.as_bytes())
            .filter(|&i| i == 0 || bytes[i - 1] == b'\n');
        for at in starts {
            let end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |e| at + e);
            let line = std::str::from_utf8(&bytes[at..end])
                .ok()?
                .trim_end_matches('\r');
            let mut parts = line.rsplitn(3, ',');
            let (_size, hash, path) = (parts.next()?, parts.next()?, parts.next()?);
            if !covered(path) {
                continue;
            }
            // RECORD's hashes are urlsafe base64 without padding (PEP 376/627).
            let b64 = hash.strip_prefix("sha256=")?;
            let raw = URL_SAFE_NO_PAD.decode(b64.trim_end_matches('=')).ok()?;
            out.push((path.to_owned(), hex(&raw)));
        }
    }
    (!out.is_empty()).then_some(out)
}

/// Whether a covered file is newer than RECORD (written last by the installer).
fn edited_after_install(site: &Path, dist_info: &Path, record: &[(String, String)]) -> bool {
    let mtime = |p: &Path| {
        std::fs::metadata(p)
            .and_then(|m| m.modified())
            .unwrap_or(SystemTime::UNIX_EPOCH)
    };
    let installed = mtime(&dist_info.join("RECORD")) + std::time::Duration::from_secs(2);
    record
        .iter()
        .any(|(path, _)| mtime(&site.join(path)) > installed)
}

/// The digest of the covered files under `root` (the directory holding `sglang/`).
pub(crate) fn tree_digest(root: &Path) -> Option<String> {
    let srt = root.join("sglang/srt");
    let mut files: Vec<PathBuf> = ["server_args.py", "environ.py"]
        .iter()
        .map(|f| srt.join(f))
        .filter(|p| p.is_file())
        .collect();
    collect_py(&srt.join("arg_groups"), &mut files);
    let mut pairs = Vec::new();
    for f in files {
        let bytes = fsread::read(&f, fsread::PYTHON_SOURCE).ok()?;
        let rel = f
            .strip_prefix(root)
            .ok()?
            .to_string_lossy()
            .replace('\\', "/");
        pairs.push((rel, hex(&Sha256::digest(&bytes))));
    }
    (!pairs.is_empty()).then(|| digest_of(pairs))
}

fn collect_py(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        let name = e.file_name();
        if p.is_dir() && name != "__pycache__" {
            collect_py(&p, out);
        } else if p.extension().is_some_and(|x| x == "py") {
            out.push(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_embedded_release_has_a_digest() {
        for v in crate::sglang::release::KNOWN_VERSIONS {
            assert!(release_digest(v).is_some_and(|d| d.len() == 64), "{v}");
        }
    }

    #[test]
    fn record_hashes_are_read_as_hex() {
        let d = tempfile::tempdir().unwrap();
        // RECORD's form of the empty file's sha256 (urlsafe, padding dropped).
        std::fs::write(
            d.path().join("RECORD"),
            "sglang/srt/server_args.py,sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU,0\n\
             sglang/srt/other.py,sha256=AAEC,3\n",
        )
        .unwrap();
        assert_eq!(
            record_files(d.path()).unwrap(),
            vec![(
                "sglang/srt/server_args.py".to_owned(),
                "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855".to_owned()
            )]
        );
    }

    #[test]
    fn percent_escapes_in_file_urls_are_decoded() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(
            d.path().join("direct_url.json"),
            r#"{"url": "file:///a%20b/c", "dir_info": {"editable": true}}"#,
        )
        .unwrap();
        let source = direct_url(d.path()).unwrap();
        assert_eq!(source.dir, Some(PathBuf::from("/a b/c")));
        assert!(source.what.starts_with("an editable install"));
    }
}
