"""Seeds and input generators for the fuzz targets (``fuzz/targets.py``).

Every input is a pure function of ``(target, run seed, index)``: the runner can regenerate the
input a worker died on from its index alone, and a crash reproduces with
``python -m fuzz.run TARGET --replay INDEX --seed RUN_SEED``.

Seeds: the fixture binaries and wheels (``fixtures/build_fixtures.sh`` / ``fixtures/make_wheels.py``
output), small native members of real wheels (``/tmp/realwheels`` when present), the shipped
rulesets, and a few synthetic files (a PE image, tiny wheels). Binary inputs are seeds with
1-8 mutations, most of them in the structures a reader walks (headers, load commands, section
and symbol tables, string tables, the export trie); wheel inputs are either fresh archives built
here (hostile names, lying sizes, links, duplicates, bombs, broken RECORDs, mutated binaries
inside) or seed wheels with their zip records mutated field by field.
"""

from __future__ import annotations

import base64
import hashlib
import random
import struct
import zipfile
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

#: a ruleset touching every rule kind; the wheel target audits each input with it (fuzz/targets.py), and a seed of the rules target
RULES_TEXT = """\
version = 1
name = "fuzz"
[libraries]
expected = ["**/*.{so,dylib,pyd,dll}", "**/lib*.so.*"]
identity = "filename"
[[component]]
name = "runtime"
symbols = ["executorch::runtime::*", "mlx::core::add"]
strings = ["Failed to load the default metallib"]
owner = "**/libexecutorch.*"
required = false
[[component]]
name = "backend"
symbols = ["*Backend::init", "foo_public"]
owner = "**/lib{foo,backend}*"
required = { os = "macos" }
exempt = ["*_aot_lib.so"]
[[file]]
name = "metallib"
glob = "**/mlx.metallib"
max = 1
beside = "runtime"
[[binary]]
path = "**/_C.*"
must-not-define = ["backend"]
must-import = ["executorch::runtime::get_num_registered_backends"]
must-need = ["libexecutorch.*"]
[linkage]
allow-external = ["libc.so.*", "/usr/lib/*", "/System/Library/Frameworks/*"]
forbid-rpath = ["/Users/*", "/home/*", "*/cmake-out/*"]
[[waive]]
code = "WA201"
target = "runtime"
reason = "fuzz"
until = 2099-01-01
"""

MAX_SEED_BINARY = 512 * 1024  # larger binaries make each input too slow to be worth it
MAX_SEED_WHEEL = 4 << 20

INTERESTING = (0, 1, 2, 7, 8, 0x10, 0x20, 0x3F, 0x40, 0x7F, 0x80, 0xFF, 0x100, 0x7FFF, 0x8000,
               0xFFFF, 0x10000, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFE, 0xFFFFFFFF, 0x100000000,
               0x7FFFFFFFFFFFFFFF, 0x8000000000000000, 0xFFFFFFFFFFFFFFFF, 1_000_000, 20_000_001)


# =============================================================================================
# seeds
@dataclass
class Corpus:
    binaries: dict[str, list[bytes]] = field(default_factory=lambda: {"elf": [], "macho": [], "pe": []})
    wheels: list[bytes] = field(default_factory=list)
    wheel_paths: list[Path] = field(default_factory=list)
    rules: list[bytes] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    regions: dict[int, list[tuple[int, int]]] = field(default_factory=dict)  # id(seed) -> hot regions

    def summary(self) -> dict[str, int]:
        return {"elf": len(self.binaries["elf"]), "macho": len(self.binaries["macho"]),
                "pe": len(self.binaries["pe"]), "wheels": len(self.wheels), "rules": len(self.rules),
                "names": len(self.names)}


def _fmt(head: bytes) -> str | None:
    from wheelaudit.binary import detect

    return detect(head[:8]) if len(head) >= 4 else None


def load_corpus(dirs: Iterable[Path], real_wheels: Iterable[Path] = (), *, per_wheel: int = 12,
                root: Path | None = None) -> Corpus:
    """Seeds from ``dirs`` (fixture build directories: binaries and ``.whl`` files), native
    members of ``real_wheels`` (at most ``per_wheel`` each, smallest first, under
    :data:`MAX_SEED_BINARY`), the repository's rulesets and synthetic files."""
    c = Corpus()
    seen: set[bytes] = set()

    def add_binary(data: bytes) -> None:
        fmt = _fmt(data)
        if fmt is None or len(data) > MAX_SEED_BINARY:
            return
        h = hashlib.sha256(data).digest()
        if h not in seen:
            seen.add(h)
            c.binaries[fmt].append(data)

    for d in dirs:
        d = Path(d)
        if not d.exists():
            continue
        for p in sorted(d.rglob("*")):
            if not p.is_file() or p.is_symlink():
                continue
            if p.suffix == ".whl":
                if p.stat().st_size <= MAX_SEED_WHEEL:
                    c.wheels.append(p.read_bytes())
                    c.wheel_paths.append(p)
                continue
            with open(p, "rb") as fh:
                head = fh.read(8)
            if _fmt(head) is not None:
                add_binary(p.read_bytes())
    for w in real_wheels:
        try:
            with zipfile.ZipFile(w) as zf:
                infos = sorted((i for i in zf.infolist() if 1024 < i.file_size <= MAX_SEED_BINARY),
                               key=lambda i: i.file_size)
                taken = 0
                for info in infos:
                    with zf.open(info) as fh:
                        if _fmt(fh.read(8)) is None:
                            continue
                    add_binary(zf.read(info))
                    taken += 1
                    if taken >= per_wheel:
                        break
        except (OSError, zipfile.BadZipFile):
            continue
    c.binaries["pe"].extend(synthetic_pe())
    here = root or Path(__file__).resolve().parent.parent
    for p in sorted((here / "rules").glob("*.toml")):
        c.rules.append(p.read_bytes())
    c.rules.append(RULES_TEXT.encode())
    c.rules.extend(s.encode() for s in RULE_SNIPPETS)
    c.wheels.append(tiny_wheel([("pkg/lib.so", b"\x7fELF" + bytes(60))]))
    c.names = collect_names(c) + CRAFTED_NAMES
    for fmt, seeds in c.binaries.items():
        for s in seeds:
            c.regions[id(s)] = hot_regions(s, fmt)
    return c


