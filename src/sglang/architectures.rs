//! Which model architectures each release's model registry resolves: `data/architectures.json`,
//! generated from each release's own code by `scripts/gen-architectures.py`. The file keeps one
//! architecture per line, sorted, so a lookup decodes only the line it needs (nothing is read
//! until a model's config.json names an architecture).

use std::sync::OnceLock;

use serde::Deserialize;

use super::release::KNOWN_VERSIONS;

const DATA: &str = include_str!("../../data/architectures.json");

/// From this release on, SGLang's loader answers a name its registry lacks by trying its generic
/// Transformers backend (`TransformersForCausalLM`) instead of raising at once: it raises only
/// when the installed transformers has no class of that name and config.json's `auto_map` names
/// no `AutoModel` (or that class is not backend-compatible). Before it, the registry raises
/// "Model architectures [...] are not supported for now". The data file records the same
/// boundary, read from each release's loader (a test keeps them equal).
pub(crate) const TRANSFORMERS_FALLBACK_FROM: &str = "0.4.7";

/// From this release on, SGLang reads a checkpoint whose path names a Mistral model
/// ("mistral-large-3", …) from Mistral's own `params.json`, not config.json.
pub(crate) const MISTRAL_BY_NAME_FROM: &str = "0.5.6.post1";

/// Inclusive release ranges, as `[first, last]` names.
type Ranges = Vec<(String, String)>;

/// One architecture's line: the releases whose registry has a class of that name (`c`), whose
/// configuration code may rewrite it to another before the lookup (`r`), or does so only for a
/// speculative draft (`d`), and those whose class of that name has no pipeline-parallel
/// `forward` while the model runner asserts one under `--pp-size` > 1 (`n`), lacks the
/// embedding hand-over an EAGLE-family draft worker calls (`e`), or the EAGLE3 capture hook the
/// model runner calls (`3`).
#[derive(Debug, Default, Deserialize, PartialEq)]
struct Entry {
    #[serde(default)]
    c: Ranges,
    #[serde(default)]
    r: Ranges,
    #[serde(default)]
    d: Ranges,
    #[serde(default)]
    n: Ranges,
    #[serde(default)]
    e: Ranges,
    #[serde(default, rename = "3")]
    eagle3: Ranges,
}

/// What a release's class for an architecture lacks that start-up calls on the loaded model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lack {
    /// A `forward` taking `pp_proxy_tensors` (asserted under `--pp-size` > 1).
    PipelineForward,
    /// `get_embed_and_head`, which an EAGLE-family draft worker calls on the target.
    EmbedHandOver,
    /// `set_eagle3_layers_to_capture`, which the model runner calls for EAGLE3.
    Eagle3Hook,
}

impl Entry {
    fn lacks(&self, what: Lack) -> &Ranges {
        match what {
            Lack::PipelineForward => &self.n,
            Lack::EmbedHandOver => &self.e,
            Lack::Eagle3Hook => &self.eagle3,
        }
    }
}

fn within(ranges: &Ranges, at: usize) -> bool {
    super::release::in_ranges(ranges, at)
}

/// The entry lines of the file's two sections (architectures, model types), each sorted by key
/// as the generator writes them. Built once, on the first lookup: one pass over the file.
struct Sections {
    architectures: Vec<&'static str>,
    config_types: Vec<&'static str>,
}

fn sections() -> &'static Sections {
    static SECTIONS: OnceLock<Sections> = OnceLock::new();
    SECTIONS.get_or_init(|| {
        let mut s = Sections {
            architectures: vec![],
            config_types: vec![],
        };
        let mut current = None;
        for l in DATA.lines() {
            match l {
                "\"architectures\":{" => current = Some(&mut s.architectures),
                "\"config_types\":{" => current = Some(&mut s.config_types),
                _ if l.starts_with('"') => {
                    if let Some(lines) = current.as_mut() {
                        lines.push(l);
                    }
                }
                _ => current = None,
            }
        }
        s
    })
}

/// The key of an entry line `"key":…`.
fn key_of(line: &str) -> &str {
    line.get(1..)
        .and_then(|l| l.split_once("\":"))
        .map_or("", |(k, _)| k)
}

/// The entry of `key` in a section, decoded: a binary search over its sorted lines, so a lookup
/// decodes one short line.
fn line<T: for<'de> Deserialize<'de>>(lines: &[&str], key: &str) -> Option<T> {
    let i = lines.binary_search_by(|l| key_of(l).cmp(key)).ok()?;
    let l = lines[i];
    serde_json::from_str(l[key.len() + 3..].trim_end_matches(',')).ok()
}

fn entry(arch: &str) -> Option<Entry> {
    line(&sections().architectures, arch)
}

/// How release `at` (an index into [`KNOWN_VERSIONS`]) resolves an architecture name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lookup {
    /// The registry has a class of that name.
    Class,
    /// The release's configuration code may rewrite the name to another before the lookup.
    Rewritten,
    /// Neither.
    Missing,
}

