"""The rules loader (SPEC section 3) and conditions: a complete file round-trips into the
model, and every class of mistake is a RulesError with the right line and key."""

from __future__ import annotations

import datetime as dt
import pickle
from pathlib import Path

import pytest
from packaging.tags import Tag
from packaging.utils import parse_wheel_filename

from wheelaudit.platforms.traits import traits_from_tags
from wheelaudit.ruleset.conditions import Condition, WheelTraits
from wheelaudit.model.globs import Glob, SymbolPattern
from wheelaudit.ruleset.errors import RulesError
from wheelaudit.ruleset.load import MAX_RULES_SIZE, load_rules, parse_rules, ruleset_from_dict
from wheelaudit.ruleset.model import BinaryRule, ComponentRule, FileRule, LibrariesRule, LinkageRule, Ruleset, Waiver

# Every key of SPEC section 3 (and the CLI defaults), as the SPEC writes them.
FULL = """\
version = 1
name = "executorch"
select = ["WA1", "WA2", "WA301"]
ignore = "WA003"
fail-on = "warning"

[libraries]                          # every native binary in scope must match one of `expected`
scope    = ["executorch/lib/*"]
expected = ["executorch/lib/libexecutorch.{so,dylib}",
            "executorch/lib/libexecutorch_backend_{xnnpack,mlx}.{so,dylib}"]
identity = "filename"
when     = { os = ["linux", "macos"] }

[[component]]
name     = "backend_mlx"
symbols  = ["executorch::backends::mlx::MLXBackend::init"]   # sentinels
owner    = "executorch/lib/libexecutorch_backend_mlx.*"
required = { os = "macos", arch = "arm64" }
exempt   = ["*_aot_lib.so"]

[[component]]
name     = "mlx_runtime"
symbols  = ["mlx::core::*"]
strings  = ["Failed to load the default metallib", "mlx.metallib"]
strong-only = true
owner    = "executorch/lib/libexecutorch_backend_mlx.*"
required = false
when     = { platform = "macosx_*_arm64", version = "*", python = ["cp3*"] }

[[component]]
name     = "backend_xnnpack"
symbols  = "executorch::backends::xnnpack::XnnpackBackendOptions::workspace_manager"

[[file]]
name   = "metallib"
glob   = "**/mlx.metallib"
count  = 1
beside = "mlx_runtime"
when   = { os = "macos" }

[[file]]
glob = "executorch/share/cmake/*.cmake"
min  = 1
max  = 2

[[file]]
glob = "executorch/**/*.pyi"

[[binary]]                  # constraints on particular binaries
path            = "executorch/extension/pybindings/_C.*"
count           = 1
must-not-define = ["backend_xnnpack", "backend_mlx"]
must-import     = ["executorch::runtime::get_num_registered_backends"]
must-need       = ["libexecutorch.*"]
must-not-need   = ["libexecutorch_kernels_quantized.*"]
when            = { arch = "x86_64" }

[[binary]]
name = "every library"
path = "executorch/lib/*"

[linkage]
allow-external = ["libc.so.*", "libm.so.*", "libstdc++.so.*", "/usr/lib/libSystem.B.dylib",
                  "/usr/lib/libc++.1.dylib", "/System/Library/Frameworks/*"]
provided-by    = { torch = ["libtorch*", "libc10*"] }
forbid-rpath   = ["*/cmake-out/*", "*/pip-out/*", "/Users/*", "/home/*"]
allow-rpath    = ["*/torch/lib"]
check          = true

[[waive]]
code   = "WA201"
target = "set of quantized kernels"
path   = "*_aot_lib.so"
reason = "export-time copy, loaded only by the exporter"
until  = 2027-06-30

[[waive]]
code   = "wa501"
reason = "linkage is checked by the installer job"
"""


def line_of(text: str, marker: str, nth: int = 1) -> int:
    """The 1-based line of the nth occurrence of ``marker`` in ``text``."""
    pos = -1
    for _ in range(nth):
        pos = text.index(marker, pos + 1)
    return text.count("\n", 0, pos) + 1


# ---------------------------------------------------------------------------------------------
# The complete file


