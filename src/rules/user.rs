//! [`UserArgs`]: the command line as the user wrote it, for the checks. The values SGLang
//! resolves (parallel sizes, quantisation, KV cache dtype, context length, memory fraction,
//! the all-to-all backend, speculative decoding) are read off the resolved server instead; the
//! test below keeps the checks from reading those options here.

use serde_json::Value;

use super::Context;
use crate::sglang::SglangArgs;

/// Plain switches SGLang does not change, and the user's own spelling of an option.
#[derive(Clone, Copy)]
pub(crate) struct UserArgs<'a>(&'a SglangArgs);

impl<'a> UserArgs<'a> {
    /// A boolean option that is on (given, or on by default).
    pub(crate) fn flag(&self, opt: &str) -> bool {
        self.0.flag(opt)
    }

    /// An integer option's value (given or default); `None` if this version lacks it.
    pub(crate) fn int(&self, opt: &str) -> Option<i64> {
        self.0.int(opt)
    }

    /// An option's value (given or default) as text: strings as-is, numbers printed.
    pub(crate) fn sval(&self, opt: &str) -> Option<String> {
        crate::resolve::server::text(self.0, opt)
    }

    /// A string option's value (given or default).
    pub(crate) fn str(&self, opt: &str) -> Option<&'a str> {
        self.0.str(opt)
    }

    /// The value given, else the flag set's default.
    pub(crate) fn get_or_default(&self, opt: &str) -> Option<&'a Value> {
        self.0.get_or_default(opt)
    }

    /// The option was given on the command line and this version knows it.
    pub(crate) fn given(&self, opt: &str) -> bool {
        self.0.knows(opt) && self.0.is_set(opt)
    }

    /// An integer option's value where the line gives it (its default does not count).
    pub(crate) fn given_int(&self, opt: &str) -> Option<i64> {
        self.int(opt).filter(|_| self.given(opt))
    }

    /// An option's value as text where the line gives it (its default does not count).
    pub(crate) fn given_sval(&self, opt: &str) -> Option<String> {
        self.sval(opt).filter(|_| self.given(opt))
    }

    /// The option was given (whether or not this version knows it).
    pub(crate) fn is_set(&self, opt: &str) -> bool {
        self.0.is_set(opt)
    }

    /// This SGLang version has the option.
    pub(crate) fn knows(&self, opt: &str) -> bool {
        self.0.knows(opt)
    }

    /// The whole command line: tokens, flag set and spellings (the FLAG rules judge these).
    pub(crate) fn command_line(&self) -> &'a SglangArgs {
        self.0
    }
}

impl<'a> Context<'a> {
    /// The command line as written (see [`UserArgs`]).
    pub(crate) fn user(&self) -> UserArgs<'a> {
        UserArgs(self.args)
    }
}

#[cfg(test)]
mod tests {
    /// Options whose value in effect the server holds: a check reads those off `ctx.server`
    /// (or the accessors over it), never as the user wrote them.
    const RESOLVED: &[&str] = &[
        "TP_SIZE",
        "PP_SIZE",
        "NNODES",
        "QUANTIZATION",
        "KV_CACHE_DTYPE",
        "MEM_FRACTION_STATIC",
        "MOE_A2A_BACKEND",
        "ENABLE_DEEPEP_MOE",
        "SPECULATIVE_ALGORITHM",
        "CONTEXT_LENGTH",
        "ENABLE_DETERMINISTIC_INFERENCE",
    ];

    /// Readings kept on the command line because the resolved value would change the rule's
    /// outcome (file, option): `--context-length` as stored (a value past i64 stays silent);
    /// the algorithm as given, which DeepSeek-V4's hook judges before SGLang reads NEXTN as
    /// EAGLE (SPEC018), and which aux hidden-state capture reads as its convention before SGLang
    /// turns speculative decoding off (SPEC027).
    const KEPT: &[(&str, &str)] = &[
        ("env.rs", "CONTEXT_LENGTH"),
        ("spec.rs", "SPECULATIVE_ALGORITHM"),
        ("spec_capture.rs", "SPECULATIVE_ALGORITHM"),
        // AUTO004 compares the dtype given with the one SGLang puts over it.
        ("auto.rs", "KV_CACHE_DTYPE"),
    ];

    fn sources(dir: &std::path::Path, out: &mut Vec<(String, String)>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                sources(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                out.push((name, std::fs::read_to_string(&p).unwrap()));
            }
        }
    }

    #[test]
    fn checks_read_resolved_values_off_the_server() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/rules/checks");
        let mut files = Vec::new();
        sources(&dir, &mut files);
        let mut bad = Vec::new();
        for (name, text) in &files {
            for r in RESOLVED {
                let read = format!("(opt::{r})");
                let kept = KEPT.iter().any(|k| k.0 == name && k.1 == *r);
                if text.contains(&read) && !kept {
                    bad.push(format!("{name}: opt::{r}"));
                }
            }
            if text.contains("ctx.args") {
                bad.push(format!("{name}: ctx.args (use ctx.user() or the server)"));
            }
        }
        assert!(bad.is_empty(), "raw readings of resolved values: {bad:?}");
    }
}
