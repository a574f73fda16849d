#!/usr/bin/env bash
# Regenerate the checked-in completion scripts (completions/) and man page (man/): they are
# generated files like docs/, written by the same freshness test (tests/it/docs.rs).
set -euo pipefail
exec "$(dirname "$0")/gen-docs.sh"
