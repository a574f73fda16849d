//! Whether a file the launcher takes settings from (a profile, a config file, a flag-set cache)
//! could have been written by someone other than the user running it. Such settings choose
//! what runs (`python`, `[env]` such as `LD_PRELOAD`, the options SGLang is told it has), so a
//! file anyone else can change would let them run code as this user, or as root.
//!
//! Running as root, the rules are OpenSSH's and sudo's: the file and every directory above it
//! up to `/` are owned by root or the invoking user and are not writable by group or others.
//! A sticky directory others may write (`/tmp`) is accepted only because the entry below it
//! must itself be owned by root or the user: the sticky bit stops others renaming it, and a
//! file someone else put there is refused. As any other user, a file is refused when anyone on
//! the machine could have written or placed it: writable by others, under a directory others
//! may write (not sticky), or in a sticky one while owned by someone else.
//!
//! Both the path as named and the path its links resolve to are checked.

use std::fmt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

const S_ISVTX: u32 = 0o1000;

/// Who runs the launcher: the users whose files it trusts, and how strict to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Runner {
    pub(crate) euid: u32,
    pub(crate) uid: u32,
}

impl Runner {
    pub(crate) fn current() -> Runner {
        Runner {
            euid: nix::unistd::geteuid().as_raw(),
            uid: nix::unistd::getuid().as_raw(),
        }
    }

    fn is_root(self) -> bool {
        self.euid == 0
    }

    /// Root, the effective user, and the user who started it (set-uid or not).
    fn trusts(self, owner: u32) -> bool {
        owner == 0 || owner == self.euid || owner == self.uid
    }
}

/// What makes a file untrusted: the file or the directory at fault, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Untrusted {
    /// The file that was to be read.
    pub(crate) file: PathBuf,
    /// The file itself or a directory above it.
    pub(crate) at: PathBuf,
    pub(crate) is_dir: bool,
    pub(crate) owner: u32,
    pub(crate) mode: u32,
    pub(crate) why: Why,
    pub(crate) root: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Why {
    /// Running as root, owned by someone other than root or the invoking user.
    Owner,
    /// Writable by group (as root) or by others.
    Writable,
    /// In a sticky directory others may write, and owned by someone else.
    PlacedByOther,
}

fn owner_name(uid: u32) -> String {
    match nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid)) {
        Ok(Some(u)) => format!("{} (uid {uid})", u.name),
        _ => format!("uid {uid}"),
    }
}

impl fmt::Display for Untrusted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let file = self.file.display();
        let at = self.at.display();
        let what = if self.at == self.file {
            "it".to_owned()
        } else if self.is_dir {
            format!("the directory {at} above it")
        } else {
            format!("{at}, which it links to,")
        };
        let (owner, mode) = (owner_name(self.owner), self.mode & 0o7777);
        let problem = match self.why {
            Why::Owner => format!("{what} is owned by {owner} (mode {mode:o})"),
            Why::Writable if self.root => {
                format!("{what} is writable by group or others (mode {mode:o}, owner {owner})")
            }
            Why::Writable => format!("{what} is writable by others (mode {mode:o}, owner {owner})"),
            Why::PlacedByOther => format!(
                "{what} is owned by {owner} in a directory anyone may write (mode {mode:o})"
            ),
        };
        let rule = if self.root {
            "running as root, a file settings are read from must be owned by root or you and \
             not writable by group or others, and so must every directory above it"
        } else {
            "a file settings are read from must not be one anyone on this machine could have \
             written or put there"
        };
        let fix = match self.why {
            Why::Writable => format!("`chmod go-w {at}`"),
            _ => format!("`chown root {at}`"),
        };
        write!(
            f,
            "{file}: refused: {problem}; {rule}: {fix}, or move the file to a directory only \
             root (or you) can write"
        )
    }
}

impl std::error::Error for Untrusted {}

/// Checks `path` for the user running the launcher. A path that does not exist (or cannot be
/// examined) passes: the read that follows names that problem.
pub(crate) fn check(path: &Path) -> Result<(), Untrusted> {
    check_for(path, Runner::current())
}

/// [`check`] for a given runner.
pub(crate) fn check_for(path: &Path, runner: Runner) -> Result<(), Untrusted> {
    let named = absolute(path);
    check_chain(path, &named, runner)?;
    if let Ok(real) = std::fs::canonicalize(&named)
        && real != named
    {
        check_chain(path, &real, runner)?;
    }
    Ok(())
}

/// `path` made absolute against the current directory, without resolving links.
fn absolute(path: &Path) -> PathBuf {
    if path.is_absolute() {
        return path.to_path_buf();
    }
    std::env::current_dir()
        .map(|d| d.join(path))
        .unwrap_or_else(|_| path.to_path_buf())
}

/// The file at `target`, then each directory above it up to `/` (each `stat`ed, so a link
/// on the way is judged by what it points to; its own directory is judged as the next one).
fn check_chain(file: &Path, target: &Path, runner: Runner) -> Result<(), Untrusted> {
    let Ok(meta) = std::fs::metadata(target) else {
        return Ok(());
    };
    let mut child = (target.to_path_buf(), meta);
    judge(file, &child.0, &child.1, None, runner)?;
    let mut dir = target.to_path_buf();
    while dir.pop() {
        let Ok(meta) = std::fs::metadata(&dir) else {
            return Ok(());
        };
        judge(file, &dir, &meta, Some(child.1.uid()), runner)?;
        child = (dir.clone(), meta);
    }
    Ok(())
}

