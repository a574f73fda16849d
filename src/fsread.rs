//! Every file the launcher reads, read one bounded way: opened without blocking, required to be
//! a regular file (checked on the opened descriptor, so a swap after the check changes nothing),
//! capped in size per kind before anything is allocated, and, where a network or user-space
//! filesystem is mounted, given up on after a deadline. A
//! FIFO, a device, a directory or a multi-gigabyte file named where a small file belongs gets one
//! message naming the file and what to do, never a hang and never an out-of-memory kill. Messages
//! never quote the file's bytes.
//!
//! What each kind caps, and what its caller does when the read fails:
//!
//! | kind | cap | on failure |
//! |---|---|---|
//! | `--topology` file | 16 MiB | usage error, exit 2 |
//! | SGLang `--config` YAML | 16 MiB | ARG001 error finding (SGLang would fail too), exit 1 |
//! | launcher `config.toml` | 1 MiB | usage error, exit 2 |
//! | profile (`NAME.toml`) | 1 MiB | usage error, exit 2 |
//! | model JSON (`config.json`, index, Hub record) | 64 MiB | MEM002 warning: the model's facts are estimated |
//! | safetensors header | 100 MiB + 8 | the index stands in, else MEM002 warning |
//! | HF cache ref (`refs/<branch>`) | 1 KiB | warning; the newest snapshot (or none at `--revision`) |
//! | HF token file | 64 KiB | warning; the Hub is asked without a token |
//! | `METADATA` / `PKG-INFO` | first 1 MiB | warning; that package's version is unknown |
//! | pyenv `.python-version` / `version` | 4 KiB | warning; the next source of the version is used |
//! | `pyvenv.cfg`, torch `version.py`, CUDA `version.*` | 1 MiB | warning; the fact is unknown |
//! | flag-set cache | 16 MiB | warning; the flags are read from SGLang again |
//! | `/proc`, hostname | 16 MiB | warning; the fact is unknown |
//!
//! A missing optional file is no news and says nothing. Inputs the user named fail; context the
//! launcher looks for on its own warns once and goes on, as a drop-in must not block a command
//! that works.
//!
//! Files whose settings choose what runs (profiles, config files, flag-set caches) are also
//! checked for who could have written them ([`trust`]).

pub(crate) mod trust;

use std::fmt;
use std::fs::OpenOptions;
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, mpsc};
use std::time::Duration;

use nix::fcntl::{FcntlArg, OFlag, fcntl};

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;

/// How long one open-and-read may take: a hung network or FUSE mount blocks `open` and `read`
/// in a way no signal but SIGKILL ends, so the read runs on a thread the launcher can leave.
pub(crate) const DEADLINE: Duration = Duration::from_secs(15);

/// One kind of file: what to call it, how big it may be, and what the user should do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Kind {
    /// `topology file`, `profile`, … (after "cannot read").
    pub(crate) what: &'static str,
    /// Bytes beyond this are refused (or, for [`head`], not read).
    pub(crate) limit: u64,
    /// What to do, after the problem.
    pub(crate) hint: &'static str,
}

