#!/usr/bin/env python3
"""Record the evidence goldens: what each SGLang release's own start-up code does with the inputs
an error rule fires on (and near misses it must stay quiet on).

    scripts/gen-evidence.py --oracle ../shared/oracle --venvs /work/oracle [CODE ...]

Reads tests/evidence/cases.toml; for every case and release it runs the team's defaults oracle
(shared/oracle/defaults_oracle.py: SGLang's real argument parsing, ServerArgs resolution and
check_server_args, on a fake GPU, with the model's config.json read by the release's own
ModelConfig) in that release's venv (`<venvs>/venv-<release>`, made by
shared/oracle/setup_defaults.sh), and writes tests/evidence/<CODE>.jsonl, one line per (case,
release): the inputs, whether SGLang refused, and the exception it raised. Facts only: the
exception type and message SGLang printed, nothing else of its code.

A case may name a start-up function past ServerArgs (`probe = "module:Class.method"`): it is run
by scripts/evidence_probe.py with a stand-in runner holding the resolved arguments, for checks
SGLang makes when it builds the model runner or a backend. `runner` gives the stand-in what the
real constructor derives from the model (e.g. `{ use_mla_backend = true }`). A module function
that takes the runner names the runner's class (`probe_runner_class = "module:Class"`) and its
further arguments (`probe_args`, JSON); `probe_model_config = true` hands the stand-in the
release's own ModelConfig of the model, as the worker does; `probe_model_config_first = true` calls a loader function
with that ModelConfig as its first argument (then `probe_args`); `probe_hf_config_first = true` calls a
model module's function with the Hugging Face config the model class is built with, and
`probe_default_dtype = true` makes the model config's dtype torch's default, as the loader does
while it builds the model; `probe_dtype_instances = true` lets the stand-in's dtypes pass the
`isinstance(x, torch.dtype)` a module imported on the way asserts; `probe_server_args_first = true`
calls a function that takes the resolved arguments (`ModelConfig.from_server_args`), and a refusal by
the argument handling or the model config before the function counts as its; `probe_refuse_types` names further
exception types that are the check itself (a gate raising RuntimeError); `probe_pp_gate = true`
applies the model runner's pipeline-parallel gate to the class the probed loader function
returns, and `probe_method_gate = ["name", ...]` a speculative worker's call of one of those methods
on it, `probe_quant_layers = true` asks the quantisation config it returns for a decoder
layer's methods, and `probe_linear_weights = true` builds the first decoder layer's linear
layers and the first MoE layer's experts from it, up to their first weight
(scripts/evidence_probe.py says how for both). Where the stand-in
stops on something it lacks, the case is accepted only if the traceback went through `past` (a
`module` or `module:function`, or a list of them, the release reaches only after the check);
or it stopped on a name in `past_stop` (an attribute the function reads only after the check);
otherwise the run fails as inconclusive.

`packages` names installed distributions (e.g. `["transformers"]`) whose versions in the venv
the golden records, for a rule that reads the install: the replay gives them to the launcher as a
topology file's `host.packages`, as `detect --json` writes them. `torch` is the oracle's stand-in
(the venvs hold none): the version the release pins, labelled with the case's `cuda`. `rdma =
true` records the recording machine's RDMA devices (`/sys/class/infiniband`, none when it is
missing), which the release's own device check read; the replay gives them as `host.rdma_devices`.

`overlay` names distributions a real install of the release holds that the oracle venv lacks and
the probed code needs for real (e.g. `["compressed-tensors"]`, which SGLang requires unpinned:
without it the oracle's stand-in answers for it). Each is installed, at the newest final release
PyPI had on the day the SGLang release was uploaded (what `pip install sglang` resolved then),
into `<venvs>/overlay-<release>-<names>` with `--no-deps`, beside what they require that the venv
lacks (torch aside: the oracle's stand-in), each at the same date's release with its own
dependencies, and the probe runs with that folder on PYTHONPATH. `probe_stubs` names modules the
probe's stand-in answers for: the compressed-tensors cases name `accelerate`, which
compressed-tensors 0.12.1 (current at 0.5.3) imports unguarded for its transforms, which picking a
scheme never reaches.

A refusal counts for the case's rule only when its message contains the case's `refusal` text;
a refusal for another reason is not recorded (and listed at the end): it says nothing of the rule.

Venvs (measured here): setup_defaults.sh works as is for 0.4.3.post2 (with transformers 4.48.3),
0.4.6.post5–0.5.10.post1, 0.5.22 and 0.5.23. For 0.5.11–0.5.21 the pinned transformers needs
torchvision to register SGLang's image processors, so those venvs get transformers 5.19.0 and a
sitecustomize.py that lets SGLang re-register the config types 5.19.0 already ships
(`AutoConfig.register(..., exist_ok=True)`), as a real install (where they are not shipped)
registers them.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tomllib
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EVIDENCE = ROOT / "tests" / "evidence"
GPUS = ROOT / "tests" / "field" / "gpus.toml"


def model_arg(model):
    """An oracle model (`@models/NAME`), or a fixture config folder (`org__name`) by path."""
    if "__" in model:
        return str(ROOT / "tests" / "fixtures" / "models" / model)
    return f"@models/{model}"


def fixture_args(argv):
    """`@fixtures/org__name` in the arguments (a draft model, say): that fixture config folder."""
    fixtures = ROOT / "tests" / "fixtures" / "models"
    return [a.replace("@fixtures/", f"{fixtures}/") for a in argv]


def oracle_case(case, gpu, label):
    spec = {
        "gpu_mem_mib": gpu["memory_mib"],
        "gpu_name": gpu["name"],
        "compute_capability": gpu["cc"],
        "num_gpus": case.get("count", 8),
        "argv": ["--model-path", model_arg(case["model"])] + fixture_args(case["argv"]),
        "env": case.get("env", {}),
        "label": label,
    }
    if "cuda" in case:
        # torch's CUDA version, where the release's default wheel would not run on the GPU
        spec["cuda_version"] = case["cuda"]
    return spec


# A case's `probe_*` switches and lists, and the probe's flags they become.
PROBE_SWITCHES = [("probe_model_config", "--model-config"),
                  ("probe_model_config_first", "--model-config-first"),
                  ("probe_hf_config_first", "--hf-config-first"),
                  ("probe_default_dtype", "--default-dtype"),
                  ("probe_dtype_instances", "--dtype-instances"),
                  ("probe_server_args_first", "--server-args-first"),
                  ("probe_pp_gate", "--pp-gate"), ("probe_quant_layers", "--quant-layers"),
                  ("probe_linear_weights", "--linear-weights"),
                  ("probe_moe_runner", "--moe-runner")]
PROBE_LISTS = [("probe_method_gate", "--method-gate"), ("probe_refuse_types", "--refuse-types"),
               ("probe_stubs", "--stubs")]


def probe(oracle, python, case, gpu):
    """A case whose check is in a start-up function past ServerArgs (`probe` names it): run it
    with scripts/evidence_probe.py; the same result shape as the oracle's."""
    cmd = [str(python), str(ROOT / "scripts" / "evidence_probe.py"), "--oracle", str(oracle),
           "--function", case["probe"], "--gpu-mem", str(gpu["memory_mib"]),
           "--gpu-name", gpu["name"], "--cc", gpu["cc"], "--num-gpus", str(case.get("count", 8))]
    if "cuda" in case:
        cmd += ["--cuda-version", case["cuda"]]
    if "runner" in case:
        cmd += ["--runner", json.dumps(case["runner"])]
    if "probe_runner_class" in case:
        cmd += ["--runner-class", case["probe_runner_class"]]
    for key, flag in PROBE_SWITCHES:
        if case.get(key):
            cmd += [flag]
    if "probe_args" in case:
        cmd += ["--args", case["probe_args"]]
    for key, flag in PROBE_LISTS:
        if key in case:
            cmd += [flag, ",".join(case[key])]
    models = f"{Path(oracle).resolve()}/models/"
    argv = ["--model-path", model_arg(case["model"])] + fixture_args(case["argv"])
    cmd += ["--"] + [a.replace("@models/", models) for a in argv]
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    if case.get("overlay"):
        env["PYTHONPATH"] = str(overlay(python, case["overlay"]))
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
    lines = [json.loads(l) for l in res.stdout.splitlines() if l.startswith("{")]
    if not lines:
        # argparse's own refusal (an option or choice the release lacks) is the release's
        # answer, for another reason than the rule's.
        usage = [l for l in res.stderr.splitlines() if re.match(r"^\S+: error: ", l)]
        if usage:
            return {"error": "argparse: " + usage[-1], "error_stage": "args"}
        return {"error": f"probe failed: {res.stderr[-500:]}", "error_stage": "oracle"}
    r = lines[-1]
    if "stopped" in r:
        # Stopped by something else (what the stand-in lacks): accepted only when it stopped in
        # a frame the case names as past the check, else nothing is known.
        past = case.get("past", [])
        past = [past] if isinstance(past, str) else past
        # Or what it stopped on is something the function reads only after the check.
        after = case.get("past_stop", [])
        if not any(m.startswith(p) for p in past for m in r["at"]) and not any(
                t in r["stopped"] for t in after):
            return {"error": f"probe stopped short of the check: {r['stopped']} in {r['at'][-3:]}",
                    "error_stage": "oracle"}
    return {"error": r["refused"], "error_stage": "probe"} if "refused" in r else {}


