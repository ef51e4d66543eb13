"""The load model: who loads each binary of a wheel, when, and what is already loaded then.

The entry points:

* **extension modules** (:func:`~wheelaudit.load.entries.is_extension_module`), imported by name;
  importing ``pkg.sub.mod`` runs ``pkg/__init__.py`` and ``pkg/sub/__init__.py`` first;
* **commands**: executables and the wheel's scripts, run directly;
* **loads by path** found in the sources (``ctypes.CDLL``, ``ffi.dlopen``,
  ``torch.ops.load_library``, ... :mod:`wheelaudit.archive.load_order`), at import time or later;
* **libraries for other distributions**: in a wheel without extension modules (PyQt6-Qt6, which
  PyQt6's modules link), each library another binary of the wheel links;
* **the engine**: in a wheel whose only native code is one library and that has no extension
  module nor command, that library, which the package's own code loads by path whenever it uses
  native code (no host chooses whether to load it);
* **plugins**: any other binary that nothing links and no importer takes, which its host opens by
  path. Its host is code of the package the file lies in, which runs once that package is
  imported: the images the package's ``__init__.py`` loaded are there before it.

Each entry's **context** is the sequence of images already in the process when it is loaded: what
importing its parent packages loaded (replayed from the sources' events, never run), then, for a
library it links, the images of its own closure mapped before (breadth first, as ld.so and dyld
map dependencies). A binary reached in several contexts (two modules link it) gets the images
present in **every** one of them: the reuse a verdict may count on whichever way the package is
used.

The loaders reuse an image already loaded instead of searching:

* **glibc** (``elf/dl-load.c``, ``_dl_map_object``): a requested name equal to the ``DT_SONAME`` of a
  loaded object, or to the name a linked object was loaded under;
* **dyld**: a load command equal to the install name of a loaded image;
* **Windows**: an imported DLL name equal to the base name of a loaded module (case-blind).

Nothing is opened here: the facts come from the scan (the binaries' facts, the sources' events).
"""

from __future__ import annotations

import posixpath
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Set
from dataclasses import dataclass, field

from wheelaudit.load.entries import importable_name, is_command, is_extension_module, never_loaded
from wheelaudit.model.binary import Binary

__all__ = ["Image", "LoadModel", "Loaded", "load_model", "MAX_CONTEXTS", "MAX_STEPS"]

#: at most this many distinct contexts are kept per binary; past it the binary counts on no reuse
MAX_CONTEXTS = 64
#: at most this many source events are replayed per wheel (a hostile wheel cannot make it slow);
#: past it no further image counts as loaded
MAX_STEPS = 200_000
#: how deep imports are followed through imports
_MAX_DEPTH = 64

_REUSE_BY = {"elf": "SONAME", "macho": "install name", "pe": "base name"}


@dataclass(frozen=True)
class Image:
    """An image in a context: its archive path and how it came to be loaded (``imported as
    triton._C.libtriton by triton/__init__.py:8``)."""

    path: str
    route: str


class _Seq:
    """An ordered sequence of loaded images, with the first position of each reuse key."""

    __slots__ = ("images", "first", "paths")

    def __init__(self, images: list[Image] | None = None, first: dict | None = None) -> None:
        self.images: list[Image] = list(images or [])
        self.first: dict[tuple[str, str], int] = dict(first or {})
        self.paths: dict[str, int] = {im.path: i for i, im in enumerate(self.images)}

    def copy(self) -> _Seq:
        return _Seq(self.images, self.first)


@dataclass
class _State:
    """The process while packages are imported: the images loaded, the modules run."""

    seq: _Seq = field(default_factory=_Seq)
    modules: set[str] = field(default_factory=set)

    def copy(self) -> _State:
        return _State(self.seq.copy(), set(self.modules))


def _installed(path: str) -> str:
    """Where a member lands below site-packages (``x.data/platlib/a.so`` -> ``a.so``)."""
    top, _, rest = path.partition("/")
    if top.endswith(".data"):
        scheme, _, sub = rest.partition("/")
        if scheme in ("purelib", "platlib") and sub:
            return sub
    return path


