#!/usr/bin/env python3
"""Run one of an SGLang release's own start-up functions past argument resolution, for the
evidence goldens (scripts/gen-evidence.py): a check SGLang makes when it builds the model runner
or a backend, not in ServerArgs.

    <venv>/bin/python scripts/evidence_probe.py --oracle DIR --function MODULE:QUALNAME \
        --gpu-mem MIB --gpu-name NAME --cc X.Y --num-gpus N [--cuda-version V] -- ARGV...

It sets up the team's defaults oracle's fake GPU (shared/oracle/defaults_oracle.py) and stubs,
resolves ARGV with the release's `prepare_server_args`, imports MODULE the same way, and calls
the function with a stand-in `self`: an instance of the method's class made without its
constructor, holding `server_args` and the attributes `--runner` gives (JSON, e.g. what the real
constructor derives from the model: {"use_mla_backend": true}), so the method's own calls on
`self` reach the class. Prints one JSON line:
{"refused": "<Type>: <message>"} when the function (or the argument handling before it) raises an AssertionError or ValueError (the
check; `--refuse-types` adds types, e.g. a gate that raises RuntimeError), {"stopped": "<what stopped it>", "at": ["module:function" of the traceback, innermost last]}
when something else stops it (most often what the stand-in lacks: whether that was past the
check the caller decides from `at`), {"passed": null} when it returns.

`--hf-config-first`: the function takes the Hugging Face config of the release's ModelConfig (with
`--model-config`), as a model class's constructor does; `--default-dtype` makes the model config's
dtype what torch's `get_default_dtype` returns, as it is while the loader builds the model.

`--server-args-first`: the function takes the resolved arguments instead of a runner (the
model config's `ModelConfig.from_server_args`, whose checks run as the scheduler builds it).

With `--model-config` the release's ModelConfig is built as its worker builds it (`from_server_args`,
or the constructor before 0.4.6.post5), with config.json's `torch_dtype` as the torch dtype real
transformers makes of it. Before the function runs, a stand-in tensor-parallel group (rank 0)
stands where the model runner has set up the real one.

`--pp-gate`: the function returns the model class the release loads (the loader's
`get_model_architecture`, given the release's own ModelConfig); the model runner's
pipeline-parallel gate is then applied to it, as the runner does once the weights are loaded:
with `pp_size` > 1, a class whose `forward` has no `pp_proxy_tensors` parameter is refused with
the assert message the release's own model_runner.py holds.

`--method-gate A[,B...]`: likewise on the class the loader returns, what a speculative worker
does when it calls a method on the loaded target (`get_embed_and_head`, …): a class with none of
the methods is refused as Python refuses the call ('<Class>' object has no attribute 'A'); a
class of SGLang's that defines `__getattr__` (which would answer for the instance) stops the
probe instead.

`--stubs A[,B...]`: modules the oracle's stand-in answers for, besides those of a real install the
venv lacks (a module imported on the way that the check never reaches).

`--dtype-instances`: the stand-in's dtypes pass `isinstance(x, torch.dtype)`, which some releases
assert at import (0.5.20's NIXL dispatcher, imported by every model module) and compressed-tensors
0.13 checks; `--quant-layers` and `--linear-weights` set it too.

`--quant-layers`: the function returns a compressed-tensors quantisation config (the loader's
`_get_quantization_config`); it is then asked for the methods of the first decoder layer's linear
layers, and of a MoE layer's experts where the model has them, as the model's constructor asks
(each with its prefix, so the config's `ignore` list applies). That is where the config picks each
layer's scheme, and where a scheme that needs what the install lacks raises.

`--linear-weights`: the function returns the loader's quantisation config; the model's first
decoder layer is then built from it linear layer by linear layer, as tensor parallelism splits
them (the attention projections where the layer has standard attention, not MLA or linear
attention, and the MLP's gate/up and down projections where its MLP is dense), and the first MoE
layer's experts as EP and the MoE TP split them: each layer's method from the config, then the
method's `create_weights` with the layer's per-GPU shape. The method checks the shape before it
makes a weight, so the probe stops it at the first weight it would make (the stand-in has none):
a check that refuses the shape raises before that. The experts' layer is given what FusedMoE sets
up for gated SiLU experts, and their `create_weights` the keywords the release's FusedMoE passes
(read from its constructor's source).

`--moe-runner` (with `--linear-weights`): after the experts' weights, their method's
`create_moe_runner`, which FusedMoE calls next, with the MoE settings initialised from the
arguments as the scheduler does. Only an AssertionError raised by `create_moe_runner` itself
counts as a refusal (reported as `[create_moe_runner]`, SGLang's assertion having no text), and
the NotImplementedError of the MoE runner it builds when that runner has no core for the named
backend (with `--refuse-types NotImplementedError`); what else the stand-in layer lacks there
comes after that check.
"""
import argparse
import contextlib
import importlib
import importlib.machinery
import inspect
import json
import sys
import tempfile
import traceback
import types