def synthetic_pe() -> list[bytes]:
    """Two small PE images (a DLL and an executable): MZ header, PE signature, COFF header,
    an optional header and one section."""
    out = []
    for machine, characteristics in ((0x8664, 0x2022), (0xAA64, 0x0022), (0x14C, 0x2102)):
        dos = bytearray(b"MZ" + bytes(0x3A) + struct.pack("<I", 0x80))
        dos += bytes(0x80 - len(dos))
        coff = struct.pack("<HHIIIHH", machine, 1, 0, 0, 0, 0xF0, characteristics)
        opt = struct.pack("<H", 0x20B) + bytes(0xF0 - 2)
        sect = b".text\0\0\0" + struct.pack("<IIIIIIHHI", 0x100, 0x1000, 0x200, 0x400, 0, 0, 0, 0, 0x60000020)
        body = bytes(dos) + b"PE\0\0" + coff + opt + sect
        out.append(body + bytes(0x600 - len(body)))
    return out


def collect_names(c: Corpus, limit: int = 4000) -> list[str]:
    from wheelaudit.binary import MalformedBinary
    from wheelaudit.binary import elf, macho

    names: list[str] = []
    for fmt, mod in (("elf", elf), ("macho", macho)):
        for data in c.binaries[fmt][:40]:
            try:
                for s in mod.parse(data):
                    names.extend(x.name for x in s.exports if x.name.startswith("_Z"))
                    names.extend(n for n in s.imports if n.startswith("_Z"))
            except MalformedBinary:
                continue
    return sorted(set(names))[:limit]


CRAFTED_NAMES = [
    "_ZN10executorch7runtime16register_backendERKNS0_7BackendE", "_ZNK3mlx4core5array4sizeEv",
    "_Z1fIiEvT_", "_ZNSt3__16vectorIiNS_9allocatorIiEEE9push_backEOi", "_ZTVN3mlx4core6DeviceE",
    "_ZZ4mainE1x", "_ZN1AIXadL_Z1fvEEE1gEv", "_ZL3foov", "_Z3fooILi2EEvRAplT_Li1E_i",
    "_ZThn8_N1B1fEv", "_ZGVZ1fvE1x", "_ZN5Outer5InnerIiE1fEv", "_Z1fPFvvE", "_Z1fM1AFvvE",
]

RULE_SNIPPETS = [
    'version = 1\n[[component]]\nname = "a"\nsymbols = ["ns::*"]\nowner = "lib/*"\nrequired = { os = "macos", arch = "arm64" }\n',
    'version = 1\n[[file]]\nname = "m"\nglob = "**/mlx.metallib"\ncount = 1\nwhen = { os = "macos" }\n',
    'version = 1\n[linkage]\nallow-external = ["*"]\nprovided-by = { torch = ["libtorch*"] }\n',
    'version = 1\n[[waive]]\ncode = "WA2"\ntarget = "*"\nreason = "r"\nuntil = 2000-01-01\n',
    '[tool.wheelaudit]\nrules = "x.toml"\n',
    'version = 1\nselect = ["WA1", "WA201"]\nignore = "WA003"\nfail-on = "warning"\n',
]

TOML_FRAGMENTS = [
    "[[component]]\n", "[libraries]\n", "[linkage]\n", "[[file]]\n", "[[binary]]\n", "[[waive]]\n",
    'name = "x"\n', 'symbols = ["a::b", "c*"]\n', 'owner = "{a,b}/**/*.so"\n', "required = true\n",
    'required = { os = "linux", arch = ["x86_64", "aarch64"], version = "*+cu*" }\n', "count = 2\n",
    'beside = "x"\n', 'path = "**/_C.*"\n', 'must-need = ["lib*"]\n', 'expected = ["**"]\n',
    'strings = ["\\u0000", ""]\n', "strong-only = true\n", 'exempt = "*"\n', "until = 2027-06-30\n",
    '"', "'", "{", "}", "[", "]", "=", ".", ",", "\n", "#", '"""', "'''", "\\", "\\u", "\x00",
    "1e400", "-0", "inf", "nan", "0x7fffffffffffffff", "99999999999999999999", "1979-05-27T07:32:00Z",
    "a." * 40 + "a = 1\n", "[" * 50, "x = " + "[" * 300 + "]" * 300 + "\n", '"' + "\\\\" * 200 + '"',
    "{a,{b,{c,{d,{e}}}}}", "*" * 100, "**/" * 50, "[!" + "a-z" * 30 + "]", "é", "\ufeff", "\r\n",
]


