//! Parses SGLang arguments the way SGLang's argparse parser does for one flag set.
//!
//! The algorithm follows CPython 3.11's `argparse.ArgumentParser.parse_args` step by step, since
//! its quirks are part of SGLang's interface: every token is classified first (option `O`,
//! argument `A`, `--`), so an ambiguous abbreviation anywhere is reported before anything else;
//! then options are consumed left to right with their arguments; then required options, then
//! unrecognized arguments. SGLang's parser has no positionals, which keeps the consume loop
//! simple. Messages are argparse's, word for word (checked by `tests/it/conformance.rs`).

use std::collections::{BTreeMap, HashSet};
use std::ffi::OsString;
use std::sync::{Mutex, OnceLock};

use serde_json::{Map, Value};

use super::config_file;
use super::error::{ArgError, SkippedError};
use super::flagset::{Action, ActionKind, FlagSet, Nargs, ValueType};
use super::pyjson::{self, JsonError};
use super::pytypes::{
    as_float, decode_arg, display, float_value, int_value, lossy, py_decimal, py_eq, py_float,
    py_int, py_repr, py_repr_str, py_strip,
};
use super::release;

/// One option as it appeared on the command line.
#[derive(Debug, Clone, PartialEq)]
pub struct Occurrence {
    /// argparse dest of the action.
    pub(crate) dest: String,
    /// The action's first long option string (canonical spelling for reports and fixes).
    pub(crate) option: String,
    /// What the user wrote (an abbreviation, an alias, `--x=v`).
    pub(crate) written: String,
    /// Index of the option token in `SglangArgs::tokens`.
    pub start: usize,
    /// Number of tokens it spans (option plus separate values; 1 for `--x=v`).
    pub len: usize,
    /// The option came from the `--config` file: `start`/`len` then index
    /// `SglangArgs::config`'s tokens, not the user's (which a fix cannot edit).
    pub from_config: bool,
}

/// The tokens SGLang derives from `--config FILE` (see [`super::config_file`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigTokens {
    /// The file name as the user wrote it.
    pub file: String,
    /// Index of the `--config` token in `SglangArgs::tokens`.
    pub(crate) at: usize,
    /// What the file stands for; SGLang places these before the user's own tokens.
    pub tokens: Vec<String>,
}

/// The SGLang arguments: the user's tokens and what argparse makes of them.
#[derive(Debug, Clone)]
pub struct SglangArgs {
    pub flags: &'static FlagSet,
    /// The user's tokens exactly as given (byte-exact, may be non-UTF-8), `--config FILE`
    /// included: what SGLang is run with, and what fixes edit.
    pub tokens: Vec<OsString>,
    /// Set when SGLang would merge a `--config` file: argparse then reads
    /// [`SglangArgs::effective_tokens`], the file's tokens first.
    pub config: Option<ConfigTokens>,
    /// dest → typed value, for every option given (argparse's namespace minus untouched defaults).
    pub values: BTreeMap<String, Value>,
    pub(crate) occurrences: Vec<Occurrence>,
    /// Empty when argparse would accept the command line. argparse stops at its first error,
    /// so this holds at most one.
    pub errors: Vec<ArgError>,
    /// `-h/--help` was reached: argparse prints the help and exits 0 there (nothing after it
    /// is parsed; errors before it still win).
    pub help: bool,
    /// Indices into [`SglangArgs::effective_tokens`] of the tokens argparse leaves
    /// unrecognized (`unrecognized arguments: …`).
    pub(crate) extras: Vec<usize>,
}

impl SglangArgs {
    /// The value given for an option (any of its option strings), if it was given.
    pub(crate) fn get(&self, option: &str) -> Option<&Value> {
        self.values.get(self.flags.dest_of(option)?)
    }

    /// The value given, else the flag set's default. `None` if the option is not in this version.
    pub(crate) fn get_or_default(&self, option: &str) -> Option<&Value> {
        let action = self.flags.action(option)?;
        self.values.get(&action.dest).or(Some(&action.default))
    }

    /// Whether the option was given on the command line.
    pub(crate) fn is_set(&self, option: &str) -> bool {
        self.get(option).is_some()
    }

    /// True for a boolean option that is on (given, or on by default).
    pub fn flag(&self, option: &str) -> bool {
        matches!(self.get_or_default(option), Some(Value::Bool(true)))
    }

    /// An int option. Python ints have no size limit: one beyond i64 (stored as a float)
    /// saturates, so "--tp 99999999999999999999" stays absurd rather than reading as unset.
    pub fn int(&self, option: &str) -> Option<i64> {
        let v = self.get_or_default(option)?;
        v.as_i64().or_else(|| {
            v.as_f64()
                .filter(|f| f.is_finite() && f.fract() == 0.0)
                .map(|f| f.clamp(i64::MIN as f64, i64::MAX as f64) as i64)
        })
    }

    /// A float option; `inf`/`nan` given on the command line (stored as `{"__float__": …}`,
    /// as the conformance goldens record them) come back as the IEEE values.
    pub(crate) fn float(&self, option: &str) -> Option<f64> {
        self.get_or_default(option).and_then(as_float)
    }

    pub fn str(&self, option: &str) -> Option<&str> {
        self.get_or_default(option).and_then(Value::as_str)
    }

    /// Whether this SGLang version knows the option at all.
    pub fn knows(&self, option: &str) -> bool {
        self.flags.action(option).is_some()
    }

    /// Occurrences of the action behind `option`, in command-line order.
    pub fn occurrences_of<'a>(&'a self, option: &str) -> impl Iterator<Item = &'a Occurrence> + 'a {
        let dest = self.flags.dest_of(option).map(str::to_owned);
        self.occurrences
            .iter()
            .filter(move |o| Some(&o.dest) == dest.as_ref())
    }

    pub fn is_ok(&self) -> bool {
        self.errors.is_empty()
    }

    /// Options given through one of SGLang's deprecated actions, with the replacement SGLang
    /// names (if any), in command-line order: SGLang only logs a warning for these.
    #[cfg(test)]
    pub(crate) fn deprecated_uses(&self) -> impl Iterator<Item = (&Occurrence, Option<&str>)> + '_ {
        self.occurrences.iter().filter_map(|o| {
            let a = self.flags.action(&o.option)?;
            let deprecated = matches!(
                a.kind,
                ActionKind::Deprecated | ActionKind::DeprecatedStoreConst
            ) || a.deprecated_for.is_some();
            deprecated.then_some((o, a.deprecated_for.as_deref()))
        })
    }

    /// argparse's namespace: every action's default (first action of a dest wins, suppressed
    /// defaults left out) overlaid with the values given: what SGLang's real parser returns,
    /// as the conformance goldens record it.
    pub fn namespace(&self) -> BTreeMap<String, Value> {
        let mut ns = BTreeMap::new();
        for a in &self.flags.actions {
            if !a.default_is_suppress && !ns.contains_key(&a.dest) {
                ns.insert(a.dest.clone(), a.default.clone());
            }
        }
        for (k, v) in &self.values {
            ns.insert(k.clone(), v.clone());
        }
        ns
    }
}

/// Parse `tokens` with the flag set, as SGLang would: a `--config FILE` is read and merged
/// first (SGLang 0.5.5+); a file SGLang would reject gives an `Exception` error and no values.
pub fn parse(flags: &'static FlagSet, tokens: Vec<OsString>) -> SglangArgs {
    parse_with(flags, tokens, &mut |path| {
        config_file::load(flags, path).map_err(ArgError::from)
    })
}

/// [`parse`] with the config file read through `load` (path → the file's tokens): lets a
/// re-parse reuse what was read once, and tests run without files.
pub fn parse_with(
    flags: &'static FlagSet,
    tokens: Vec<OsString>,
    load: &mut dyn FnMut(&str) -> Result<Vec<String>, ArgError>,
) -> SglangArgs {
    parse_inner(flags, tokens, load, None)
}

/// Where a best-effort parse puts the errors it steps over; `None`: stop at the first, as
/// argparse does.
pub(super) type Sink<'a> = Option<&'a mut Vec<SkippedError>>;

