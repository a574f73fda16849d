//! `--config FILE.yaml`: the PyYAML-compatible loader, the value's Python renderings, and the
//! conversion to argv tokens in each config dialect.

#![no_main]

use libfuzzer_sys::fuzz_target;
use sglang_launch::sglang::release::KNOWN_VERSIONS;
use sglang_launch::sglang::{config_file, flagset, pyyaml};

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
        // The tokens' parse is the argv target's (which merges `--config` too).
        let _ = config_file::convert(flags, "fuzz.yaml", text);
    }
});
