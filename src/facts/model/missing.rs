//! The config keys the memory plan needs and the facts still lack (after transformers'
//! defaults and derivations), named as config.json spells them.

use super::ModelFacts;

/// A key counts as missing when absent or zero (nothing can be divided by it).
fn lacks(v: Option<u64>) -> bool {
    v.is_none_or(|v| v == 0)
}

impl ModelFacts {
    /// Keys the KV cache's size per token needs, empty when it can be computed.
    pub(crate) fn missing_for_kv(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        if lacks(self.num_full_attention_layers.or(self.num_hidden_layers)) {
            out.push("num_hidden_layers");
        }
        if self.is_mla() {
            return out;
        }
        if lacks(self.num_key_value_heads) {
            out.push("num_key_value_heads");
        }
        if lacks(self.head_dim_or_derived()) {
            out.push("head_dim");
            out.extend(self.missing_width());
        }
        out
    }

    /// Keys the weight estimate needs; empty when the checkpoint's files gave the size.
    pub(crate) fn missing_for_weights(&self) -> Vec<&'static str> {
        if self.weight_bytes.is_some() {
            return Vec::new();
        }
        let mut out = Vec::new();
        if lacks(self.num_hidden_layers) {
            out.push("num_hidden_layers");
        }
        out.extend(self.missing_width());
        if !self.is_mla() && lacks(self.head_dim_or_derived()) {
            out.push("head_dim");
        }
        out
    }

    fn missing_width(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        if lacks(self.hidden_size) {
            out.push("hidden_size");
        }
        if lacks(self.num_attention_heads) {
            out.push("num_attention_heads");
        }
        out
    }
}