def released(dist):
    """{version: upload day} of a distribution's releases on PyPI."""
    with urllib.request.urlopen(f"https://pypi.org/pypi/{dist}/json", timeout=60) as r:
        data = json.load(r)
    return {v: files[0]["upload_time"][:10] for v, files in data["releases"].items() if files}


def current_at(dist, day):
    """The newest final release of `dist` uploaded on or before `day`."""
    key = lambda v: tuple(int(x) for x in v.split("."))
    final = lambda v: all(c.isdigit() or c == "." for c in v)
    return max((v for v, d in released(dist).items() if final(v) and d <= day), key=key)


def requirements(metadata):
    """The distributions a METADATA file requires outside any extra."""
    out = []
    for line in metadata.read_text().splitlines():
        if line.startswith("Requires-Dist:") and "extra ==" not in line:
            out.append(re.split(r"[\s<>=!~;\[(]", line.split(":", 1)[1].strip())[0].lower())
    return out


def installed(python, names):
    """Which of `names` the venv already holds (kept as they are, not shadowed)."""
    code = ("import importlib.metadata as m, sys\n"
            "for n in sys.argv[1:]:\n"
            "    try: m.version(n); print(n)\n"
            "    except m.PackageNotFoundError: pass\n")
    res = subprocess.run([str(python), "-c", code, *names], capture_output=True, text=True, check=True)
    return set(res.stdout.split())


