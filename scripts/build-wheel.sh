#!/usr/bin/env bash
# Build the PyPI wheel (the `sglang-launch` binary only) for manylinux2014 (glibc >= 2.17) and check it.
#
#   scripts/build-wheel.sh OUT_DIR
#
# maturin links through zig against glibc 2.17's symbol list, so the binary runs on RHEL 8 and
# Ubuntu 20.04 (a host-linked build needs the build machine's glibc). Both tools come from PyPI
# into a throwaway venv, pinned. The wheel reaches OUT_DIR only once both checks pass:
#   - its platform tag is manylinux_2_17_x86_64 (manylinux2014_x86_64);
#   - the binary's highest GLIBC_ symbol version (readelf -V) is at most 2.17, and it needs
#     no shared library beyond the few every glibc system has.
# Only x86_64-unknown-linux-gnu is built here; aarch64 needs that rustup target installed.
set -euo pipefail
cd "$(dirname "$0")/.."

MATURIN_VERSION=1.16.0
ZIGLANG_VERSION=0.17.1
TARGET=x86_64-unknown-linux-gnu
MAX_GLIBC=2.17
# The libraries manylinux2014 lets a wheel take from the system that this binary can need.
ALLOWED_LIBS="libc.so.6 libpthread.so.0 libdl.so.2 libm.so.6 librt.so.1 libgcc_s.so.1 ld-linux-x86-64.so.2"

die() { echo "build-wheel: $*" >&2; exit 1; }

[ $# -eq 1 ] || die "usage: scripts/build-wheel.sh OUT_DIR"
out=$1
command -v python3 >/dev/null || die "python3 not found: install Python 3 (with venv) first"
command -v readelf >/dev/null || die "readelf not found: install binutils (apt-get install binutils)"
command -v cargo >/dev/null || die "cargo not found: install Rust (rustup) first"
! command -v rustup >/dev/null || rustup target list --installed | grep -qx "$TARGET" \
  || die "the Rust target $TARGET is not installed (rustup target add $TARGET)"

work=$(mktemp -d)
# The venv is made anew each time but always at the same path: zig's path is part of the linker
# cargo fingerprints, so a new path would rebuild every crate.
venv=$PWD/target/build-wheel-venv
trap 'rm -rf "$work" "$venv"' EXIT
rm -rf "$venv"
python3 -m venv "$venv" \
  || die "python3 -m venv failed: install the venv module (apt-get install python3-venv)"
"$venv/bin/pip" install --quiet --disable-pip-version-check \
  "maturin==$MATURIN_VERSION" "ziglang==$ZIGLANG_VERSION" \
  || die "pip could not install maturin==$MATURIN_VERSION ziglang==$ZIGLANG_VERSION from PyPI"

# maturin finds zig as `python3 -m ziglang`, so the venv goes first on PATH.
# The man page and completions go to share/ of the environment the wheel is installed into.
data=$PWD/target/wheel-data
rm -rf "$data"
install -D -m 644 man/sglang-launch.1 "$data/data/share/man/man1/sglang-launch.1"
install -D -m 644 completions/sglang-launch.bash "$data/data/share/bash-completion/completions/sglang-launch"
install -D -m 644 completions/_sglang-launch "$data/data/share/zsh/site-functions/_sglang-launch"
install -D -m 644 completions/sglang-launch.fish "$data/data/share/fish/vendor_completions.d/sglang-launch.fish"

PATH="$venv/bin:$PATH" maturin build --profile dist --locked --zig \
  --compatibility manylinux2014 --target "$TARGET" --out "$work/dist" \
  || die "maturin build failed"

wheels=("$work"/dist/*.whl)
[ ${#wheels[@]} -eq 1 ] && [ -f "${wheels[0]}" ] || die "expected one wheel in $work/dist, got: ${wheels[*]}"
wheel=${wheels[0]}
name=$(basename "$wheel")

# The tag: in the file name (what pip matches) and in the WHEEL metadata.
case $name in
  *-py3-none-*manylinux_2_17_x86_64*.whl) ;;
  *) die "$name: platform tag is not manylinux_2_17_x86_64 (manylinux2014)" ;;
esac
python3 - "$wheel" <<'EOF' || die "$name: WHEEL metadata lacks Tag: py3-none-manylinux_2_17_x86_64"
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
meta = next(n for n in z.namelist() if n.endswith(".dist-info/WHEEL"))
sys.exit(0 if "Tag: py3-none-manylinux_2_17_x86_64" in z.read(meta).decode().splitlines() else 1)
EOF

# The binary, out of the wheel as pip will install it.
python3 - "$wheel" "$work/sglang-launch" <<'EOF' || die "$name: no sglang-launch in the wheel's scripts"
import shutil, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
src = next(n for n in z.namelist() if n.endswith(".data/scripts/sglang-launch"))
with z.open(src) as f, open(sys.argv[2], "wb") as o:
    shutil.copyfileobj(f, o)
EOF
bin="$work/sglang-launch"

glibc=$(readelf -V --wide "$bin" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV)
[ -n "$glibc" ] || die "$name: readelf found no GLIBC_ symbol versions (not a glibc binary?)"
highest=$(tail -n1 <<<"$glibc")
[ "$(printf '%s\n%s\n' "$highest" "$MAX_GLIBC" | sort -V | tail -n1)" = "$MAX_GLIBC" ] \
  || die "$name: the binary needs GLIBC_$highest, above $MAX_GLIBC, for: $(objdump -T "$bin" \
    | awk -v v="GLIBC_$highest" 'NF > 1 && ($(NF-1) == v || $(NF-1) == "(" v ")") { print $NF }' | sort -u | head -5 | tr '\n' ' ')"
for lib in $(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
  case " $ALLOWED_LIBS " in
    *" $lib "*) ;;
    *) die "$name: the binary needs $lib, which manylinux2014 does not promise" ;;
  esac
done

mkdir -p "$out"
mv "$wheel" "$out/"
size=$(stat -c %s "$bin")
echo "build-wheel: $out/$name"
echo "build-wheel: tag manylinux_2_17_x86_64 (manylinux2014); highest GLIBC_$highest (<= $MAX_GLIBC)"
echo "build-wheel: binary $size bytes ($((size / 1024)) KiB), wheel $(stat -c %s "$out/$name") bytes"
