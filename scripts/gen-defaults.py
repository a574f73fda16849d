#!/usr/bin/env python3
"""Record SGLang's own start-up defaults (memory fraction, chunked prefill, decode CUDA-graph
sizes, max running requests, prefill graph, page size) per release, by running each release's
real resolution code through the defaults oracle (shared/oracle/defaults_oracle.py), and write
the golden tables that tests/it/memory.rs replays against src/resolve/defaults.rs.

    scripts/gen-defaults.py run --grid probe --all          # every release 0.4.0 .. newest
    scripts/gen-defaults.py run --grid full 0.5.2 0.5.3     # the full grid for some releases
    scripts/gen-defaults.py boundaries --grid probe         # releases whose results differ
    scripts/gen-defaults.py table --grid probe --all > tests/fixtures/memory/sglang-defaults-probe.tsv
    scripts/gen-defaults.py table --grid full V... > tests/fixtures/memory/sglang-defaults.tsv
    scripts/gen-defaults.py table --grid sweep --merge tests/fixtures/memory/sglang-defaults-sweep.tsv V
        # a committed table with V's fresh results added (or replacing V's rows), no other results needed

Grids: `sweep` (6 cases × 3 GPUs, for every release), `probe` (18 cases × 9 GPUs, for the
releases on both sides of every boundary) and `full` (the oracle's 558-case grid of
6 GPUs × tp 1/2/4/8 × dense/MoE/MLA × variations, plus the probe cases on the 3 GPUs it lacks).
Options a release does not have are replaced by its older spelling (`--cuda-graph-max-bs` for
`--cuda-graph-max-bs-decode`, `--enable-deepep-moe` for `--moe-a2a-backend deepep`) or the case
is left out for that release; cases SGLang rejects are counted, not recorded.

Setup is automatic (PyPI needed): one venv per `transformers` pin under WORK/venvs (the oracle
loads model configs with real transformers at the version the release pins; releases before
0.4.3.post3 pin none and get 4.48.3, the first pinned one), SGLang itself installed with
--no-deps from its wheel (WORK/wheels), swapped per release. About 300 MB per venv, 21 pins.
Two environment fixes the shared oracle lacks: the parser schema is read in a venv of its own
(real transformers/pydantic break oracle.py's stubbing), and transformers 5.x gets a start-up
shim (scripts/defaults_shim/) so SGLang 0.5.14 – 0.5.19 import without torch.

Tables are facts only: results per case, deduplicated across releases. Each row holds the
releases it is true for as ranges over the `# releases:` header line (every release the grid
was run for, in release order), e.g. `0.4.7.post1-0.5.2,0.5.5`, and its extra arguments by an
id the `# args` header lines spell out.

Environment: ORACLE_DIR (default ../shared/oracle next to the repository, else
/work/shared/oracle), GEN_DEFAULTS_WORK (default /tmp/sglang-defaults).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = Path(os.environ.get("GEN_DEFAULTS_WORK", "/tmp/sglang-defaults"))
OLDEST = "0.4.0"
# Releases before 0.4.3.post3 pin no transformers (they pull it through vllm); this is the
# first pin, and nothing the oracle reads differs for those releases.
FALLBACK_TRANSFORMERS = "4.48.3"

MODELS = {
    "dense": "@models/Llama-3.1-8B-Instruct",
    "moe": "@models/Qwen3-30B-A3B",
    "mla": "@models/DeepSeek-V3",
}
DRAFTS = {
    "dense": ("EAGLE", "@models/sglang-EAGLE-LLaMA3-Instruct-8B"),
    "moe": ("EAGLE3", "@models/Qwen3-30B-A3B-EAGLE3"),
    "mla": ("EAGLE", "@models/DeepSeek-V3"),
}
FULL_MEMS = [24564, 40960, 81559, 97887, 143771, 183359]
# GPUs at the other capacity thresholds of older releases: < 20 GiB, ≤ 81920 MiB exactly,
# 90–100 GiB.
EXTRA_MEMS = [15360, 81920, 97871]
# The sweep: a few cases on 3 GPUs, cheap enough to run for every release.
SWEEP_MEMS = [24564, 81559, 183359]
SWEEP = [
    ("dense", 1, "plain"), ("dense", 8, "plain"), ("dense", 1, "speculative"),
    ("moe", 4, "deepep"), ("mla", 8, "dp-attention"), ("mla", 8, "speculative"),
]
PROBE = [
    ("dense", 1, "plain"), ("dense", 2, "plain"), ("dense", 4, "plain"), ("dense", 8, "plain"),
    ("dense", 1, "disable-cuda-graph"), ("dense", 1, "cuda-graph-max-bs-128"),
    ("dense", 1, "chunked-prefill-4096"), ("dense", 1, "max-running-requests-64"),
    ("dense", 1, "speculative"),
    ("moe", 4, "plain"), ("moe", 4, "speculative"), ("moe", 4, "deepep"),
    ("mla", 8, "plain"), ("mla", 8, "dp-attention"), ("mla", 8, "dp-attention+deepep"),
    ("mla", 8, "speculative"),
    # opt-in piecewise prefill graphs (0.5.3.post2 – 0.5.9)
    ("dense", 1, "piecewise"), ("mla", 8, "piecewise"),
]


def oracle_dir():
    if os.environ.get("ORACLE_DIR"):
        return Path(os.environ["ORACLE_DIR"])
    for cand in (ROOT.parent / "shared" / "oracle", Path("/work/shared/oracle")):
        if (cand / "defaults_oracle.py").exists():
            return cand
    sys.exit("defaults oracle not found: set ORACLE_DIR")


def vkey(v):
    from packaging.version import Version
    return Version(v)


def all_releases():
    out = subprocess.run([sys.executable, "-m", "pip", "index", "versions", "sglang", "--pre"],
                         capture_output=True, text=True, check=True).stdout
    line = next(l for l in out.splitlines() if l.startswith("Available versions:"))
    vs = [v.strip() for v in line.split(":", 1)[1].split(",")]
    return sorted((v for v in vs if vkey(v) >= vkey(OLDEST)), key=vkey)


def wheel(version):
    d = WORK / "wheels"
    d.mkdir(parents=True, exist_ok=True)
    found = list(d.glob(f"sglang-{version}-*.whl"))
    if not found:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary",
                        ":all:", f"sglang=={version}", "-d", str(d)], check=True)
        found = list(d.glob(f"sglang-{version}-*.whl"))
    return found[0]


def transformers_pin(whl):
    with zipfile.ZipFile(whl) as z:
        meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        for line in z.read(meta).decode().splitlines():
            m = re.match(r"Requires-Dist: transformers\s*==\s*([^;\s]+)", line)
            if m:
                return m.group(1)
    return FALLBACK_TRANSFORMERS


def venv_for(version):
    """A venv with real transformers at the release's pin and this SGLang release installed."""
    whl = wheel(version)
    pin = transformers_pin(whl)
    venv = WORK / "venvs" / f"tf-{pin}"
    py = venv / "bin" / "python"
    pip = [str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    if not (venv / "ready").exists():
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        # The oracle's real small deps (msgspec: 0.5.x ServerArgs; orjson: list-valued options).
        subprocess.run(pip + ["msgspec", "pyyaml", "packaging", "dill", "orjson", "pillow",
                              f"transformers=={pin}"], check=True)
        (venv / "ready").touch()
    # transformers 5.x without torch: see defaults_shim/_gen_defaults_shim.py.
    site = next((venv / "lib").glob("python3*/site-packages"))
    shim = Path(__file__).resolve().parent / "defaults_shim" / "_gen_defaults_shim.py"
    (site / shim.name).write_text(shim.read_text())
    (site / "zz_gen_defaults_shim.pth").write_text("import _gen_defaults_shim\n")
    have = subprocess.run([str(py), "-c", "from importlib.metadata import version as v; print(v('sglang'))"],
                          capture_output=True, text=True).stdout.strip()
    if have != version:
        subprocess.run(pip + ["--no-deps", "--no-compile", "--force-reinstall", str(whl)], check=True)
    return py


def schema_options(version, py):
    """Option strings and choices of the release's real parser (the argparse oracle, in a venv
    of its own: it stubs what SGLang imports and is missing, which real transformers or pydantic
    in the defaults venvs would defeat; some releases, 0.5.11 – 0.5.13 among them, need real
    transformers at import, so those fall back to the release's defaults venv `py`)."""
    out = WORK / "schemas" / f"{version}.json"
    if not out.exists():
        import fcntl
        out.parent.mkdir(parents=True, exist_ok=True)
        release_py = py
        venv = WORK / "venvs" / "schema"
        py = venv / "bin" / "python"
        pip = [str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        with open(WORK / "venvs" / "schema.lock", "w") as held:
            fcntl.flock(held, fcntl.LOCK_EX)
            if not (venv / "ready").exists():
                subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
                subprocess.run(pip + ["msgspec", "pyyaml", "packaging", "dill", "orjson"], check=True)
                (venv / "ready").touch()
            subprocess.run(pip + ["--no-deps", "--no-compile", "--force-reinstall", str(wheel(version))],
                           check=True)
            done = subprocess.run([str(py), str(oracle_dir() / "oracle.py"), "schema", "--out",
                                   str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  env=oracle_env()).returncode == 0
        if not done:
            done = subprocess.run([str(release_py), str(oracle_dir() / "oracle.py"), "schema",
                                   "--out", str(out)], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, env=oracle_env()).returncode == 0
        if not done:
            return static_options(version)
        if json.load(open(out))["meta"]["sglang_version"] != version:
            sys.exit(f"{version}: the schema is another release's")
    opts = {}
    for a in json.load(open(out))["actions"]:
        for o in a["option_strings"]:
            opts[o] = a.get("choices")
    return opts


def static_options(version):
    """The option strings named in the release's argument code, choices unknown (None): only for
    releases whose parser no oracle venv can import (0.5.13.post1). A wrong guess costs a case
    that SGLang rejects, never a wrong golden."""
    with zipfile.ZipFile(wheel(version)) as z:
        text = "".join(z.read(n).decode() for n in z.namelist()
                       if n == "sglang/srt/server_args.py" or n.startswith("sglang/srt/arg_groups/"))
    print(f"{version}: parser options read from its source", file=sys.stderr)
    return {o: None for o in re.findall(r'"(--[a-z0-9][a-z0-9-]*)"', text)}


def oracle_env():
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # let the oracle byte-compile what it imports
    return env


def variation(kind, tp, name, opts):
    """The argv for one variation in this release's spelling; None if the release lacks it."""
    if name == "plain":
        return []
    if name == "disable-cuda-graph":
        return ["--disable-cuda-graph"]
    if name == "cuda-graph-max-bs-128":
        flag = "--cuda-graph-max-bs-decode" if "--cuda-graph-max-bs-decode" in opts else "--cuda-graph-max-bs"
        return [flag, "128"] if flag in opts else None
    if name == "piecewise":
        return ["--enable-piecewise-cuda-graph"] if "--enable-piecewise-cuda-graph" in opts else None
    if name == "chunked-prefill-4096":
        return ["--chunked-prefill-size", "4096"]
    if name == "max-running-requests-64":
        return ["--max-running-requests", "64"]
    if name == "dp-attention":
        return ["--enable-dp-attention", "--dp-size", str(tp)] if "--enable-dp-attention" in opts else None
    if name in ("deepep", "dp-attention+deepep"):
        a2a = opts.get("--moe-a2a-backend", [])
        if a2a is None or "deepep" in a2a:
            dep = ["--moe-a2a-backend", "deepep"]
        elif "--enable-deepep-moe" in opts:
            dep = ["--enable-deepep-moe"]
        else:
            return None
        if name == "deepep":
            return dep
        dp = variation(kind, tp, "dp-attention", opts)
        return None if dp is None else dp + dep
    if name == "speculative":
        algo, draft = DRAFTS[kind]
        choices = opts.get("--speculative-algorithm")
        needed = ["--speculative-algorithm", "--speculative-draft-model-path", "--speculative-num-steps",
                  "--speculative-eagle-topk", "--speculative-num-draft-tokens"]
        if not all(o in opts for o in needed) or (choices and algo not in choices):
            return None
        return ["--speculative-algorithm", algo, "--speculative-draft-model-path", draft,
                "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
                "--speculative-num-draft-tokens", "4"]
    raise ValueError(name)


def full_variations(kind, tp):
    names = ["plain", "disable-cuda-graph", "cuda-graph-max-bs-128", "chunked-prefill-4096",
             "max-running-requests-64"]
    if tp > 1:
        names.append("dp-attention")
    names.append("speculative")
    if kind in ("moe", "mla") and tp > 1:
        names += ["deepep", "dp-attention+deepep"]
    return names


def grid_specs(grid):
    """(gpu MiB, model kind, tp, variation) in a fixed order."""
    specs = []
    if grid == "sweep":
        return [(mem, kind, tp, v) for mem in SWEEP_MEMS for kind, tp, v in SWEEP]
    if grid == "full":
        for mem in FULL_MEMS:
            for tp in (1, 2, 4, 8):
                for kind in MODELS:
                    specs += [(mem, kind, tp, v) for v in full_variations(kind, tp)]
    for mem in (FULL_MEMS + EXTRA_MEMS if grid == "probe" else EXTRA_MEMS):
        specs += [(mem, kind, tp, v) for kind, tp, v in PROBE]
    return specs


def cases(grid, opts):
    out = []
    for mem, kind, tp, name in grid_specs(grid):
        extra = variation(kind, tp, name, opts)
        if extra is not None:
            out.append({"gpu_mem_mib": mem, "num_gpus": 8, "label": f"{kind}/{name}",
                        "argv": ["--model-path", MODELS[kind], "--tp-size", str(tp)] + extra})
    return out


def results_path(grid, version):
    return WORK / "results" / grid / f"{version}.jsonl"


def run(grid, versions, jobs):
    for v in versions:
        if not results_path(grid, v).exists():
            run_one(grid, v, jobs)


def run_one(grid, v, jobs):
    """One release's grid. The venv is shared by the releases of one transformers pin, so it is
    locked while its SGLang is swapped and run."""
    import fcntl
    lock = WORK / "venvs" / f"{transformers_pin(wheel(v))}.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        py = venv_for(v)
        cs = cases(grid, schema_options(v, py))
        proc = subprocess.run([str(py), str(oracle_dir() / "defaults_oracle.py"), "run", "--jsonl",
                               "--jobs", str(jobs)], input="\n".join(json.dumps(c) for c in cs),
                              capture_output=True, text=True, env=oracle_env())
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr[-3000:])
        sys.exit(f"oracle failed for {v}")
    rows = [json.loads(l) for l in proc.stdout.splitlines() if l.strip()]
    if len(rows) != len(cs) or any(r.get("version") != v for r in rows):
        sys.exit(f"{v}: the oracle answered for another release or lost cases")
    # The oracle's own failures and missing packages say nothing about SGLang's resolution.
    broken = [r for r in rows if r.get("error_stage") == "oracle"
              or r.get("error", "").startswith(("ImportError", "ModuleNotFoundError"))]
    if rows and all("error" in r for r in rows):
        broken = rows  # every case failing says more about the environment than SGLang
    if broken:
        sys.exit(f"{v}: the oracle itself failed ({broken[0]['error']}); nothing recorded")
    out = results_path(grid, v)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in rows))
    errs = sum(1 for r in rows if "error" in r)
    print(f"{v}: {len(rows)} cases, {errs} rejected by SGLang", file=sys.stderr)


