#!/usr/bin/env python3
"""Build data/vision-attention.json: per model architecture, the releases whose model code builds
SGLang's shared vision attention (`VisionAttention`), the layer that takes `--mm-attention-backend`
and refuses FA3 on Blackwell.

    scripts/gen-vision-towers.py        # every release in sglang_releases.RELEASES (unpacked wheels)

Read statically from each unpacked release (nothing imported): a module of sglang/srt/models uses
it when it names `VisionAttention`, or imports from another models module that does (a tower
shared by several models, e.g. SigLIP); its architectures are the names its `EntryClass` lists.
Facts only: architecture names and release ranges.

Output: {"format", "releases": [first, last], "architectures": {ARCH: [[first, last], ...]}},
each range inclusive, in release order.
"""
import ast
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sglang_releases as rel  # noqa: E402

OUT = rel.ROOT / "data" / "vision-attention.json"


def entry_classes(tree):
    """The names `EntryClass = X` or `EntryClass = [X, Y]` binds."""
    out = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "EntryClass" for t in node.targets):
            values = node.value.elts if isinstance(node.value, (ast.List, ast.Tuple)) else [node.value]
            out += [v.id for v in values if isinstance(v, ast.Name)]
    return out


def model_imports(tree):
    """The sglang.srt.models modules this module imports from."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("sglang.srt.models."):
            out.add(node.module.rsplit(".", 1)[1])
    return out


def users(version):
    """Architectures whose model module builds VisionAttention, directly or through another."""
    models = rel.source(version) / "sglang" / "srt" / "models"
    direct, imports, entries = set(), {}, {}
    for f in sorted(models.glob("*.py")):
        text = f.read_text(errors="replace")
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        name = f.stem
        if "VisionAttention" in {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {
                a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}:
            direct.add(name)
        imports[name] = model_imports(tree)
        entries[name] = entry_classes(tree)
    using = set(direct)
    while True:
        more = {m for m, deps in imports.items() if m not in using and deps & using}
        if not more:
            break
        using |= more
    return sorted({a for m in using for a in entries.get(m, [])})


def main():
    per_arch = {}
    for i, v in enumerate(rel.RELEASES):
        for arch in users(v):
            per_arch.setdefault(arch, []).append(i)
    ranges = {}
    for arch, idx in sorted(per_arch.items()):
        runs = rel.runs(idx)  # [start, count, start, count, ...]
        ranges[arch] = [[rel.RELEASES[a], rel.RELEASES[a + n - 1]] for a, n in zip(runs[::2], runs[1::2])]
    data = {"format": "sglang-launch vision attention 1",
            "releases": [rel.RELEASES[0], rel.RELEASES[-1]], "architectures": ranges}
    OUT.write_text(json.dumps(data, indent=1) + "\n")
    print(f"{OUT.relative_to(rel.ROOT)}: {len(ranges)} architectures", file=sys.stderr)


if __name__ == "__main__":
    main()
