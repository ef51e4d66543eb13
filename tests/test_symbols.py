"""Demangling (c++filt spellings) and the qualified-name form the index files symbols under."""

from __future__ import annotations

import pytest

from wheelaudit.model.binary import Symbol
from wheelaudit.model.globs import SymbolPattern
from wheelaudit.checks.index import NameIndex, SymbolIndex
from wheelaudit.binary.demangle import demangle
from wheelaudit.binary.symbols import qualified_name


@pytest.mark.parametrize("mangled, want", [
    ("_ZNK10executorch8backends7xnnpack14XnnpackBackend12is_availableEv",
     "executorch::backends::xnnpack::XnnpackBackend::is_available() const"),
    ("_ZTVN3mlx4core3FooE", "vtable for mlx::core::Foo"),
    ("_ZTTN3mlx4core3FooE", "VTT for mlx::core::Foo"),
    ("_ZTIN3mlx4core3FooE", "typeinfo for mlx::core::Foo"),
    ("_ZThn8_N3mlx4core3Foo3barEv", "non-virtual thunk to mlx::core::Foo::bar()"),
    ("_ZTv0_n24_N3mlx4core3Foo3barEv", "virtual thunk to mlx::core::Foo::bar()"),
    ("_ZTch0_h16_N3mlx4core3Foo3barEv", "covariant return thunk to mlx::core::Foo::bar()"),
    ("pthreadpool_create", "pthreadpool_create"),
    ("_Znot_valid_itanium", "_Znot_valid_itanium"),
])
def test_demangle(mangled, want):
    assert demangle(mangled) == want


@pytest.mark.parametrize("demangled, want", [
    ("int mlx::core::size_of_dtype<float>()", "mlx::core::size_of_dtype<float>()"),
    ("unsigned long std::f<a, b>(x y)", "std::f<a, b>(x y)"),
    ("vtable for mlx::core::Foo", "mlx::core::Foo"),
    ("decltype(auto) ns::g<int>(int)", "ns::g<int>(int)"),
    ("mlx::core::add(mlx::core::array const&, int)", "mlx::core::add(mlx::core::array const&, int)"),
    ("mlx::core::operator new(unsigned long)", "mlx::core::operator new(unsigned long)"),
    ("mlx::core::operator<<(std::ostream&, int)", "mlx::core::operator<<(std::ostream&, int)"),
    ("(anonymous namespace)::f()", "(anonymous namespace)::f()"),
    ("foo", "foo"),
])
def test_qualified_name(demangled, want):
    assert qualified_name(demangled) == want


def sym(mangled, weak=False):
    return Symbol(mangled, demangle(mangled), "weak" if weak else "global", "func")


def test_index_finds_template_instances_past_their_return_type():
    # int mlx::core::size_of_dtype<float>()
    s = sym("_ZN3mlx4core13size_of_dtypeIfEEiv")
    assert s.demangled.startswith("int mlx::core::size_of_dtype<float>")
    idx = SymbolIndex([s, sym("_ZN3mlx4core5addmmEv")])
    assert idx.find(SymbolPattern("mlx::core::*")) and len(idx.find(SymbolPattern("mlx::core::*"))) == 2
    assert [x.name for x in idx.find(SymbolPattern("mlx::core::size_of_dtype"))] == ["_ZN3mlx4core13size_of_dtypeIfEEiv"]
    assert idx.find(SymbolPattern("mlx::core::add")) == []  # whole-name: addmm is not add
    assert idx.find(SymbolPattern("_ZN3mlx4core5addmmEv"))  # a mangled entry matches too


def test_strong_only_and_imports():
    idx = SymbolIndex([sym("_ZN3mlx4core5arrayD1Ev", weak=True)])
    assert idx.any(SymbolPattern("mlx::core::array"))
    assert not idx.any(SymbolPattern("mlx::core::array"), strong_only=True)
    imports = NameIndex(["_ZN10executorch7runtime27get_num_registered_backendsEv", "malloc"])
    assert imports.any(SymbolPattern("executorch::runtime::get_num_registered_backends"))
    assert imports.any(SymbolPattern("malloc"))
    assert not imports.any(SymbolPattern("executorch::runtime::get_backend_class"))


