"""What an audit established about each native library of a wheel, for reports that draw it
(``check --format html``, ``inspect --format dot``): the components the rules find in it and
where each of its dependencies resolves.

Plain data made by the evaluate stage (:func:`wheelaudit.checks.describe.describe_libraries`);
renderers read it and never open a file or resolve anything themselves.
"""

from __future__ import annotations

from dataclasses import dataclass

#: how a dependency resolves, from :class:`wheelaudit.checks.resolution.Resolution`'s ``status``:
#: "inside" (a binary the wheel ships), "external" (a system library the platform or the rules
#: allow), "provided" (another distribution ships it), "weak-absent" (an optional load that is
#: missing), "unresolved" (nowhere: WA501)
STATUSES = ("inside", "external", "provided", "weak-absent", "unresolved")


@dataclass(frozen=True)
class ResolvedDependency:
    """One dependency of a library and where the loader finds it.

    A universal binary whose slices resolve the same name differently has one entry per outcome,
    each with the ``archs`` it holds for.
    """

    name: str  # as the binary names it (DT_NEEDED, install name, DLL name)
    kind: str  # wheelaudit.model.binary.Dependency.kind
    status: str  # one of STATUSES
    archs: tuple[str, ...]
    #: with status "inside": the path inside the wheel of the binary it resolves to
    path: str | None = None
    #: what ``inspect`` shows for it ("external: libc.so.6", "provided by torch ...", None)
    where: str | None = None
    #: with status "provided": the distribution that ships it
    dist: str | None = None


@dataclass(frozen=True)
class ComponentMark:
    """A component of the rules whose code a library carries, and the kind of evidence
    ("exported", "weak", "local symbol", "string")."""

    name: str
    evidence: tuple[str, ...]
    #: the component's ``exempt`` globs cover this library (it does not count as a definer)
    exempt: bool = False


@dataclass(frozen=True)
class LibraryFacts:
    """A native library as a report draws it."""

    path: str
    format: str
    kind: str
    size: int
    archs: tuple[str, ...]
    identity: str | None = None
    components: tuple[ComponentMark, ...] = ()
    dependencies: tuple[ResolvedDependency, ...] = ()
    #: the wheel file it ships in, when wheels are audited together
    origin: str | None = None
    #: why it could not be read (WA001); it then has no archs, components or dependencies
    error: str | None = None
