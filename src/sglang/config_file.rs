//! SGLang's `--config FILE.yaml` (0.5.5 and later): before argparse runs, SGLang reads the YAML
//! file and turns its top-level keys into command-line tokens placed *before* the user's own
//! (so explicit arguments win), dropping `--config FILE` from the line.
//!
//! The rules, as SGLang's `ConfigArgumentMerger` applies them (reimplemented, checked against
//! SGLang's real code through the goldens in tests/conformance/config-*.jsonl):
//! * only an exact `--config` token triggers it (`--config=f.yaml` or an abbreviation is a plain
//!   argparse option); a second exact `--config`, or one in last place, is a `ValueError`; an
//!   empty file name means "no config";
//! * the file must end in `.yaml`/`.yml` (any case) and exist; it is read with PyYAML's
//!   `safe_load` (YAML 1.1 scalars: `yes`/`on` are booleans, `1e3` is a string, `0x10` is 16, …);
//!   an empty document is `{}`, any other non-mapping is a `ValueError`;
//! * each key becomes `--KEY` spelled exactly as written (underscores stay underscores);
//!   `true` on a `store_true` option gives the bare flag, `false` on one gives nothing, other
//!   booleans give `true`/`false` as a value (0.5.5: `true` → bare flag, `false` → nothing, for
//!   every key); a non-empty list gives one token per item, an empty one nothing; a mapping gives
//!   one token, Python's `str()` of it (0.5.23: `json.dumps`); anything else `str(value)`;
//! * 0.5.10+: a key naming an option whose action takes no single value (other than
//!   `store_true`) is a `ValueError` ("Unsupported config option …"); 0.5.10 matches keys to
//!   dests, 0.5.23 to the dest or any long option spelling with `-` read as `_`.

use std::collections::{HashMap, HashSet};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use super::error::ArgError;
use super::flagset::{Action, ActionKind, FlagSet, Nargs};
use super::pytypes::py_repr_str;
use super::pyyaml::{DumpError, Py, YamlError, safe_load};
use super::release;
use crate::fsread;

/// The option SGLang looks for.
pub(crate) const CONFIG_OPTION: &str = "--config";

/// How one SGLang version turns the file into tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// 0.5.5–0.5.9: no option table; `true` → bare flag, `false` → nothing; mappings via `str()`.
    Legacy,
    /// 0.5.10–0.5.22: store_true / unsupported actions looked up by dest; mappings via `str()`.
    DestKeys,
    /// 0.5.23+: looked up by dest or any long spelling; mappings via `json.dumps`.
    AllSpellings,
}

/// The dialect of this flag set, or `None` when the version has no `--config` merging.
pub(crate) fn dialect(flags: &FlagSet) -> Option<Dialect> {
    flags.action(CONFIG_OPTION)?;
    let v = flags.release();
    Some(if release::at_least(v, "0.5.23") {
        Dialect::AllSpellings
    } else if release::at_least(v, "0.5.10") {
        Dialect::DestKeys
    } else {
        Dialect::Legacy
    })
}