pub(crate) const TOPOLOGY: Kind = Kind {
    what: "topology file",
    limit: 16 * MIB,
    hint: "check the path given to --topology (`sglang-launch detect --json > FILE` writes one)",
};
pub(crate) const SGLANG_CONFIG: Kind = Kind {
    what: "config file",
    limit: 16 * MIB,
    hint: "pass a regular YAML file to --config",
};
pub(crate) const LAUNCHER_CONFIG: Kind = Kind {
    what: "launcher config file",
    limit: MIB,
    hint: "make it a regular TOML file or remove it",
};
pub(crate) const PROFILE: Kind = Kind {
    what: "profile",
    limit: MIB,
    hint: "make it a regular TOML file, fix its permissions or remove it",
};
pub(crate) const MODEL_JSON: Kind = Kind {
    what: "model file",
    limit: 64 * MIB,
    hint: "the model's facts are estimated without it",
};
/// The 8-byte length prefix and the largest header the model reader accepts.
pub(crate) const SAFETENSORS: Kind = Kind {
    what: "safetensors file",
    limit: 100 * MIB + 8,
    hint: "the index or an estimate stands in",
};
pub(crate) const HF_REF: Kind = Kind {
    what: "Hugging Face cache ref",
    limit: KIB,
    hint: "it should hold one commit hash; ignored",
};
pub(crate) const HF_TOKEN: Kind = Kind {
    what: "Hugging Face token file",
    limit: 64 * KIB,
    hint: "the Hub is asked without a token",
};
pub(crate) const PACKAGE_METADATA: Kind = Kind {
    what: "package metadata",
    limit: MIB,
    hint: "that package's version is unknown",
};
pub(crate) const PYTHON_VERSION: Kind = Kind {
    what: "pyenv version file",
    limit: 4 * KIB,
    hint: "make it a regular file naming a version, or remove it; ignored",
};
pub(crate) const PYTHON_ENV: Kind = Kind {
    what: "Python environment file",
    limit: MIB,
    hint: "ignored",
};
pub(crate) const PACKAGE_RECORD: Kind = Kind {
    what: "package RECORD file",
    limit: 64 * MIB,
    hint: "the install is taken to be the release it names",
};
pub(crate) const PYTHON_SOURCE: Kind = Kind {
    what: "SGLang source file",
    limit: 64 * MIB,
    hint: "the install is taken to differ from the release it names",
};
pub(crate) const FLAG_CACHE: Kind = Kind {
    what: "flag-set cache file",
    limit: 16 * MIB,
    hint: "the flags are read from SGLang again",
};
pub(crate) const OBSERVATIONS: Kind = Kind {
    what: "observation store",
    limit: 64 * MIB,
    hint: "move it aside (`sglang-launch observed` shows where it is); it is rebuilt by the next start",
};
pub(crate) const SYSTEM: Kind = Kind {
    what: "system file",
    limit: 16 * MIB,
    hint: "ignored",
};

/// Why a read failed, without the path (callers that frame their own message use this).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ReadProblem {
    /// `open` or `read` failed: no such file, permission denied, a symlink loop, …
    Os {
        kind: io::ErrorKind,
        errno: Option<i32>,
    },
    /// A directory, FIFO, device or socket: reading it would fail, block or never end.
    NotRegular(&'static str),
    TooLarge {
        limit: u64,
    },
    /// Not UTF-8 where text is needed.
    NotText,
    TimedOut,
}

impl ReadProblem {
    fn os(e: &io::Error) -> ReadProblem {
        ReadProblem::Os {
            kind: e.kind(),
            errno: e.raw_os_error(),
        }
    }

    /// The OS said there is no such file.
    pub(crate) fn is_not_found(&self) -> bool {
        matches!(self, ReadProblem::Os { kind, .. } if *kind == io::ErrorKind::NotFound)
    }

    /// The file is not there (or a directory on its path is not one): no news for optional files.
    pub(crate) fn is_missing(&self) -> bool {
        self.is_not_found()
            || matches!(self, ReadProblem::Os { kind, .. } if *kind == io::ErrorKind::NotADirectory)
    }
}

impl fmt::Display for ReadProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadProblem::Os { errno: Some(n), .. } => io::Error::from_raw_os_error(*n).fmt(f),
            ReadProblem::Os { kind, .. } => kind.fmt(f),
            ReadProblem::NotRegular(what) => write!(f, "it is {what}, not a regular file"),
            ReadProblem::TooLarge { limit } => write!(f, "larger than {}", size(*limit)),
            ReadProblem::NotText => f.write_str("not UTF-8 text"),
            ReadProblem::TimedOut => write!(
                f,
                "no answer in {} s (a hung network or FUSE mount?)",
                DEADLINE.as_secs()
            ),
        }
    }
}

/// `Os` problems keep their errno, so messages built on `io::Error` read as before.
impl From<ReadProblem> for io::Error {
    fn from(p: ReadProblem) -> io::Error {
        match p {
            ReadProblem::Os { errno: Some(n), .. } => io::Error::from_raw_os_error(n),
            ReadProblem::Os { kind, .. } => io::Error::from(kind),
            ReadProblem::TimedOut => io::Error::new(io::ErrorKind::TimedOut, p.to_string()),
            other => io::Error::new(io::ErrorKind::InvalidInput, other.to_string()),
        }
    }
}

