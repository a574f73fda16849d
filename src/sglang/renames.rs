//! One-to-one option renames across releases that SGLang's parsers do not record themselves (no
//! deprecated alias is left behind): read by comparing the releases' parsers.

/// (older spelling, newer spelling).
pub const RENAMES: &[(&str, &str)] = &[
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
];

/// The other spelling of `option` in a rename, either direction.
pub fn counterpart(option: &str) -> Option<&'static str> {
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
