"""Optional extension modules: a load error (WA501, WA505) of a module the package imports only
where a failed import is caught is a warning (numba's tbbpool/omppool threading layers).

The CLI runs on wheels built here: an extension module compiled with gcc that needs
``libmissing.so.1``, which no wheel ships, beside Python sources that import it in different
ways. The import analysis itself is checked through its public function on sources alone.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from wheelaudit.archive.import_guards import module_name, optional_modules

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
WHEELAUDIT = shutil.which("wheelaudit", path=str(Path(sys.executable).parent)) or shutil.which("wheelaudit")
TAG = "cp311-cp311-manylinux_2_28_x86_64"
MODULE = "opt/_pool.cpython-311-x86_64-linux-gnu.so"


@pytest.fixture(scope="session")
def pool_module(tmp_path_factory) -> bytes:
    """An extension module (PyInit__pool) that needs libmissing.so.1."""
    if shutil.which("gcc") is None:
        pytest.fail("gcc is needed (scripts/setup.sh installs it)", pytrace=False)
    d = tmp_path_factory.mktemp("optional_build")
    (d / "missing.c").write_text("int missing_work(int x) { return x + 1; }\n")
    (d / "pool.c").write_text("int missing_work(int);\nvoid *PyInit__pool(void) { return (void *)(long)missing_work(1); }\n")
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", "libmissing.so", "-Wl,-soname,libmissing.so.1", "missing.c"],
                   cwd=d, check=True)
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", "_pool.so", "pool.c", "-L.", "-lmissing"], cwd=d, check=True)
    return (d / "_pool.so").read_bytes()


def _wheel(tmp_path: Path, pool: bytes, sources: dict[str, str]) -> Path:
    sys.path.insert(0, str(FIXTURES))
    try:
        from make_wheels import write_dist_wheel
    finally:
        sys.path.remove(str(FIXTURES))
    members = {MODULE: pool, "opt/__init__.py": b""}
    members.update({k: textwrap.dedent(v).encode() for k, v in sources.items()})
    meta = b"Metadata-Version: 2.1\nName: opt\nVersion: 1.0\n\n"
    return write_dist_wheel(tmp_path / f"opt-1.0-{TAG}.whl", members, TAG, "opt", "1.0", meta)



def _check(wheel: Path, *more: str) -> tuple[int, list[dict]]:
    assert WHEELAUDIT, "the wheelaudit command is not installed beside this Python"
    p = subprocess.run([WHEELAUDIT, "check", str(wheel), *more, "--select", "WA501", "--format", "json"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode in (0, 1), p.stderr
    return p.returncode, [f for w in json.loads(p.stdout)["wheels"] for f in w["findings"]]


GUARDED = """\
    try:
        from opt import _pool
    except ImportError:
        _pool = None