fn size(bytes: u64) -> String {
    if bytes >= MIB && bytes % MIB < MIB / 100 {
        format!("{} MiB", bytes / MIB)
    } else if bytes >= KIB {
        format!("{} KiB", bytes / KIB)
    } else {
        format!("{bytes} bytes")
    }
}

/// A failed read: which file, of what kind, and why. Display is the whole message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReadError {
    pub(crate) path: PathBuf,
    pub(crate) kind: Kind,
    pub(crate) problem: ReadProblem,
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot read {} {}: {}; {}",
            self.kind.what,
            self.path.display(),
            self.problem,
            self.kind.hint
        )
    }
}

impl std::error::Error for ReadError {}

/// The first bytes of a file and its whole length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Head {
    pub(crate) bytes: Vec<u8>,
    pub(crate) file_len: u64,
}

/// The whole file; `TooLarge` past the kind's limit.
pub(crate) fn read(path: &Path, kind: Kind) -> Result<Vec<u8>, ReadError> {
    bounded(path, kind, kind.limit, false).map(|h| h.bytes)
}

/// The whole file as text.
pub(crate) fn read_string(path: &Path, kind: Kind) -> Result<String, ReadError> {
    let bytes = read(path, kind)?;
    String::from_utf8(bytes).map_err(|_| ReadError {
        path: path.to_owned(),
        kind,
        problem: ReadProblem::NotText,
    })
}

/// At most `len` bytes (and never past the kind's limit) from the start of the file, which may
/// be longer.
pub(crate) fn head(path: &Path, kind: Kind, len: u64) -> Result<Head, ReadError> {
    bounded(path, kind, len.min(kind.limit), true)
}

/// Text of a file the launcher looks for on its own: `None` when it is missing (silently) or
/// cannot be read (with one warning per file on stderr).
pub(crate) fn optional_string(path: &Path, kind: Kind) -> Option<String> {
    match read_string(path, kind) {
        Ok(t) => Some(t),
        Err(e) => {
            warn_unless_missing(&e);
            None
        }
    }
}

/// Prints one warning per file (several passes may look at the same one), unless it is missing.
pub(crate) fn warn_unless_missing(e: &ReadError) {
    if !e.problem.is_missing() {
        warn_once(&e.path, &e.to_string());
    }
}

/// `sglang-launch: warning: MESSAGE` on stderr, the first time a warning names this path.
pub(crate) fn warn_once(path: &Path, message: &str) {
    use std::collections::HashSet;
    static WARNED: Mutex<Option<HashSet<PathBuf>>> = Mutex::new(None);
    let mut warned = WARNED.lock().unwrap_or_else(|p| p.into_inner());
    if warned
        .get_or_insert_with(HashSet::new)
        .insert(path.to_owned())
    {
        crate::out::warn(message);
    }
}

fn bounded(path: &Path, kind: Kind, len: u64, partial: bool) -> Result<Head, ReadError> {
    let outcome = if mounts_all_local() {
        Some(read_at_most(path, len, partial))
    } else {
        let owned = path.to_owned();
        with_deadline(DEADLINE, move || read_at_most(&owned, len, partial))
    };
    outcome
        .unwrap_or(Err(ReadProblem::TimedOut))
        .map_err(|problem| ReadError {
            path: path.to_owned(),
            kind,
            problem,
        })
}

/// Opens without blocking (a FIFO with no writer would wait forever), requires a regular file
/// on the opened descriptor, then reads at most `len` bytes (`len + 1` to tell a longer file:
/// `/proc` files report size 0, so the size alone does not bound the read).
fn read_at_most(path: &Path, len: u64, partial: bool) -> Result<Head, ReadProblem> {
    let flags = OFlag::O_NONBLOCK | OFlag::O_NOCTTY;
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(flags.bits())
        .open(path)
        .map_err(|e| ReadProblem::os(&e))?;
    let meta = file.metadata().map_err(|e| ReadProblem::os(&e))?;
    let ft = meta.file_type();
    if !ft.is_file() {
        return Err(ReadProblem::NotRegular(describe(&ft)));
    }
    // Regular files ignore O_NONBLOCK on most file systems; clear it for the rest.
    fcntl(&file, FcntlArg::F_SETFL(OFlag::empty())).map_err(|e| ReadProblem::os(&e.into()))?;
    let file_len = meta.len();
    if !partial && file_len > len {
        return Err(ReadProblem::TooLarge { limit: len });
    }
    let mut bytes = Vec::with_capacity(file_len.min(len) as usize);
    let want = if partial { len } else { len + 1 };
    file.take(want)
        .read_to_end(&mut bytes)
        .map_err(|e| ReadProblem::os(&e))?;
    if !partial && bytes.len() as u64 > len {
        return Err(ReadProblem::TooLarge { limit: len });
    }
    Ok(Head { bytes, file_len })
}

