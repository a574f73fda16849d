//! The code table: each code's texts (`data/rules/<CODE>.md`) and its check. Texts are data;
//! the header of each file carries the metadata, the body the explanation:
//!
//! ```text
//! code: AR001
//! name: custom-allreduce-no-p2p
//! severity: error
//! versions: all
//! fix: always
//! summary: one line
//! sources: https://… https://…
//! no-source: why there is no URL (instead of sources)
//! emitted-by: pipeline (codes without a check: the pipeline or memory planner emits them)
//! ---
//! ## What it does …
//! ```

use std::sync::OnceLock;

use super::checks::*;
use super::versions::valid_versions;
use super::{CheckFn, Evidence, FixAvailability, Rule, Severity};

/// Old code → new code, for codes that were renamed. Codes are never reused.
pub const REDIRECTS: &[(&str, &str)] = &[];

const fn c(f: CheckFn) -> Option<CheckFn> {
    Some(f)
}
/// Emitted by the pipeline or the memory planner, not by a check.
const P: Option<CheckFn> = None;

/// Declares [`Code`] (one variant per rule) and the table of texts and checks, from one list.
macro_rules! catalogue {
    ($($code:ident => $check:expr),* $(,)?) => {
        /// A rule code. Every finding carries one; no code exists outside this enum.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[allow(clippy::upper_case_acronyms)]
        pub enum Code {
            $($code),*
        }

        impl Code {
            pub const ALL: &[Code] = &[$(Code::$code),*];

            pub fn as_str(self) -> &'static str {
                match self {
                    $(Code::$code => stringify!($code)),*
                }
            }
        }

        impl std::fmt::Display for Code {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        pub(super) const ENTRIES: &[(Code, &str, Option<CheckFn>)] = &[
            $((Code::$code, include_str!(concat!("../../data/rules/", stringify!($code), ".md")), $check)),*
        ];
    };
}