def test_full_file_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "executorch.toml"
    path.write_text(FULL, encoding="utf-8")
    rs = load_rules(path)
    src = str(path)

    assert rs.version == 1 and rs.name == "executorch"
    assert rs.path == path and rs.source == src
    assert rs.select == ["WA1", "WA2", "WA301"]
    assert rs.ignore == ["WA003"]
    assert rs.fail_on == "warning"

    lib = rs.libraries
    assert isinstance(lib, LibrariesRule)
    assert lib.scope == [Glob("executorch/lib/*")]
    assert [g.pattern for g in lib.expected] == [
        "executorch/lib/libexecutorch.{so,dylib}",
        "executorch/lib/libexecutorch_backend_{xnnpack,mlx}.{so,dylib}",
    ]
    assert lib.expected[1].match("executorch/lib/libexecutorch_backend_mlx.dylib")
    assert lib.identity == "filename"
    assert lib.when == Condition(os=(Glob("linux"), Glob("macos")))
    assert lib.line == line_of(FULL, "[libraries]") and lib.source == src

    mlx, runtime, xnn = rs.components
    assert isinstance(mlx, ComponentRule)
    assert mlx.name == "backend_mlx"
    assert mlx.symbols == [SymbolPattern("executorch::backends::mlx::MLXBackend::init")]
    assert mlx.symbol_entries == ["executorch::backends::mlx::MLXBackend::init"]
    assert mlx.strings == [] and mlx.strong_only is False
    assert mlx.owner == Glob("executorch/lib/libexecutorch_backend_mlx.*")
    assert mlx.required == Condition(os=(Glob("macos"),), arch=(Glob("arm64"),))
    assert mlx.exempt == [Glob("*_aot_lib.so", cross_slash=True)]
    assert mlx.exempt[0].match("executorch/lib/x_aot_lib.so")
    assert mlx.when is None
    assert mlx.line == line_of(FULL, "[[component]]", 1)

    assert runtime.name == "mlx_runtime"
    assert runtime.symbols[0].matches("mlx::core::add(mlx::core::array const&)")
    assert runtime.strings == [b"Failed to load the default metallib", b"mlx.metallib"]
    assert runtime.strong_only is True and runtime.required is False
    assert runtime.when == Condition(
        platform=(Glob("macosx_*_arm64"),), version=(Glob("*"),), python=(Glob("cp3*"),)
    )
    assert runtime.line == line_of(FULL, "[[component]]", 2)

    assert xnn.required is True  # the default
    assert xnn.owner is None and xnn.exempt == [] and xnn.when is None
    assert len(xnn.symbols) == 1  # a single string is a one-item list

    metallib, cmake, pyi = rs.files
    assert isinstance(metallib, FileRule)
    assert metallib.name == "metallib" and metallib.glob == Glob("**/mlx.metallib")
    assert (metallib.count, metallib.min, metallib.max) == (1, None, None)
    assert metallib.bounds() == (1, 1)
    assert metallib.beside == "mlx_runtime"
    assert metallib.when == Condition(os=(Glob("macos"),))
    assert metallib.line == line_of(FULL, "[[file]]", 1)
    assert (cmake.count, cmake.min, cmake.max, cmake.bounds()) == (None, 1, 2, (1, 2))
    assert cmake.name == "executorch/share/cmake/*.cmake"  # defaults to the glob
    assert (pyi.count, pyi.min, pyi.max, pyi.bounds()) == (None, 1, None, (1, None))

    c_ext, every = rs.binaries
    assert isinstance(c_ext, BinaryRule)
    assert c_ext.name == "executorch/extension/pybindings/_C.*"  # defaults to the path
    assert c_ext.path == Glob("executorch/extension/pybindings/_C.*")
    assert c_ext.count == 1
    assert c_ext.must_not_define == ["backend_xnnpack", "backend_mlx"]
    assert c_ext.must_import == [
        SymbolPattern("executorch::runtime::get_num_registered_backends")
    ]
    assert c_ext.must_need == [Glob("libexecutorch.*")]
    assert c_ext.must_not_need == [Glob("libexecutorch_kernels_quantized.*")]
    assert c_ext.when == Condition(arch=(Glob("x86_64"),))
    assert c_ext.line == line_of(FULL, "[[binary]]", 1)
    assert every.name == "every library" and every.count is None and every.must_need == []

    link = rs.linkage
    assert isinstance(link, LinkageRule)
    assert Glob("/System/Library/Frameworks/*", cross_slash=True) in link.allow_external
    assert len(link.allow_external) == 6
    assert link.allow_external[5].match("/System/Library/Frameworks/Metal.framework/Metal")
    assert link.provided_by == {
        "torch": [Glob("libtorch*", cross_slash=True), Glob("libc10*", cross_slash=True)]
    }
    assert link.forbid_rpath[0].match("/home/ci/src/cmake-out/lib")
    assert link.allow_rpath == [Glob("*/torch/lib", cross_slash=True)]
    assert link.check is True
    assert link.line == line_of(FULL, "[linkage]")

    w1, w2 = rs.waivers
    assert isinstance(w1, Waiver)
    assert w1.code == "WA201"
    assert w1.target == Glob("set of quantized kernels", cross_slash=True)
    assert w1.path is not None and w1.path.match("executorch/lib/libq_aot_lib.so")
    assert w1.reason == "export-time copy, loaded only by the exporter"
    assert w1.until == dt.date(2027, 6, 30)
    assert w1.line == line_of(FULL, "[[waive]]", 1)
    assert w2.code == "WA501"  # normalised to upper case
    assert w2.target is None and w2.path is None and w2.until is None

    assert rs.strings() == [b"Failed to load the default metallib", b"mlx.metallib"]
    assert rs.component("mlx_runtime") is runtime and rs.component("nope") is None


