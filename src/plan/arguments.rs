//! What argparse makes of a line, as the planner needs it: whether SGLang takes it, the errors
//! that block it (SGLang's own first), and for a line it rejects the best-effort parse that the
//! checks and the memory planner read instead, so that every other finding is still reported.
//!
//! In approximate mode (the flag set in use is not the user's release's), an error that a
//! neighbouring embedded release's parser does not make is tolerated: a warning, not a block.

use crate::sglang::approx::{self, Tolerated};
use crate::sglang::{Recovered, SglangArgs, SkippedError};

/// The parse of one line, judged.
#[derive(Debug, Clone, Default)]
pub(crate) struct Parsed {
    /// The best-effort parse, when the flag set in use rejects the line.
    pub(crate) recovered: Option<Recovered>,
    /// Errors a neighbouring release explains (approximate mode only).
    pub(crate) tolerated: Vec<Tolerated>,
    /// The errors that stand, in argparse's order: the first is what SGLang says (on the line
    /// without the tolerated tokens), each later one what it says once those before are fixed.
    pub(crate) blocking: Vec<SkippedError>,
    /// Options whose value SGLang rejects (or that are ambiguous), as written: the checks ran
    /// without them, so a finding may rest on their default instead.
    pub(crate) skipped: Vec<String>,
}

impl Parsed {
    /// `neighbours`: the embedded releases around the user's release, in approximate mode.
    pub(crate) fn of(args: &SglangArgs, neighbours: Option<&approx::Bounds>) -> Parsed {
        if args.is_ok() {
            return Parsed::default();
        }
        let recovered = args.recover();
        let judged = neighbours.map(|n| approx::judge(args, &recovered, n));
        let (tolerated, blocking, skipped) = match judged {
            Some(j) if !j.tolerated.is_empty() => {
                let blocking = j.rest.recover().problems;
                let skipped = skipped(&j.rest, &blocking);
                (j.tolerated, blocking, skipped)
            }
            _ => {
                let skipped = skipped(args, &recovered.problems);
                (Vec::new(), recovered.problems.clone(), skipped)
            }
        };
        Parsed {
            recovered: Some(recovered),
            tolerated,
            blocking,
            skipped,
        }
    }

    /// Whether SGLang takes the line, as far as the launcher can tell.
    pub(crate) fn accepted(&self) -> bool {
        self.blocking.is_empty()
    }

    /// What the checks read: the arguments themselves, or their best-effort parse.
    pub(crate) fn view<'a>(&'a self, args: &'a SglangArgs) -> &'a SglangArgs {
        self.recovered.as_ref().map_or(args, |r| &r.args)
    }

    /// Whether `option` (as written, `--x` of `--x=v`) is a token a neighbouring release explains.
    pub(crate) fn tolerates(&self, option: &str) -> bool {
        self.tolerated.iter().any(|t| {
            t.tokens
                .first()
                .is_some_and(|w| w.split_once('=').map_or(w.as_str(), |(o, _)| o) == option)
        })
    }
}

/// The options behind `problems` that are not simply unknown, as written (`--x` of `--x=v`).
fn skipped(args: &SglangArgs, problems: &[SkippedError]) -> Vec<String> {
    let tokens = args.effective_tokens();
    let mut out: Vec<String> = Vec::new();
    let spans = problems
        .iter()
        .filter(|p| !p.error.message.starts_with("unrecognized arguments: "))
        .flat_map(|p| p.spans.iter());
    for s in spans {
        let Some(t) = tokens.get(s.start).map(|t| t.to_string_lossy()) else {
            continue;
        };
        let option = t.split_once('=').map_or(&*t, |(o, _)| o).to_owned();
        if option.starts_with('-') && !out.contains(&option) {
            out.push(option);
        }
    }
    out
}

/// The `--config` file SGLang would read, when it is not on this machine (`None`: no file
/// named, or it is here).
pub(crate) fn config_elsewhere(
    flags: &'static crate::sglang::FlagSet,
    tokens: &[std::ffi::OsString],
) -> Option<String> {
    let strs: Vec<String> = tokens
        .iter()
        .map(|t| t.to_string_lossy().into_owned())
        .collect();
    use crate::sglang::config_file::{ConfigError, load, locate};
    let (_, file) = locate(flags, &strs).ok()??;
    // SGLang's only complaint is that it is not here, and nothing at all is at that path (a
    // broken link is a file SGLang would fail to read here).
    let not_found = matches!(load(flags, &file), Err(ConfigError::NotFound { .. }));
    (not_found && std::fs::symlink_metadata(&file).is_err()).then_some(file)
}
