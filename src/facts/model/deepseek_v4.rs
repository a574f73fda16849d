//! DeepSeek-V4 (`model_type: deepseek_v4`): a checkpoint layout no generic layer follows.
//!
//! Per decoder layer: a low-rank query and one shared 512-wide KV head (`wqkv_a`, `wq_b`), a
//! grouped low-rank output (`wo_a` over `o_groups`, `wo_b`), a KV compressor on the layers
//! `compress_ratios` gives a ratio (with an indexer on the ratio-4 ones), hyper-connection
//! mixers, and a MoE layer (hash-routed in the first `num_hash_layers`). The official
//! checkpoints ship the routed experts as MXFP4 (two e2m1 values a byte, one e8m0 scale per 32)
//! inside an `fp8` quantization_config; every other linear weight is block FP8, the
//! compressors, gates, embedding and head BF16, the mixers FP32. The MTP layer has no
//! embedding or head of its own. Priced this way, DeepSeek-V4-Pro's config gives 864.7 GB,
//! the size of its published checkpoint (805.33 GiB).

use serde_json::{Map, Value};

/// The dimensions only DeepSeek-V4 has.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct V4Layout {
    pub o_groups: u64,
    pub o_lora_rank: u64,
    pub index_n_heads: u64,
    pub hc_mult: u64,
    pub num_hash_layers: u64,
    /// Per decoder layer: 0 (no compressor), 4 (compressor and indexer) or another ratio.
    pub compress_ratios: Vec<u64>,
    /// The official checkpoint's packing: MXFP4 routed experts in a block-FP8 config (what the
    /// weight estimate prices firmly; another export is sized as unmodelled).
    pub mxfp4_experts: bool,
    /// NVIDIA's NVFP4 export: `moe_quant_algo: NVFP4` in the block-FP8 config (SGLang's NVFP4
    /// MoE metadata, which picks the MoE runner in some releases).
    pub nvfp4_experts: bool,
    /// The RoPE tables SGLang builds once per RoPE base (the uncompressed layers' and the
    /// compressed ones'), bytes: complex64 over `max_position_embeddings`, and FP32 cos/sin over
    /// YaRN's range (original context × factor).
    pub rope_table_bytes: f64,
}

/// The architecture SGLang's DeepSeek-V4 paths key on.
pub const ARCH: &str = "DeepseekV4ForCausalLM";

/// Bytes per routed-expert value as the checkpoint stores it (MXFP4 with its scales).
pub const CHECKPOINT_EXPERT_BYTES: f64 = 0.5 + 1.0 / 32.0;

/// Bytes per routed-expert value in NVIDIA's NVFP4 export: FP4 with an FP8 scale per 16.
pub const NVFP4_EXPERT_BYTES: f64 = 0.5 + 1.0 / 16.0;

/// The layout of a DeepSeek-V4 config. Dimensions past any real model's are not believed.
pub(super) fn read(top: &Map<String, Value>) -> Option<V4Layout> {
    if top.get("model_type").and_then(Value::as_str) != Some("deepseek_v4") {
        return None;
    }
    let q = top.get("quantization_config").and_then(Value::as_object);
    // NVIDIA's NVFP4 export keeps the block-FP8 config and names its experts' format in
    // `moe_quant_algo` (what SGLang reads as NVFP4 MoE metadata).
    let nvfp4_experts = q.is_some_and(|q| {
        q.get("moe_quant_algo")
            .and_then(Value::as_str)
            .is_some_and(|a| a.eq_ignore_ascii_case("nvfp4"))
    });
    let mxfp4_experts = !nvfp4_experts
        && q.is_some_and(|q| {
            q.get("quant_method").and_then(Value::as_str) == Some("fp8")
                && super::quant::block_size(q).is_some()
        });
    let u = |k: &str, max: u64| top.get(k)?.as_u64().filter(|v| (1..=max).contains(v));
    let ratios = top.get("compress_ratios")?.as_array()?;
    let compress_ratios: Option<Vec<u64>> = ratios
        .iter()
        .take(1024)
        .map(|r| r.as_u64().filter(|r| *r <= 1 << 16))
        .collect();
    Some(V4Layout {
        o_groups: u("o_groups", 1024)?,
        o_lora_rank: u("o_lora_rank", 1 << 16)?,
        index_n_heads: u("index_n_heads", 1024)?,
        hc_mult: u("hc_mult", 64)?,
        num_hash_layers: top
            .get("num_hash_layers")
            .and_then(Value::as_u64)
            .unwrap_or(0),
        compress_ratios: compress_ratios?,
        mxfp4_experts,
        nvfp4_experts,
        rope_table_bytes: rope_tables(top)?,
    })
}

