//! Mamba / linear-attention hybrids: the per-request recurrent state of their linear layers.
//!
//! SGLang describes every such layer with one shape (its `Mamba2StateShape`): a conv state of
//! `conv_dim / tp × (kernel − 1)` and a temporal (SSM) state of `heads / tp × head_dim × state`,
//! where `conv_dim = inner + 2 · groups · state` and the groups are padded up to the TP width.
//! Gated DeltaNet (Qwen3-Next, Qwen3.5) maps onto it as inner = value heads × value dim,
//! groups = key heads, heads = value heads, head_dim = value dim, state = key dim.

use serde_json::{Map, Value};

/// The linear layers' state shape, before tensor parallelism.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LinearState {
    /// Layers that keep a recurrent state.
    pub(crate) layers: u64,
    pub(crate) inner: u64,
    pub(crate) groups: u64,
    pub(crate) heads: u64,
    pub(crate) head_dim: u64,
    pub(crate) state: u64,
    pub(crate) conv_kernel: u64,
    /// Layers that keep a KV cache.
    pub(crate) attention_layers: u64,
}

impl LinearState {
    /// Bytes of one request's state on one attention-TP rank, for the conv and SSM element sizes.
    pub(crate) fn bytes_per_request(&self, tp: u64, conv_bytes: u64, ssm_bytes: u64) -> u64 {
        let tp = tp.max(1);
        // SGLang widens groups that do not divide over TP to the TP width.
        let groups = if !self.groups.is_multiple_of(tp) {
            tp
        } else {
            self.groups
        };
        // Saturating: an absurd config must not overflow.
        let conv_dim = self
            .inner
            .saturating_add(groups.saturating_mul(self.state).saturating_mul(2));
        let conv = (conv_dim / tp).saturating_mul(self.conv_kernel.saturating_sub(1));
        let ssm = (self.heads / tp)
            .saturating_mul(self.head_dim)
            .saturating_mul(self.state);
        conv.saturating_mul(conv_bytes)
            .saturating_add(ssm.saturating_mul(ssm_bytes))
            .saturating_mul(self.layers)
    }
}

fn u(c: &Map<String, Value>, k: &str) -> Option<u64> {
    c.get(k).and_then(Value::as_u64)
}

/// The text model's config: `text_config` when there is one.
fn text(top: &Map<String, Value>) -> &Map<String, Value> {
    match top.get("text_config") {
        Some(Value::Object(t)) => t,
        _ => top,
    }
}

/// The linear layers' state from config.json; `None` for models without linear layers.
pub(crate) fn read(top: &Map<String, Value>) -> Option<LinearState> {
    let c = text(top);
    let layers = u(c, "num_hidden_layers");
    layers
        .and_then(|l| gated_delta_net(c, l))
        .or_else(|| nemotron_h(c))
        .or_else(|| falcon_h1(c, layers?))
        .or_else(|| kimi_linear(c, layers?))
}

/// Kimi's KDA layers (`linear_attn_config`): heads, head width and the layer lists, each
/// within the bounds a real config keeps (the nested block is not among the checked keys).
struct Kda {
    heads: u64,
    head_dim: u64,
    kernel: u64,
    layers: u64,
    attention_layers: u64,
}

fn kda(c: &Map<String, Value>, layers: u64) -> Option<Kda> {
    let l = c.get("linear_attn_config")?.as_object()?;
    let within = |k: &str, max: u64| u(l, k).filter(|v| (1..=max).contains(v));
    let count = |k: &str| l.get(k).and_then(Value::as_array).map(|a| a.len() as u64);
    let kda_layers = count("kda_layers")?.min(layers);
    Some(Kda {
        heads: within("num_heads", 1 << 16)?,
        head_dim: within("head_dim", 1 << 12)?,
        kernel: within("short_conv_kernel_size", 1 << 8).unwrap_or(4),
        layers: kda_layers,
        attention_layers: count("full_attn_layers").map_or(layers - kda_layers, |n| n.min(layers)),
    })
}

/// Kimi-Linear / Kimi-K3: a KDA layer keeps conv states over q, k and v and a head_dim² state
/// per head, which is SGLang's shape with inner = heads × head_dim, groups = heads and
/// state = head_dim.
fn kimi_linear(c: &Map<String, Value>, layers: u64) -> Option<LinearState> {
    let k = kda(c, layers)?;
    Some(LinearState {
        layers: k.layers,
        inner: k.heads * k.head_dim,
        groups: k.heads,
        heads: k.heads,
        head_dim: k.head_dim,
        state: k.head_dim,
        conv_kernel: k.kernel,
        attention_layers: k.attention_layers,
    })
}

/// One KDA layer's token-mixer parameters and the part every TP rank holds whole: the q, k, v
/// and gate projections and the output projection (each `hidden × heads·head_dim`), the beta
/// projection, and the low-rank decay projection whose first half is replicated.
pub(crate) fn kda_mixer_params(top: &Map<String, Value>) -> Option<(u64, u64)> {
    let c = text(top);
    let h = u(c, "hidden_size")?;
    let k = kda(c, u(c, "num_hidden_layers")?)?;
    let proj = k.heads * k.head_dim;
    let replicated = h * k.head_dim;
    let params = 5 * h * proj + h * k.heads + replicated + k.head_dim * proj;
    Some((params, replicated))
}