/// One entry: the file (`child_owner` None) or a directory holding an entry of that owner.
fn judge(
    file: &Path,
    at: &Path,
    meta: &std::fs::Metadata,
    child_owner: Option<u32>,
    runner: Runner,
) -> Result<(), Untrusted> {
    let (owner, mode) = (meta.uid(), meta.mode());
    let writable_by_others = if runner.is_root() { 0o022 } else { 0o002 };
    let is_dir = child_owner.is_some();
    let sticky_ok = is_dir && mode & S_ISVTX != 0 && child_owner.is_some_and(|o| runner.trusts(o));
    let why = if runner.is_root() && !runner.trusts(owner) {
        Some(Why::Owner)
    } else if mode & writable_by_others != 0 && !sticky_ok {
        // Only others' write bit makes a sticky directory a place anyone can put a file.
        let sticky_public = is_dir && mode & S_ISVTX != 0;
        Some(if sticky_public {
            Why::PlacedByOther
        } else {
            Why::Writable
        })
    } else {
        None
    };
    match why {
        None => Ok(()),
        Some(why) => Err(Untrusted {
            file: file.to_path_buf(),
            at: at.to_path_buf(),
            is_dir,
            owner,
            mode,
            why,
            root: runner.is_root(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    const ROOT: Runner = Runner { euid: 0, uid: 0 };

    fn chmod(p: &Path, mode: u32) {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn a_private_file_in_a_private_directory_is_trusted() {
        let t = tempfile::tempdir().unwrap();
        let f = t.path().join("p.toml");
        std::fs::write(&f, "").unwrap();
        let me = Runner::current();
        assert_eq!(check_for(&f, me), Ok(()));
        // The temporary directory sits in a sticky /tmp: still trusted, its entry is ours.
        if me.is_root() {
            assert_eq!(check_for(&f, ROOT), Ok(()));
        }
    }

    #[test]
    fn writable_files_and_directories_are_refused() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("d");
        std::fs::create_dir(&d).unwrap();
        let f = d.join("p.toml");
        std::fs::write(&f, "").unwrap();
        let me = Runner::current();
        chmod(&f, 0o666);
        let e = check_for(&f, me).unwrap_err();
        assert_eq!((e.at.as_path(), e.why), (f.as_path(), Why::Writable));
        assert!(e.to_string().contains("chmod go-w"), "{e}");
        chmod(&f, 0o644);
        chmod(&d, 0o777);
        let e = check_for(&f, me).unwrap_err();
        assert_eq!((e.at.as_path(), e.is_dir), (d.as_path(), true));
        assert!(e.to_string().contains("the directory"), "{e}");
        // Group write counts only for root.
        chmod(&d, 0o775);
        if me.is_root() {
            assert!(check_for(&f, me).is_err());
        } else {
            assert_eq!(check_for(&f, me), Ok(()));
        }
    }

    #[test]
    fn a_link_is_judged_where_it_points_too() {
        let t = tempfile::tempdir().unwrap();
        let open = t.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::write(open.join("real.toml"), "").unwrap();
        chmod(&open, 0o777);
        let link = t.path().join("p.toml");
        std::os::unix::fs::symlink(open.join("real.toml"), &link).unwrap();
        let e = check_for(&link, Runner::current()).unwrap_err();
        assert_eq!(e.at, open);
        assert_eq!(e.file, link);
    }

    #[test]
    fn a_sticky_directory_does_not_vouch_for_someone_elses_file() {
        let t = tempfile::tempdir().unwrap();
        let sticky = t.path().join("tmp");
        std::fs::create_dir(&sticky).unwrap();
        chmod(&sticky, 0o1777);
        let f = sticky.join("p.toml");
        std::fs::write(&f, "").unwrap();
        let me = Runner::current();
        assert_eq!(check_for(&f, me), Ok(()), "our own file in a sticky dir");
        // Seen by another non-root user, it was put there by someone else (root's files are
        // everyone's to trust, so root hands it to nobody first).
        if me.is_root() {
            nix::unistd::chown(&f, Some(nix::unistd::Uid::from_raw(65534)), None).unwrap();
        }
        let other = Runner {
            euid: 12345,
            uid: 12345,
        };
        let e = check_for(&f, other).unwrap_err();
        assert_eq!(
            (e.at.as_path(), e.why),
            (sticky.as_path(), Why::PlacedByOther)
        );
    }

    #[test]
    fn root_refuses_a_file_owned_by_another_user() {
        if !Runner::current().is_root() {
            return;
        }
        let t = tempfile::tempdir().unwrap();
        let f = t.path().join("p.toml");
        std::fs::write(&f, "").unwrap();
        let nobody = nix::unistd::Uid::from_raw(65534);
        nix::unistd::chown(&f, Some(nobody), None).unwrap();
        let e = check_for(&f, ROOT).unwrap_err();
        assert_eq!(e.why, Why::Owner);
        let m = e.to_string();
        assert!(
            m.contains("uid 65534") && m.contains("owned by root or you"),
            "{m}"
        );
        // Moved into a sticky directory, it is still someone else's file.
        let sticky = t.path().join("tmp");
        std::fs::create_dir(&sticky).unwrap();
        chmod(&sticky, 0o1777);
        std::fs::rename(&f, sticky.join("p.toml")).unwrap();
        assert!(check_for(&sticky.join("p.toml"), ROOT).is_err());
        // A directory above owned by someone else is refused too.
        let theirs = t.path().join("theirs");
        std::fs::create_dir(&theirs).unwrap();
        std::fs::write(theirs.join("p.toml"), "").unwrap();
        nix::unistd::chown(&theirs, Some(nobody), None).unwrap();
        let e = check_for(&theirs.join("p.toml"), ROOT).unwrap_err();
        assert_eq!((e.at, e.why), (theirs, Why::Owner));
    }

    #[test]
    fn a_missing_file_passes_to_the_read() {
        assert_eq!(
            check_for(Path::new("/nonexistent/p.toml"), Runner::current()),
            Ok(())
        );
    }
}