# --------------------------------------------------------------------------------------------
# readers._columns: records kept by a mask, a slice per run


from array import array  # noqa: E402
from itertools import compress, pairwise  # noqa: E402

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from wheelaudit.binary import _columns  # noqa: E402


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(1, 40)), max_size=40), st.integers(0, 2**32 - 1))
def test_select_and_pick_keep_what_compress_keeps(spans, seed):
    """Masks made of runs (as linkers order symbol tables) and scattered ones (past the run limit:
    the element-wise way), with bytes other than 0 and 1 counted as selected: the same records
    as ``itertools.compress``, and ``pick`` keeps the type of its values."""
    import random

    rng = random.Random(seed)
    mask = bytearray()
    for value, length in spans:  # value 0: not selected; 1-3: selected
        mask += bytes([value]) * length
    if rng.random() < 0.3:  # scattered: more runs than the limit
        mask = bytearray(rng.choice((0, 0, 1, 2)) for _ in range(rng.randrange(0, 3000)))
    mask = bytes(mask)
    n = len(mask)
    u32 = array("I", (rng.randrange(2**32) for _ in range(n)))
    raw = bytes(rng.randrange(256) for _ in range(n))
    for values in (u32, raw, range(n), tuple(range(n, 2 * n)), list(u32)):
        assert _columns.select(values, mask) == list(compress(values, mask))
    got = _columns.pick(u32, mask)
    assert isinstance(got, array) and got.typecode == u32.typecode and got == array("I", compress(u32, mask))
    got = _columns.pick(raw, mask)
    assert isinstance(got, bytes) and got == bytes(compress(raw, mask))


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from("BHILQ"), st.sampled_from([0, 1, 2, 100, 4095, 4096, 4097, 6000]),
       st.sampled_from(["sorted", "equal", "one swap", "last lower", "last pair swapped", "first higher", "random",
                        "list"]))
def test_ascending_agrees_with_comparing_each_pair(seed, typecode, n, shape):
    """``ascending`` (sampled, then big-integer lanes for a large unsigned array) says what
    comparing every neighbouring pair says, for every width, extreme values, a single
    disorder anywhere, and sequences other than arrays."""
    import random

    rng = random.Random(seed)
    top = 2 ** (8 * array(typecode).itemsize) - 1
    values = sorted(rng.choice((0, top, rng.randrange(top + 1))) for _ in range(n))
    if shape == "equal":
        values = [rng.randrange(top + 1)] * n
    elif shape == "one swap" and n > 1:
        i = rng.randrange(n - 1)
        values[i], values[i + 1] = values[i + 1], values[i]
        if values[i] == values[i + 1] and values[i] > 0:
            values[i + 1] -= 1
    elif shape == "last pair swapped" and n > 1:  # (distinct values: the sample cannot tell)
        values = sorted({rng.randrange(top + 1) for _ in range(n)})
        values[-2:] = values[:-3:-1]
    elif shape == "last lower" and n > 1:
        values[-1] = max(0, values[-2] - 1)
    elif shape == "first higher" and n > 1:
        values[0] = min(top, values[1] + 1)
    elif shape == "random":
        rng.shuffle(values)
    seq = list(values) if shape == "list" else array(typecode, values)
    assert _columns.ascending(seq) == all(a <= b for a, b in pairwise(values))


def test_runs_of_a_mask():
    assert _columns.runs(b"") == []
    assert _columns.runs(b"\0\0") == []
    assert _columns.runs(b"\1\1\0\2\0\0\1") == [(0, 2), (3, 4), (6, 7)]
    assert _columns.runs(b"\1\0" * 100) is None  # (scattered: compress is cheaper)
