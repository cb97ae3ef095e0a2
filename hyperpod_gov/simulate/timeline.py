"""Load a capacity timeline for a trace (CSV, ``simulate SPEC --trace T --capacity FILE``), every bad row at once.

One event a row: ``minute,instanceGroup,instanceType,add,lose``. ``instanceGroup`` names a group of the spec
(``instanceType`` then picks one of a flexible group's types, or is empty); with ``instanceGroup`` empty,
``instanceType`` names the type, and the spec's groups of that type take the event in their order. Exactly one
of ``add`` / ``lose``, a whole number of nodes. What the events do: :mod:`.nodes`.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Optional

from ..spec.errors import NO_VALUE, SpecError, SpecIssue
from .model import DEFAULT_SCALE_UP_DELAY
from .trace import _minutes, _whole, data_rows

COLUMNS = ("minute", "instanceGroup", "instanceType", "add", "lose")


@dataclass(frozen=True)
class TimelineRow:
    """One capacity event of a timeline file."""

    line: int
    minute: float
    instance_group: Optional[str]
    instance_type: Optional[str]
    delta: int  # nodes added (positive) or lost (negative)


@dataclass(frozen=True)
class CapacityTimeline:
    """A timeline file's events and the autoscaler's delay (``--scale-up-delay``), in the trace's minutes."""

    rows: tuple[TimelineRow, ...]
    scale_up_delay_minutes: float = DEFAULT_SCALE_UP_DELAY / 60.0


def parse_timeline(text: str, source: str, groups: Mapping[str, tuple[tuple[str, ...], int]]
                   ) -> tuple[TimelineRow, ...]:
    """Parse a timeline; ``groups``: the spec's instance groups, name -> (instance types, count)."""
    issues: list[SpecIssue] = []
    reader = csv.reader(io.StringIO(text))
    header = [h.strip() for h in next(reader, [])]
    if header != list(COLUMNS):
        raise SpecError([SpecIssue("line 1", "is not the timeline's header", ",".join(header) or NO_VALUE,
                                   f"start with the header {','.join(COLUMNS)}")], source)
    types: dict[str, int] = {}
    for its, count in groups.values():
        for t in its:
            types[t] = types.get(t, 0) + count
    rows = []
    for line, row in data_rows(reader, len(COLUMNS), issues,
                               "give one value per column, e.g. 30,burst,,,4 (leave the unused ones empty)"):
        where = f"line {line}"
        minute_raw, group, itype, add_raw, lose_raw = (c.strip() for c in row)
        ok = True
        minute = _minutes(minute_raw)
        if minute is None:
            issues.append(SpecIssue(f"{where} minute", "is not a number of minutes (0 or more)",
                                    minute_raw or NO_VALUE, "write e.g. 0 or 90"))
            ok = False
        most = 0
        if group:
            if group not in groups:
                issues.append(SpecIssue(f"{where} instanceGroup", "is not an instance group of the spec", group,
                                        f"use one of {', '.join(sorted(groups)) or '(none)'}"))
                ok = False
            else:
                most = groups[group][1]
                if itype and itype not in groups[group][0]:
                    issues.append(SpecIssue(f"{where} instanceType", f"is not a type of group {group}", itype,
                                            f"use one of {', '.join(groups[group][0])}, or leave it empty"))
                    ok = False
        elif itype:
            if itype not in types:
                issues.append(SpecIssue(f"{where} instanceType", "is not the type of any instance group", itype,
                                        f"use one of {', '.join(sorted(types)) or '(none)'}"))
                ok = False
            else:
                most = types[itype]
        else:
            issues.append(SpecIssue(f"{where} instanceGroup/instanceType", "are both empty", NO_VALUE,
                                    "name the instance group (or the instance type) that gains or loses nodes"))
            ok = False
        delta = 0
        if bool(add_raw) == bool(lose_raw):
            issues.append(SpecIssue(f"{where} add/lose", "must have exactly one of the two",
                                    f"add={add_raw!r}, lose={lose_raw!r}",
                                    "give either the nodes added (add) or the nodes lost (lose)"))
            ok = False
        else:
            key, raw = ("add", add_raw) if add_raw else ("lose", lose_raw)
            n = _whole(raw)
            if n is None:
                issues.append(SpecIssue(f"{where} {key}", "is not a whole number above 0", raw, "write e.g. 2"))
                ok = False
            elif most and n > most:
                issues.append(SpecIssue(f"{where} {key}", f"is more nodes than the spec gives it ({most})", raw,
                                        f"give at most {most}"))
                ok = False
            else:
                delta = n if key == "add" else -n
        if ok:
            rows.append(TimelineRow(line, minute, group or None, itype or None, delta))  # type: ignore[arg-type]
    if issues:
        raise SpecError(issues, source)
    return tuple(rows)


def load_timeline(path: str | Path, groups: Mapping[str, tuple[tuple[str, ...], int]]) -> tuple[TimelineRow, ...]:
    """Read a timeline file; raise ``SpecError`` (never a traceback) for any problem."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise SpecError([SpecIssue(str(p), "cannot be read", exc.strerror or str(exc),
                                   "check the path of the capacity timeline")]) from None
    return parse_timeline(text, str(p), groups)
