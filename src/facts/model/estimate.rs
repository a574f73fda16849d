//! Checkpoint bytes estimated from the config's dimensions, by kind.

use super::ModelFacts;

/// The checkpoint's bytes by kind, estimated from the dimensions.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct WeightBreakdown {
    /// Everything the target model loads (excludes MTP/NextN layers).
    pub(crate) model: f64,
    /// MTP/NextN layers shipped in the checkpoint, with their own embedding and head copies.
    pub(crate) mtp: f64,
    /// The part of `model` every TP rank holds in full: MLA down-projections (`q_a_proj`,
    /// `kv_a_proj_with_mqa`) and MoE router gates are replicated, not sharded.
    pub(crate) replicated: f64,
    /// MLA: the absorbed `w_kc`/`w_vc` copies SGLang builds from `kv_b_proj` after loading
    /// (dequantised to the model dtype on CUDA), sharded over TP; not in the checkpoint.
    pub(crate) mla_absorbed: f64,
    /// The part of `mtp` the draft shares with the target instead (its embedding and head).
    pub(crate) mtp_shared: f64,
    /// Routed-expert values per MoE layer (MTP layers too) stored as MXFP4, whose loaded size
    /// depends on the MoE runner (DeepSeek-V4); 0 for other layouts.
    pub(crate) mxfp4_expert_values_per_layer: f64,
    /// Block-FP8 weight values per layer SGLang dequantises to BF16 when loading off SM100
    /// (DeepSeek-V4's `wo_a`); 0 for other layouts.
    pub(crate) bf16_off_sm100_params_per_layer: f64,
    /// Parts of `model` whose split over the ranks depends on the parallel layout (0 where the
    /// layout is not modelled, DeepSeek-V4's): the attention TP shards (sharded part of every
    /// layer's attention, with MLA's absorbed copies), the input embedding, the separate LM head
    /// (0 when tied), the dense layers' MLPs, and the routed and shared experts.
    pub(crate) by_part: Parts,
}

/// See [`WeightBreakdown::by_part`].
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct Parts {
    pub(crate) attention: f64,
    pub(crate) embed: f64,
    pub(crate) head: f64,
    pub(crate) dense_mlp: f64,
    pub(crate) routed_experts: f64,
    pub(crate) shared_experts: f64,
}

/// Bytes per parameter of quantised linear weights, with their scales: the checkpoint's storage
/// format when its config says it, else what the bit width alone implies (`--quantization`
/// names a method, not a layout).
fn quantised_bytes(f: &ModelFacts, bits: u32) -> f64 {
    if let Some(format) = f.weight_format {
        return format.bytes_per_weight();
    }
    let method = f.quant_method.as_deref().unwrap_or("");
    match bits {
        8 => 1.0 + 4.0 / (128.0 * 128.0),
        4 if method == "mxfp4" => 0.5 + 1.0 / 32.0,
        4 if method.contains("fp4") => 0.5 + 1.0 / 16.0,
        b => b as f64 / 8.0 + 2.5 / 128.0,
    }
}

/// DeepSeek-V4's official export and NVIDIA's NVFP4 one, sized with V4's own layout.
fn deepseek_v4_breakdown(
    f: &ModelFacts,
    layout: &super::deepseek_v4::V4Layout,
) -> Option<WeightBreakdown> {
    let b = super::deepseek_v4::breakdown(f, layout)?;
    // Only the official MXFP4 experts are re-laid for the MoE runner when loading.
    let mxfp4 = if layout.mxfp4_experts {
        b.expert_values_per_layer
    } else {
        0.0
    };
    Some(WeightBreakdown {
        model: b.model,
        mtp: b.mtp,
        replicated: b.replicated,
        mxfp4_expert_values_per_layer: mxfp4,
        bf16_off_sm100_params_per_layer: b.wo_a_per_layer,
        // Only the routed experts: what KTransformers and redundant experts change.
        by_part: Parts {
            routed_experts: b.routed_experts,
            ..Parts::default()
        },
        ..WeightBreakdown::default()
    })
}