def with_torch_dtypes(mc):
    """Real transformers turns config.json's `torch_dtype` string into a torch dtype, which older
    releases compare with their own; without torch it stays a string, so it is turned here."""
    verify = getattr(mc, "_get_and_verify_dtype", None)
    if verify is None or getattr(verify, "probe_wrapped", False):
        return

    def wrapped(config, *args, **kwargs):
        for c in (config, getattr(config, "text_config", None)):
            name = getattr(c, "torch_dtype", None)
            if isinstance(name, str) and hasattr(mc.torch, name):
                c.torch_dtype = getattr(mc.torch, name)
        return verify(config, *args, **kwargs)

    wrapped.probe_wrapped = True
    mc._get_and_verify_dtype = wrapped


def with_tp_group(server_args, present):
    """The model runner sets up its tensor-parallel group before it loads the model; a release
    whose quantisation config logs on rank 0 asks for it. A stand-in group: rank 0 of TP."""
    import oracle
    try:
        ps = oracle.import_with_stubs("sglang.srt.distributed.parallel_state", extra_stubs=present)
    except Exception:  # a release without it
        return
    if getattr(ps, "_TP", 1) is None:
        ps._TP = types.SimpleNamespace(rank_in_group=0, world_size=server_args.tp_size,
                                       rank=0, local_rank=0)


