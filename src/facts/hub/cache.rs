//! Our cache of fetched model files: one directory per endpoint, repo and revision, shaped like
//! an HF snapshot so the model loader reads it as a local model. A directory appears whole or
//! not at all (written aside, then renamed into place).

use std::io::Write;
use std::path::{Path, PathBuf};

/// `root/<endpoint>/<repo>/<revision>`, each part escaped to one plain path component. The
/// endpoint's credentials are masked as in every output (`http://***@mirror`): they are never
/// written to disk nor shown in a path, and they decide what may be read, not what a repo holds
/// at a revision, so two logins to one mirror share its files.
pub(super) fn snapshot_dir(root: &Path, endpoint: &str, repo: &str, revision: &str) -> PathBuf {
    root.join(escape(&crate::out::mask_userinfo(endpoint)))
        .join(escape(repo))
        .join(escape(revision))
}

/// The snapshot, when a complete one is cached.
pub(super) fn cached(dir: &Path) -> Option<PathBuf> {
    dir.join("config.json").is_file().then(|| dir.to_path_buf())
}

/// Whether a cached snapshot may be read: its files, and every directory above them, pass the
/// rules the launcher's other files do (a snapshot not there yet passes).
pub(super) fn trusted(dir: &Path) -> Result<(), crate::fsread::trust::Untrusted> {
    crate::fsread::trust::check(&dir.join("config.json"))?;
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        crate::fsread::trust::check(&e.path())?;
    }
    Ok(())
}

/// Writes `files` as the snapshot `dir`. Another check that got there first wins: its files
/// came from the same revision.
pub(super) fn commit(dir: &Path, files: &[(String, Vec<u8>)]) -> std::io::Result<PathBuf> {
    let parent = dir.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent)?;
    let tmp = tempfile::Builder::new()
        .prefix(".partial-")
        .tempdir_in(parent)?;
    for (name, bytes) in files {
        let mut f = std::fs::File::create(tmp.path().join(name))?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    let tmp = tmp.keep();
    match std::fs::rename(&tmp, dir) {
        Ok(()) => Ok(dir.to_path_buf()),
        Err(e) => {
            let _ = std::fs::remove_dir_all(&tmp);
            cached(dir).ok_or(e)
        }
    }
}

/// Letters, digits, `-`, `_` and inner `.` stay; every other byte becomes `%XX`, so no part
/// can be `..`, hold a separator or collide with another.
fn escape(s: &str) -> String {
    super::percent_encode(s, |i, b| {
        b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || (b == b'.' && i > 0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_part_is_one_safe_component() {
        let d = snapshot_dir(Path::new("/r"), "http://127.0.0.1:80", "org/m", "refs/pr/1");
        assert_eq!(
            d,
            PathBuf::from("/r/http%3A%2F%2F127.0.0.1%3A80/org%2Fm/refs%2Fpr%2F1")
        );
        assert_eq!(escape(".."), "%2E.");
        let d = snapshot_dir(Path::new("/r"), "http://u:p%40SECRET@h:80", "o/m", "main");
        assert_eq!(
            d,
            PathBuf::from("/r/http%3A%2F%2F%2A%2A%2A%40h%3A80/o%2Fm/main")
        );
    }

    #[test]
    fn a_committed_snapshot_is_whole_and_a_second_commit_keeps_it() {
        let root = tempfile::tempdir().unwrap();
        let dir = snapshot_dir(root.path(), "e", "o/m", "main");
        assert_eq!(cached(&dir), None);
        let files = vec![("config.json".to_owned(), b"{}".to_vec())];
        assert_eq!(commit(&dir, &files).unwrap(), dir);
        assert_eq!(cached(&dir), Some(dir.clone()));
        let other = vec![("config.json".to_owned(), b"{\"x\":1}".to_vec())];
        assert_eq!(commit(&dir, &other).unwrap(), dir);
        assert_eq!(std::fs::read(dir.join("config.json")).unwrap(), b"{}");
        let left: Vec<_> = std::fs::read_dir(dir.parent().unwrap()).unwrap().collect();
        assert_eq!(left.len(), 1, "no partial directory is left behind");
    }
}