/// [`parse_with`], or with a sink the best-effort parse behind [`SglangArgs::recover`]: a
/// config file SGLang cannot use is left unmerged (its `--config FILE` parsed as the plain
/// option it also is), and each error skips the tokens it is about.
pub(super) fn parse_inner(
    flags: &'static FlagSet,
    tokens: Vec<OsString>,
    load: &mut dyn FnMut(&str) -> Result<Vec<String>, ArgError>,
    sink: Sink,
) -> SglangArgs {
    let strs: Vec<String> = tokens.iter().map(|t| decode_arg(t)).collect();
    let mut out = SglangArgs {
        flags,
        tokens,
        config: None,
        values: BTreeMap::new(),
        occurrences: Vec::new(),
        errors: Vec::new(),
        help: false,
        extras: Vec::new(),
    };
    let parser = Parser::new(flags);
    let located = config_file::locate(flags, &strs)
        .map_err(ArgError::from)
        .and_then(|l| match l {
            Some((at, file)) => load(&file).map(|t| Some((at, file, t))),
            None => Ok(None),
        });
    let (at, file, file_tokens) = match located {
        Ok(Some(found)) => found,
        Ok(None) => {
            if let Err(e) = parser.run(&strs, &mut out, sink) {
                out.errors.push(e);
            }
            return out;
        }
        Err(e) => {
            match sink {
                Some(problems) => {
                    problems.push(SkippedError::whole(e));
                    let _ = parser.run(&strs, &mut out, Some(problems));
                }
                None => out.errors.push(e),
            }
            return out;
        }
    };
    let n = file_tokens.len();
    let mut effective = file_tokens.clone();
    effective.extend(strs[..at].iter().cloned());
    effective.extend(strs[at + 2..].iter().cloned());
    out.config = Some(ConfigTokens {
        file,
        at,
        tokens: file_tokens,
    });
    if let Err(e) = parser.run(&effective, &mut out, sink) {
        out.errors.push(e);
    }
    // Occurrences index the list they came from: the file's tokens or the user's.
    let user = |i: usize| if i - n < at { i - n } else { i - n + 2 };
    for o in &mut out.occurrences {
        if o.start < n {
            o.from_config = true;
        } else {
            let last = user(o.start + o.len.max(1) - 1);
            o.start = user(o.start);
            o.len = if o.len == 0 { 0 } else { last + 1 - o.start };
        }
    }
    out
}

impl SglangArgs {
    /// The tokens argparse reads: the config file's (if any) first, then the user's without
    /// `--config FILE`. Without a config file: the user's tokens.
    /// [`SglangArgs::effective_tokens`], borrowed: checks that only read them copy nothing
    /// (a config file can add many thousands).
    pub fn effective_iter(&self) -> impl Iterator<Item = &std::ffi::OsStr> {
        let (file, at): (&[String], usize) = match &self.config {
            None => (&[], self.tokens.len()),
            Some(c) => (&c.tokens, c.at),
        };
        let after = if self.config.is_some() { at + 2 } else { at };
        file.iter()
            .map(|t| std::ffi::OsStr::new(t.as_str()))
            .chain(
                self.tokens[..at.min(self.tokens.len())]
                    .iter()
                    .map(OsString::as_os_str),
            )
            .chain(self.tokens.iter().skip(after).map(OsString::as_os_str))
    }

    pub fn effective_tokens(&self) -> Vec<OsString> {
        match &self.config {
            None => self.tokens.clone(),
            Some(c) => {
                let mut v: Vec<OsString> = c.tokens.iter().map(OsString::from).collect();
                v.extend(self.tokens[..c.at].iter().cloned());
                v.extend(self.tokens.iter().skip(c.at + 2).cloned());
                v
            }
        }
    }

    /// How many leading [`SglangArgs::effective_tokens`] came from the config file.
    pub fn config_len(&self) -> usize {
        self.config.as_ref().map_or(0, |c| c.tokens.len())
    }

    /// Parses edited user tokens, reusing the config file already read (when the edit kept
    /// `--config` and its file name), so a fix never re-reads the file.
    pub(crate) fn reparse(&self, tokens: Vec<OsString>) -> SglangArgs {
        let cached = self.config.clone();
        parse_with(self.flags, tokens, &mut |path| match &cached {
            Some(c) if c.file == path => Ok(c.tokens.clone()),
            _ => config_file::load(self.flags, path).map_err(ArgError::from),
        })
    }

    /// Indices of the user's tokens that may be option strings: not an option's value, not
    /// the config file's name (options this flag set does not know are matched as written).
    pub(crate) fn option_words(&self) -> impl Iterator<Item = usize> + '_ {
        let values: Vec<usize> = self
            .occurrences
            .iter()
            .filter(|o| !o.from_config)
            .flat_map(|o| o.start + 1..o.start + o.len)
            .chain(self.config.as_ref().map(|c| c.at + 1))
            .collect();
        (0..self.tokens.len()).filter(move |i| !values.contains(i))
    }

    /// The user's own occurrences of the action behind `option` (not the config file's).
    pub fn user_occurrences_of<'a>(
        &'a self,
        option: &str,
    ) -> impl Iterator<Item = &'a Occurrence> + 'a {
        self.occurrences_of(option).filter(|o| !o.from_config)
    }

    /// The config file that gives the action behind `option`, if it does.
    pub(crate) fn config_file_setting(&self, option: &str) -> Option<&str> {
        let c = self.config.as_ref()?;
        self.occurrences_of(option)
            .any(|o| o.from_config)
            .then_some(c.file.as_str())
    }
}

impl SglangArgs {
    /// Arguments with values set directly (no tokens): for unit tests of rules and planners
    /// that should not depend on the parser. Options are named by any option string.
    pub fn with_values(flags: &'static FlagSet, values: &[(&str, Value)]) -> SglangArgs {
        let values = values
            .iter()
            .map(|(opt, v)| {
                let dest = flags
                    .dest_of(opt)
                    .unwrap_or_else(|| panic!("{opt} not in {}", flags.version));
                (dest.to_owned(), v.clone())
            })
            .collect();
        SglangArgs {
            flags,
            tokens: Vec::new(),
            config: None,
            values,
            occurrences: Vec::new(),
            errors: Vec::new(),
            help: false,
            extras: Vec::new(),
        }
    }
}

/// An option token resolved to an action (or to nothing: an unknown option).
#[derive(Debug, Clone)]
struct OptTuple {
    action: Option<usize>,
    option: String,
    explicit: Option<String>,
}

#[derive(Debug, Clone)]
enum Slot {
    Arg,
    DashDash,
    Opt(OptTuple),
    /// A best-effort parse steps over this token (an ambiguous abbreviation).
    Skip,
}

/// End of the tokens an option at `i` stands for: itself and the arguments after it.
fn span_end(slots: &[Slot], i: usize) -> usize {
    i + 1
        + slots[i + 1..]
            .iter()
            .take_while(|s| matches!(s, Slot::Arg))
            .count()
}

/// Unrecognized tokens in runs: each unknown option with the stray arguments after it, and
/// stray arguments on their own.
fn extra_groups(extras: &[usize], slots: &[Slot]) -> Vec<std::ops::Range<usize>> {
    let mut groups: Vec<std::ops::Range<usize>> = Vec::new();
    for &i in extras {
        let is_option = matches!(slots.get(i), Some(Slot::Opt(_)));
        match groups.last_mut() {
            Some(g) if g.end == i && !is_option => g.end = i + 1,
            _ => groups.push(i..i + 1),
        }
    }
    groups
}

/// The action argparse takes the option token `token` for (exact, `--x=v`, or a unique
/// abbreviation), by index into `flags.actions`; `None` when it is ambiguous, unknown or no option.
pub(crate) fn action_for(flags: &'static FlagSet, token: &str) -> Option<usize> {
    match Parser::new(flags).classify(token) {
        Ok(Slot::Opt(OptTuple {
            action: Some(i), ..
        })) => Some(i),
        _ => None,
    }
}

struct Parser {
    flags: &'static FlagSet,
    tables: &'static Tables,
}

/// What parsing needs of a flag set whatever the line: built once per flag set, since a check
/// parses its line several times (the secrets, each fix round, the recovery).
struct Tables {
    /// Option strings in registration order (argparse's `_option_string_actions` order).
    options: Vec<(&'static str, usize)>,
    /// Places in `options`, sorted by option string: the options with a given prefix are one
    /// run of it, found by binary search instead of a pass over every option. Built on first
    /// use (a line of exact options needs none).
    by_name: OnceLock<Vec<usize>>,
    /// The long options, sorted (on first use).
    long: OnceLock<Vec<&'static str>>,
    /// Prefix lookups so far, answered by a pass over `options` until [`DIRECT_PREFIX_LOOKUPS`].
    prefix_lookups: std::sync::atomic::AtomicUsize,
    has_negative_number_optionals: bool,
}

/// How many prefix lookups pass over the options before the sorted index is built.
const DIRECT_PREFIX_LOOKUPS: usize = 32;

impl Tables {
    fn of(flags: &'static FlagSet) -> Tables {
        let mut options = Vec::with_capacity(flags.actions.len() * 2);
        for (i, a) in flags.actions.iter().enumerate() {
            for o in &a.option_strings {
                options.push((o.as_str(), i));
            }
        }
        let has_negative_number_optionals = options.iter().any(|(o, _)| looks_negative(o));
        Tables {
            options,
            by_name: OnceLock::new(),
            long: OnceLock::new(),
            prefix_lookups: std::sync::atomic::AtomicUsize::new(0),
            has_negative_number_optionals,
        }
    }