def overlay(python, dists):
    """`<venvs>/overlay-<release>-<names>`: the distributions as PyPI had them at the release."""
    release = subprocess.run([str(python), "-c", "import importlib.metadata as m; print(m.version('sglang'))"],
                             capture_output=True, text=True, check=True).stdout.strip()
    target = python.parent.parent.parent / f"overlay-{release}-{'+'.join(sorted(dists))}"
    if (target / "DONE").exists():
        return target
    day = released("sglang")[release]
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--target", str(target)]
    subprocess.run(pip + ["--no-deps"] + [f"{d}=={current_at(d, day)}" for d in dists], check=True)
    # Their own requirements, torch and transformers aside (the venv's stand-in and pin answer).
    needs = {r for meta in target.glob("*.dist-info/METADATA") for r in requirements(meta)}
    needs = sorted(needs - {"torch", "transformers", *dists} - installed(python, needs))
    if needs:
        subprocess.run(pip + [f"{d}=={current_at(d, day)}" for d in needs], check=True)
    (target / "DONE").write_text(f"{day}\n")
    return target


def run(oracle, python, cases):
    res = subprocess.run(
        [str(python), str(Path(oracle) / "defaults_oracle.py"), "run", "--jsonl", "--jobs", "2"],
        input=json.dumps(cases), capture_output=True, text=True, timeout=1800)
    lines = [json.loads(l) for l in res.stdout.splitlines() if l.startswith("{")]
    if len(lines) != len(cases):
        sys.exit(f"{python}: {len(lines)} results for {len(cases)} cases\n{res.stderr[-3000:]}")
    return lines


# torch as the oracle's stand-in reports it: the version the release pins (its Requires-Dist)
# with the case's CUDA as the local label, as a real wheel's version reads (`2.9.1+cu128`).
STUB_TORCH = r"""
import importlib.metadata as m, re
pin = None
for req in m.requires("sglang") or []:
    g = re.match(r"torch\s*==\s*([^;\s]+)\s*(;.*)?$", req)
    if g and (not g.group(2) or "srt" in g.group(2) or "extra" not in g.group(2)):
        pin = g.group(1)
        break
"""


