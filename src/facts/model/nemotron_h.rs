//! Nemotron-H (Nemotron-H, Nemotron-3 Nano / Super / Ultra): a stack of Mamba-2, attention,
//! MLP and MoE layers named one by one (`hybrid_override_pattern`: `M`, `*`, `-`, `E`; or
//! `layers_block_type`), with non-gated MLPs (relu²) and, in the larger MoE models, experts that
//! work in a narrower latent space (`moe_latent_size`). The generic estimate (attention and a
//! gated MLP in every layer) overcounts such a model many times, so it is sized layer by layer.

use serde_json::{Map, Value};

/// How many layers of each kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Kinds {
    pub mamba: u64,
    pub attention: u64,
    pub mlp: u64,
    pub moe: u64,
}

impl Kinds {
    /// Every layer.
    pub fn total(&self) -> u64 {
        self.mamba + self.attention + self.mlp + self.moe
    }
}

/// The layer kinds from `hybrid_override_pattern` or `layers_block_type`.
pub(crate) fn kinds(c: &Map<String, Value>) -> Option<Kinds> {
    if let Some(p) = c.get("hybrid_override_pattern").and_then(Value::as_str) {
        let n = |ch| p.chars().filter(|&x| x == ch).count() as u64;
        return Some(Kinds {
            mamba: n('M'),
            attention: n('*'),
            mlp: n('-'),
            moe: n('E'),
        });
    }
    let types = c.get("layers_block_type")?.as_array()?;
    let n = |name| types.iter().filter(|t| t.as_str() == Some(name)).count() as u64;
    Some(Kinds {
        mamba: n("mamba"),
        attention: n("attention"),
        mlp: n("mlp"),
        moe: n("moe"),
    })
}

/// Parameters per layer of each kind (attention's is the caller's: it needs the head layout).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Layout {
    pub kinds: Kinds,
    /// A Mamba-2 mixer: input projection, depthwise conv, output projection.
    pub mamba: f64,
    /// A non-gated MLP (up and down).
    pub mlp: f64,
    /// One MoE layer's routed experts, each up and down in the latent (or hidden) width.
    pub routed: f64,
    /// One MoE layer's shared expert and latent projections.
    pub shared: f64,
    /// One MoE layer's router.
    pub router: f64,
    /// The MoE layers work in a latent width (`moe_latent_size`), with projections in and out.
    pub latent: bool,
}

fn u(c: &Map<String, Value>, k: &str) -> Option<f64> {
    c.get(k).and_then(Value::as_u64).map(|v| v as f64)
}

/// The layout from a Nemotron-H config.json; `None` for other models.
pub(crate) fn read(c: &Map<String, Value>) -> Option<Layout> {
    if c.get("model_type").and_then(Value::as_str) != Some("nemotron_h") {
        return None;
    }
    let kinds = kinds(c)?;
    let h = u(c, "hidden_size")?;
    let heads = u(c, "mamba_num_heads")?;
    let inner = heads * u(c, "mamba_head_dim")?;
    let conv = inner + 2.0 * u(c, "n_groups")? * u(c, "ssm_state_size")?;
    let mamba = h * (inner + conv + heads) + conv * u(c, "conv_kernel").unwrap_or(4.0) + inner * h;
    let mlp = 2.0 * h * u(c, "intermediate_size").unwrap_or(0.0);
    let experts = u(c, "n_routed_experts").unwrap_or(0.0);
    let latent = u(c, "moe_latent_size");
    let width = latent.unwrap_or(h);
    let moe_inter = u(c, "moe_intermediate_size").unwrap_or(0.0);
    let shared_inter = u(c, "moe_shared_expert_intermediate_size").unwrap_or(0.0);
    let shared_n = u(c, "n_shared_experts").unwrap_or(0.0).min(1.0);
    Some(Layout {
        kinds,
        mamba,
        mlp,
        routed: experts * 2.0 * width * moe_inter,
        shared: shared_n * 2.0 * h * shared_inter + latent.map_or(0.0, |l| 2.0 * h * l),
        router: h * experts,
        latent: latent.is_some(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// Total parameters (attention included, embeddings and head) of a real config.
    fn billions(dir: &str) -> f64 {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(dir)
            .join("config.json");
        let text = std::fs::read_to_string(p).unwrap();
        let c: Map<String, Value> = crate::sglang::pyjson::loads(&text)
            .unwrap()
            .as_object()
            .unwrap()
            .clone();
        let l = read(&c).unwrap();
        let f = |k| u(&c, k).unwrap();
        let (h, heads, kvh) = (
            f("hidden_size"),
            f("num_attention_heads"),
            f("num_key_value_heads"),
        );
        let hd = u(&c, "head_dim").unwrap_or(h / heads);
        let attention = 2.0 * h * heads * hd + 2.0 * h * kvh * hd;
        let k = l.kinds;
        let embed = f("vocab_size") * h * 2.0;
        (k.mamba as f64 * l.mamba
            + k.attention as f64 * attention
            + k.mlp as f64 * l.mlp
            + k.moe as f64 * (l.routed + l.shared + l.router)
            + embed)
            / 1e9
    }

    /// The real configs' sizes match the parameter counts their names give (Super 120B with
    /// the latent experts in a pattern string, Ultra 550B with named layer kinds).
    #[test]
    fn real_configs_add_up_to_their_published_sizes() {
        let near = |got: f64, want: f64| (got / want - 1.0).abs() < 0.02;
        let super_ = billions("tests/field/models/nvidia__NVIDIA-Nemotron-3-Super-120B-A12B-NVFP4");
        assert!(near(super_, 120.0), "{super_}");
        let ultra = billions("tests/field/models/nvidia__NVIDIA-Nemotron-3-Ultra-550B-A55B-NVFP4");
        assert!(near(ultra, 550.0), "{ultra}");
    }

    #[test]
    fn both_spellings_of_the_layer_kinds() {
        let pattern = serde_json::json!({"hybrid_override_pattern": "M-M*E"});
        let k = kinds(pattern.as_object().unwrap()).unwrap();
        assert_eq!((k.mamba, k.attention, k.mlp, k.moe), (2, 1, 1, 1));
        let named = serde_json::json!({"layers_block_type": ["mamba", "moe", "attention", "moe"]});
        let k = kinds(named.as_object().unwrap()).unwrap();
        assert_eq!((k.mamba, k.attention, k.mlp, k.moe), (1, 1, 0, 2));
    }
}