def test_ruleset_pickles() -> None:
    rs = parse_rules(FULL)
    clone = pickle.loads(pickle.dumps(rs))
    assert clone == rs
    assert clone.files[0].glob.match("a/mlx.metallib")


def test_minimal_file_and_defaults() -> None:
    rs = parse_rules("version = 1\n")
    assert rs == Ruleset(version=1, source="<string>")
    assert rs.libraries is None and rs.linkage is None
    assert rs.select is None and rs.ignore is None and rs.fail_on is None
    assert rs.strings() == []
    lib = parse_rules('version = 1\n[libraries]\nexpected = "lib/*.so"\n').libraries
    assert lib is not None and lib.scope is None and lib.identity == "filename"
    assert parse_rules('version = 1\n[linkage]\ncheck = false\n').linkage == LinkageRule(
        check=False, line=2, source="<string>"
    )


def test_ruleset_from_dict_without_text() -> None:
    rs = ruleset_from_dict(
        {"version": 1, "component": [{"name": "c", "symbols": ["f"]}]}, source="inline"
    )
    assert rs.components[0].line is None and rs.components[0].source == "inline"
    with pytest.raises(RulesError) as info:
        ruleset_from_dict({"version": 1, "component": [{"nme": "c"}]}, source="inline")
    assert info.value.line is None and info.value.key == "component[1].nme"
    assert str(info.value).startswith('inline: component[1]: key "nme": unknown key')


def test_waiver_helpers() -> None:
    w = parse_rules(FULL).waivers[0]
    assert not w.lapsed(dt.date(2027, 6, 30))
    assert w.lapsed(dt.date(2027, 7, 1))
    assert w.covers("WA201", "set of quantized kernels", ["executorch/lib/q_aot_lib.so"])
    assert not w.covers("WA202", "set of quantized kernels", ["executorch/lib/q_aot_lib.so"])
    assert not w.covers("WA201", "XNNPACK delegate", ["executorch/lib/q_aot_lib.so"])
    assert not w.covers("WA201", "set of quantized kernels", ["executorch/lib/libq.so"])
    prefix = parse_rules(FULL).waivers[1]
    assert prefix.covers("WA501", None) and not prefix.covers("WA502", None)
    assert w.covers("WA201", "other", ["executorch/lib/q_aot_lib.so"], symbols=["set of quantized kernels"])
    assert not prefix.lapsed()


# ---------------------------------------------------------------------------------------------
# Errors: each names the line and the key


def _error(text: str, source: str = "rules/x.toml") -> RulesError:
    with pytest.raises(RulesError) as info:
        parse_rules(text, source)
    return info.value