fn describe(ft: &std::fs::FileType) -> &'static str {
    if ft.is_dir() {
        "a directory"
    } else if ft.is_fifo() {
        "a named pipe (FIFO)"
    } else if ft.is_char_device() {
        "a character device"
    } else if ft.is_block_device() {
        "a block device"
    } else if ft.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// Filesystems whose `open` and `read` cannot wait on a remote server or a user-space daemon.
/// Anything else mounted (NFS, CIFS, FUSE, autofs, Lustre, 9p, …, or a type not listed) sends
/// every read to a reader thread with a deadline.
const LOCAL_FS: &[&str] = &[
    "ext2",
    "ext3",
    "ext4",
    "xfs",
    "btrfs",
    "zfs",
    "f2fs",
    "jfs",
    "reiserfs",
    "vfat",
    "exfat",
    "ntfs3",
    "iso9660",
    "squashfs",
    "erofs",
    "overlay",
    "tmpfs",
    "ramfs",
    "devtmpfs",
    "proc",
    "sysfs",
    "devpts",
    "cgroup",
    "cgroup2",
    "mqueue",
    "hugetlbfs",
    "debugfs",
    "tracefs",
    "securityfs",
    "pstore",
    "bpf",
    "configfs",
    "efivarfs",
    "binfmt_misc",
    "nsfs",
    "selinuxfs",
    "fusectl",
    "rpc_pipefs",
    "nfsd",
];

/// Whether every filesystem this process can see is local ([`LOCAL_FS`]): then a read cannot
/// hang past the deadline, and runs here instead of on a reader thread (a thread hand-off
/// costs up to a few hundred microseconds per read on virtual machines, several per check).
fn mounts_all_local() -> bool {
    static LOCAL: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *LOCAL.get_or_init(|| {
        std::fs::read_to_string("/proc/self/mountinfo").is_ok_and(|t| all_local(&t))
    })
}

/// `/proc/self/mountinfo`'s filesystem types (the field after ` - `) are all local.
fn all_local(mountinfo: &str) -> bool {
    let mut lines = mountinfo.lines().peekable();
    lines.peek().is_some()
        && lines.all(|l| {
            (l.split_once(" - ")
                .and_then(|(_, r)| r.split_whitespace().next()))
            .is_some_and(|fs| LOCAL_FS.contains(&fs))
        })
}

type Job = Box<dyn FnOnce() + Send>;

/// Reader threads waiting for work. A run's reads reuse them (a thread per read cost a check
/// more than its reads); a thread whose read missed its deadline is never handed work again.
static IDLE: Mutex<Vec<mpsc::Sender<Job>>> = Mutex::new(Vec::new());

/// `f()` on a reader thread, or `None` when it has not returned in `limit`. A thread left
/// behind ends with the process (exit or exec).
fn with_deadline<T: Send + 'static>(
    limit: Duration,
    f: impl FnOnce() -> T + Send + 'static,
) -> Option<T> {
    let (tx, rx) = mpsc::sync_channel(1);
    let job: Job = Box::new(move || {
        let _ = tx.send(f());
    });
    let idle = IDLE.lock().unwrap_or_else(|p| p.into_inner()).pop();
    let Some(worker) = idle.or_else(spawn_worker) else {
        // No thread to spare (a process limit): read here, without the deadline.
        job();
        return rx.try_recv().ok();
    };
    if let Err(mpsc::SendError(job)) = worker.send(job) {
        job();
        return rx.try_recv().ok();
    }
    let got = rx.recv_timeout(limit).ok();
    if got.is_some() {
        IDLE.lock().unwrap_or_else(|p| p.into_inner()).push(worker);
    }
    got
}