COLUMNS = ["mem_fraction_static", "chunked_prefill_size", "decode_cuda_graph", "decode_max_bs",
           "decode_bs_len", "decode_bs_sum", "max_running_requests", "prefill_backend",
           "prefill_max_bs", "prefill_num_bs", "page_size"]


def cell(x):
    if x is None:
        return "-"
    if isinstance(x, bool):
        return "true" if x else "false"
    return str(x)


def facts(r):
    """The recorded facts of one successful oracle result, in COLUMNS order."""
    s, res = r["summary"], r["result"]
    bs = s.get("decode_cuda_graph_bs")
    return [s.get("mem_fraction_static"), s.get("chunked_prefill_size"), s.get("decode_cuda_graph"),
            s.get("decode_cuda_graph_max_bs"), None if bs is None else len(bs),
            None if bs is None else sum(bs), s.get("max_running_requests"),
            s.get("prefill_cuda_graph_backend"), s.get("prefill_cuda_graph_max_bs"),
            s.get("prefill_cuda_graph_num_bs") if s.get("prefill_cuda_graph_backend") else None,
            res.get("page_size")]


def case_key(r):
    """(gpu MiB, cc, model kind, tp, variation, the argv after `--model-path M --tp-size N`)."""
    argv = [a.replace("@models/", "oracle/") for a in r["argv"]]
    kind, name = r["label"].split("/", 1)
    assert argv[:4] == ["--model-path", MODELS[kind].replace("@models/", "oracle/"), "--tp-size", argv[3]]
    return (r["gpu_mem_mib"], r["compute_capability"], kind, int(argv[3]), name, " ".join(argv[4:]))


