//! The two config files: where they are, reading one into a checked layer, and refusing one that
//! others could have written when running as root.

use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::combine::Settings;
use super::layer::{Layer, Source};

pub const SYSTEM: &str = "/etc/sglang-launch/config.toml";

/// The system file and the user file (none without a home), lowest first.
pub fn paths(get: impl Fn(&str) -> Option<OsString>) -> Vec<PathBuf> {
    let set = |name: &str| get(name).filter(|v| !v.is_empty());
    let system =
        set("SGLANG_LAUNCH_SYSTEM_CONFIG").map_or_else(|| PathBuf::from(SYSTEM), PathBuf::from);
    // The XDG spec ignores a relative XDG_CONFIG_HOME.
    let user_base = set("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| set("HOME").map(|h| PathBuf::from(h).join(".config")));
    let user = user_base.map(|b| b.join("sglang-launch").join("config.toml"));
    std::iter::once(system).chain(user).collect()
}

/// Root reading a file that group or others may write would run what they chose (`python`).
pub fn insecure(mode: u32, euid: u32) -> bool {
    euid == 0 && mode & 0o022 != 0
}

/// The file's layer; `None` when it does not exist.
pub fn read(path: &Path) -> Result<Option<Layer>, String> {
    let shown = path.display();
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{shown}: {e}")),
    };
    if insecure(meta.mode(), nix::unistd::geteuid().as_raw()) {
        return Err(format!(
            "{shown}: refused: running as root and the file is writable by group or others \
             (mode {:o}); `chmod go-w {shown}`",
            meta.mode() & 0o7777
        ));
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("{shown}: {e}"))?;
    parse(path, &text).map(Some)
}

/// Parses and checks a file's text; errors carry line and column.
pub fn parse(path: &Path, text: &str) -> Result<Layer, String> {
    let fail = |e: toml::de::Error| format!("{}: {}", path.display(), e.to_string().trim_end());
    toml::from_str::<Settings>(text).map_err(fail)?;
    let values = toml::from_str::<toml::Table>(text).map_err(fail)?;
    Ok(Layer {
        source: Source::File(path.to_owned()),
        values,
    })
}