/// Why SGLang refuses a `--config` file: the exception its merger raises (or lets through
/// from PyYAML / `json.dumps`), displayed as the traceback's last line.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConfigError {
    #[error("ValueError: Multiple config files specified! Only one allowed.")]
    Multiple,
    #[error("ValueError: No config file specified after --config flag!")]
    NoFileName,
    /// The file name does not end in `.yaml` / `.yml` (`suffix`: what it ends in, maybe empty).
    #[error("ValueError: Config file must be YAML format, got: {suffix}")]
    NotYaml { suffix: String },
    #[error("ValueError: Config file not found: {path}")]
    NotFound { path: String },
    /// `open()` failed: Python's exception class and errno, and the OS's words for it.
    #[error("{class}: [Errno {errno}] {reason}: {}", py_repr_str(.path))]
    Read {
        class: &'static str,
        errno: i32,
        reason: String,
        path: String,
    },
    /// Not a file SGLang could read in bounded time and memory (the launcher's message).
    #[error("{0}")]
    Refused(String),
    /// The file is not UTF-8: the first byte that is not, and where.
    #[error(
        "UnicodeDecodeError: 'utf-8' codec can't decode byte 0x{byte:02x} in position {pos}: invalid start byte (config file {path})"
    )]
    NotUtf8 { byte: u8, pos: usize, path: String },
    #[error(transparent)]
    Yaml(#[from] YamlError),
    /// The document is a list or a scalar.
    #[error("ValueError: Config file must contain a dictionary at root level")]
    NotAMapping,
    /// A key that is not a string (0.5.10+ calls `key.replace`): its Python type.
    #[error("AttributeError: '{0}' object has no attribute 'replace'")]
    KeyNotAString(&'static str),
    /// A key naming an option whose action takes no single value.
    #[error("ValueError: Unsupported config option '{key}' with action '{action}'")]
    Unsupported { key: String, action: &'static str },
    /// A mapping value `json.dumps` cannot write (0.5.23+).
    #[error(transparent)]
    Dump(#[from] DumpError),
}

/// SGLang raises these before argparse runs: a traceback, not a usage message.
impl From<ConfigError> for ArgError {
    fn from(e: ConfigError) -> Self {
        ArgError::exception(e.to_string())
    }
}

/// Where `--config FILE` sits in the user's tokens, as SGLang finds it.
/// `Ok(None)`: no merging (no exact `--config` token, an empty file name, or a version without
/// the feature).
pub(crate) fn locate(
    flags: &FlagSet,
    tokens: &[String],
) -> Result<Option<(usize, String)>, ConfigError> {
    if dialect(flags).is_none() {
        return Ok(None);
    }
    let at: Vec<usize> = tokens
        .iter()
        .enumerate()
        .filter(|(_, t)| *t == CONFIG_OPTION)
        .map(|(i, _)| i)
        .collect();
    match at.as_slice() {
        [] => Ok(None),
        [_, _, ..] => Err(ConfigError::Multiple),
        [i] if *i + 1 == tokens.len() => Err(ConfigError::NoFileName),
        [i] if tokens[*i + 1].is_empty() => Ok(None),
        [i] => Ok(Some((*i, tokens[*i + 1].clone()))),
    }
}

/// Reads the file as SGLang does and returns the tokens it stands for.
pub(crate) fn load(flags: &FlagSet, path: &str) -> Result<Vec<String>, ConfigError> {
    let suffix = py_suffix(path);
    if !matches!(suffix.to_lowercase().as_str(), ".yaml" | ".yml") {
        return Err(ConfigError::NotYaml { suffix });
    }
    let p = Path::new(path);
    if !p.exists() {
        return Err(ConfigError::NotFound {
            path: path.to_owned(),
        });
    }
    // The line is parsed several times per run (secrets, placement, the plan, the fixes): the
    // file is read and converted once while it stays the same.
    let stamp = std::fs::metadata(p)
        .ok()
        .map(|m| (m.len(), m.modified().ok(), m.ino()));
    let key = (path.to_owned(), flags as *const FlagSet as usize);
    if let Some(tokens) = stamp.and_then(|st| cached(&key, st)) {
        return Ok(tokens);
    }
    let bytes = fsread::read(p, fsread::SGLANG_CONFIG).map_err(|e| read_error(e, path))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let pos = e.utf8_error().valid_up_to();
        ConfigError::NotUtf8 {
            byte: e.as_bytes()[pos],
            pos,
            path: path.to_owned(),
        }
    })?;
    let tokens = convert(flags, path, &text)?;
    if let (Some(st), Ok(mut m)) = (stamp, LOADED.lock()) {
        m.insert(key, (st, tokens.clone()));
    }
    Ok(tokens)
}

type Stamp = (u64, Option<std::time::SystemTime>, u64);
type Loaded = HashMap<(String, usize), (Stamp, Vec<String>)>;

static LOADED: std::sync::LazyLock<std::sync::Mutex<Loaded>> =
    std::sync::LazyLock::new(Default::default);

fn cached(key: &(String, usize), stamp: Stamp) -> Option<Vec<String>> {
    let m = LOADED.lock().ok()?;
    m.get(key)
        .filter(|(s, _)| *s == stamp)
        .map(|(_, t)| t.clone())
}

/// The top-level key of a YAML line (`key:`, `"key":`, `'key':`), if the line starts one.
pub(crate) fn key_of(line: &str) -> Option<&str> {
    if line.starts_with([' ', '\t', '-', '#']) {
        return None;
    }
    let (k, _) = line.split_once(':')?;
    Some(k.trim().trim_matches(['"', '\'']))
}

/// The 1-based line of the file's top-level key that stands for `option` (`--a-b` is written
/// `a-b` or `a_b`), for messages that send the user to the file. Read again only on that path.
pub(crate) fn key_line(path: &str, option: &str) -> Option<usize> {
    let bytes = fsread::read(Path::new(path), fsread::SGLANG_CONFIG).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    let want = option.trim_start_matches('-').replace('_', "-");
    text.lines()
        .position(|l| key_of(l).is_some_and(|k| k.replace('_', "-") == want))
        .map(|i| i + 1)
}

/// The `OSError` subclass Python's `open()` raises for this failure; a file SGLang would hang
/// on or fill memory with (a FIFO, a device, gigabytes) gets the launcher's own message.
fn read_error(e: fsread::ReadError, path: &str) -> ConfigError {
    let e = match e.problem {
        fsread::ReadProblem::Os { .. } => std::io::Error::from(e.problem),
        fsread::ReadProblem::NotRegular("a directory") => std::io::ErrorKind::IsADirectory.into(),
        _ => return ConfigError::Refused(e.to_string()),
    };
    let (class, errno, reason) = match e.kind() {
        std::io::ErrorKind::IsADirectory => ("IsADirectoryError", 21, "Is a directory".to_owned()),
        std::io::ErrorKind::PermissionDenied => {
            ("PermissionError", 13, "Permission denied".to_owned())
        }
        _ => ("OSError", e.raw_os_error().unwrap_or(5), e.to_string()),
    };
    ConfigError::Read {
        class,
        errno,
        reason,
        path: path.to_owned(),
    }
}

/// The tokens a config file's text stands for (`name` only labels error messages).
pub fn convert(flags: &FlagSet, name: &str, text: &str) -> Result<Vec<String>, ConfigError> {
    let dialect = dialect(flags).unwrap_or(Dialect::AllSpellings);
    let data = safe_load(name, text)?;
    let pairs = match data {
        Py::None => Vec::new(),
        Py::Dict(pairs) => pairs,
        _ => return Err(ConfigError::NotAMapping),
    };
    let table = Table::new(flags, dialect);
    let mut out = Vec::new();
    for (key, value) in pairs {
        let key_text = match (&key, dialect) {
            (Py::Str(s), _) => s.clone(),
            (other, Dialect::Legacy) => other.py_str(),
            (other, _) => return Err(ConfigError::KeyNotAString(other.type_name())),
        };
        let norm = key_text.replace('-', "_");
        if let Some(&action) = table.unsupported.get(&norm) {
            return Err(ConfigError::Unsupported { key: norm, action });
        }
        let option = format!("--{key_text}");
        match value {
            Py::Bool(b) => {
                let bare = dialect == Dialect::Legacy || table.store_true.contains(&norm);
                if bare {
                    if b {
                        out.push(option);
                    }
                } else {
                    out.push(option);
                    out.push(if b { "true" } else { "false" }.to_owned());
                }
            }
            Py::List(items) => {
                if !items.is_empty() {
                    out.push(option);
                    out.extend(items.iter().map(Py::py_str));
                }
            }
            Py::Dict(_) if dialect == Dialect::AllSpellings => {
                out.push(option);
                out.push(value.json_dumps()?);
            }
            other => {
                out.push(option);
                out.push(other.py_str());
            }
        }
    }
    Ok(out)
}

/// `pathlib.PurePosixPath(path).suffix` (Python 3.11).
fn py_suffix(path: &str) -> String {
    let name = path
        .split('/')
        .rfind(|c| !c.is_empty() && *c != ".")
        .unwrap_or("");
    match name.rfind('.') {
        Some(i) if i > 0 && i + 1 < name.len() => name[i..].to_owned(),
        _ => String::new(),
    }
}

/// The option table SGLang's merger builds from its parser (hashed: a file of n keys takes n
/// look-ups, not n passes over the options).
struct Table {
    store_true: HashSet<String>,
    /// normalized key → action class name
    unsupported: HashMap<String, &'static str>,
}

/// The Python class behind an action kind (SGLang's deprecated store_true is its own class,
/// not a `_StoreTrueAction`).
fn class_name(a: &Action) -> &'static str {
    match a.kind {
        ActionKind::Store => "_StoreAction",
        ActionKind::StoreTrue if a.deprecated_for.is_some() => "DeprecatedStoreTrueAction",
        ActionKind::StoreTrue => "_StoreTrueAction",
        ActionKind::StoreFalse => "_StoreFalseAction",
        ActionKind::StoreConst => "_StoreConstAction",
        ActionKind::BooleanOptional => "BooleanOptionalAction",
        ActionKind::Help => "_HelpAction",
        ActionKind::LoraPaths => "LoRAPathAction",
        ActionKind::Deprecated => "DeprecatedAction",
        ActionKind::DeprecatedStoreConst => "DeprecatedStoreConstAction",
    }
}

