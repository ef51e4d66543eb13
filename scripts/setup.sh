#!/usr/bin/env bash
# Set up a fresh Debian 12 machine for wheelaudit: the fixture toolchain (apt) and the package
# with its test dependencies (pip). Idempotent; safe to run again. Needs root for apt (or sudo).
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
for tool in gcc g++ ar clang ld.lld lld-link llvm-dlltool llvm-rc x86_64-w64-mingw32-gcc i686-w64-mingw32-gcc; do
  command -v "$tool" >/dev/null 2>&1 || need_apt+=("$tool")
done
clang_bin=$(dirname "$(readlink -f "$(command -v clang 2>/dev/null || echo /nonexistent)")")
[ -x "$clang_bin/ld64.lld" ] && [ -x "$clang_bin/llvm-lipo" ] || need_apt+=(llvm-tools)
if [ ${#need_apt[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "setup: installing the fixture toolchain (missing: ${need_apt[*]})" >&2
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends gcc g++ binutils clang lld llvm mingw-w64 >/dev/null
fi

PY=${PYTHON:-python3}
"$PY" -m pip install -q --disable-pip-version-check -e '.[test]' 2>&1 | grep -v -E "^WARNING: (Running pip as|Location)" || true
"$PY" -c "import wheelaudit, lief, elftools, macholib, jsonschema" \
  || { echo "setup: the Python packages did not install" >&2; exit 1; }