def _module_name(installed: str, name: str) -> str | None:
    folder = posixpath.dirname(installed)
    parts = [p for p in folder.split("/") if p] + [name]
    return ".".join(parts) if all(p.isidentifier() for p in parts) else None


class LoadModel:
    """The load model of one scanned wheel (or of wheels audited together / an environment)."""

    def __init__(self, wheel) -> None:
        self.size = len(getattr(wheel, "libraries", ()) or ())
        libs = [b for b in getattr(wheel, "libraries", ()) if b.ok]
        self.binaries: dict[str, Binary] = {b.path: b for b in libs}
        #: path -> how a binary no platform loader loads is used
        self.never: dict[str, str] = {b.path: why for b in libs if (why := never_loaded(b)) is not None}
        self.extensions: frozenset[str] = frozenset(b.path for b in libs if b.path not in self.never
                                                    and is_extension_module(b))
        self.commands: frozenset[str] = frozenset(b.path for b in libs if b.path not in self.never and is_command(b))
        self._at: dict[str, str] = {}  # installed path -> archive path
        for b in libs:
            self._at.setdefault(_installed(b.path), b.path)
        # (format, file name or identity) -> binaries: what a dependency can name
        self._named: dict[tuple[str, str], list[Binary]] = {}
        for b in libs:
            keys = {b.name.lower() if b.format == "pe" else b.name}
            if b.identity and b.format in ("elf", "macho"):
                keys.add(posixpath.basename(b.identity))
            for k in keys:
                self._named.setdefault((b.format, k), []).append(b)
        self._ext_named: dict[str, str] = {}
        for path in sorted(self.extensions):
            name = importable_name(self.binaries[path])
            dotted = _module_name(_installed(path), name) if name else None
            if dotted:
                self._ext_named.setdefault(dotted, path)
        self._closures: dict[str, list[str]] = {}
        #: what the wheel's commands load (a launcher's environment reaches them)
        self.run_by_commands: frozenset[str] = frozenset(p for c in self.commands for p in self.closure(c))
        #: what the platform's loader loads whatever the sources say: the closures of the extension
        #: modules, the commands, the libraries for other distributions and the engine (the rest of
        #: ``loaded`` is what the sources load by path)
        self.loaded_alone: frozenset[str] = frozenset(self._alone())
        #: every name under which the loaders could reuse a binary of the wheel: a dependency named
        #: otherwise is served by no image of the wheel, whatever is loaded before it
        self._reuse_names: frozenset[tuple[str, str]] = frozenset(
            k for b in libs for k in self._keys(b, linked=True))
        self._leaves: frozenset[str] = frozenset(posixpath.basename(p) for p in self._at)
        # (Windows compares file names case-insensitively)
        self._leaves_nocase: frozenset[str] = frozenset(p.lower() for p in self._leaves)
        self._at_nocase: dict[str, str] = {}
        for inst, at in self._at.items():
            self._at_nocase.setdefault(inst.lower(), at)
        # The sources' events (a mapping that may read them on first use,
        # wheelaudit.archive.load_order.ImportEvents) are consulted only by _built(), which the
        # questions below call only once the answer cannot be had from the binaries alone.
        events = getattr(wheel, "import_events", None)
        self._source: Mapping[str, list] = {} if events is None else events
        self._built_once = False

    def _alone(self) -> set[str]:
        """The binaries loaded whatever the sources say (``_build`` enters each, with the same
        conditions, and enters from the sources only what they load by path)."""
        out: set[str] = set()
        for path in (*sorted(self.extensions), *sorted(self.commands)):
            out.update(self.closure(path))
        if not self.extensions:
            for path in sorted(self._linked()):
                out.update(self.closure(path))
        engine = [p for p, b in self.binaries.items() if p not in self.never and b.loadable]
        if not self.extensions and not self.commands and len(engine) == 1:
            out.update(self.closure(engine[0]))
        return out

    def _built(self) -> LoadModel:
        """The model with the sources' events replayed: contexts, routes, loads by path."""
        if self._built_once:
            return self
        self._built_once = True
        events: dict[str, list] = dict(self._source.items())
        self._events = events
        from wheelaudit.archive.load_order import module_files  # (the same naming the reader used)

        self._modules: dict[str, str] = module_files(events) if events else {}
        self._steps = 0
        self._states: dict[str, _State] = {}
        #: path -> contexts (sequence, how many of its images, the entry whose closure it is in, how
        #: many of that closure's images)
        self._contexts: dict[str, list[tuple[_Seq, int, str | None, int]]] = {}
        self._closure_keys: dict[str, dict[tuple[str, str], int]] = {}
        self._overflow: set[str] = set()
        #: path -> how it is first loaded, in words (the route a message names)
        self._how: dict[str, str] = {}
        self._by_path_loads: dict[str, list] = {}  # archive path -> load events naming it
        for evs in events.values():
            for e in evs:
                if e.kind in ("load", "load-later") and e.target in self._at:
                    self._by_path_loads.setdefault(self._at[e.target], []).append(e)
        #: folders the package's code puts in LD_LIBRARY_PATH / DYLD_LIBRARY_PATH / PATH before it runs a tool
        self._launcher_env: list = [e for evs in events.values() for e in evs if e.kind == "env"]
        self._loaded: set[str] = set()
        self._build()
        return self

    @property
    def launcher_env(self) -> list:
        """The ``env`` events: folders the package's code puts in the loader's search path."""
        return self._built()._launcher_env

    @property
    def loaded(self) -> Loaded:
        """The binaries the platform's loader loads when the wheel is used (imported, run,
        linked, or loaded by path by the sources at import or later), as a set whose
        membership test reads the sources only for a binary not loaded whatever they say."""
        return Loaded(self)

    def is_loaded(self, path: str) -> bool:
        return path in self.loaded_alone or path in self._built()._loaded

    # -- the closure of an image --------------------------------------------------------------

    def closure(self, path: str) -> list[str]:
        """The binaries of the wheel that loading ``path`` maps, breadth first (``path`` first),
        by the file name (or identity) each dependency names."""
        got = self._closures.get(path)
        if got is not None:
            return got
        order = [path]
        seen = {path}
        queue = deque([path])
        while queue:
            b = self.binaries[queue.popleft()]
            for s in b.slices:
                for dep in s.dependencies:
                    base = posixpath.basename(dep.name.replace("\\", "/"))
                    for hit in self._named.get((b.format, base.lower() if b.format == "pe" else base), ()):
                        if hit.path not in seen and hit.path not in self.never:
                            seen.add(hit.path)
                            order.append(hit.path)
                            queue.append(hit.path)
        self._closures[path] = order
        return order

    # -- replaying imports --------------------------------------------------------------------

    def _keys(self, b: Binary, linked: bool) -> list[tuple[str, str]]:
        """The names under which the loader reuses ``b`` once loaded."""
        if b.format == "pe":
            return [("pe", b.name.lower())]
        if b.format == "macho":
            return [("macho", b.identity)] if b.identity else []
        keys = [("elf", b.identity)] if b.identity else []
        if linked:  # (a NEEDED loaded it under its own name; dlopen by path: the full path)
            keys.append(("elf", b.name))
        return keys

    def _load(self, st: _State, path: str, route: str) -> None:
        seq = st.seq
        for i, p in enumerate(self.closure(path)):
            if p in seq.paths:
                continue
            b = self.binaries[p]
            seq.paths[p] = len(seq.images)
            for k in self._keys(b, linked=i > 0):
                seq.first.setdefault(k, len(seq.images))
            seq.images.append(Image(p, route if i == 0 else f"linked by {path}, {route}"))

    def _import(self, st: _State, name: str, via: str, depth: int) -> None:
        parts = name.split(".")
        for k in range(1, len(parts) + 1):
            n = ".".join(parts[:k])
            if n in st.modules:
                continue
            st.modules.add(n)
            py = self._modules.get(n)
            if py is not None:
                self._run(st, py, depth + 1)
            elif (ext := self._ext_named.get(n)) is not None:
                self._load(st, ext, f"imported as {n} by {via}")

    def _run(self, st: _State, py: str, depth: int) -> None:
        if depth > _MAX_DEPTH:
            return
        for e in self._events.get(py, ()):
            self._steps += 1
            if self._steps > MAX_STEPS:
                return
            if e.kind == "import":
                self._import(st, e.target, e.where, depth)
            elif e.kind == "load" and e.target in self._at:
                self._load(st, self._at[e.target], f"loaded by path ({e.how}) at {e.where}")

    def _package(self, name: str) -> _State:
        """The process once package ``name`` (and its parents) is imported."""
        if not name:
            return _State()
        got = self._states.get(name)
        if got is None:
            got = self._package(name.rpartition(".")[0]).copy()
            self._import(got, name, f"import {name}", 0)
            self._states[name] = got
        return got

    # -- contexts -----------------------------------------------------------------------------

    def _add(self, path: str, seq: _Seq, n: int, entry: str | None, j: int) -> None:
        if path in self._overflow:
            return
        ctx = self._contexts.setdefault(path, [])
        item = (seq, n, entry if j else None, j)
        if any(c[0] is seq and c[1:] == item[1:] for c in ctx):
            return
        if len(ctx) >= MAX_CONTEXTS:
            self._overflow.add(path)
            self._contexts.pop(path, None)
            return
        ctx.append(item)

    def _enter(self, path: str, seq: _Seq, n: int) -> None:
        """``path`` is loaded when ``seq``'s first ``n`` images are: it and its closure."""
        order = self.closure(path)
        for j, p in enumerate(order):
            self._loaded.add(p)
            if j:
                self._how.setdefault(p, f"linked by {path}")
            self._add(p, seq, n, path, j)

    def _build(self) -> None:
        # the packages the wheel's Python code forms, each imported in full
        tops = sorted({n.split(".")[0] for n in self._modules})
        for top in tops:
            st = self._package(top)
            for i, im in enumerate(st.seq.images):
                self._loaded.add(im.path)
                self._how.setdefault(im.path, im.route)
                self._add(im.path, st.seq, i, None, 0)
        for path in sorted(self.extensions):
            b = self.binaries[path]
            dotted = _module_name(_installed(path), importable_name(b) or "")
            parent = dotted.rpartition(".")[0] if dotted else ""
            st = self._package(parent)
            pos = st.seq.paths.get(path)
            self._how.setdefault(path, f"imported as {dotted}" if dotted else "imported")
            self._enter(path, st.seq, len(st.seq.images) if pos is None else pos)
        empty = _Seq()
        for path in sorted(self.commands):
            self._how.setdefault(path, "run as a command")
            self._enter(path, empty, 0)
        if not self.extensions:
            # a wheel of libraries for other distributions' modules (PyQt6-Qt6 for PyQt6): a library
            # that a binary of the wheel links is what those modules link too, loaded at their
            # import; a binary nothing links stays a plugin, opened by path
            for path in sorted(self._linked()):
                self._how.setdefault(path, "linked by the modules of the distributions that use this wheel")
                self._enter(path, empty, 0)
        engine = [p for p, b in self.binaries.items() if p not in self.never and b.loadable]
        if not self.extensions and not self.commands and len(engine) == 1:
            # a wheel whose only native code is one library (mediapipe's libmediapipe.so, XGBoost's
            # libxgboost.so): no host chooses whether to load it, the package's own code loads it by
            # path whenever it uses native code, so what it needs every machine that uses it needs
            (path,) = engine
            self._how.setdefault(path, "loaded by path by the package's code whenever it uses native code "
                                       "(the wheel's only native library)")
            top = _installed(path).split("/", 1)[0]
            self._enter(path, self._package(top).seq if top in self._modules else empty, 0)
        # loads by path: from the code that loads it, else (a plugin) from its package
        for path in sorted(self.binaries):
            if path in self._loaded or path in self.never:
                continue
            evs = self._by_path_loads.get(path, [])
            if evs:
                for e in evs:
                    self._how.setdefault(path, f"loaded by path ({e.how}) at {e.where}")
                    pkg = self._package_of(e.source)
                    st = self._package(pkg) if pkg else _State()
                    self._enter(path, st.seq, len(st.seq.images))
                continue
            top = _installed(path).split("/", 1)[0]
            if "/" in _installed(path) and top in self._modules:
                st = self._package(top)
                self._how.setdefault(path, f"opened by path by code of the package {top}, once "
                                           f"{self._modules[top]} has run")
                self._enter_plugin(path, st.seq)

    def _linked(self) -> set[str]:
        """The binaries another binary of the wheel links (by the name a dependency gives)."""
        out: set[str] = set()
        for b in self.binaries.values():
            if b.path in self.never:
                continue
            for s in b.slices:
                for dep in s.dependencies:
                    base = posixpath.basename(dep.name.replace("\\", "/"))
                    for hit in self._named.get((b.format, base.lower() if b.format == "pe" else base), ()):
                        if hit.path != b.path and hit.path not in self.never:
                            out.add(hit.path)
        return out

    def _enter_plugin(self, path: str, seq: _Seq) -> None:
        """A plugin: in its package's context, not counted as loaded by the platform's loader."""
        order = self.closure(path)
        for j, p in enumerate(order):
            if p == path or p not in self._loaded:
                self._add(p, seq, len(seq.images), path, j)

    def _closure_index(self, entry: str) -> dict[tuple[str, str], int]:
        """Reuse key -> its first position in ``entry``'s closure (made once per entry)."""
        got = self._closure_keys.get(entry)
        if got is None:
            got = self._closure_keys[entry] = {}
            for i, p in enumerate(self.closure(entry)):
                for k in self._keys(self.binaries[p], linked=i > 0):
                    got.setdefault(k, i)
        return got

    def _package_of(self, source: str) -> str:
        inst = _installed(source)[:-3].split("/")
        if inst and inst[-1] == "__init__":
            inst = inst[:-1]
        return ".".join(inst)

    # -- questions ----------------------------------------------------------------------------

    def kind(self, path: str) -> str:
        """``never``, ``extension``, ``command``, ``loaded`` (imported or linked: the platform's
        loader loads it whenever the package is used) or ``by-path``."""
        if path in self.never:
            return "never"
        if path in self.extensions:
            return "extension"
        if path in self.commands:
            return "command"
        return "loaded" if self.is_loaded(path) else "by-path"

    def reused(self, b: Binary, name: str) -> tuple[Image, str] | None:
        """The image of the wheel already loaded, in every context ``b`` is loaded in, that the
        loader hands out for the dependency ``name`` of ``b`` without a search, and the words
        that say how (``reuses it by SONAME``); None when there is none (or ``b``'s contexts are
        unknown)."""
        key = (b.format, name.lower() if b.format == "pe" else name)
        if b.format == "pe":
            key = ("pe", posixpath.basename(name.replace("\\", "/")).lower())
        if key not in self._reuse_names:
            return None  # (no binary of the wheel is reused under that name: no context can serve it)
        ctxs = self._built()._contexts.get(b.path)
        if not ctxs:
            return None
        found: Image | None = None
        for seq, n, entry, j in ctxs:
            pos = seq.first.get(key)
            if pos is not None and pos < n:
                found = found or seq.images[pos]
                continue
            at = self._closure_index(entry).get(key) if entry is not None else None
            if at is None or at >= j:
                return None
            found = found or Image(self.closure(entry)[at], f"linked before it by {entry}")  # type: ignore[arg-type]
        if found is None or found.path == b.path:
            return None
        return found, f"which the loader reuses by {_REUSE_BY[b.format]}"

    def route(self, b: Binary) -> str | None:
        """How ``b`` is loaded and what is loaded before it, in words, for a message (``opened by
        path by code of the package triton, once triton/__init__.py has run; loaded before it:
        libtriton.so``); None when the model knows nothing of it."""
        how = self._built()._how.get(b.path)
        if how is None:
            return None
        before = self.context_words(b)
        return f"{how}; {before}" if before else how

    def launcher_folder(self, b: Binary, name: str) -> tuple[str, str] | None:
        """A tool of the wheel (a command, or what it links) whose dependency ``name`` lies in a
        folder the package's launcher puts in the loader's search path before it runs the tool
        (``LD_LIBRARY_PATH`` for ld.so, ``DYLD_LIBRARY_PATH`` / ``DYLD_FALLBACK_LIBRARY_PATH`` for
        dyld, ``PATH`` for Windows, whose loader searches it for a DLL of the started process; each
        tries the dependency's file name there, Windows case-insensitively): (the archive path
        found, the words that say so); None otherwise. An extension module is never served so:
        only a process the launcher starts has its environment (and CPython 3.8+ does not search
        ``PATH`` for an extension's DLLs)."""
        pe = b.format == "pe"
        leaf = posixpath.basename(name.replace("\\", "/") if pe else name)
        if pe:
            leaf = leaf.lower()
        if b.path not in self.run_by_commands or leaf not in (self._leaves_nocase if pe else self._leaves):
            return None  # (not run by a command, or no file of the wheel has that name: no folder serves it)
        if not self.launcher_env:
            return None
        wanted = ("LD_LIBRARY_PATH",) if b.format == "elf" else (
            ("DYLD_LIBRARY_PATH", "DYLD_FALLBACK_LIBRARY_PATH") if b.format == "macho" else ("PATH",) if pe else ())
        for e in self.launcher_env:
            if e.how not in wanted:
                continue
            hit = self._at_nocase.get(f"{e.target}/{leaf}".lower()) if pe else self._at.get(f"{e.target}/{leaf}")
            if hit is not None:
                return hit, f"{e.how} holds {e.target}, which {e.where} sets before it runs the tool"
        return None

    def context_words(self, b: Binary) -> str | None:
        """How ``b`` is loaded, in words, for a message (``loaded by path, by code of triton, after
        triton/__init__.py loaded 3 images``); None when unknown."""
        ctxs = self._built()._contexts.get(b.path)
        if not ctxs:
            return None
        seq, n, entry, j = ctxs[0]
        shown = [posixpath.basename(im.path) for im in seq.images[:n]][-3:]
        more = "" if len(ctxs) == 1 else f" (and in {len(ctxs) - 1} other context{'s' if len(ctxs) > 2 else ''})"
        if not n and not j:
            return None
        before = ", ".join(shown) if n else "nothing of the wheel"
        linked = f" and {j} image{'s' if j > 1 else ''} of the closure of {entry}" if entry and j else ""
        return f"loaded after {before}{linked}{more}"


