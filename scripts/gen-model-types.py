#!/usr/bin/env python3
"""Build data/model-types.json: which config.json `model_type`s SGLang's configuration loading
can read, per release, and per transformers version.

    scripts/gen-model-types.py            # needs PyPI; unpacked releases as in sglang_releases.py

SGLang reads a checkpoint's config.json with transformers' AutoConfig (after registering its own
configuration classes). AutoConfig resolves `model_type` through its mapping; a type it does not
map stops start-up ("… has model type `X` but Transformers does not recognize this
architecture"), unless config.json's `auto_map` names an `AutoConfig` and the code is trusted.

  * "transformers": every transformers version on PyPI from 4.40.0 on, in release order (the
    keys of CONFIG_MAPPING_NAMES in transformers/models/auto/configuration_auto.py, read from
    each wheel through HTTP range requests; nothing installed or imported).
  * "pins": the transformers version each SGLang release pins exactly (`transformers==X` in its
    wheel's METADATA, any extra); a release without an exact pin is absent.
  * per type: "t", the transformers versions whose mapping has it, and "s", the SGLang releases
    whose own code may make it readable, as inclusive [first, last] ranges in release order.
    "s" is read statically and errs towards "readable": the `model_type` of every class under
    sglang/srt/configs/ and SGLang's hf_transformers utilities, every string literal registered
    with `AutoConfig.register` anywhere under sglang/srt/, and every string those utilities
    compare against (e.g. a type whose AutoConfig error SGLang catches and rewrites), plus the two
    classes 0.4.0 - 0.4.1.post4 import from vLLM (VLLM_CONFIGS).

Facts only: names and version ranges. One type per line (the launcher decodes only the line it
looks up).
"""
import ast
import io
import json
import re
import sys
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sglang_releases as rel  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "data" / "model-types.json"
FIRST_TRANSFORMERS = (4, 40)
CONFIG_AUTO = "transformers/models/auto/configuration_auto.py"
AUTO_MAPPINGS = "transformers/models/auto/auto_mappings.py"


class HttpFile(io.RawIOBase):
    """A seekable read-only view of a remote file through HTTP range requests (blocks cached),
    so zipfile reads one member of a wheel without downloading it."""

    BLOCK = 1 << 18

    def __init__(self, url):
        with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=60) as r:
            self.size = int(r.headers["Content-Length"])
        self.url, self.pos, self.cache = url, 0, {}

    def readable(self):
        return True

    def seekable(self):
        return True

    def tell(self):
        return self.pos

    def seek(self, off, whence=0):
        self.pos = {0: off, 1: self.pos + off, 2: self.size + off}[whence]
        return self.pos

    def _block(self, i):
        if i not in self.cache:
            lo = i * self.BLOCK
            hi = min(self.size, lo + self.BLOCK) - 1
            req = urllib.request.Request(self.url, headers={"Range": f"bytes={lo}-{hi}"})
            with urllib.request.urlopen(req, timeout=120) as r:
                self.cache[i] = r.read()
        return self.cache[i]

    def read(self, n=-1):
        n = self.size - self.pos if n is None or n < 0 else n
        n = max(0, min(n, self.size - self.pos))
        out = bytearray()
        while n > 0:
            i, o = divmod(self.pos, self.BLOCK)
            b = self._block(i)[o:o + n]
            out += b
            self.pos += len(b)
            n -= len(b)
        return bytes(out)

    def readinto(self, buf):
        d = self.read(len(buf))
        buf[:len(d)] = d
        return len(d)


def pypi(project):
    url = f"https://pypi.org/pypi/{project}/json"
    with urllib.request.urlopen(url, timeout=60) as r:
        return url, json.load(r)


def wheel_member(base, files, pick):
    """`pick(zipfile)` on the project's first wheel among `files` (a PyPI JSON file list)."""
    wheels = [f for f in files if f["filename"].endswith(".whl")]
    # A pure wheel first: every platform's wheel has the same Python files.
    wheels.sort(key=lambda f: "none-any" not in f["filename"])
    with zipfile.ZipFile(HttpFile(urllib.parse.urljoin(base, wheels[0]["url"]))) as z:
        return pick(z)


def vkey(v):
    """PEP 440 order for the versions transformers publishes (N.N.N, rcN, .devN, .postN)."""
    m = re.match(r"^(\d+(?:\.\d+)*)(?:\.?(a|b|rc)(\d+))?(?:\.post(\d+))?(?:\.dev(\d+))?$", v)
    if not m:
        return None
    nums = tuple(int(x) for x in m.group(1).split("."))
    nums = nums + (0,) * (4 - len(nums))
    pre = ({"a": 0, "b": 1, "rc": 2}[m.group(2)], int(m.group(3))) if m.group(2) else (3, 0)
    dev = int(m.group(5)) if m.group(5) else 1 << 30
    if m.group(5) and not m.group(2) and not m.group(4):
        pre = (-1, 0)
    return nums, pre, int(m.group(4) or -1), dev


