"""Globs and symbol patterns: syntax, limits, speed on pathological input, and a differential
check against a regular-expression reference on small random cases."""

from __future__ import annotations

import pickle
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bounds import CountingText

from wheelaudit.model.globs import (
    MAX_ALTERNATIVES,
    MAX_BRACE_DEPTH,
    Glob,
    GlobError,
    SymbolPattern,
)

# ---------------------------------------------------------------------------------------------
# Glob: syntax


@pytest.mark.parametrize(
    "pattern, text, expected",
    [
        # * stays within a directory
        ("*.so", "libfoo.so", True),
        ("*.so", "lib/libfoo.so", False),
        ("executorch/lib/*", "executorch/lib/libexecutorch.so", True),
        ("executorch/lib/*", "executorch/lib/sub/libexecutorch.so", False),
        ("*", "", True),
        # ** crosses directories; "**/" also matches zero directories
        ("**/mlx.metallib", "mlx.metallib", True),
        ("**/mlx.metallib", "a/mlx.metallib", True),
        ("**/mlx.metallib", "a/b/c/mlx.metallib", True),
        ("**/mlx.metallib", "xmlx.metallib", False),
        ("**/mlx.metallib", "a/xmlx.metallib", False),
        ("**/mlx.metallib", "mlx.metallib/x", False),
        ("a/**/b", "a/b", True),
        ("a/**/b", "a/x/b", True),
        ("a/**/b", "a/x/y/b", True),
        ("a/**/b", "a/xb", False),
        ("a/**/b", "ab", False),
        ("a/**", "a/x/y", True),
        ("a/**", "a", False),
        ("a**b", "a/x/b", True),  # ** not a whole component: a run that may cross "/"
        ("a**b", "ab", True),
        ("**", "any/thing/at/all", True),
        ("***.so", "a/b.so", True),  # three stars read as two
        # ? is one character, never "/"
        ("lib?.so", "liba.so", True),
        ("lib?.so", "lib.so", False),
        ("lib?.so", "libab.so", False),
        ("a?b", "a/b", False),
        # classes
        ("lib[abc].so", "libb.so", True),
        ("lib[abc].so", "libd.so", False),
        ("lib[a-c].so", "libb.so", True),
        ("lib[a-c].so", "libd.so", False),
        ("lib[!a-c].so", "libd.so", True),
        ("lib[!a-c].so", "libb.so", False),
        ("lib[^a-c].so", "libd.so", True),
        ("[]a]", "]", True),
        ("[]a]", "a", True),
        ("[!]a]", "]", False),
        ("[a-]", "-", True),
        ("[!a]", "/", False),  # a class never matches "/"
        ("[\\]]", "]", True),
        ("[{,}]x", "{x", True),  # braces inside a class are members
        ("[{,}]x", ",x", True),
        # braces
        ("libexecutorch.{so,dylib}", "libexecutorch.so", True),
        ("libexecutorch.{so,dylib}", "libexecutorch.dylib", True),
        ("libexecutorch.{so,dylib}", "libexecutorch.dll", False),
        ("libexecutorch.{so,dylib}", "libexecutorch.{so,dylib}", False),
        (
            "executorch/lib/libexecutorch_backend_{xnnpack,mlx}.{so,dylib}",
            "executorch/lib/libexecutorch_backend_mlx.dylib",
            True,
        ),
        (
            "executorch/lib/libexecutorch_backend_{xnnpack,mlx}.{so,dylib}",
            "executorch/lib/libexecutorch_backend_cuda.so",
            False,
        ),
        ("lib{a,b{c,d}}.so", "libbd.so", True),
        ("lib{a,b{c,d}}.so", "liba.so", True),
        ("lib{a,b{c,d}}.so", "libb.so", False),
        ("lib{,64}", "lib", True),
        ("lib{,64}", "lib64", True),
        ("{*.so,*.dylib}", "x.dylib", True),
        ("{**/,}x", "a/b/x", True),
        ("{**/,}x", "x", True),
        ("a,b}", "a,b}", True),  # "," and "}" outside braces are plain
        # escapes
        ("x\\*", "x*", True),
        ("x\\*", "xy", False),
        ("\\{a,b\\}", "{a,b}", True),
        ("\\?", "?", True),
        ("\\?", "a", False),
    ],
)
def test_glob_match(pattern: str, text: str, expected: bool) -> None:
    assert Glob(pattern).match(text) is expected