    /// The tables of `flags`, kept for the process: a flag set handed to the parser lives as
    /// long (it is `'static`), so its address names it.
    fn of_static(flags: &'static FlagSet) -> &'static Tables {
        static KEPT: Mutex<Vec<(usize, &'static Tables)>> = Mutex::new(Vec::new());
        let key = std::ptr::from_ref(flags) as usize;
        let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, t)) = kept.iter().find(|(k, _)| *k == key) {
            return t;
        }
        let t: &'static Tables = Box::leak(Box::new(Tables::of(flags)));
        kept.push((key, t));
        t
    }
}

/// The Jaro-Winkler similarity from which an unknown option is close to a known one: "did you
/// mean" suggests it (and `secrets` hides the values of one close to a secret option).
pub(crate) const CLOSE_OPTION: f64 = 0.88;

/// Unrecognized options that get a fuzzy "did you mean" (each is compared with every option):
/// a line with thousands of them still gets its hints for the first ones in a few ms.
const FUZZY_SUGGESTIONS: usize = 32;

/// `^-\d+$|^-\d*\.\d+$` (Python `re`: `\d` is any Unicode decimal, `$` also before a final `\n`).
fn looks_negative(s: &str) -> bool {
    let Some(body) = s.strip_prefix('-') else {
        return false;
    };
    let body = body.strip_suffix('\n').unwrap_or(body);
    let digits = |t: &str| t.chars().all(|c| py_decimal(c).is_some());
    match body.split_once('.') {
        None => !body.is_empty() && digits(body),
        Some((a, b)) => digits(a) && !b.is_empty() && digits(b),
    }
}

fn argument_error(action: &Action, msg: &str) -> ArgError {
    ArgError::usage(format!(
        "argument {}: {msg}",
        action.option_strings.join("/")
    ))
}

/// The action's first long option string, else its first.
fn canonical(action: &Action) -> String {
    action
        .option_strings
        .iter()
        .find(|o| o.starts_with("--"))
        .or(action.option_strings.first())
        .cloned()
        .unwrap_or_default()
}

impl Parser {
    fn new(flags: &'static FlagSet) -> Parser {
        Parser {
            flags,
            tables: Tables::of_static(flags),
        }
    }

