//! The memory table of the human report.

use crate::plan::json::{Memory, MfsSource};

const MIB: f64 = 1024.0 * 1024.0;

/// Compact human table: capacity, each reserve term, weights, KV pool, tokens, requests.
pub fn render_table(m: &Memory) -> String {
    render_table_with_context(m, None)
}

/// [`render_table`] plus how many requests fit at full `context_len` tokens at once.
pub fn render_table_with_context(m: &Memory, context_len: Option<u64>) -> String {
    let r = &m.reserved_mib;
    let mut out = String::new();
    let line = |out: &mut String, k: &str, v: String| {
        out.push_str(&format!("  {k:<28} {v:>14}\n"));
    };
    let mib = |v: u64| format!("{v} MiB");
    line(&mut out, "GPU capacity", mib(m.gpu_memory_mib));
    line(&mut out, "- other processes", mib(r.other_processes));
    line(&mut out, "- CUDA context", mib(r.cuda_context));
    line(&mut out, "- NCCL / symm-mem buffers", mib(r.nccl));
    line(&mut out, "- custom all-reduce", mib(r.custom_allreduce));
    line(&mut out, "- CUDA graphs", mib(r.cuda_graphs));
    line(&mut out, "- activations + workspaces", mib(r.activations));
    line(&mut out, "- margin", mib(r.margin));
    match m.weights_per_gpu_gib {
        Some(w) => line(&mut out, "weights per GPU", format!("{w:.2} GiB")),
        None => line(&mut out, "weights per GPU", "unknown".into()),
    }
    let s = &m.static_mib;
    let nonzero = |out: &mut String, k: &str, v: u64| {
        if v > 0 {
            line(out, k, mib(v));
        }
    };
    nonzero(&mut out, "  of which encoders", s.encoder_weights);
    nonzero(&mut out, "  of which draft model", s.draft_weights);
    if let Some(p) = m.load_peak_per_gpu_gib {
        line(
            &mut out,
            "weights at load (online quant)",
            format!("{p:.2} GiB"),
        );
    }
    nonzero(&mut out, "LoRA buffers", s.lora);
    if let Some(slots) = m.mamba_cache_size {
        line(&mut out, "Mamba state pool", mib(s.mamba_state));
        line(&mut out, "Mamba state slots", slots.to_string());
    }
    if let (Some(t), Some(b)) = (m.kv_cache_tokens, m.kv_cache_bytes_per_token) {
        line(
            &mut out,
            "KV cache pool",
            format!("{:.2} GiB", t as f64 * b as f64 / (1024.0 * MIB)),
        );
        line(&mut out, "KV bytes per token", b.to_string());
        line(&mut out, "KV tokens", t.to_string());
    }
    if let Some(t) = m.swa_kv_cache_tokens {
        line(&mut out, "  of which SWA pool", mib(s.swa_kv_cache));
        line(&mut out, "SWA KV tokens", t.to_string());
    }
    if let Some(r) = m.max_running_requests {
        line(&mut out, "max running requests", r.to_string());
    }
    if let (Some(t), Some(c)) = (m.kv_cache_tokens, context_len.filter(|&c| c > 0)) {
        line(
            &mut out,
            &format!("requests at {c} tokens"),
            (t / c).to_string(),
        );
    }
    let src = match m.mem_fraction_static_source {
        MfsSource::User => "user",
        MfsSource::Planned => "planned",
    };
    let sg = m
        .sglang_default_mem_fraction_static
        .map(|v| format!(" (SGLang default {v:.3})"))
        .unwrap_or_default();
    out.push_str(&format!(
        "  --mem-fraction-static {:.3} [{src}]{sg}\n",
        m.mem_fraction_static
    ));
    match m.fits {
        Some(true) => out.push_str("  fits: yes\n"),
        Some(false) => out.push_str("  fits: NO\n"),
        None => out.push_str("  fits: unknown (model not available)\n"),
    }
    out
}
