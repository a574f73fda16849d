#!/usr/bin/env python3
"""Facts-only SGLang environment-variable registries: data/envs/<version>.json.

Input: dumps written by /work/shared/oracle/extract_envs.py (one per SGLang release), e.g.
/work/shared/sglang/sglang-envs-0.5.23.json. Kept: names, types, defaults, deprecated aliases, the
names read outside the typed registry, and the names SGLang writes. Dropped: comments and source
lines (SGLang prose stays out of the repo).

Usage: gen-envs.py VERSION DUMP.json [--sgl-prefix-rewrite] [--deprecated NAME[=REPLACEMENT] ...]
  --sgl-prefix-rewrite: this release rewrites SGL_* to SGLANG_* at import (environ.py, 0.5.3+).
  --deprecated: entries of environ.py's deprecation table (read by hand; no prose copied).
"""

import argparse
import json
import sys
from pathlib import Path

PREFIXES = ("SGLANG_", "SGL_")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("version")
    p.add_argument("dump")
    p.add_argument("--sgl-prefix-rewrite", action="store_true")
    p.add_argument("--deprecated", action="append", default=[])
    p.add_argument("-o", "--out-dir", default=str(Path(__file__).resolve().parent.parent / "data" / "envs"))
    a = p.parse_args()
    d = json.loads(Path(a.dump).read_text())
    kinds = {
        "EnvBool": "bool", "EnvBoolWithAlias": "bool", "EnvInt": "int", "EnvIntWithAlias": "int",
        "EnvStr": "str", "EnvStrWithAlias": "str", "EnvFloat": "float", "EnvJSON": "json", "EnvTuple": "tuple",
    }
    registry = []
    for e in d["registry"]:
        extra = e.get("extra") or {}
        alias = extra.get("deprecated_name")
        registry.append({
            "name": e["name"],
            "type": kinds.get(e["kind"], "str"),
            "default": e["default"] if isinstance(e["default"], (bool, int, float, str, type(None))) else str(e["default"]),
            "alias": alias.strip("'\"") if alias else None,
        })
    registry.sort(key=lambda r: r["name"])
    deprecated = []
    for spec in a.deprecated:
        name, _, repl = spec.partition("=")
        deprecated.append({"name": name, "replacement": repl or None})
    out = {
        "version": a.version,
        "typed_registry": bool(registry),
        "sgl_prefix_rewrite": a.sgl_prefix_rewrite,
        "registry": registry,
        "deprecated": sorted(deprecated, key=lambda r: r["name"]),
        "raw_reads": sorted(k for k in d["raw_reads_not_in_registry"] if k.startswith(PREFIXES)),
        "writes": sorted(k for k in d["writes"] if k.startswith(PREFIXES)),
    }
    path = Path(a.out_dir) / f"{a.version}.json"
    path.write_text(json.dumps(out, indent=0, separators=(",", ":")) + "\n")
    print(f"{path}: {len(registry)} typed, {len(out['raw_reads'])} raw reads", file=sys.stderr)


if __name__ == "__main__":
    main()
