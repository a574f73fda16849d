#!/usr/bin/env bash
# Regenerate the checked-in completions and man page from the clap definition.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --quiet
bin=target/debug/sglang-launch
$bin completions bash > completions/sglang-launch.bash
$bin completions zsh > completions/_sglang-launch
$bin completions fish > completions/sglang-launch.fish
$bin man > man/sglang-launch.1
