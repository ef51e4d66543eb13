#!/usr/bin/env bash
# The main job on a bundled example: build the fixture wheels from source, then audit a clean
# ExecuTorch-shaped macOS wheel and a broken one (MLX fused into the Python extension) with the
# shipped rules/executorch.toml. The broken one is expected to fail (exit 1).
set -euo pipefail
cd "$(dirname "$0")/.."
venv=$(bash scripts/setup.sh demo | tail -n 1)   # the fixture toolchain (apt), and the virtual environment .venv/
PY="$venv/bin/python"
OUT=fixtures/out
"$PY" fixtures/make_wheels.py "$OUT" >/dev/null
clean=$(ls "$OUT"/macos_clean/*.whl)
fused=$(ls "$OUT"/macos_fused/*.whl)
echo "== wheelaudit check $clean --rules rules/executorch.toml"
"$venv/bin/wheelaudit" check "$clean" --rules rules/executorch.toml
echo
echo "== wheelaudit check $fused --rules rules/executorch.toml   (expected to fail)"
set +e
"$venv/bin/wheelaudit" check "$fused" --rules rules/executorch.toml
rc=$?
set -e
echo "(exit code $rc)"
[ "$rc" -eq 1 ]
