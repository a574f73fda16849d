#!/usr/bin/env python3
"""Build data/flags/install-digests.json: for every embedded SGLang release, one digest of the
source files its server-argument parser and environment registry are defined in, as the
release's wheel installs them.

    scripts/gen-install-digests.py            # every release in sglang_releases.RELEASES

At run time the launcher computes the same digest over the installed SGLang's files: equal means
the install is that release (the embedded flag set and registry hold); different means a source
checkout, a dev image or a patched fork whose parser must be read from the install itself.

The file set (paths inside the wheel, sorted): sglang/srt/server_args.py, sglang/srt/environ.py
and every .py file under sglang/srt/arg_groups/ that the release has. Digest: sha256 over one
line per file, "<path>\\0<hex sha256 of the file>\\n". The per-file hashes come from each wheel's
RECORD (PEP 376: the sha256 of every installed file), read with HTTP range requests (only the
zip directory and RECORD are fetched, a few hundred KiB per release). Facts only: hashes.
"""
import base64
import hashlib
import io
import json
import sys
import urllib.request
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sglang_releases as rel  # noqa: E402

OUT = rel.ROOT / "data" / "flags" / "install-digests.json"
SIMPLE = "https://pypi.org/simple/sglang/"


def in_set(path):
    """Whether a wheel path is one of the files the digest covers."""
    return path in ("sglang/srt/server_args.py", "sglang/srt/environ.py") or (
        path.startswith("sglang/srt/arg_groups/") and path.endswith(".py"))


class Remote(io.RawIOBase):
    """A seekable read-only file over HTTP range requests."""

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


def wheels():
    req = urllib.request.Request(SIMPLE, headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.load(r)["files"]


def pick(files, version):
    """One wheel of the release (the Python source in every platform's wheel is the same)."""
    mine = [f for f in files if f["filename"].startswith(f"sglang-{version}-")
            and f["filename"].endswith(".whl")]
    order = lambda f: ("py3-none-any" not in f["filename"], "cp311" not in f["filename"],
                       "x86_64" not in f["filename"])
    mine.sort(key=order)
    if not mine:
        sys.exit(f"{version}: no wheel on PyPI")
    return mine[0]


def record_hashes(wheel):
    """{path: hex sha256} of the covered files, from the wheel's RECORD."""
    raw = Remote(wheel["url"], wheel["size"])
    with zipfile.ZipFile(io.BufferedReader(raw, buffer_size=1 << 18)) as z:
        name = next(n for n in z.namelist() if n.endswith(".dist-info/RECORD"))
        text = z.read(name).decode()
    out = {}
    for line in text.splitlines():
        path, digest, _ = line.rsplit(",", 2)
        if in_set(path):
            algo, b64 = digest.split("=", 1)
            assert algo == "sha256", line
            out[path] = base64.urlsafe_b64decode(b64 + "=" * (-len(b64) % 4)).hex()
    return out


def digest(hashes):
    h = hashlib.sha256()
    for path in sorted(hashes):
        h.update(f"{path}\0{hashes[path]}\n".encode())
    return h.hexdigest()


def main():
    files = wheels()
    releases = {}
    for v in rel.RELEASES:
        hashes = record_hashes(pick(files, v))
        if "sglang/srt/server_args.py" not in hashes:
            sys.exit(f"{v}: the wheel's RECORD has no sglang/srt/server_args.py")
        releases[v] = {"digest": digest(hashes), "files": len(hashes)}
        print(v, len(hashes), releases[v]["digest"][:16], file=sys.stderr)
    doc = {
        "format": "sglang-launch install digests 1",
        "files": "sglang/srt/server_args.py, sglang/srt/environ.py, sglang/srt/arg_groups/**.py",
        "releases": releases,
    }
    OUT.write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    main()