@pytest.mark.parametrize(
    "pattern, text, expected",
    [
        ("*_aot_lib.so", "executorch/lib/x_aot_lib.so", True),
        ("*_aot_lib.so", "x_aot_lib.so", True),
        ("*/cmake-out/*", "/home/u/src/cmake-out/lib", True),
        ("/home/*", "/home/user/build/lib", True),
        ("lib?", "lib/", True),
        ("/System/Library/Frameworks/*", "/System/Library/Frameworks/Metal.framework/Metal", True),
        ("/usr/lib/*", "/usr/local/lib/x", False),
    ],
)
def test_glob_cross_slash(pattern: str, text: str, expected: bool) -> None:
    assert Glob(pattern, cross_slash=True).match(text) is expected
    if "/" in text[len(Glob(pattern).literal_prefix) :] and expected:
        # the same pattern without cross_slash keeps "*" inside a directory
        assert Glob(pattern).match(text) is False


@pytest.mark.parametrize(
    "pattern, message",
    [
        ("lib[abc.so", "unclosed '['"),
        ("lib[", "unclosed '['"),
        ("lib{a,b.so", "unclosed '{'"),
        ("lib{a,{b,c}.so", "unclosed '{'"),
        ("trailing\\", "trailing backslash"),
        ("[z-a]", "reversed range"),
        ("{a,b}" * 10, f"more than {MAX_ALTERNATIVES} alternatives"),
        ("{" * (MAX_BRACE_DEPTH + 1) + "x" + "}" * (MAX_BRACE_DEPTH + 1), "nested deeper"),
    ],
)
def test_glob_errors(pattern: str, message: str) -> None:
    with pytest.raises(GlobError) as info:
        Glob(pattern)
    assert message in str(info.value)
    assert isinstance(info.value, ValueError)
    assert info.value.pattern == pattern


def test_glob_limits_are_exact() -> None:
    digits = "{0,1,2,3,4,5,6,7,8,9}"
    g = Glob(digits * 3)  # exactly 1000 alternatives: accepted
    assert g.match("042") and g.match("999") and not g.match("0420")
    with pytest.raises(GlobError):
        Glob(digits * 3 + "{a,b}")  # 2000
    deep = "{" * MAX_BRACE_DEPTH + "x" + "}" * MAX_BRACE_DEPTH
    assert Glob(deep).match("x")
    with pytest.raises(GlobError):
        Glob("{" + deep + "}")


def test_glob_literal_prefix() -> None:
    assert Glob("executorch/lib/libexecutorch.{so,dylib}").literal_prefix == (
        "executorch/lib/libexecutorch."
    )
    assert Glob("executorch/lib/*").literal_prefix == "executorch/lib/"
    assert Glob("**/mlx.metallib").literal_prefix == ""
    assert Glob("a\\*b*").literal_prefix == "a*b"
    assert Glob("plain").literal_prefix == "plain"
    assert Glob("{abc,abd}x").literal_prefix == "ab"  # common to every alternative
    assert Glob("plain").is_literal and Glob("a.{so,dylib}").is_literal
    assert not Glob("a*").is_literal


def test_glob_value_semantics() -> None:
    g = Glob("lib/*.{so,dylib}")
    assert g == Glob("lib/*.{so,dylib}")
    assert g != Glob("lib/*.{so,dylib}", cross_slash=True)
    assert len({g, Glob("lib/*.{so,dylib}")}) == 1
    g.match("lib/x.so")  # populate the transition cache
    h = pickle.loads(pickle.dumps(g))
    assert h == g and h.match("lib/x.dylib") and not h.match("lib/a/x.so")
    assert h.pattern == "lib/*.{so,dylib}" and not h.cross_slash
    assert "lib/*.{so,dylib}" in repr(g)
    with pytest.raises(GlobError):
        Glob(3)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# Glob: no catastrophic backtracking


@pytest.mark.parametrize(
    "pattern",
    [
        "*a*a*a*a*a*a*a*a*b",
        "**a**a**a**a**a**a**a**a**b",
        "*a*a*a*a*a*a*a*a*",  # matching case: must also be quick
        "{*a*a*b,*a*a*a*c,*a*a*a*a*d}",
        "**/**/**/**/**/**/**/**/x",
    ],
)
def test_glob_pathological_is_linear(pattern: str) -> None:
    """One pass over the text: each character read once, where a backtracking matcher tries the
    stars' splits (``backtracking_steps`` below: past its cap on a text of 40 characters)."""
    for text, cross in (("a" * 10_000, False), ("a/" * 5_000, True)):
        counted = CountingText(text, limit=len(text))
        result = Glob(pattern, cross_slash=cross).match(counted)
        if not cross:
            assert result is pattern.endswith("*")
        assert counted.reads <= len(text) and counted.searches <= 1, (pattern, counted.reads, counted.searches)
    if "{" not in pattern and not pattern.endswith("*"):
        short = "a/" * 20 if "/" in pattern else "a" * 40
        assert backtracking_steps(pattern, short, cap=100_000) > 100_000