/// See [`V4Layout::rope_table_bytes`].
fn rope_tables(top: &Map<String, Value>) -> Option<f64> {
    let u = |v: Option<&Value>| v?.as_u64().filter(|v| (1..=1 << 26).contains(v));
    let rope = u(top.get("qk_rope_head_dim"))? as f64;
    let positions = u(top.get("max_position_embeddings"))? as f64;
    let scaling = top.get("rope_scaling");
    let original = u(scaling.and_then(|s| s.get("original_max_position_embeddings")))
        .map_or(positions, |o| o as f64);
    let factor = scaling
        .and_then(|s| s.get("factor"))
        .and_then(Value::as_f64)
        .filter(|f| (1.0..=1024.0).contains(f))
        .unwrap_or(1.0);
    Some(positions * rope / 2.0 * 8.0 + (original * factor).floor() * rope * 4.0)
}

impl V4Layout {
    /// The RoPE bases the given layers need (ratio 0 and compressed layers use different ones).
    pub fn rope_bases(&self, layers: u64, with_mtp: bool) -> u64 {
        let used = &self.compress_ratios[..(layers as usize).min(self.compress_ratios.len())];
        let plain = used.contains(&0) || with_mtp || used.len() < layers as usize;
        let compressed = used.iter().any(|r| *r > 0);
        u64::from(plain) + u64::from(compressed)
    }
}

/// A block-FP8 `n × k` weight with its FP32 scale per 128×128 block, bytes.
fn fp8(n: f64, k: f64) -> f64 {
    n * k + (n / 128.0).ceil() * (k / 128.0).ceil() * 4.0
}

/// The dimensions the layer sums read, from the generic facts.
struct Dims {
    h: f64,
    heads: f64,
    head: f64,
    q_lora: f64,
    experts: f64,
    expert_width: f64,
    shared: f64,
    vocab: f64,
    top_k: f64,
    index_head: f64,
}

impl Dims {
    fn of(f: &super::ModelFacts) -> Option<Dims> {
        Some(Dims {
            h: f.hidden_size? as f64,
            heads: f.num_attention_heads? as f64,
            head: f.head_dim? as f64,
            q_lora: f.q_lora_rank? as f64,
            experts: f.num_experts? as f64,
            expert_width: f.moe_intermediate_size? as f64,
            shared: f.n_shared_experts.unwrap_or(0) as f64,
            vocab: f.vocab_size? as f64,
            top_k: f.num_experts_per_tok.unwrap_or(1) as f64,
            index_head: f.index_head_dim.unwrap_or(128) as f64,
        })
    }
}

/// One decoder layer's bytes in the checkpoint: what TP shards, what every rank holds whole.
#[derive(Default)]
struct Layer {
    sharded: f64,
    replicated: f64,
}

/// A decoder layer with compress ratio `ratio` (hash-routed or not), routed experts excluded.
fn layer(d: &Dims, l: &V4Layout, ratio: u64, hashed: bool) -> Layer {
    let (h, og, ol) = (d.h, l.o_groups as f64, l.o_lora_rank as f64);
    let mut out = Layer::default();
    out.sharded += fp8(d.heads * d.head, d.q_lora)
        + fp8(og * ol, d.heads * d.head / og)
        + fp8(h, og * ol)
        + d.shared * (fp8(2.0 * d.expert_width, h) + fp8(h, d.expert_width));
    out.replicated += fp8(d.q_lora + d.head, h) + (d.q_lora + d.head) * 2.0 + d.heads * 4.0;
    if ratio > 0 {
        let coff = if ratio == 4 { 2.0 } else { 1.0 };
        out.replicated +=
            2.0 * coff * d.head * h * 2.0 + ratio as f64 * coff * d.head * 4.0 + d.head * 4.0;
    }
    if ratio == 4 {
        let ix = d.index_head;
        out.replicated += fp8(l.index_n_heads as f64 * ix, d.q_lora)
            + l.index_n_heads as f64 * h * 2.0
            + 4.0 * ix * h * 2.0
            + 8.0 * ix * 4.0
            + ix * 4.0;
    }
    let m = l.hc_mult as f64;
    let mix = (2.0 + m) * m;
    out.replicated += 2.0 * (mix * m * h * 4.0 + mix * 4.0 + 12.0) + 2.0 * h * 2.0;
    out.replicated += d.experts * h * 2.0;
    out.replicated += if hashed {
        d.vocab * d.top_k * 4.0
    } else {
        d.experts * 4.0
    };
    out
}

