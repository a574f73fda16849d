"""Every SGLang release sglang-launch embeds data for, and where the generators find each one.

Imported by gen-flags.py, gen-envs.py and gen-conformance.py. A release is unpacked from its
wheel (`pip download --no-deps`, then unzip; no install, none of its dependencies) into
$SGLANG_RELEASES/<version>/ (default /tmp/sglang-releases), and SGLang's parser is built from that
directory on PYTHONPATH by a Python that has the few real packages some releases' import chains
need (a stub cannot stand in for them). Measured: each release built without any of them (the
flag data compared with the full venv's), and each package left out alone on 0.5.3rc2, 0.5.4.post2,
0.5.7, 0.5.10, 0.5.15, 0.5.16, 0.5.20 and 0.5.23 (the ranges below are bounded by those):

  * none      0.4.0 - 0.5.3rc0: identical flag data with none of them installed.
  * pyyaml    0.5.3rc2 - 0.5.7 (0.5.10+ build without it); `--config` merging needs it, 0.5.5+.
  * dill      0.5.4.post2 - 0.5.16 (with a stub, an import-time use of it fails).
  * packaging 0.5.7 - 0.5.16 (a torch-version check at import time needs real comparisons).
  * msgspec   0.5.20+: without it the import succeeds but the flag data differs.
  * orjson    never for the flag data; the conformance goldens need it (`json_list_type`).

Everything else SGLang's own code imports is stubbed by the extractor (scripts/sglang_flags.py).

That venv is $SGLANG_DEPS_VENV (default /tmp/venv-sglang-deps; `python3 -m venv` + `pip install
msgspec orjson packaging dill pyyaml`, made by `deps_python()` on first use).
"""
import io
import json
import os
import subprocess
import sys
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path

# Every release on PyPI from 0.4.0 on, in release order (PEP 440: rc before the release, .postN
# after it).
RELEASES = """
0.4.0 0.4.0.post1 0.4.0.post2 0.4.1 0.4.1.post1 0.4.1.post2 0.4.1.post3 0.4.1.post4 0.4.1.post5
0.4.1.post6 0.4.1.post7 0.4.2 0.4.2.post1 0.4.2.post2 0.4.2.post3 0.4.2.post4 0.4.3 0.4.3.post1
0.4.3.post2 0.4.3.post3 0.4.3.post4 0.4.4 0.4.4.post1 0.4.4.post2 0.4.4.post3 0.4.4.post4 0.4.5
0.4.5.post1 0.4.5.post2 0.4.5.post3 0.4.6 0.4.6.post1 0.4.6.post2 0.4.6.post3 0.4.6.post4
0.4.6.post5 0.4.7 0.4.7.post1 0.4.8 0.4.8.post1 0.4.9 0.4.9.post1 0.4.9.post2 0.4.9.post3
0.4.9.post4 0.4.9.post5 0.4.9.post6 0.4.10 0.4.10.post1 0.4.10.post2 0.5.0rc0 0.5.0rc1 0.5.0rc2
0.5.1 0.5.1.post1 0.5.1.post2 0.5.1.post3 0.5.2rc0 0.5.2rc1 0.5.2rc2 0.5.2 0.5.3rc0 0.5.3rc2 0.5.3
0.5.3.post1 0.5.3.post2 0.5.3.post3 0.5.4 0.5.4.post1 0.5.4.post2 0.5.4.post3 0.5.5 0.5.5.post1
0.5.5.post2 0.5.5.post3 0.5.6 0.5.6.post1 0.5.6.post2 0.5.7 0.5.8 0.5.8.post1 0.5.9 0.5.10rc0
0.5.10 0.5.10.post1 0.5.11 0.5.12 0.5.12.post1 0.5.13 0.5.13.post1 0.5.14 0.5.15 0.5.15.post1
0.5.16 0.5.17 0.5.18 0.5.19 0.5.20 0.5.21 0.5.22 0.5.23
""".split()

# The releases with full conformance corpora (and hand-checked schema dumps in shared/sglang/).
BOUNDARY = ["0.4.10.post2", "0.5.2", "0.5.5", "0.5.10.post1", "0.5.23"]

