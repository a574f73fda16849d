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
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sglang_releases as rel  # noqa: E402

OUT = rel.ROOT / "data" / "flags" / "install-digests.json"


def in_set(path):
    """Whether a wheel path is one of the files the digest covers."""
    return path in ("sglang/srt/server_args.py", "sglang/srt/environ.py") or (
        path.startswith("sglang/srt/arg_groups/") and path.endswith(".py"))


def record_hashes(wheel):
    """{path: hex sha256} of the covered files, from the wheel's RECORD."""
    with rel.remote_wheel(wheel["url"], wheel["size"]) as z:
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
    files = rel.index_files("sglang")
    releases = {}
    for v in rel.RELEASES:
        hashes = record_hashes(rel.pick_wheel(files, "sglang", v))
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