impl Table {
    fn new(flags: &FlagSet, dialect: Dialect) -> Table {
        let is_store_true = |a: &Action| class_name(a) == "_StoreTrueAction";
        let excluded = |a: &Action| {
            a.option_strings.is_empty()
                || a.option_strings
                    .iter()
                    .any(|o| o == CONFIG_OPTION || o == "--help" || o == "-h")
        };
        match dialect {
            Dialect::Legacy => Table {
                store_true: HashSet::new(),
                unsupported: HashMap::new(),
            },
            Dialect::DestKeys => {
                let store_true = flags
                    .actions
                    .iter()
                    .filter(|a| is_store_true(a))
                    .map(|a| a.dest.clone())
                    .collect();
                let mut unsupported = HashMap::new();
                for a in &flags.actions {
                    if !excluded(a) && !is_store_true(a) && a.kind != ActionKind::Store {
                        unsupported.insert(a.dest.clone(), class_name(a));
                    }
                }
                Table {
                    store_true,
                    unsupported,
                }
            }
            Dialect::AllSpellings => {
                let keys = |a: &Action| -> Vec<String> {
                    let mut k = vec![a.dest.clone()];
                    k.extend(
                        a.option_strings
                            .iter()
                            .filter_map(|o| o.strip_prefix("--"))
                            .map(|o| o.replace('-', "_")),
                    );
                    k
                };
                let supported = |a: &Action| {
                    is_store_true(a) || a.kind == ActionKind::Store || a.nargs == Nargs::One
                };
                let store_true = flags
                    .actions
                    .iter()
                    .filter(|a| is_store_true(a))
                    .flat_map(keys)
                    .collect();
                let supported_keys: HashSet<String> = flags
                    .actions
                    .iter()
                    .filter(|a| supported(a))
                    .flat_map(keys)
                    .collect();
                let mut unsupported = HashMap::new();
                for a in &flags.actions {
                    if excluded(a) || supported(a) {
                        continue;
                    }
                    for k in keys(a) {
                        if !supported_keys.contains(&k) {
                            unsupported.insert(k, class_name(a));
                        }
                    }
                }
                Table {
                    store_true,
                    unsupported,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sglang::flagset;

    fn conv(version: &str, yaml: &str) -> Result<Vec<String>, String> {
        convert(flagset::get(version).unwrap(), "t.yaml", yaml).map_err(|e| e.to_string())
    }

    #[test]
    fn versions_without_config_do_not_merge() {
        let toks = vec!["--config".to_owned(), "a.yaml".to_owned()];
        assert_eq!(locate(flagset::get("0.5.2").unwrap(), &toks), Ok(None));
        assert_eq!(
            locate(flagset::get("0.5.23").unwrap(), &toks),
            Ok(Some((0, "a.yaml".to_owned())))
        );
        assert_eq!(
            dialect(flagset::get("0.5.5").unwrap()),
            Some(Dialect::Legacy)
        );
        assert_eq!(
            dialect(flagset::get("0.5.10.post1").unwrap()),
            Some(Dialect::DestKeys)
        );
    }

    #[test]
    fn locate_errors_and_empty_name() {
        let f = flagset::get("0.5.23").unwrap();
        let t = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(
            locate(f, &t(&["--config"]))
                .unwrap_err()
                .to_string()
                .contains("No config file")
        );
        assert!(
            locate(f, &t(&["--config", "a.yaml", "--config", "b.yaml"]))
                .unwrap_err()
                .to_string()
                .contains("Multiple")
        );
        assert_eq!(locate(f, &t(&["--config", ""])), Ok(None));
        assert_eq!(locate(f, &t(&["--config=a.yaml"])), Ok(None));
    }

    #[test]
    fn yaml_1_1_scalars_become_python_strings() {
        let got = conv(
            "0.5.23",
            "served-model-name: 1e3\nrevision: 0x1F\nmodel-path: 012\nseed: 1_000\nport: 1:30\n\
             context-length: ~\nchat-template: 2024-01-02\nload-format: .5\nquantization: 1.0e+3\n",
        )
        .unwrap();
        assert_eq!(
            got,
            [
                "--served-model-name",
                "1e3",
                "--revision",
                "31",
                "--model-path",
                "10",
                "--seed",
                "1000",
                "--port",
                "90",
                "--context-length",
                "None",
                "--chat-template",
                "2024-01-02",
                "--load-format",
                "0.5",
                "--quantization",
                "1000.0"
            ]
        );
    }

    #[test]
    fn booleans_depend_on_the_action_and_version() {
        let y = "trust-remote-code: yes\nenable-metrics: off\nrevision: true\n";
        assert_eq!(
            conv("0.5.23", y).unwrap(),
            ["--trust-remote-code", "--revision", "true"]
        );
        // 0.5.10 matches dests only: the dashed key is not found, so it gets a value.
        assert_eq!(
            conv(
                "0.5.10.post1",
                "trust_remote_code: true\ntrust-remote-code: true\n"
            )
            .unwrap(),
            ["--trust_remote_code", "--trust-remote-code"]
        );
        assert_eq!(
            conv("0.5.5", y).unwrap(),
            ["--trust-remote-code", "--revision"]
        );
    }

    #[test]
    fn lists_and_mappings() {
        let y = "cuda-graph-bs: [1, 2, 4]\nlora-target-modules: []\njson-model-override-args: {a: 1, b: [1, 2.5], c: null, d: 'x'}\n";
        assert_eq!(
            conv("0.5.10.post1", y).unwrap(),
            [
                "--cuda-graph-bs",
                "1",
                "2",
                "4",
                "--json-model-override-args",
                "{'a': 1, 'b': [1, 2.5], 'c': None, 'd': 'x'}"
            ]
        );
        let y = "json-model-override-args: {a: 1, b: [1, 2.5], c: null, d: \"é\"}\n";
        assert_eq!(
            conv("0.5.23", y).unwrap(),
            [
                "--json-model-override-args",
                r#"{"a": 1, "b": [1, 2.5], "c": null, "d": "\u00e9"}"#
            ]
        );
    }

    #[test]
    fn unsupported_actions_are_value_errors() {
        assert_eq!(
            conv("0.5.23", "disable_cuda_graph: true\n").unwrap_err(),
            "ValueError: Unsupported config option 'disable_cuda_graph' with action 'DeprecatedStoreTrueAction'"
        );
        assert_eq!(
            conv("0.5.23", "no-enable-tf32-matmul: true\n").unwrap_err(),
            "ValueError: Unsupported config option 'no_enable_tf32_matmul' with action 'BooleanOptionalAction'"
        );
        assert!(
            conv("0.5.10.post1", "lora_paths: [a]\n")
                .unwrap_err()
                .contains("LoRAPathAction")
        );
        assert!(conv("0.5.5", "lora_paths: [a]\n").is_ok());
    }

    #[test]
    fn document_shape_errors() {
        assert_eq!(conv("0.5.23", "").unwrap(), Vec::<String>::new());
        assert_eq!(
            conv("0.5.23", "- a\n").unwrap_err(),
            "ValueError: Config file must contain a dictionary at root level"
        );
        assert_eq!(
            conv("0.5.23", "1: x\n").unwrap_err(),
            "AttributeError: 'int' object has no attribute 'replace'"
        );
        assert_eq!(conv("0.5.5", "1: x\n").unwrap(), ["--1", "x"]);
        assert!(
            conv("0.5.23", "a: [1\n")
                .unwrap_err()
                .starts_with("ParserError")
        );
        assert!(
            conv("0.5.23", "a: 1\n---\nb: 2\n")
                .unwrap_err()
                .starts_with("ComposerError")
        );
        assert!(
            conv("0.5.23", "a: !foo x\n")
                .unwrap_err()
                .contains("'!foo'")
        );
    }

    #[test]
    fn duplicates_anchors_and_merge_keys() {
        assert_eq!(
            conv("0.5.23", "a: 1\nb: 2\na: 3\n").unwrap(),
            ["--a", "3", "--b", "2"]
        );
        let y = "base: &b {tp-size: 2, port: 1}\nx: *b\n<<: *b\nport: 5\n";
        assert_eq!(
            conv("0.5.5", y).unwrap(),
            [
                "--tp-size",
                "2",
                "--port",
                "5",
                "--base",
                "{'tp-size': 2, 'port': 1}",
                "--x",
                "{'tp-size': 2, 'port': 1}"
            ]
        );
    }

    #[test]
    fn suffix_like_pathlib() {
        assert_eq!(py_suffix("a/b.YAML"), ".YAML");
        assert_eq!(py_suffix(".yaml"), "");
        assert_eq!(py_suffix("x.yaml/"), ".yaml");
        assert_eq!(py_suffix("x."), "");
        assert_eq!(py_suffix("a.b.yml"), ".yml");
    }

    #[test]
    fn timestamps_and_big_ints() {
        assert_eq!(
            conv(
                "0.5.5",
                "a: 2001-12-14t21:59:43.10-05:00\nb: 123456789012345678901234567890\nc: -0x10\n"
            )
            .unwrap(),
            [
                "--a",
                "2001-12-14 21:59:43.100000-05:00",
                "--b",
                "123456789012345678901234567890",
                "--c",
                "-16"
            ]
        );
        assert!(
            conv("0.5.5", "a: 2024-02-30\n")
                .unwrap_err()
                .contains("day is out of range")
        );
    }
}
