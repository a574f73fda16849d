//! Fixes as data: edits to the SGLang arguments and the environment. `plan::fixes` applies them.

/// An edit to the SGLang command line. Options are named by any of their option strings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgEdit {
    /// Remove every occurrence of the option (with its values).
    Remove { option: String },
    /// Give the option this value: replace the last occurrence's value, or append it.
    Set { option: String, value: String },
    /// Append a flag that takes no value (store_true), unless it is already given.
    AddFlag { option: String },
    /// Rewrite every occurrence of the option string `from` as written on the command line
    /// (`--from V` and `--from=V`) to `to`, keeping its values. For flags a version renamed:
    /// `from` may be unknown to (or ambiguous in) the flag set in use.
    Rename { from: String, to: String },
    /// Drop every token spelled exactly `written`: a valueless flag this flag set may not know
    /// (option values and the config file's name are never touched).
    Drop { written: String },
    /// Drop every occurrence of an option this flag set does not know, spelled `written`
    /// (`--x V` or `--x=V`), with the value after it: an option of another entry point's.
    DropOption { written: String },
    /// Give the line's leading bare value (`sglang serve MODEL …`) to `option`, written before
    /// it: another entry point's positional, which this parser refuses.
    NamePositional { option: String },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnvEdit {
    Set { name: String, value: String },
    Unset { name: String },
}

/// A safe change that keeps the user's intent. `summary` is the one-line report, e.g.
/// `removed --enable-flashinfer-allreduce-fusion`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fix {
    pub summary: String,
    pub args: Vec<ArgEdit>,
    pub env: Vec<EnvEdit>,
}