DEPS = ["msgspec", "orjson", "packaging", "dill", "pyyaml"]

ROOT = Path(__file__).resolve().parent.parent


def releases_dir():
    return Path(os.environ.get("SGLANG_RELEASES", "/tmp/sglang-releases"))


def source(version):
    """The unpacked wheel of `version` (downloaded on first use; needs PyPI)."""
    d = releases_dir() / version
    if (d / ".unpacked").exists():
        return d
    wheels = releases_dir() / "wheels" / version
    if not list(wheels.glob("*.whl")):
        # 0.5.11+ ship only cp3x manylinux_2_34 wheels; their Python parts are the same on each
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary", ":all:",
                        "--python-version", "3.11", "--platform", "manylinux_2_34_x86_64", "--platform", "any",
                        f"sglang=={version}", "-d", str(wheels)], check=True)
    d.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(next(wheels.glob("*.whl"))) as z:
        z.extractall(d)
    (d / ".unpacked").write_text(version + "\n")
    return d


class Remote(io.RawIOBase):
    """A seekable read-only file over HTTP range requests (a wheel's zip directory and one member
    are fetched, not the whole wheel)."""

    def __init__(self, url, size):
        self.url, self.size, self.pos = url, size, 0

    def seekable(self):
        return True

    def readable(self):
        return True

    def tell(self):
        return self.pos

    def seek(self, off, whence=0):
        self.pos = {0: off, 1: self.pos + off, 2: self.size + off}[whence]
        return self.pos

    def readinto(self, b):
        if self.pos >= self.size:
            return 0
        end = min(self.pos + len(b), self.size) - 1
        req = urllib.request.Request(self.url, headers={"Range": f"bytes={self.pos}-{end}"})
        with urllib.request.urlopen(req, timeout=120) as r:
            data = r.read()
        b[:len(data)] = data
        self.pos += len(data)
        return len(data)


def remote_wheel(url, size):
    """A wheel on an index, opened as a zip file through range requests."""
    return zipfile.ZipFile(io.BufferedReader(Remote(url, size), buffer_size=1 << 18))


def index_files(project):
    """Every file a project has on PyPI (the simple API's JSON: filename, url, size)."""
    base = f"https://pypi.org/simple/{project}/"
    req = urllib.request.Request(base, headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        files = json.load(r)["files"]
    # A mirror may answer with relative links.
    return [{**f, "url": urllib.parse.urljoin(base, f["url"])} for f in files]


def pick_wheel(files, project, version):
    """One wheel of a release (a project's Python source is the same in every platform's wheel):
    a pure one first, then CPython 3.11 on x86-64."""
    mine = [f for f in files if f["filename"].startswith(f"{project}-{version}-")
            and f["filename"].endswith(".whl")]
    order = lambda f: ("py3-none-any" not in f["filename"], "cp311" not in f["filename"],
                       "x86_64" not in f["filename"])
    mine.sort(key=order)
    if not mine:
        sys.exit(f"{project} {version}: no wheel on PyPI")
    return mine[0]


def deps_python():
    venv = Path(os.environ.get("SGLANG_DEPS_VENV", "/tmp/venv-sglang-deps"))
    py = venv / "bin" / "python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"] + DEPS, check=True)
    return py


def env_for(version):
    """Environment that puts the unpacked release first on sys.path (bytecode written: repeated
    runs over one release are 3x faster)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(source(version))
    env["PYTHONHASHSEED"] = "0"
    return env


def runs(indices):
    """[start, count, start, count, ...] for a list of item indices (order kept)."""
    out = []
    for i in indices:
        if out and out[-2] + out[-1] == i:
            out[-1] += 1
        else:
            out += [i, 1]
    return out


def spans(indices, versions):
    """`0.4.0..0.4.2, 0.5.1` for sorted release indices (for people reading the tables)."""
    out, start = [], None
    for k, i in enumerate(indices):
        if start is None:
            start = i
        if k + 1 == len(indices) or indices[k + 1] != i + 1:
            out.append(versions[start] if start == i else f"{versions[start]}..{versions[i]}")
            start = None
    return ", ".join(out)