def load(grid, versions):
    """{case key: {version: facts}} over the successful cases; and the count of rejected ones."""
    table, rejected = {}, 0
    for v in versions:
        for line in open(results_path(grid, v)):
            r = json.loads(line)
            if "error" in r:
                rejected += 1
                continue
            table.setdefault(case_key(r), {})[v] = tuple(cell(x) for x in facts(r))
    return table, rejected


def ranges(vs, order):
    """Consecutive runs (in `order`) of the versions `vs`, as `a-b` / `a`."""
    idx = sorted(order.index(v) for v in vs)
    out, start = [], idx[0]
    for a, b in zip(idx, idx[1:] + [None]):
        if b != a + 1:
            out.append(order[start] if start == a else f"{order[start]}-{order[a]}")
            start = b
    return ",".join(out)


def read_table(path):
    """A committed table back as load() gives it: ({case key: {version: facts}}, rejected, releases)."""
    lines = Path(path).read_text().splitlines()
    order = next(l for l in lines if l.startswith("# releases: ")).split()[2:]
    args = {m.group(1): m.group(2) for m in (re.match(r"# args (a\d+): (.*)$", l) for l in lines) if m}
    rejected = int(re.search(r"; (\d+) cases SGLang rejected", lines[0]).group(1))
    rows = {}
    for line in lines:
        if line.startswith(("#", "releases\t")) or not line.strip():
            continue
        cols = line.split("\t")
        key = (int(cols[1]), cols[2], cols[3], int(cols[4]), cols[5], args.get(cols[-1], ""))
        for part in cols[0].split(","):
            lo, _, hi = part.partition("-")
            for v in order[order.index(lo):order.index(hi or lo) + 1]:
                rows.setdefault(key, {})[v] = tuple(cols[6:-1])
    return rows, rejected, order


