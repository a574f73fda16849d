//! `--config FILE.yaml`: the PyYAML-compatible loader, the value's Python renderings, and the
//! conversion to argv tokens in each config dialect, then argparse on those tokens.

#![no_main]

use std::ffi::OsString;

use libfuzzer_sys::fuzz_target;
use sglang_launch::sglang::release::KNOWN_VERSIONS;
use sglang_launch::sglang::{self, ArgError, config, flagset, pyyaml};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(v) = pyyaml::safe_load("fuzz.yaml", text) {
        let _ = (v.py_repr(), v.py_str(), v.json_dumps(), v.type_name());
    }
    // One release of each dialect: legacy (0.5.5), dest keys (0.5.10), all spellings (newest).
    let newest = KNOWN_VERSIONS[KNOWN_VERSIONS.len() - 1];
    for version in ["0.5.5", "0.5.10", newest] {
        let flags = flagset::get(version).expect("embedded release");
        let Ok(tokens) = config::convert(flags, "fuzz.yaml", text) else {
            continue;
        };
        let tokens: Vec<OsString> = tokens.into_iter().map(OsString::from).collect();
        // A nested `--config NAME` reads NAME as the YAML text, as the argv target does.
        let args = sglang::parse_with(flags, tokens, &mut |name| {
            config::convert(flags, "nested.yaml", name).map_err(ArgError::from)
        });
        let _ = args.recover();
    }
});