def model_config_of(cls, server_args):
    """The release's ModelConfig of the arguments, built as its worker builds it."""
    if hasattr(cls, "from_server_args"):
        return cls.from_server_args(server_args)
    # Before 0.4.6.post5 the worker hands the constructor the arguments one by one.
    wanted = inspect.signature(cls.__init__).parameters
    given = {
        "trust_remote_code": server_args.trust_remote_code,
        "revision": server_args.revision,
        "context_length": server_args.context_length,
        "model_override_args": server_args.json_model_override_args,
        "is_embedding": server_args.is_embedding,
        "enable_multimodal": getattr(server_args, "enable_multimodal", None),
        "dtype": server_args.dtype,
        "quantization": server_args.quantization,
    }
    return cls(server_args.model_path, **{k: v for k, v in given.items() if k in wanted})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--oracle", required=True)
    ap.add_argument("--function", required=True)
    ap.add_argument("--gpu-mem", type=int, required=True)
    ap.add_argument("--gpu-name", required=True)
    ap.add_argument("--cc", required=True)
    ap.add_argument("--num-gpus", type=int, default=8)
    ap.add_argument("--cuda-version")
    ap.add_argument("--runner", default="{}")
    ap.add_argument("--model-config", action="store_true")
    ap.add_argument("--runner-class")
    ap.add_argument("--args", default="[]")
    # A module function that takes the model config first (the loader's), not a runner.
    ap.add_argument("--model-config-first", action="store_true")
    # A model module's function that takes the Hugging Face config the model class is built with.
    ap.add_argument("--hf-config-first", action="store_true")
    # The loader builds the model under the model config's dtype as torch's default dtype.
    ap.add_argument("--default-dtype", action="store_true")
    # A function that takes the resolved arguments first (ModelConfig.from_server_args).
    ap.add_argument("--server-args-first", action="store_true")
    # Further exception types that are the check itself (a RuntimeError some gates raise).
    ap.add_argument("--refuse-types", default="")
    ap.add_argument("--pp-gate", action="store_true")
    ap.add_argument("--method-gate", default="")
    ap.add_argument("--quant-layers", action="store_true")
    ap.add_argument("--linear-weights", action="store_true")
    # With --linear-weights: the experts' runner too, as FusedMoE builds it after their weights.
    ap.add_argument("--moe-runner", action="store_true")
    # Stand-in dtypes pass isinstance(x, torch.dtype) (the layer probe always sets it).
    ap.add_argument("--dtype-instances", action="store_true")
    # Further modules the stand-in answers for (imported on the way, never reached by the check).
    ap.add_argument("--stubs", default="")
    ap.add_argument("argv", nargs=argparse.REMAINDER)
    opts = ap.parse_args()
    sys.path.insert(0, opts.oracle)
    import defaults_oracle
    import oracle

    version = defaults_oracle.sglang_version()
    spec = {"gpu_mem_mib": opts.gpu_mem, "gpu_name": opts.gpu_name,
            "compute_capability": opts.cc, "num_gpus": opts.num_gpus}
    if opts.cuda_version:
        spec["cuda_version"] = opts.cuda_version
    # The oracle's defaults for what is not given (torch's CUDA version per release, SM count).
    spec = defaults_oracle.normalize_case(spec, version)
    defaults_oracle.setup_fake_gpu(spec, tempfile.mkdtemp())
    alias_dtypes(oracle)
    if opts.quant_layers or opts.linear_weights or opts.dtype_instances:
        dtype_instances(oracle)
    if opts.quant_layers or opts.linear_weights:
        compressed_tensors_helpers(oracle)
    present = [m for m in defaults_oracle.real_install_modules(version)
               if importlib.machinery.PathFinder.find_spec(m) is None and m != "pynvml"]
    present += [m for m in opts.stubs.split(",") if m]
    module, qualname = opts.function.split(":")
    argv = [a for a in opts.argv if a != "--"]
    sys.argv[0] = "launch_server.py"
    with contextlib.redirect_stdout(sys.stderr):
        sa = oracle.import_with_stubs("sglang.srt.server_args", extra_stubs=present)
        try:
            server_args = sa.prepare_server_args(argv)
            if hasattr(server_args, "resolve_once"):
                server_args.resolve_once()
        except (AssertionError, ValueError) as e:
            # The release's argument handling refuses the line before the probed function
            # (a release that builds the model config while it resolves the arguments).
            print(json.dumps({"refused": f"{type(e).__name__}: {e}"[:300]}), file=sys.__stdout__)
            return
        # What the scheduler process does before it builds a model runner.
        if hasattr(sa, "set_global_server_args_for_scheduler"):
            sa.set_global_server_args_for_scheduler(server_args)
        else:
            publish_global_dict(server_args, present)
        target = oracle.import_with_stubs(module, extra_stubs=present)
        if opts.quant_layers or opts.linear_weights:
            own_name_mapper(present)
    fn, owner = target, None
    for part in qualname.split("."):
        owner, fn = fn, getattr(fn, part)
    if opts.runner_class:
        # A module function that takes the runner: the stand-in is still the runner's class.
        rmod, rqual = opts.runner_class.split(":")
        with contextlib.redirect_stdout(sys.stderr):
            owner = oracle.import_with_stubs(rmod, extra_stubs=present)
        for part in rqual.split("."):
            owner = getattr(owner, part)
    runner = stand_in(owner if isinstance(owner, type) else None, server_args,
                      json.loads(opts.runner))
    if opts.model_config:
        # What the worker builds from the arguments and hands the runner: the release's own
        # ModelConfig of the model's config.json.
        with contextlib.redirect_stdout(sys.stderr):
            mc = oracle.import_with_stubs("sglang.srt.configs.model_config", extra_stubs=present)
            with_torch_dtypes(mc)
            try:
                runner.model_config = model_config_of(mc.ModelConfig, server_args)
            except Exception as e:
                # The model config's own checks refuse the checkpoint before the function.
                if not isinstance(e, (AssertionError, ValueError)) and \
                        type(e).__name__ not in opts.refuse_types.split(","):
                    raise
                print(json.dumps({"refused": f"{type(e).__name__}: {e}"[:300]}), file=sys.__stdout__)
                return
    with contextlib.redirect_stdout(sys.stderr):
        with_tp_group(server_args, present)
    first = runner.model_config if opts.model_config_first else runner
    if opts.hf_config_first:
        first = runner.model_config.hf_config
    if opts.default_dtype:
        target.torch.get_default_dtype = lambda: runner.model_config.dtype
    if opts.server_args_first:
        first = server_args
    try:
        with contextlib.redirect_stdout(sys.stderr):
            got = fn(first, *json.loads(opts.args))
        if opts.pp_gate:
            pp_gate(got, server_args)
        if opts.method_gate:
            method_gate(got, opts.method_gate.split(","))
        if opts.quant_layers:
            with contextlib.redirect_stdout(sys.stderr):
                quant_layers(got, runner.model_config, present)
        if opts.linear_weights:
            with contextlib.redirect_stdout(sys.stderr):
                linear_weights(got, runner.model_config, server_args, present, opts.moe_runner)
        out = {"passed": None}
    except (AssertionError, ValueError) as e:
        out = {"refused": f"{type(e).__name__}: {e}"[:300]}
    except Exception as e:  # past the check: the stand-in runner lacks what comes next
        if type(e).__name__ in opts.refuse_types.split(","):
            out = {"refused": f"{type(e).__name__}: {e}"[:300]}
        else:
            out = {"stopped": f"{type(e).__name__}: {e}"[:200], "at": modules(e.__traceback__)}
    print(json.dumps(out))