    fn options(&self) -> &'static [(&'static str, usize)] {
        &self.tables.options
    }

    fn by_name(&self) -> &'static [usize] {
        let options = self.options();
        self.tables.by_name.get_or_init(|| {
            let mut by_name: Vec<usize> = (0..options.len()).collect();
            by_name.sort_by_key(|&p| options[p].0);
            by_name
        })
    }

    fn long(&self) -> &'static [&'static str] {
        self.tables.long.get_or_init(|| {
            let mut long: Vec<&'static str> = self
                .options()
                .iter()
                .map(|(o, _)| *o)
                .filter(|o| o.starts_with("--"))
                .collect();
            long.sort_unstable();
            long.dedup();
            long
        })
    }

    /// Places in `options` of the option strings starting with `prefix`, in registration order.
    fn with_prefix(&self, prefix: &str) -> Vec<usize> {
        // A few abbreviations (a typical line has one or two) cost less as a pass over the
        // options than sorting them; many (a config file's keys) use the sorted index.
        let asked = (self.tables.prefix_lookups).fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if asked < DIRECT_PREFIX_LOOKUPS && self.tables.by_name.get().is_none() {
            let options = self.options();
            return (0..options.len())
                .filter(|&p| options[p].0.starts_with(prefix))
                .collect();
        }
        let by_name = self.by_name();
        let from = by_name.partition_point(|&p| self.options()[p].0 < prefix);
        let mut out: Vec<usize> = by_name[from..]
            .iter()
            .copied()
            .take_while(|&p| self.options()[p].0.starts_with(prefix))
            .collect();
        out.sort_unstable();
        out
    }

    /// The long options starting with `prefix` (sorted).
    fn long_with_prefix(&self, prefix: &str) -> &[&'static str] {
        let long = self.long();
        let from = long.partition_point(|o| *o < prefix);
        let n = long[from..]
            .iter()
            .take_while(|o| o.starts_with(prefix))
            .count();
        &long[from..from + n]
    }

    fn action(&self, i: usize) -> &'static Action {
        &self.flags.actions[i]
    }

    /// argparse's `_parse_optional`: is this token an option, and which?
    fn classify(&self, arg: &str) -> Result<Slot, ArgError> {
        if !arg.starts_with('-') {
            return Ok(Slot::Arg);
        }
        if let Some(i) = self.flags.position(arg) {
            return Ok(Slot::Opt(OptTuple {
                action: Some(i),
                option: arg.to_owned(),
                explicit: None,
            }));
        }
        if arg.chars().count() == 1 {
            return Ok(Slot::Arg);
        }
        if let Some((opt, value)) = arg.split_once('=')
            && let Some(i) = self.flags.position(opt)
        {
            return Ok(Slot::Opt(OptTuple {
                action: Some(i),
                option: opt.to_owned(),
                explicit: Some(value.to_owned()),
            }));
        }
        let tuples = self.option_tuples(arg);
        if tuples.len() > 1 {
            let matches: Vec<&str> = tuples.iter().map(|t| t.option.as_str()).collect();
            return Err(ArgError::usage(format!(
                "ambiguous option: {} could match {}",
                display(arg),
                matches.join(", ")
            )));
        }
        if let Some(t) = tuples.into_iter().next() {
            return Ok(Slot::Opt(t));
        }
        if looks_negative(arg) && !self.tables.has_negative_number_optionals {
            return Ok(Slot::Arg);
        }
        if arg.contains(' ') {
            return Ok(Slot::Arg);
        }
        Ok(Slot::Opt(OptTuple {
            action: None,
            option: arg.to_owned(),
            explicit: None,
        }))
    }

    /// argparse's `_get_option_tuples`: the options an abbreviation could stand for.
    fn option_tuples(&self, arg: &str) -> Vec<OptTuple> {
        let mut out = Vec::new();
        let second = arg.chars().nth(1);
        if second == Some('-') {
            if self.flags.allow_abbrev {
                let (prefix, explicit) = match arg.split_once('=') {
                    Some((p, v)) => (p, Some(v.to_owned())),
                    None => (arg, None),
                };
                for p in self.with_prefix(prefix) {
                    let (o, i) = self.options()[p];
                    out.push(OptTuple {
                        action: Some(i),
                        option: o.to_owned(),
                        explicit: explicit.clone(),
                    });
                }
            }
        } else {
            // single-dash: `-xVALUE` for a one-letter option, or a prefix of a longer one
            let split = arg.char_indices().nth(2).map_or(arg.len(), |(i, _)| i);
            let (short, rest) = arg.split_at(split);
            // `short` exactly, or any option `arg` is a prefix of (never both for one option:
            // an exact match of `arg` was taken before this)
            let mut places = self.with_prefix(arg);
            places.extend(
                self.with_prefix(short)
                    .into_iter()
                    .filter(|&p| self.options()[p].0 == short),
            );
            places.sort_unstable();
            places.dedup();
            for p in places {
                let (o, i) = self.options()[p];
                if o == short {
                    out.push(OptTuple {
                        action: Some(i),
                        option: o.to_owned(),
                        explicit: Some(rest.to_owned()),
                    });
                } else if o.starts_with(arg) {
                    out.push(OptTuple {
                        action: Some(i),
                        option: o.to_owned(),
                        explicit: None,
                    });
                }
            }
        }
        out
    }

    /// argparse's `parse_known_args` and its error for leftovers. With a sink, errors are
    /// collected there and parsing goes on past the tokens each is about.
    fn run(&self, strs: &[String], out: &mut SglangArgs, mut sink: Sink) -> Result<(), ArgError> {
        let slots = self.classify_all(strs, &mut sink)?;
        match self.consume_all(strs, &slots, out, &mut sink)? {
            Some(seen) => self.leftovers(strs, &slots, &seen, out, sink),
            None => Ok(()), // help
        }
    }

    /// Step 1: classify every token (ambiguity errors come out here, before anything else).
    /// A best-effort parse marks an ambiguous token `Skip`.
    fn classify_all(&self, strs: &[String], sink: &mut Sink) -> Result<Vec<Slot>, ArgError> {
        let mut slots = Vec::with_capacity(strs.len());
        let mut failed = Vec::new();
        let mut iter = strs.iter();
        for s in iter.by_ref() {
            if s == "--" {
                slots.push(Slot::DashDash);
                break;
            }
            match self.classify(s) {
                Ok(slot) => slots.push(slot),
                Err(e) if sink.is_some() => {
                    failed.push((slots.len(), e));
                    slots.push(Slot::Skip);
                }
                Err(e) => return Err(e),
            }
        }
        slots.extend(iter.map(|_| Slot::Arg));
        if let Some(problems) = sink.as_deref_mut() {
            for (i, e) in failed {
                problems.push(SkippedError::at(e, i..span_end(&slots, i)));
            }
        }
        Ok(slots)
    }

    /// Step 2: consume options and their arguments; stray arguments are extras. Which actions
    /// were seen, or `None` when `--help` ends parsing.
    fn consume_all(
        &self,
        strs: &[String],
        slots: &[Slot],
        out: &mut SglangArgs,
        sink: &mut Sink,
    ) -> Result<Option<Vec<bool>>, ArgError> {
        let mut seen = vec![false; self.flags.actions.len()];
        let opt_indices: Vec<usize> = (0..slots.len())
            .filter(|&i| matches!(slots[i], Slot::Opt(_) | Slot::Skip))
            .collect();
        let mut start = 0;
        for &next in &opt_indices {
            if next < start {
                continue; // consumed as an argument of an earlier option (cannot happen: `O` is never an argument)
            }
            out.extras.extend(start..next);
            let consumed = match slots[next] {
                Slot::Skip => Ok(Some(span_end(slots, next))),
                _ => self.consume_optional(next, strs, slots, &mut seen, out),
            };
            start = match (consumed, sink.as_deref_mut()) {
                (Ok(Some(stop)), _) => stop,
                (Ok(None), _) => return Ok(None),
                (Err(e), None) => return Err(e),
                (Err(e), Some(problems)) => {
                    let end = span_end(slots, next);
                    problems.push(SkippedError::at(e, next..end));
                    end
                }
            };
        }
        out.extras.extend(start..strs.len());
        Ok(Some(seen))
    }

    /// Steps 3 and 4: required options, then what is left over.
    fn leftovers(
        &self,
        strs: &[String],
        slots: &[Slot],
        seen: &[bool],
        out: &SglangArgs,
        mut sink: Sink,
    ) -> Result<(), ArgError> {
        let missing: Vec<String> = self
            .flags
            .actions
            .iter()
            .zip(seen)
            .filter(|(a, seen)| a.required && !**seen)
            .map(|(a, _)| a.option_strings.join("/"))
            .collect();
        // "did you mean" for the leftovers goes with whichever error argparse reports
        // (`--model_path m` fails as "required", and the hint is the fix)
        let mut suggestions: Vec<String> = Vec::new();
        let mut suggested: HashSet<String> = HashSet::new();
        let mut asked: HashSet<&str> = HashSet::new();
        let mut fuzzy_left = FUZZY_SUGGESTIONS;
        for &i in &out.extras {
            if !asked.insert(strs[i].as_str()) {
                continue;
            }
            for s in self.suggest(&strs[i], &mut fuzzy_left) {
                if suggested.insert(s.clone()) {
                    suggestions.push(s);
                }
            }
        }
        if !missing.is_empty() {
            let mut e = ArgError::usage(format!(
                "the following arguments are required: {}",
                missing.join(", ")
            ));
            e.suggestions = suggestions.clone();
            match sink.as_deref_mut() {
                Some(problems) => problems.push(SkippedError::whole(e)),
                None => return Err(e),
            }
        }
        if !out.extras.is_empty() {
            let words: Vec<String> = out.extras.iter().map(|&i| display(&strs[i])).collect();
            let mut e = ArgError::usage(format!("unrecognized arguments: {}", words.join(" ")));
            e.suggestions = suggestions;
            match sink {
                Some(problems) => problems.push(SkippedError {
                    error: e,
                    spans: extra_groups(&out.extras, slots),
                }),
                None => return Err(e),
            }
        }
        Ok(())
    }

    /// How many of the upcoming slots (`None`: the explicit `=value`) the action takes.
    fn match_count(&self, action: &Action, slots: Option<&[Slot]>) -> Result<usize, ArgError> {
        let avail = match slots {
            None => 1,
            Some(s) => s.iter().take_while(|s| matches!(s, Slot::Arg)).count(),
        };
        let need = |n: usize, msg: String| {
            if avail >= n {
                Ok(n)
            } else {
                Err(argument_error(action, &msg))
            }
        };
        match action.nargs {
            Nargs::One => need(1, "expected one argument".into()),
            Nargs::Zero => Ok(0),
            Nargs::Optional => Ok(avail.min(1)),
            Nargs::ZeroOrMore => Ok(avail),
            Nargs::OneOrMore => {
                if avail >= 1 {
                    Ok(avail)
                } else {
                    Err(argument_error(action, "expected at least one argument"))
                }
            }
            Nargs::Exactly(n) => {
                let n = n as usize;
                let msg = if n == 1 {
                    "expected 1 argument".to_owned()
                } else {
                    format!("expected {n} arguments")
                };
                // an explicit `=value` is one argument: it satisfies only n == 1
                if slots.is_none() && n != 1 {
                    return Err(argument_error(action, &msg));
                }
                need(n, msg)
            }
        }
    }

    /// argparse's `consume_optional`. Returns the index after the option's arguments, or
    /// `None` when `--help` ends parsing.
    fn consume_optional(
        &self,
        index: usize,
        strs: &[String],
        slots: &[Slot],
        seen: &mut [bool],
        out: &mut SglangArgs,
    ) -> Result<Option<usize>, ArgError> {
        let Slot::Opt(tuple) = &slots[index] else {
            return Ok(Some(index + 1));
        };
        let Some(mut ai) = tuple.action else {
            out.extras.push(index);
            return Ok(Some(index + 1));
        };
        let mut option = tuple.option.clone();
        let mut explicit = tuple.explicit.clone();
        let mut taken: Vec<(usize, Vec<String>, String)> = Vec::new();
        let stop;
        loop {
            let action = self.action(ai);
            if let Some(ex) = explicit.clone() {
                let count = self.match_count(action, None)?;
                let second = option.chars().nth(1);
                if count == 0 && second != Some('-') && !ex.is_empty() {
                    // `-xyz`: more single-letter flags packed into one token
                    taken.push((ai, Vec::new(), option.clone()));
                    let mut rest = ex.chars();
                    let first = rest.next().unwrap_or_default();
                    let next_opt = format!("-{first}");
                    let rest: String = rest.collect();
                    match self.flags.position(next_opt.as_str()) {
                        Some(next) => {
                            ai = next;
                            option = next_opt;
                            explicit = (!rest.is_empty()).then_some(rest);
                        }
                        None => {
                            return Err(argument_error(
                                action,
                                &format!("ignored explicit argument {}", py_repr_str(&ex)),
                            ));
                        }
                    }
                } else if count == 1 {
                    taken.push((ai, vec![ex], option.clone()));
                    stop = index + 1;
                    break;
                } else {
                    return Err(argument_error(
                        action,
                        &format!("ignored explicit argument {}", py_repr_str(&ex)),
                    ));
                }
            } else {
                let first = index + 1;
                let count = self.match_count(action, Some(&slots[first.min(slots.len())..]))?;
                stop = first + count;
                taken.push((ai, strs[first..stop].to_vec(), option.clone()));
                break;
            }
        }
        self.take_actions(taken, (index, stop), &display(&strs[index]), seen, out)
    }

    /// argparse's `take_action` for every action one option token stands for (several for
    /// packed `-xyz` flags), in order: `taken` holds (action, its argument strings, the option
    /// as written), `span` the tokens the option covers. `None` when `--help` ends parsing.
    fn take_actions(
        &self,
        taken: Vec<(usize, Vec<String>, String)>,
        (index, stop): (usize, usize),
        written: &str,
        seen: &mut [bool],
        out: &mut SglangArgs,
    ) -> Result<Option<usize>, ArgError> {
        for (ai, args, option) in taken {
            let action = self.action(ai);
            seen[ai] = true;
            let occurrence = Occurrence {
                dest: action.dest.clone(),
                option: canonical(action),
                written: written.to_owned(),
                start: index,
                len: stop - index,
                from_config: false,
            };
            if action.kind == ActionKind::Help {
                out.occurrences.push(occurrence);
                out.help = true;
                return Ok(None);
            }
            let value = self.get_values(action, args)?;
            self.apply(action, value, &option, out)?;
            out.occurrences.push(occurrence);
        }
        Ok(Some(stop))
    }

    /// argparse's `_get_values`: the raw strings → the value handed to the action.
    fn get_values(&self, action: &Action, mut args: Vec<String>) -> Result<Value, ArgError> {
        if let Some(p) = args.iter().position(|a| a == "--") {
            args.remove(p);
        }
        if args.is_empty() && action.nargs == Nargs::Optional {
            return match &action.r#const {
                Value::String(s) => {
                    let v = self.convert(action, s)?;
                    self.check_choice(action, &v)?;
                    Ok(v)
                }
                other => Ok(other.clone()),
            };
        }
        if args.len() == 1 && matches!(action.nargs, Nargs::One | Nargs::Optional) {
            let v = self.convert(action, &args[0])?;
            self.check_choice(action, &v)?;
            return Ok(v);
        }
        // every other shape is a list (including `--x=--`, whose one argument was removed)
        let mut items = Vec::with_capacity(args.len());
        for a in &args {
            items.push(self.convert(action, a)?);
        }
        for v in &items {
            self.check_choice(action, v)?;
        }
        Ok(Value::Array(items))
    }

    fn check_choice(&self, action: &Action, v: &Value) -> Result<(), ArgError> {
        let Some(choices) = &action.choices else {
            return Ok(());
        };
        if choices.iter().any(|c| py_eq(c, v)) {
            return Ok(());
        }
        let list: Vec<String> = choices.iter().map(py_repr).collect();
        Err(argument_error(
            action,
            &format!(
                "invalid choice: {} (choose from {})",
                py_repr(v),
                list.join(", ")
            ),
        ))
    }

    /// The action's `type=` applied to one string, with argparse's error wording.
    fn convert(&self, action: &Action, raw: &str) -> Result<Value, ArgError> {
        let invalid = |type_name: &str| {
            argument_error(
                action,
                &format!("invalid {type_name} value: {}", py_repr_str(raw)),
            )
        };
        match action.value_type {
            ValueType::Str | ValueType::None => Ok(Value::String(lossy(raw))),
            ValueType::Int => py_int(raw).ok_or_else(|| invalid("int")),
            ValueType::Float => py_float(raw)
                .map(float_value)
                .ok_or_else(|| invalid("float")),
            ValueType::Json => pyjson::loads(raw).map_err(|_| invalid("loads")),
            ValueType::JsonList => {
                // SGLang uses orjson here: strict RFC 8259 (no NaN, no lone surrogates, numbers
                // beyond 64 bits as doubles).
                pyjson::loads_strict(raw).map_err(|_| {
                    argument_error(
                        action,
                        &format!(
                            "Invalid JSON list: {}. Please provide a valid JSON list.",
                            display(raw)
                        ),
                    )
                })
            }
            ValueType::HumanInt => {
                human_readable_int(raw).map_err(|e| argument_error(action, &e.to_string()))
            }
            ValueType::Bool => Ok(Value::Bool(!raw.is_empty())),
            ValueType::NullableStr => Ok(if raw.is_empty() || raw == "None" {
                Value::Null
            } else {
                Value::String(lossy(raw))
            }),
            ValueType::CudaGraphBackend => cuda_graph_backend(raw)
                .map(|s| Value::String(lossy(s)))
                .map_err(|e| argument_error(action, &e.to_string())),
            ValueType::CudaGraphConfig => {
                cuda_graph_config(raw).map_err(|e| argument_error(action, &e.to_string()))
            }
        }
    }

    /// The action's `__call__`.
    fn apply(
        &self,
        action: &Action,
        value: Value,
        option: &str,
        out: &mut SglangArgs,
    ) -> Result<(), ArgError> {
        let dest = action.dest.clone();
        match action.kind {
            ActionKind::Store => {
                out.values.insert(dest, value);
            }
            ActionKind::StoreTrue
            | ActionKind::StoreFalse
            | ActionKind::StoreConst
            | ActionKind::DeprecatedStoreConst => {
                out.values.insert(dest, action.r#const.clone());
            }
            ActionKind::BooleanOptional => {
                out.values
                    .insert(dest, Value::Bool(!option.starts_with("--no-")));
            }
            ActionKind::Help => {}
            ActionKind::Deprecated => {
                if let Some(exception) = &action.deprecated_exception {
                    // 0.4.0-0.5.7 raise with the option's help text (SGLang's prose, not kept)
                    return Err(ArgError::exception(format!(
                        "{exception}: {option} is deprecated"
                    )));
                }
                if action.deprecated_error {
                    let msg = match &action.deprecated_for {
                        Some(new) => format!("{option} has been removed; use {new} instead"),
                        None => format!("{option} has been removed"),
                    };
                    return Err(ArgError::usage(msg));
                }
            }
            ActionKind::LoraPaths => {
                let items = value.as_array().cloned().unwrap_or_default();
                let v = if release::at_least(self.flags.release(), "0.5") {
                    lora_list(&items)?
                } else {
                    lora_dict(&items)
                };
                out.values.insert(dest, v);
            }
        }
        Ok(())
    }

    /// "Did you mean" for an unrecognized token: the underscore spelling, a missing `--`,
    /// then options close by edit distance (while `fuzzy_left`, which this counts down, lasts).
    fn suggest(&self, token: &str, fuzzy_left: &mut usize) -> Vec<String> {
        let key = token.split_once('=').map_or(token, |(k, _)| k);
        if key.is_empty() {
            return Vec::new();
        }
        let known = |cand: &str| self.long().binary_search(&cand).is_ok();
        let resolve = |cand: &str| -> Option<String> {
            if known(cand) {
                return Some(cand.to_owned());
            }
            let hits = self.long_with_prefix(cand);
            (hits.len() == 1 && cand.len() > 3).then(|| hits[0].to_string())
        };
        let dashed = key.replace('_', "-");
        let with_dashes = if key.starts_with('-') {
            format!("--{}", dashed.trim_start_matches('-'))
        } else {
            format!("--{dashed}")
        };
        if let Some(s) = resolve(&with_dashes) {
            return vec![s];
        }
        if !key.starts_with('-') {
            return Vec::new();
        }
        if let Some((_, ours)) = VLLM_SPELLINGS.iter().find(|(v, _)| *v == with_dashes)
            && known(ours)
        {
            return vec![(*ours).to_owned()];
        }
        if *fuzzy_left == 0 {
            return Vec::new();
        }
        *fuzzy_left -= 1;
        let key_len = with_dashes.chars().count();
        let mut scored: Vec<(f64, &str)> = self
            .long()
            .iter()
            .filter(|o| within_reach(key_len, o.chars().count()))
            .map(|o| (strsim::jaro_winkler(&with_dashes, o), *o))
            .filter(|(s, _)| *s >= CLOSE_OPTION)
            .collect();
        // Best first; equal scores in registration order, as before the options were sorted.
        scored.sort_by(|a, b| {
            b.0.total_cmp(&a.0).then_with(|| {
                let by_name = self.by_name();
                let place =
                    |o: &str| by_name[by_name.partition_point(|&p| self.options()[p].0 < o)];
                place(a.1).cmp(&place(b.1))
            })
        });
        scored
            .into_iter()
            .take(3)
            .map(|(_, o)| o.to_owned())
            .collect()
    }
}