def test_glob_many_alternatives_long_text_is_linear() -> None:
    g = Glob("{0,1,2,3,4,5,6,7,8,9}*{0,1,2,3,4,5,6,7,8,9}*{0,1,2,3,4,5,6,7,8,9}x")
    text = CountingText("0123456789" * 1_000, limit=10_000)
    assert not g.match(text)
    assert text.reads <= len(text) and text.searches <= 1


def backtracking_steps(pattern: str, text: str, cap: int) -> int:
    """The calls a naive recursive glob matcher (``*`` and ``**`` as "any run", the classic
    backtracking) makes on ``text``, stopped past ``cap``: what the pathological inputs above
    would cost a matcher that is not an automaton."""
    steps = 0

    def match(p: int, t: int) -> bool:
        nonlocal steps
        steps += 1
        if steps > cap:
            raise OverflowError
        if p == len(pattern):
            return t == len(text)
        if pattern[p] == "*":
            return any(match(p + 1, k) for k in range(t, len(text) + 1))
        return t < len(text) and pattern[p] in (text[t], "?") and match(p + 1, t + 1)

    try:
        match(0, 0)
    except OverflowError:
        pass
    return steps


# ---------------------------------------------------------------------------------------------
# Glob: differential check against a regular-expression reference (small inputs only)

_ATOMS = ["a", "b", "/", ".", "*", "**", "?", "[ab]", "[!a]", "{a,b/}", "{,*.}", "**/"]
# what each brace atom expands to, as lists of plain atoms
_BRACES = {"{a,b/}": [["a"], ["b", "/"]], "{,*.}": [[], ["*", "."]]}


def _expand_atoms(atoms: list[str]) -> list[list[str]]:
    alternatives: list[list[str]] = [[]]
    for atom in atoms:
        options = _BRACES.get(atom, [[atom]])
        alternatives = [alt + opt for alt in alternatives for opt in options]
    return alternatives


def _reference(pattern_atoms: list[str], cross_slash: bool) -> re.Pattern[str]:
    """The documented semantics, written with Python regular expressions: braces expand to
    alternatives, and each alternative is translated atom by atom."""
    any_char = "." if cross_slash else "[^/]"
    branches = []
    for alt in _expand_atoms(pattern_atoms):
        out = []
        for i, atom in enumerate(alt):
            prev = "".join(alt[:i])
            if atom == "**/":
                out.append("(?:.*/)?" if prev == "" or prev.endswith("/") else ".*/")
            elif atom == "**":
                out.append(".*")
            elif atom == "*":
                out.append(".*" if cross_slash else "[^/]*")
            elif atom == "?":
                out.append(any_char)
            elif atom == "[ab]":
                out.append("[ab]")
            elif atom == "[!a]":
                out.append("[^a]" if cross_slash else "[^a/]")
            else:
                out.append(re.escape(atom))
        branches.append("".join(out))
    return re.compile("(?:" + "|".join(branches) + ")", re.DOTALL)


def _joinable(atoms: list[str]) -> bool:
    """No two neighbouring atoms fuse into another token when written out: "*" + "*" reads
    as "**", and "**" + "/" as the zero-directory "**/" (which the atoms spell separately);
    also once braces are expanded ("**{,*.}/" is "**/" or "***./": an empty alternative puts
    "**" next to "/")."""
    return not any(
        (a.endswith("*") and b.startswith("*")) or (a == "**" and b.startswith("/"))
        for alt in [atoms, *_expand_atoms(atoms)] for a, b in zip(alt, alt[1:], strict=False)
    )


@settings(max_examples=400, deadline=None)
@given(
    atoms=st.lists(st.sampled_from(_ATOMS), max_size=6).filter(_joinable),
    text=st.text(alphabet="ab/.", max_size=8),
    cross_slash=st.booleans(),
)
def test_glob_agrees_with_reference(atoms: list[str], text: str, cross_slash: bool) -> None:
    pattern = "".join(atoms)
    expected = _reference(atoms, cross_slash).fullmatch(text) is not None
    assert Glob(pattern, cross_slash=cross_slash).match(text) is expected, (pattern, text)


# ---------------------------------------------------------------------------------------------
# SymbolPattern