def table(grid, versions, merge=None):
    rows, rejected = load(grid, versions)
    if merge:
        # The committed table, with `versions`' own rows replaced by their fresh results. A release
        # already in it keeps its old count of rejected cases (the header's figure).
        old, old_rejected, order = read_table(merge)
        fresh = [v for v in versions if v not in order]
        rejected = old_rejected + (load(grid, fresh)[1] if fresh else 0)
        for key, by_v in old.items():
            for v, f in by_v.items():
                if v not in versions:
                    rows.setdefault(key, {})[v] = f
        versions = sorted(set(order) | set(versions), key=vkey)
    n = sum(len(by_v) for by_v in rows.values())
    models = " ".join(f"{k}={v.replace('@models/', '')}" for k, v in MODELS.items())
    # The extra arguments, once each: rows name them by id.
    args_ids = {a: f"a{i}" for i, a in enumerate(sorted({k[5] for k in rows if k[5]}))}
    print(f"# SGLang's own resolved defaults per release (scripts/gen-defaults.py, grid '{grid}'): "
          f"{n} release × case results; {rejected} cases SGLang rejected are not recorded. '-' = null.")
    print("# `releases`: ranges over the list below. argv: `--model-path tests/fixtures/models/oracle/<model>"
          " --tp-size <tp>`, then the `args` named by id below (oracle/ = tests/fixtures/models/oracle/).")
    print(f"# models: {models}")
    for a, i in args_ids.items():
        print(f"# args {i}: {a}")
    print("# releases: " + " ".join(versions))
    print("\t".join(["releases", "gpu_mem_mib", "cc", "model", "tp", "variation"] + COLUMNS + ["args"]))
    for key in sorted(rows):
        by_facts = {}
        for v, f in rows[key].items():
            by_facts.setdefault(f, []).append(v)
        for f, vs in sorted(by_facts.items(), key=lambda kv: min(versions.index(v) for v in kv[1])):
            mem, cc, kind, tp, name, args = key
            print("\t".join([ranges(vs, versions), str(mem), cc, kind, str(tp), name, *f,
                             args_ids.get(args, "-")]))