/// Whether strings of these lengths (in chars) can reach the [`CLOSE_OPTION`] cut-off (0.88): Jaro is at most
/// (short/long + 2)/3, and below 0.7 strsim adds no prefix bonus, so the shorter must be over
/// a tenth of the longer. Jaro costs length × length, and a multi-kilobyte token once took
/// seconds against every option; skipping the pairs that cannot match changes no answer.
fn within_reach(a: usize, b: usize) -> bool {
    a.min(b).saturating_mul(10) > a.max(b)
}

/// Options people bring from vLLM, and SGLang's option for the same setting.
const VLLM_SPELLINGS: &[(&str, &str)] = &[
    ("--max-model-len", "--context-length"),
    ("--gpu-memory-utilization", "--mem-fraction-static"),
    ("--max-num-seqs", "--max-running-requests"),
    ("--max-num-batched-tokens", "--chunked-prefill-size"),
    ("--enforce-eager", "--disable-cuda-graph"),
    ("--seed", "--random-seed"),
    ("--hf-overrides", "--json-model-override-args"),
];

/// SGLang 0.5.x `LoRAPathAction`: a list; `{…}` items are JSON objects that must name
/// `lora_name` and `lora_path`.
fn lora_list(items: &[Value]) -> Result<Value, ArgError> {
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let raw = item.as_str().unwrap_or_default();
        let s = py_strip(raw);
        if s.starts_with('{') && s.ends_with('}') {
            let obj = pyjson::loads(s)
                .map_err(|e| ArgError::exception(format!("JSONDecodeError: {e}")))?;
            let has = |k: &str| obj.as_object().is_some_and(|o| o.contains_key(k));
            if !(has("lora_path") && has("lora_name")) {
                return Err(ArgError::exception(format!(
                    "AssertionError: {} looks like a JSON str, but it does not contain 'lora_name' and 'lora_path' keys.",
                    py_repr_str(s)
                )));
            }
            out.push(obj);
        } else {
            out.push(Value::String(s.to_owned()));
        }
    }
    Ok(Value::Array(out))
}