/// How release `at` resolves `arch` for the served model, or (with `draft`) for a speculative
/// draft model, whose target architecture some releases rewrite to a draft class.
pub(crate) fn lookup(arch: &str, at: usize, draft: bool) -> Lookup {
    let Some(e) = entry(arch) else {
        return Lookup::Missing;
    };
    if within(&e.c, at) {
        Lookup::Class
    } else if within(&e.r, at) || (draft && within(&e.d, at)) {
        Lookup::Rewritten
    } else {
        Lookup::Missing
    }
}

/// The releases that load `arch` with a model class of their own (a class of that name, or one
/// their configuration code rewrites it to): the first one after `at`, and the last one before.
pub(crate) fn releases_with(arch: &str, at: usize) -> (Option<&'static str>, Option<&'static str>) {
    let Some(e) = entry(arch) else {
        return (None, None);
    };
    let has = |i: usize| within(&e.c, i) || within(&e.r, i);
    let next = (at + 1..KNOWN_VERSIONS.len()).find(|&i| has(i));
    let prev = (0..at).rev().find(|&i| has(i));
    (
        next.map(|i| KNOWN_VERSIONS[i]),
        prev.map(|i| KNOWN_VERSIONS[i]),
    )
}

/// Release `at`'s class for `arch` lacks `what`, which its start-up calls on the loaded model;
/// with the first later final release (not a release candidate) whose class has it.
pub(crate) fn lacks(arch: &str, at: usize, what: Lack) -> Option<Option<&'static str>> {
    let e = entry(arch)?;
    if !(within(&e.c, at) && within(e.lacks(what), at)) {
        return None;
    }
    let later = (at + 1..KNOWN_VERSIONS.len())
        .filter(|&i| !KNOWN_VERSIONS[i].contains("rc"))
        .find(|&i| within(&e.c, i) && !within(e.lacks(what), i));
    Some(later.map(|i| KNOWN_VERSIONS[i]))
}

