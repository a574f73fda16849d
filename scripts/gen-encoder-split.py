#!/usr/bin/env python3
"""Build data/encoder-split.json: per model architecture, the releases whose encoder/language
split (`--encoder-only`, `--language-only`) takes it.

    scripts/gen-encoder-split.py        # every release from 0.5.7 on (unpacked wheels, as
                                        # scripts/sglang_releases.py finds them)

Read statically from each unpacked release (nothing imported): the list of architecture names a
release compares the served model's first architecture against (`model_arch not in [...]`) in
its encoder-disaggregation check (`_handle_encoder_disaggregation`, later
`handle_encoder_disaggregation` in arg_groups/). "checked_from" is the first release from which
every release has that check; a release without it takes any architecture.

Facts only: names and release ranges. Output, one architecture per line: {"format", "releases":
[first, last], "checked_from", "architectures": {NAME: [[first, last], ...]}}, each range
inclusive, in release order.
"""
import ast
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sglang_releases as rel  # noqa: E402

OUT = rel.ROOT / "data" / "encoder-split.json"
FIRST = "0.5.7"  # --encoder-only and --language-only arrive here


def split_list(src):
    """The architectures the release's encoder split takes, or None when it has no such check."""
    files = [src / "sglang" / "srt" / "server_args.py",
             *sorted((src / "sglang" / "srt" / "arg_groups").glob("*.py"))]
    for f in files:
        if not f.is_file():
            continue
        tree = ast.parse(f.read_text(encoding="utf-8-sig", errors="replace"))
        for fn in ast.walk(tree):
            if isinstance(fn, ast.FunctionDef) and "encoder_disaggregation" in fn.name:
                for node in ast.walk(fn):
                    names = compared_names(node)
                    if names is not None:
                        return names
    return None


def compared_names(node):
    """`model_arch not in [ "A", "B", ... ]`: the names, else None."""
    if not (isinstance(node, ast.Compare) and isinstance(node.left, ast.Name)
            and node.left.id == "model_arch" and any(isinstance(o, ast.NotIn) for o in node.ops)):
        return None
    for c in node.comparators:
        if isinstance(c, (ast.List, ast.Tuple, ast.Set)) and all(
                isinstance(e, ast.Constant) and isinstance(e.value, str) for e in c.elts):
            return sorted(e.value for e in c.elts)
    return None


def ranges(indices):
    out = []
    for i in indices:
        if out and out[-1][1] == i - 1:
            out[-1][1] = i
        else:
            out.append([i, i])
    return [[rel.RELEASES[a], rel.RELEASES[b]] for a, b in out]


def main():
    start = rel.RELEASES.index(FIRST)
    per_arch, checked = {}, []
    for i in range(start, len(rel.RELEASES)):
        names = split_list(rel.source(rel.RELEASES[i]))
        checked.append(names is not None)
        for n in names or []:
            per_arch.setdefault(n, []).append(i)
        print(f"{rel.RELEASES[i]}: {'no check' if names is None else len(names)}", file=sys.stderr)
    # The first release from which every later one checks.
    first = next(k for k in range(len(checked)) if all(checked[k:]))
    head = {"format": "sglang-launch encoder split architectures 1",
            "releases": [FIRST, rel.RELEASES[-1]], "checked_from": rel.RELEASES[start + first]}
    body = {n: ranges(ix) for n, ix in sorted(per_arch.items())}
    lines = [json.dumps(n) + ":" + json.dumps(r, separators=(",", ":")) for n, r in body.items()]
    OUT.write_text(json.dumps(head)[:-1] + ',\n"architectures":{\n' + ",\n".join(lines) + "\n}}\n")
    json.loads(OUT.read_text())
    print(f"{OUT.relative_to(rel.ROOT)}: {len(body)} architectures, checked from "
          f"{head['checked_from']}", file=sys.stderr)


if __name__ == "__main__":
    main()