/// SGLang 0.4.x `LoRAPathAction`: `name=path` items (or a bare path named after itself) into a
/// dict; a repeated name keeps its first position and takes the last path.
fn lora_dict(items: &[Value]) -> Value {
    let mut map = Map::new();
    for item in items {
        let s = item.as_str().unwrap_or_default();
        let (name, path) = s.split_once('=').unwrap_or((s, s));
        map.insert(name.to_owned(), Value::String(path.to_owned()));
    }
    Value::Object(map)
}

/// Why one of SGLang's own `type=` functions rejects a value; argparse reports it as
/// `argument --x: MESSAGE`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum ConvertError {
    /// `parse_cuda_graph_backend_arg`: the retired backend.
    #[error("tc_piecewise was removed; select breakable, full, or disabled")]
    RetiredCudaGraphBackend,
    /// `parse_cuda_graph_config_arg`: not JSON (`json.loads`'s message).
    #[error("--cuda-graph-config must be JSON: {0}")]
    CudaGraphConfigJson(JsonError),
    /// `parse_cuda_graph_config_arg`: JSON, but not an object (the Python type found).
    #[error("--cuda-graph-config must be a JSON object, got {0}")]
    CudaGraphConfigNotObject(&'static str),
    /// A phase other than decode / prefill (`expected`: Python's tuple of the phases).
    #[error("--cuda-graph-config: unknown phase '{phase}', expected one of {expected}")]
    UnknownPhase { phase: String, expected: String },
    /// A phase's settings that are not an object (the Python type found).
    #[error("--cuda-graph-config['{phase}'] must be a JSON object, got {found}")]
    PhaseNotObject { phase: String, found: &'static str },
    /// A setting the phase does not take (`expected`: Python's tuple of the keys it takes).
    #[error("--cuda-graph-config['{phase}']: unknown key '{key}', expected one of {expected}")]
    UnknownPhaseKey {
        phase: String,
        key: String,
        expected: String,
    },
    /// `human_readable_int`: a decimal number with a binary suffix (`1.5Gi`).
    #[error(
        "Decimals are not allowed with IEC suffixes like '{suffix}'. Use an integer IEC value such as '{whole}{suffix}', or an SI value such as '{number}{si}'."
    )]
    IecDecimals {
        suffix: String,
        /// The integer part, as a suggestion.
        whole: String,
        number: String,
        /// The SI suffix of the same letter.
        si: char,
    },
    /// `human_readable_int`: neither an int nor a number with a known suffix (as printed).
    #[error(
        "Invalid integer value: '{0}'. Use a plain integer, SI suffixes (1k, 1M), or IEC suffixes (1Ki, 1Mi). Suffixes are case-sensitive."
    )]
    HumanInt(String),
}

/// SGLang's `parse_cuda_graph_backend_arg` (0.5.15+): the retired backend is an error before
/// the choices are checked.
fn cuda_graph_backend(raw: &str) -> Result<&str, ConvertError> {
    if raw == "tc_piecewise" {
        return Err(ConvertError::RetiredCudaGraphBackend);
    }
    Ok(raw)
}

/// SGLang's `parse_cuda_graph_config_arg`: a JSON object of phase → settings object, with the
/// keys each phase accepts.
fn cuda_graph_config(raw: &str) -> Result<Value, ConvertError> {
    const PHASES: [(&str, &[&str]); 2] = [
        ("decode", &["backend", "max_bs", "bs"]),
        (
            "prefill",
            &[
                "backend",
                "max_bs",
                "bs",
                "max_context_size",
                "full_prefill_max_req",
                "full_prefill_prefix_chunk_tokens",
                "max_seq_len",
            ],
        ),
    ];
    let tuple = |items: &[&str]| {
        let parts: Vec<String> = items.iter().map(|s| py_repr_str(s)).collect();
        format!("({})", parts.join(", "))
    };
    let parsed = pyjson::loads(raw).map_err(ConvertError::CudaGraphConfigJson)?;
    let Value::Object(obj) = &parsed else {
        return Err(ConvertError::CudaGraphConfigNotObject(pyjson::type_name(
            &parsed,
        )));
    };
    let mut result = Map::new();
    for (phase, settings) in obj {
        let Some((_, allowed)) = PHASES.iter().find(|(p, _)| p == phase) else {
            let names: Vec<&str> = PHASES.iter().map(|(p, _)| *p).collect();
            return Err(ConvertError::UnknownPhase {
                phase: phase.clone(),
                expected: tuple(&names),
            });
        };
        let Value::Object(settings) = settings else {
            return Err(ConvertError::PhaseNotObject {
                phase: phase.clone(),
                found: pyjson::type_name(settings),
            });
        };
        if let Some(Value::String(b)) = settings.get("backend") {
            cuda_graph_backend(b)?;
        }
        for key in settings.keys() {
            if !allowed.contains(&key.as_str()) {
                return Err(ConvertError::UnknownPhaseKey {
                    phase: phase.clone(),
                    key: key.clone(),
                    expected: tuple(allowed),
                });
            }
        }
        result.insert(phase.clone(), Value::Object(settings.clone()));
    }
    Ok(Value::Object(result))
}

/// SGLang's `human_readable_int` (0.5.10+): a plain int, or digits with an SI (`k M G T`,
/// decimals allowed) or IEC (`Ki Mi Gi Ti`, integers only) suffix, case-sensitive.
fn human_readable_int(raw: &str) -> Result<Value, ConvertError> {
    let value = py_strip(raw);
    let split = value
        .char_indices()
        .find(|&(_, c)| c != '.' && py_decimal(c).is_none())
        .map_or(value.len(), |(i, _)| i);
    let (number, suffix) = value.split_at(split);
    let ascii: String = number
        .chars()
        .map(|c| py_decimal(c).map_or(c, |d| char::from(b'0' + d as u8)))
        .collect();
    let number_ok = {
        let (int, frac) = match ascii.split_once('.') {
            Some((a, b)) => (a, Some(b)),
            None => (ascii.as_str(), None),
        };
        !int.is_empty() && frac.is_none_or(|f| !f.is_empty() && !f.contains('.'))
    };
    let iec = match suffix {
        "Ki" => Some(10),
        "Mi" => Some(20),
        "Gi" => Some(30),
        "Ti" => Some(40),
        _ => None,
    };
    let si = match suffix {
        "k" => Some(3),
        "M" => Some(6),
        "G" => Some(9),
        "T" => Some(12),
        _ => None,
    };
    if number_ok && (iec.is_some() || si.is_some()) {
        let (int, frac) = ascii.split_once('.').unwrap_or((&ascii, ""));
        if let Some(shift) = iec {
            if number.contains('.') {
                let whole = int.trim_start_matches('0');
                let whole = if whole.is_empty() { "0" } else { whole };
                return Err(ConvertError::IecDecimals {
                    suffix: suffix.to_owned(),
                    whole: whole.to_owned(),
                    number: number.to_owned(),
                    si: suffix.chars().next().unwrap_or_default(),
                });
            }
            return Ok(int_value(false, &mul_small(int, 1u64 << shift)));
        }
        let zeros = si.unwrap_or(0);
        return Ok(int_value(false, &decimal_times_pow10(int, frac, zeros)));
    }
    py_int(value).ok_or_else(|| ConvertError::HumanInt(display(value)))
}

