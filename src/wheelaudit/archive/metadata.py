"""A wheel's identity: name, version and tags (file name, WHEEL), and METADATA's Requires-Dist."""

from __future__ import annotations

import re

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from collections.abc import Callable

from wheelaudit.model.defects import Defect

if TYPE_CHECKING:
    from packaging.tags import Tag


@dataclass
class WheelInfo:
    path: Path
    name: str
    version: str
    tags: list[Tag]
    requires_dist: list[str] = field(default_factory=list)
    problems: list[Defect] = field(default_factory=list)  # WA002 found while opening


def wheel_info(path: Path, dist_info: str | None, read_text: Callable[[str], tuple[str | None, str | None]],
               problems: list[Defect]) -> WheelInfo:
    """``read_text(member) -> (text or None when absent, why it cannot be read or None)``."""
    import email.parser

    from packaging.metadata import Metadata
    from packaging.tags import parse_tag
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    name = version = ""
    tags: list[Tag] = []
    requires: list[str] = []
    if path.suffix == ".whl":
        try:
            n, v, _build, tagset = parse_wheel_filename(path.name)
            name, version, tags = str(n), str(v), sorted(tagset, key=str)
        except InvalidWheelFilename:
            pass
    # (what pip refuses to install is refused here too: a wheel file or an unpacked one, not an
    # installed distribution, which other installers may have written without WHEEL)
    installed = path.suffix == ".dist-info"
    if dist_info and name and path.suffix == ".whl":
        from packaging.utils import canonicalize_name

        project = dist_info[: -len(".dist-info")].rsplit("-", 1)[0]
        if canonicalize_name(project) != canonicalize_name(name):
            where = f"{dist_info}/METADATA"
            problems.append(Defect(
                "WA002", f"the wheel's file name is for {name!r} but its metadata folder {dist_info} is for "
                f"{project!r}" + ("" if canonicalize_name(project).startswith(canonicalize_name(name)) else
                                  " (pip refuses to install it)"), subject=dist_info, paths=[where]))
    if dist_info:
        where = f"{dist_info}/WHEEL"
        wheel_text, why = read_text(where)
        if why:
            problems.append(Defect("WA002", f"{where} cannot be read ({why})", subject=where, paths=[where]))
        elif wheel_text is None and not installed:
            problems.append(Defect("WA002", f"{where} is missing (pip refuses to install the wheel)",
                                    subject=where, paths=[where]))
        if wheel_text is not None and not installed:
            wv = email.parser.Parser().parsestr(wheel_text).get("Wheel-Version")
            if wv is None or not re.fullmatch(r"\s*\d+(\.\d+)*\s*", wv):
                problems.append(Defect("WA002", f"{where} has {'no' if wv is None else 'an invalid'} Wheel-Version "
                                        f"{'' if wv is None else repr(wv) + ' '}(pip refuses to install the wheel)",
                                        subject=where, paths=[where]))
            elif int(wv.strip().split(".")[0]) > 1:
                problems.append(Defect("WA002", f"{where} says Wheel-Version {wv.strip()}, a major version no "
                                        "installer knows (pip refuses to install the wheel)", subject=where, paths=[where]))
        if wheel_text:
            msg = email.parser.Parser().parsestr(wheel_text)
            from_file: set[Tag] = set()
            for t in msg.get_all("Tag") or []:
                try:
                    from_file |= set(parse_tag(t.strip()))
                except ValueError:
                    problems.append(Defect("WA002", f"WHEEL has an invalid Tag line {t!r}", subject=where, paths=[where]))
            if not tags:
                tags = sorted(from_file, key=str)
        where = f"{dist_info}/METADATA"
        meta_text, why = read_text(where)
        if why:
            problems.append(Defect("WA002", f"{where} cannot be read ({why})", subject=where, paths=[where]))
        elif meta_text is None and not installed:
            problems.append(Defect("WA002", f"{where} is missing (pip refuses to install the wheel)",
                                    subject=where, paths=[where]))
        if meta_text:
            try:
                meta = Metadata.from_email(meta_text, validate=False)
                name = name or str(meta.name or "")
                version = version or str(meta.version or "")
                requires = [str(r) for r in (meta.requires_dist or [])]
            except Exception:  # noqa: BLE001 - packaging raises ExceptionGroup and others
                problems.append(Defect("WA002", "METADATA cannot be parsed", subject=where, paths=[where]))
    if not name:
        name = path.name.split("-")[0] if path.suffix == ".whl" else path.name
    return WheelInfo(path=path, name=name, version=version, tags=tags, requires_dist=requires, problems=problems)
