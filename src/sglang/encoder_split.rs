//! Which model architectures each release's encoder/language split (`--encoder-only`,
//! `--language-only`) takes: `data/encoder-split.json`, generated from each release's own check
//! by `scripts/gen-encoder-split.py`.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde::Deserialize;

use super::release;

#[derive(Deserialize)]
struct Data {
    /// The first release that checks the architecture (every later one does too).
    checked_from: String,
    /// Per architecture, the release ranges (first, last; inclusive) whose split takes it.
    architectures: HashMap<String, Vec<(String, String)>>,
}

fn data() -> &'static Data {
    static DATA: OnceLock<Data> = OnceLock::new();
    DATA.get_or_init(|| {
        serde_json::from_str(include_str!("../../data/encoder-split.json"))
            .expect("data/encoder-split.json is generated valid")
    })
}

/// Whether release `version` takes `arch` for its encoder/language split; `None` where the release
/// does not check (before the check arrived), or is not an embedded one (a newer list may name it).
pub(crate) fn takes(arch: &str, version: &str) -> Option<bool> {
    let at = release::position(version)?;
    if release::position(&data().checked_from).is_none_or(|from| at < from) {
        return None;
    }
    Some((data().architectures.get(arch)).is_some_and(|ranges| release::in_ranges(ranges, at)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_split_takes_what_each_release_lists() {
        assert_eq!(
            takes("Qwen2_5_VLForConditionalGeneration", "0.5.10rc0"),
            Some(true)
        );
        assert_eq!(
            takes("KimiVLForConditionalGeneration", "0.5.10.post1"),
            Some(false)
        );
        assert_eq!(
            takes("KimiVLForConditionalGeneration", "0.5.11"),
            Some(true)
        );
        assert_eq!(takes("LlamaForCausalLM", "0.5.23"), Some(false));
        // Before the check, and past the embedded releases, nothing is known.
        assert_eq!(takes("LlamaForCausalLM", "0.5.9"), None);
        assert_eq!(takes("LlamaForCausalLM", "0.5.24.dev3"), None);
        for ranges in data().architectures.values() {
            for (first, last) in ranges {
                assert!(release::position(first).is_some() && release::position(last).is_some());
            }
        }
    }
}