/// Qwen3-Next / Qwen3.5: `layer_types`, else one full-attention layer per
/// `full_attention_interval`.
fn gated_delta_net(c: &Map<String, Value>, layers: u64) -> Option<LinearState> {
    let v_heads = u(c, "linear_num_value_heads")?;
    let v_dim = u(c, "linear_value_head_dim")?;
    let full = match c.get("layer_types").and_then(Value::as_array) {
        Some(t) => t
            .iter()
            .filter(|t| t.as_str() == Some("full_attention"))
            .count() as u64,
        None => layers / u(c, "full_attention_interval").filter(|&i| i > 0)?,
    };
    Some(LinearState {
        layers: layers.saturating_sub(full),
        inner: v_heads * v_dim,
        groups: u(c, "linear_num_key_heads")?,
        heads: v_heads,
        head_dim: v_dim,
        state: u(c, "linear_key_head_dim")?,
        conv_kernel: u(c, "linear_conv_kernel_dim").unwrap_or(4),
        attention_layers: full,
    })
}

/// Nemotron-H: `hybrid_override_pattern` (`M` a Mamba-2 layer, `*` an attention layer) or
/// `layers_block_type`.
fn nemotron_h(c: &Map<String, Value>) -> Option<LinearState> {
    let kinds = super::nemotron_h::kinds(c)?;
    let heads = u(c, "mamba_num_heads")?;
    let head_dim = u(c, "mamba_head_dim")?;
    Some(LinearState {
        layers: kinds.mamba,
        inner: heads * head_dim,
        groups: u(c, "n_groups")?,
        heads,
        head_dim,
        state: u(c, "ssm_state_size")?,
        conv_kernel: u(c, "conv_kernel")?,
        attention_layers: kinds.attention,
    })
}

/// Falcon-H1: every layer runs attention and a Mamba-2 mixer side by side.
fn falcon_h1(c: &Map<String, Value>, layers: u64) -> Option<LinearState> {
    let heads = u(c, "mamba_n_heads")?;
    let head_dim = u(c, "mamba_d_head")?;
    let inner = u(c, "mamba_d_ssm")
        .or_else(|| u(c, "mamba_expand")?.checked_mul(u(c, "hidden_size")?))
        .unwrap_or(heads * head_dim);
    Some(LinearState {
        layers,
        inner,
        groups: u(c, "mamba_n_groups").unwrap_or(1),
        heads,
        head_dim,
        state: u(c, "mamba_d_state")?,
        conv_kernel: u(c, "mamba_d_conv").unwrap_or(4),
        attention_layers: layers,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    /// Qwen3-Next-80B-A3B's config fields; SGLang's shape for it is conv (8192, 3) and temporal
    /// (32, 128, 128) at TP 1, its docstring's own example.
    #[test]
    fn qwen3_next_state() {
        let s = read(&obj(json!({
            "num_hidden_layers": 48, "full_attention_interval": 4,
            "linear_num_value_heads": 32, "linear_num_key_heads": 16,
            "linear_key_head_dim": 128, "linear_value_head_dim": 128,
            "linear_conv_kernel_dim": 4
        })))
        .unwrap();
        assert_eq!((s.layers, s.attention_layers), (36, 12));
        let per_layer = 8192 * 3 * 2 + 32 * 128 * 128 * 4;
        assert_eq!(s.bytes_per_request(1, 2, 4), 36 * per_layer);
        // TP 4: both states split four ways.
        assert_eq!(s.bytes_per_request(4, 2, 4), 36 * (per_layer / 4));
    }

    #[test]
    fn nemotron_h_pattern_and_group_padding() {
        let s = read(&obj(json!({
            "num_hidden_layers": 6, "hybrid_override_pattern": "M-M*-M",
            "mamba_num_heads": 8, "mamba_head_dim": 4, "n_groups": 1,
            "ssm_state_size": 2, "conv_kernel": 4
        })))
        .unwrap();
        assert_eq!((s.layers, s.attention_layers), (3, 1));
        // One group at TP 2 is replicated to two: conv_dim 32 + 2·2·2 = 40.
        assert_eq!(
            s.bytes_per_request(2, 2, 4),
            3 * (20 * 3 * 2 + 4 * 4 * 2 * 4)
        );
    }

    /// Kimi-K3's text config: 69 KDA layers of 96 heads × 128, 24 MLA layers. SGLang's shape at
    /// TP 8 is conv (3, 3 × 12288 / 8) and temporal (12, 128, 128).
    #[test]
    fn kimi_k3_kda_state_and_mixer() {
        let kda: Vec<u64> = (1..=93).filter(|l| l % 4 != 0 && *l != 93).collect();
        let full: Vec<u64> = (1..=93).filter(|l| !kda.contains(l)).collect();
        let top = obj(json!({"text_config": {
            "num_hidden_layers": 93, "hidden_size": 7168,
            "linear_attn_config": {"kda_layers": kda, "full_attn_layers": full,
                "num_heads": 96, "head_dim": 128, "short_conv_kernel_size": 4}
        }}));
        let s = read(&top).unwrap();
        assert_eq!((s.layers, s.attention_layers), (69, 24));
        let per_layer = 3 * 4608 * 2 + 12 * 128 * 128 * 4;
        assert_eq!(s.bytes_per_request(8, 2, 4), 69 * per_layer);
        let (params, replicated) = kda_mixer_params(&top).unwrap();
        assert_eq!(replicated, 7168 * 128);
        // q, k, v, gate and output projections dominate: about 443M parameters a layer.
        assert_eq!(params / 1_000_000, 443);
    }

    #[test]
    fn dense_models_have_no_state() {
        assert_eq!(read(&obj(json!({"num_hidden_layers": 32}))), None);
    }
}
