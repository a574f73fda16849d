//! The rules catalogue: data/check agreement, one firing and one quiet case per rule over the
//! fixture topologies, fix convergence, robustness on odd facts, and the lead-facing API.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;

use serde_json::{Value, json};
use sglang_launch::facts::model::ModelFacts;
use sglang_launch::facts::packages::{Cuda, Toolkit};
use sglang_launch::facts::{Env, Packages, Topology};
use sglang_launch::rules::{
    self, ArgEdit, Context, EnvEdit, Fix, HostFacts, RuleSettings, Severity,
};
use sglang_launch::sglang::flagset::{self, KNOWN_VERSIONS, ValueType};
use sglang_launch::sglang::{SglangArgs, version};

fn topo(name: &str) -> Topology {
    let path = format!(
        "{}/tests/fixtures/topologies/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

const PRO: &str = "8x-rtx-pro-6000-pcie";
const H100: &str = "8x-h100-sxm-nvlink";
const B200: &str = "8x-b200-nvlink";
const A100: &str = "8x-a100-sxm4-80gb-nvlink";
const R4090: &str = "2x-rtx-4090-pcie";
const L4: &str = "1x-l4";

/// One scenario for one rule: the facts, and whether the rule must fire.
#[derive(Clone)]
struct Case {
    code: &'static str,
    version: &'static str,
    topo: &'static str,
    gpus: Option<Vec<u32>>,
    args: Vec<(&'static str, Value)>,
    tokens: Vec<&'static str>,
    env: Vec<(&'static str, String)>,
    model: Option<ModelFacts>,
    host: Option<HostFacts>,
    packages: Option<Packages>,
    edit: Option<fn(&mut Topology)>,
    /// Set CUDA_VISIBLE_DEVICES to these GPUs' UUIDs.
    uuids: Option<Vec<u32>>,
    fires: bool,
}

fn c(code: &'static str) -> Case {
    Case {
        code,
        version: "0.5.23",
        topo: H100,
        gpus: None,
        args: vec![],
        tokens: vec![],
        env: vec![],
        model: None,
        host: None,
        packages: None,
        edit: None,
        uuids: None,
        fires: true,
    }
}

impl Case {
    fn v(mut self, v: &'static str) -> Self {
        self.version = v;
        self
    }
    fn t(mut self, t: &'static str) -> Self {
        self.topo = t;
        self
    }
    fn a(mut self, o: &'static str, v: Value) -> Self {
        self.args.push((o, v));
        self
    }
    fn f(self, o: &'static str) -> Self {
        self.a(o, json!(true))
    }
    fn tp(self, n: i64) -> Self {
        self.a("--tp-size", json!(n))
    }
    fn e(mut self, k: &'static str, v: &str) -> Self {
        self.env.push((k, v.to_string()));
        self
    }
    fn tok(mut self, t: &[&'static str]) -> Self {
        self.tokens = t.to_vec();
        self
    }
    fn m(mut self, m: ModelFacts) -> Self {
        self.model = Some(m);
        self
    }
    fn host(mut self, h: HostFacts) -> Self {
        self.host = Some(h);
        self
    }
    fn pkgs(mut self, p: &[(&str, &str)]) -> Self {
        self.packages = Some(Packages::from_versions(p));
        self
    }
    fn edit_pkgs(mut self, e: fn(&mut Packages)) -> Self {
        e(self.packages.get_or_insert_with(Packages::default));
        self
    }
    /// The CUDA toolkit FlashInfer would find: `nvcc` present or not, and its version.
    fn toolkit(mut self, nvcc: bool, version: Option<(u32, u32)>) -> Self {
        let p = self.packages.get_or_insert_with(Packages::default);
        p.cuda_toolkit = Some(Toolkit {
            home: "/usr/local/cuda".into(),
            nvcc,
            version: version.map(|(a, b)| Cuda(a, b)),
        });
        self
    }
    fn edit(mut self, e: fn(&mut Topology)) -> Self {
        self.edit = Some(e);
        self
    }
    fn gpus(mut self, g: &[u32]) -> Self {
        self.gpus = Some(g.to_vec());
        self
    }
    fn no(mut self) -> Self {
        self.fires = false;
        self
    }
}

fn model(arch: &str) -> ModelFacts {
    ModelFacts {
        architecture: Some(arch.into()),
        num_attention_heads: Some(64),
        num_key_value_heads: Some(8),
        ..Default::default()
    }
}

fn mla() -> ModelFacts {
    ModelFacts {
        kv_lora_rank: Some(512),
        num_attention_heads: Some(128),
        num_key_value_heads: Some(128),
        ..model("DeepseekV3ForCausalLM")
    }
}

fn moe() -> ModelFacts {
    ModelFacts {
        num_experts: Some(128),
        ..model("Qwen3MoeForCausalLM")
    }
}

fn vlm() -> ModelFacts {
    ModelFacts {
        is_multimodal: true,
        ..model("Qwen2_5_VLForConditionalGeneration")
    }
}

fn heads(h: u64, kv: u64) -> ModelFacts {
    ModelFacts {
        num_attention_heads: Some(h),
        num_key_value_heads: Some(kv),
        ..model("Qwen2ForCausalLM")
    }
}

fn host(present: bool, bytes: Option<u64>) -> HostFacts {
    HostFacts {
        shm_present: present,
        shm_bytes: bytes,
        in_container: Some(true),
        ib_devices: Some(2),
    }
}

fn no_rdma() -> HostFacts {
    HostFacts {
        ib_devices: Some(0),
        ..host(true, Some(16 << 30))
    }
}

fn cases() -> Vec<Case> {
    let mut v = base_cases();
    v.extend(more_cases());
    v
}

fn more_cases() -> Vec<Case> {
    vec![
        c("ENV002").e("SGLANG_SCHEDULER_DECREASE_PREFILL_IDLE", "1"),
        c("ENV003")
            .e("SGLANG_SCHEDULER_DECREASE_PREFILL_IDLE", "1")
            .no(),
        c("SRV001").a("--served-model-name", json!("qwen3:32b")),
        c("SRV001")
            .a("--served-model-name", json!("qwen3-32b"))
            .no(),
        // The served name defaults to the model path (QA regression).
        c("SRV001").a("--model-path", json!("/models/qwen3:32b")),
        c("SRV001")
            .a("--model-path", json!("/models/qwen3:32b"))
            .a("--served-model-name", json!("qwen3-32b"))
            .no(),
        c("SRV001")
            .a("--model-path", json!("/models/qwen3-32b"))
            .no(),
        // Object-store URIs are exempt in SGLang.
        c("SRV001")
            .a("--served-model-name", json!("s3://bucket/qwen3"))
            .no(),
        c("SRV001")
            .a("--model-path", json!("gs://bucket/qwen3"))
            .no(),
        c("SRV002")
            .f("--enable-priority-scheduling")
            .a("--schedule-policy", json!("lpm")),
        c("SRV002").f("--enable-priority-scheduling").no(),
        c("SRV003").a("--retraction-policy", json!("priority")),
        c("SRV003")
            .a("--retraction-policy", json!("priority"))
            .f("--enable-priority-scheduling")
            .no(),
        c("SRV004").a("--grpc-port", json!(30000)),
        c("SRV004").a("--grpc-port", json!(30001)).no(),
        c("SRV004")
            .a("--grpc-port", json!(30000))
            .f("--grpc-mode")
            .no(),
        c("SRV005")
            .f("--enable-tokenizer-batch-encode")
            .f("--enable-dynamic-batch-tokenizer"),
        c("SRV005").f("--enable-tokenizer-batch-encode").no(),
        c("SRV006").tp(8).f("--enable-quant-communications"),
        c("SRV006").no(),
        c("PAR008").tp(8).a("--moe-dense-tp-size", json!(2)),
        c("PAR008").tp(8).a("--moe-dense-tp-size", json!(8)).no(),
        c("PAR008")
            .v("0.5.5")
            .tp(8)
            .a("--moe-dense-tp-size", json!(8)),
        c("PAR008")
            .v("0.5.5")
            .tp(8)
            .a("--moe-dense-tp-size", json!(1))
            .no(),
        c("DPA004")
            .tp(8)
            .a("--attn-dp-size", json!(8))
            .a("--dp-size", json!(2)),
        c("DPA004").tp(8).a("--attn-dp-size", json!(8)).no(),
        c("QUANT005")
            .m(model("DeepseekV32ForCausalLM"))
            .a("--kv-cache-dtype", json!("fp8_e5m2")),
        c("QUANT005")
            .m(model("DeepseekV32ForCausalLM"))
            .a("--kv-cache-dtype", json!("fp8_e4m3"))
            .no(),
        c("ARCH010")
            .v("0.5.10.post1")
            .t("8x-h20-nvlink")
            .tp(8)
            .f("--enable-flashinfer-allreduce-fusion"),
        c("ARCH010")
            .v("0.5.10.post1")
            .t("8x-h200-nvlink")
            .tp(8)
            .f("--enable-flashinfer-allreduce-fusion")
            .no(),
        c("ATTN011")
            .v("0.5.5")
            .t(PRO)
            .m(model("Qwen3NextForCausalLM"))
            .a("--attention-backend", json!("flashinfer")),
        c("ATTN011")
            .v("0.5.5")
            .t(B200)
            .m(model("Qwen3NextForCausalLM"))
            .a("--attention-backend", json!("trtllm_mha"))
            .no(),
        c("ATTN011")
            .v("0.5.5")
            .t(PRO)
            .m(model("Qwen3NextForCausalLM"))
            .a("--attention-backend", json!("triton"))
            .no(),
        c("EP011")
            .tp(16)
            .a("--nnodes", json!(2))
            .a("--moe-a2a-backend", json!("deepep"))
            .host(no_rdma()),
        c("EP011")
            .tp(16)
            .a("--nnodes", json!(2))
            .a("--moe-a2a-backend", json!("deepep"))
            .host(host(true, None))
            .no(),
        c("EP011")
            .tp(16)
            .a("--nnodes", json!(2))
            .a("--moe-a2a-backend", json!("deepep"))
            .no(),
        c("SPEC005")
            .v("0.5.5")
            .a("--speculative-algorithm", json!("EAGLE"))
            .a("--speculative-eagle-topk", json!(4))
            .e("SGLANG_ENABLE_SPEC_V2", "1"),
        c("SPEC009")
            .v("0.5.10.post1")
            .f("--enable-lora")
            .a("--speculative-algorithm", json!("EAGLE")),
        c("SPEC009")
            .a("--lora-paths", json!(["a=/x"]))
            .a("--speculative-algorithm", json!("STANDALONE")),
        c("SPEC009")
            .f("--enable-lora")
            .a("--speculative-algorithm", json!("EAGLE"))
            .no(),
        c("SPEC009")
            .v("0.5.10.post1")
            .f("--enable-lora")
            .a("--speculative-algorithm", json!("NGRAM"))
            .no(),
        c("SPEC010")
            .t(L4)
            .a("--speculative-algorithm", json!("EAGLE"))
            .a("--mem-fraction-static", json!(0.85)),
        c("SPEC010")
            .t(L4)
            .a("--speculative-algorithm", json!("EAGLE"))
            .no(),
        c("SPEC010")
            .a("--speculative-algorithm", json!("EAGLE"))
            .a("--mem-fraction-static", json!(0.85))
            .no(),
        // A draft the launcher can't read: its memory is not planned.
        c("SPEC011")
            .a("--speculative-algorithm", json!("EAGLE3"))
            .a(
                "--speculative-draft-model-path",
                json!("/nonexistent/some-org__eagle3-draft"),
            ),
        c("SPEC011")
            .a("--speculative-algorithm", json!("EAGLE3"))
            .a(
                "--speculative-draft-model-path",
                json!(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/tests/fixtures/models/meta-llama__Llama-3.1-8B-Instruct"
                )),
            )
            .no(),
        c("SPEC011")
            .a("--speculative-algorithm", json!("NGRAM"))
            .a(
                "--speculative-draft-model-path",
                json!("/nonexistent/draft"),
            )
            .no(),
        c("SPEC011")
            .a("--model-path", json!("/nonexistent/target"))
            .a("--speculative-algorithm", json!("NEXTN"))
            .a(
                "--speculative-draft-model-path",
                json!("/nonexistent/target"),
            )
            .no(),
        c("PAR007")
            .a("--disaggregation-mode", json!("prefill"))
            .host(no_rdma()),
        c("PAR007")
            .a("--disaggregation-mode", json!("prefill"))
            .a("--disaggregation-transfer-backend", json!("nixl"))
            .host(no_rdma())
            .no(),
        c("PAR007").host(no_rdma()).no(),
        c("CACHE004")
            .v("0.5.10.post1")
            .a("--multi-item-scoring-delimiter", json!(151643)),
        c("CACHE004")
            .v("0.5.10.post1")
            .a("--multi-item-scoring-delimiter", json!(151643))
            .f("--disable-radix-cache")
            .a("--chunked-prefill-size", json!(-1))
            .no(),
        c("CACHE005")
            .f("--enable-hierarchical-cache")
            .a("--attention-backend", json!("fa3")),
        c("CACHE005")
            .f("--enable-hierarchical-cache")
            .a("--attention-backend", json!("fa3"))
            .a("--decode-attention-backend", json!("flashinfer"))
            .no(),
        c("ENV008")
            .e("CUDA_VISIBLE_DEVICES", "0,1")
            .edit(|t| t.gpus[3].name = "NVIDIA A100-SXM4-80GB".into()),
        c("ENV008")
            .e("CUDA_VISIBLE_DEVICES", "0,1")
            .e("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
            .edit(|t| t.gpus[3].name = "NVIDIA A100-SXM4-80GB".into())
            .no(),
        c("ENV008").e("CUDA_VISIBLE_DEVICES", "0,1").no(),
    ]
}

fn base_cases() -> Vec<Case> {
    vec![
        // Custom all-reduce.
        c("AR001").t(R4090).tp(2),
        c("AR001")
            .t(R4090)
            .tp(2)
            .f("--disable-custom-all-reduce")
            .no(),
        c("AR001").t(R4090).tp(2).f("--enable-p2p-check").no(),
        c("AR001").tp(8).no(),
        c("AR002")
            .t(PRO)
            .tp(8)
            .e("SGLANG_FORCE_CUSTOM_AR_PCIE", "1")
            .e("SGLANG_CUSTOM_ALLREDUCE_ALGO", "1stage"),
        c("AR002").tp(8).e("SGLANG_FORCE_CUSTOM_AR_PCIE", "1").no(),
        c("AR002")
            .t(PRO)
            .tp(2)
            .e("SGLANG_FORCE_CUSTOM_AR_PCIE", "1")
            .no(),
        c("AR003").tp(8).e("SGLANG_CUSTOM_ALLREDUCE_ALGO", "1stage"),
        c("AR003")
            .v("0.5.5")
            .t(R4090)
            .tp(2)
            .e("SGLANG_CUSTOM_ALLREDUCE_ALGO", "1stage"),
        c("AR003")
            .t(R4090)
            .tp(2)
            .f("--enable-p2p-check")
            .e("SGLANG_CUSTOM_ALLREDUCE_ALGO", "1stage")
            .no(),
        c("AR003")
            .t(PRO)
            .tp(8)
            .e("SGLANG_CUSTOM_ALLREDUCE_ALGO", "1stage")
            .no(),
        c("AR004")
            .t(R4090)
            .tp(2)
            .f("--enable-p2p-check")
            .e("SGLANG_CUSTOM_ALLREDUCE_ALGO", "one-stage"),
        c("AR004")
            .t(R4090)
            .tp(2)
            .f("--enable-p2p-check")
            .e("SGLANG_CUSTOM_ALLREDUCE_ALGO", "2stage")
            .no(),
        c("AR005").tp(3),
        c("AR005").tp(4).no(),
        c("AR006").t(PRO).tp(8),
        c("AR006").tp(8).no(),
        c("AR006").t(PRO).tp(2).no(),
        c("AR007").tp(2).gpus(&[0, 1]).uuids(&[0, 1]),
        c("AR007").tp(2).gpus(&[4, 5]).uuids(&[4, 5]),
        // Custom all-reduce is off anyway: the UUIDs break nothing (QA regression).
        c("AR007")
            .tp(2)
            .gpus(&[4, 5])
            .uuids(&[4, 5])
            .f("--disable-custom-all-reduce")
            .no(),
        c("AR007").tp(3).gpus(&[0, 1, 2]).uuids(&[0, 1, 2]).no(),
        c("AR007")
            .t(PRO)
            .tp(8)
            .uuids(&[0, 1, 2, 3, 4, 5, 6, 7])
            .no(),
        c("AR007")
            .tp(2)
            .gpus(&[0, 1])
            .e("CUDA_VISIBLE_DEVICES", "0,1")
            .no(),
        c("AR008").t(R4090).tp(2),
        c("AR008").tp(2).no(),
        c("AR009").t(A100).tp(8).edit(|t| {
            t.gpus
                .iter_mut()
                .for_each(|g| g.name = "NVIDIA A800-SXM4-80GB".into())
        }),
        c("AR009").t(A100).tp(8).no(),
        // Architecture gates.
        c("ARCH001")
            .t(PRO)
            .tp(8)
            .f("--enable-flashinfer-allreduce-fusion"),
        c("ARCH001")
            .t(PRO)
            .tp(8)
            .a("--flashinfer-allreduce-fusion-backend", json!("trtllm")),
        c("ARCH001")
            .tp(8)
            .f("--enable-flashinfer-allreduce-fusion")
            .no(),
        c("ARCH001")
            .v("0.5.5")
            .t(PRO)
            .tp(8)
            .f("--enable-flashinfer-allreduce-fusion")
            .no(),
        c("ARCH002")
            .v("0.5.5")
            .t(PRO)
            .tp(8)
            .f("--enable-flashinfer-allreduce-fusion"),
        c("ARCH002")
            .v("0.5.5")
            .tp(8)
            .f("--enable-flashinfer-allreduce-fusion")
            .no(),
        c("ARCH003")
            .v("0.5.10.post1")
            .tp(16)
            .a("--nnodes", json!(2))
            .f("--enable-flashinfer-allreduce-fusion"),
        c("ARCH003")
            .v("0.5.10.post1")
            .tp(8)
            .f("--enable-flashinfer-allreduce-fusion")
            .no(),
        c("ARCH003")
            .t(B200)
            .tp(16)
            .a("--nnodes", json!(2))
            .a("--flashinfer-allreduce-fusion-backend", json!("mnnvl"))
            .no(),
        c("ARCH004")
            .t(PRO)
            .a("--moe-runner-backend", json!("flashinfer_trtllm")),
        c("ARCH004")
            .t(PRO)
            .a("--decode-attention-backend", json!("trtllm_mla")),
        c("ARCH004")
            .t(B200)
            .a("--moe-runner-backend", json!("flashinfer_trtllm"))
            .no(),
        c("ARCH005")
            .t(PRO)
            .a("--moe-runner-backend", json!("deep_gemm")),
        c("ARCH005").t(PRO).m(model("DeepseekV32ForCausalLM")),
        c("ARCH005")
            .a("--moe-runner-backend", json!("deep_gemm"))
            .no(),
        c("ARCH006")
            .v("0.5.10.post1")
            .t(PRO)
            .tp(8)
            .f("--enable-torch-symm-mem"),
        c("ARCH006")
            .v("0.5.10.post1")
            .tp(8)
            .f("--enable-torch-symm-mem")
            .no(),
        c("ARCH006").t(PRO).tp(8).f("--enable-torch-symm-mem").no(),
        c("ARCH007").t(PRO).tp(8).f("--enable-torch-symm-mem"),
        c("ARCH007").t(A100).tp(8).f("--enable-torch-symm-mem"),
        c("ARCH007")
            .v("0.5.10.post1")
            .t(PRO)
            .tp(8)
            .f("--enable-torch-symm-mem")
            .no(),
        c("ARCH001").v("0.5.8").t(PRO).tp(8).m(moe()),
        c("ARCH001").v("0.5.10.post1").t(PRO).tp(8).m(moe()).no(),
        c("ARCH001")
            .v("0.5.10.post1")
            .t(PRO)
            .tp(8)
            .f("--enable-flashinfer-allreduce-fusion")
            .no(),
        c("ARCH002")
            .v("0.5.10.post1")
            .t(PRO)
            .tp(8)
            .f("--enable-flashinfer-allreduce-fusion"),
        c("ARCH002")
            .v("0.5.10.post1")
            .t(PRO)
            .f("--enable-flashinfer-allreduce-fusion")
            .no(),
        c("ARCH007").tp(3).f("--enable-torch-symm-mem"),
        c("ARCH007")
            .t("4x-a100-pcie-40gb-nvlink-pairs")
            .tp(4)
            .f("--enable-torch-symm-mem"),
        c("ARCH007").tp(8).f("--enable-torch-symm-mem").no(),
        c("ARCH008").v("0.5.2").t(PRO).m(model("GptOssForCausalLM")),
        c("ARCH008").v("0.5.2").m(model("GptOssForCausalLM")).no(),
        c("ARCH009").a("--moe-a2a-backend", json!("flashinfer_megamoe")),
        c("ARCH009")
            .t(B200)
            .a("--moe-a2a-backend", json!("flashinfer_megamoe"))
            .no(),
        // Attention.
        c("ATTN001").t(B200).a("--attention-backend", json!("fa3")),
        c("ATTN001")
            .t(PRO)
            .a("--prefill-attention-backend", json!("fa3")),
        c("ATTN001").a("--attention-backend", json!("fa3")).no(),
        c("ATTN002")
            .t(A100)
            .a("--attention-backend", json!("fa3"))
            .m(mla()),
        c("ATTN002")
            .t(A100)
            .a("--attention-backend", json!("fa3"))
            .m(model("LlamaForCausalLM"))
            .no(),
        c("ATTN003")
            .t(B200)
            .a("--mm-attention-backend", json!("fa3")),
        c("ATTN003").a("--mm-attention-backend", json!("fa3")).no(),
        c("ATTN004")
            .v("0.5.10.post1")
            .a("--attention-backend", json!("trtllm_mha")),
        c("ATTN004")
            .v("0.5.10.post1")
            .t(B200)
            .a("--attention-backend", json!("trtllm_mha"))
            .no(),
        c("ATTN004")
            .a("--attention-backend", json!("trtllm_mha"))
            .no(),
        c("ATTN005").a("--attention-backend", json!("trtllm_mla")),
        c("ATTN005")
            .t(B200)
            .a("--attention-backend", json!("trtllm_mla"))
            .a("--kv-cache-dtype", json!("fp8_e5m2")),
        c("ATTN005")
            .t(B200)
            .a("--attention-backend", json!("trtllm_mla"))
            .no(),
        c("ATTN006")
            .v("0.5.5")
            .t(B200)
            .a("--attention-backend", json!("fa4")),
        c("ATTN006")
            .v("0.5.5")
            .t(B200)
            .a("--prefill-attention-backend", json!("fa4"))
            .no(),
        c("ATTN007")
            .a("--attention-backend", json!("fa3"))
            .a("--kv-cache-dtype", json!("fp8_e5m2")),
        c("ATTN007")
            .a("--attention-backend", json!("fa3"))
            .a("--kv-cache-dtype", json!("fp8_e4m3"))
            .no(),
        c("ATTN007")
            .v("0.5.2")
            .a("--attention-backend", json!("fa3"))
            .a("--kv-cache-dtype", json!("fp8_e5m2")),
        c("ATTN007")
            .a("--decode-attention-backend", json!("fa3"))
            .a("--kv-cache-dtype", json!("fp8_e5m2")),
        c("ATTN008")
            .a("--attention-backend", json!("flashmla"))
            .a("--page-size", json!(16)),
        c("ATTN008")
            .a("--attention-backend", json!("flashmla"))
            .a("--page-size", json!(64))
            .no(),
        c("ATTN009")
            .m(model("GptOssForCausalLM"))
            .a("--attention-backend", json!("flashinfer")),
        c("ATTN009")
            .m(model("GptOssForCausalLM"))
            .a("--attention-backend", json!("triton"))
            .no(),
        c("ATTN010").a("--attention-backend", json!("torch_native")),
        c("ATTN010")
            .a("--attention-backend", json!("torch_native"))
            .f("--disable-cuda-graph")
            .no(),
        // Quantisation.
        // 0.5.23 runs dense FP8 weight-only through Marlin on SM80 (QA regression).
        c("QUANT001").t(A100).a("--quantization", json!("fp8")).no(),
        c("QUANT001")
            .t(A100)
            .m(ModelFacts {
                quant_method: Some("fp8".into()),
                ..model("Qwen3ForCausalLM")
            })
            .no(),
        // FP8 MoE experts have no Marlin path.
        c("QUANT001").t(A100).m(ModelFacts {
            quant_method: Some("fp8".into()),
            ..moe()
        }),
        // Methods that demand SM89 at load.
        c("QUANT001").t(A100).a("--quantization", json!("w8a8_fp8")),
        c("QUANT001")
            .t(A100)
            .a("--quantization", json!("modelopt_fp8")),
        // 0.5.5 needs vLLM's Marlin ops; 0.4.x has no automatic fallback.
        c("QUANT001")
            .v("0.5.5")
            .t(A100)
            .a("--quantization", json!("fp8"))
            .pkgs(&[("torch", "2.8.0+cu128")]),
        c("QUANT001")
            .v("0.5.5")
            .t(A100)
            .a("--quantization", json!("fp8"))
            .pkgs(&[("vllm", "0.10.1")])
            .no(),
        c("QUANT001")
            .v("0.4.10.post2")
            .t(A100)
            .a("--quantization", json!("fp8")),
        c("QUANT001")
            .t(A100)
            .edit(|t| {
                t.gpus
                    .iter_mut()
                    .for_each(|g| g.compute_capability = "7.5".into())
            })
            .a("--quantization", json!("fp8")),
        c("QUANT001").t(L4).a("--quantization", json!("fp8")).no(),
        c("QUANT002")
            .v("0.5.5")
            .a("--quantization", json!("modelopt_fp4")),
        c("QUANT002")
            .v("0.5.5")
            .t(B200)
            .a("--quantization", json!("modelopt_fp4"))
            .no(),
        c("QUANT003")
            .t(PRO)
            .a("--quantization", json!("modelopt_fp4")),
        c("QUANT003")
            .t(B200)
            .a("--quantization", json!("modelopt_fp4"))
            .no(),
        c("QUANT004")
            .v("0.5.2")
            .t(PRO)
            .a("--quantization", json!("fp8")),
        c("QUANT004")
            .v("0.5.2")
            .a("--quantization", json!("fp8"))
            .no(),
        // Communication.
        c("COMM001").tp(8).e("NCCL_P2P_DISABLE", "1"),
        c("COMM001").t(PRO).tp(8).e("NCCL_P2P_DISABLE", "1").no(),
        c("COMM001").tp(8).e("NCCL_P2P_DISABLE", "0").no(),
        c("COMM002").tp(2).host(host(false, None)),
        c("COMM002").tp(2).host(host(true, Some(64 << 20))),
        c("COMM002").tp(2).host(host(true, Some(16 << 30))).no(),
        c("COMM002").tp(2).no(),
        c("COMM002").tp(1).host(host(false, None)).no(),
        c("COMM003").t(PRO).tp(8).f("--enable-nccl-nvls"),
        c("COMM003").t(PRO).tp(8).e("NCCL_NVLS_ENABLE", "1"),
        c("COMM003").tp(8).f("--enable-nccl-nvls").no(),
        c("COMM004").tp(16).a("--nnodes", json!(2)),
        c("COMM004")
            .tp(16)
            .a("--nnodes", json!(2))
            .e("NCCL_SOCKET_IFNAME", "eth0")
            .e("GLOO_SOCKET_IFNAME", "eth0")
            .no(),
        c("COMM005").tp(16).a("--nnodes", json!(2)),
        c("COMM005")
            .tp(16)
            .a("--nnodes", json!(2))
            .a("--dist-timeout", json!(3600))
            .no(),
        // CUDA graphs.
        // PCIe-only, model unknown: the measured class.
        c("CG001").t(PRO).tp(8),
        // NVLink H100/B200 with a model that leaves most of the GPU to KV: not worth a line (QA regression).
        c("CG001").tp(8).no(),
        c("CG001").t(B200).tp(8).no(),
        c("CG001")
            .tp(8)
            .m(ModelFacts {
                weight_bytes: Some(64 << 30),
                ..model("Qwen3ForCausalLM")
            })
            .no(),
        c("CG001")
            .t(PRO)
            .tp(8)
            .m(ModelFacts {
                weight_bytes: Some(64 << 30),
                ..model("Qwen3ForCausalLM")
            })
            .no(),
        // Weights fill ~half of each GPU: graphs are a material share of the KV left.
        c("CG001").tp(8).m(ModelFacts {
            weight_bytes: Some(300 << 30),
            ..model("Qwen3ForCausalLM")
        }),
        c("CG001").v("0.5.5").t(PRO).tp(8),
        c("CG001")
            .t(PRO)
            .tp(8)
            .a("--cuda-graph-max-bs-decode", json!(128))
            .no(),
        c("CG001")
            .v("0.5.5")
            .t(PRO)
            .tp(8)
            .a("--cuda-graph-max-bs", json!(128))
            .no(),
        c("CG001")
            .t(PRO)
            .tp(8)
            .a("--max-running-requests", json!(64))
            .no(),
        c("CG001").t(L4).no(),
        c("CG002")
            .v("0.5.5")
            .tp(8)
            .f("--enable-dp-attention")
            .a("--dp-size", json!(8))
            .a("--cuda-graph-max-bs", json!(512)),
        c("CG002")
            .v("0.5.5")
            .tp(8)
            .f("--enable-dp-attention")
            .a("--dp-size", json!(8))
            .a("--cuda-graph-max-bs", json!(128))
            .no(),
        c("CG003").f("--enable-torch-compile").m(moe()),
        c("CG003")
            .f("--enable-torch-compile")
            .m(model("LlamaForCausalLM"))
            .no(),
        c("CG004")
            .f("--disable-cuda-graph-padding")
            .f("--enable-torch-compile"),
        c("CG004").f("--disable-cuda-graph-padding").no(),
        // DP attention.
        c("DPA001")
            .v("0.5.5")
            .tp(8)
            .f("--enable-dp-attention")
            .a("--dp-size", json!(3)),
        c("DPA001").tp(8).a("--attn-dp-size", json!(3)),
        c("DPA001")
            .v("0.5.5")
            .tp(8)
            .f("--enable-dp-attention")
            .a("--dp-size", json!(4))
            .no(),
        c("DPA002").tp(8).f("--enable-dp-lm-head"),
        c("DPA002")
            .tp(8)
            .f("--enable-dp-lm-head")
            .a("--attn-dp-size", json!(8))
            .no(),
        c("DPA003")
            .tp(8)
            .a("--dp-size", json!(2))
            .a("--nnodes", json!(2)),
        c("DPA003").tp(8).a("--dp-size", json!(2)).no(),
        c("DPA003")
            .v("0.5.5")
            .tp(8)
            .a("--dp-size", json!(2))
            .a("--nnodes", json!(2))
            .f("--enable-dp-attention")
            .no(),
        // Expert parallelism.
        c("EP001")
            .v("0.5.10.post1")
            .t(PRO)
            .tp(8)
            .a("--moe-a2a-backend", json!("flashinfer")),
        c("EP001")
            .v("0.5.10.post1")
            .t(PRO)
            .tp(8)
            .a("--moe-a2a-backend", json!("flashinfer"))
            .a("--moe-runner-backend", json!("flashinfer_cutlass"))
            .no(),
        c("EP001")
            .tp(8)
            .a("--moe-a2a-backend", json!("flashinfer"))
            .a("--moe-runner-backend", json!("deep_gemm"))
            .no(),
        c("EP002").tp(8).a("--moe-a2a-backend", json!("flashinfer")),
        c("EP002")
            .tp(8)
            .a("--moe-a2a-backend", json!("flashinfer"))
            .a("--attn-dp-size", json!(8))
            .no(),
        c("EP003")
            .t(R4090)
            .tp(2)
            .a("--moe-a2a-backend", json!("deepep")),
        c("EP003")
            .tp(8)
            .a("--moe-a2a-backend", json!("deepep"))
            .no(),
        c("EP004")
            .t(PRO)
            .tp(8)
            .a("--moe-a2a-backend", json!("flashinfer")),
        c("EP004")
            .tp(8)
            .a("--moe-a2a-backend", json!("flashinfer"))
            .no(),
        c("EP004").t(PRO).tp(8).no(),
        c("EP005").f("--enable-two-batch-overlap"),
        c("EP005")
            .f("--enable-two-batch-overlap")
            .a("--moe-a2a-backend", json!("deepep"))
            .no(),
        c("EP006")
            .a("--moe-a2a-backend", json!("deepep"))
            .a("--deepep-mode", json!("normal")),
        c("EP006")
            .a("--moe-a2a-backend", json!("deepep"))
            .a("--deepep-mode", json!("auto"))
            .no(),
        c("EP007")
            .a("--moe-a2a-backend", json!("deepep"))
            .a("--cuda-graph-max-bs-decode", json!(256)),
        c("EP007")
            .a("--moe-a2a-backend", json!("deepep"))
            .a("--cuda-graph-max-bs-decode", json!(256))
            .e("SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK", "256")
            .no(),
        c("EP008").tp(8).f("--enable-eplb"),
        c("EP008")
            .tp(8)
            .f("--enable-eplb")
            .a("--ep-size", json!(8))
            .no(),
        c("EP009")
            .tp(8)
            .a("--moe-runner-backend", json!("triton_kernel"))
            .a("--ep-size", json!(8)),
        c("EP009")
            .tp(8)
            .a("--moe-runner-backend", json!("flashinfer_cutlass"))
            .a("--ep-size", json!(4)),
        c("EP009")
            .tp(8)
            .a("--moe-runner-backend", json!("triton_kernel"))
            .no(),
        c("EP010")
            .tp(8)
            .a("--moe-a2a-backend", json!("deepep"))
            .a("--ep-size", json!(4)),
        c("EP010")
            .tp(8)
            .a("--moe-a2a-backend", json!("deepep"))
            .a("--ep-size", json!(8))
            .no(),
        // Speculative decoding.
        c("SPEC001")
            .t(PRO)
            .tp(8)
            .a("--speculative-algorithm", json!("EAGLE3")),
        c("SPEC001")
            .tp(8)
            .a("--speculative-algorithm", json!("EAGLE3"))
            .no(),
        c("SPEC001")
            .t(PRO)
            .tp(2)
            .a("--speculative-algorithm", json!("EAGLE3"))
            .no(),
        c("SPEC002")
            .v("0.5.5")
            .tp(8)
            .a("--speculative-algorithm", json!("NGRAM"))
            .f("--enable-dp-attention")
            .a("--dp-size", json!(8)),
        c("SPEC002")
            .v("0.5.5")
            .tp(8)
            .a("--speculative-algorithm", json!("EAGLE"))
            .f("--enable-dp-attention")
            .a("--dp-size", json!(8))
            .no(),
        c("SPEC003")
            .v("0.5.5")
            .tp(8)
            .a("--speculative-algorithm", json!("NEXTN"))
            .f("--enable-dp-attention")
            .a("--dp-size", json!(8))
            .e("SGLANG_ENABLE_SPEC_V2", "1"),
        c("SPEC003")
            .v("0.5.5")
            .tp(8)
            .a("--speculative-algorithm", json!("NEXTN"))
            .f("--enable-dp-attention")
            .a("--dp-size", json!(8))
            .no(),
        // The documented DeepSeek MTP + DP-attention recipe on 0.5.23 (review regression).
        c("SPEC003")
            .tp(8)
            .a("--speculative-algorithm", json!("NEXTN"))
            .a("--attn-dp-size", json!(8))
            .e("SGLANG_ENABLE_SPEC_V2", "1")
            .no(),
        c("SPEC003")
            .tp(8)
            .a("--speculative-algorithm", json!("NEXTN"))
            .no(),
        c("SPEC004")
            .v("0.5.5")
            .a("--speculative-algorithm", json!("EAGLE"))
            .a("--speculative-eagle-topk", json!(4))
            .a("--page-size", json!(16))
            .a("--attention-backend", json!("fa3")),
        c("SPEC004")
            .v("0.5.5")
            .a("--speculative-algorithm", json!("EAGLE"))
            .a("--speculative-eagle-topk", json!(4))
            .a("--page-size", json!(16))
            .a("--attention-backend", json!("flashinfer"))
            .no(),
        c("SPEC004")
            .a("--speculative-algorithm", json!("EAGLE"))
            .a("--speculative-eagle-topk", json!(4))
            .a("--page-size", json!(16))
            .a("--attention-backend", json!("fa3"))
            .no(),
        c("SPEC005")
            .t(B200)
            .a("--speculative-algorithm", json!("EAGLE"))
            .a("--speculative-eagle-topk", json!(4))
            .a("--attention-backend", json!("trtllm_mha")),
        c("SPEC005")
            .t(B200)
            .a("--speculative-algorithm", json!("EAGLE"))
            .a("--speculative-eagle-topk", json!(1))
            .a("--attention-backend", json!("trtllm_mha"))
            .no(),
        c("SPEC006").a(
            "--speculative-moe-runner-backend",
            json!("flashinfer_trtllm"),
        ),
        c("SPEC006")
            .a("--speculative-moe-runner-backend", json!("triton"))
            .no(),
        c("SPEC007").a("--speculative-algorithm", json!("EAGLE")),
        c("SPEC007")
            .a("--speculative-algorithm", json!("EAGLE"))
            .a("--max-running-requests", json!(64))
            .no(),
        c("SPEC008")
            .a("--speculative-algorithm", json!("EAGLE"))
            .a("--attention-backend", json!("flex_attention")),
        c("SPEC008")
            .a("--attention-backend", json!("flex_attention"))
            .no(),
        // Parallelism.
        c("PAR001").tp(8).m(heads(28, 4)),
        c("PAR001").tp(2).m(heads(32, 3)),
        c("PAR001").tp(8).m(heads(32, 8)).no(),
        c("PAR001").tp(8).m(heads(64, 2)).no(),
        c("PAR001").tp(8).m(mla()).no(),
        c("PAR002").tp(16).a("--nnodes", json!(2)),
        c("PAR002")
            .tp(16)
            .a("--nnodes", json!(2))
            .a("--dist-init-addr", json!("10.0.0.1:5000"))
            .no(),
        c("PAR003").tp(8).a("--nnodes", json!(3)),
        c("PAR003").tp(8).a("--nnodes", json!(2)).no(),
        c("PAR004")
            .a("--pp-size", json!(2))
            .a("--speculative-algorithm", json!("EAGLE")),
        c("PAR004").a("--pp-size", json!(2)).no(),
        // 0.5.23 admits EAGLE with PP under SGLANG_ENABLE_PP_SPEC or on prefill nodes.
        c("PAR004")
            .a("--pp-size", json!(2))
            .a("--speculative-algorithm", json!("EAGLE"))
            .e("SGLANG_ENABLE_PP_SPEC", "1")
            .no(),
        c("PAR004")
            .a("--pp-size", json!(2))
            .a("--speculative-algorithm", json!("NEXTN"))
            .a("--disaggregation-mode", json!("prefill"))
            .no(),
        c("PAR004")
            .a("--pp-size", json!(2))
            .a("--speculative-algorithm", json!("EAGLE3"))
            .e("SGLANG_ENABLE_PP_SPEC", "1"),
        c("PAR004")
            .v("0.5.10.post1")
            .a("--pp-size", json!(2))
            .a("--speculative-algorithm", json!("EAGLE"))
            .e("SGLANG_ENABLE_PP_SPEC", "1"),
        // Mixed chunked prefill: rejected with PP up to 0.5.10.post1, no longer in 0.5.23.
        c("PAR004")
            .v("0.5.10.post1")
            .a("--pp-size", json!(2))
            .f("--enable-mixed-chunk"),
        c("PAR004")
            .a("--pp-size", json!(2))
            .f("--enable-mixed-chunk")
            .no(),
        // A 64 GiB model fits one 8x H100 node: spanning is a pure loss.
        c("PAR005").tp(16).a("--nnodes", json!(2)).m(ModelFacts {
            weight_bytes: Some(64 << 30),
            ..model("Qwen3ForCausalLM")
        }),
        // SGLang's documented DeepSeek recipe: too big for one node (QA regression).
        c("PAR005")
            .tp(16)
            .a("--nnodes", json!(2))
            .m(ModelFacts {
                weight_bytes: Some(690_000_000_000),
                ..mla()
            })
            .no(),
        // Model unknown: no claim.
        c("PAR005").tp(16).a("--nnodes", json!(2)).no(),
        // DP attention keeps the attention all-reduce inside a node.
        c("PAR005")
            .tp(16)
            .a("--nnodes", json!(2))
            .f("--enable-dp-attention")
            .a("--dp-size", json!(16))
            .m(ModelFacts {
                weight_bytes: Some(64 << 30),
                ..model("Qwen3ForCausalLM")
            })
            .no(),
        c("PAR005")
            .tp(8)
            .a("--pp-size", json!(2))
            .a("--nnodes", json!(2))
            .no(),
        c("PAR006")
            .tp(16)
            .a("--nnodes", json!(2))
            .a("--node-rank", json!(2)),
        c("PAR006")
            .tp(16)
            .a("--nnodes", json!(2))
            .a("--node-rank", json!(1))
            .no(),
        // Caches.
        c("CACHE001")
            .f("--enable-hierarchical-cache")
            .f("--disable-radix-cache"),
        c("CACHE001")
            .f("--enable-hierarchical-cache")
            .a("--page-size", json!(64))
            .no(),
        c("CACHE002")
            .a("--chunked-prefill-size", json!(1000))
            .a("--page-size", json!(64)),
        c("CACHE002")
            .a("--chunked-prefill-size", json!(8192))
            .a("--page-size", json!(64))
            .no(),
        c("CACHE003").f("--enable-hierarchical-cache"),
        // SGLang moves trtllm_mha to page 64; Blackwell's auto backend may page (review regression).
        c("CACHE003")
            .f("--enable-hierarchical-cache")
            .a("--attention-backend", json!("trtllm_mha"))
            .no(),
        c("CACHE003").t(B200).f("--enable-hierarchical-cache").no(),
        c("CACHE003")
            .t(B200)
            .f("--enable-hierarchical-cache")
            .a("--page-size", json!(1)),
        c("CACHE002")
            .a("--chunked-prefill-size", json!(1000))
            .a("--attention-backend", json!("trtllm_mla")),
        c("CACHE003")
            .f("--enable-hierarchical-cache")
            .a("--page-size", json!(64))
            .no(),
        // Flags by version.
        c("FLAG001").tok(&["--model-path", "m", "--cuda-graph-max-bs", "128"]),
        c("FLAG001")
            .v("0.5.5")
            .tok(&["--cuda-graph-max-bs-decode=64"]),
        c("FLAG001")
            .v("0.5.5")
            .tok(&["--cuda-graph-max-bs", "128"])
            .no(),
        c("FLAG002")
            .v("0.5.10.post1")
            .f("--stream-output")
            .tok(&["--stream-output"]),
        c("FLAG002")
            .v("0.5.10.post1")
            .f("--incremental-streaming-output")
            .tok(&["--incremental-streaming-output"])
            .no(),
        c("FLAG002").f("--disable-cuda-graph"),
        c("FLAG002").v("0.5.5").f("--stream-output").no(),
        c("FLAG003")
            .tp(8)
            .f("--enable-dp-attention")
            .a("--dp-size", json!(8)),
        c("FLAG003")
            .v("0.5.5")
            .tp(8)
            .f("--enable-dp-attention")
            .a("--dp-size", json!(8))
            .no(),
        c("FLAG004").tok(&["--enable-double-sparsity"]),
        c("FLAG004").v("0.5.5").tok(&["--attn-dp-size", "8"]),
        c("FLAG004").tok(&["--attn-dp-size", "8"]).no(),
        c("FLAG004").tok(&["--cuda-graph-max-bs", "8"]).no(),
        // Environment.
        c("ENV001").e("SGLANG_FORCE_CUSTOM_AR_PCIE", "1"),
        c("ENV001").v("0.5.20").e("SGLANG_ENABLE_JIT_DEEPGEM", "1"),
        c("ENV001").e("SGLANG_ENABLE_PCIE_IPC_ALLREDUCE", "1").no(),
        c("ENV001").e("SGLANG_ENABLE_SPEC_V2", "1").no(),
        c("ENV001").e("SGL_ENABLE_JIT_DEEPGEMM", "1").no(),
        c("ENV001").e("NCCL_DEBUG", "INFO").no(),
        c("ENV002").e("SGL_ENABLE_JIT_DEEPGEMM", "1"),
        c("ENV002")
            .e("SGL_ENABLE_JIT_DEEPGEMM", "0")
            .e("SGLANG_ENABLE_JIT_DEEPGEMM", "1"),
        c("ENV002").e("SGLANG_USE_TRITON_ROUTER_SUM", "1"),
        c("ENV002").v("0.5.5").e("SGLANG_GC_LOG", "1"),
        c("ENV002").e("SGLANG_ENABLE_JIT_DEEPGEMM", "1").no(),
        c("ENV003").e("SGLANG_ENABLE_SPEC_V2", "1"),
        c("ENV003").e("SGLANG_ENABLE_CP_V2", "1"),
        c("ENV003").v("0.5.5").e("SGLANG_ENABLE_SPEC_V2", "1").no(),
        c("ENV004").e("SGLANG_USE_AITER", "1"),
        c("ENV004").t(PRO).e("SGLANG_ENABLE_JIT_DEEPGEMM", "1"),
        c("ENV004").tp(8).e("SGLANG_ENABLE_PCIE_IPC_ALLREDUCE", "1"),
        c("ENV004")
            .t(PRO)
            .tp(8)
            .e("SGLANG_ENABLE_PCIE_IPC_ALLREDUCE", "1")
            .no(),
        c("ENV004")
            .tp(2)
            .f("--enable-p2p-check")
            .e("SGLANG_SKIP_P2P_CHECK", "1")
            .no(),
        // Without --enable-p2p-check it swaps the patched "yes" for the driver's answer (review regression).
        c("ENV004").tp(2).e("SGLANG_SKIP_P2P_CHECK", "1").no(),
        c("ENV004").tp(2).e("SGLANG_SKIP_P2P_CHECK", "true"),
        c("ENV004").e("SGLANG_SKIP_P2P_CHECK", "1"),
        c("ENV005").e("SGLANG_ENABLE_TP_MEMORY_INBALANCE_CHECK", "on"),
        c("ENV005")
            .e("SGLANG_ENABLE_TP_MEMORY_INBALANCE_CHECK", "1")
            .no(),
        c("ENV006")
            .a("--context-length", json!(131072))
            .m(ModelFacts {
                max_position_embeddings: Some(32768),
                ..model("Qwen2ForCausalLM")
            }),
        c("ENV006")
            .a("--context-length", json!(131072))
            .m(ModelFacts {
                max_position_embeddings: Some(32768),
                ..model("Qwen2ForCausalLM")
            })
            .e("SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN", "1")
            .no(),
        c("ENV007").tp(8).f("--enable-deterministic-inference"),
        c("ENV007").f("--enable-deterministic-inference").no(),
        // GPUs in use.
        c("TOP002").edit(|t| t.gpus[0].mig_enabled = true),
        c("TOP002").no(),
        c("TOP003").edit(|t| {
            t.gpus[1].name = "NVIDIA A100-SXM4-80GB".into();
            t.gpus[1].memory_total_mib = 81920;
        }),
        c("TOP003").no(),
        c("TOP004").e("CUDA_VISIBLE_DEVICES", "0,1,9,3"),
        c("TOP004").e("CUDA_VISIBLE_DEVICES", "GPU-does-not-exist"),
        c("TOP004").e("CUDA_VISIBLE_DEVICES", "0,1,2,3").no(),
        // Installed packages.
        c("PKG001").t(PRO).tp(8).pkgs(&[("torch", "2.6.0+cu124")]),
        c("PKG001").t(B200).pkgs(&[("torch", "2.7.1+cu126")]),
        c("PKG001").t(PRO).pkgs(&[("torch", "2.9.1+cu128")]).no(),
        c("PKG001").t(PRO).pkgs(&[("torch", "2.9.1+cu130")]).no(),
        c("PKG001").pkgs(&[("torch", "2.6.0+cu124")]).no(),
        c("PKG001").pkgs(&[("torch", "2.8.0+cpu")]),
        c("PKG001").t(L4).pkgs(&[("torch", "2.5.1+rocm6.2")]),
        c("PKG001").t(L4).pkgs(&[("torch", "2.8.0+xpu")]),
        c("PKG001")
            .edit(|t| {
                t.gpus
                    .iter_mut()
                    .for_each(|g| g.compute_capability = "7.0".into())
            })
            .pkgs(&[("torch", "2.9.1+cu130")]),
        c("PKG001")
            .edit(|t| {
                t.gpus
                    .iter_mut()
                    .for_each(|g| g.compute_capability = "7.0".into())
            })
            .pkgs(&[("torch", "2.9.1+cu128")])
            .no(),
        // Unlabelled PyPI torch without torch/version.py: the build is unknown.
        c("PKG001").t(PRO).pkgs(&[("torch", "2.6.0")]).no(),
        // Packages unknown (offline planning): silent.
        c("PKG001").t(PRO).no(),
        c("PKG002").t(PRO).pkgs(&[("sgl-kernel", "0.1.9")]),
        c("PKG002").t(PRO).pkgs(&[("sgl_kernel", "0.2.7+cu126")]),
        c("PKG002")
            .t(PRO)
            .pkgs(&[("sgl-kernel", "0.2.7+cu128")])
            .no(),
        c("PKG002").t(PRO).pkgs(&[("sglang-kernel", "0.4.10")]).no(),
        c("PKG002").pkgs(&[("sgl-kernel", "0.1.9")]).no(),
        // A source build (PEP 610 direct_url.json) may well have sm_120.
        c("PKG002")
            .t(PRO)
            .pkgs(&[("sgl-kernel", "0.1.9")])
            .edit_pkgs(|p| p.packages.values_mut().for_each(|k| k.direct = true))
            .no(),
        c("PKG003")
            .t(PRO)
            .tp(2)
            .pkgs(&[("torch", "2.7.1+cu128"), ("nvidia-nccl-cu12", "2.26.2")]),
        c("PKG003")
            .t(PRO)
            .tp(2)
            .pkgs(&[("torch", "2.7.1+cu128"), ("nvidia-nccl-cu12", "2.27.3")])
            .no(),
        c("PKG003")
            .t(PRO)
            .pkgs(&[("nvidia-nccl-cu12", "2.26.2")])
            .no(),
        c("PKG003")
            .tp(8)
            .pkgs(&[("nvidia-nccl-cu12", "2.26.2")])
            .no(),
        c("PKG004").v("0.5.5").m(vlm()).pkgs(&[
            ("sglang", "0.5.9"),
            ("torch", "2.9.1+cu128"),
            ("nvidia-cudnn-cu12", "9.10.2.21"),
        ]),
        c("PKG004")
            .v("0.5.5")
            .m(vlm())
            .pkgs(&[
                ("sglang", "0.5.5"),
                ("torch", "2.9.1+cu128"),
                ("nvidia-cudnn-cu12", "9.10.2.21"),
            ])
            .no(),
        c("PKG004")
            .v("0.5.5")
            .m(vlm())
            .pkgs(&[
                ("sglang", "0.5.7"),
                ("torch", "2.9.1+cu128"),
                ("nvidia-cudnn-cu12", "9.16.0.29"),
            ])
            .no(),
        c("PKG004")
            .v("0.5.5")
            .m(vlm())
            .e("SGLANG_DISABLE_CUDNN_CHECK", "1")
            .pkgs(&[
                ("sglang", "0.5.7"),
                ("torch", "2.9.1+cu128"),
                ("nvidia-cudnn-cu12", "9.10.2.21"),
            ])
            .no(),
        c("PKG004")
            .v("0.5.5")
            .m(model("Qwen2ForCausalLM"))
            .pkgs(&[
                ("sglang", "0.5.7"),
                ("torch", "2.9.1+cu128"),
                ("nvidia-cudnn-cu12", "9.10.2.21"),
            ])
            .no(),
        c("PKG004")
            .v("0.5.23")
            .m(vlm())
            .pkgs(&[
                ("sglang", "0.5.7"),
                ("torch", "2.9.1+cu128"),
                ("nvidia-cudnn-cu12", "9.10.2.21"),
            ])
            .no(),
        c("PKG005")
            .t(PRO)
            .a("--quantization", json!("modelopt_fp4"))
            .pkgs(&[("flashinfer-python", "0.6.3")]),
        c("PKG006")
            .t(PRO)
            .pkgs(&[("flashinfer-python", "0.6.7.post3")])
            .toolkit(true, Some((12, 8))),
        c("PKG006")
            .t(PRO)
            .pkgs(&[("flashinfer-python", "0.7.2")])
            .toolkit(true, Some((12, 8)))
            .no(),
        c("PKG006")
            .t(PRO)
            .pkgs(&[("flashinfer-python", "0.7.2")])
            .toolkit(true, Some((12, 6))),
        c("PKG006")
            .t(PRO)
            .pkgs(&[("flashinfer-python", "0.5.3")])
            .toolkit(true, Some((12, 6))),
        c("PKG006")
            .t(PRO)
            .pkgs(&[
                ("flashinfer-python", "0.6.7.post3"),
                ("flashinfer-jit-cache", "0.6.7.post3"),
            ])
            .toolkit(true, Some((12, 8)))
            .no(),
        c("PKG006")
            .t(PRO)
            .pkgs(&[("flashinfer-python", "0.6.7.post3")])
            .toolkit(true, Some((12, 9)))
            .no(),
        // No nvcc: FlashInfer goes by torch's CUDA.
        c("PKG006")
            .t(PRO)
            .pkgs(&[
                ("torch", "2.9.1+cu128"),
                ("flashinfer-python", "0.6.7.post3"),
            ])
            .toolkit(false, None),
        c("PKG006")
            .t(PRO)
            .pkgs(&[
                ("torch", "2.9.1+cu130"),
                ("flashinfer-python", "0.6.7.post3"),
            ])
            .no(),
        c("PKG006")
            .t(PRO)
            .pkgs(&[("torch", "2.9.1+cu126"), ("flashinfer-python", "0.6.3")]),
        c("PKG006")
            .t(PRO)
            .pkgs(&[("flashinfer-python", "0.6.7.post3")])
            .toolkit(true, None)
            .no(),
        c("PKG006")
            .pkgs(&[("flashinfer-python", "0.6.7.post3")])
            .toolkit(true, Some((12, 4)))
            .no(),
        c("PKG006")
            .t(PRO)
            .e("FLASHINFER_CUDA_ARCH_LIST", "12.0f")
            .pkgs(&[("flashinfer-python", "0.6.7.post3")])
            .toolkit(true, Some((12, 8)))
            .no(),
        // GB10 (SM 12.1) needs 12.9 in every release.
        c("PKG006")
            .t(PRO)
            .edit(|t| {
                t.gpus
                    .iter_mut()
                    .for_each(|g| g.compute_capability = "12.1".into())
            })
            .pkgs(&[("flashinfer-python", "0.7.2")])
            .toolkit(true, Some((12, 8))),
        c("PKG005")
            .t(PRO)
            .a("--quantization", json!("modelopt_fp4"))
            .pkgs(&[("flashinfer-python", "0.6.7.post3")])
            .no(),
        c("PKG005")
            .t(B200)
            .a("--quantization", json!("modelopt_fp4"))
            .pkgs(&[("flashinfer_python", "0.6.3")])
            .no(),
    ]
}

impl Case {
    fn uuids(mut self, g: &[u32]) -> Self {
        self.uuids = Some(g.to_vec());
        self
    }
}

/// The facts of a case, owned, so a fix can be applied and the rule re-run.
struct World {
    version: &'static str,
    args: SglangArgs,
    env: Env,
    topo: Topology,
    gpus: Vec<u32>,
    model: Option<ModelFacts>,
    host: Option<HostFacts>,
    packages: Option<Packages>,
}

fn flags_for(v: &str) -> &'static flagset::FlagSet {
    flagset::get(v).unwrap_or_else(|| {
        let older = KNOWN_VERSIONS
            .iter()
            .rev()
            .find(|k| version::cmp(k, v).is_le())
            .unwrap_or(&KNOWN_VERSIONS[0]);
        flagset::get(older).unwrap()
    })
}

fn world(case: &Case) -> World {
    let mut topo = topo(case.topo);
    if let Some(e) = case.edit {
        e(&mut topo);
    }
    let mut args = SglangArgs::with_values(flags_for(case.version), &case.args);
    args.tokens = case.tokens.iter().map(OsString::from).collect();
    let mut env: Vec<(String, String)> = case
        .env
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    if let Some(u) = &case.uuids {
        let list: Vec<String> = u
            .iter()
            .map(|&i| topo.gpu(i).unwrap().uuid.clone())
            .collect();
        env.push(("CUDA_VISIBLE_DEVICES".into(), list.join(",")));
    }
    World {
        version: case.version,
        args,
        env: Env::from_pairs(env),
        gpus: case
            .gpus
            .clone()
            .unwrap_or_else(|| topo.gpus.iter().map(|g| g.index).collect()),
        topo,
        model: case.model.clone(),
        host: case.host.clone(),
        packages: case.packages.clone(),
    }
}

impl World {
    fn ctx(&self) -> Context<'_> {
        Context {
            version: self.version,
            args: &self.args,
            env: &self.env,
            topology: &self.topo,
            gpus: &self.gpus,
            model: self.model.as_ref(),
            host: self.host.as_ref(),
            packages: self.packages.as_ref(),
        }
    }

    fn hits(&self, code: &str) -> Vec<rules::Hit> {
        rules::evaluate(&self.ctx(), &RuleSettings::default())
            .into_iter()
            .filter(|h| h.code == code)
            .collect()
    }

    /// What the lead's fix applier does, on the parser-free representation of the tests.
    fn apply(&mut self, fix: &Fix) {
        for e in &fix.args {
            match e {
                ArgEdit::Remove { option } => {
                    if let Some(d) = self.args.flags.dest_of(option) {
                        self.args.values.remove(d);
                    }
                    remove_tokens(&mut self.args.tokens, option);
                }
                ArgEdit::Set { option, value } => {
                    let a = self
                        .args
                        .flags
                        .action(option)
                        .expect("fix names a known option");
                    let v = match a.value_type {
                        ValueType::Int | ValueType::HumanInt => {
                            json!(value.parse::<i64>().unwrap())
                        }
                        ValueType::Float => json!(value.parse::<f64>().unwrap()),
                        _ => json!(value),
                    };
                    self.args.values.insert(a.dest.clone(), v);
                }
                ArgEdit::AddFlag { option } => {
                    let d = self
                        .args
                        .flags
                        .dest_of(option)
                        .expect("fix names a known option");
                    self.args.values.insert(d.to_string(), json!(true));
                }
                ArgEdit::Rename { from, to } => {
                    assert!(
                        self.args.flags.action(to).is_some(),
                        "rename target {to} is known"
                    );
                    for t in self.args.tokens.iter_mut() {
                        let s = t.to_string_lossy().into_owned();
                        if s == *from {
                            *t = OsString::from(to);
                        } else if let Some(v) = s.strip_prefix(&format!("{from}=")) {
                            *t = OsString::from(format!("{to}={v}"));
                        }
                    }
                    if let (Some(a), Some(b)) =
                        (self.args.flags.dest_of(from), self.args.flags.dest_of(to))
                        && let Some(v) = self.args.values.remove(a)
                    {
                        self.args.values.insert(b.to_string(), v);
                    }
                }
            }
        }
        for e in &fix.env {
            match e {
                EnvEdit::Set { name, value } => {
                    self.env.vars.insert(name.clone(), value.clone());
                }
                EnvEdit::Unset { name } => {
                    self.env.vars.remove(name);
                }
            }
        }
    }
}

fn remove_tokens(tokens: &mut Vec<OsString>, option: &str) {
    let mut out = Vec::new();
    let mut skip_value = false;
    for t in tokens.drain(..) {
        let s = t.to_string_lossy().into_owned();
        if skip_value && !s.starts_with("--") {
            skip_value = false;
            continue;
        }
        skip_value = false;
        if s == option {
            skip_value = true;
            continue;
        }
        if s.starts_with(&format!("{option}=")) {
            continue;
        }
        out.push(t);
    }
    *tokens = out;
}

#[test]
fn every_case_fires_or_stays_quiet_as_expected() {
    let mut failures = Vec::new();
    for (i, case) in cases().iter().enumerate() {
        let w = world(case);
        let hits = w.hits(case.code);
        if hits.is_empty() == case.fires {
            failures.push(format!(
                "case {i} {} on {} {} (expected {}): {:?}",
                case.code,
                case.topo,
                case.version,
                if case.fires { "a hit" } else { "no hit" },
                hits.iter().map(|h| &h.message).collect::<Vec<_>>()
            ));
        }
        for h in &hits {
            assert!(
                !h.message.is_empty() && !h.message.contains('\n'),
                "{}: one-line message",
                h.code
            );
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_checked_rule_has_a_firing_and_a_quiet_case() {
    let cs = cases();
    for r in rules::all().iter().filter(|r| r.check.is_some()) {
        assert!(
            cs.iter().any(|c| c.code == r.code && c.fires),
            "{} has no firing case",
            r.code
        );
        assert!(
            cs.iter().any(|c| c.code == r.code && !c.fires),
            "{} has no quiet case",
            r.code
        );
    }
}

#[test]
fn fixes_converge_the_rule_stops_firing() {
    let mut fixed = 0;
    for case in cases().iter().filter(|c| c.fires) {
        let mut w = world(case);
        let hits = w.hits(case.code);
        let fixes: Vec<Fix> = hits.iter().filter_map(|h| h.fix.clone()).collect();
        if fixes.is_empty() {
            continue;
        }
        for f in &fixes {
            assert!(
                !f.summary.is_empty() && !f.summary.contains('\n'),
                "{}",
                case.code
            );
            assert!(
                !f.args.is_empty() || !f.env.is_empty(),
                "{}: empty fix",
                case.code
            );
            w.apply(f);
        }
        fixed += 1;
        let after = w.hits(case.code);
        assert!(
            after.iter().all(|h| h.fix.is_none()) && after.len() < hits.len() || after.is_empty(),
            "{} still fires after its fix: {:?}",
            case.code,
            after.iter().map(|h| &h.message).collect::<Vec<_>>()
        );
        // Idempotent: applying the same fixes again changes nothing.
        let (args, env) = (w.args.values.clone(), w.env.clone());
        for f in &fixes {
            w.apply(f);
        }
        assert_eq!(args, w.args.values, "{}", case.code);
        assert_eq!(env, w.env, "{}", case.code);
    }
    assert!(fixed >= 15, "only {fixed} cases exercised a fix");
}

#[test]
fn fixes_use_options_the_version_knows() {
    for case in cases().iter().filter(|c| c.fires) {
        let w = world(case);
        for h in w.hits(case.code) {
            for e in h.fix.iter().flat_map(|f| &f.args) {
                let opt = match e {
                    ArgEdit::Remove { option }
                    | ArgEdit::Set { option, .. }
                    | ArgEdit::AddFlag { option } => option,
                    ArgEdit::Rename { to, .. } => to,
                };
                assert!(
                    w.args.knows(opt),
                    "{}: {opt} unknown to {}",
                    case.code,
                    case.version
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Catalogue data and checks agree.

fn is_kebab(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('-')
        && !s.ends_with('-')
        && !s.contains("--")
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

#[test]
fn catalogue_data_and_checks_agree() {
    let all = rules::all();
    assert!(all.len() >= 60, "{} rules", all.len());
    let mut codes = BTreeSet::new();
    let mut names = BTreeSet::new();
    for r in all {
        assert!(codes.insert(r.code), "duplicate code {}", r.code);
        assert!(names.insert(r.name), "duplicate name {}", r.name);
        assert!(
            is_kebab(r.name),
            "{}: name {} is not kebab-case",
            r.code,
            r.name
        );
        assert!(
            r.code.len() > r.family().len() && r.code[r.family().len()..].len() == 3,
            "{}: family + three digits",
            r.code
        );
        assert!(
            !r.summary.is_empty() && !r.summary.contains('\n'),
            "{}",
            r.code
        );
        assert!(
            !r.sources.is_empty() || r.no_source.is_some_and(|s| !s.is_empty()),
            "{}: needs a source URL or a reason",
            r.code
        );
        for u in &r.sources {
            assert!(u.starts_with("https://"), "{}: {u}", r.code);
        }
        for section in ["## What it does", "## Why", "## Example", "## Fix"] {
            assert!(r.explanation.contains(section), "{}: no {section}", r.code);
        }
        // Every version range parses and selects at least one known release.
        assert!(
            KNOWN_VERSIONS.iter().any(|v| r.applies_to(v)),
            "{}: versions {} select no known release",
            r.code,
            r.versions
        );
    }
    // One file per code, nothing else in the directory.
    let dir = format!("{}/data/rules", env!("CARGO_MANIFEST_DIR"));
    let files: BTreeSet<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let expected: BTreeSet<String> = codes.iter().map(|c| format!("{c}.md")).collect();
    assert_eq!(files, expected);
    for (old, new) in rules::REDIRECTS {
        assert!(!codes.contains(old), "redirected code {old} reused");
        assert!(codes.contains(new));
    }
}

#[test]
fn pipeline_codes_are_registered_without_checks() {
    let want = [
        ("ARG001", "invalid-sglang-arguments", Severity::Error),
        ("VER001", "sglang-version-fallback", Severity::Warning),
        ("VER002", "sglang-version-undetected", Severity::Warning),
        ("TOP001", "gpu-selection", Severity::Error),
        ("MEM001", "model-config-unavailable", Severity::Info),
        ("MEM002", "model-config-invalid", Severity::Warning),
        ("MEM003", "mem-fraction-too-high", Severity::Warning),
        ("MEM004", "mem-fraction-too-low", Severity::Error),
        ("MEM005", "does-not-fit", Severity::Error),
        ("MEM006", "cuda-graph-memory", Severity::Info),
    ];
    for (code, name, sev) in want {
        let r = rules::lookup(code).unwrap();
        assert_eq!((r.name, r.severity), (name, sev), "{code}");
        assert!(r.emitted_by_pipeline(), "{code}");
        let hit = rules::emit(code, "m", None, &RuleSettings::default()).unwrap();
        assert_eq!((hit.code, hit.name, hit.severity), (code, name, sev));
    }
    let checked = rules::all().iter().filter(|r| r.check.is_some()).count();
    assert!(checked >= 60, "{checked} checks");
}

// ---------------------------------------------------------------------------------------------
// The seed story: every lesson is a rule that fires on the operator's box.

#[test]
fn the_seed_story_is_caught_on_the_rtx_pro_6000_box() {
    let base = || c("X").v("0.5.10.post1").t(PRO).tp(8);
    let attempts: Vec<(Case, &str)> = vec![
        (
            base().v("0.5.23").f("--enable-flashinfer-allreduce-fusion"),
            "ARCH001",
        ),
        (base().e("SGLANG_FORCE_CUSTOM_AR_PCIE", "1"), "AR002"),
        (base().f("--enable-torch-symm-mem"), "ARCH006"),
        (
            base()
                .a("--ep-size", json!(8))
                .a("--moe-a2a-backend", json!("flashinfer")),
            "EP001",
        ),
        (
            base()
                .a("--ep-size", json!(8))
                .a("--moe-a2a-backend", json!("flashinfer")),
            "EP004",
        ),
        (base(), "CG001"),
        (
            base().a("--speculative-algorithm", json!("EAGLE3")),
            "SPEC001",
        ),
        (base().e("SGLANG_FORCE_CUSTOM_AR_PCIE", "1"), "ENV001"),
        (base().e("SGLANG_CUSTOM_ALLREDUCE_ALGO", "1stage"), "AR002"),
    ];
    for (case, code) in attempts {
        let w = world(&case);
        let hits = w.hits(code);
        assert!(!hits.is_empty(), "{code} did not fire");
        if code == "ARCH001" {
            let m = &hits[0].message;
            assert!(
                m.contains("RTX PRO 6000") && m.contains("12.0") && m.contains("GPUs 0–7"),
                "{m}"
            );
            assert_eq!(
                hits[0].fix.as_ref().unwrap().summary,
                "removed --enable-flashinfer-allreduce-fusion"
            );
        }
    }
    // The ineffective algorithm variable, on NVLink where V2 runs.
    let w = world(&c("X").tp(8).e("SGLANG_CUSTOM_ALLREDUCE_ALGO", "1stage"));
    let h = w.hits("AR003");
    assert_eq!(
        h[0].fix.as_ref().unwrap().summary,
        "unset SGLANG_CUSTOM_ALLREDUCE_ALGO"
    );
}

// ---------------------------------------------------------------------------------------------
// No rule panics on odd facts, for every version.

fn odd_topologies() -> Vec<(Topology, Vec<u32>)> {
    let mut out = Vec::new();
    let mut empty = topo(L4);
    empty.gpus.clear();
    out.push((empty, vec![]));
    let mut unknown = topo(H100);
    unknown
        .gpus
        .iter_mut()
        .for_each(|g| g.compute_capability = "unknown".into());
    unknown.links.clear();
    out.push((unknown, (0..8).collect()));
    let mut partial = topo(PRO);
    partial.links.truncate(3);
    partial.gpus[3].compute_capability = "12".into();
    partial.gpus[4].memory_total_mib = 0;
    out.push((partial, vec![7, 3, 99, 4]));
    out.push((topo(R4090), vec![5, 6]));
    out
}

fn odd_args(v: &str) -> Vec<SglangArgs> {
    let f = flags_for(v);
    let mut out = vec![SglangArgs::with_values(f, &[])];
    let mut vals: Vec<(&str, Value)> = Vec::new();
    for (o, val) in [
        ("--tp-size", json!(0)),
        ("--pp-size", json!(-3)),
        ("--dp-size", json!(0)),
        ("--nnodes", json!(0)),
        ("--node-rank", json!(-1)),
        ("--ep-size", json!(7)),
        ("--page-size", json!(0)),
        ("--chunked-prefill-size", json!(-1)),
        ("--cuda-graph-max-bs", json!(i64::MAX)),
        ("--cuda-graph-max-bs-decode", json!(i64::MAX)),
        ("--speculative-algorithm", json!("eagle3")),
        ("--speculative-eagle-topk", json!(9)),
        ("--speculative-num-draft-tokens", json!(i64::MAX)),
        ("--attention-backend", json!("fa3")),
        ("--moe-a2a-backend", json!("deepep")),
        ("--moe-runner-backend", json!("flashinfer_cutlass")),
        ("--attn-dp-size", json!(0)),
        ("--context-length", json!(-5)),
        ("--enable-dp-attention", json!(true)),
        ("--enable-torch-symm-mem", json!(true)),
        ("--enable-flashinfer-allreduce-fusion", json!(true)),
        ("--quantization", json!("modelopt_fp4")),
    ] {
        if f.action(o).is_some() {
            vals.push((o, val));
        }
    }
    out.push(SglangArgs::with_values(f, &vals));
    let mut tok = SglangArgs::with_values(f, &[]);
    tok.tokens = [
        "--",
        "--=",
        "---x",
        "--cuda-graph-max-bs",
        "--stream-output=1",
        "-x",
    ]
    .into_iter()
    .map(OsString::from)
    .collect();
    tok.tokens.insert(0, OsString::from("--cuda-graph-bs"));
    out.push(tok);
    out
}

#[test]
fn no_rule_panics_on_odd_facts_for_any_version() {
    let env = Env::from_pairs([
        ("CUDA_VISIBLE_DEVICES", "GPU-nope,,MIG-x"),
        ("SGLANG_CUSTOM_ALLREDUCE_ALGO", ""),
        ("SGL_", "1"),
        ("SGLANG_", ""),
        ("SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK", "x"),
        ("NCCL_P2P_DISABLE", "yes"),
        ("SGLANG_ENABLE_TP_MEMORY_INBALANCE_CHECK", "\u{fffd}"),
    ]);
    let zero = ModelFacts {
        num_attention_heads: Some(0),
        num_key_value_heads: Some(0),
        kv_lora_rank: None,
        max_position_embeddings: Some(0),
        num_experts: Some(0),
        ..Default::default()
    };
    let hosts = [None, Some(host(false, None)), Some(host(true, Some(0)))];
    // Odd package facts: unparsable versions and labels, overflowing CUDA labels, empty names.
    let odd_pkgs = [
        Some(Packages::from_versions(&[
            ("torch", "2.9.1+cu99999999999999999999"),
            ("sglang-kernel", ""),
            ("nvidia-nccl-cu12", "2.26.2"),
            ("nvidia-cudnn-cu12", "x.y"),
            ("flashinfer-python", "0.6.3"),
            ("", "1"),
        ])),
        Some(Packages::from_versions(&[
            ("torch", "+cpu"),
            ("sgl-kernel", "garbage+cu1"),
            ("nvidia-nccl-cu13", "2.26.2.post1"),
            ("nvidia-cudnn-cu13", "9"),
        ])),
    ];
    let mut versions: Vec<&str> = KNOWN_VERSIONS.to_vec();
    versions.extend(["0.0.1", "9.9.9", "garbage"]);
    let mut runs = 0;
    for v in versions {
        for args in odd_args(v) {
            for (t, gpus) in odd_topologies() {
                for ((m, h), pk) in [None, Some(&zero)]
                    .into_iter()
                    .zip(hosts.iter())
                    .zip(odd_pkgs.iter())
                {
                    let ctx = Context {
                        version: v,
                        args: &args,
                        env: &env,
                        topology: &t,
                        gpus: &gpus,
                        model: m,
                        host: h.as_ref(),
                        packages: pk.as_ref(),
                    };
                    // Every check, whatever its version range.
                    for r in rules::all() {
                        if let Some(check) = r.check {
                            for f in check(&ctx) {
                                assert!(!f.message.is_empty(), "{}", r.code);
                            }
                        }
                    }
                    rules::evaluate(&ctx, &RuleSettings::default());
                    runs += 1;
                }
            }
        }
    }
    assert!(runs > 50);
}

// ---------------------------------------------------------------------------------------------
// The API.

#[test]
fn lookup_by_code_name_and_case() {
    assert_eq!(
        rules::lookup("AR001").unwrap().name,
        "custom-allreduce-no-p2p"
    );
    assert_eq!(rules::lookup("ar001").unwrap().code, "AR001");
    assert_eq!(
        rules::lookup("custom-allreduce-pcie").unwrap().code,
        "AR002"
    );
    let e = rules::lookup("AR0001").unwrap_err();
    assert!(e.to_string().contains("did you mean"), "{e}");
    let e = rules::lookup("custom-allreduce-no-pp2").unwrap_err();
    assert_eq!(
        e.suggestion.as_deref(),
        Some("`AR001` (custom-allreduce-no-p2p)")
    );
    let e = rules::lookup("zzzzzzzzzzzzzzzzzzzz").unwrap_err();
    assert!(e.suggestion.is_none());
}

#[test]
fn settings_allow_deny_and_validate() {
    let w = world(
        &c("X")
            .t(PRO)
            .tp(8)
            .f("--enable-flashinfer-allreduce-fusion"),
    );
    let ctx = w.ctx();
    let codes = |s: &RuleSettings| -> BTreeMap<&'static str, Severity> {
        rules::evaluate(&ctx, s)
            .into_iter()
            .map(|h| (h.code, h.severity))
            .collect()
    };
    let base = codes(&RuleSettings::default());
    assert_eq!(base.get("ARCH001"), Some(&Severity::Error));
    assert_eq!(base.get("CG001"), Some(&Severity::Info));
    let allow = RuleSettings {
        allow: vec!["ARCH001".into(), "cuda-graph-max-bs-default-large".into()],
        ..Default::default()
    };
    let a = codes(&allow);
    assert!(!a.contains_key("ARCH001") && !a.contains_key("CG001"));
    let deny = RuleSettings {
        deny: vec!["CG".into()],
        ..Default::default()
    };
    assert_eq!(codes(&deny).get("CG001"), Some(&Severity::Error));
    let both = RuleSettings {
        allow: vec!["CG001".into()],
        deny: vec!["CG001".into()],
        ..Default::default()
    };
    assert_eq!(codes(&both).get("CG001"), Some(&Severity::Error));
    assert!(allow.validate().is_ok() && deny.validate().is_ok());
    let bad = RuleSettings {
        deny: vec!["ARCH01".into()],
        ..Default::default()
    };
    let e = bad.validate().unwrap_err();
    assert!(e.to_string().contains("ARCH01"));
    assert!(
        rules::emit(
            "MEM005",
            "x",
            None,
            &RuleSettings {
                allow: vec!["MEM".into()],
                ..Default::default()
            }
        )
        .is_none()
    );
}

#[test]
fn evaluate_honours_version_ranges_and_keeps_code_order() {
    // ARCH002 applies below 0.5.6 only, ARCH001 from 0.5.6.
    let w = world(
        &c("X")
            .v("0.5.5")
            .t(PRO)
            .tp(8)
            .f("--enable-flashinfer-allreduce-fusion"),
    );
    let hits = rules::evaluate(&w.ctx(), &RuleSettings::default());
    assert!(hits.iter().any(|h| h.code == "ARCH002") && !hits.iter().any(|h| h.code == "ARCH001"));
    let order: Vec<usize> = hits
        .iter()
        .map(|h| rules::all().iter().position(|r| r.code == h.code).unwrap())
        .collect();
    assert!(order.windows(2).all(|p| p[0] <= p[1]));
    assert_eq!(hits, rules::evaluate(&w.ctx(), &RuleSettings::default()));
}

#[test]
fn list_and_explain_render() {
    let text = rules::render_list(false);
    assert_eq!(text.lines().count(), rules::all().len());
    assert!(text.lines().any(|l| l.starts_with("AR001")
        && l.contains("custom-allreduce-no-p2p")
        && l.contains("error")));
    let json: Value = serde_json::from_str(&rules::render_list(true)).unwrap();
    let arr = json.as_array().unwrap();
    assert_eq!(arr.len(), rules::all().len());
    let ar2 = arr.iter().find(|e| e["code"] == "AR002").unwrap();
    assert_eq!(ar2["severity"], "warning");
    assert_eq!(ar2["emitted_by"], "check");
    assert_eq!(
        arr.iter().find(|e| e["code"] == "ARG001").unwrap()["emitted_by"],
        "pipeline"
    );
    let md = rules::render_explain(rules::lookup("ARCH001").unwrap());
    assert!(md.starts_with("# flashinfer-allreduce-fusion-arch (ARCH001)"));
    assert!(md.contains("https://github.com/sgl-project/sglang/issues/15650"));
    assert!(md.contains("## Why"));
    let md = rules::render_explain(rules::lookup("ARG001").unwrap());
    assert!(md.contains("Emitted by the launcher's pipeline"));
}

#[test]
fn source_counts_by_family() {
    // Not an assertion on exact numbers: the report quotes them; this keeps them computable.
    let mut by: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for r in rules::all() {
        let e = by.entry(r.family()).or_default();
        e.0 += 1;
        e.1 += usize::from(!r.sources.is_empty());
    }
    let with_url: usize = by.values().map(|v| v.1).sum();
    assert!(
        with_url * 2 > rules::all().len(),
        "most rules cite a URL ({with_url})"
    );
}

#[test]
fn unknown_env_suggests_only_close_names() {
    let msg = |v: &'static str, name: &'static str| {
        let w = world(&c("ENV001").v(v).e(name, "1"));
        w.hits("ENV001")
            .first()
            .map(|h| h.message.clone())
            .unwrap_or_default()
    };
    let m = msg("0.5.23", "SGLANG_ENABLE_JIT_DEEPGEM");
    assert!(
        m.contains("did you mean SGLANG_ENABLE_JIT_DEEPGEMM?"),
        "{m}"
    );
    let m = msg("0.5.23", "SGLANG_FORCE_CUSTOM_AR_PCIE");
    println!("{m}");
    assert!(m.contains("SGLang 0.5.23") && !m.contains("nearest"), "{m}");
    let m = msg("0.5.20", "SGLANG_FORCE_CUSTOM_AR_PCIE");
    assert!(m.contains("nearest to 0.5.20"), "{m}");
    assert_eq!(msg("0.5.23", "SGLANG_LAUNCH_TOPOLOGY"), "");
    let m = msg("0.5.2", "SGLANG_FORCE_CUSTOM_AR_PCIE");
    assert!(m.contains("without a typed registry"), "{m}");
}

#[test]
fn the_seed_session_command_gets_exactly_these_findings() {
    let case = c("X")
        .v("0.5.10.post1")
        .t(PRO)
        .tp(8)
        .f("--enable-flashinfer-allreduce-fusion")
        .f("--enable-torch-symm-mem")
        .a("--ep-size", json!(8))
        .a("--moe-a2a-backend", json!("flashinfer"))
        .a("--speculative-algorithm", json!("EAGLE3"))
        .e("SGLANG_FORCE_CUSTOM_AR_PCIE", "1")
        .e("SGLANG_CUSTOM_ALLREDUCE_ALGO", "1stage")
        .m(moe())
        .host(host(true, Some(64 << 20)));
    let w = world(&case);
    let got: Vec<(&str, Severity)> = rules::evaluate(&w.ctx(), &RuleSettings::default())
        .into_iter()
        .map(|h| (h.code, h.severity))
        .collect();
    use Severity::*;
    assert_eq!(
        got,
        vec![
            ("AR002", Warning),
            ("ARCH002", Warning),
            ("ARCH006", Error),
            ("CG001", Info),
            ("COMM002", Error),
            ("ENV001", Warning),
            ("EP001", Error),
            ("EP004", Warning),
            ("SPEC001", Warning),
            ("SPEC007", Info),
        ]
    );
}

#[test]
fn old_releases_spell_deepep_and_ep_as_flags() {
    // 0.5.2 has --enable-deepep-moe / --enable-ep-moe instead of --moe-a2a-backend / --ep-size.
    let w = world(
        &c("EP003")
            .v("0.5.2")
            .t(R4090)
            .tp(2)
            .f("--enable-deepep-moe"),
    );
    assert_eq!(w.hits("EP003").len(), 1);
    let w = world(
        &c("EP009")
            .v("0.5.2")
            .tp(8)
            .f("--enable-ep-moe")
            .a("--moe-runner-backend", json!("triton_kernel")),
    );
    assert_eq!(w.hits("EP009").len(), 1);
    let w = world(&c("ENV001").e("SGLANG_FORCE_CUSTOM_AR_PCIE", "1"));
    assert!(
        w.hits("ENV001")[0]
            .message
            .contains("no upstream release reads it")
    );
}

#[test]
fn declared_fix_availability_matches_the_checks() {
    use sglang_launch::rules::FixAvailability;
    let mut seen_fix: BTreeSet<&str> = BTreeSet::new();
    for case in cases().iter().filter(|c| c.fires) {
        let rule = rules::lookup(case.code).unwrap();
        for h in world(case).hits(case.code) {
            match rule.fix {
                FixAvailability::None => assert!(h.fix.is_none(), "{} declares no fix", h.code),
                FixAvailability::Always => {
                    assert!(h.fix.is_some(), "{} declares a fix: {}", h.code, h.message)
                }
                FixAvailability::Sometimes => {}
            }
            if h.fix.is_some() {
                seen_fix.insert(h.code);
            }
        }
    }
    for r in rules::all()
        .iter()
        .filter(|r| r.fix != FixAvailability::None)
    {
        assert!(
            seen_fix.contains(r.code),
            "{}: no case exercises its fix",
            r.code
        );
    }
}

#[test]
fn hits_made_outside_evaluate_get_names_and_settings() {
    let h = rules::Hit::new("MEM005", "does not fit");
    assert_eq!((h.name, h.severity), ("does-not-fit", Severity::Error));
    let w = rules::Hit::new("mem-fraction-too-high", "x");
    assert_eq!((w.code, w.severity), ("MEM003", Severity::Warning));
    let s = RuleSettings {
        allow: vec!["MEM005".into()],
        deny: vec!["MEM003".into()],
        ..Default::default()
    };
    let out = s.apply(vec![h, w]);
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].code, out[0].severity), ("MEM003", Severity::Error));
}

#[test]
fn cg001_quotes_the_pcie_measurement_only_on_pcie() {
    let big = ModelFacts {
        weight_bytes: Some(300 << 30),
        ..model("Qwen3ForCausalLM")
    };
    let nvlink = world(&c("CG001").tp(8).m(big)).hits("CG001");
    assert_eq!(nvlink.len(), 1);
    assert!(
        !nvlink[0].message.contains("RTX PRO"),
        "{}",
        nvlink[0].message
    );
    assert!(nvlink[0].message.contains("material share"));
    let pcie = world(&c("CG001").t(PRO).tp(8)).hits("CG001");
    assert_eq!(pcie.len(), 1);
    assert!(
        pcie[0].message.contains("one measurement"),
        "{}",
        pcie[0].message
    );
}

#[test]
fn env002_does_not_rename_over_a_different_value() {
    let w = world(
        &c("ENV002")
            .e("SGL_ENABLE_JIT_DEEPGEMM", "0")
            .e("SGLANG_ENABLE_JIT_DEEPGEMM", "1"),
    );
    let hits = w.hits("ENV002");
    assert_eq!(hits.len(), 1);
    assert!(hits[0].fix.is_none(), "{:?}", hits[0].fix);
    assert!(
        hits[0].message.contains("different value")
            && hits[0]
                .message
                .contains("SGL_ENABLE_JIT_DEEPGEMM's value is the one in effect"),
        "{}",
        hits[0].message
    );
    // Same value under both names: the plain rename is safe.
    let w = world(
        &c("ENV002")
            .e("SGL_ENABLE_JIT_DEEPGEMM", "1")
            .e("SGLANG_ENABLE_JIT_DEEPGEMM", "1"),
    );
    assert!(w.hits("ENV002")[0].fix.is_some());
}

#[test]
fn flag004_claims_no_first_version_the_flag_sets_cannot_prove() {
    let msg = |v: &'static str| {
        let w = world(&c("FLAG004").v(v).tok(&["--attn-dp-size", "8"]));
        let h = w.hits("FLAG004");
        assert_eq!(h.len(), 1, "{v}");
        h[0].message.clone()
    };
    let m = msg("0.5.10.post1");
    assert!(!m.contains("known from"), "{m}");
    assert!(
        m.contains("is not in SGLang 0.5.10.post1; present in 0.5.23"),
        "{m}"
    );
    let m = msg("0.5.5");
    assert!(
        m.contains("added after 0.5.10.post1 and is present in 0.5.23"),
        "{m}"
    );
}

#[test]
fn attn007_says_triton_only_where_sglang_swaps() {
    let m = |case: Case| world(&case).hits("ATTN007")[0].message.clone();
    let swapped = m(c("ATTN007")
        .a("--attention-backend", json!("fa3"))
        .a("--kv-cache-dtype", json!("fp8_e5m2")));
    assert!(
        swapped.contains("switches the attention backend to triton"),
        "{swapped}"
    );
    let old = m(c("ATTN007")
        .v("0.5.2")
        .a("--attention-backend", json!("fa3"))
        .a("--kv-cache-dtype", json!("fp8_e5m2")));
    assert!(old.contains("does not switch away from FA3"), "{old}");
    let decode = m(c("ATTN007")
        .a("--decode-attention-backend", json!("fa3"))
        .a("--kv-cache-dtype", json!("fp8_e5m2")));
    assert!(decode.contains("does not switch away from FA3"), "{decode}");
}
