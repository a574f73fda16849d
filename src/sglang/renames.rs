//! One-to-one option renames across releases that SGLang's parsers do not record themselves (no
//! deprecated alias is left behind): read by comparing the releases' parsers.

/// (older spelling, newer spelling).
pub(crate) const RENAMES: &[(&str, &str)] = &[
    ("--cuda-graph-max-bs", "--cuda-graph-max-bs-decode"),
    ("--cuda-graph-bs", "--cuda-graph-bs-decode"),
    (
        "--piecewise-cuda-graph-max-tokens",
        "--cuda-graph-max-bs-prefill",
    ),
    ("--piecewise-cuda-graph-tokens", "--cuda-graph-bs-prefill"),
    ("--nsa-prefill-backend", "--dsa-prefill-backend"),
    ("--nsa-decode-backend", "--dsa-decode-backend"),
    ("--stream-output", "--incremental-streaming-output"),
    // 0.5.14 to 0.5.19 keep the old spelling as a deprecated alias; 0.5.20 drops it.
    ("--mamba-scheduler-strategy", "--mamba-radix-cache-strategy"),
];

/// The other spelling of `option` in a rename, either direction.
pub(crate) fn counterpart(option: &str) -> Option<&'static str> {
    RENAMES.iter().find_map(|&(a, b)| {
        if option == a {
            Some(b)
        } else if option == b {
            Some(a)
        } else {
            None
        }
    })
}

/// What an option SGLang replaced by another option with a value becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReplacedBy {
    /// `option value`.
    Value(&'static str, &'static str),
    /// `option N`, N the line's tensor-parallel size.
    TpSize(&'static str),
}

/// Valueless flags SGLang deprecated in favour of an option with a value (0.5.2 warns and
/// rewrites them, 0.5.3–0.5.4 refuse them naming the replacement, later releases no longer
/// know them).
pub(crate) const REPLACED: &[(&str, ReplacedBy)] = &[
    ("--enable-ep-moe", ReplacedBy::TpSize("--ep-size")),
    (
        "--enable-deepep-moe",
        ReplacedBy::Value("--moe-a2a-backend", "deepep"),
    ),
    (
        "--enable-triton-kernel-moe",
        ReplacedBy::Value("--moe-runner-backend", "triton_kernel"),
    ),
    (
        "--enable-flashinfer-cutlass-moe",
        ReplacedBy::Value("--moe-runner-backend", "flashinfer_cutlass"),
    ),
    (
        "--enable-flashinfer-cutedsl-moe",
        ReplacedBy::Value("--moe-runner-backend", "flashinfer_cutedsl"),
    ),
    (
        "--enable-flashinfer-trtllm-moe",
        ReplacedBy::Value("--moe-runner-backend", "flashinfer_trtllm"),
    ),
    (
        "--enable-flashinfer-mxfp4-moe",
        ReplacedBy::Value("--moe-runner-backend", "flashinfer_mxfp4"),
    ),
];

/// The replacement of the flag `option`, if SGLang replaced it.
pub(crate) fn replaced(option: &str) -> Option<ReplacedBy> {
    REPLACED.iter().find(|(o, _)| *o == option).map(|(_, r)| *r)
}

/// What `flags` reads instead of the replaced flag `written`, for a line of TP size `tp`:
/// `(option, value)` when this release refuses the flag (does not know it, or knows it only to
/// raise) and has the replacing option with that value among its choices.
pub(crate) fn replacement_in(
    flags: &super::FlagSet,
    written: &str,
    tp: i64,
) -> Option<(&'static str, String)> {
    let by = replaced(written)?;
    let refused = flags
        .action(written)
        .is_none_or(super::flagset::Action::refuses);
    let target = flags.action(by.option())?;
    let value = by.value(tp);
    let allowed = target
        .choices
        .as_ref()
        .is_none_or(|c| c.iter().any(|v| v.as_str() == Some(value.as_str())));
    (refused && allowed).then_some((by.option(), value))
}

impl ReplacedBy {
    /// The replacing option.
    pub(crate) fn option(self) -> &'static str {
        match self {
            ReplacedBy::Value(o, _) | ReplacedBy::TpSize(o) => o,
        }
    }

    /// Its value for a line of tensor-parallel size `tp`.
    pub(crate) fn value(self, tp: i64) -> String {
        match self {
            ReplacedBy::Value(_, v) => v.to_owned(),
            ReplacedBy::TpSize(_) => tp.to_string(),
        }
    }
}