# =============================================================================================
# regions of a binary worth mutating
def hot_regions(data: bytes, fmt: str) -> list[tuple[int, int]]:
    """(start, end) ranges holding the structures a reader walks."""
    n = len(data)
    out = [(0, min(n, 256))]
    try:
        if fmt == "elf" and n >= 64:
            little = data[5] == 1
            e = "<" if little else ">"
            if data[4] == 2:
                phoff, shoff = struct.unpack_from(e + "QQ", data, 0x20)
                phentsize, phnum, shentsize, shnum = struct.unpack_from(e + "HHHH", data, 0x36)
                sh_fmt = e + "IIQQQQIIQQ"
            else:
                phoff, shoff = struct.unpack_from(e + "II", data, 0x1C)
                phentsize, phnum, shentsize, shnum = struct.unpack_from(e + "HHHH", data, 0x2A)
                sh_fmt = e + "IIIIIIIIII"
            out.append((phoff, phoff + phentsize * phnum))
            out.append((shoff, shoff + shentsize * shnum))
            for i in range(min(shnum, 64)):
                sec = struct.unpack_from(sh_fmt, data, shoff + i * shentsize)
                stype, off, size = sec[1], sec[4], sec[5]
                if stype in (2, 3, 4, 5, 6, 9, 11, 0x6FFFFFF6, 0x6FFFFFFD, 0x6FFFFFFE, 0x6FFFFFFF):
                    out.append((off, off + min(size, 8192)))
        elif fmt == "macho":
            starts = [(0, n)]
            if data[:4] in (b"\xca\xfe\xba\xbe", b"\xca\xfe\xba\xbf"):
                wide = data[3] == 0xBF
                nfat = struct.unpack_from(">I", data, 4)[0]
                out.append((0, 8 + nfat * (32 if wide else 20)))
                starts = []
                for i in range(min(nfat, 8)):
                    if wide:
                        off, size = struct.unpack_from(">QQ", data, 8 + i * 32 + 8)
                    else:
                        off, size = struct.unpack_from(">II", data, 8 + i * 20 + 8)
                    starts.append((off, size))
            for base, _size in starts:
                magic = data[base:base + 4]
                e = "<" if magic in (b"\xce\xfa\xed\xfe", b"\xcf\xfa\xed\xfe") else ">"
                wide = magic in (b"\xcf\xfa\xed\xfe", b"\xfe\xed\xfa\xcf")
                hdr = 32 if wide else 28
                ncmds, sizeofcmds = struct.unpack_from(e + "II", data, base + 16)
                out.append((base, base + hdr + sizeofcmds))
                off = base + hdr
                for _ in range(min(ncmds, 256)):
                    cmd, cmdsize = struct.unpack_from(e + "II", data, off)
                    if cmd == 0x2:  # LC_SYMTAB
                        symoff, nsyms, stroff, strsize = struct.unpack_from(e + "IIII", data, off + 8)
                        out.append((base + symoff, base + symoff + min(nsyms * 16, 8192)))
                        out.append((base + stroff, base + stroff + min(strsize, 8192)))
                    elif cmd in (0x22, 0x80000022):  # LC_DYLD_INFO[_ONLY]
                        to, ts = struct.unpack_from(e + "II", data, off + 40)
                        out.append((base + to, base + to + min(ts, 8192)))
                    elif cmd == 0x80000033:  # LC_DYLD_EXPORTS_TRIE
                        to, ts = struct.unpack_from(e + "II", data, off + 8)
                        out.append((base + to, base + to + min(ts, 8192)))
                    if cmdsize < 8:
                        break
                    off += cmdsize
        elif fmt == "pe" and n >= 0x40:
            lfanew = struct.unpack_from("<I", data, 0x3C)[0]
            out.append((lfanew, lfanew + 0x200))
    except (struct.error, IndexError):
        pass
    return [(max(0, a), min(n, b)) for a, b in out if a < n and b > a]


# =============================================================================================
# byte-level mutation
def _pick_offset(rng: random.Random, n: int, regions: list[tuple[int, int]]) -> int:
    if regions and rng.random() < 0.85:
        a, b = rng.choice(regions)
        if a < n:
            return rng.randrange(a, min(b, n))
    return rng.randrange(n)


def mutate_bytes(data: bytes, rng: random.Random, regions: list[tuple[int, int]] = (),
                 others: list[bytes] = (), count: int | None = None) -> bytes:
    buf = bytearray(data)
    for _ in range(count or min(8, 1 + int(rng.expovariate(0.6)))):
        n = len(buf)
        if n == 0:
            buf += bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64)))
            continue
        op = rng.random()
        pos = _pick_offset(rng, n, regions)
        if op < 0.25:  # bit flip
            buf[pos] ^= 1 << rng.randrange(8)
        elif op < 0.40:  # interesting byte
            buf[pos] = rng.choice((0, 1, 0x7F, 0x80, 0xFF, rng.randrange(256)))
        elif op < 0.72:  # interesting integer, often aligned
            width = rng.choice((2, 4, 4, 8))
            if rng.random() < 0.7:
                pos -= pos % width
            v = rng.choice(INTERESTING + (n, n - 1, n + 1, pos, rng.randrange(1 << 16)))
            v &= (1 << (8 * width)) - 1
            try:
                struct.pack_into(("<" if rng.random() < 0.7 else ">") + {2: "H", 4: "I", 8: "Q"}[width], buf, pos, v)
            except struct.error:
                pass
        elif op < 0.80:  # copy a chunk over another place
            length = rng.randrange(1, 64)
            src = rng.randrange(n)
            chunk = buf[src:src + length]
            buf[pos:pos + len(chunk)] = chunk
        elif op < 0.85:  # truncate
            del buf[rng.randrange(n):]
        elif op < 0.90:  # insert or delete a few bytes
            if rng.random() < 0.5:
                buf[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 16)))
            else:
                del buf[pos:pos + rng.randrange(1, 16)]
        elif op < 0.95 and others:  # splice with another seed
            other = rng.choice(others)
            if other:
                start = rng.randrange(len(other))
                length = rng.randrange(1, 4096)
                buf[pos:pos + length] = other[start:start + length]
        else:  # fill a run
            length = rng.randrange(1, 256)
            buf[pos:pos + length] = bytes([rng.choice((0, 0xFF, 0x41))]) * min(length, n - pos)
    return bytes(buf)


def binary_input(fmt: str, c: Corpus, rng: random.Random) -> bytes:
    seeds = c.binaries[fmt] or [b"\x7fELF" + bytes(60)]
    seed = rng.choice(seeds)
    if rng.random() < 0.03:
        return seed[: rng.randrange(len(seed) + 1)]  # plain truncation
    others = [s for f in c.binaries.values() for s in f]
    return mutate_bytes(seed, rng, c.regions.get(id(seed), []), others)


# =============================================================================================
# zip archives, written by hand so that every field can lie
@dataclass
class Entry:
    name: bytes
    data: bytes  # uncompressed
    method: int = 8
    flags: int = 0x800
    extattr: int = 0o100644 << 16
    lie_usize: int | None = None
    lie_csize: int | None = None
    lie_crc: int | None = None
    local_name: bytes | None = None  # a different name in the local header
    offset: int | None = None  # the central directory points here instead
    raw: bytes | None = None  # the compressed bytes as stored (``data`` is then ignored)