catalogue! {
    // Pipeline and memory planner.
    ARG001 => P,
    ARG002 => P,
    HUB001 => P,
    HUB002 => P,
    HUB003 => P,
    MEM001 => P,
    MEM002 => P,
    MEM003 => P,
    MEM004 => P,
    MEM005 => P,
    MEM006 => P,
    MEM007 => P,
    MEM008 => P,
    MEM009 => P,
    MEM010 => P,
    MEM011 => P,
    MEM012 => P,
    MEM013 => P,
    MEM015 => P,
    MEM016 => P,
    MEM017 => P,
    MEM018 => P,
    TOP001 => P,
    TOP005 => P,
    VER001 => P,
    VER002 => P,
    VER003 => P,
    // Custom all-reduce.
    AR001 => c(ar::no_p2p),
    AR002 => c(ar::forced_pcie),
    AR003 => c(ar::algo_ineffective),
    AR004 => c(ar::algo_invalid),
    AR005 => c(ar::world_size),
    AR006 => c(ar::pcie_nccl),
    AR007 => c(ar::uuid_visible_devices),
    AR008 => c(ar::two_gpu_no_p2p_slow),
    AR009 => c(ar::a800),
    // Architecture gates.
    ARCH001 => c(arch::fusion_arch),
    ARCH002 => c(arch::fusion_arch_ignored),
    ARCH003 => c(arch::fusion_multinode),
    ARCH004 => c(arch::trtllm_gen_sm12x),
    ARCH005 => c(arch::deepgemm_sm12x),
    ARCH006 => c(arch::torch_symm_mem_arch),
    ARCH007 => c(arch::torch_symm_mem_ineffective),
    ARCH008 => c(arch::gpt_oss_sm12x),
    ARCH009 => c(arch::megamoe_arch),
    ARCH010 => c(arch::h20_fusion),
    ARCH011 => c(arch::trtllm_gen_moe_sm12x),
    ARCH012 => c(arch::below_sm75),
    // Attention backends.
    ATTN001 => c(attn::fa3_arch),
    ATTN002 => c(attn::fa3_mla),
    ATTN003 => c(attn::mm_fa3_blackwell),
    ATTN004 => c(attn::trtllm_mha_arch),
    ATTN005 => c(attn::trtllm_mla_arch),
    ATTN006 => c(attn::fa4_decode),
    ATTN007 => c(attn::fa3_fp8_e5m2),
    ATTN008 => c(attn::page_size_override),
    ATTN009 => c(attn::gpt_oss_backend),
    ATTN010 => c(attn::no_cuda_graph_backend),
    ATTN011 => c(attn::hybrid_gdn_blackwell),
    ATTN012 => c(attn::llama4_backend),
    ATTN013 => c(attn::deterministic_backend),
    // SGLang's own choices after parsing.
    AUTO001 => c(auto::mm_fa3_refused),
    AUTO002 => c(auto::auto_backend_page_size),
    // Quantisation.
    QUANT001 => c(quant::fp8_pre_ada),
    QUANT002 => c(quant::fp4_pre_blackwell),
    QUANT003 => c(quant::nvfp4_sm12x),
    QUANT004 => c(quant::fp8_sm12x),
    QUANT005 => c(quant::dsa_kv_dtype),
    QUANT006 => c(quant_block::fp8_block_shard),
    QUANT007 => c(quant::fp8_pre_ada_dense),
    QUANT008 => c(quant_block::fp8_block_shard_dense),
    QUANT009 => c(quant_compat::quant_method_mismatch),
    QUANT010 => c(quant::below_loader_min_cc),
    // Model architectures the release's model registry resolves.
    MODEL001 => c(model::unsupported),
    MODEL002 => c(model::transformers_fallback),
    // Communication and NCCL environment.
    COMM001 => c(comm::nccl_p2p_disable_nvlink),
    COMM002 => c(comm::shm),
    COMM003 => c(comm::nvls_without_nvswitch),
    COMM004 => c(comm::multinode_ifname),
    COMM005 => c(comm::multinode_timeout),
    // CUDA graphs.
    CG001 => c(cg::default_max_bs_large),
    CG002 => c(cg::dp_attention_max_bs),
    CG003 => c(cg::torch_compile_moe),
    CG004 => c(cg::padding_torch_compile),
    // Data-parallel attention.
    DPA001 => c(dpa::tp_divisible),
    DPA002 => c(dpa::lm_head),
    DPA003 => c(dpa::multinode_dp),
    DPA004 => c(dpa::attn_dp_and_dp),
    // Expert parallelism and MoE all-to-all.
    EP001 => c(ep::flashinfer_a2a_runner),
    EP002 => c(ep::flashinfer_a2a_dp),
    EP003 => c(ep::deepep_p2p),
    EP004 => c(ep::a2a_pcie),
    EP005 => c(ep::tbo_without_a2a),
    EP006 => c(ep::deepep_normal),
    EP007 => c(ep::deepep_dispatch_tokens),
    EP008 => c(ep::eplb_without_ep),
    EP009 => c(ep::runner_ep),
    EP010 => c(ep::a2a_forces_ep),
    EP011 => c(ep::deepep_internode_rdma),
    EP012 => c(ep::eplb_without_ep_multinode),
    // Speculative decoding.
    SPEC001 => c(spec::pcie_tp),
    SPEC002 => c(spec::dp_attention_unsupported),
    SPEC003 => c(spec::eagle_dp_attention),
    SPEC004 => c(spec::topk_page_size),
    SPEC005 => c(spec::topk_trtllm_mha),
    SPEC006 => c(spec::moe_runner_trtllm),
    SPEC007 => c(spec::side_effects),
    SPEC008 => c(spec::flex_attention),
    SPEC009 => c(spec::lora),
    SPEC010 => c(spec::small_gpu),
    SPEC011 => c(spec::draft_unknown),
    SPEC012 => c(spec::hybrid_backends),
    // Parallelism and multi-node.
    PAR001 => c(par::heads),
    PAR002 => c(par::dist_init_addr),
    PAR003 => c(par::nodes_divide),
    PAR004 => c(par::pp_spec),
    PAR005 => c(par::tp_across_nodes),
    PAR006 => c(par::node_rank),
    PAR007 => c(par::pd_mooncake_rdma),
    PAR008 => c(par::moe_dense_tp),
    PAR009 => P,
    PAR010 => P,
    PAR011 => c(par::kv_heads),
    PAR012 => P,
    // Caches and chunked prefill.
    CACHE001 => c(cache::hicache_radix),
    CACHE002 => c(cache::chunk_page),
    CACHE003 => c(cache::hicache_page_one),
    CACHE004 => c(cache::multi_item_scoring),
    CACHE005 => c(cache::hicache_fa3_decode),
    // Serving options.
    SRV001 => c(srv::served_model_name_colon),
    SRV002 => c(srv::priority_policy),
    SRV003 => c(srv::retraction_priority),
    SRV004 => c(srv::grpc_port),
    SRV005 => c(srv::tokenizer_batching),
    SRV006 => c(srv::quant_communications),
    // Flags by version.
    FLAG001 => c(flag::renamed),
    FLAG002 => c(flag::deprecated),
    FLAG003 => c(flag::dp_attention_deprecated),
    FLAG004 => c(flag::removed),
    FLAG005 => c(flag::abbreviates_same),
    FLAG006 => c(flag::abbreviates_other),
    FLAG007 => c(flag::replaced),
    // Environment variables.
    ENV001 => c(env::unknown),
    ENV002 => c(env::deprecated_alias),
    ENV003 => c(env::removed),
    ENV004 => c(env::ineffective),
    ENV005 => c(env::bad_value),
    ENV006 => c(env::context_length),
    ENV009 => c(env::context_length_allowed),
    ENV007 => c(env::deterministic),
    ENV008 => c(env::device_order),
    // GPUs in use.
    TOP002 => c(top::mig),
    TOP003 => c(top::mixed),
    TOP004 => c(top::visible_devices_ignored),
    // Features SGLang rejects or breaks together, per release (`data/matrix.json`).
    MIX001 => c(matrix::pdmux),
    MIX002 => c(matrix::deepep_auto_dp_attention),
    MIX003 => c(matrix::trtllm_mla_spec),
    MIX004 => c(matrix::a2a_batch_overlap),
    MIX005 => c(matrix::dflash_dp_attention),
    MIX006 => c(matrix::pp_spec_dp_attention),
    MIX007 => c(matrix::pp_dp_attention),
    MIX008 => c(matrix::pp_a2a),
    MIX009 => c(matrix::dp_attention_ep_no_a2a),
    MIX010 => c(matrix::eagle_dp_attention_early),
    MIX011 => c(matrix::pdmux_sm100),
    // Installed packages (silent when unknown).
    PKG001 => c(pkg::torch_build),
    PKG002 => c(pkg::sgl_kernel_sm120),
    PKG003 => c(pkg::nccl_2_26_2),
    PKG004 => c(pkg::torch_2_9_1_cudnn),
    PKG005 => c(pkg::nvfp4_flashinfer),
    PKG006 => c(pkg::flashinfer_jit_cuda),
}