def boundaries(grid, versions):
    """Print each pair of consecutive releases whose results differ, and how many cases differ."""
    rows, _ = load(grid, versions)
    for a, b in zip(versions, versions[1:]):
        diff = [k for k, by_v in rows.items() if a in by_v and b in by_v and by_v[a] != by_v[b]]
        only = sum(1 for by_v in rows.values() if (a in by_v) != (b in by_v))
        if diff or only:
            ex = diff[0] if diff else None
            print(f"{a} -> {b}: {len(diff)} differ, {only} run on one side only"
                  + (f"; e.g. {ex}: {rows[ex][a]} -> {rows[ex][b]}" if ex else ""))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("cmd", choices=["run", "table", "boundaries", "releases"])
    ap.add_argument("versions", nargs="*")
    ap.add_argument("--grid", choices=["sweep", "probe", "full"], default="probe")
    ap.add_argument("--all", action="store_true", help="every release from 0.4.0 to the newest")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--merge", metavar="TSV", help="table: merge the given releases into this committed table")
    o = ap.parse_intermixed_args()
    versions = all_releases() if o.all or not o.versions else sorted(o.versions, key=vkey)
    if o.cmd == "run" and o.versions:
        versions = o.versions  # in the order given
    if o.cmd == "releases":
        print("\n".join(versions))
    elif o.cmd == "run":
        run(o.grid, versions, o.jobs)
    elif o.cmd == "table":
        have = [v for v in versions if results_path(o.grid, v).exists()]
        if o.merge and len(have) != len(o.versions):
            sys.exit("--merge: run the grid first for " + " ".join(v for v in o.versions if v not in have))
        table(o.grid, have, merge=o.merge)
    else:
        boundaries(o.grid, [v for v in versions if results_path(o.grid, v).exists()])


if __name__ == "__main__":
    main()