@pytest.mark.parametrize(
    "entry, name, expected",
    [
        # the SPEC's examples, both ways
        ("mlx::core::add", "mlx::core::add(mlx::core::array const&, mlx::core::array const&)", True),
        ("mlx::core::add", "mlx::core::add<int>(int)", True),
        ("mlx::core::add", "mlx::core::add::helper", True),
        ("mlx::core::add", "mlx::core::add", True),
        ("mlx::core::add", "mlx::core::addmm", False),
        ("mlx::core::add", "mlx::core::addmm(mlx::core::array const&)", False),
        ("mlx::core::add", "mlx::core::ad", False),
        ("mlx::core::add", "xmlx::core::add", False),
        ("mlx::core::add", "mlx::core::add:x", False),  # a single ":" is not a member
        ("mlx::core::add", "mlx::core::add ", False),
        ("pthreadpool_create", "pthreadpool_create", True),
        ("pthreadpool_create", "pthreadpool_create@VERS_1.0", True),
        ("pthreadpool_create", "pthreadpool_create_v2", False),
        (
            "executorch::runtime::register_backend",
            "executorch::runtime::register_backend(executorch::runtime::Backend const&)",
            True,
        ),
        (
            "executorch::etdump::ETDumpGen::ETDumpGen",
            "executorch::etdump::ETDumpGen::ETDumpGen(executorch::runtime::Span<unsigned char>)",
            True,
        ),
        # wildcards
        ("mlx::core::*", "mlx::core::add(mlx::core::array const&)", True),
        ("mlx::core::*", "mlx::core::metal::device(mlx::core::Device)", True),
        ("mlx::core::*", "mlx::core::", True),
        ("mlx::core::*", "mlx::cored::x", False),
        ("mlx::core::*", "xmlx::core::x", False),
        ("*::MLXBackend::init", "executorch::backends::mlx::MLXBackend::init(int) const", True),
        ("*::MLXBackend::init", "executorch::backends::mlx::MLXBackend::initialize()", False),
        ("xnn_create_*_v4", "xnn_create_runtime_v4", True),
        ("xnn_create_*_v4", "xnn_create_runtime_v4_extra", False),
        ("xnn_create_*_v4", "xnn_create_runtime_v4(int)", True),
        ("a*b*c", "a_b_c", True),
        ("a*b*c", "a_c_b_c::x", True),  # the last piece may sit at any occurrence
        ("a*b*c", "a_b_cd", False),
        ("a*b", "ab", True),
        ("ab*b", "ab", False),
        ("*_out", "torch::executor::native::abs_out(int)", True),
        ("*_out", "torch::executor::native::abs_outer(int)", False),
        ("operator\\*", "operator*(int)", True),  # an escaped star is literal
        ("operator\\*", "operator+(int)", False),
    ],
)
def test_symbol_pattern(entry: str, name: str, expected: bool) -> None:
    assert SymbolPattern(entry).matches(name) is expected


@pytest.mark.parametrize("entry", ["", " x", "x ", "*", "**"])
def test_symbol_pattern_errors(entry: str) -> None:
    with pytest.raises(GlobError):
        SymbolPattern(entry)


def test_symbol_pattern_attributes() -> None:
    p = SymbolPattern("mlx::core::*")
    assert p.entry == "mlx::core::*" and p.literal_prefix == "mlx::core::" and not p.is_literal
    assert SymbolPattern("foo").is_literal
    assert pickle.loads(pickle.dumps(p)) == p
    assert hash(p) == hash(SymbolPattern("mlx::core::*"))
    assert str(p) == "mlx::core::*"


def test_symbol_pattern_pathological_is_linear() -> None:
    """A few searches and one pass at most over the name, whatever the stars (a backtracking
    placement of the pieces tries every split)."""
    for entry, expected in (("*a*a*a*a*a*a*a*a*b", False), ("a*a*a*a*a*a*a*ab", False), ("a*a*a*a*a*a*a*a", True)):
        name = CountingText("a" * 10_000, limit=20_000)
        assert SymbolPattern(entry).matches(name) is expected
        assert name.searches <= entry.count("*") + 34 and name.reads <= 2 * len(name), (entry, name.searches, name.reads)


def test_symbol_pattern_literal_is_cheap_on_many_names() -> None:
    """A literal entry: one prefix test and at most one character read per name."""
    names = [CountingText(f"mlx::core::op{i}(mlx::core::array const&)") for i in range(10_000)]
    p = SymbolPattern("mlx::core::op9999")
    hits = [n for n in names if p.matches(n)]
    assert hits == ["mlx::core::op9999(mlx::core::array const&)"]
    assert sum(n.searches for n in names) <= len(names) + 1 and sum(n.reads for n in names) <= len(names)


def _symbol_reference(entry: str) -> re.Pattern[str]:
    body = ".*".join(re.escape(piece) for piece in entry.split("*"))
    return re.compile(rf"{body}(?:$|[(@<].*|::.*)", re.DOTALL)


@settings(max_examples=400, deadline=None)
@given(
    entry=st.text(alphabet="ab:*(", min_size=1, max_size=6).filter(
        lambda e: e.strip("*") != "" and "\\" not in e
    ),
    name=st.text(alphabet="ab:(@<", max_size=10),
)
def test_symbol_pattern_agrees_with_reference(entry: str, name: str) -> None:
    expected = _symbol_reference(entry).fullmatch(name) is not None
    assert SymbolPattern(entry).matches(name) is expected, (entry, name)
