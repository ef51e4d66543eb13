"""Linkage: dependency resolution as the loaders do it (WA501), rpath hygiene (WA502),
provided-by and Requires-Dist (WA505), and that check_linkage also returns WA503/WA504.

Hand-built wheels (facts.py dataclasses) pin each loader rule both ways; the fixture wheels
(tests/conftest.py) show the same on real ELF and Mach-O binaries.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from packaging.tags import parse_tag

from wheelaudit.platforms.traits import traits_from_tags
from wheelaudit.model.binary import Binary, Dependency, Rpath, Slice
from wheelaudit.model.globs import Glob
from wheelaudit.checks.linkage import check_linkage
from wheelaudit.checks.resolution import resolution_table, resolve_wheel
from wheelaudit.ruleset.model import LinkageRule
from wheelaudit.model.wheel import Wheel
from wheelaudit.scanner import scan

LINUX = "cp311-cp311-manylinux_2_28_x86_64"
MAC = "cp311-cp311-macosx_11_0_arm64"


# --------------------------------------------------------------------------------------------
# helpers


def make_wheel(tag: str, libs: list[Binary], requires: tuple[str, ...] = ()) -> Wheel:
    tags = sorted(parse_tag(tag), key=str)
    return Wheel(path=Path(f"demo-1.0-{tag}.whl"), name="demo", version="1.0", tags=[str(t) for t in tags],
                 traits=traits_from_tags(tags, "1.0"), files=[b.path for b in libs], libraries=libs,
                 requires_dist=list(requires))


def elf(path: str, needed=(), runpath=None, rpath=None, soname=None, arch="x86_64") -> Binary:
    rp = [Rpath(e, "rpath") for e in (rpath or [])] + [Rpath(e, "runpath") for e in (runpath or [])]
    return Binary(path=path, format="elf", size=100, slices=[Slice(
        arch=arch, identity=soname, dependencies=[Dependency(n, "needed") for n in needed], rpaths=rp)])


def mslice(arch="arm64", deps=(), rpaths=(), identity=None, minos="11.0") -> Slice:
    ds = [Dependency(d, "load") if isinstance(d, str) else Dependency(*d) for d in deps]
    return Slice(arch=arch, identity=identity, dependencies=ds, rpaths=[Rpath(r, "lc_rpath") for r in rpaths],
                 min_os=minos)


def macho(path: str, deps=(), rpaths=(), identity="auto", kind="shared", slices=None) -> Binary:
    if identity == "auto":
        identity = f"@rpath/{path.rsplit('/', 1)[-1]}" if kind == "shared" else None
    sl = slices if slices is not None else [mslice(deps=deps, rpaths=rpaths, identity=identity)]
    return Binary(path=path, format="macho", size=100, kind=kind, slices=sl)


def rule(**kw) -> LinkageRule:
    conv = {}
    for k, v in kw.items():
        if k == "provided_by":
            conv[k] = {d: [Glob(g, cross_slash=True) for g in gs] for d, gs in v.items()}
        elif k == "check":
            conv[k] = v
        else:
            conv[k] = [Glob(g, cross_slash=True) for g in v]
    return LinkageRule(**conv)


def codes(findings) -> list[str]:
    return sorted(f.code for f in findings)


def only(findings, code: str):
    got = [f for f in findings if f.code == code]
    assert len(got) == 1, [f"{f.code} {f.message}" for f in findings]
    return got[0]


def where(wheel: Wheel, path: str, dep: str, arch: str | None = None, lrule=None):
    table = resolution_table(wheel, lrule) if lrule is not None else resolution_table(wheel)
    per_arch = table[path]
    return per_arch[arch or next(iter(per_arch))][dep]


TORCH = dict(provided_by={"torch": ["libtorch*", "libc10*"]})


# --------------------------------------------------------------------------------------------
# ELF


def test_elf_origin_runpath_resolves_a_sibling():
    w = make_wheel(LINUX, [elf("pkg/_ext.so", ["libfoo.so.1", "libc.so.6"], runpath=["$ORIGIN/lib"]),
                           elf("pkg/lib/libfoo.so.1", soname="libfoo.so.1")])
    assert check_linkage(w, None) == []
    assert where(w, "pkg/_ext.so", "libfoo.so.1") == "pkg/lib/libfoo.so.1"
    assert where(w, "pkg/_ext.so", "libc.so.6") == "external: libc.so.6"


def test_elf_braced_origin():
    w = make_wheel(LINUX, [elf("pkg/_ext.so", ["libfoo.so"], runpath=["${ORIGIN}/../pkg.libs"]),
                           elf("pkg.libs/libfoo.so")])
    assert where(w, "pkg/_ext.so", "libfoo.so") == "pkg.libs/libfoo.so"
    assert check_linkage(w, None) == []


def test_elf_missing_library_is_wa501_naming_the_paths_tried():
    w = make_wheel(LINUX, [elf("pkg/_ext.so", ["libfoo.so.1"], runpath=["$ORIGIN/lib", "$ORIGIN/../other"])])
    f = only(check_linkage(w, None), "WA501")
    assert f.subject == "libfoo.so.1" and f.paths == ["pkg/_ext.so"] and f.rule == "linkage"
    assert "libfoo.so.1" in f.message
    assert "pkg/lib/libfoo.so.1" in f.message and "other/libfoo.so.1" in f.message
    assert "manylinux_2_28" in f.message  # which externals were allowed
    assert where(w, "pkg/_ext.so", "libfoo.so.1") is None


def test_elf_runpath_shadows_rpath():
    shadowed = make_wheel(LINUX, [elf("pkg/a.so", ["libb.so"], runpath=["$ORIGIN/../nowhere"], rpath=["$ORIGIN"]),
                                  elf("pkg/libb.so")])
    f = only(check_linkage(shadowed, None), "WA501")
    assert "pkg/../nowhere" not in f.message and "nowhere/libb.so" in f.message
    assert "DT_RPATH" in f.message and "ignored" in f.message and "pkg/libb.so" in f.message
    # the same DT_RPATH without a DT_RUNPATH is used
    plain = make_wheel(LINUX, [elf("pkg/a.so", ["libb.so"], rpath=["$ORIGIN"]), elf("pkg/libb.so")])
    assert check_linkage(plain, None) == []


def test_elf_lib_and_platform_are_expanded():
    w = make_wheel(LINUX, [elf("pkg/_ext.so", ["libfoo.so", "libbar.so"], runpath=["$ORIGIN/$LIB", "$ORIGIN/$PLATFORM"]),
                           elf("pkg/lib64/libfoo.so"), elf("pkg/x86_64/libbar.so")])
    assert where(w, "pkg/_ext.so", "libfoo.so") == "pkg/lib64/libfoo.so"
    assert where(w, "pkg/_ext.so", "libbar.so") == "pkg/x86_64/libbar.so"
    assert check_linkage(w, None) == []
    missing = make_wheel(LINUX, [elf("pkg/_ext.so", ["libnone.so"], runpath=["$ORIGIN/$LIB"])])
    f = only(check_linkage(missing, None), "WA501")
    assert "$LIB as lib)" in f.message and "$LIB as lib64)" in f.message
    assert "pkg/lib/libnone.so" in f.message and "pkg/lib64/libnone.so" in f.message


def test_elf_needed_with_a_slash_is_unknowable():
    w = make_wheel(LINUX, [elf("pkg/_ext.so", ["lib/libfoo.so"], runpath=["$ORIGIN"]), elf("pkg/lib/libfoo.so")])
    f = only(check_linkage(w, None), "WA501")
    assert "current directory" in f.message and "unknowable" in f.message


def test_elf_soname_match_within_a_searched_directory():
    w = make_wheel(LINUX, [elf("pkg/_ext.so", ["libfoo.so.1"], runpath=["$ORIGIN"]),
                           elf("pkg/libfoo.so.1.2.3", soname="libfoo.so.1")])
    # ld.so opens file names: a library renamed with its SONAME kept is not found (ExecuTorch's
    # own release check catches this; `ldd` says "not found")
    assert where(w, "pkg/_ext.so", "libfoo.so.1") is None
    assert only(check_linkage(w, None), "WA501").subject == "libfoo.so.1"
    # a library with that name elsewhere in the wheel, off the search path, does not count
    off = make_wheel(LINUX, [elf("pkg/_ext.so", ["libfoo.so.1"], runpath=["$ORIGIN"]),
                             elf("other/libfoo.so.1", soname="libfoo.so.1")])
    assert codes(check_linkage(off, None)) == ["WA501"]


def test_elf_no_search_path_at_all():
    w = make_wheel(LINUX, [elf("pkg/_ext.so", ["libfoo.so"]), elf("pkg/libfoo.so")])
    f = only(check_linkage(w, None), "WA501")
    assert "no DT_RUNPATH or DT_RPATH" in f.message


def test_elf_paths_leaving_the_wheel_are_outside_and_need_provided_by():
    ext = elf("pkg/sub/_ext.so", ["libacme.so"], runpath=["$ORIGIN/../../../acme/lib"])
    w = make_wheel(LINUX, [ext], requires=("acme>=2",))
    f = only(check_linkage(w, None), "WA501")
    assert "outside the wheel" in f.message
    acme = rule(provided_by={"acme": ["libacme*"]})
    assert check_linkage(w, acme) == []
    assert where(w, "pkg/sub/_ext.so", "libacme.so", lrule=acme) == "provided-by: acme"


def test_elf_dt_rpath_of_the_loader_is_inherited():
    # A has no search path of its own; B loads A and carries DT_RPATH $ORIGIN/deps, which finds C
    a = elf("pkg/lib/liba.so", ["libc_.so"], soname="liba.so")
    b = elf("pkg/lib/_b.so", ["liba.so"], rpath=["$ORIGIN", "$ORIGIN/deps"])
    c = elf("pkg/lib/deps/libc_.so")
    w = make_wheel(LINUX, [a, b, c])
    assert where(w, "pkg/lib/liba.so", "libc_.so") == "pkg/lib/deps/libc_.so"
    assert check_linkage(w, None) == []
    # a loader's DT_RUNPATH is not inherited
    b2 = elf("pkg/lib/_b.so", ["liba.so"], runpath=["$ORIGIN", "$ORIGIN/deps"])
    w2 = make_wheel(LINUX, [a, b2, c])
    f = only(check_linkage(w2, None), "WA501")
    assert f.paths == ["pkg/lib/liba.so"] and f.subject == "libc_.so"


def test_elf_default_externals_follow_the_lowest_manylinux_policy():
    ext = elf("pkg/_ext.so", ["libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1", "libexpat.so.1",
                              "ld-linux-x86-64.so.2"])
    assert check_linkage(make_wheel("cp311-cp311-manylinux2014_x86_64", [ext]), None) == []
    # manylinux1's allowlist has no libexpat; a wheel tagged both must pass the lowest
    w = make_wheel("cp311-cp311-manylinux1_x86_64.manylinux2014_x86_64", [ext])
    f = only(check_linkage(w, None), "WA501")
    assert "libexpat.so.1" in f.message and "manylinux_2_5" in f.message


def test_elf_libpython_is_not_an_allowed_external():
    w = make_wheel(LINUX, [elf("pkg/_ext.so", ["libpython3.11.so.1.0"])])
    assert "libpython3.11.so.1.0" in only(check_linkage(w, None), "WA501").message


def test_musllinux_defaults():
    ext = elf("pkg/_ext.so", ["libc.so", "libz.so.1", "ld-musl-x86_64.so.1", "libc.musl-x86_64.so.1"])
    assert check_linkage(make_wheel("cp311-cp311-musllinux_1_2_x86_64", [ext]), None) == []
    glibc = elf("pkg/_ext.so", ["libc.so.6"])
    assert codes(check_linkage(make_wheel("cp311-cp311-musllinux_1_2_x86_64", [glibc]), None)) == ["WA501"]


def test_allow_external_matches_basename_and_full_path():
    ext = elf("pkg/_ext.so", ["libopenblas.so.0", "/opt/vendor/lib/libv.so"])
    w = make_wheel(LINUX, [ext])
    assert codes(check_linkage(w, None)) == ["WA501", "WA501"]
    r = rule(allow_external=["libopenblas.so.*", "/opt/vendor/*"])
    assert check_linkage(w, r) == []
    assert where(w, "pkg/_ext.so", "libopenblas.so.0", lrule=r) == "external: libopenblas.so.0"


def test_data_scheme_platlib_lands_in_the_root():
    w = make_wheel(LINUX, [elf("demo-1.0.data/platlib/pkg/_ext.so", ["libfoo.so"], runpath=["$ORIGIN/../pkg.libs"]),
                           elf("pkg.libs/libfoo.so")])
    assert where(w, "demo-1.0.data/platlib/pkg/_ext.so", "libfoo.so") == "pkg.libs/libfoo.so"
    assert check_linkage(w, None) == []


# --------------------------------------------------------------------------------------------
# Mach-O


def test_macho_loader_path():
    w = make_wheel(MAC, [macho("pkg/_ext.so", ["@loader_path/libb.dylib", "/usr/lib/libSystem.B.dylib"], kind="bundle"),
                         macho("pkg/libb.dylib")])
    assert where(w, "pkg/_ext.so", "@loader_path/libb.dylib") == "pkg/libb.dylib"
    assert where(w, "pkg/_ext.so", "/usr/lib/libSystem.B.dylib") == "external: /usr/lib/libSystem.B.dylib"
    assert check_linkage(w, None) == []
    bad = make_wheel(MAC, [macho("pkg/_ext.so", ["@loader_path/libnone.dylib"], kind="bundle")])
    f = only(check_linkage(bad, None), "WA501")
    assert "pkg/libnone.dylib" in f.message and "@loader_path" in f.message


def test_macho_rpath_through_own_lc_rpath():
    w = make_wheel(MAC, [macho("pkg/_ext.so", ["@rpath/libb.dylib"], ["@loader_path/.dylibs"], kind="bundle"),
                         macho("pkg/.dylibs/libb.dylib")])
    assert where(w, "pkg/_ext.so", "@rpath/libb.dylib") == "pkg/.dylibs/libb.dylib"
    assert check_linkage(w, None) == []


def test_macho_rpath_resolves_only_through_the_loading_image():
    # A has no LC_RPATH; _C loads A and has an LC_RPATH (relative to _C) that finds B
    a = macho("pkg/lib/liba.dylib", ["@rpath/libb.dylib"])
    c = macho("pkg/ext/_C.so", ["@rpath/liba.dylib"], ["@loader_path/../lib"], kind="bundle")
    b = macho("pkg/lib/libb.dylib")
    w = make_wheel(MAC, [a, b, c])
    assert where(w, "pkg/lib/liba.dylib", "@rpath/libb.dylib") == "pkg/lib/libb.dylib"
    assert check_linkage(w, None) == []
    # without the loader, nothing finds B
    alone = make_wheel(MAC, [a, b])
    f = only(check_linkage(alone, None), "WA501")
    assert f.paths == ["pkg/lib/liba.dylib"] and "no LC_RPATH" in f.message


def test_macho_rpath_chain_is_transitive_and_loader_path_is_the_carriers():
    # _C -> M -> A; only _C has an LC_RPATH; its @loader_path is _C's directory, not A's
    a = macho("pkg/deep/x/liba.dylib", ["@rpath/libb.dylib"])
    m = macho("pkg/mid/libm.dylib", ["@rpath/liba.dylib"])
    c = macho("pkg/_C.so", ["@rpath/libm.dylib"], ["@loader_path/mid", "@loader_path/deep/x", "@loader_path/b"],
              kind="bundle")
    b = macho("pkg/b/libb.dylib")
    w = make_wheel(MAC, [a, m, c, b])
    assert where(w, "pkg/deep/x/liba.dylib", "@rpath/libb.dylib") == "pkg/b/libb.dylib"
    assert check_linkage(w, None) == []
    # an @loader_path/b in A itself would mean pkg/deep/x/b: not there
    a2 = macho("pkg/deep/x/liba.dylib", ["@rpath/libb.dylib"], ["@loader_path/b"])
    lone = make_wheel(MAC, [a2, b])
    f = only(check_linkage(lone, None), "WA501")
    assert "pkg/deep/x/b/libb.dylib" in f.message


def test_macho_executable_path_is_unknowable():
    w = make_wheel(MAC, [macho("pkg/_ext.so", ["@executable_path/../lib/libpython3.11.dylib"], kind="bundle")])
    f = only(check_linkage(w, None), "WA501")
    assert "@executable_path" in f.message and "unknowable" in f.message
    assert where(w, "pkg/_ext.so", "@executable_path/../lib/libpython3.11.dylib") is None


def test_macho_absolute_paths():
    deps = ["/usr/lib/libc++.1.dylib", "/System/Library/Frameworks/Metal.framework/Versions/A/Metal",
            "/usr/local/lib/libomp.dylib", "/opt/homebrew/lib/libzstd.1.dylib"]
    w = make_wheel(MAC, [macho("pkg/_ext.so", deps, kind="bundle")])
    fs = check_linkage(w, None)
    assert codes(fs) == ["WA501", "WA501"]
    assert {d for f in fs for d in deps if d in f.message} == {"/usr/local/lib/libomp.dylib", "/opt/homebrew/lib/libzstd.1.dylib"}
    assert check_linkage(w, rule(allow_external=["/usr/local/lib/*", "libzstd.1.dylib"])) == []


def test_macho_absolute_rpath_to_the_system():
    w = make_wheel(MAC, [macho("pkg/_ext.so", ["@rpath/libswiftCore.dylib"], ["/usr/lib/swift"], kind="bundle")])
    assert check_linkage(w, None) == []  # neither WA501 nor WA502 for the OS's own swift directory
    assert where(w, "pkg/_ext.so", "@rpath/libswiftCore.dylib") == "external: /usr/lib/swift/libswiftCore.dylib"


def test_macho_weak_dependency_absent_is_not_an_error():
    w = make_wheel(MAC, [macho("pkg/liba.dylib", [("@rpath/libabsent.dylib", "weak")], ["@loader_path"])])
    assert check_linkage(w, None) == []
    assert where(w, "pkg/liba.dylib", "@rpath/libabsent.dylib") == "weak, absent"
    present = make_wheel(MAC, [macho("pkg/liba.dylib", [("@rpath/libabsent.dylib", "weak")], ["@loader_path"]),
                               macho("pkg/libabsent.dylib")])
    assert where(present, "pkg/liba.dylib", "@rpath/libabsent.dylib") == "pkg/libabsent.dylib"
    strong = make_wheel(MAC, [macho("pkg/liba.dylib", ["@rpath/libabsent.dylib"], ["@loader_path"])])
    assert codes(check_linkage(strong, None)) == ["WA501"]


def test_install_name_is_not_a_dependency():
    w = make_wheel(MAC, [macho("pkg/liba.dylib", [], identity="@rpath/liba.dylib")])
    assert resolution_table(w) == {"pkg/liba.dylib": {"arm64": {}}}
    assert check_linkage(w, None) == []


def test_universal_binaries_resolve_per_arch():
    a = macho("pkg/liba.dylib", slices=[
        mslice("arm64", ["@rpath/libb.dylib"], ["@loader_path"]),
        mslice("x86_64", ["@rpath/libb.dylib"], ["@loader_path/x86"], minos="10.13")])
    b = macho("pkg/libb.dylib")
    w = make_wheel("cp311-cp311-macosx_11_0_arm64", [a, b])
    t = resolution_table(w)["pkg/liba.dylib"]
    assert t["arm64"]["@rpath/libb.dylib"] == "pkg/libb.dylib"
    assert t["x86_64"]["@rpath/libb.dylib"] is None
    f = only(check_linkage(w, None), "WA501")
    assert "(x86_64 slice)" in f.message


# --------------------------------------------------------------------------------------------
# provided-by and WA505


@pytest.mark.parametrize("requires,finding", [
    (("torch>=2.5",), None),
    (("Torch",), None),  # canonicalized
    (("numpy",), "no Requires-Dist: torch"),
    (('torch; extra == "cuda"',), "only with extra cuda"),
    ((), "no Requires-Dist: torch"),
])
def test_provided_by_requires_the_distribution(requires, finding):
    ext = elf("pkg/_ext.so", ["libtorch.so", "libc10.so", "libc.so.6"], runpath=["$ORIGIN/../torch/lib"])
    w = make_wheel(LINUX, [ext], requires=requires)
    fs = check_linkage(w, rule(**TORCH))
    assert "WA501" not in codes(fs)  # a provided-by dependency is never WA501
    if finding is None:
        assert fs == []
    else:
        f = only(fs, "WA505")
        assert finding in f.message and "libtorch.so" in f.message and "libc10.so" in f.message
        assert f.subject == "pkg/_ext.so"


def test_provided_by_dist_names_are_canonicalized():
    w = make_wheel(MAC, [macho("mlx/core.so", ["@rpath/libmlx.dylib"], ["@loader_path/lib"], kind="bundle")],
                   requires=('mlx-metal==0.32.4; platform_system == "Darwin"',))
    assert check_linkage(w, None) == []  # the provider table knows mlx-metal ships libmlx.dylib
    assert check_linkage(w, rule(provided_by={"mlx_metal": ["libmlx*"]})) == []


def test_a_library_inside_the_wheel_wins_over_provided_by():
    w = make_wheel(LINUX, [elf("pkg/_ext.so", ["libc10.so"], runpath=["$ORIGIN"]), elf("pkg/libc10.so")])
    assert check_linkage(w, rule(**TORCH)) == []  # no WA505: the wheel ships it
    assert where(w, "pkg/_ext.so", "libc10.so", lrule=rule(**TORCH)) == "pkg/libc10.so"


# --------------------------------------------------------------------------------------------
# WA502


# By consequence: error where a lookup that succeeds reaches an entry a user without admin rights
# can write to; warning for every other absolute entry and for entries no lookup reaches.

@pytest.mark.parametrize("entry,severity,words", [
    ("", "error", "the current directory"),
    ("lib", "error", "the current directory"),
    ("/tmp/build/lib", "error", "any user can place files"),
    ("/var/tmp/x", "error", "any user can place files"),
    ("/dev/shm/x", "error", "any user can place files"),
    ("/home/ci/src/build", "error", "any user can place files"),
    ("/Users/runner/work/x/cmake-out/lib", "error", "any user can place files"),
    ("/opt/lib", "warning", "the loader looks there first"),
    ("/__w/executorch/build/lib", "warning", "the loader looks there first"),
    ("/usr/local/lib64", "warning", "the loader looks there first"),
    ("$ORIGIN/../cmake-out/lib", "warning", "*/cmake-out/*"),
    ("$ORIGIN/../conda_environment_123/lib", "warning", "conda_environment_"),
])
def test_rpath_reached_before_the_library_is_found(entry, severity, words):
    # NEEDED libfoo.so.1 is found in $ORIGIN, after the entry: the entry is searched first
    w = make_wheel(LINUX, [elf("pkg/_ext.so", ["libfoo.so.1"], runpath=[entry, "$ORIGIN"]), elf("pkg/libfoo.so.1")])
    f = only(check_linkage(w, None), "WA502")
    assert f.severity == severity and words in f.message and "DT_RUNPATH" in f.message, f.message
    assert f.paths == ["pkg/_ext.so"]


@pytest.mark.parametrize("entry", ["", "/tmp/build/lib", "/home/ci/build", "/opt/lib"])
def test_rpath_no_lookup_reaches_is_a_warning(entry):
    # the only NEEDED is found in $ORIGIN, which comes first: nothing searches the entry
    w = make_wheel(LINUX, [elf("pkg/_ext.so", ["libfoo.so.1"], runpath=["$ORIGIN", entry]), elf("pkg/libfoo.so.1")])
    f = only(check_linkage(w, None), "WA502")
    assert f.severity == "warning" and "no lookup" in f.message
    # libc is loaded by the interpreter before any extension: its NEEDED reaches no rpath
    w = make_wheel(LINUX, [elf("pkg/_ext.so", ["libc.so.6", "libm.so.6"], runpath=[entry])])
    f = only(check_linkage(w, None), "WA502")
    assert f.severity == "warning" and "no lookup" in f.message


def test_rpath_reached_by_a_system_library_lookup():
    # libstdc++ is not loaded by the interpreter: ld.so looks in /tmp/x before the system's copy
    w = make_wheel(LINUX, [elf("pkg/_ext.so", ["libstdc++.so.6"], runpath=["/tmp/x"])])
    f = only(check_linkage(w, None), "WA502")
    assert f.severity == "error"
    w = make_wheel(LINUX, [elf("pkg/_ext.so", ["libstdc++.so.6"], runpath=["/opt/_internal/lib"])])
    assert only(check_linkage(w, None), "WA502").severity == "warning"
    # and inspect does not claim the build path: the system's library is what loads
    assert where(w, "pkg/_ext.so", "libstdc++.so.6") == (
        "external: libstdc++.so.6 (outside the wheel; the build path /opt/_internal/lib is tried first)")


def test_rpath_on_the_route_of_an_unresolved_dependency_is_one_finding():
    w = make_wheel(LINUX, [elf("pkg/_ext.so", ["libmissing.so"], runpath=["/tmp/x"])])
    fs = check_linkage(w, None)
    assert codes(fs) == ["WA501"] and "/tmp/x/libmissing.so" in fs[0].message


def test_rpath_clean_entries_are_fine():
    w = make_wheel(LINUX, [elf("pkg/_ext.so", runpath=["$ORIGIN", "${ORIGIN}/../pkg.libs"])])
    assert check_linkage(w, None) == []
    m = make_wheel(MAC, [macho("pkg/_ext.so", rpaths=["@loader_path", "@loader_path/../lib"], kind="bundle")])
    assert check_linkage(m, None) == []


def test_rpath_one_cause_one_finding():
    # the same entries across many binaries: one finding with every binary in paths (torch's
    # /lib/intel64* entries on each of its test binaries)
    bins = [elf(f"torch/bin/test_{i}", ["libc.so.6"], runpath=["/lib/intel64", "/lib/intel64_win", "$ORIGIN/../lib"])
            for i in range(40)]
    fs = check_linkage(make_wheel(LINUX, bins), None)
    f = only(fs, "WA502")
    assert len(f.paths) == 40 and f.severity == "warning"
    assert "/lib/intel64" in f.message and "/lib/intel64_win" in f.message and "40 binaries" in f.message
    # the same entry in two slices of a universal binary is one finding
    b = macho("pkg/liba.dylib", slices=[mslice("arm64", rpaths=["/opt/x/lib"]),
                                        mslice("x86_64", rpaths=["/opt/x/lib"], minos="10.13")])
    assert codes(check_linkage(make_wheel("cp311-cp311-macosx_10_13_universal2", [b]), None)) == ["WA502"]


def test_text_output_groups_and_truncates(tmp_path):
    from wheelaudit.render.text import render_findings
    import io

    bins = [elf(f"torch/bin/test_{i}", ["libc.so.6"], runpath=["/lib/intel64"]) for i in range(40)]
    out = io.StringIO()
    render_findings("w.whl", check_linkage(make_wheel(LINUX, bins), None), out)
    text = out.getvalue()
    assert "… and 32 more" in text and text.count("    at ") == 8 and "hint: " in text


def test_allow_and_forbid_rpath():
    w = make_wheel(LINUX, [elf("pkg/_ext.so", runpath=["$ORIGIN", "/opt/vendor/lib"])])
    assert codes(check_linkage(w, None)) == ["WA502"]
    assert check_linkage(w, rule(allow_rpath=["/opt/vendor/*"])) == []
    # forbid-rpath beats allow-rpath, applies to relative entries too, and is an error
    f = only(check_linkage(w, rule(allow_rpath=["/opt/vendor/*"], forbid_rpath=["/opt/*"])), "WA502")
    assert f.severity == "error"
    rel = make_wheel(LINUX, [elf("pkg/_ext.so", runpath=["$ORIGIN/../build/lib"])])
    assert check_linkage(rel, None) == []
    f = only(check_linkage(rel, rule(forbid_rpath=["*/build/*"])), "WA502")
    assert "forbid-rpath */build/*" in f.message


def test_macho_build_machine_rpath():
    w = make_wheel(MAC, [macho("pkg/liba.dylib", rpaths=["@loader_path", "/Users/runner/work/x/cmake-out/lib"])])
    f = only(check_linkage(w, None), "WA502")
    assert "LC_RPATH" in f.message and "/Users/runner/work/x/cmake-out/lib" in f.message


# --------------------------------------------------------------------------------------------
# the entry point


def test_check_false_turns_everything_off():
    w = make_wheel("py3-none-any", [elf("pkg/_ext.so", ["libnone.so"], runpath=[""])])
    # (the empty entry is reached only by the failing lookup: one cause, one finding, the WA501)
    assert set(codes(check_linkage(w, None))) == {"WA501", "WA503"}
    assert check_linkage(w, rule(check=False)) == []


def test_check_linkage_includes_platform_findings():
    w = make_wheel(LINUX, [elf("pkg/_ext.so", arch="aarch64")])
    assert codes(check_linkage(w, None)) == ["WA503"]
    w = make_wheel(LINUX, [Binary("pkg/_ext.so", "elf", 1, slices=[Slice("x86_64", needs_versions=["GLIBC_2.34"])])])
    assert codes(check_linkage(w, None)) == ["WA504"]


def test_unreadable_binaries_are_skipped_but_still_resolve_as_files():
    broken = Binary(path="pkg/libb.so", format="elf", size=3, error="truncated")
    w = make_wheel(LINUX, [elf("pkg/_ext.so", ["libb.so"], runpath=["$ORIGIN"]), broken])
    assert check_linkage(w, None) == []
    assert "pkg/libb.so" not in resolution_table(w)


def test_resolve_wheel_reports_what_it_tried():
    w = make_wheel(LINUX, [elf("pkg/_ext.so", ["libfoo.so"], runpath=["$ORIGIN"])])
    (r,) = resolve_wheel(w)["pkg/_ext.so"]["x86_64"]
    assert r.status == "unresolved" and r.tried == ["pkg/libfoo.so (DT_RUNPATH $ORIGIN)"]


# --------------------------------------------------------------------------------------------
# fixture wheels (real binaries)


ET_RULE = rule(**TORCH)


@pytest.mark.parametrize("name", ["linux_clean", "macos_clean", "macos_universal2"])
def test_fixture_clean_wheels_have_no_linkage_findings(fixture_wheels, name):
    w = scan(fixture_wheels[name])
    assert check_linkage(w, ET_RULE) == []
    # without provided-by, the provider table knows torch ships them: the wheel requires torch
    assert "torch" in " ".join(w.requires_dist)
    assert check_linkage(w, None) == []


def test_fixture_macos_rpath_via_loader(fixture_wheels):
    w = scan(fixture_wheels["macos_rpath_via_loader"])
    etdump = "executorch/lib/libexecutorch_etdump.dylib"
    assert w.library(etdump).rpaths == []
    assert check_linkage(w, ET_RULE) == []
    assert where(w, etdump, "@rpath/libexecutorch.dylib") == "executorch/lib/libexecutorch.dylib"
    # take the loading _C away: nothing finds libexecutorch for etdump any more
    w.libraries = [b for b in w.libraries if "_C." not in b.path]
    f = only(check_linkage(w, ET_RULE), "WA501")
    assert f.paths == [etdump] and f.subject == "@rpath/libexecutorch.dylib"


def test_fixture_linux_rpath_shadowed(fixture_wheels):
    w = scan(fixture_wheels["linux_rpath_shadowed"])
    f = only(check_linkage(w, ET_RULE), "WA501")
    assert f.paths == ["executorch/lib/libexecutorch_kernels_quantized.so"] and f.subject == "libexecutorch.so"
    assert "libexecutorch.so" in f.message and "executorch/nowhere/libexecutorch.so" in f.message
    assert "DT_RPATH $ORIGIN would find executorch/lib/libexecutorch.so" in f.message


def test_fixture_macos_weak_absent(fixture_wheels):
    w = scan(fixture_wheels["macos_weak_absent"])
    assert check_linkage(w, ET_RULE) == []
    assert where(w, "executorch/lib/libexecutorch_kernels_optimized.dylib", "@rpath/libabsent.dylib") == "weak, absent"


def test_fixture_macos_build_rpath(fixture_wheels):
    w = scan(fixture_wheels["macos_build_rpath"])
    f = only(check_linkage(w, ET_RULE), "WA502")
    assert f.paths == ["executorch/lib/libexecutorch_backend_xnnpack.dylib"]
    assert "/Users/runner/work/executorch/cmake-out/lib" in f.message
    # a home folder, but @loader_path comes first and finds every @rpath/ load: nothing reaches it
    assert f.severity == "warning" and "any user can place files" in f.message and "no lookup" in f.message


def test_fixture_no_torch_requirement(fixture_wheels):
    w = scan(fixture_wheels["linux_no_torch_requirement"])
    f = only(check_linkage(w, ET_RULE), "WA505")
    assert "torch" in f.message and "libtorch.so" in f.message


def test_fixture_platform_findings_come_through_check_linkage(fixture_wheels):
    assert codes(check_linkage(scan(fixture_wheels["linux_glibc234"]), ET_RULE)) == ["WA504"]
    assert codes(check_linkage(scan(fixture_wheels["macos_universal2_thin_one"]), ET_RULE)) == ["WA503"]


def test_fixture_truncated_binary_is_skipped(fixture_wheels):
    w = scan(fixture_wheels["linux_truncated"])
    assert check_linkage(w, ET_RULE) == []