/// Release `at`'s configuration code gives checkpoints of this `model_type` architectures of
/// its own (its own configuration class, or a rewrite keyed on the type).
pub(crate) fn config_type_rewritten(model_type: &str, at: usize) -> bool {
    line::<Ranges>(&sections().config_types, model_type).is_some_and(|r| within(&r, at))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sglang::release::{cmp, exact, position};
    use serde_json::Value;
    use std::collections::BTreeMap;

    fn at(v: &str) -> usize {
        exact(v).unwrap()
    }

    #[derive(Deserialize)]
    struct Whole {
        transformers_fallback_from: String,
        mistral_by_name_from: String,
        pp_gate_from: String,
        architectures: BTreeMap<String, Entry>,
        config_types: BTreeMap<String, Ranges>,
    }

    #[test]
    fn every_line_lookup_equals_the_whole_file_parse() {
        let whole: Whole = serde_json::from_str(DATA).unwrap();
        assert!(whole.architectures.len() > 250);
        for (name, e) in &whole.architectures {
            assert_eq!(entry(name).as_ref(), Some(e), "{name}");
            for (first, last) in (e.c.iter().chain(&e.r).chain(&e.d).chain(&e.n))
                .chain(&e.e)
                .chain(&e.eagle3)
            {
                assert!(
                    position(first).is_some() && position(last).is_some(),
                    "{name}"
                );
            }
        }
        for (t, r) in &whole.config_types {
            assert_eq!(
                line::<Ranges>(&sections().config_types, t).as_ref(),
                Some(r),
                "{t}"
            );
        }
        let s = sections();
        assert_eq!(s.architectures.len(), whole.architectures.len());
        assert_eq!(s.config_types.len(), whole.config_types.len());
        for lines in [&s.architectures, &s.config_types] {
            assert!(lines.windows(2).all(|w| key_of(w[0]) < key_of(w[1])));
        }
        assert_eq!(whole.transformers_fallback_from, TRANSFORMERS_FALLBACK_FROM);
        assert_eq!(whole.mistral_by_name_from, MISTRAL_BY_NAME_FROM);
        // PAR018 applies from the release whose model runner first asserts the gate.
        let par018 = crate::rules::rule(crate::rules::Code::PAR018);
        assert!(par018.applies_to(&whole.pp_gate_from));
        let before = KNOWN_VERSIONS[at(&whole.pp_gate_from) - 1];
        assert!(!par018.applies_to(before), "{before}");
        // Only releases with a class of the name lack its pipeline-parallel forward.
        for (name, e) in &whole.architectures {
            for (first, last) in &e.n {
                assert!(within(&e.c, at(first)) && within(&e.c, at(last)), "{name}");
            }
        }
        let head: Value = serde_json::from_str(DATA).unwrap();
        assert_eq!(head["releases"][1], *KNOWN_VERSIONS.last().unwrap());
    }

    /// Read in the wheels: MiniMax-M2's class took `pp_proxy_tensors` from 0.5.10rc0, Kimi-K2.5's
    /// after 0.5.9; Llama's always has; the first final release with it is named.
    #[test]
    fn classes_without_the_pipeline_parallel_forward() {
        let without_pp = |arch, v| lacks(arch, at(v), Lack::PipelineForward);
        assert_eq!(
            without_pp("MiniMaxM2ForCausalLM", "0.5.9"),
            Some(Some("0.5.10"))
        );
        assert_eq!(without_pp("MiniMaxM2ForCausalLM", "0.5.10"), None);
        assert!(without_pp("KimiK25ForConditionalGeneration", "0.5.9").is_some());
        assert_eq!(without_pp("LlamaForCausalLM", "0.5.9"), None);
        assert_eq!(without_pp("Gemma2ForCausalLM", "0.5.23"), Some(None));
    }

    /// Read in the wheels (and pinned by goldens from each release's loader): Qwen3-VL gained
    /// both speculative hooks in 0.5.11; DeepSeek-V3 the EAGLE3 one in 0.5.4.post2; Qwen2-MoE
    /// never had the embedding hand-over.
    #[test]
    fn classes_without_the_speculative_hooks() {
        let qwen3_vl = "Qwen3VLForConditionalGeneration";
        for what in [Lack::EmbedHandOver, Lack::Eagle3Hook] {
            assert_eq!(lacks(qwen3_vl, at("0.5.9"), what), Some(Some("0.5.11")));
            assert_eq!(lacks(qwen3_vl, at("0.5.11"), what), None);
            assert_eq!(lacks("LlamaForCausalLM", at("0.5.9"), what), None);
        }
        assert_eq!(
            lacks("DeepseekV3ForCausalLM", at("0.5.4"), Lack::Eagle3Hook),
            Some(Some("0.5.4.post2"))
        );
        assert_eq!(
            lacks("DeepseekV3ForCausalLM", at("0.5.4"), Lack::EmbedHandOver),
            None
        );
        assert_eq!(
            lacks("Qwen2MoeForCausalLM", at("0.5.23"), Lack::EmbedHandOver),
            Some(None)
        );
    }

    #[test]
    fn registries_by_release() {
        // sglang#4689: 0.4.4.post1 has no DeciLM class (nemotron_nas.py arrives in 0.5.1).
        assert_eq!(
            lookup("DeciLMForCausalLM", at("0.4.4.post1"), false),
            Lookup::Missing
        );
        assert_eq!(
            lookup("DeciLMForCausalLM", at("0.5.1"), false),
            Lookup::Class
        );
        assert_eq!(
            releases_with("DeciLMForCausalLM", at("0.4.4.post1")),
            (Some("0.5.1"), None)
        );
        for v in KNOWN_VERSIONS {
            assert_eq!(
                lookup("LlamaForCausalLM", at(v), false),
                Lookup::Class,
                "{v}"
            );
            assert_eq!(
                lookup("DeepseekV3ForCausalLM", at(v), false) == Lookup::Class,
                cmp(v, "0.4.1").is_ge(),
                "{v}"
            );
            assert_eq!(
                lookup("TransformersForCausalLM", at(v), false) == Lookup::Class,
                cmp(v, TRANSFORMERS_FALLBACK_FROM).is_ge(),
                "{v}"
            );
        }
        // Qwen3 (qwen3.py) arrived in 0.4.5.post2; GPT-OSS in 0.5.0rc0.
        assert_eq!(
            lookup("Qwen3ForCausalLM", at("0.4.5.post1"), false),
            Lookup::Missing
        );
        assert_eq!(
            lookup("Qwen3ForCausalLM", at("0.4.5.post2"), false),
            Lookup::Class
        );
        assert_eq!(
            lookup("GptOssForCausalLM", at("0.4.10.post2"), false),
            Lookup::Missing
        );
        assert_eq!(
            lookup("GptOssForCausalLM", at("0.5.0rc0"), false),
            Lookup::Class
        );
        assert_eq!(
            lookup("NoSuchForCausalLM", at("0.5.23"), false),
            Lookup::Missing
        );
        assert_eq!(lookup("llama", at("0.5.23"), false), Lookup::Missing);
    }

    #[test]
    fn rewrites_and_config_types() {
        // Olmo3Config turns Olmo3ForCausalLM into Olmo2ForCausalLM from 0.5.4.
        assert_eq!(
            lookup("Olmo3ForCausalLM", at("0.5.4"), false),
            Lookup::Rewritten
        );
        assert_eq!(
            releases_with("Olmo3ForCausalLM", at("0.5.3")),
            (Some("0.5.4"), None)
        );
        assert!(config_type_rewritten("deepseek_vl_v2", at("0.5.23")));
        assert!(!config_type_rewritten("llama", at("0.5.23")));
        assert!(!config_type_rewritten("LlamaForCausalLM", at("0.5.23")));
        assert_eq!(exact("0.5.23+cu128"), exact("0.5.23"));
        assert_eq!(exact("0.5.24"), None);
        assert_eq!(exact("0.4.3.post9"), None);
    }
}
