#!/usr/bin/env python3
"""Writes the seed corpora under fuzz/seeds/ from the repository's own fixtures.

Run from the repository root: python3 fuzz/make_seeds.py [SHARED_DIR]. SHARED_DIR (optional)
adds topologies/ and models/*/config.json from the team's reference folder. Each seed is named
by its content's hash, so re-running adds nothing twice.
"""

import hashlib
import json
import pathlib
import struct
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SEEDS = ROOT / "fuzz" / "seeds"
SMALL = 16 * 1024  # bytes: seeds are starting points, not a copy of the fixtures


def put(target, data):
    if isinstance(data, str):
        data = data.encode()
    if len(data) > SMALL:
        return
    d = SEEDS / target
    d.mkdir(parents=True, exist_ok=True)
    (d / hashlib.sha1(data).hexdigest()[:16]).write_bytes(data)


def files(pattern, *roots):
    for root in roots:
        yield from sorted(p for p in root.glob(pattern) if p.is_file())


def topology(shared):
    roots = [ROOT / "tests/fixtures/topologies", ROOT / "examples/topologies"]
    for p in files("*.json", *roots, *([shared / "topologies"] if shared else [])):
        put("topology", p.read_bytes())
    # The model target plans on this node; keep its name stable for include_str!.
    d = SEEDS / "topology"
    (d / "8x-h200-nvlink.json").write_bytes(
        (ROOT / "tests/fixtures/topologies/8x-h200-nvlink.json").read_bytes()
    )


# Arguments that steer the memory plan: parallelism, context, KV dtype, quantisation, overrides.
MODEL_ARGS = [
    [],
    ["--tp", "8"],
    ["--tp", "4", "--context-length", "131072", "--kv-cache-dtype", "fp8_e4m3"],
    ["--tp", "8", "--dp", "2", "--enable-dp-attention"],
    ["--tp", "2", "--pp", "2", "--mem-fraction-static", "0.9"],
    ["--quantization", "fp8", "--cuda-graph-max-bs", "512"],
    ["--json-model-override-args", '{"num_hidden_layers": 4, "max_position_embeddings": 1048576}'],
    ["--tp", "8", "--ep", "8", "--chunked-prefill-size", "16384", "--max-running-requests", "1024"],
]


def model(shared):
    roots = [ROOT / "tests/fixtures/models", ROOT / "examples/models"]
    if shared:
        roots.append(shared / "models")
    configs = [p.read_bytes() for p in files("**/config.json", *roots)]
    for i, c in enumerate(configs):
        args = MODEL_ARGS[i % len(MODEL_ARGS)]
        put("model_config", c)
        if args:
            put("model_config", c + b"\0" + b"\0".join(a.encode() for a in args))


def yaml_config():
    for p in files("*.yaml", ROOT / "tests/conformance/configs"):
        put("yaml_config", p.read_bytes())
    for line in (ROOT / "tests/conformance/yaml-scalars.jsonl").read_text().splitlines()[::25]:
        put("yaml_config", json.loads(line)["doc"])


# How the launcher is invoked around the SGLang arguments.
PREFIXES = [
    [],
    ["check", "--json", "--"],
    ["plan", "--print-args", "--topology", "t.json"],
    ["run", "--dry-run", "--sglang-version", "0.5.5", "--"],
    ["upgrade", "--to", "0.5.23", "--"],
]


def argv():
    for path in files("[0-9]*.jsonl", ROOT / "tests/conformance"):
        version = path.stem
        for i, line in enumerate(path.read_text().splitlines()[1::40]):
            case = json.loads(line)
            tokens = [version, "sglang-launch", *PREFIXES[i % len(PREFIXES)], *case["argv"]]
            put("argv", "\0".join(tokens))
    # `--config NAME`: the harness reads NAME as the file's YAML text.
    for p in files("basic.yaml", ROOT / "tests/conformance/configs"):
        tokens = ["0.5.23", "sglang-launch", "--config", p.read_text(), "--tp", "2"]
        put("argv", "\0".join(tokens))


def safetensors_file(header, data_len=0):
    h = json.dumps(header).encode()
    return struct.pack("<Q", len(h)) + h + b"\0" * data_len


def safetensors():
    t = lambda a, b: {"dtype": "BF16", "shape": [(b - a) // 2], "data_offsets": [a, b]}
    put("safetensors_header", safetensors_file({"__metadata__": {"format": "pt"}, "a": t(0, 8), "b": t(8, 16)}, 16))
    put("safetensors_header", safetensors_file({"w": t(0, 4096)}))
    put("safetensors_header", safetensors_file({"w": {"dtype": "F8_E4M3", "shape": [2], "data_offsets": [8, 4]}}))
    put("safetensors_header", safetensors_file({"w": {"dtype": "BF16", "shape": [1]}}))
    put("safetensors_header", safetensors_file([1, 2, 3]))
    put("safetensors_header", struct.pack("<Q", 2) + b"{}")
    put("safetensors_header", struct.pack("<Q", 2**64 - 1) + b"{}")


def fit_search():
    # pick: bits 0-1 the node, bits 2-4 which of context / requests / graph batch are set.
    cases = [
        (0b00000, []),
        (0b00101, [131072]),
        (0b01110, [32768, 64, 0, 4096]),
        (0b11111, [10**12, 10**6, 4096, 1]),
        (0b11100, [2**64 - 1, 2**64 - 1, 2**64 - 1, 2**64 - 1]),
    ]
    for pick, numbers in cases:
        put("fit_search", bytes([pick]) + b"".join(struct.pack("<Q", n) for n in numbers))


def hostlist():
    for text in ["gpu[01-08]", "a,b,c", "rack[1-2]-gpu[07,09]", "n[0-999]", "gpu[0000001-0000003],login1"]:
        put("hostlist", text)


def main():
    shared = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else None
    fit_search()
    hostlist()
    topology(shared)
    model(shared)
    yaml_config()
    argv()
    safetensors()


if __name__ == "__main__":
    main()