/// The checkpoint's bytes by kind, and the values loading re-lays.
pub(super) struct V4Bytes {
    /// The target's layers, embedding and head.
    pub(super) model: f64,
    /// The MTP layers (no embedding or head of their own).
    pub(super) mtp: f64,
    /// Of `model`: what every TP rank holds whole.
    pub(super) replicated: f64,
    /// Routed-expert values per layer (MXFP4 in the official checkpoint).
    pub(super) expert_values_per_layer: f64,
    /// `wo_a` values per layer (block FP8 in the checkpoint).
    pub(super) wo_a_per_layer: f64,
    /// Of `model`: the routed experts, as the checkpoint stores them.
    pub(super) routed_experts: f64,
}

/// See [`V4Bytes`].
pub(super) fn breakdown(f: &super::ModelFacts, l: &V4Layout) -> Option<V4Bytes> {
    let d = Dims::of(f)?;
    let layers = f.num_hidden_layers?;
    let expert_values = d.experts * 3.0 * d.expert_width * d.h;
    let (mut sharded, mut replicated) = (0.0, 0.0);
    for i in 0..layers {
        let ratio = l.compress_ratios.get(i as usize).copied().unwrap_or(0);
        let one = layer(&d, l, ratio, i < l.num_hash_layers);
        sharded += one.sharded;
        replicated += one.replicated;
    }
    let (h, m) = (d.h, l.hc_mult as f64);
    let embed = d.vocab * h * 2.0;
    let head_extras = h * 2.0 + m * m * h * 4.0 + m * 4.0 + 4.0;
    // NVIDIA's export re-packs the target's routed experts only (its `mtp.*` is left alone).
    let target_expert_bytes = if l.nvfp4_experts {
        NVFP4_EXPERT_BYTES
    } else {
        CHECKPOINT_EXPERT_BYTES
    };
    let experts = layers as f64 * expert_values * target_expert_bytes;
    let mtp_layer = layer(&d, l, 0, false);
    let mtp_layers = f.num_nextn_predict_layers.unwrap_or(0) as f64;
    let mtp = mtp_layers
        * (mtp_layer.sharded
            + mtp_layer.replicated
            + expert_values * CHECKPOINT_EXPERT_BYTES
            + 2.0 * fp8(h, h)
            + 3.0 * h * 2.0
            + m * m * h * 4.0);
    Some(V4Bytes {
        model: sharded + replicated + experts + 2.0 * embed + head_extras,
        mtp,
        replicated: replicated + head_extras,
        expert_values_per_layer: expert_values,
        wo_a_per_layer: l.o_lora_rank as f64 * d.heads * d.head,
        routed_experts: experts,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn the_official_packing_is_told_from_other_exports() {
        let config = |quant: serde_json::Value| {
            json!({
                "model_type": "deepseek_v4", "o_groups": 8, "o_lora_rank": 1024,
                "index_n_heads": 64, "hc_mult": 4, "compress_ratios": [0, 4, 128],
                "qk_rope_head_dim": 64, "max_position_embeddings": 1048576,
                "quantization_config": quant,
            })
        };
        let read = |c: serde_json::Value| super::read(c.as_object().unwrap());
        let fp8 = json!({"quant_method": "fp8", "weight_block_size": [128, 128]});
        let layout = read(config(fp8)).unwrap();
        assert_eq!(layout.compress_ratios, vec![0, 4, 128]);
        // Both RoPE bases: plain layers and compressed ones.
        assert_eq!(layout.rope_bases(3, false), 2);
        assert_eq!(layout.rope_bases(1, false), 1);
        assert!(layout.mxfp4_experts);
        // An NVFP4 re-export packs its experts otherwise.
        let nvfp4 = read(config(
            json!({"quant_method": "modelopt", "quant_algo": "NVFP4"}),
        ));
        assert!(!nvfp4.unwrap().mxfp4_experts);
        // NVIDIA's NVFP4 export of V4-Pro keeps the block-FP8 method and names the experts'.
        let nvidia = read(config(json!({
            "quant_method": "fp8",
            "weight_block_size": [128, 128],
            "moe_quant_algo": "NVFP4",
        })));
        let nvidia = nvidia.unwrap();
        assert!(!nvidia.mxfp4_experts && nvidia.nvfp4_experts);
        let mut other = config(json!({"quant_method": "fp8", "weight_block_size": [128, 128]}));
        other["model_type"] = json!("deepseek_v3");
        assert!(read(other).is_none());
    }
}
