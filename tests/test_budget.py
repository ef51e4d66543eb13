"""One budget per run (``wheelaudit.binary.budget``), and the bombs of the second hostile round it
and linear work defuse: CMake configs that nest, loop or break, a ``declares`` pattern that would
backtrack, demangler bombs, symbol tables whose entries share one long string, a DLL with tens of
thousands of imports.

Each case runs the command line as a user would, in a subprocess whose address space is limited
(``MEMORY``), and asserts sizes and outcomes; the time bounds are generous ones a broken version
exceeds by orders of magnitude.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from fuzz.mutate import tiny_wheel  # noqa: E402

#: the address-space limit of the command under test (the interpreter and its libraries take
#: about 200 MB of it)
MEMORY = 1 << 30


def wheelaudit(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    code = (f"import resource, sys; resource.setrlimit(resource.RLIMIT_AS, ({MEMORY}, {MEMORY})); "
            "from wheelaudit.cli.main import main; sys.exit(main(sys.argv[1:]))")
    env = {**os.environ, "WHEELAUDIT_PROGRESS": "0"}
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=timeout,
                          env=env)


def surface_wheel(tmp_path: Path, texts: dict[str, str], name: str = "cm") -> Path:
    members = [(path, text.encode()) for path, text in texts.items()] + [("p/__init__.py", b"")]
    p = tmp_path / f"{name}-1.0-cp311-cp311-manylinux_2_28_x86_64.whl"
    p.write_bytes(tiny_wheel(members, dist=f"{name}-1.0"))
    return p


def surface_of(whl: Path) -> dict:
    p = wheelaudit("inspect", str(whl), "--format", "json")
    assert p.returncode == 0, p.stdout + p.stderr
    return json.loads(p.stdout)["wheels"][0]["consumer_surface"]


IMPORTED = ('add_library(p::p SHARED IMPORTED)\nset_target_properties(p::p PROPERTIES IMPORTED_LOCATION '
            '"${CMAKE_CURRENT_LIST_DIR}/../../libp.so")\n')


# -- CMake ---------------------------------------------------------------------------------------

def test_cmake_blocks_nested_5000_deep_are_a_problem_not_a_crash(tmp_path):
    text = "if(TRUE)\n" * 5000 + IMPORTED + "endif()\n" * 5000
    surface = surface_of(surface_wheel(tmp_path, {"p/lib/cmake/P/PConfig.cmake": text}))
    assert [(p["path"], "blocks nest deeper than 100" in p["message"]) for p in surface["problems"]] == [
        ("p/lib/cmake/P/PConfig.cmake", True)]


def test_a_config_with_a_syntax_error_still_shows_its_missing_library(tmp_path):
    """What precedes the syntax error is read: its imported target names a library the wheel does
    not ship (WA701), and the error is listed."""
    whl = surface_wheel(tmp_path, {"p/lib/cmake/P/PConfig.cmake": IMPORTED + "if(\n"})
    p = wheelaudit("check", str(whl), "--select", "WA701", "--format", "json")
    assert p.returncode == 1, p.stdout + p.stderr
    [w] = json.loads(p.stdout)["wheels"]
    assert [f["code"] for f in w["findings"]] == ["WA701"]
    assert [pr["message"] for pr in surface_of(whl)["problems"]] == ["line 3: command if: unbalanced parentheses"]


def test_cmake_configs_draw_on_one_step_budget(tmp_path):
    """40 configs of 40,000 commands each: together past the run's 400,000 steps, each alone under
    the old bound per config. The run stops at the budget and says so for the configs it cut."""
    loop = "set(L" + " a" * 200 + ")\nforeach(x ${L})\nforeach(y ${L})\nset(z 1)\nendforeach()\nendforeach()\n"
    texts = {f"p/lib/cmake/P{i}/P{i}Config.cmake": loop for i in range(40)}
    surface = surface_of(surface_wheel(tmp_path, texts))
    cut = [p["path"] for p in surface["problems"] if "CMake commands run in all" in p["message"]]
    assert 25 <= len(cut) < 40, surface["problems"]


def test_a_declares_pattern_cannot_backtrack(tmp_path):
    """``(a+)+b`` over a run of 40 ``a``: Python's re takes 2^40 steps; RE2 one pass."""
    whl = surface_wheel(tmp_path, {"p/lib/cmake/P/PConfig.cmake": "a" * 40 + "\n" + IMPORTED})
    rules = tmp_path / "rules.toml"
    rules.write_text('version = 1\n[cmake]\nconfig = "**/PConfig.cmake"\ndeclares = \'(?P<name>(a+)+)b\'\n'
                     '[[component]]\nname = "p"\nstrings = ["x"]\nowner = "p/*.so"\ncmake-target = "p::q"\n'
                     'required = false\n')
    p = wheelaudit("check", str(whl), "--rules", str(rules), "--select", "WA705", timeout=60)
    assert p.returncode in (0, 1), p.stdout + p.stderr
    # a pattern that needs backtracking (a backreference) is refused when the rules load
    rules.write_text('version = 1\n[cmake]\nconfig = "**/PConfig.cmake"\ndeclares = \'(?P<name>a)\\1\'\n')
    p = wheelaudit("check", str(whl), "--rules", str(rules))
    assert p.returncode == 2 and "RE2" in p.stderr and "Traceback" not in p.stderr, p.stderr


# -- strings shared ------------------------------------------------------------------------------

def _findings(p: subprocess.CompletedProcess) -> list[str]:
    return [f["code"] for w in json.loads(p.stdout)["wheels"] for f in w["findings"]]


