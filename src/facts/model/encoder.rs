//! Vision towers and audio encoders: parameter counts from `vision_config` / `audio_config`.
//!
//! Only needed when the weight bytes are estimated from the language model's dimensions (the
//! safetensors headers and index already count the encoders).

use serde_json::{Map, Value};

/// One transformer encoder's dimensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EncoderDims {
    pub(crate) layers: u64,
    pub(crate) hidden: u64,
    pub(crate) intermediate: u64,
    /// Patch embedding and learned positions (vision), else 0.
    pub(crate) patch_params: u64,
    /// The projector into the language model's width (`hidden × text hidden`).
    pub(crate) projector_params: u64,
}

impl EncoderDims {
    /// Parameters: per layer 4·h² of attention and 2·h·i of MLP, plus embeddings and projector.
    pub(crate) fn params(&self) -> f64 {
        let (h, i) = (self.hidden as f64, self.intermediate as f64);
        self.layers as f64 * (4.0 * h * h + 2.0 * h * i)
            + self.patch_params as f64
            + self.projector_params as f64
    }
}

/// The first whole number among `keys`.
fn first(c: &Map<String, Value>, keys: &[&str]) -> Option<u64> {
    keys.iter().find_map(|k| c.get(*k).and_then(Value::as_u64))
}

/// One encoder config; `text_hidden` sizes the projector.
fn dims(c: &Map<String, Value>, text_hidden: u64) -> Option<EncoderDims> {
    let hidden = first(c, &["hidden_size", "d_model", "embed_dim", "width"])?;
    let layers = first(
        c,
        &["num_hidden_layers", "depth", "encoder_layers", "num_layers"],
    )?;
    let intermediate = first(c, &["intermediate_size", "encoder_ffn_dim", "ffn_dim"])
        .or_else(|| {
            let r = c.get("mlp_ratio").and_then(Value::as_f64)?;
            Some((r * hidden as f64) as u64)
        })
        .unwrap_or(hidden.saturating_mul(4));
    let patch = first(c, &["patch_size"]).unwrap_or(0);
    let channels = first(c, &["num_channels", "in_channels"]).unwrap_or(3);
    let positions = match (first(c, &["image_size"]), patch) {
        (Some(img), p) if p > 0 => (img / p).saturating_mul(img / p),
        _ => 0,
    };
    Some(EncoderDims {
        layers,
        hidden,
        intermediate,
        patch_params: channels
            .saturating_mul(patch.saturating_mul(patch))
            .saturating_add(positions)
            .saturating_mul(hidden),
        projector_params: hidden.saturating_mul(text_hidden),
    })
}

/// The model's encoders (vision, audio), as config.json describes them.
pub(crate) fn read(top: &Map<String, Value>, text_hidden: Option<u64>) -> Vec<EncoderDims> {
    let th = text_hidden.unwrap_or(0);
    ["vision_config", "audio_config"]
        .iter()
        .filter_map(|k| top.get(*k).and_then(Value::as_object))
        .filter_map(|c| dims(c, th))
        .collect()
}

/// Bytes of the encoders at `dtype_bytes` per parameter (towers stay unquantised).
pub(crate) fn bytes(encoders: &[EncoderDims], dtype_bytes: u64) -> u64 {
    let p: f64 = encoders.iter().map(EncoderDims::params).sum();
    (p * dtype_bytes as f64).min(1e15) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Gemma-3-27B's SigLIP tower (27 × 1152, MLP 4304, 896 px in 14 px patches): ~0.42 B
    /// parameters, the published size of SigLIP-So400m without its pooling head.
    #[test]
    fn gemma3_siglip_tower() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/models/google__gemma-3-27b-it/config.json"
        );
        let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let e = read(v.as_object().unwrap(), Some(5376));
        assert_eq!(e.len(), 1);
        let p = e[0].params();
        assert!((0.40e9..0.44e9).contains(&p), "{p}");
        assert_eq!(bytes(&e, 2), (p * 2.0) as u64);
    }

    #[test]
    fn audio_encoder_whisper_style() {
        let top = json!({"audio_config": {"d_model": 1280, "encoder_layers": 32,
                                          "encoder_ffn_dim": 5120}});
        let e = read(top.as_object().unwrap(), Some(3584));
        let per_layer = 4.0 * 1280f64.powi(2) + 2.0 * 1280.0 * 5120.0;
        assert_eq!(e[0].params(), 32.0 * per_layer + 1280.0 * 3584.0);
        assert!(read(json!({}).as_object().unwrap(), None).is_empty());
    }
}