class Loaded(Set[str]):
    """:attr:`LoadModel.loaded` (and ``also``, binaries known to be loaded at every import): a set
    whose membership test consults the sources' events only for a binary that is neither loaded
    whatever they say (:attr:`LoadModel.loaded_alone`) nor in ``also``; listing it reads them."""

    def __init__(self, model: LoadModel, also: Iterable[str] = ()) -> None:
        self._model = model
        self._also = frozenset(also)

    def including(self, also: Iterable[str]) -> Loaded:
        """This set and ``also``."""
        return Loaded(self._model, self._also | frozenset(also))

    def __contains__(self, path: object) -> bool:
        return path in self._also or (isinstance(path, str) and self._model.is_loaded(path))

    def _all(self) -> set[str]:
        m = self._model
        return set(m.loaded_alone) | m._built()._loaded | self._also

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


def load_model(wheel) -> LoadModel:
    """The load model of ``wheel``, built once per wheel object (again when its binaries or
    events were replaced since)."""
    key = (getattr(wheel, "libraries", None), getattr(wheel, "import_events", None))
    cached = getattr(wheel, "_load_model", None)
    if cached is not None and cached[0][0] is key[0] and cached[0][1] is key[1] \
            and cached[1].size == len(key[0] or ()):
        return cached[1]
    model = LoadModel(wheel)
    try:
        object.__setattr__(wheel, "_load_model", (key, model))
    except (AttributeError, TypeError):
        pass
    return model
