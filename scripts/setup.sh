#!/usr/bin/env bash
# Set up a fresh Debian 12 / Ubuntu 24.04 machine for wheelaudit, idempotently:
#  1. apt: the fixture toolchain (gcc, clang/lld/llvm, MinGW-w64, cmake, pkg-config), python3-venv,
#     headless Chromium (the HTML report's browser test) and Graphviz (`inspect --format dot`'s test),
#     only what is missing; as root, or through sudo for a user who has it;
#  2. a virtual environment at .venv/ in this checkout (override: WHEELAUDIT_VENV=DIR), never the
#     system interpreter, with this package (editable) and its test dependencies.
# Prints the environment's path on its last line. Python: $PYTHON, else python3.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3}
VENV=${WHEELAUDIT_VENV:-$PWD/.venv}

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "setup: run as root, or install sudo" >&2; exit 1; }
  SUDO="sudo"
fi

need_apt=()
for tool in gcc g++ ar clang ld.lld x86_64-w64-mingw32-gcc cmake make pkg-config; do
  command -v "$tool" >/dev/null 2>&1 || need_apt+=("$tool")
done
clang_bin=$(dirname "$(readlink -f "$(command -v clang 2>/dev/null || echo /nonexistent)")")
[ -x "$clang_bin/ld64.lld" ] && [ -x "$clang_bin/llvm-lipo" ] || need_apt+=(llvm-tools)
command -v "$PY" >/dev/null 2>&1 || need_apt+=(python3)
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
command -v dot >/dev/null 2>&1 || need_apt+=(graphviz)
if ! [ -x "$VENV/bin/python" ] && ! "$PY" -c "import ensurepip, venv" >/dev/null 2>&1; then
  need_apt+=(python3-venv)   # Debian and Ubuntu ship venv without ensurepip until python3-venv is installed
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "setup: installing with apt (missing: ${need_apt[*]})" >&2
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends gcc g++ binutils clang lld llvm mingw-w64 cmake make \
    pkg-config python3 python3-venv python3-pip chromium graphviz fonts-dejavu-core >/dev/null
  # python3-venv names the versioned package (python3.11-venv, python3.12-venv) the interpreter needs
  if ! "$PY" -c "import ensurepip" >/dev/null 2>&1; then
    ver=$("$PY" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
    $SUDO apt-get install -y -qq --no-install-recommends "python$ver-venv" >/dev/null || true
  fi
fi

if ! [ -x "$VENV/bin/python" ]; then
  echo "setup: creating the virtual environment $VENV" >&2
  "$PY" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install -q --disable-pip-version-check -e '.[test]' 2>&1 \
  | grep -v -E "^WARNING: (Running pip as|Location)" || true
"$VENV/bin/python" -c "import wheelaudit, lief, elftools, macholib, jsonschema" \
  || { echo "setup: the Python packages did not install into $VENV" >&2; exit 1; }
echo "$VENV"