/// Parameter bytes estimated from the dimensions: embeddings, attention, MLP / experts, head.
/// Quantised linear layers are priced at their bit width plus scales (MXFP4 checkpoints quantise
/// only the experts); embeddings, norms, routers and the head stay in the model dtype.
pub(crate) fn weight_breakdown(f: &ModelFacts) -> Option<WeightBreakdown> {
    if let Some(layout) = f
        .deepseek_v4
        .as_ref()
        .filter(|l| l.mxfp4_experts || l.nvfp4_experts)
    {
        return deepseek_v4_breakdown(f, layout);
    }
    let h = f.hidden_size? as f64;
    let layers = f.num_hidden_layers? as f64;
    let vocab = f.vocab_size.unwrap_or(32000) as f64;
    let dims = AttnDims {
        h,
        heads: f.num_attention_heads? as f64,
        kvh: f.num_key_value_heads.unwrap_or(f.num_attention_heads?) as f64,
        hd: f.head_dim_or_derived()? as f64,
    };
    let (attn, attn_replicated, mla_absorbed) = mixer_params(f, dims, layers)?;
    let inter = f.intermediate_size.unwrap_or((h * 4.0) as u64) as f64;
    let dense_mlp = 3.0 * h * f.dense_intermediate_size.map_or(inter, |d| d as f64);
    let moe = moe_params(f, h, inter, layers);
    let (dense_layers, moe_layers) = (moe.dense_layers, layers - moe.dense_layers);
    let dtype = f.dtype_bytes() as f64;
    let (q_bytes, experts_only) = match f.weight_bits {
        Some(bits) if bits < 16 => (
            quantised_bytes(f, bits),
            f.quant_method.as_deref() == Some("mxfp4"),
        ),
        _ => (dtype, false),
    };
    // MXFP4 quantises only the experts; other checkpoints may leave attention out.
    let other_linear_bytes = if experts_only { dtype } else { q_bytes };
    let attn_bytes = if f.attention_unquantised {
        dtype
    } else {
        other_linear_bytes
    };
    let attn_b = attn * attn_bytes;
    if let Some(n) = &f.nemotron_h {
        let q = Bytes {
            dtype,
            expert: q_bytes,
            linear: other_linear_bytes,
            attention: attn_bytes,
        };
        return Some(nemotron_h(f, n, attn, q, vocab * h * dtype));
    }
    let shared_bytes = if f.shared_experts_unquantised {
        dtype
    } else {
        q_bytes
    };
    let layer_dense = attn_b + dense_mlp * other_linear_bytes;
    let unquantised_moe = (moe.router + moe.latent) * dtype;
    let layer_moe = attn_b + moe.experts * q_bytes + moe.shared * shared_bytes + unquantised_moe;
    let embed = vocab * h * dtype;
    let head = if f.tie_word_embeddings { 0.0 } else { embed };
    let model = dense_layers * layer_dense + moe_layers * layer_moe + embed + head;
    let per_layer_replicated = attn_replicated * attn_bytes;
    let replicated = layers * per_layer_replicated + moe_layers * unquantised_moe;
    let by_part = Parts {
        attention: layers * (attn_b - per_layer_replicated) + mla_absorbed,
        embed,
        head,
        dense_mlp: dense_layers * dense_mlp * other_linear_bytes,
        routed_experts: moe_layers * moe.experts * q_bytes,
        shared_experts: moe_layers * moe.shared * shared_bytes,
    };
    // An MTP layer is a full decoder layer (MoE when the model is) plus its own embed and head.
    let mtp_layer = if moe_layers > 0.0 {
        layer_moe
    } else {
        layer_dense
    };
    let mtp_layers = f.num_nextn_predict_layers.unwrap_or(0) as f64;
    Some(WeightBreakdown {
        model,
        mtp: mtp_layers * (mtp_layer + 2.0 * embed),
        replicated,
        mla_absorbed,
        mtp_shared: mtp_layers * 2.0 * embed,
        by_part,
        ..WeightBreakdown::default()
    })
}

/// One MoE layer's parameters by kind, and how many of the layers are dense.
#[derive(Default)]
struct MoeParams {
    experts: f64,
    shared: f64,
    router: f64,
    /// A latent MoE's down and up projections, replicated on every rank.
    latent: f64,
    dense_layers: f64,
}

fn moe_params(f: &ModelFacts, h: f64, inter: f64, layers: f64) -> MoeParams {
    let Some(e) = f.num_experts.filter(|&e| e > 1).map(|e| e as f64) else {
        return MoeParams {
            dense_layers: layers,
            ..MoeParams::default()
        };
    };
    let interleaved = f.moe_layer_step;
    let mi = f.moe_intermediate_size.map_or(inter, |m| m as f64);
    let shared = match (f.n_shared_experts, f.shared_expert_intermediate_size) {
        (Some(n), _) => 3.0 * h * mi * n as f64,
        // Qwen-MoE: one shared expert of its own width.
        (None, Some(w)) => 3.0 * h * w as f64,
        // Llama-4's MoE layers carry one shared expert its config does not count.
        (None, None) => 3.0 * h * mi * f64::from(u8::from(interleaved.is_some())),
    };
    let dense = match interleaved {
        Some(step) => layers - (layers / step as f64).floor(),
        None => f.first_k_dense_replace.unwrap_or(0) as f64,
    };
    // A latent MoE's routed experts work in their own width; the shared ones in the hidden one.
    let width = f.expert_hidden_size.map_or(h, |w| w as f64);
    MoeParams {
        experts: 3.0 * width * mi * e,
        shared,
        router: h * e,
        latent: f.expert_hidden_size.map_or(0.0, |_| 2.0 * h * width),
        // A config may claim more dense layers than layers.
        dense_layers: dense.min(layers),
    }
}

