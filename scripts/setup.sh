#!/usr/bin/env bash
# Set up a Debian 12 / Ubuntu 24.04 machine for one command of this checkout, idempotently:
#
#   bash scripts/setup.sh tool    wheelaudit alone: it is pure Python, so no apt package at all
#   bash scripts/setup.sh demo    what scripts/demo.sh uses: the toolchain that builds the fixture wheels
#   bash scripts/setup.sh test    what the test suite uses (.ci/run): every fixture toolchain and the
#                                 programs the tests drive (the default, for callers that name none)
#
#  1. apt: of the packages the command uses (listed below, each with why it is there), only those
#     whose programs are missing; as root, or through sudo for a user who has it;
#  2. a virtual environment at .venv/ in this checkout (override: WHEELAUDIT_VENV=DIR), never the
#     system interpreter, with this package (editable) and the Python packages the command uses.
# Prints the environment's path on its last line. Python: $PYTHON, else python3.
set -euo pipefail
cd "$(dirname "$0")/.."

COMMAND=${1:-test}
case "$COMMAND" in
  tool) EXTRAS="" ;;
  demo) EXTRAS="[fixtures]" ;;   # wheel writes the fixture wheels, lief edits one ELF's dynamic section
  test) EXTRAS="[test]" ;;
  *) echo "setup: unknown command '$COMMAND' (tool, demo or test)" >&2; exit 2 ;;
esac

PY=${PYTHON:-python3}
VENV=${WHEELAUDIT_VENV:-$PWD/.venv}

# The apt packages, each with the programs that show it is installed and why it is there.
# package        programs (all must be found)                  why
DEMO_PACKAGES=(
  "gcc           gcc                                            the Linux (ELF) fixture libraries: fixtures/build_executorch.sh"
  "g++           g++                                            the same, their C++ parts"
  "binutils      ar strip                                       the same: static archives, stripped variants"
  "clang         clang                                          the macOS (Mach-O) fixture libraries, cross-compiled"
  "lld           @ld64.lld                                      links them (ld64.lld), and the aarch64 / i686 ELF variants (ld.lld)"
  "llvm          @llvm-lipo @llvm-ar                            merges the universal2 binaries (llvm-lipo)"
)
TEST_PACKAGES=(
  "${DEMO_PACKAGES[@]}"
  "mingw-w64     x86_64-w64-mingw32-gcc i686-w64-mingw32-gcc    the Windows (PE) fixture DLLs: fixtures/build_pe.sh"
  "cmake         cmake                                          the C++ consumer-surface fixtures and their consumer: tests/test_surface.py"
  "make          make                                           the same (CMake's generator)"
  "pkg-config    pkg-config                                     the same: the shipped .pc files read by the real pkg-config"
  "chromium      chromium                                       the HTML report loaded in a headless browser: tests/test_html_report.py"
  "fonts-dejavu-core -                                          a font for that browser (nothing to probe)"
  "graphviz      dot                                            inspect --format dot drawn by Graphviz: tests/test_dot.py"
)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

# a program of clang's LLVM (Debian keeps ld64.lld and llvm-lipo in /usr/lib/llvm-N/bin only)
clang_bin=$(dirname "$(readlink -f "$(command -v clang 2>/dev/null || echo /nonexistent)")")
found() {
  case "$1" in
    -) dpkg-query -W -f='${Status}' "$2" 2>/dev/null | grep -q "install ok installed" ;;
    @*) [ -x "$clang_bin/${1#@}" ] ;;
    *) command -v "$1" >/dev/null 2>&1 ;;
  esac
}

need_apt=()
case "$COMMAND" in
  demo) packages=("${DEMO_PACKAGES[@]}") ;;
  test) packages=("${TEST_PACKAGES[@]}") ;;
  *) packages=() ;;
esac
for entry in "${packages[@]}"; do
  read -r package programs <<<"$entry"
  programs=${programs%%  *}   # (the programs end where the reason begins)
  for program in $programs; do
    if ! found "$program" "$package"; then need_apt+=("$package"); break; fi
  done
done
command -v "$PY" >/dev/null 2>&1 || need_apt+=(python3)
if ! [ -x "$VENV/bin/python" ] && ! "$PY" -c "import ensurepip, venv" >/dev/null 2>&1; then
  need_apt+=(python3-venv)   # Debian and Ubuntu ship venv without ensurepip until python3-venv is installed
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ -n "$SUDO" ] && ! command -v sudo >/dev/null 2>&1; then
    echo "setup: '$COMMAND' needs apt packages (${need_apt[*]}): run as root, or install sudo" >&2; exit 1
  fi
  echo "setup: installing with apt for '$COMMAND': ${need_apt[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
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
"$VENV/bin/python" -m pip install -q --disable-pip-version-check -e ".$EXTRAS" 2>&1 \
  | grep -v -E "^WARNING: (Running pip as|Location)" || true
case "$COMMAND" in
  tool) check="import wheelaudit" ;;
  demo) check="import wheelaudit, wheel, lief" ;;
  *) check="import wheelaudit, lief, elftools, macholib, jsonschema, build" ;;
esac
"$VENV/bin/python" -c "$check" \
  || { echo "setup: the Python packages did not install into $VENV" >&2; exit 1; }
echo "$VENV"