def zip_bytes(entries: list[Entry], *, comment: bytes = b"", prefix: bytes = b"", zip64: bool = False) -> bytes:
    out = bytearray(prefix)
    cd = bytearray()
    for e in entries:
        if e.raw is not None:
            payload = e.raw
        elif e.method == 8:
            co = zlib.compressobj(6, zlib.DEFLATED, -15)
            payload = co.compress(e.data) + co.flush()
        elif e.method == 12:
            import bz2

            payload = bz2.compress(e.data)
        else:
            payload = e.data
        crc = zlib.crc32(e.data) if e.lie_crc is None else e.lie_crc
        usize = len(e.data) if e.lie_usize is None else e.lie_usize
        csize = len(payload) if e.lie_csize is None else e.lie_csize
        offset = len(out)
        lname = e.name if e.local_name is None else e.local_name
        extra = b""
        u32, c32 = usize, csize
        if zip64:
            extra = struct.pack("<HHQQ", 1, 16, usize, csize)
            u32 = c32 = 0xFFFFFFFF
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 45 if zip64 else 20, e.flags, e.method, 0, 0x21,
                           crc & 0xFFFFFFFF, c32 & 0xFFFFFFFF, u32 & 0xFFFFFFFF, len(lname), len(extra))
        out += lname + extra + payload
        cd_extra = struct.pack("<HHQQQ", 1, 24, usize, csize, offset) if zip64 else b""
        cd_off = (0xFFFFFFFF if zip64 else (offset if e.offset is None else e.offset)) & 0xFFFFFFFF
        cd += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 0x0314, 45 if zip64 else 20, e.flags, e.method,
                          0, 0x21, crc & 0xFFFFFFFF, c32 & 0xFFFFFFFF, u32 & 0xFFFFFFFF, len(e.name),
                          len(cd_extra), 0, 0, 0, e.extattr & 0xFFFFFFFF, cd_off)
        cd += e.name + cd_extra
    cd_start = len(out)
    out += cd
    n = len(entries)
    if zip64:
        z64 = len(out)
        out += struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, n, n, len(cd), cd_start)
        out += struct.pack("<IIQI", 0x07064B50, 0, z64, 1)
        out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, len(comment))
    else:
        out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, n & 0xFFFF, n & 0xFFFF, len(cd), cd_start, len(comment))
    return bytes(out + comment)


def record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def wheel_entries(members: list[tuple[str, bytes]], *, dist: str = "fuzz-1.0",
                  tag: str = "cp311-cp311-manylinux_2_28_x86_64", record: bool = True,
                  metadata: bytes | None = None) -> list[Entry]:
    di = f"{dist}.dist-info"
    files = list(members)
    files.append((f"{di}/METADATA", metadata if metadata is not None else
                  b"Metadata-Version: 2.1\nName: fuzz\nVersion: 1.0\nRequires-Dist: torch\n"))
    files.append((f"{di}/WHEEL", f"Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: {tag}\n".encode()))
    entries = [Entry(n.encode("utf-8", "surrogateescape"), d) for n, d in files]
    if record:
        rows = "".join(f"{n},{record_hash(d)},{len(d)}\n" for n, d in files) + f"{di}/RECORD,,\n"
        entries.append(Entry(f"{di}/RECORD".encode(), rows.encode("utf-8", "surrogateescape")))
    return entries


def tiny_wheel(members: list[tuple[str, bytes]], **kw) -> bytes:
    return zip_bytes(wheel_entries(members, **kw))


HOSTILE_NAMES = [
    "../evil.so", "/abs/evil.so", "pkg\\evil.so", "C:/evil.so", "c:evil.so", "pkg/a\x00b.so", "pkg//x.so",
    "./pkg/x.so", "pkg/./x.so", "pkg/../../x.so", "pkg/", "pkg/x.so/", "", "\u202epkg/x.so", "pkg/" + "a" * 300,
    "pkg/\udcff.so", "fuzz-1.0.dist-info/RECORD", "fuzz-1.0.dist-info/../RECORD", "pkg/lib.so",
]
NORMAL_NAMES = ["pkg/lib.so", "pkg/libfoo.so.2", "pkg/lib/libexecutorch.dylib", "pkg/_C.cpython-311-x86_64-linux-gnu.so",
                "pkg/__init__.py", "pkg/mlx.metallib", "pkg/lib/mlx.metallib", "pkg.libs/libz.so.1", "pkg/x.pyd"]


def wheel_input(c: Corpus, rng: random.Random) -> bytes:
    if c.wheels and rng.random() < 0.3:
        return _mutate_zip(rng.choice(c.wheels), rng, c)
    return _fresh_wheel(c, rng)


def _member_data(c: Corpus, rng: random.Random) -> bytes:
    r = rng.random()
    bins = [s for f in c.binaries.values() for s in f if len(s) <= 128 * 1024] or [b"\x7fELF" + bytes(60)]
    if r < 0.45:
        return rng.choice(bins)
    if r < 0.75:
        fmt = rng.choice([f for f in c.binaries if c.binaries[f]] or ["elf"])
        return binary_input(fmt, c, rng)
    if r < 0.85:
        return b"print('hello')\n" * rng.randrange(1, 20)
    if r < 0.9:
        return tiny_wheel([("inner/lib.so", rng.choice(bins))])  # a zip inside: just bytes
    return bytes(rng.randrange(256) for _ in range(rng.randrange(0, 200)))


