//! The whole invocation: the launcher/SGLang split, clap on the launcher's part, and SGLang's
//! argparse emulation for a release (with `--config` merging, best-effort recovery, the
//! approximate mode's judgement and the rewrite for the newest release).
//!
//! Input: NUL-separated tokens. The first names the SGLang release (any text: the nearest
//! older embedded release is used); the rest is the argv, program name first. A `--config`
//! file's name stands for the file's YAML text, so merging is fuzzed without a file system.

#![no_main]

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

use libfuzzer_sys::fuzz_target;
use sglang_launch::facts::gpus::Layout;
use sglang_launch::invocation::{cli, split};
use sglang_launch::sglang::release::{self, KNOWN_VERSIONS};
use sglang_launch::sglang::{self, ArgError, FlagSet, Parallel, approx, config_file, flagset, rewrite};

/// The embedded release at or before `version` (the oldest for anything older).
fn release_for(version: &[u8]) -> &'static FlagSet {
    let v = String::from_utf8_lossy(version);
    let i = KNOWN_VERSIONS
        .iter()
        .rposition(|k| release::cmp(k, &v).is_le())
        .unwrap_or(0);
    flagset::get(KNOWN_VERSIONS[i]).expect("every embedded release has a flag set")
}

fn parse(flags: &'static FlagSet, tokens: Vec<OsString>) -> sglang::SglangArgs {
    sglang::parse_with(flags, tokens, &mut |text| {
        config_file::convert(flags, "fuzz.yaml", text).map_err(ArgError::from)
    })
}

fuzz_target!(|data: &[u8]| {
    let mut parts = data.split(|&b| b == 0);
    let flags = release_for(parts.next().unwrap_or_default());
    let argv: Vec<OsString> = parts.map(|t| OsString::from_vec(t.to_vec())).collect();
    let (launcher, tokens) = split::split(&argv);
    // Usage errors and help are answers; only a panic is a finding.
    let _ = cli::command().try_get_matches_from(&launcher);

    let args = parse(flags, tokens);
    let _ = args.namespace();
    let _ = args.effective_tokens();
    let _ = Parallel::of(&args).ranks_per_node();
    let _ = Layout::from_args(&args).ranks_per_node;
    let recovered = args.recover();
    let _ = approx::judge(&args, &recovered, &approx::neighbours(&flags.version));

    let newest = flagset::get(KNOWN_VERSIONS[KNOWN_VERSIONS.len() - 1]).expect("newest release");
    let config_text = args.config.as_ref().map(|c| c.file.clone());
    let rewritten = rewrite::rewrite(&args, newest, config_text.as_deref());
    let _ = rewrite::remaining_error(&rewritten);
});
