"""rules/executorch.toml does the job of ExecuTorch's test_shared_libraries.py (issue #25):
its tables map one to one onto the ruleset, docs/executorch-parity.md names only rules that
exist, and the rules the table claims catch what they claim, on wheels built here (ELF facts,
and Windows PE DLLs built with MinGW-w64 for the monolithic Windows layout)."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.tags import parse_tag

from wheelaudit import audit_wheels
from wheelaudit.platforms.traits import traits_from_tags
from wheelaudit.model.binary import Binary, Dependency, Rpath, Slice, Symbol
from wheelaudit.ruleset.load import load_rules
from wheelaudit.scanner import Wheel

ROOT = Path(__file__).resolve().parent.parent
EXECUTORCH = ROOT / "rules" / "executorch.toml"
PARITY_DOC = ROOT / "docs" / "executorch-parity.md"
LINUX = "cp311-cp311-manylinux_2_28_x86_64"

# ExecuTorch's own tables (shared/notes/executorch.md §3): _OWNED_COMPONENTS' rows -> owner base
OWNED_COMPONENTS = {
    "backend registry": "libexecutorch", "platform layer": "libexecutorch", "operator registry": "libexecutorch",
    "thread pool": "libexecutorch_threadpool", "profiler": "libexecutorch_etdump",
    "XNNPACK delegate": "libexecutorch_backend_xnnpack", "set of CPU kernels": "libexecutorch_kernels_optimized",
    "set of quantized kernels": "libexecutorch_kernels_quantized", "CUDA delegate": "libexecutorch_backend_cuda",
    "CUDA stream helper": "libexecutorch_extension_cuda", "AOTI shim layer": "libaoti_cuda_shims",
    "bundled thread pool implementation": "libexecutorch_threadpool",
    "bundled XNNPACK runtime": "libexecutorch_backend_xnnpack",
    "OpenVINO delegate": "libexecutorch_backend_openvino", "Qualcomm delegate": "libexecutorch_backend_qnn",
}
# ... and the rule that stands for each
ROW_TO_RULE = {
    "backend registry": "backend_registry", "platform layer": "platform_layer", "operator registry": "operator_registry",
    "thread pool": "thread_pool", "profiler": "profiler", "XNNPACK delegate": "backend_xnnpack",
    "set of CPU kernels": "cpu_kernels", "set of quantized kernels": "quantized_kernels",
    "CUDA delegate": "backend_cuda", "CUDA stream helper": "extension_cuda", "AOTI shim layer": "aoti_cuda_shims",
    "bundled thread pool implementation": "threadpool_impl", "bundled XNNPACK runtime": "xnnpack_runtime",
    "OpenVINO delegate": "backend_openvino", "Qualcomm delegate": "backend_qnn",
}
KNOWN_NAMES = ("libexecutorch", "libexecutorch_kernels_optimized", "libexecutorch_kernels_quantized",
               "libexecutorch_backend_cuda", "libexecutorch_extension_cuda", "libextension_cuda",
               "libexecutorch_backend_xnnpack", "libexecutorch_backend_openvino", "libexecutorch_backend_qnn",
               "libexecutorch_threadpool", "libexecutorch_etdump")
# the wheel's CMake config: _executorch_define_component(name library) (and the runtime), 1.5.1
CMAKE_COMPONENTS = {"runtime": "executorch", "threadpool": "executorch_threadpool",
                    "kernels_optimized": "executorch_kernels_optimized",
                    "kernels_quantized": "executorch_kernels_quantized", "kernels_torchao": "executorch_kernels_torchao",
                    "etdump": "executorch_etdump", "backend_xnnpack": "executorch_backend_xnnpack",
                    "backend_openvino": "executorch_backend_openvino", "backend_cuda": "executorch_backend_cuda",
                    "extension_cuda": "executorch_extension_cuda", "backend_qnn": "executorch_backend_qnn",
                    "backend_mlx": "executorch_backend_mlx", "backend_coreml": "executorch_backend_coreml"}


@pytest.fixture(scope="module")
def rules():
    return load_rules(EXECUTORCH)


def test_owned_components_map_one_to_one(rules):
    names = {c.name for c in rules.components}
    assert len(set(ROW_TO_RULE.values())) == len(OWNED_COMPONENTS)
    for row, rule in ROW_TO_RULE.items():
        comp = rules.component(rule)
        assert comp is not None, row
        base = OWNED_COMPONENTS[row]
        for suffix in ("so", "dylib"):
            hits = [f"executorch/{d}/{base}.{suffix}" for d in ("lib", "backends/cuda")
                    if comp.owner.match(f"executorch/{d}/{base}.{suffix}")]
            assert hits, (row, comp.owner.pattern)
    # the rows ExecuTorch added later (#22184, #22202) and the Apple twin of the thread-pool row
    extra = names - set(ROW_TO_RULE.values())
    assert {n for n in extra if not n.endswith("_windows")} == {
        "threadpool_impl_apple", "backend_mlx", "mlx_runtime", "backend_coreml"}


def test_known_names_and_cmake_components_are_expected_names(rules):
    expected = rules.libraries.expected
    for base in KNOWN_NAMES:
        for suffix in ("so", "dylib"):
            assert any(g.match(f"executorch/lib/{base}.{suffix}") for g in expected), base
    for lib in CMAKE_COMPONENTS.values():
        assert any(g.match(f"executorch/lib/lib{lib}.so") for g in expected), lib
    # a junk versioned name is not expected (a prefix test would let it through)
    assert not any(g.match("executorch/lib/libexecutorch.so.old.so.1") for g in expected)


def test_the_parity_table_names_only_rules_that_exist(rules):
    text = PARITY_DOC.read_text()
    names = {c.name for c in rules.components} | {b.name for b in rules.binaries} | {
        f.name for f in rules.files} | {m.name for m in rules.metadata}
    cited = set(re.findall(r"`(?:component|binary|file|metadata):([a-z][\w-]*)`", text))
    assert cited, "the table cites rules as `component:NAME`, `binary:NAME`, ..."
    assert cited - names == set()
    # every rule of the ruleset's components and binaries is cited somewhere
    assert {c.name for c in rules.components if not c.name.endswith("_windows")} <= cited


# --------------------------------------------------------------------------------------------
# The rules do what the table claims (facts of ELF binaries)


def elf(path, needed=(), exports=(), runpath=("$ORIGIN",)) -> Binary:
    return Binary(path=path, format="elf", size=1, slices=[Slice(
        arch="x86_64", identity=path.rsplit("/", 1)[-1], dependencies=[Dependency(n) for n in needed],
        rpaths=[Rpath(r, "runpath") for r in runpath], exports=[Symbol(n) for n in exports])])


def wheel(libs, version="1.5.1") -> Wheel:
    tags = sorted(parse_tag(LINUX), key=str)
    return Wheel(path=Path(f"executorch-{version}-{LINUX}.whl"), name="executorch", version=version,
                 tags=[str(t) for t in tags], traits=traits_from_tags(tags, version),
                 files=[b.path for b in libs], libraries=libs, requires_dist=["torch"])


LIB = "executorch/lib"
EXT = "executorch/extension/pybindings/_C.cpython-311-x86_64-linux-gnu.so"
RUNTIME = [f"{LIB}/libexecutorch.so", f"{LIB}/libexecutorch_threadpool.so",
           f"{LIB}/libexecutorch_kernels_quantized.so", f"{LIB}/libexecutorch_backend_openvino.so"]


def wa403(report):
    return [f for f in report.findings if f.code == "WA403"]


def test_extension_needs_every_lib_library_but_the_quantized_kernels(rules):
    libs = [elf(p) for p in RUNTIME]
    needs = ["libexecutorch.so", "libexecutorch_threadpool.so", "libexecutorch_backend_openvino.so"]
    ok = elf(EXT, needs, runpath=["$ORIGIN/../../lib"])
    assert wa403(audit_wheels([wheel([ok, *libs])], rules, select=["WA403"])) == []
    lost = elf(EXT, needs[:2], runpath=["$ORIGIN/../../lib"])
    [f] = wa403(audit_wheels([wheel([lost, *libs])], rules, select=["WA403"]))
    assert f.subject == "python_extension" and f"{LIB}/libexecutorch_backend_openvino.so" in f.paths
    quant = elf(EXT, needs + ["libexecutorch_kernels_quantized.so"], runpath=["$ORIGIN/../../lib"])
    [f] = wa403(audit_wheels([wheel([quant, *libs])], rules, select=["WA403"]))
    assert "libexecutorch_kernels_quantized.so, which it must not" in f.message


def test_the_runtime_libraries_never_load_torch(rules):
    ext = elf(EXT, ["libexecutorch.so", "libexecutorch_threadpool.so", "libexecutorch_backend_openvino.so"],
              runpath=["$ORIGIN/../../lib"])
    libs = [elf(p) for p in RUNTIME[1:]] + [elf(RUNTIME[0], ["libtorch_cpu.so", "libc10.so"])]
    fs = wa403(audit_wheels([wheel([ext, *libs])], rules, select=["WA403"]))
    assert {f.subject for f in fs} == {"runtime_libraries"} and {tuple(f.paths) for f in fs} == {(RUNTIME[0],)}
    assert {"libtorch_cpu.so", "libc10.so"} <= {d for f in fs for d in re.findall(r"lib\w+\.so", f.message)}


# --------------------------------------------------------------------------------------------
# Windows: the monolithic _C.pyd, its components evidenced by strings; a planted second copy


def _mingw():
    gcc = shutil.which("x86_64-w64-mingw32-gcc")
    if gcc is None:
        pytest.fail("MinGW-w64 missing (x86_64-w64-mingw32-gcc); install it with: apt-get install mingw-w64",
                    pytrace=False)
    return gcc


def _dll(tmp: Path, name: str, strings: list[str], export: str) -> Path:
    """A PE DLL built by MinGW-w64 whose data carries ``strings`` and which exports ``export``."""
    src = tmp / f"{name}.c"
    body = ",\n".join(json.dumps(s) for s in strings)
    src.write_text(f"static const char *const strings[] = {{\n{body}\n}};\n"
                   f"__declspec(dllexport) const char *const *{export}(void) {{ return strings; }}\n")
    out = tmp / name
    subprocess.run([_mingw(), "-O1", "-shared", "-s", "-o", str(out), str(src)], check=True)
    return out


def _windows_wheel(tmp: Path, members: dict[str, Path], name: str) -> Path:
    sys.path.insert(0, str(ROOT / "fixtures"))
    try:
        import make_wheels
    finally:
        sys.path.remove(str(ROOT / "fixtures"))
    return make_wheels.write_wheel(tmp / name / make_wheels.wheel_name("cp311-cp311-win_amd64"), members,
                                   "cp311-cp311-win_amd64")


def _check(path: Path) -> dict:
    proc = subprocess.run([sys.executable, "-m", "wheelaudit", "check", str(path), "--rules", str(EXECUTORCH),
                           "--format", "json", "--select", "WA1,WA2,WA3,WA4"], capture_output=True, text=True)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def test_windows_monolithic_extension_passes_and_a_planted_copy_fails(tmp_path, rules):
    windows = [c for c in rules.components if c.name.endswith("_windows")]
    every = [s.decode() for c in windows for s in c.strings]
    ext = _dll(tmp_path, "_C.cp311-win_amd64.pyd", every, "PyInit__C")
    members = {"executorch/extension/pybindings/_C.cp311-win_amd64.pyd": ext}
    clean = _check(_windows_wheel(tmp_path, members, "clean"))
    assert clean["wheels"][0]["findings"] == [], clean["wheels"][0]["findings"]
    # a second DLL carrying the runtime's registry and platform layer: two registries in the process
    runtime = [s.decode() for c in windows if c.name in ("backend_registry_windows", "platform_layer_windows")
               for s in c.strings]
    copy = _dll(tmp_path, "runtime_copy.dll", runtime, "et_copy")
    planted = dict(members, **{"executorch/backends/xnnpack/runtime_copy.dll": copy})
    report = _check(_windows_wheel(tmp_path, planted, "planted"))
    found = sorted((f["code"], f["subject"]) for f in report["wheels"][0]["findings"])
    assert found == [("WA201", "backend_registry_windows"), ("WA201", "platform_layer_windows")]
    assert all("executorch/backends/xnnpack/runtime_copy.dll" in f["paths"] for f in report["wheels"][0]["findings"])
    # the extension without the delegate: a required component missing
    no_xnn = [s.decode() for c in windows if c.name != "backend_xnnpack_windows" for s in c.strings]
    lean = {"executorch/extension/pybindings/_C.cp311-win_amd64.pyd": _dll(tmp_path, "lean.pyd", no_xnn, "PyInit__C")}
    report = _check(_windows_wheel(tmp_path, lean, "lean"))
    assert [(f["code"], f["subject"]) for f in report["wheels"][0]["findings"]] == [("WA204", "backend_xnnpack_windows")]