def venv_versions(python, names, cuda=None):
    """The versions of `names` installed in a venv: what a rule reading the install (the case's
    `packages`) is told, as `detect` would record them. The venvs hold no torch: `torch` is the
    oracle's stand-in, which needs the case's `cuda` (left out where the release pins none). A
    name not installed is left out, as `detect` leaves it out (a rule reading that it is missing).
    scripts/sweep-refusals.py tells the launcher the same stand-in."""
    if not names:
        return {}
    code = STUB_TORCH + """
import json, sys
out = {}
for n in sys.argv[2:]:
    if n == "torch":
        if pin:
            out[n] = f"{pin}+cu{sys.argv[1].replace('.', '')}"
    else:
        try:
            out[n] = m.version(n)
        except m.PackageNotFoundError:
            pass
print(json.dumps(out))
"""
    if "torch" in names and not cuda:
        sys.exit("a case recording torch names its `cuda`")
    res = subprocess.run([str(python), "-c", code, cuda or "", *names], capture_output=True,
                         text=True, check=True)
    return json.loads(res.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--oracle", required=True)
    ap.add_argument("--venvs", required=True)
    ap.add_argument("--case", type=int, action="append", dest="only",
                    help="with one CODE: record only this case (its index among the code's cases; "
                         "repeatable), keeping the other cases' lines as the file has them, so "
                         "the venvs of their releases are not needed")
    ap.add_argument("codes", nargs="*")
    opts = ap.parse_args()
    if opts.only and len(opts.codes) != 1:
        sys.exit("--case records cases of one CODE: name exactly one")
    gpus = tomllib.loads(GPUS.read_text())
    cases = tomllib.loads((EVIDENCE / "cases.toml").read_text())["case"]
    codes = sorted({c["code"] for c in cases if not opts.codes or c["code"] in opts.codes})
    others = []
    for code in codes:
        mine = [c for c in cases if c["code"] == code]
        by_version = {}
        for i, c in enumerate(mine):
            if opts.only and i not in opts.only:
                continue
            for v in c["releases"]:
                by_version.setdefault(v, []).append((i, c))
        out = []
        for v, items in sorted(by_version.items()):
            python = Path(opts.venvs) / f"venv-{v}" / "bin" / "python"
            if not python.exists():
                sys.exit(f"{code}: no oracle venv for {v} ({python}); setup_defaults.sh {v} DIR")
            plain = [(i, c) for i, c in items if "probe" not in c]
            specs = [oracle_case(c, gpus[c["gpu"]], f"{code}/{i}") for i, c in plain]
            results = dict(zip([i for i, _ in plain], run(opts.oracle, python, specs) if specs else []))
            for i, c in items:
                if "probe" in c:
                    results[i] = probe(opts.oracle, python, c, gpus[c["gpu"]])
            for (i, c), r in ((ic, results[ic[0]]) for ic in items):
                error = r.get("error")
                if r.get("error_stage") == "oracle":
                    sys.exit(f"{code} case {i} on {v}: the oracle failed: {error}")
                texts = c["refusal"] if isinstance(c["refusal"], list) else [c["refusal"]]
                refused = bool(error) and any(t in error for t in texts)
                if error and not refused:
                    # Another refusal says nothing about this rule: not recorded (an option the
                    # release does not have is argparse's, outside the rule's range).
                    others.append(f"{code} case {i} on {v}: {error[:200]}")
                    continue
                line = {
                    "code": code, "case": i, "release": v, "gpu": c["gpu"],
                    "count": c.get("count", 8), "model": c["model"], "argv": c["argv"],
                    "env": c.get("env", {}), "refused": refused,
                    # The exception and the start of its message: enough to tell the refusal.
                    "error": error[:160] if refused else None,
                    "stage": r.get("error_stage") if refused else None,
                }
                if c.get("packages"):
                    line["packages"] = venv_versions(python, c["packages"], c.get("cuda"))
                if c.get("rdma"):
                    line["rdma_devices"] = rdma_devices()
                out.append(line)
                print(f"{code} {i} {v}: {'refused' if refused else 'accepted'}", file=sys.stderr)
        if opts.only:
            kept = (EVIDENCE / f"{code}.jsonl").read_text().splitlines()
            out = [o for o in map(json.loads, kept) if o["case"] not in opts.only] + out
            out.sort(key=lambda o: (o["release"], o["case"]))
        (EVIDENCE / f"{code}.jsonl").write_text("".join(json.dumps(o) + "\n" for o in out))
    for o in others:
        print(f"not recorded: {o}", file=sys.stderr)


def rdma_devices():
    """The RDMA devices of the machine recording (what the release's own device check saw), as
    `detect --json` records a host's."""
    cls = Path("/sys/class/infiniband")
    return sorted(p.name for p in cls.iterdir()) if cls.is_dir() else []


if __name__ == "__main__":
    main()