def test_error_format_unknown_key_with_suggestion() -> None:
    text = FULL.replace("strong-only = true", "strong_only = true")
    err = _error(text)
    line = line_of(text, "strong_only")
    assert err.line == line
    assert err.key == "component[2].strong_only"
    assert err.source == "rules/x.toml"
    assert str(err) == (
        f'rules/x.toml:{line}: component[2] "mlx_runtime": key "strong_only": '
        'unknown key (did you mean "strong-only"?)'
    )


# (replace this, with this, the line holding this marker, key, words the message has)
ERROR_CASES = [
    pytest.param(
        "strong-only = true", "strong-only = 3", "strong-only = 3",
        "component[2].strong-only", "expected true or false, got integer 3",
        id="wrong-type-bool",
    ),
    pytest.param(
        'symbols  = ["mlx::core::*"]', "symbols  = 3", "symbols  = 3",
        "component[2].symbols", "expected a string or a list of symbol names, got integer 3",
        id="wrong-type-list",
    ),
    pytest.param(
        'scope    = ["executorch/lib/*"]', 'scope    = ["executorch/lib/*", 3]', "scope    =",
        "libraries.scope", "got integer 3 as item 2",
        id="wrong-type-list-item",
    ),
    pytest.param(
        "count  = 1\nbeside", 'count  = "1"\nbeside', 'count  = "1"',
        "file[1].count", 'expected a non-negative integer, got string "1"',
        id="wrong-type-int",
    ),
    pytest.param(
        "count           = 1", "count           = -1", "count           = -1",
        "binary[1].count", "non-negative",
        id="negative-count",
    ),
    pytest.param(
        'beside = "mlx_runtime"', 'beside = "mlx_runtim"', "beside",
        "file[1].beside", 'no component is named "mlx_runtim" (did you mean "mlx_runtime"?)',
        id="unknown-component-beside",
    ),
    pytest.param(
        'must-not-define = ["backend_xnnpack", "backend_mlx"]',
        'must-not-define = ["backend_xnnpack", "backend_coreml"]', "must-not-define",
        "binary[1].must-not-define", 'no component is named "backend_coreml"',
        id="unknown-component-must-not-define",
    ),
    pytest.param(
        'glob   = "**/mlx.metallib"', 'glob   = "**/mlx.[metallib"', "mlx.[metallib",
        "file[1].glob", "unclosed '['",
        id="bad-glob",
    ),
    pytest.param(
        'libexecutorch_backend_{xnnpack,mlx}.{so,dylib}"',
        'libexecutorch_backend_{xnnpack,mlx.{so,dylib}"', "expected =",
        "libraries.expected", "item 2: invalid glob",
        id="bad-glob-in-list",
    ),
    pytest.param(
        'provided-by    = { torch = ["libtorch*", "libc10*"] }',
        'provided-by    = { torch = ["libtorch*", "libc10{"] }', "provided-by",
        "linkage.provided-by.torch", "unclosed '{'",
        id="bad-glob-nested",
    ),
    pytest.param(
        'required = { os = "macos", arch = "arm64" }',
        'required = { os = "macos", archs = "arm64" }', "archs",
        "component[1].required.archs", 'unknown key (did you mean "arch"?)',
        id="unknown-condition-key",
    ),
    pytest.param(
        'required = { os = "macos", arch = "arm64" }',
        'required = { os = "macOS", arch = "arm64" }', "macOS",
        "component[1].required.os", 'unknown os "macOS" (did you mean "macos"?)',
        id="unknown-os",
    ),
    pytest.param(
        "required = false", 'required = "no"', 'required = "no"',
        "component[2].required", 'expected true, false or a condition table, got string "no"',
        id="required-type",
    ),
    pytest.param(
        '[[component]]\nname     = "backend_xnnpack"', '[[components]]\nname     = "backend_xnnpack"',
        "[[components]]",
        "components", 'unknown key (did you mean "component"?)',
        id="unknown-table",
    ),
    pytest.param(
        "[libraries]", "[librarie]", "[librarie]",
        "librarie", 'did you mean "libraries"?',
        id="unknown-table-2",
    ),
    pytest.param(
        "[linkage]", "[[linkage]]", "[[linkage]]",
        "linkage", "expected a table ([linkage]), got an array",
        id="table-vs-array",
    ),
    pytest.param(
        'code   = "WA201"', 'code   = "WA299"', "WA299",
        "waive[1].code", "WA299 is not a code",
        id="unknown-code",
    ),
    pytest.param(
        'code   = "WA201"', 'code   = "E201"', "E201",
        "waive[1].code", "E201 is not a code",
        id="malformed-code",
    ),
    pytest.param(
        'select = ["WA1", "WA2", "WA301"]', 'select = ["WA1", "WA2", "WA3011"]', "select",
        "select", "item 3:",
        id="bad-select",
    ),
    pytest.param(
        'fail-on = "warning"', 'fail-on = "warn"', "fail-on",
        "fail-on", 'expected "error" or "warning", got string "warn"',
        id="fail-on",
    ),
    pytest.param(
        'reason = "export-time copy, loaded only by the exporter"', 'reason = "  "', 'reason = "  "',
        "waive[1].reason", "non-empty",
        id="empty-reason",
    ),
    pytest.param(
        'reason = "linkage is checked by the installer job"\n', "", '[[waive]]\ncode   = "wa501"',
        "waive[2].reason", "missing",
        id="missing-reason",
    ),
    pytest.param(
        "until  = 2027-06-30", "until  = 2027-06-30T12:00:00", "until",
        "waive[1].until", "expected a date like 2027-06-30, got datetime",
        id="until-datetime",
    ),
    pytest.param(
        'name     = "mlx_runtime"', 'name     = "backend_mlx"', 'name     = "backend_mlx"\nsymbols  = ["mlx',
        "component[2].name", 'duplicate component name "backend_mlx" (also component[1], line 14)',
        id="duplicate-component",
    ),
    pytest.param(
        "count  = 1\nbeside", "count  = 1\nmax = 3\nbeside", "max = 3",
        "file[1].max", '"count" excludes "min" and "max"',
        id="count-excludes-min-max",
    ),
    pytest.param(
        "min  = 1\nmax  = 2", "min  = 3\nmax  = 2", "max  = 2",
        "file[2].max", "max (2) is less than min (3)",
        id="min-above-max",
    ),
    pytest.param(
        'identity = "filename"', 'identity = "soname"', "identity",
        "libraries.identity", 'expected "filename" or "off"',
        id="identity",
    ),
    pytest.param(
        'symbols  = "executorch::backends::xnnpack::XnnpackBackendOptions::workspace_manager"',
        "", '[[component]]\nname     = "backend_xnnpack"',
        "component[3]", 'needs at least one entry in "symbols" or "strings"',
        id="component-without-evidence",
    ),
    pytest.param(
        '[[file]]\nglob = "executorch/**/*.pyi"', '[[file]]\nname = "stubs"',
        '[[file]]\nname = "stubs"',
        "file[3].glob", "missing",
        id="missing-glob",
    ),
    pytest.param(
        'provided-by    = { torch = ["libtorch*", "libc10*"] }',
        'provided-by    = { "torch!" = ["libtorch*"] }', "provided-by",
        'linkage.provided-by."torch!"', "not a valid distribution name",
        id="bad-distribution",
    ),
    pytest.param(
        "version = 1", "version = 2", "version = 2",
        "version", "unsupported rules version 2",
        id="version-2",
    ),
    pytest.param(
        "version = 1", 'version = "1"', "version",
        "version", 'expected the integer 1, got string "1"',
        id="version-type",
    ),
]