/// An attention block's widths: hidden, query heads, KV heads and head.
#[derive(Clone, Copy)]
struct AttnDims {
    h: f64,
    heads: f64,
    kvh: f64,
    hd: f64,
}

/// One layer's token-mixer parameters averaged over the layers, where some are KDA layers of
/// their own size (Kimi-Linear, Kimi-K3), with MLA's absorbed copies for the attention layers.
fn mixer_params(f: &ModelFacts, dims: AttnDims, layers: f64) -> Option<(f64, f64, f64)> {
    let kda = f.kda_mixer_params.zip(f.linear_state);
    let Some(((params, replicated), state)) = kda.filter(|_| layers > 0.0) else {
        return attention_params(f, dims, layers);
    };
    let kda_layers = (state.layers as f64).min(layers);
    let full = layers - kda_layers;
    let (attn, attn_replicated, absorbed) = attention_params(f, dims, full)?;
    let average = |a: f64, k: u64| (full * a + kda_layers * k as f64) / layers;
    Some((
        average(attn, params),
        average(attn_replicated, replicated),
        absorbed,
    ))
}

/// One layer's attention parameters, the part of them every TP rank holds whole (MLA's down
/// projections), and the bytes of MLA's absorbed up projections over all layers.
fn attention_params(f: &ModelFacts, dims: AttnDims, layers: f64) -> Option<(f64, f64, f64)> {
    let AttnDims { h, heads, kvh, hd } = dims;
    if !f.is_mla() {
        return Some((
            h * heads * hd + 2.0 * h * kvh * hd + heads * hd * h,
            0.0,
            0.0,
        ));
    }
    let rope = f.qk_rope_head_dim.unwrap_or(64) as f64;
    let nope = f.qk_nope_head_dim.unwrap_or(128) as f64;
    let v = f.v_head_dim.unwrap_or(128) as f64;
    let lora = f.kv_lora_rank? as f64;
    let (q, q_a) = match f.q_lora_rank {
        Some(r) => (r as f64 * heads * (nope + rope), h * r as f64),
        None => (h * heads * (nope + rope), 0.0),
    };
    let kv_a = h * (lora + rope);
    let gate = if f.mla_output_gate {
        h * heads * v
    } else {
        0.0
    };
    let absorbed = layers * lora * heads * (nope + v) * f.dtype_bytes() as f64;
    Some((
        q + q_a + kv_a + lora * heads * (nope + v) + heads * v * h + gate,
        q_a + kv_a,
        absorbed,
    ))
}

/// Bytes per parameter of each kind of weight.
struct Bytes {
    dtype: f64,
    expert: f64,
    linear: f64,
    attention: f64,
}

/// Nemotron-H sized layer by layer: Mamba-2 mixers and attention (the token mixers), relu² MLPs,
/// latent MoE layers; an MTP layer is an attention and a MoE layer.
fn nemotron_h(
    f: &ModelFacts,
    n: &super::nemotron_h::Layout,
    attn: f64,
    b: Bytes,
    embed: f64,
) -> WeightBreakdown {
    let k = n.kinds;
    let count = |x: u64| x as f64;
    let mixers = count(k.mamba) * n.mamba * b.linear + count(k.attention) * attn * b.attention;
    let routed = count(k.moe) * n.routed * b.expert;
    let shared = count(k.moe) * n.shared * b.linear;
    let router = count(k.moe) * n.router * b.dtype;
    let dense_mlp = count(k.mlp) * n.mlp * b.linear;
    let head = if f.tie_word_embeddings { 0.0 } else { embed };
    let mtp_layers = f.num_nextn_predict_layers.unwrap_or(0) as f64;
    let mtp_layer = attn * b.attention + (n.routed + n.shared) * b.expert + n.router * b.dtype;
    WeightBreakdown {
        model: mixers + routed + shared + router + dense_mlp + embed + head,
        mtp: mtp_layers * (mtp_layer + 2.0 * embed),
        replicated: router,
        mtp_shared: mtp_layers * 2.0 * embed,
        by_part: Parts {
            attention: mixers,
            embed,
            head,
            dense_mlp,
            routed_experts: routed,
            shared_experts: shared,
        },
        ..WeightBreakdown::default()
    }
}

/// Estimates above this are a config error, not a model: the largest open checkpoints are a few
/// TB, so 1 PiB leaves room for any real one while keeping every sum over weights finite.
pub const MAX_WEIGHT_ESTIMATE_BYTES: u64 = 1 << 50;

/// Checkpoint bytes estimated from the dimensions (including MTP layers, as a checkpoint has);
/// `None` when the config lacks the dimensions or they give an implausible size.
pub fn estimate_weight_bytes(f: &ModelFacts) -> Option<u64> {
    let b = weight_breakdown(f)?;
    let total = b.model + b.mtp;
    (total.is_finite() && total > 0.0 && total <= MAX_WEIGHT_ESTIMATE_BYTES as f64)
        .then_some(total as u64)
}