"""


def test_a_module_imported_only_under_a_guard_is_a_warning(tmp_path, pool_module):
    code, found = _check(_wheel(tmp_path, pool_module, {"opt/threads.py": GUARDED}))
    assert code == 0
    [f] = found
    assert f["severity"] == "warning" and f["subject"] == "libmissing.so.1"
    assert "optional" in f["message"] and "opt/threads.py:2" in f["message"]


@pytest.mark.parametrize("other", [
    "from opt import _pool\n",  # at module level elsewhere
    "def start():\n    from opt._pool import run\n",  # unguarded, in a function
    "try:\n    from opt import _pool\nexcept ImportError:\n    raise RuntimeError('no pool')\n",  # raises again
    "try:\n    from opt import _pool\nexcept ModuleNotFoundError:\n    pass\n",  # a failed load is no MNFE
])
def test_one_unguarded_import_keeps_the_error(tmp_path, pool_module, other):
    code, found = _check(_wheel(tmp_path, pool_module, {"opt/threads.py": GUARDED, "opt/api.py": other}))
    assert code == 1
    [f] = found
    assert f["severity"] == "error" and "optional" not in f["message"]


def test_together_each_module_is_judged_by_its_own_wheel(tmp_path, pool_module):
    sys.path.insert(0, str(FIXTURES))
    try:
        from make_wheels import write_dist_wheel
    finally:
        sys.path.remove(str(FIXTURES))
    other = write_dist_wheel(tmp_path / "b" / "other-2.0-py3-none-any.whl", {"other/__init__.py": b"x = 1\n"},
                             "py3-none-any", "other", "2.0", b"Metadata-Version: 2.1\nName: other\nVersion: 2.0\n\n")
    guarded = _wheel(tmp_path / "a", pool_module, {"opt/threads.py": GUARDED})
    code, found = _check(guarded, str(other), "--together")
    assert code == 0 and [f["severity"] for f in found] == ["warning"] and "opt/threads.py:2" in found[0]["message"]


def test_a_module_nothing_imports_keeps_the_error(tmp_path, pool_module):
    # (users or native code import it: nothing says the package can do without it)
    code, found = _check(_wheel(tmp_path, pool_module, {"opt/threads.py": "import os\n"}))
    assert code == 1 and found[0]["severity"] == "error"


# ---- the import analysis, on sources alone -----------------------------------------------------

def _optional(sources: dict[str, str], modules=(MODULE,)) -> dict[str, str]:
    texts = {k: textwrap.dedent(v) for k, v in sources.items()}
    return {m: str(g) for m, g in optional_modules(list(modules), list(texts), texts.get).items()}


def test_module_names():
    assert module_name(MODULE) == "opt._pool"
    assert module_name("numba/np/ufunc/tbbpool.cp311-win_amd64.pyd") == "numba.np.ufunc.tbbpool"
    assert module_name("opt-1.0.data/platlib/x.so") is None


@pytest.mark.parametrize("source", [
    GUARDED,
    "try:\n    from . import _pool\nexcept ImportError:\n    pass\n",
    "try:\n    from ._pool import run\nexcept (OSError, ImportError):\n    run = None\n",
    "try:\n    import opt._pool as p\nexcept Exception:\n    p = None\n",
    "try:\n    import opt._pool\nexcept:\n    pass\n",
    "import importlib\ntry:\n    m = importlib.import_module('opt._pool')\nexcept ImportError:\n    m = None\n",
    "import contextlib\nwith contextlib.suppress(ImportError):\n    from opt import _pool\n",
    "def backend(name):\n    if name == 'pool':\n        try:\n            from opt import _pool as lib\n"
    "        except ImportError:\n            lib = None\n        return lib\n",
])
def test_guarded_imports(source):
    assert list(_optional({"opt/threads.py": source})) == [MODULE]


@pytest.mark.parametrize("source", [
    "from opt import _pool\n",
    "import opt._pool\n",
    "from ._pool import run\n",
    "if True:\n    from opt import _pool\n",
    "try:\n    pass\nexcept ImportError:\n    from opt import _pool\n",  # in the handler: unguarded
    "try:\n    from opt import _pool\nexcept ImportError as e:\n    raise\n",
    "try:\n    from opt import _pool\nexcept OSError:\n    pass\n",
    "try:\n    from opt import _pool\nfinally:\n    pass\n",
    "this is not python (\n" + "_pool\n",  # unreadable: its imports cannot be judged
])
def test_unguarded_imports(source):
    assert _optional({"opt/threads.py": GUARDED, "opt/x.py": source}) == {}


def test_a_mention_that_is_no_import_does_not_count():
    assert _optional({"opt/threads.py": GUARDED, "opt/doc.py": "'''_pool is the thread pool'''\n_pool = 1\n"}) \
        == {MODULE: "opt/threads.py:2"}


def test_another_module_of_the_same_name_elsewhere_does_not_count():
    assert _optional({"opt/threads.py": GUARDED, "other/x.py": "from other import _pool\n"}) == {MODULE: "opt/threads.py:2"}


def test_a_wheel_of_countless_sources_is_judged_quickly_and_keeps_its_errors():
    # (hostile: thousands of files with guarded imports; past the bounds nothing counts as optional)
    from wheelaudit.archive.import_guards import MAX_PARSED

    many = {f"opt/m{i}.py": GUARDED for i in range(MAX_PARSED + 5)}
    assert _optional(many) == {}
    assert _optional(dict(list(many.items())[:3])) == {MODULE: "opt/m0.py:2"}