def mapping_names(source):
    """The keys CONFIG_MAPPING_NAMES gets in one module: its assignments (an OrderedDict of pairs,
    or a dict literal) and its `.update({...})` calls."""
    keys = set()
    for node in ast.walk(ast.parse(source)):
        value = None
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "CONFIG_MAPPING_NAMES" for t in node.targets):
            value = node.value
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "update"
              and isinstance(node.func.value, ast.Name) and node.func.value.id == "CONFIG_MAPPING_NAMES"):
            value = node
        for sub in ast.walk(value) if value else ():
            if isinstance(sub, ast.Tuple) and len(sub.elts) == 2 and isinstance(sub.elts[0], ast.Constant):
                keys.add(sub.elts[0].value)
            elif isinstance(sub, ast.Dict):
                keys.update(k.value for k in sub.keys if isinstance(k, ast.Constant))
    return {k for k in keys if isinstance(k, str)}


def transformers_types():
    base, meta = pypi("transformers")
    versions = sorted((v for v in meta["releases"] if vkey(v) and vkey(v)[0][:2] >= FIRST_TRANSFORMERS
                       and any(f["filename"].endswith(".whl") for f in meta["releases"][v])), key=vkey)
    out = {}
    for v in versions:
        # From 5.6.0 the mapping itself lives in auto_mappings.py; configuration_auto.py adds to it.
        out[v] = wheel_member(base, meta["releases"][v], lambda z: set().union(
            *(mapping_names(z.read(m).decode()) for m in (CONFIG_AUTO, AUTO_MAPPINGS) if m in z.namelist())))
        if len(out[v]) < 200:
            raise SystemExit(f"transformers {v}: only {len(out[v])} model types read")
        print(f"transformers {v}: {len(out[v])} model types", file=sys.stderr)
    return versions, out


def pin(version, base, meta):

    def metadata(z):
        name = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        return z.read(name).decode()

    text = wheel_member(base, meta["releases"][version], metadata)
    pins = set(re.findall(r"^Requires-Dist: transformers\s*\(?==\s*([0-9][^;,\s)]*)", text, re.M))
    return pins.pop() if len(pins) == 1 else None


UTILS = re.compile(r"hf_transformers")
# 0.4.0 - 0.4.1.post4 register two configuration classes imported from vLLM (their model types, as
# vLLM's classes set them).
VLLM_CONFIGS = {"ChatGLMConfig": "chatglm", "DbrxConfig": "dbrx"}
TYPE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")


def sglang_types(root):
    """Model types a release's own configuration code may make readable (see the docstring)."""
    srt = root / "sglang" / "srt"
    found = set()
    for path in srt.rglob("*.py"):
        rel_path = path.relative_to(srt).as_posix()
        text = path.read_text(errors="replace")
        configs = rel_path.startswith("configs/") or UTILS.search(rel_path)
        if not configs and ".register(" not in text:
            continue
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if configs and isinstance(node, ast.ClassDef):
                for st in node.body:
                    if (isinstance(st, (ast.Assign, ast.AnnAssign)) and isinstance(st.value, ast.Constant)
                            and isinstance(st.value.value, str)
                            and any(isinstance(t, ast.Name) and t.id == "model_type"
                                    for t in (st.targets if isinstance(st, ast.Assign) else [st.target]))):
                        found.add(st.value.value)
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                  and node.func.attr == "register" and node.args
                  and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                found.add(node.args[0].value)
            elif (UTILS.search(rel_path) and isinstance(node, ast.ImportFrom)
                  and (node.module or "").startswith("vllm.transformers_utils.configs")):
                found.update(VLLM_CONFIGS[a.name] for a in node.names if a.name in VLLM_CONFIGS)
            elif UTILS.search(rel_path) and isinstance(node, ast.Compare):
                for sub in [node.left, *node.comparators]:
                    for c in ast.walk(sub):
                        if isinstance(c, ast.Constant) and isinstance(c.value, str):
                            found.add(c.value)
    return {t for t in found if TYPE.match(t)}


def ranges(members, order):
    out, start, prev = [], None, None
    for v in order:
        if v in members:
            start = start or v
            prev = v
        elif start:
            out.append([start, prev])
            start = None
    if start:
        out.append([start, prev])
    return out


def main():
    tversions, ttypes = transformers_types()
    stypes, pins = {}, {}
    base, meta = pypi("sglang")
    for v in rel.RELEASES:
        stypes[v] = sglang_types(rel.source(v))
        p = pin(v, base, meta)
        if p:
            pins[v] = p
        print(f"sglang {v}: {len(stypes[v])} own types, pin {p}", file=sys.stderr)
    every = set().union(*ttypes.values(), *stypes.values())
    lines = [f'{{"format":1,"transformers":{json.dumps(tversions)},', f'"pins":{json.dumps(pins)},', '"types":{']
    entries = []
    for t in sorted(every):
        e = {}
        tr = ranges({v for v in tversions if t in ttypes[v]}, tversions)
        sr = ranges({v for v in rel.RELEASES if t in stypes[v]}, rel.RELEASES)
        if tr:
            e["t"] = tr
        if sr:
            e["s"] = sr
        entries.append(f"{json.dumps(t)}:{json.dumps(e, separators=(',', ':'))}")
    lines.append(",\n".join(entries))
    lines.append("}}")
    OUT.write_text("\n".join(lines) + "\n")
    print(f"{OUT}: {len(every)} model types, {len(tversions)} transformers versions, {len(pins)} pins",
          file=sys.stderr)


if __name__ == "__main__":
    main()
