//! The two config files: where they are, reading one into a checked layer, and refusing one that
//! someone else could have written (`fsread::trust`).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::layer::{Layer, Source};
use super::registry::Settings;

pub(crate) const SYSTEM: &str = "/etc/sglang-launch/config.toml";

/// The system file and the user file (none without a home), lowest first.
pub(crate) fn paths(get: impl Fn(&str) -> Option<OsString>) -> Vec<PathBuf> {
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

/// The file's layer; `None` when it does not exist. Its `python` chooses what runs: only a
/// file no one else could have written is read.
pub(crate) fn read(path: &Path) -> Result<Option<Layer>, String> {
    crate::fsread::trust::check(path).map_err(|e| e.to_string())?;
    let text = match crate::fsread::read_string(path, crate::fsread::LAUNCHER_CONFIG) {
        Ok(t) => t,
        Err(e) if e.problem.is_not_found() => return Ok(None),
        Err(e) => return Err(e.to_string()),
    };
    parse(path, &text).map(Some)
}

/// Parses and checks a file's text; errors carry line and column.
pub(crate) fn parse(path: &Path, text: &str) -> Result<Layer, String> {
    let fail = |e: toml::de::Error| format!("{}: {}", path.display(), e.to_string().trim_end());
    toml::from_str::<Settings>(text).map_err(fail)?;
    let values = toml::from_str::<toml::Table>(text).map_err(fail)?;
    Ok(Layer {
        source: Source::File(path.to_owned()),
        values,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_honour_the_override_xdg_and_home() {
        let env = |pairs: &'static [(&str, &str)]| {
            move |n: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == n)
                    .map(|(_, v)| OsString::from(v))
            }
        };
        assert_eq!(
            paths(env(&[("HOME", "/h")])),
            [
                PathBuf::from(SYSTEM),
                "/h/.config/sglang-launch/config.toml".into()
            ]
        );
        assert_eq!(
            paths(env(&[
                ("HOME", "/h"),
                ("XDG_CONFIG_HOME", "/x"),
                ("SGLANG_LAUNCH_SYSTEM_CONFIG", "/s.toml")
            ])),
            [
                PathBuf::from("/s.toml"),
                "/x/sglang-launch/config.toml".into()
            ]
        );
        // A relative XDG_CONFIG_HOME is ignored; no home, no user file.
        assert_eq!(
            paths(env(&[("HOME", "/h"), ("XDG_CONFIG_HOME", "rel")]))[1],
            PathBuf::from("/h/.config/sglang-launch/config.toml")
        );
        assert_eq!(paths(env(&[])), [PathBuf::from(SYSTEM)]);
    }

    #[test]
    fn file_errors_name_the_file_line_and_column() {
        let e = parse(Path::new("/c.toml"), "fit = true\nstrict = \"yes\"\n").unwrap_err();
        assert!(
            e.starts_with("/c.toml: TOML parse error at line 2, column 10"),
            "{e}"
        );
        let e = parse(Path::new("/c.toml"), "nope = 1").unwrap_err();
        assert!(
            e.contains("line 1, column 1") && e.contains("unknown field `nope`"),
            "{e}"
        );
    }
}