def _fresh_wheel(c: Corpus, rng: random.Random) -> bytes:
    members = []
    for _ in range(rng.randrange(0, 5)):
        name = rng.choice(HOSTILE_NAMES if rng.random() < 0.25 else NORMAL_NAMES)
        members.append((name, _member_data(c, rng)))
    tag = rng.choice(["cp311-cp311-manylinux_2_28_x86_64", "cp311-cp311-macosx_14_0_arm64", "py3-none-any",
                      "cp311-cp311-macosx_10_13_universal2", "cp311-cp311-win_amd64", "x-y-z", "cp311-cp311-" + "a" * 200])
    metadata = None
    if rng.random() < 0.2:
        metadata = mutate_bytes(b"Metadata-Version: 2.1\nName: fuzz\nVersion: 1.0\nRequires-Dist: torch>=2\n", rng)
    entries = wheel_entries(members, tag=tag, record=rng.random() < 0.9, metadata=metadata)
    for e in entries:
        r = rng.random()
        if r < 0.05:
            e.lie_usize = rng.choice((0, 1, len(e.data) - 1, len(e.data) + 1, 0xFFFFFFFF, 17 << 20))
        elif r < 0.08:
            e.lie_csize = rng.choice((0, 1, 0xFFFFFFFF, rng.randrange(1 << 16)))
        elif r < 0.10:
            e.lie_crc = rng.randrange(1 << 32)
        elif r < 0.13:
            e.extattr = 0o120777 << 16  # a symbolic link
        elif r < 0.15:
            e.flags |= 1  # "encrypted"
        elif r < 0.18:
            e.method = rng.choice((0, 12, 14, 9, 99))
        elif r < 0.20:
            e.local_name = e.name + b"x"
        elif r < 0.22:
            e.offset = 0  # overlapping members
        elif r < 0.25:
            e.method = 0
    if entries and rng.random() < 0.1:
        entries.append(rng.choice(entries))  # a duplicate
    if rng.random() < 0.1:
        rng.shuffle(entries)
    data = zip_bytes(entries, zip64=rng.random() < 0.15, prefix=b"#!junk\n" if rng.random() < 0.05 else b"",
                     comment=b"c" * rng.choice((0, 0, 10, 65535)))
    if rng.random() < 0.25:
        data = mutate_bytes(data, rng, _zip_regions(data))
    return data


def _zip_regions(data: bytes) -> list[tuple[int, int]]:
    """The end record, the central directory and every local header."""
    n = len(data)
    eocd = data.rfind(b"PK\x05\x06")
    if eocd < 0:
        return [(max(0, n - 256), n)]
    out = [(eocd, min(n, eocd + 22))]
    try:
        cd_size, cd_off = struct.unpack_from("<II", data, eocd + 12)
        out.append((cd_off, min(n, cd_off + cd_size)))
        pos = cd_off
        while pos + 46 <= n and data[pos:pos + 4] == b"PK\x01\x02":
            nlen, xlen, clen = struct.unpack_from("<HHH", data, pos + 28)
            local = struct.unpack_from("<I", data, pos + 42)[0]
            if local + 30 <= n:
                out.append((local, local + 30 + nlen))
            pos += 46 + nlen + xlen + clen
    except struct.error:
        pass
    z64 = data.rfind(b"PK\x06\x06")
    if z64 >= 0:
        out.append((z64, min(n, z64 + 76)))
    return [(a, b) for a, b in out if a < b <= n]


def _mutate_zip(seed: bytes, rng: random.Random, c: Corpus) -> bytes:
    data = mutate_bytes(seed, rng, _zip_regions(seed), count=rng.randrange(1, 6))
    if rng.random() < 0.05:
        data = data[: rng.randrange(len(data) + 1)]
    return data


# =============================================================================================
# rules files, patterns, names
def rules_input(c: Corpus, rng: random.Random) -> bytes:
    seed = rng.choice(c.rules)
    r = rng.random()
    if r < 0.35:
        return mutate_bytes(seed, rng, [])
    lines = seed.decode("utf-8", "replace").split("\n")
    for _ in range(rng.randrange(1, 6)):
        op = rng.random()
        i = rng.randrange(len(lines) + 1)
        if op < 0.35:
            lines.insert(i, rng.choice(TOML_FRAGMENTS).rstrip("\n"))
        elif op < 0.5 and lines:
            del lines[min(i, len(lines) - 1)]
        elif op < 0.65 and lines:
            j = rng.randrange(len(lines))
            lines.insert(i, lines[j])
        elif op < 0.8 and lines:  # splice a line from another seed
            other = rng.choice(c.rules).decode("utf-8", "replace").split("\n")
            lines.insert(i, rng.choice(other))
        elif lines:  # replace a value
            j = rng.randrange(len(lines))
            key, eq, _ = lines[j].partition("=")
            if eq:
                lines[j] = key + "= " + rng.choice(['""', '"*"', "[]", "{}", "1", "true", '["{a,b}/**"]', "-1",
                                                    '"' + "x" * rng.randrange(1, 5000) + '"', "2026-02-30",
                                                    '{ os = "macos" }', '["' + "*a" * rng.randrange(1, 2000) + '"]'])
    text = "\n".join(lines)
    if rng.random() < 0.2:
        return mutate_bytes(text.encode("utf-8", "surrogatepass"), rng, [])
    return text.encode("utf-8", "surrogatepass")


GLOB_TOKENS = ["*", "**", "**/", "?", "[a-c]", "[!a]", "[]]", "[^/]", "{a,b}", "{,x}", "{a,{b,c}}", "\\", "\\*",
               "a", "b", "/", ".", "{", "}", "[", "]", ",", "::", "(", "<", "@", "x", "é"]


def glob_input(c: Corpus, rng: random.Random) -> bytes:
    n = rng.choice((1, 3, 6, 12, 40, 200, 2000))
    pattern = "".join(rng.choice(GLOB_TOKENS) for _ in range(rng.randrange(1, n + 1)))
    m = rng.choice((0, 5, 20, 100, 1000, 20000))
    text = "".join(rng.choice("ab/.:(<xé*") for _ in range(rng.randrange(0, m + 1)))
    if rng.random() < 0.2 and c.names:
        text = rng.choice(c.names)
    return (pattern[:5000] + "\n" + text).encode("utf-8")


def _sub(i: int) -> str:
    if i == 0:
        return "S_"
    i -= 1
    digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    out = ""
    while True:
        out = digits[i % 36] + out
        i //= 36
        if not i:
            return f"S{out}_"