fn spawn_worker() -> Option<mpsc::Sender<Job>> {
    let (tx, rx) = mpsc::channel::<Job>();
    std::thread::Builder::new()
        .name("fsread".into())
        .spawn(move || {
            for job in rx {
                job();
            }
        })
        .ok()?;
    Some(tx)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_skip_the_thread_only_when_every_mount_is_local() {
        let local = "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n\
                     23 22 0:5 / /proc rw shared:2 - proc proc rw\n";
        assert!(all_local(local));
        for remote in [
            "40 22 0:50 / /home rw shared:9 - nfs4 srv:/home rw,vers=4.2\n",
            "41 22 0:51 / /mnt/s3 rw shared:9 - fuse.s3fs s3fs rw\n",
            "42 22 0:52 / /net rw shared:9 - autofs systemd-1 rw\n",
            "43 22 0:53 / /data rw shared:9 - lustre 10.0.0.1@tcp:/fs rw\n",
        ] {
            assert!(!all_local(&format!("{local}{remote}")), "{remote}");
        }
        // Unreadable or unparsable: the thread, as before.
        assert!(!all_local(""));
        assert!(!all_local("garbage\n"));
    }

    #[test]
    fn a_fifo_is_refused_without_waiting_for_a_writer() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.json");
        nix::unistd::mkfifo(&p, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let e = read(&p, TOPOLOGY).unwrap_err();
        assert_eq!(e.problem, ReadProblem::NotRegular("a named pipe (FIFO)"));
        let m = e.to_string();
        assert!(m.starts_with("cannot read topology file "), "{m}");
        assert!(m.contains("--topology"), "{m}");
    }

    #[test]
    fn devices_and_directories_are_refused() {
        let e = read(Path::new("/dev/zero"), TOPOLOGY).unwrap_err();
        assert_eq!(e.problem, ReadProblem::NotRegular("a character device"));
        let e = read(Path::new("/"), PROFILE).unwrap_err();
        assert_eq!(e.problem, ReadProblem::NotRegular("a directory"));
    }

    #[test]
    fn the_cap_holds_and_a_prefix_may_be_read_from_a_longer_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("big");
        std::fs::write(&p, vec![b'x'; 5000]).unwrap();
        let e = read(&p, PYTHON_VERSION).unwrap_err();
        assert_eq!(e.problem, ReadProblem::TooLarge { limit: 4096 });
        assert!(e.to_string().contains("larger than 4 KiB"), "{e}");
        let h = head(&p, PYTHON_VERSION, 10).unwrap();
        assert_eq!((h.bytes.len(), h.file_len), (10, 5000));
        assert_eq!(read(&p, PACKAGE_METADATA).unwrap().len(), 5000);
    }

    #[test]
    fn proc_files_that_report_size_zero_are_read_whole() {
        let t = read_string(Path::new("/proc/self/status"), SYSTEM).unwrap();
        assert!(t.contains("Name:"));
    }

    #[test]
    fn missing_files_are_told_apart_and_keep_the_os_words() {
        let e = read(Path::new("/nonexistent/x"), PROFILE).unwrap_err();
        assert!(e.problem.is_missing());
        assert!(e.to_string().contains("No such file or directory"), "{e}");
        let io: io::Error = e.problem.into();
        assert_eq!(io.kind(), io::ErrorKind::NotFound);
    }

    #[test]
    fn text_that_is_not_utf8_is_named_without_its_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("v");
        std::fs::write(&p, b"secret\xff").unwrap();
        let e = read_string(&p, PYTHON_VERSION).unwrap_err();
        assert_eq!(e.problem, ReadProblem::NotText);
        assert!(!e.to_string().contains("secret"));
    }

    #[test]
    fn a_read_that_does_not_return_is_left_behind() {
        let t = std::time::Instant::now();
        let r = with_deadline(Duration::from_millis(50), || {
            std::thread::sleep(Duration::from_secs(5));
            1
        });
        assert_eq!(r, None);
        assert!(t.elapsed() < Duration::from_secs(2));
        // The stuck thread is not handed the next read: it is answered at once, not after 5 s.
        assert_eq!(with_deadline(Duration::from_secs(1), || 2), Some(2));
        // Reads that return reuse one thread.
        for i in 0..100 {
            assert_eq!(with_deadline(Duration::from_secs(5), move || i), Some(i));
        }
        assert!(IDLE.lock().unwrap().len() <= 8, "threads are reused");
    }
}
