#!/usr/bin/env bash
# Make the oracle venv scripts/gen-evidence.py and scripts/sweep-refusals.py run a release in.
#   scripts/setup-evidence-venv.sh VERSION VENVS_DIR [ORACLE_DIR]
# Writes VENVS_DIR/venv-VERSION with the team's setup_defaults.sh (SGLang without its
# dependencies, the transformers it pins). 0.5.11-0.5.21 need more: the transformers they pin
# registers SGLang's image processors only with torchvision installed, so those venvs get
# transformers 5.19.0 instead, plus a sitecustomize.py letting SGLang re-register the config
# types 5.19.0 already ships (exist_ok=True), as a real install, where they are not shipped, does.
# Releases before 0.4.4 pin no transformers: they get 4.48.3, the pin of 0.4.4.
set -euo pipefail
ver="$1"; dir="$2"
oracle="${3:-$(cd "$(dirname "$0")/../.." && pwd)/shared/oracle}"
venv="$dir/venv-$ver"
needs_new_transformers() {
    python3 - "$1" <<'EOF'
import re, sys
parts = [int(x) for x in re.findall(r"\d+", sys.argv[1])[:3]]
sys.exit(0 if (0, 5, 11) <= tuple(parts) <= (0, 5, 21) else 1)
EOF
}
if ! needs_new_transformers "$ver"; then
    bash "$oracle/setup_defaults.sh" "$ver" "$venv"
    # Releases before 0.4.4 pin no transformers, and today's cannot import their vision code:
    # they get 4.48.3, the one 0.4.4 (the first to pin) names.
    if ! grep -q "^Requires-Dist: transformers==" "$venv"/lib/python3*/site-packages/sglang-*.dist-info/METADATA; then
        "$venv/bin/pip" install --quiet --disable-pip-version-check "transformers==4.48.3" 2>&1 \
            | grep -v "dependency resolver\|requires .*, which is not installed\|but you have" || true
        echo "ok: $venv (sglang $ver pins no transformers: 4.48.3)"
    fi
    exit 0
fi
# The warm-up at the end of setup_defaults.sh fails with the pinned transformers: expected here.
bash "$oracle/setup_defaults.sh" "$ver" "$venv" || true
"$venv/bin/pip" install --quiet --disable-pip-version-check "transformers==5.19.0" 2>&1 \
    | grep -v "dependency resolver\|requires .*, which is not installed\|but you have" || true
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
cat > "$site/sitecustomize.py" <<'EOF'
try:
    from transformers import AutoConfig

    _register = AutoConfig.register

    def _register_again(model_type, config, exist_ok=False):
        return _register(model_type, config, exist_ok=True)

    AutoConfig.register = staticmethod(_register_again)
except Exception:
    pass
EOF
env -u PYTHONDONTWRITEBYTECODE "$venv/bin/python" "$oracle/defaults_oracle.py" one --gpu-mem 81559 \
    -- --model-path @models/Llama-3.1-8B-Instruct > /dev/null
echo "ok: $venv (sglang $ver, transformers 5.19.0, sitecustomize)"