@pytest.mark.parametrize("old, new, marker, key, words", ERROR_CASES)
def test_errors_name_line_and_key(old: str, new: str, marker: str, key: str, words: str) -> None:
    assert old in FULL
    text = FULL.replace(old, new, 1)
    err = _error(text)
    assert err.key == key
    assert err.line == line_of(text, marker), str(err)
    assert words in err.message, str(err)
    assert str(err).startswith(f"rules/x.toml:{err.line}: ")


def test_missing_version() -> None:
    text = FULL.replace("version = 1\n", "")
    err = _error(text)
    assert err.key == "version"
    assert "missing" in err.message and "version = 1" in err.message
    assert err.line == 1


@pytest.mark.parametrize(
    "text, line",
    [
        ("version = 1\nname = \n", 2),
        ('version = 1\n[[component]]\nname = "a"\nsymbols = ["x",\n', 4),  # end of text
        ("version = 1\n[libraries]\n[libraries]\n", 3),
        ('version = 1\nname = "unterminated\n', 2),
    ],
)
def test_toml_syntax_error_line(text: str, line: int) -> None:
    err = _error(text)
    assert err.line == line, str(err)
    assert err.key is None
    assert "TOML syntax error" in err.message
    assert str(err).startswith(f"rules/x.toml:{line}: TOML syntax error")