/// Decimal digit string × small factor, as a decimal digit string.
fn mul_small(digits: &str, factor: u64) -> String {
    let mut out: Vec<u8> = Vec::with_capacity(digits.len() + 20);
    let mut carry: u128 = 0;
    for d in digits.bytes().rev() {
        let x = u128::from(d - b'0') * u128::from(factor) + carry;
        out.push(b'0' + (x % 10) as u8);
        carry = x / 10;
    }
    while carry > 0 {
        out.push(b'0' + (carry % 10) as u8);
        carry /= 10;
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

/// `int(Decimal("int.frac") * 10**zeros)`: Python's default decimal context keeps 28
/// significant digits (round half even), then `int()` truncates.
fn decimal_times_pow10(int: &str, frac: &str, zeros: i64) -> String {
    let coef_raw = format!("{int}{frac}");
    let mut exp = zeros - frac.len() as i64;
    let mut coef: Vec<u8> = coef_raw.trim_start_matches('0').bytes().collect();
    if coef.len() > 28 {
        let drop = coef.len() - 28;
        let tail = &coef[28..];
        let half = tail[0] > b'5'
            || (tail[0] == b'5'
                && (tail[1..].iter().any(|&d| d != b'0') || (coef[27] - b'0') % 2 == 1));
        let round_up = half;
        coef.truncate(28);
        exp += drop as i64;
        if round_up {
            let mut i = coef.len();
            loop {
                if i == 0 {
                    coef.insert(0, b'1');
                    break;
                }
                i -= 1;
                if coef[i] == b'9' {
                    coef[i] = b'0';
                } else {
                    coef[i] += 1;
                    break;
                }
            }
            if coef.len() > 28 {
                coef.pop();
                exp += 1;
            }
        }
    }
    let coef = String::from_utf8(coef).unwrap_or_default();
    if exp >= 0 {
        format!("{coef}{}", "0".repeat(exp as usize))
    } else {
        let cut = (-exp) as usize;
        if cut >= coef.len() {
            "0".into()
        } else {
            coef[..coef.len() - cut].to_owned()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sorted index answers a prefix lookup as the pass over the options does.
    #[test]
    fn prefix_lookups_agree_with_and_without_the_index() {
        let flags = crate::sglang::flagset::get("0.5.23").unwrap();
        let p = Parser::new(flags);
        let prefixes = [
            "--tp",
            "--mem",
            "--enable-",
            "--x",
            "-",
            "--speculative-eagle-t",
        ];
        let scan = |prefix: &str| -> Vec<usize> {
            (0..p.options().len())
                .filter(|&i| p.options()[i].0.starts_with(prefix))
                .collect()
        };
        p.by_name();
        for prefix in prefixes {
            assert_eq!(p.with_prefix(prefix), scan(prefix), "{prefix}");
        }
    }
    use crate::sglang::ArgErrorKind;
    use crate::sglang::flagset::get;
    use serde_json::json;

    fn p(version: &str, argv: &[&str]) -> SglangArgs {
        parse(
            get(version).unwrap(),
            argv.iter().map(OsString::from).collect(),
        )
    }

    fn err(version: &str, argv: &[&str]) -> String {
        let a = p(version, argv);
        assert_eq!(a.errors.len(), 1, "{argv:?}: {:?}", a.values);
        a.errors[0].message.clone()
    }

    #[test]
    fn abbreviations_resolve_or_are_ambiguous_in_argparse_order() {
        let a = p("0.5.23", &["--model-p", "m", "--tensor-parallel=2"]);
        assert!(a.is_ok(), "{:?}", a.errors);
        assert_eq!(a.values["model_path"], json!("m"));
        assert_eq!(a.values["tp_size"], json!(2));
        // --model is exact even though --model-path extends it
        assert_eq!(
            p("0.5.23", &["--model", "m"]).values["model_path"],
            json!("m")
        );
        let e = err("0.5.23", &["--mod", "m"]);
        assert!(e.starts_with("ambiguous option: --mod could match --model-path, --model, --model-loader-extra-config,"), "{e}");
        // the whole token is quoted, `=value` included; ambiguity beats earlier type errors
        let e = err("0.5.23", &["--tp-size", "x", "--mod=3"]);
        assert!(
            e.starts_with("ambiguous option: --mod=3 could match"),
            "{e}"
        );
    }

    #[test]
    fn type_errors_and_choices_use_argparse_wording() {
        assert_eq!(
            err("0.5.23", &["--model-path", "m", "--tp-size", "x"]),
            "argument --tp-size/--tensor-parallel-size: invalid int value: 'x'"
        );
        assert_eq!(
            err(
                "0.5.23",
                &["--model-path", "m", "--log-requests-level", "7"]
            ),
            "argument --log-requests-level: invalid choice: 7 (choose from 0, 1, 2, 3)"
        );
        assert_eq!(
            err("0.5.23", &["--model-path", "m", "--sampling-backend", "x"]),
            "argument --sampling-backend: invalid choice: 'x' (choose from 'intel_xpu', 'pytorch', 'ascend', 'flashinfer')"
        );
        assert_eq!(
            err(
                "0.5.23",
                &["--model-path", "m", "--mem-fraction-static", "1,5"]
            ),
            "argument --mem-fraction-static: invalid float value: '1,5'"
        );
    }

    #[test]
    fn nargs_shapes() {
        let a = p(
            "0.5.23",
            &[
                "--model-path",
                "m",
                "--cuda-graph-bs-decode",
                "1",
                "2",
                "-5",
            ],
        );
        assert_eq!(a.values["cuda_graph_bs_decode"], json!([1, 2, -5]));
        assert_eq!(a.occurrences[1].len, 4);
        assert_eq!(
            err("0.5.23", &["--model-path", "m", "--cuda-graph-bs-decode"]),
            "argument --cuda-graph-bs-decode: expected at least one argument"
        );
        assert_eq!(
            err("0.5.23", &["--model-path"]),
            "argument --model-path/--model: expected one argument"
        );
        let a = p("0.5.23", &["--model-path", "m", "--model-checksum"]);
        assert_eq!(a.values["model_checksum"], json!(""));
        let a = p("0.5.23", &["--model-path", "m", "--lora-target-modules"]);
        assert_eq!(a.values["lora_target_modules"], json!([]));
        // `--x=--`: argparse drops the `--`, leaving an empty list even for nargs=None
        assert_eq!(
            p("0.5.23", &["--model-path=--"]).values["model_path"],
            json!([])
        );
    }

    #[test]
    fn flags_booleans_and_explicit_values() {
        let a = p(
            "0.5.23",
            &[
                "--model-path",
                "m",
                "--no-enable-tf32-matmul",
                "--trust-remote-code",
            ],
        );
        assert_eq!(a.values["enable_tf32_matmul"], json!(false));
        assert_eq!(a.values["trust_remote_code"], json!(true));
        assert_eq!(
            err("0.5.23", &["--model-path", "m", "--trust-remote-code=1"]),
            "argument --trust-remote-code: ignored explicit argument '1'"
        );
        assert_eq!(
            err("0.5.23", &["--model-path", "m", "-he"]),
            "argument -h/--help: ignored explicit argument 'e'"
        );
        let a = p(
            "0.5.23",
            &["--model-path", "m", "--monokernel-backend", "amd"],
        );
        assert_eq!(a.values["enable_amd_monokernel"], json!(true));
        let a = p(
            "0.5.23",
            &["--model-path", "m", "--disable-cuda-graph", "--tp", "2"],
        );
        let uses: Vec<_> = a
            .deprecated_uses()
            .map(|(o, new)| (o.option.as_str(), new))
            .collect();
        assert_eq!(
            uses,
            vec![(
                "--disable-cuda-graph",
                Some("--cuda-graph-backend-{decode,prefill}=disabled")
            )]
        );
        assert_eq!(a.values["disable_cuda_graph"], json!(true));
        // 0.5.10's DeprecatedAction warns and stores nothing
        let a = p(
            "0.5.10.post1",
            &["--model-path", "m", "--enable-piecewise-cuda-graph"],
        );
        assert!(a.is_ok());
        assert!(!a.values.contains_key("enable_piecewise_cuda_graph"));
    }

    #[test]
    fn required_unrecognized_and_dashdash() {
        assert_eq!(
            err("0.5.23", &["--tp-size", "2"]),
            "the following arguments are required: --model-path/--model"
        );
        // required beats unrecognized
        assert_eq!(
            err("0.5.23", &["foo"]),
            "the following arguments are required: --model-path/--model"
        );
        assert_eq!(
            err("0.5.23", &["--model-path", "m", "--", "x"]),
            "unrecognized arguments: -- x"
        );
        assert_eq!(
            err("0.5.23", &["--model-path", "m", "-5", "x"]),
            "unrecognized arguments: -5 x"
        );
        let a = p(
            "0.5.23",
            &["--model-path", "m", "--reasoning_parser", "qwen3"],
        );
        assert_eq!(
            a.errors[0].message,
            "unrecognized arguments: --reasoning_parser qwen3"
        );
        assert_eq!(
            a.errors[0].suggestions,
            vec!["--reasoning-parser".to_owned()]
        );
        assert_eq!(a.extras, vec![2, 3]);
        let a = p("0.5.23", &["--model_path", "m"]);
        assert_eq!(a.errors[0].suggestions, vec!["--model-path".to_owned()]);
        let a = p(
            "0.5.23",
            &["--model-path", "m", "--max-model-len", "4096", "tp-size"],
        );
        assert_eq!(
            a.errors[0].suggestions,
            vec!["--context-length".to_owned(), "--tp-size".to_owned()]
        );
        let a = p(
            "0.5.23",
            &["--model-path", "m", "--tensor-paralel-size", "2"],
        );
        assert!(
            a.errors[0]
                .suggestions
                .contains(&"--tensor-parallel-size".to_owned()),
            "{:?}",
            a.errors
        );
    }

    #[test]
    fn negative_numbers_are_arguments() {
        let a = p(
            "0.5.23",
            &[
                "--model-path",
                "m",
                "--random-seed",
                "-3",
                "--mem-fraction-static",
                "-.5",
            ],
        );
        assert!(a.is_ok(), "{:?}", a.errors);
        assert_eq!(a.values["random_seed"], json!(-3));
        assert_eq!(a.values["mem_fraction_static"], json!(-0.5));
        assert_eq!(
            err("0.5.23", &["--model-path", "m", "--random-seed", "-1e3"]),
            "argument --random-seed: expected one argument"
        );
    }

    #[test]
    fn help_stops_parsing_but_not_before_earlier_errors() {
        let a = p("0.5.23", &["--help", "--tp-size", "x"]);
        assert!(a.help && a.is_ok());
        assert_eq!(
            err("0.5.23", &["--tp-size", "x", "-h"]),
            "argument --tp-size/--tensor-parallel-size: invalid int value: 'x'"
        );
    }

    #[test]
    fn sglang_types() {
        let a = p(
            "0.5.23",
            &[
                "--model-path",
                "m",
                "--context-length",
                "25.6k",
                "--max-prefill-tokens",
                "8Ki",
            ],
        );
        assert!(a.is_ok(), "{:?}", a.errors);
        assert_eq!(a.values["context_length"], json!(25600));
        assert_eq!(
            err(
                "0.5.23",
                &["--model-path", "m", "--context-length", "1.5Ki"]
            ),
            "argument --context-length: Decimals are not allowed with IEC suffixes like 'Ki'. Use an integer IEC value such as '1Ki', or an SI value such as '1.5K'."
        );
        assert_eq!(
            err(
                "0.5.23",
                &["--model-path", "m", "--cuda-graph-config", "[1,]"]
            ),
            "argument --cuda-graph-config: --cuda-graph-config must be JSON: Expecting value: line 1 column 4 (char 3)"
        );
        assert_eq!(
            err(
                "0.5.23",
                &["--model-path", "m", "--cuda-graph-config", "{\"x\":1}"]
            ),
            "argument --cuda-graph-config: --cuda-graph-config: unknown phase 'x', expected one of ('decode', 'prefill')"
        );
        let a = p(
            "0.5.23",
            &[
                "--model-path",
                "m",
                "--lora-paths",
                " a ",
                "{\"lora_name\":\"n\",\"lora_path\":\"p\"}",
            ],
        );
        assert_eq!(
            a.values["lora_paths"],
            json!(["a", {"lora_name": "n", "lora_path": "p"}])
        );
        let a = p("0.5.23", &["--model-path", "m", "--lora-paths", "{x}"]);
        assert_eq!(a.errors[0].kind, ArgErrorKind::Exception);
        let a = p(
            "0.4.10.post2",
            &["--model-path", "m", "--lora-paths", "a=b", "c"],
        );
        assert_eq!(a.values["lora_paths"], json!({"a": "b", "c": "c"}));
    }

    #[test]
    fn namespace_overlays_defaults() {
        let a = p("0.5.23", &["--model-path", "m", "--tp", "4"]);
        let ns = a.namespace();
        assert_eq!(ns["tp_size"], json!(4));
        assert_eq!(ns["model_path"], json!("m"));
        assert!(!ns.contains_key("help"));
        assert_eq!(ns.len(), get("0.5.23").unwrap().actions.len() - 1 - 1); // help; one shared dest
    }

    #[test]
    fn no_flag_set_needs_default_conversion() {
        // argparse runs `type` over string defaults of options not given; none of the embedded
        // flag sets has one that a non-str type would change. A new version that does must
        // teach `namespace()` to convert.
        for v in crate::sglang::flagset::KNOWN_VERSIONS {
            for a in &get(v).unwrap().actions {
                let str_type = matches!(a.value_type, ValueType::Str | ValueType::None);
                assert!(
                    str_type || !a.default.is_string() || a.default_is_suppress,
                    "{v} {:?}",
                    a.option_strings
                );
            }
        }
    }

    #[test]
    fn non_utf8_tokens_do_not_panic() {
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStringExt;
            let flags = get("0.5.23").unwrap();
            let a = parse(
                flags,
                vec![
                    OsString::from("--model-path"),
                    OsString::from_vec(b"m\xff".to_vec()),
                    OsString::from_vec(b"--x\xfe".to_vec()),
                ],
            );
            assert_eq!(a.values["model_path"], json!("m\u{FFFD}"));
            assert_eq!(a.errors[0].message, "unrecognized arguments: --x\\udcfe");
            let a = parse(
                flags,
                vec![
                    OsString::from("--model-path=m"),
                    OsString::from("--tp"),
                    OsString::from_vec(b"\xff".to_vec()),
                ],
            );
            assert_eq!(
                a.errors[0].message,
                "argument --tp-size/--tensor-parallel-size: invalid int value: '\\udcff'"
            );
        }
    }

    fn token_strategy() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        use proptest::strategy::Strategy;
        proptest::prop_oneof![
            "[-=a-z0-9 _.{}\\[\\]\",:]{0,12}".prop_map(String::into_bytes),
            proptest::sample::select(vec![
                "--model-path",
                "--tp",
                "--tp-size",
                "--mod",
                "--",
                "-",
                "-h",
                "--no-dllm-fdfo",
                "--lora-paths",
                "--cuda-graph-config",
                "--context-length",
                "--cuda-graph-bs-decode",
                "--model-checksum",
                "--sampling-backend",
                "-5",
                "--monokernel-backend",
                "1.5Ki",
            ])
            .prop_map(|s: &str| s.as_bytes().to_vec()),
            proptest::collection::vec(proptest::num::u8::ANY, 0..6),
        ]
    }

    #[cfg(unix)]
    proptest::proptest! {
        #[test]
        fn parse_never_panics(
            tokens in proptest::collection::vec(token_strategy(), 0..10),
            version in proptest::sample::select(crate::sglang::flagset::KNOWN_VERSIONS.to_vec()),
        ) {
            use std::os::unix::ffi::OsStringExt;
            let a = parse(get(version).unwrap(), tokens.into_iter().map(OsString::from_vec).collect());
            proptest::prop_assert!(a.errors.len() <= 1);
            let _ = a.namespace();
        }
    }

    proptest::proptest! {
        /// The pairs `suggest` skips could never have scored: the skip changes no suggestion.
        #[test]
        fn out_of_reach_lengths_never_reach_the_cut_off(
            a in "[-a-z_]{1,8}",
            b in "[-a-z_]{1,120}",
        ) {
            let (na, nb) = (a.chars().count(), b.chars().count());
            if !within_reach(na, nb) {
                proptest::prop_assert!(strsim::jaro_winkler(&a, &b) < 0.88, "{a} {b}");
                proptest::prop_assert!(strsim::jaro_winkler(&b, &a) < 0.88, "{a} {b}");
            }
        }
    }

    /// Found by fuzzing: a multi-kilobyte stray token starting with `--` was scored against
    /// every option (length × length each), seconds per parse; it still gets its error, and
    /// the typo next to it still its suggestion.
    #[test]
    fn a_huge_stray_option_is_reported_without_scoring_it() {
        let huge = format!("--enable-dp-{}", "attention-".repeat(2000));
        let a = p(
            "0.5.23",
            &["--model-path", "m", &huge, "--reasoning_parser", "x"],
        );
        assert!(
            a.errors[0]
                .message
                .starts_with("unrecognized arguments: --enable-dp-attention-")
        );
        assert_eq!(
            a.errors[0].suggestions,
            vec!["--reasoning-parser".to_owned()]
        );
        assert!(within_reach(10, 99) && !within_reach(10, 100) && !within_reach(0, 1));
    }
}
