#!/usr/bin/env bash
# Fuzz the input parsers for a bounded time each: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#
# Targets (fuzz/fuzz_targets): argv, topology, yaml_config, model_config, safetensors_header,
# fit_search, hostlist;
# all of them when none is named. Each runs in one process (one core) from its seed corpus
# (fuzz/seeds/TARGET, kept in git) and its growing corpus (fuzz/corpus/TARGET, not kept);
# an input that panics, overflows, runs out of memory or takes over 10 s is saved under
# fuzz/artifacts/TARGET. Prints the runs and findings per target; exits 1 on any finding.
#
# Needs a nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz --locked`).
# FUZZ_SANITIZER=address (default none: the code is safe Rust, and ASan slows every run;
# overflow checks and debug assertions are on either way).
set -euo pipefail
cd "$(dirname "$0")/.."

secs=${1:-60}
shift || true
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(argv topology yaml_config model_config safetensors_header fit_search hostlist)
sanitizer=${FUZZ_SANITIZER:-none}

if ! cargo +nightly --version >/dev/null 2>&1; then
  echo "fuzz.sh: no nightly toolchain (rustup toolchain install nightly)" >&2
  exit 2
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "fuzz.sh: cargo-fuzz is not installed (cargo install cargo-fuzz --locked)" >&2
  exit 2
fi

build=(-s "$sanitizer" --debug-assertions --fuzz-dir fuzz)
cargo +nightly fuzz build "${build[@]}" >&2

mkdir -p fuzz/logs
stat() { sed -n "s/^stat::$1: *//p" "$2" | tail -1; }
printf '%-20s %12s %10s %8s %9s  %s\n' target runs exec/s corpus findings result
failed=0
for t in "${targets[@]}"; do
  mkdir -p "fuzz/corpus/$t" "fuzz/artifacts/$t"
  log="fuzz/logs/$t.log"
  before=$(find "fuzz/artifacts/$t" -type f | wc -l)
  rc=0
  cargo +nightly fuzz run "${build[@]}" "$t" "fuzz/corpus/$t" "fuzz/seeds/$t" -- \
    -max_total_time="$secs" -timeout=10 -print_final_stats=1 >"$log" 2>&1 || rc=$?
  after=$(find "fuzz/artifacts/$t" -type f | wc -l)
  found=$((after - before))
  result=ok
  if [[ $rc -ne 0 || $found -gt 0 ]]; then
    result="FAILED (rc $rc, see $log and fuzz/artifacts/$t)"
    failed=1
  fi
  printf '%-20s %12s %10s %8s %9s  %s\n' "$t" "$(stat number_of_executed_units "$log")" \
    "$(stat average_exec_per_sec "$log")" "$(find "fuzz/corpus/$t" -type f | wc -l)" "$found" "$result"
done
exit "$failed"
