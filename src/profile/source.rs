//! Where profiles are found: the directories in precedence order, then the shipped ones.
//! Never the current directory unless asked for with `--profiles-dir .`.

use std::path::{Path, PathBuf};

use super::error::ProfileError;

/// The profiles shipped in the repository's `profiles/` directory, built into the binary.
pub(crate) const SHIPPED: &[(&str, &str)] = &[
    (
        "rtx-pro-6000-pcie-8x",
        include_str!("../../profiles/rtx-pro-6000-pcie-8x.toml"),
    ),
    (
        "h100-nvlink-8x",
        include_str!("../../profiles/h100-nvlink-8x.toml"),
    ),
    (
        "h200-nvlink-8x",
        include_str!("../../profiles/h200-nvlink-8x.toml"),
    ),
    ("b200-8x", include_str!("../../profiles/b200-8x.toml")),
    (
        "rtx-4090-pcie-2x",
        include_str!("../../profiles/rtx-4090-pcie-2x.toml"),
    ),
    ("l4-1x", include_str!("../../profiles/l4-1x.toml")),
];

/// The directories searched, highest precedence first.
#[derive(Debug, Clone, Default)]
pub(crate) struct Search {
    pub(crate) dirs: Vec<PathBuf>,
}

/// A profile file found by name.
#[derive(Debug, Clone)]
pub(crate) struct Found {
    pub(crate) name: String,
    /// The path, or `shipped:profiles/NAME.toml` for a built-in one.
    pub(crate) origin: String,
    pub(crate) text: String,
}

impl Search {
    /// `--profiles-dir`, `$SGLANG_LAUNCH_PROFILES_DIR`, the user's config, then `/etc`.
    pub(crate) fn new(profiles_dir: Option<&Path>, var: impl Fn(&str) -> Option<String>) -> Search {
        let var = |k: &str| var(k).filter(|v| !v.trim().is_empty());
        let user = var("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .or_else(|| var("HOME").map(|h| Path::new(&h).join(".config")))
            .map(|c| c.join("sglang-launch/profiles"));
        let dirs = [
            profiles_dir.map(Path::to_path_buf),
            var("SGLANG_LAUNCH_PROFILES_DIR").map(PathBuf::from),
            user,
            Some(PathBuf::from("/etc/sglang-launch/profiles")),
        ];
        let mut unique: Vec<PathBuf> = Vec::new();
        for d in dirs.into_iter().flatten() {
            if !unique.contains(&d) {
                unique.push(d);
            }
        }
        Search { dirs: unique }
    }

    pub(crate) fn from_process(profiles_dir: Option<&Path>) -> Search {
        Search::new(profiles_dir, |k| std::env::var(k).ok())
    }

    /// The first profile of this name, in precedence order.
    pub(crate) fn find(&self, name: &str) -> Result<Option<Found>, ProfileError> {
        check_name(name)?;
        for dir in &self.dirs {
            let path = dir.join(format!("{name}.toml"));
            // Whatever sits at the name (a FIFO, a dangling link) is the user's: the read names it.
            if path.symlink_metadata().is_ok() {
                return read(name, &path).map(Some);
            }
        }
        Ok(SHIPPED
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(n, text)| Found {
                name: (*n).to_owned(),
                origin: format!("shipped:profiles/{n}.toml"),
                text: (*text).to_owned(),
            }))
    }

    /// Every profile name, each once (the one that wins), with where it comes from; sorted.
    pub(crate) fn names(&self) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        for dir in &self.dirs {
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            let mut here: Vec<(String, String)> = entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "toml"))
                .filter_map(|p| {
                    Some((p.file_stem()?.to_str()?.to_owned(), p.display().to_string()))
                })
                .collect();
            here.sort();
            push_new(&mut out, here);
        }
        let shipped = SHIPPED
            .iter()
            .map(|(n, _)| ((*n).to_owned(), format!("shipped:profiles/{n}.toml")));
        push_new(&mut out, shipped.collect());
        out.sort();
        out
    }
}

fn push_new(out: &mut Vec<(String, String)>, more: Vec<(String, String)>) {
    for (name, origin) in more {
        if !out.iter().any(|(n, _)| *n == name) {
            out.push((name, origin));
        }
    }
}

/// A name is a file stem, never a path: profiles come only from the searched directories.
fn check_name(name: &str) -> Result<(), ProfileError> {
    let ok = !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        return Ok(());
    }
    Err(ProfileError(format!(
        "profile name {name:?} is not a plain name (letters, digits, '-', '_', '.'): \
         put NAME.toml in a profiles directory (or --profiles-dir DIR) and pass --profile NAME"
    )))
}

fn read(name: &str, path: &Path) -> Result<Found, ProfileError> {
    // Its `[env]` and `[launcher]` choose what runs: only a file no one else could have
    // written is read.
    crate::fsread::trust::check(path).map_err(|e| ProfileError(e.to_string()))?;
    let text = crate::fsread::read_string(path, crate::fsread::PROFILE)
        .map_err(|e| ProfileError(e.to_string()))?;
    Ok(Found {
        name: name.to_owned(),
        origin: path.display().to_string(),
        text,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_never_paths() {
        assert!(check_name("h100-nvlink-8x").is_ok());
        for bad in ["../x", "a/b", ".hidden", "", "/etc/x"] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn every_shipped_file_is_embedded() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("profiles");
        let mut on_disk: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .filter_map(|e| {
                e.file_name()
                    .to_str()?
                    .strip_suffix(".toml")
                    .map(str::to_owned)
            })
            .collect();
        on_disk.sort();
        let mut embedded: Vec<String> = SHIPPED.iter().map(|(n, _)| (*n).to_owned()).collect();
        embedded.sort();
        assert_eq!(on_disk, embedded);
    }
}