pub(super) fn rules() -> &'static [Rule] {
    static RULES: OnceLock<Vec<Rule>> = OnceLock::new();
    RULES.get_or_init(|| {
        let mut v: Vec<Rule> = ENTRIES
            .iter()
            .map(|(id, text, check)| {
                // Embedded data, validated by tests: a malformed header is a build bug.
                parse(*id, text, *check)
                    .unwrap_or_else(|e| panic!("data/rules/{}.md: {e}", id.as_str()))
            })
            .collect();
        v.sort_by_cached_key(|r| code_key(r.code));
        v
    })
}

/// Family, then number: `AR2` < `AR10` < `ARCH1`.
fn code_key(code: &str) -> (String, u32) {
    let i = code
        .find(|c: char| c.is_ascii_digit())
        .unwrap_or(code.len());
    (code[..i].to_owned(), code[i..].parse().unwrap_or(0))
}

pub(super) fn parse(id: Code, text: &'static str, check: Option<CheckFn>) -> Result<Rule, String> {
    let end = memchr::memmem::find(text.as_bytes(), b"\n---\n")
        .ok_or("no `---` line after the header")?;
    let (head, body) = (&text[..end], &text[end + 5..]);
    // Read once: every check run parses the whole catalogue, so each key must not rescan it.
    let fields: Vec<(&'static str, &'static str)> =
        head.lines().filter_map(|l| l.split_once(':')).collect();
    let field = |key: &str| -> Option<&'static str> {
        fields
            .iter()
            .find_map(|(k, v)| (*k == key).then(|| v.trim()))
    };
    let code = id.as_str();
    let file_code = field("code").ok_or("no code")?;
    if file_code != code {
        return Err(format!("header says code {file_code}"));
    }
    let severity = match field("severity").ok_or("no severity")? {
        "error" => Severity::Error,
        "warning" => Severity::Warning,
        "info" => Severity::Info,
        s => return Err(format!("bad severity {s}")),
    };
    let fix = match field("fix").unwrap_or("none") {
        "none" => FixAvailability::None,
        "sometimes" => FixAvailability::Sometimes,
        "always" => FixAvailability::Always,
        s => return Err(format!("bad fix {s}")),
    };
    // The data says which codes the pipeline emits; the table must agree.
    let pipeline = field("emitted-by") == Some("pipeline");
    if pipeline != check.is_none() {
        return Err(if pipeline {
            "header says emitted-by: pipeline, but the code table has a check".into()
        } else {
            "no check in the code table and no `emitted-by: pipeline` header".into()
        });
    }
    let versions = field("versions").ok_or("no versions")?;
    if !valid_versions(versions) {
        return Err(format!("bad versions {versions}"));
    }
    let evidence = field("evidence")
        .map(|e| {
            e.split(';')
                .map(Evidence::parse)
                .collect::<Result<Vec<_>, _>>()
        })
        .transpose()?
        .unwrap_or_default();
    Ok(Rule {
        id,
        code,
        name: field("name").ok_or("no name")?,
        severity,
        versions,
        fix,
        summary: field("summary").ok_or("no summary")?,
        sources: field("sources")
            .map(|s| s.split_whitespace().collect())
            .unwrap_or_default(),
        no_source: field("no-source"),
        evidence,
        explanation: body,
        check,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_and_table_must_agree_on_pipeline_codes() {
        let with = "code: AR001\nname: x\nseverity: info\nversions: all\nsummary: s\nemitted-by: pipeline\n---\nbody";
        let without = "code: AR001\nname: x\nseverity: info\nversions: all\nsummary: s\n---\nbody";
        fn check(_: &super::super::Context) -> Vec<super::super::Fired> {
            vec![]
        }
        assert!(parse(Code::AR001, with, None).is_ok());
        assert!(parse(Code::AR001, with, Some(check)).is_err());
        assert!(parse(Code::AR001, without, None).is_err());
        assert!(parse(Code::AR001, without, Some(check)).is_ok());
        assert!(parse(Code::AR002, without, Some(check)).is_err());
        assert!(parse(Code::AR001, "code: AR001", None).is_err());
    }

    #[test]
    fn codes_sort_by_family_then_number() {
        assert!(code_key("AR2") < code_key("AR10"));
        assert!(code_key("AR10") < code_key("ARCH1"));
    }
}