def test_lines_skip_strings_and_subtables() -> None:
    text = (
        "version = 1\n"
        'name = """\n'
        "[[component]]\n"  # inside a string: not a header
        '"""\n'
        "[[component]]\n"
        'name = "a"\n'
        'symbols = ["x"]\n'
        "[component.required]\n"
        'os = "linux"\n'
        "arch = 3\n"
    )
    err = _error(text)
    assert err.key == "component[1].required.arch"
    assert err.line == 10
    rs = parse_rules(text.replace("arch = 3", 'arch = "x86_64"'))
    assert rs.components[0].line == 5
    assert rs.components[0].required == Condition(os=(Glob("linux"),), arch=(Glob("x86_64"),))


def test_condition_key_in_multiline_inline_array() -> None:
    text = 'version = 1\n[libraries]\nexpected = [\n  "a",\n  "b",\n]\nwhen = { pythn = "cp311" }\n'
    err = _error(text)
    assert err.key == "libraries.when.pythn" and err.line == 7
    assert 'did you mean "python"?' in err.message


def test_file_errors(tmp_path: Path) -> None:
    with pytest.raises(RulesError, match="no such file"):
        load_rules(tmp_path / "missing.toml")
    with pytest.raises(RulesError, match="directory"):
        load_rules(tmp_path)

    big = tmp_path / "big.toml"
    big.write_bytes(b"version = 1\n" + b"# padding\n" * (MAX_RULES_SIZE // 10 + 1))
    with pytest.raises(RulesError, match="5 MB") as info:
        load_rules(big)
    assert info.value.source == str(big)
    with pytest.raises(RulesError, match="5 MB"):
        parse_rules("#" * (MAX_RULES_SIZE + 1))

    latin = tmp_path / "latin1.toml"
    latin.write_bytes(b'version = 1\nname = "caf\xe9"\n')
    with pytest.raises(RulesError, match="not UTF-8") as info:
        load_rules(latin)
    assert info.value.line == 2

    bom = tmp_path / "bom.toml"
    bom.write_bytes(b'\xef\xbb\xbfversion = 1\nname = "x"\n')
    assert load_rules(bom).name == "x"


def test_deep_nesting_is_an_error_not_a_crash() -> None:
    with pytest.raises(RulesError):
        parse_rules("version = 1\nname = " + "[" * 100_000 + "]" * 100_000 + "\n")


# ---------------------------------------------------------------------------------------------
# Conditions


@pytest.mark.parametrize(
    "filename, os, arch",
    [
        ("x-1.0-cp311-cp311-macosx_14_0_arm64.whl", {"macos"}, {"arm64"}),
        ("x-1.0-cp311-cp311-macosx_11_0_universal2.whl", {"macos"}, {"arm64", "x86_64"}),
        ("x-1.0-cp311-cp311-macosx_10_9_intel.whl", {"macos"}, {"x86_64", "i386"}),
        (
            "x-1.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
            {"linux"},
            {"x86_64"},
        ),
        ("x-1.0-cp311-cp311-manylinux_2_28_aarch64.whl", {"linux"}, {"aarch64"}),
        ("x-1.0-cp311-cp311-musllinux_1_2_x86_64.whl", {"linux"}, {"x86_64"}),
        ("x-1.0-cp311-cp311-linux_armv7l.whl", {"linux"}, {"armv7l"}),
        ("x-1.0-cp311-cp311-win_amd64.whl", {"windows"}, {"x86_64", "amd64"}),
        ("x-1.0-cp311-cp311-win_arm64.whl", {"windows"}, {"arm64"}),
        ("x-1.0-py3-none-any.whl", set(), set()),
    ],
)
def test_traits_from_tags(filename: str, os: set[str], arch: set[str]) -> None:
    _, version, _, tags = parse_wheel_filename(filename)
    traits = traits_from_tags(tags, str(version))
    assert traits.os == frozenset(os)
    assert traits.arch == frozenset(arch)
    assert traits.version == "1.0"
    assert traits.platforms == tuple(sorted({t.platform for t in tags}))


def test_traits_keep_every_tag() -> None:
    tags = [Tag("cp312", "cp312", "manylinux_2_28_x86_64"), Tag("cp311", "cp311", "macosx_14_0_arm64")]
    t = traits_from_tags(tags, "1.2.0+cu128")
    assert t.platforms == ("macosx_14_0_arm64", "manylinux_2_28_x86_64")
    assert t.pythons == ("cp311", "cp312")
    assert t.os == {"linux", "macos"} and t.arch == {"x86_64", "arm64"}


MAC = traits_from_tags([Tag("cp311", "cp311", "macosx_14_0_arm64")], "1.0.0")
LINUX_CU = traits_from_tags([Tag("cp310", "cp310", "manylinux_2_28_x86_64")], "1.0.0+cu128")
PURE = traits_from_tags([Tag("py3", "none", "any")], "1.0.0")


def test_condition_holds() -> None:
    mlx = Condition(os=(Glob("macos"),), arch=(Glob("arm64"),))
    assert mlx.holds(MAC) and not mlx.holds(LINUX_CU) and not mlx.holds(PURE)
    assert mlx(MAC)
    cuda = Condition(version=(Glob("*+cu*"),))
    assert cuda.holds(LINUX_CU) and not cuda.holds(MAC)
    either = Condition(os=(Glob("linux"), Glob("macos")))
    assert either.holds(MAC) and either.holds(LINUX_CU) and not either.holds(PURE)
    plat = Condition(platform=(Glob("manylinux*_x86_64"),), python=(Glob("cp31[01]"),))
    assert plat.holds(LINUX_CU) and not plat.holds(MAC)
    assert Condition(platform=(Glob("any"),)).holds(PURE)
    assert Condition().holds(MAC) and Condition().holds(PURE)
    assert Condition(arch=(Glob("aarch64"),)).holds(MAC) is False  # spelled as the tag spells it


def test_condition_describe() -> None:
    assert Condition(os=(Glob("macos"),), arch=(Glob("arm64"),)).describe() == (
        "os = macos, arch = arm64"
    )
    assert Condition(os=(Glob("linux"), Glob("macos"))).describe() == "os = linux|macos"
    assert Condition().describe() == "always"
    assert Condition(os=(Glob("linux"),)).keys == ("os",)


def test_component_is_required() -> None:
    rs = parse_rules(FULL)
    mlx, runtime, xnn = rs.components
    assert mlx.is_required(MAC) and not mlx.is_required(LINUX_CU)
    assert not runtime.is_required(MAC)
    assert xnn.is_required(PURE)
    assert isinstance(WheelTraits(), WheelTraits)


def test_name_condition_is_canonical() -> None:
    rs = parse_rules('version = 1\n[libraries]\nexpected = "x"\nwhen = { name = "MLX_Metal" }\n')
    assert rs.libraries is not None and rs.libraries.when is not None
    when = rs.libraries.when
    assert when == Condition(name=(Glob("mlx-metal"),))
    tags = [Tag("py3", "none", "macosx_14_0_arm64")]
    assert when.holds(traits_from_tags(tags, "0.29.0", "mlx.metal"))
    assert not when.holds(traits_from_tags(tags, "0.29.0", "mlx"))
    assert not when.holds(traits_from_tags(tags, "0.29.0"))  # name unknown: does not hold
    assert when.describe() == "name = mlx-metal"


SHIPPED = sorted((Path(__file__).resolve().parent.parent / "rules").glob("*.toml"))


@pytest.mark.skipif(not SHIPPED, reason="no shipped rulesets")
@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_shipped_rulesets_load(path: Path) -> None:
    rs = load_rules(path)
    assert rs.version == 1 and rs.name
    assert all(c.symbols or c.strings for c in rs.components)


def test_crlf_line_endings() -> None:
    text = FULL.replace("strong-only = true", "strong_only = true").replace("\n", "\r\n")
    err = _error(text)
    assert err.line == line_of(text, "strong_only") and err.key == "component[2].strong_only"
    rs = parse_rules(FULL.replace("\n", "\r\n"))
    assert [c.line for c in rs.components] == [c.line for c in parse_rules(FULL).components]