def test_entries_sharing_one_long_string_cost_it_once(tmp_path):
    """2,000 defined and 2,000 undefined symbols naming one 1 MiB string each (a 3 KB wheel): the
    string is decoded once per table, not once per entry (2 GB), for ELF and Mach-O alike. Under
    a 1 GiB address space the binaries read whole (no WA001) and judge as they are."""
    from fuzz.shapes import elf_dso, macho_dylib

    long = b"c" * (1 << 20)
    elf = elf_dso([b"libc.so.6"], soname=b"libx.so", symbols=[(long, True)] * 2000 + [(long + b"u", False)] * 2000)
    macho = macho_dylib([b"/usr/lib/libSystem.B.dylib"], [],
                        symbols=[(b"_" + long, True)] * 2000 + [(b"_" + long + b"u", False)] * 2000)
    for lib, tag, data, expected in (("pkg/libx.so", "cp311-cp311-manylinux_2_28_x86_64", elf, ["WA506", "WA606"]),
                                     ("pkg/libx.dylib", "cp311-cp311-macosx_11_0_arm64", macho, ["WA607"])):
        whl = tmp_path / f"shared-1.0-{tag}.whl"
        whl.write_bytes(tiny_wheel([(lib, data)], dist="shared-1.0", tag=tag))
        assert whl.stat().st_size < 4096
        p = wheelaudit("check", str(whl), "--format", "json")
        assert p.returncode == 1 and _findings(p) == expected, (p.stdout[:2000], p.stderr)


# -- demangler bombs -----------------------------------------------------------------------------

def test_many_demangler_bombs_finish_within_the_runs_budget(tmp_path):
    """60 exported names that each take the capped demangler its whole bound (2 s: 120 s in all,
    outside any per-binary bound, before): the run's budget for such names (5 s) is spent once,
    the rest stay mangled, and a note says so once."""
    sys.path.insert(0, str(ROOT / "tests"))
    from test_hostile_binaries import _demangler_bomb

    from fuzz.shapes import elf_dso

    base = _demangler_bomb(46)
    names = [(base[:-2] + "i" * k + "Ev").encode() for k in range(60)]
    lib = elf_dso([b"libc.so.6"], soname=b"libx.so", symbols=[(n, True) for n in names])
    whl = tmp_path / "bombs-1.0-cp311-cp311-manylinux_2_28_x86_64.whl"
    whl.write_bytes(tiny_wheel([("pkg/libx.so", lib)], dist="bombs-1.0"))
    assert whl.stat().st_size < 4096
    p = wheelaudit("inspect", str(whl), "--symbols", "--format", "json", timeout=60)
    assert p.returncode == 0, p.stderr
    exports = json.loads(p.stdout)["wheels"][0]["libraries"][0]["slices"][0]["exports"]
    assert len(exports) == 60 and all(e["demangled"] == e["name"] for e in exports)
    assert p.stderr.count("left mangled") == 1, p.stderr
    p = wheelaudit("check", str(whl), "--format", "json", timeout=60)
    assert p.returncode == 1 and sum("left mangled" in n for n in json.loads(p.stdout)["notes"]) == 1


# -- a DLL with 65,000 imports -------------------------------------------------------------------

def test_a_dll_with_65000_import_descriptors_reads_in_linear_time(tmp_path):
    """65,000 imports, each through a descriptor of its own naming the same DLL: the reader listed
    the DLL's names again for every descriptor (quadratic: 88 s); now once in all. The bound is
    generous (the fixed reader takes well under a second here)."""
    from fuzz.shapes import pe_dll

    dll = pe_dll([(b"big.dll", [b"func_%d" % i for i in range(65000)])], descriptor_per_name=True)
    whl = tmp_path / "imports-1.0-cp311-cp311-win_amd64.whl"
    whl.write_bytes(tiny_wheel([("pkg/user.dll", dll)], dist="imports-1.0", tag="cp311-cp311-win_amd64"))
    p = wheelaudit("check", str(whl), "--format", "json", timeout=30)
    # (the missing big.dll: a WA501, an error since user.dll is the wheel's only library)
    assert p.returncode == 1 and _findings(p) == ["WA501"], p.stdout[:2000] + p.stderr


# -- output ---------------------------------------------------------------------------------------

def test_the_report_draws_on_the_runs_output_budget(tmp_path):
    """300 symbols naming one 1 MiB string: ``inspect --symbols`` would write 300 MiB for a 2 KB
    wheel. The report stops at the run's 256 MiB with a line that says so (and a note on
    standard error)."""
    from fuzz.shapes import elf_dso

    long = b"c" * (1 << 20)
    lib = elf_dso([b"libc.so.6"], soname=b"libx.so", symbols=[(long, True)] * 300)
    whl = tmp_path / "loud-1.0-cp311-cp311-manylinux_2_28_x86_64.whl"
    whl.write_bytes(tiny_wheel([("pkg/libx.so", lib)], dist="loud-1.0"))
    report = tmp_path / "report.txt"
    p = wheelaudit("inspect", str(whl), "--symbols", "--output", str(report))
    assert p.returncode == 0 and p.stderr.count("the report is cut") == 1, p.stderr
    size = report.stat().st_size
    assert 256 << 20 <= size < (256 << 20) + 4096
    with open(report, "rb") as fh:
        fh.seek(size - 200)
        assert b"[the report is cut after 268,435,456 characters" in fh.read()
    report.unlink()