def pp_gate(loaded, server_args):
    """The model runner's gate on the class the loader returned ((class, name) or the class)."""
    import ast
    import inspect
    cls = loaded[0] if isinstance(loaded, tuple) else loaded
    pp = getattr(server_args, "pp_size", 1) or 1
    if pp > 1 and "pp_proxy_tensors" not in inspect.signature(cls.forward).parameters:
        runner = importlib.import_module("sglang.srt.model_executor.model_runner").__file__
        tree = ast.parse(open(runner, encoding="utf-8").read())
        message = next((n.msg.value for n in ast.walk(tree) if isinstance(n, ast.Assert)
                        and isinstance(n.msg, ast.Constant)
                        and "Pipeline Parallel" in str(n.msg.value)), None)
        if message is not None:  # releases before the gate have no such assert
            raise AssertionError(message)


def method_gate(loaded, methods):
    """A method call on the loaded target: AttributeError when its class has none of them."""
    cls = loaded[0] if isinstance(loaded, tuple) else loaded
    # The classes SGLang defines, read directly: the stub torch answers any attribute, and
    # torch's own bases (nn.Module) define none of these methods.
    for k in cls.__mro__:
        top = k.__module__.split(".")[0]
        if top in ("torch", "oracle_stub", "builtins", "abc", "typing"):
            continue
        if top != "sglang":
            raise RuntimeError(f"base {k.__module__}.{k.__name__} cannot be read")
        if any(m in vars(k) for m in methods):
            return
        if "__getattr__" in vars(k):
            raise RuntimeError(f"{k.__name__} defines __getattr__: the call may be answered")
    raise AttributeError(f"'{cls.__name__}' object has no attribute '{methods[0]}'")


LINEAR_PREFIXES = ("model.layers.0.self_attn.qkv_proj", "model.layers.0.self_attn.o_proj",
                   "model.layers.0.mlp.gate_up_proj", "model.layers.0.mlp.down_proj")


def own_name_mapper(present):
    """From 0.5.9 the loader hands a compressed-tensors config the model class's
    `hf_to_sglang_mapper`. A class defines it in its body, which the stand-in keeps; one that
    does not (Llama, Qwen3, Qwen3-MoE) answers with a stub, and a real class would have no
    mapper at all: the config keeps its names then."""
    import oracle
    try:
        ct = oracle.import_with_stubs(
            "sglang.srt.layers.quantization.compressed_tensors.compressed_tensors",
            extra_stubs=present)
    except Exception:  # a release without it, or one the stand-in cannot import
        return
    cls = getattr(ct, "CompressedTensorsConfig", None)
    apply = getattr(cls, "apply_weight_name_mapper", None) if cls is not None else None
    if apply is None or getattr(apply, "probe_wrapped", False):
        return

    def wrapped(self, mapper):
        if not oracle.is_stub(mapper):
            apply(self, mapper)

    wrapped.probe_wrapped = True
    cls.apply_weight_name_mapper = wrapped