def names_input(c: Corpus, rng: random.Random) -> bytes:
    r = rng.random()
    if r < 0.5 and c.names:
        return mutate_bytes(rng.choice(c.names).encode(), rng, [])
    if r < 0.75:
        # templates whose arguments refer back to earlier ones (S_, S0_, ...): the shape that
        # makes a demangler's output grow; kept to a depth whose output stays small
        levels = rng.randrange(1, 20)
        name = "_Z1fI1xIiE"
        for k in range(levels):
            ref = _sub(rng.randrange(0, k + 2))
            name += rng.choice((f"S_I{ref}{ref}E", f"1yI{ref}E", f"P{ref}", f"N{ref}1zE"))
        return (name + "Ev").encode()
    parts = ["_Z"] + [rng.choice(["N", "E", "I", "S_", "T_", "1a", "3foo", "i", "v", "P", "K", "R", "St", "Sa",
                                  "L", "Li0E", "Dp", "Dn", "Ut_", "Ul", "Z", "cv", "ix", "pl", "sr", "X"])
                      for _ in range(rng.randrange(1, 60))]
    return "".join(parts).encode()


#: the consumer surface's seeds (fuzz target ``surface``): a generated config, export file and .pc
SURFACE_SEEDS = (
    """# expanded from @PACKAGE_INIT@
get_filename_component(PACKAGE_PREFIX_DIR "${CMAKE_CURRENT_LIST_DIR}/../../../" ABSOLUTE)
macro(set_and_check _var _file)
  set(${_var} "${_file}")
endmacro()
set(PN P)
set_and_check(P_INCLUDE_DIR "${PACKAGE_PREFIX_DIR}/include")
if(WIN32 AND NOT TARGET p::w)
  add_library(p::w UNKNOWN IMPORTED)
elseif(310 GREATER_EQUAL 300)
  list(APPEND CMAKE_MODULE_PATH "${CMAKE_CURRENT_LIST_DIR}")
endif()
include("${CMAKE_CURRENT_LIST_DIR}/${PN}Targets.cmake")
""",
    """get_filename_component(_IMPORT_PREFIX "${CMAKE_CURRENT_LIST_FILE}" PATH)
get_filename_component(_IMPORT_PREFIX "${_IMPORT_PREFIX}" PATH)
get_filename_component(_IMPORT_PREFIX "${_IMPORT_PREFIX}" PATH)
get_filename_component(_IMPORT_PREFIX "${_IMPORT_PREFIX}" PATH)
if(_IMPORT_PREFIX STREQUAL "/")
  set(_IMPORT_PREFIX "")
endif()
foreach(_t IN ITEMS p::p)
  if(TARGET "${_t}")
    return()
  endif()
endforeach()
add_library(p::p SHARED IMPORTED)
set_target_properties(p::p PROPERTIES
  IMPORTED_LOCATION_RELEASE "${_IMPORT_PREFIX}/lib/libp.so"
  IMPORTED_SONAME_RELEASE "libp.so.1"
  INTERFACE_INCLUDE_DIRECTORIES "${_IMPORT_PREFIX}/include;$<BUILD_INTERFACE:/b>"
  INTERFACE_LINK_LIBRARIES "$<LINK_ONLY:m>;/usr/local/cuda/lib64/libculibos.a;/F/X.framework"
  INTERFACE_COMPILE_OPTIONS "/EHsc;-I/opt/x")
file(GLOB _files "${CMAKE_CURRENT_LIST_DIR}/PTargets-*.cmake")
foreach(f ${_files})
  include(${f})
endforeach()
#[[ a bracket comment ]] set(x [==[ a [[bracket]] ]==])
""",
    """prefix=${pcfiledir}/../..
libdir=${prefix}/lib
includedir=${prefix}/include
Name: p
Requires: q >= 1, r
Libs: -L${libdir} -lp ${libdir}/libp_extra.a -Wl,-rpath,${libdir}
Cflags: -I${includedir} -I/usr/local/include
""",
)
SURFACE_TOKENS = ["(", ")", '"', "#", "[[", "]]", "[=[", "]=]", "#[[", ";", "\\", "${", "}", "$<", ">", "@X@", "\n",
                  " ", "include(", "add_library(", "IMPORTED", "set(", "if(", "endif()", "foreach(x ${L})",
                  "endforeach()", "function(f)", "${CMAKE_CURRENT_LIST_FILE}", "${x}${x}", "NOT", "AND", "TARGET"]


def surface_input(c: Corpus, rng: random.Random) -> bytes:
    texts = list(SURFACE_SEEDS)
    for _ in range(rng.randrange(1, 6)):
        k = rng.randrange(3)
        t = texts[k]
        pos = rng.randrange(len(t) + 1)
        op = rng.random()
        if op < 0.5:
            t = t[:pos] + "".join(rng.choice(SURFACE_TOKENS) for _ in range(rng.randrange(1, 12))) + t[pos:]
        elif op < 0.7:
            t = t[:pos] + t[pos + rng.randrange(1, 40):]
        elif op < 0.85:  # repeat a stretch (deep nesting, long lists)
            stretch = t[pos:pos + rng.randrange(1, 60)]
            t = t[:pos] + stretch * rng.choice((2, 10, 200)) + t[pos:]
        else:
            t = mutate_bytes(t.encode(), rng, []).decode("utf-8", "replace")
        texts[k] = t
    return "\0".join(texts).encode("utf-8", "surrogatepass")


