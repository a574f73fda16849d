#!/usr/bin/env bash
# Regenerate the generated files (docs/schema/*.json, docs/*.md, man/, completions/) from
# the code, README's bad-input table from tests/it/bad_inputs.rs and its launcher-option table
# from the CLI: the freshness tests rewrite them when SGLANG_LAUNCH_UPDATE_DOCS=1.
set -euo pipefail
cd "$(dirname "$0")/.."
SGLANG_LAUNCH_UPDATE_DOCS=1 cargo test --quiet --test it docs::generated_docs_are_fresh
SGLANG_LAUNCH_UPDATE_DOCS=1 cargo test --quiet --test it bad_inputs::readme_table_matches_the_matrix
SGLANG_LAUNCH_UPDATE_DOCS=1 cargo test --quiet --test it docs::readme_launcher_options_match_the_cli
