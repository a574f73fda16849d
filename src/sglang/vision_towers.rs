//! Which model architectures build SGLang's shared vision attention (the layer that takes
//! `--mm-attention-backend`), per release: `data/vision-attention.json`, generated from each
//! release's model code by `scripts/gen-vision-towers.py`.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde::Deserialize;

use super::release;

#[derive(Deserialize)]
struct Data {
    /// Per architecture, the release ranges (first, last; inclusive) that build it.
    architectures: HashMap<String, Vec<(String, String)>>,
}

fn data() -> &'static Data {
    static DATA: OnceLock<Data> = OnceLock::new();
    DATA.get_or_init(|| {
        serde_json::from_str(include_str!("../../data/vision-attention.json"))
            .expect("data/vision-attention.json is generated valid")
    })
}

/// The model code of `arch` builds the shared vision attention in this release (the nearest
/// embedded one for a version between or after them).
pub(crate) fn builds_vision_attention(arch: &str, version: &str) -> bool {
    let at = release::nearest(version);
    (data().architectures.get(arch)).is_some_and(|ranges| release::in_ranges(ranges, at))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn towers_are_known_by_release() {
        assert!(builds_vision_attention(
            "Qwen2_5_VLForConditionalGeneration",
            "0.5.23"
        ));
        assert!(builds_vision_attention(
            "Gemma3ForConditionalGeneration",
            "0.5.24.dev1"
        ));
        assert!(!builds_vision_attention(
            "Gemma3ForConditionalGeneration",
            "0.4.5"
        ));
        assert!(!builds_vision_attention("LlamaForCausalLM", "0.5.23"));
        for ranges in data().architectures.values() {
            for (first, last) in ranges {
                assert!(release::position(first).is_some() && release::position(last).is_some());
            }
        }
    }
}
