#!/usr/bin/env python3
"""Build data/envs/history.jsonl: the environment-variable registry of every SGLang release.

    scripts/gen-envs.py        # every release in sglang_releases.RELEASES (unpacked wheels)

Read statically from each unpacked release (nothing imported): the typed registry (`class Envs`
in sglang/srt/environ.py: `NAME = EnvBool(default)`, EnvInt, EnvStr, EnvFloat, EnvJSON, EnvTuple,
Env*WithAlias and its old name), the deprecation tables of environ.py (`_print_deprecated_env(new,
old)` calls, `_warn_deprecated_env_to_cli_flag(old, ...)`, the `_DEPRECATED_ENVS` and
`_deprecated_ms_to_s` dicts), whether it rewrites SGL_* to SGLANG_* at import, and the SGLANG_/SGL_
names read (os.environ / os.getenv / get_*_env_var / C++ getenv) or written anywhere else in the
package. Kept: names, types, defaults, aliases, replacements. Dropped: comments and notes.

history.jsonl, one JSON object per line:
  line 0: {"format", "releases": [every version, release order], "items": count}
  lines 1..R: per release {"version", "typed_registry", "sgl_prefix_rewrite", "items": [start,
      count, ...]}: its items as runs of item indices (item i is on line 1 + R + i);
  then one line per distinct item, in the order (kind, name): {"in": "<releases>", KIND: value}
  with KIND "var" ({"name", "type", "default", "alias"}), "deprecated" ({"name",
  "replacement"}), "raw" (a name read outside the registry) or "write" (a name SGLang sets).
"""
import ast
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sglang_releases as rel  # noqa: E402
from sglang_flags import env_deprecated, env_registry, rewrites_sgl_prefix  # noqa: E402

ROOT = rel.ROOT
PREFIXES = ("SGLANG_", "SGL_")
NAME = r"(?:SGLANG_|SGL_)[A-Z0-9_]+"
READS = [re.compile(p % NAME) for p in (
    r"os\.environ\.get\(\s*[\"'](%s)[\"']",
    r"os\.environ\[\s*[\"'](%s)[\"']\s*\](?!\s*=[^=])",
    r"os\.getenv\(\s*[\"'](%s)[\"']",
    r"get_(?:bool|int|float|str)_env_var\(\s*[\"'](%s)[\"']",
    r"[\"'](%s)[\"']\s+in\s+os\.environ",
    r"\bgetenv\(\s*\"(%s)\"",
)]
WRITES = [re.compile(p % NAME) for p in (
    r"os\.environ\[\s*[\"'](%s)[\"']\s*\]\s*=[^=]",
    r"os\.environ\.setdefault\(\s*[\"'](%s)[\"']",
    r"update_environment_variables\(\s*\{\s*[\"'](%s)[\"']",
)]
def scan(root):
    reads, writes = set(), set()
    for f in (root / "sglang").rglob("*"):
        if f.suffix not in (".py", ".cu", ".cuh", ".cc", ".cpp", ".h"):
            continue
        rel_path = str(f.relative_to(root))
        if "/test/" in rel_path or "/tests/" in rel_path or "/benchmark" in rel_path:
            continue
        text = f.read_text(errors="replace")
        if "SGL" not in text:
            continue
        for pat in READS:
            reads.update(pat.findall(text))
        for pat in WRITES:
            writes.update(pat.findall(text))
    return reads, writes


def registry_of(version):
    cache = rel.source(version) / "sglang-launch-envs.json"
    if cache.exists() and cache.stat().st_mtime > Path(__file__).stat().st_mtime:
        return json.loads(cache.read_text())
    root = rel.source(version)
    environ = root / "sglang" / "srt" / "environ.py"
    text = environ.read_text() if environ.exists() else ""
    tree = ast.parse(text)
    reg = env_registry(tree)
    reads, writes = scan(root)
    names = {r["name"] for r in reg}
    out = {
        "version": version,
        "typed_registry": bool(reg),
        "sgl_prefix_rewrite": rewrites_sgl_prefix(text),
        "registry": reg,
        "deprecated": env_deprecated(tree),
        "raw_reads": sorted(n for n in reads if n not in names),
        "writes": sorted(writes),
    }
    cache.write_text(json.dumps(out) + "\n")
    return out


ITEM_KINDS = [("var", "registry", lambda x: x["name"]), ("deprecated", "deprecated", lambda x: x["name"]),
              ("raw", "raw_reads", lambda x: x), ("write", "writes", lambda x: x)]


def history(regs):
    versions = [r["version"] for r in regs]
    items = {}  # (kind order, name, canonical json) -> releases
    for i, r in enumerate(regs):
        for order, (kind, field, name) in enumerate(ITEM_KINDS):
            for x in r[field]:
                items.setdefault((order, name(x), json.dumps(x, sort_keys=True)), (kind, x, []))[2].append(i)
    keys = sorted(items)
    index = {k: n for n, k in enumerate(keys)}
    dump = lambda o: json.dumps(o, ensure_ascii=False, separators=(",", ":"))
    lines = [dump({"format": "sglang-launch env history 1", "releases": versions, "items": len(keys)})]
    mine = [[] for _ in regs]
    for k in keys:
        for i in items[k][2]:
            mine[i].append(index[k])
    for i, r in enumerate(regs):
        lines.append(dump({"version": r["version"], "typed_registry": r["typed_registry"],
                           "sgl_prefix_rewrite": r["sgl_prefix_rewrite"], "items": rel.runs(mine[i])}))
    for k in keys:
        kind, x, present = items[k]
        lines.append(dump({"in": rel.spans(present, versions), kind: x}))
    return "\n".join(lines) + "\n"


def main():
    regs = []
    for v in rel.RELEASES:
        regs.append(registry_of(v))
        r = regs[-1]
        print(f"{v}: {len(r['registry'])} typed, {len(r['raw_reads'])} raw reads, {len(r['deprecated'])} deprecated",
              file=sys.stderr)
    text = history(regs)
    (ROOT / "data" / "envs" / "history.jsonl").write_text(text)
    print(f"data/envs/history.jsonl: {len(regs)} releases, {len(text.encode())} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
