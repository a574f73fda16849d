#!/usr/bin/env bash
# Regenerate the generated files (docs/schema/*.json, docs/*.md, man/, completions/) from
# the code: the freshness test rewrites them when SGLANG_LAUNCH_UPDATE_DOCS=1.
set -euo pipefail
cd "$(dirname "$0")/.."
SGLANG_LAUNCH_UPDATE_DOCS=1 cargo test --quiet --test docs generated_docs_are_fresh