def stub_names(qc):
    """Whether a compressed-tensors config's layer names are the stand-in's (a mapper the model
    class defines, read without real torch): nothing it says of a layer is the release's."""
    import oracle
    return type(qc).__name__ == "CompressedTensorsConfig" and (
        oracle.is_stub(getattr(qc, "target_scheme_map", None))
        or oracle.is_stub(getattr(qc, "ignore", None)))


def quant_layers(qc, model_config, present):
    """What building the model asks of a compressed-tensors config the loader returned: the
    method of a linear layer of the first decoder layer, and of a MoE layer's experts where the
    model has them (each as the model's constructor asks for it, with the layer's prefix)."""
    import oracle
    if type(qc).__name__ != "CompressedTensorsConfig":
        raise RuntimeError(f"quant-layers reads compressed-tensors only, not {type(qc).__name__}")
    # From 0.5.9 the model class renames the config's targets and ignores; without real torch
    # a mapper it defines is the stand-in's, and so would the names be.
    if stub_names(qc):
        raise RuntimeError("the config's layer names come from the stand-in's model class")
    linear = oracle.import_with_stubs("sglang.srt.layers.linear", extra_stubs=present)
    hf = model_config.hf_text_config if hasattr(model_config, "hf_text_config") else model_config.hf_config
    experts = [getattr(hf, k, None) for k in ("num_experts", "n_routed_experts", "num_local_experts")]
    first = getattr(hf, "first_k_dense_replace", 0) or 0
    # A MoE model whose first layer is sparse has no dense MLP there: after its attention the
    # constructor asks for the experts' method.
    prefixes = LINEAR_PREFIXES[:2] if any(experts) and first == 0 else LINEAR_PREFIXES
    for prefix in prefixes:
        qc.get_quant_method(object.__new__(linear.LinearBase), prefix)
    if any(experts):
        moe = oracle.import_with_stubs("sglang.srt.layers.moe.fused_moe_triton", extra_stubs=present)
        qc.get_quant_method(object.__new__(moe.FusedMoE), f"model.layers.{first}.mlp.experts")


class StandInStop(Exception):
    """The stand-in cannot answer what the release would: the run stops short of the check."""


class WeightsReached(Exception):
    """create_weights reached its first weight: its shape checks, which come before, passed."""


