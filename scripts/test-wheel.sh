#!/usr/bin/env bash
# Install a built wheel as a user would and run the installed binary offline.
#
#   scripts/test-wheel.sh WHEEL
#
# pip into a fresh venv (the binary must land in the venv's bin, next to its python), and
# `uv tool install` (uv's own bin directory); each copy prints its version and checks the
# embedded origin-story example. uv comes from PyPI into its own throwaway venv.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
UV_VERSION=0.13.9

die() { echo "test-wheel: $*" >&2; exit 1; }
[ $# -eq 1 ] && [ -f "$1" ] || die "usage: scripts/test-wheel.sh WHEEL (a built .whl file)"
wheel=$(realpath "$1")
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The installed binary, run from an empty directory with none of the host's settings.
run() {
  local bin=$1
  shift
  (cd "$work/empty" && env -i PATH="$(dirname "$bin"):/usr/bin:/bin" HOME="$work/home" NO_COLOR=1 \
    XDG_CONFIG_HOME="$work/home/.config" XDG_CACHE_HOME="$work/home/.cache" \
    SGLANG_LAUNCH_SYSTEM_CONFIG=/nonexistent/sglang-launch.toml "$bin" "$@")
}

smoke() {
  local bin=$1 how=$2 got report
  [ -x "$bin" ] || die "$how: no executable sglang-launch at $bin"
  got=$(run "$bin" --version) || die "$how: sglang-launch --version failed"
  [ "$got" = "sglang-launch $version" ] || die "$how: --version printed '$got', expected 'sglang-launch $version'"
  # The README's origin story: both bad flags fixed, the plan fits.
  report=$(run "$bin" check --topology "$root/examples/topologies/8x-rtx-pro-6000-pcie.json" \
    --sglang-version 0.5.23 -- --model-path "$root/examples/models/Qwen3-32B" --tp 8 \
    --enable-flashinfer-allreduce-fusion --cuda-graph-max-bs 512 2>&1) \
    || die "$how: check exited non-zero:"$'\n'"$report"
  for want in "FLAG001" "ARCH001" "fits: yes" "verdict: ok"; do
    grep -qF "$want" <<<"$report" || die "$how: check's report lacks '$want':"$'\n'"$report"
  done
  echo "test-wheel: $how: $got; check on the embedded example: ok"
}

mkdir -p "$work/empty" "$work/home"
python3 -m venv "$work/venv" || die "python3 -m venv failed: install the venv module (apt-get install python3-venv)"
"$work/venv/bin/pip" install --quiet --disable-pip-version-check --no-index "$wheel" \
  || die "pip install $wheel failed"
smoke "$work/venv/bin/sglang-launch" "pip install (venv bin)"
for f in share/man/man1/sglang-launch.1 share/bash-completion/completions/sglang-launch \
  share/zsh/site-functions/_sglang-launch share/fish/vendor_completions.d/sglang-launch.fish; do
  [ -s "$work/venv/$f" ] || die "pip install: the wheel did not install $f"
done
echo "test-wheel: pip install: man page and completions under the venv's share/"

python3 -m venv "$work/uv" && "$work/uv/bin/pip" install --quiet --disable-pip-version-check "uv==$UV_VERSION" \
  || die "pip could not install uv==$UV_VERSION from PyPI"
UV_TOOL_DIR="$work/tools" UV_TOOL_BIN_DIR="$work/tools/bin" UV_PYTHON_DOWNLOADS=never UV_NO_CONFIG=1 \
  UV_CACHE_DIR="$work/uv-cache" "$work/uv/bin/uv" tool install --quiet --offline "$wheel" \
  || die "uv tool install $wheel failed"
smoke "$work/tools/bin/sglang-launch" "uv tool install (tool bin)"