# =============================================================================================
# the shapes of the second hostile round (fuzz/shapes.py): fat headers, local-header smuggling,
# path lists, CMake nesting, names with control characters
def _thin_macho(c: Corpus, rng: random.Random) -> bytes:
    from . import shapes as S

    thin = [s for s in c.binaries["macho"] if s[:4] in (b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe")
            and len(s) <= 64 * 1024]
    if thin and rng.random() < 0.15:  # (a real slice now and then: most inputs test the header)
        return rng.choice(thin)
    deps = [f"@rpath/lib{i}.dylib".encode() for i in range(rng.randrange(0, 6))]
    return S.macho_dylib(deps, [b"@loader_path"], cpu=rng.choice(S._CPUS))


def fat_input(c: Corpus, rng: random.Random) -> bytes:
    """A universal header: many architectures (45 to 64 most often, where a fat header reads as a
    Java class file's version), overlapping or shared slices, lying sizes, fat64."""
    from . import shapes as S

    r = rng.random()
    if r < 0.45:
        nfat = rng.randrange(45, 65)
    elif r < 0.6:
        nfat = rng.choice((65, 100, 0x7FFF, 0xFFFFFFFF, 0))
    else:
        nfat = rng.randrange(1, 45)
    count = min(nfat, rng.choice((1, 2, 3, nfat, nfat))) if nfat else rng.randrange(1, 3)
    count = max(1, min(count, 64))
    slices = [_thin_macho(c, rng) for _ in range(min(count, 8))]
    slices += [slices[i % len(slices)] for i in range(count - len(slices))]
    kw: dict = {"wide": rng.random() < 0.25, "nfat": nfat if rng.random() < 0.9 else count,
                "align": rng.choice((0, 2, 3, 12, 14))}
    op = rng.random()
    if op < 0.2:
        kw["overlap"] = rng.choice((1, 8, 100, 4096, max(len(s) for s in slices)))
    elif op < 0.3:
        kw["dup_offsets"] = True
    elif op < 0.4:
        kw["lie_sizes"] = {rng.randrange(count): rng.choice((0, 1, 0xFFFFFFFF, 1 << 40, 28, 32))}
    data = S.fat(slices, **kw)
    if rng.random() < 0.25:
        data = mutate_bytes(data, rng, [(0, min(len(data), 8 + 32 * min(max(nfat, 1), 64)))], count=rng.randrange(1, 3))
    return data


def smuggle_input(c: Corpus, rng: random.Random) -> bytes:
    """A first byte saying whether something is hidden (1) or not (0), then a wheel whose zip
    has local headers its central directory does not list, or a local header that disagrees."""
    from . import shapes as S

    bins = [s for f in c.binaries.values() for s in f if len(s) <= 64 * 1024] or [S.elf_dso([b"libc.so.6"])]
    members = [(n, rng.choice(bins) if n.endswith(".so") else b"x = 1\n")
               for n in rng.sample(("pkg/_C.so", "pkg/__init__.py", "pkg/lib/libfoo.so", "pkg/util.py"), rng.randrange(1, 4))]
    entries = wheel_entries(members)
    listed = [(e.name, e.data) for e in entries]
    rng.shuffle(listed)
    r = rng.random()
    hidden: list[tuple[bytes, bytes]] = []
    disagree = None
    if r < 0.7:
        hname = rng.choice((b"pkg/evil.so", b"pkg/_C.so", listed[0][0], b"fuzz-1.0.dist-info/RECORD", b"pkg/x.pth"))
        hidden = [(hname, rng.choice(bins))] * rng.choice((1, 1, 2))
    if r >= 0.5:
        disagree = rng.choice(("csize", "usize", "crc", "method", "name"))
    where = rng.choice(("gap", "after", "front", "tail"))
    data = S.smuggled_zip(listed, hidden, rng, where=where, disagree=disagree)
    flag = 1 if hidden or disagree else 0
    if rng.random() < 0.1:
        data = mutate_bytes(data, rng, _zip_regions(data), count=1)
        flag = 2  # mutated afterwards: no oracle beyond "no crash"
    return bytes([flag]) + data


def paths_input(c: Corpus, rng: random.Random) -> bytes:
    """A wheel of a few libraries with long search-path lists and many dependencies, some of
    them the wheel's own (libraries that inherit each other's paths)."""
    from . import shapes as S

    nlibs = rng.randrange(1, 6)
    tier = rng.random()  # mostly small lists (many inputs), now and then long ones
    if tier < 0.85:
        ndeps, npaths = rng.choice((0, 1, 2, 5, 20)), rng.choice((0, 1, 2, 5, 50))
    elif tier < 0.998:
        ndeps, npaths = rng.choice((50, 100, 200)), rng.choice((100, 300, 1000))
    else:
        ndeps, npaths = rng.choice((400, 1000)), rng.choice((2000, 5000))
    macos = rng.random() < 0.4
    names = [f"pkg/lib/lib{i}.{'dylib' if macos else 'so'}" for i in range(nlibs)]
    pieces = ["$ORIGIN", "$ORIGIN/..", "@loader_path", "@loader_path/../lib", "@executable_path", "@rpath",
              "/usr/lib", "", "/home/u/build", "$ORIGIN/../lib", "${ORIGIN}", "$LIB", "$PLATFORM", ".", "..",
              "/" * 3, "x" * 200]
    members = []
    for i, name in enumerate(names):
        deps = []
        for k in range(ndeps):
            if k % 3 == 0 and nlibs > 1:
                other = names[(i + 1 + k) % nlibs].rsplit("/", 1)[1]
                deps.append((("@rpath/" if macos else "") + other).encode())
            else:
                deps.append(f"{'@rpath/' if macos else ''}libmissing{k % 97}.{'dylib' if macos else 'so'}".encode())
        paths = [(rng.choice(pieces) + (f"/d{j % 13}" if rng.random() < 0.5 else "")).encode() for j in range(npaths)]
        if macos:
            data = S.macho_dylib(deps, paths if rng.random() < 0.8 else paths[:1],
                                 identity=("@rpath/" + name.rsplit("/", 1)[1]).encode())
        else:
            kind = rng.random()
            data = S.elf_dso(deps, runpath=paths if kind < 0.6 else None, rpath=paths if kind >= 0.4 else None,
                             soname=name.rsplit("/", 1)[1].encode())
        members.append((name, data))
    members.append(("pkg/_C.cpython-311-darwin.so" if macos else "pkg/_C.cpython-311-x86_64-linux-gnu.so",
                    S.macho_dylib([f"@rpath/{names[0].rsplit('/', 1)[1]}".encode()], [b"@loader_path/lib"], identity=None,
                                  filetype=8) if macos else
                    S.elf_dso([names[0].rsplit("/", 1)[1].encode()], runpath=[b"$ORIGIN/lib"])))
    tag = "cp311-cp311-macosx_11_0_arm64" if macos else "cp311-cp311-manylinux_2_28_x86_64"
    return tiny_wheel(members, tag=tag)


def _cmake_text(rng: random.Random) -> str:
    from . import shapes as S

    r = rng.random()
    inner = rng.choice(("add_library(p::p SHARED IMPORTED)\nset_target_properties(p::p PROPERTIES "
                        'IMPORTED_LOCATION "${CMAKE_CURRENT_LIST_DIR}/../../libp.so")',
                        'include("${CMAKE_CURRENT_LIST_DIR}/PTargets.cmake")', "set(x y)", "", "return()"))
    if r < 0.5:
        depth = rng.choice((1, 10, 100, 1000, 3000, 5000, 6000, 12000))
        return S.cmake_nesting(rng, depth, unclosed=rng.choice((0, 0, 1, depth)), body=inner)
    if r < 0.7:  # a syntax error beside a declaration
        return rng.choice(("if(\n", "set(x \"unterminated\n", "#[[ open comment\n", ")\n", "foo(${)\n")) + inner
    if r < 0.85:  # loops that multiply the steps
        n = rng.choice((10, 100, 1000, 10000))
        return (f"set(L {' '.join(['a'] * n)})\nforeach(x ${{L}})\nforeach(y ${{L}})\nset(z ${{x}}${{y}})\n"
                f"endforeach()\nendforeach()\n{inner}\n")
    return "\n".join(SURFACE_SEEDS[rng.randrange(2)] for _ in range(rng.choice((1, 2, 50))))


def cmake_input(c: Corpus, rng: random.Random) -> bytes:
    """A package of CMake configs (texts separated by NUL: many configs, each of nested blocks,
    syntax errors, multiplying loops), and a ``declares`` regular expression on the first line."""
    nconf = rng.choice((1, 1, 2, 5, 20, 200))
    texts = [_cmake_text(rng) for _ in range(min(nconf, 3))]
    if nconf > 2:  # many configs, each small (an input stays under a few hundred KB)
        texts = [t if len(t) < 1024 else t[:1024] for t in texts]
    texts += [texts[i % len(texts)] for i in range(nconf - len(texts))]
    declares = rng.choice((r"add_library\(\s*(?P<name>[\w:]+)", r"(?P<name>(a+)+)b", r"(?P<name>(\w|\w\w)*)!",
                           r"(?P<name>(.*)*)X", r"(?P<name>\w+)\s+(?P<library>\w+)", r"(?P<name>(a|aa)+$)"))
    return (declares + "\n" + "\0".join(texts)).encode("utf-8", "surrogatepass")


def control_name(rng: random.Random, base: str) -> str:
    from . import shapes as S

    head, _, tail = base.rpartition("/")
    piece = "".join(rng.choice(S.CONTROL_PIECES) for _ in range(rng.randrange(1, 4)))
    where = rng.random()
    if where < 0.4:
        return f"{head}/{piece}{tail}" if head else piece + tail
    if where < 0.8:
        return f"{head}/{tail}{piece}" if head else tail + piece
    return f"{head}/{tail[:2]}{piece}{tail[2:]}" if head else tail[:2] + piece + tail[2:]


def control_input(c: Corpus, rng: random.Random) -> bytes:
    """A wheel whose member names and dependency names carry newlines, escapes and workflow
    commands (``::error ...``), in members RECORD does not list, in a broken binary, in missing
    dependencies."""
    from . import shapes as S

    macos = rng.random() < 0.3
    ext = "dylib" if macos else "so"
    deps = [control_name(rng, f"libdep{i}.{ext}").encode("utf-8", "surrogateescape") for i in range(rng.randrange(1, 4))]
    lib = control_name(rng, f"pkg/lib/libx.{ext}")
    data = (S.macho_dylib([b"@rpath/" + d for d in deps], [control_name(rng, "@loader_path").encode("utf-8", "surrogateescape")])
            if macos else S.elf_dso(deps, runpath=[control_name(rng, "$ORIGIN").encode("utf-8", "surrogateescape")],
                                    soname=control_name(rng, "libx.so").encode("utf-8", "surrogateescape")))
    members = [(lib, data), (control_name(rng, "pkg/__init__.py"), b"")]
    if rng.random() < 0.5:
        members.append((control_name(rng, f"pkg/broken.{ext}"), b"\x7fELF" + bytes(8)))
    tag = "cp311-cp311-macosx_11_0_arm64" if macos else "cp311-cp311-manylinux_2_28_x86_64"
    entries = wheel_entries(members, tag=tag)
    if rng.random() < 0.4:  # a member RECORD does not list
        entries.insert(0, Entry(control_name(rng, "pkg/extra.so").encode("utf-8", "surrogateescape"), b"\x7fELF"))
    return zip_bytes(entries)


GENERATORS = {
    "elf": lambda c, rng: binary_input("elf", c, rng),
    "macho": lambda c, rng: binary_input("macho", c, rng),
    "pe": lambda c, rng: binary_input("pe", c, rng),
    "wheel": wheel_input,
    "rules": rules_input,
    "glob": glob_input,
    "names": names_input,
    "surface": surface_input,
    "fat": fat_input,
    "smuggle": smuggle_input,
    "paths": paths_input,
    "cmake": cmake_input,
    "control": control_input,
}
#: the targets of the second hostile round's shapes
NEW_SHAPES = ("fat", "smuggle", "paths", "cmake", "control")


def generate(target: str, c: Corpus, run_seed: int, index: int) -> bytes:
    rng = random.Random(f"{run_seed}:{target}:{index}")
    return GENERATORS[target](c, rng)