def dense_linear_shapes(hf, tp, attn_tp):
    """The first decoder layer's linear layers as the model builds them under TP: (prefix, input
    size, input per GPU, output sizes per GPU, output size). The attention projections where the
    layer's attention is standard, the MLP's where its MLP is dense (no experts, or a dense first
    layer). A split that is not even is left out (the model's own divisions refuse it first)."""
    h, heads = hf.hidden_size, hf.num_attention_heads
    kv = getattr(hf, "num_key_value_heads", None) or heads
    d = getattr(hf, "head_dim", None) or h // heads
    shapes = []
    if standard_attention(hf) and heads % attn_tp == 0:
        if kv % attn_tp == 0 or attn_tp % kv == 0:
            kv_per = max(kv // attn_tp, 1)
            shapes.append(("model.layers.0.self_attn.qkv_proj", h, h,
                           [heads // attn_tp * d, kv_per * d, kv_per * d], (heads + 2 * kv) * d))
        shapes.append(("model.layers.0.self_attn.o_proj", heads * d, heads * d // attn_tp, [h], h))
    experts = any(getattr(hf, k, None) for k in ("num_experts", "n_routed_experts", "num_local_experts"))
    inter = getattr(hf, "intermediate_size", None)
    dense_mlp = not experts or (getattr(hf, "first_k_dense_replace", 0) or 0) > 0
    if dense_mlp and inter and inter % tp == 0:
        shapes.append(("model.layers.0.mlp.gate_up_proj", h, h, [inter // tp] * 2, 2 * inter))
        shapes.append(("model.layers.0.mlp.down_proj", inter, inter // tp, [h], h))
    return shapes


def standard_attention(hf):
    """The first layer's attention is multi-head (grouped) attention with a merged QKV: not MLA
    (its projections are others), and not a linear-attention layer of a hybrid."""
    if getattr(hf, "kv_lora_rank", None) or getattr(hf, "q_lora_rank", None):
        return False
    if getattr(hf, "linear_num_value_heads", None) or getattr(hf, "full_attention_interval", None):
        return False
    kinds = getattr(hf, "layer_types", None)
    return not kinds or kinds[0] in ("full_attention", "attention", "sliding_attention")


def linear_weights(qc, model_config, server_args, present, runner=False):
    """What building the first decoder layer asks of the quantisation config the loader
    returned: each linear layer's method, then its `create_weights` with the layer's per-GPU
    shape, up to the first weight it would make (the shape checks come before it); with
    `runner`, the experts' runner after their weights."""
    import oracle
    hf = model_config.hf_text_config if hasattr(model_config, "hf_text_config") else model_config.hf_config
    tp = server_args.tp_size
    dp = getattr(server_args, "dp_size", 1) if getattr(server_args, "enable_dp_attention", False) else 1
    if stub_names(qc):
        raise StandInStop("the config's layer names come from the stand-in's model class")
    linear = oracle.import_with_stubs("sglang.srt.layers.linear", extra_stubs=present)
    for prefix, size_in, per_in, per_out, size_out in dense_linear_shapes(hf, tp, tp // dp):
        layer = object.__new__(linear.LinearBase)
        for k, v in {"input_size": size_in, "output_size": size_out,
                     "input_size_per_partition": per_in, "output_size_per_partition": sum(per_out),
                     "output_partition_sizes": per_out, "params_dtype": oracle._make("torch.float16"),
                     "prefix": prefix}.items():
            object.__setattr__(layer, k, v)
        method = qc.get_quant_method(layer, prefix) if qc is not None else None
        if method is None or type(method).__name__.startswith("Unquantized"):
            continue
        stop_at_weights(layer)
        try:
            # The column and row parallel layers pass these by keyword (only the replicated
            # layer passes them by position), so a method must take them by name.
            method.create_weights(layer=layer, input_size_per_partition=per_in,
                                  output_partition_sizes=per_out, input_size=size_in,
                                  output_size=size_out, params_dtype=oracle._make("torch.float16"),
                                  weight_loader=None)
        except WeightsReached:
            pass
    experts = moe_shape(hf, server_args)
    if experts is not None and qc is not None:
        build_experts(qc, experts, present, server_args if runner else None)


def moe_shape(hf, server_args):
    """The first MoE layer's experts as EP and the MoE TP split them: (prefix, experts per GPU,
    hidden size, intermediate size per GPU, MoE TP, EP, intermediate size, top-k), or None for a
    dense model or an uneven split."""
    n = next((getattr(hf, k) for k in ("num_experts", "n_routed_experts", "num_local_experts")
              if getattr(hf, k, None)), None)
    width = getattr(hf, "moe_intermediate_size", None) or getattr(hf, "intermediate_size", None)
    if not n or not width:
        return None
    tp = server_args.tp_size
    ep = getattr(server_args, "ep_size", 1) or 1
    moe_tp = tp // ep
    if tp % ep or n % ep or width % moe_tp:
        return None
    first = getattr(hf, "first_k_dense_replace", 0) or 0
    top_k = getattr(hf, "num_experts_per_tok", None) or 1
    return (f"model.layers.{first}.mlp.experts", n // ep, hf.hidden_size, width // moe_tp, moe_tp,
            ep, width, top_k)


def expert_keywords(fused_moe, values, exprs):
    """The keywords the release's FusedMoE passes its method's `create_weights`, read from the
    release's own constructor (their names and meanings change between releases: 0.5.0rc2's
    `intermediate_size` is the per-GPU width, 0.5.5's `intermediate_size_full` and 0.5.12's
    `moe_intermediate_size` the whole): `values` by keyword name, else `exprs` by the expression
    passed. None when the call is not found (the shape then goes positionally)."""
    import ast
    import textwrap
    tree = ast.parse(textwrap.dedent(inspect.getsource(fused_moe.__init__)))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "self.quant_method.create_weights":
            named = {}
            for k in node.keywords:
                expr = ast.unparse(k.value)
                if k.arg in values:
                    named[k.arg] = values[k.arg]
                elif expr in exprs:
                    named[k.arg] = exprs[expr]
            return named
    return None


def build_experts(qc, shape, present, server_args=None):
    """The experts' method from the config, then its `create_weights` up to the first weight;
    given the arguments, then the runner (`moe_runner`)."""
    import oracle
    prefix, n, hidden, per, moe_tp, ep, width, top_k = shape
    moe = oracle.import_with_stubs("sglang.srt.layers.moe.fused_moe_triton", extra_stubs=present)
    layer = object.__new__(moe.FusedMoE)
    for k, v in {"hidden_size": hidden, "intermediate_size_per_partition": per,
                 "num_experts": n, "num_local_experts": n, "prefix": prefix,
                 "moe_tp_size": moe_tp, "moe_ep_size": ep,
                 # What FusedMoE sets up for the usual experts (gated SiLU, weights after).
                 "moe_runner_config": types.SimpleNamespace(
                     is_gated=True, activation="silu", apply_router_weight_on_input=False)}.items():
        object.__setattr__(layer, k, v)
    if server_args is not None:
        # The scheduler sets the MoE settings up before it builds the model: a method's own
        # constructor reads them (FP8's asserts what the CUTLASS runner needs).
        init_moe_config(server_args, present)
    method = qc.get_quant_method(layer, prefix)
    if method is None or type(method).__name__.startswith("Unquantized"):
        return
    stop_at_weights(layer)
    try:
        dtype = oracle._make("torch.float16")
        named = expert_keywords(moe.FusedMoE, {
            "layer": layer, "num_experts": n, "hidden_size": hidden,
            "intermediate_size_per_partition": per, "params_dtype": dtype, "weight_loader": None,
        }, {"self.intermediate_size_per_partition": per, "intermediate_size": width,
            "top_k": top_k, "with_bias": False})
        if named is None:
            method.create_weights(layer, n, hidden, per, dtype, weight_loader=None)
        else:
            method.create_weights(**named)
    except WeightsReached:
        pass
    if server_args is not None:
        moe_runner(method, layer, server_args, present)


def moe_runner(method, layer, server_args, present):
    """FusedMoE builds the experts' runner right after their weights: the method's
    `create_moe_runner`, with the MoE settings taken from the arguments as the scheduler takes
    them. Only an assertion of that function itself is its answer; whatever else it raises
    (the stand-in layer has no weights) comes after that check."""
    if not init_moe_config(server_args, present) or not hasattr(method, "create_moe_runner"):
        return  # releases before the runner (0.5.0rc2 builds none)
    try:
        method.create_moe_runner(layer, layer.moe_runner_config)
    except AssertionError as e:
        if modules(e.__traceback__)[-1].endswith(":create_moe_runner"):
            # SGLang's assertion has no text: say where it stopped.
            raise AssertionError(f"[create_moe_runner] {e}".strip()) from e
    except NotImplementedError as e:
        # The runner the method hands the named backend to has no core for it (it raises in
        # its constructor, before anything of the layer is read).
        at = modules(e.__traceback__)
        if at[-1] == "sglang.srt.layers.moe.moe_runner.runner:__init__":
            raise NotImplementedError(f"[create_moe_runner] {e}") from e
    except Exception:
        pass


def init_moe_config(server_args, present):
    """The release's MoE settings from the arguments, as the scheduler sets them; False for a
    release without them."""
    import oracle
    utils = oracle.import_with_stubs("sglang.srt.layers.moe.utils", extra_stubs=present)
    init = getattr(utils, "initialize_moe_config", None)
    if init is None:
        return False
    init(server_args) if inspect.signature(init).parameters else init()
    return True


def stop_at_weights(layer):
    """The weight constructors the quantisation methods (and their schemes) call, and the layer's
    `register_parameter`, raise WeightsReached."""
    def reached(*a, **k):
        raise WeightsReached()
    object.__setattr__(layer, "register_parameter", reached)
    for name, module in list(sys.modules.items()):
        if not name.startswith("sglang.srt.layers.quantization") or module is None:
            continue
        for attr in list(vars(module)):
            if attr.endswith("Parameter") or attr == "set_weight_attrs":
                setattr(module, attr, reached)


def dtype_instances(oracle):
    """The stand-in's dtypes (its classes) made instances of the stand-in `torch.dtype`, with
    ABCMeta's own register (the stand-in answers `register` itself): 0.5.20 asserts it of a dtype
    at import, and compressed-tensors 0.13 types its scale dtypes so, which pydantic checks."""
    import abc
    abc.ABCMeta.register(oracle._make("torch.dtype"), oracle._StubMeta)


def compressed_tensors_helpers(oracle):
    """compressed-tensors 0.13's modelling helpers import a torch-only transformers module, which
    the stand-in answers for; 0.14 and later compute constants from the float dtypes' limits at
    import (`torch.finfo`), which the stand-in gives from the IEEE and OCP formats' definitions."""
    sys.modules.setdefault("transformers.modeling_utils",
                           oracle.StubModule("transformers.modeling_utils"))
    oracle.OVERRIDES.setdefault("torch", {})["finfo"] = finfo


# (max, smallest normal, eps) of the float formats, from their definitions.
FLOAT_LIMITS = {
    "float8_e4m3fn": (448.0, 2.0**-6, 2.0**-3),
    "float8_e5m2": (57344.0, 2.0**-14, 2.0**-2),
    "float8_e8m0fnu": (2.0**127, 2.0**-127, 1.0),
    "float16": (65504.0, 2.0**-14, 2.0**-10),
    "bfloat16": (3.3895313892515355e38, 2.0**-126, 2.0**-7),
    "float32": (3.4028234663852886e38, 2.0**-126, 2.0**-23),
    "float64": (1.7976931348623157e308, 2.0**-1022, 2.0**-52),
}


def finfo(dtype=None):
    """`torch.finfo` of a stand-in dtype (named `torch.<format>`): its limits as real torch
    gives them."""
    name = getattr(dtype, "__name__", str(dtype)).rsplit(".", 1)[-1]
    big, tiny, eps = FLOAT_LIMITS.get(name, FLOAT_LIMITS["float32"])
    return types.SimpleNamespace(max=big, min=-big, tiny=tiny, smallest_normal=tiny, eps=eps,
                                 bits=8 if name.startswith("float8") else 16, dtype=dtype)


def alias_dtypes(oracle):
    """torch's dtype aliases as the same stub (`torch.half is torch.float16`), so a release's
    check of a dtype against a list naming either spelling answers as with real torch."""
    torch = oracle.OVERRIDES.setdefault("torch", {})
    for alias, name in (("half", "float16"), ("float", "float32"), ("double", "float64")):
        torch.setdefault(alias, oracle._make(f"torch.{name}"))


def publish_global_dict(server_args, present):
    """Older releases' model runner copies the arguments other modules read into
    `global_server_args_dict` when it is built."""
    import oracle
    try:
        sb = oracle.import_with_stubs("sglang.srt.managers.schedule_batch", extra_stubs=present)
    except Exception:  # a release without it: nothing to publish
        return
    keys = getattr(sb, "GLOBAL_SERVER_ARGS_KEYS", None) or []
    sb.global_server_args_dict.update({k: getattr(server_args, k) for k in keys if hasattr(server_args, k)})


def modules(tb):
    """`module:function` of a traceback's frames, outermost first."""
    return [f"{frame.f_globals.get('__name__', '?')}:{frame.f_code.co_name}"
            for frame, _ in traceback.walk_tb(tb)]


TARGET = {"is_draft_worker": False, "draft_attention_backend": None}


def stand_in(cls, server_args, attrs):
    """`self` for the probed function: the class's own methods, none of its constructor."""
    runner = object.__new__(cls) if cls is not None else types.SimpleNamespace()
    runner.server_args = server_args
    # What the real constructor sets for a target (not draft) runner, before anything else.
    for name, value in {**TARGET, **attrs}.items():
        setattr(runner, name, value)
    return runner


if __name__ == "__main__":
    main()
