"""Load a workload trace (CSV, SIMULATOR.md section 2), reporting every bad row at once."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator, Optional

from ..spec.errors import NO_VALUE, SpecError, SpecIssue

COLUMNS = ("name", "team", "priorityClass", "instanceType", "accelerators", "instances", "submitMinute",
           "durationMinutes")


@dataclass(frozen=True)
class TraceRow:
    """One workload of a trace."""

    line: int
    name: str
    team: str
    priority_class: str  # '' = the lowest priority
    instance_type: str
    accelerators: Optional[int]
    instances: Optional[int]
    submit_minute: float
    duration_minutes: float


def _whole(value: str) -> Optional[int]:
    try:
        n = int(value)
    except ValueError:
        return None
    return n if n > 0 else None


def _minutes(value: str) -> Optional[float]:
    try:
        x = float(value)
    except ValueError:
        return None
    return x if x >= 0 and x == x and x != float("inf") else None


def data_rows(reader: Any, width: int, issues: list[SpecIssue], fix: str) -> Iterator[tuple[int, list[str]]]:
    """(line number, fields) of each non-blank row of a CSV ``reader`` after its header; a row that has not ``width``
    fields is reported in ``issues`` with ``fix`` and left out (the trace's and the capacity timeline's rule)."""
    for row in reader:
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) != width:
            issues.append(SpecIssue(f"line {reader.line_num}", f"has {len(row)} fields, the header has {width}",
                                    ",".join(row), fix))
            continue
        yield reader.line_num, row


def parse_trace(text: str, source: str = "trace", *, teams: Optional[Iterable[str]] = None,
                priority_classes: Optional[Iterable[str]] = None,
                instance_types: Optional[Iterable[str]] = None) -> tuple[TraceRow, ...]:
    """Parse a trace; with ``teams`` / ``priority_classes`` / ``instance_types`` also check names against the plan."""
    issues: list[SpecIssue] = []
    reader = csv.reader(io.StringIO(text))
    try:
        header = next(reader)
    except StopIteration:
        raise SpecError([SpecIssue("line 1", "is missing: the file is empty", NO_VALUE,
                                   f"start with the header {','.join(COLUMNS)}")], source) from None
    header = [h.strip() for h in header]
    missing = [c for c in COLUMNS if c not in header]
    unknown = [c for c in header if c not in COLUMNS]
    if missing or unknown:
        if missing:
            issues.append(SpecIssue("line 1", f"lacks the column(s) {', '.join(missing)}", ",".join(header),
                                    f"use the header {','.join(COLUMNS)}"))
        if unknown:
            issues.append(SpecIssue("line 1", f"has unknown column(s) {', '.join(unknown)}", ",".join(header),
                                    f"use the header {','.join(COLUMNS)}"))
        raise SpecError(issues, source)
    col = {c: header.index(c) for c in COLUMNS}
    team_set = set(teams) if teams is not None else None
    class_set = set(priority_classes) if priority_classes is not None else None
    type_set = set(instance_types) if instance_types is not None else None
    rows: list[TraceRow] = []
    seen: dict[str, int] = {}
    for line, row in data_rows(reader, len(header), issues,
                               "give one value per column (leave optional ones empty, keep the commas)"):
        where = f"line {line}"
        get = {c: row[i].strip() for c, i in col.items()}
        ok = True
        name = get["name"]
        if not name:
            issues.append(SpecIssue(f"{where} name", "is empty", NO_VALUE, "name every workload"))
            ok = False
        elif name in seen:
            issues.append(SpecIssue(f"{where} name", f"repeats the workload of line {seen[name]}", name,
                                    "give each workload its own name"))
            ok = False
        else:
            seen[name] = line
        team = get["team"]
        if not team or (team_set is not None and team not in team_set):
            fix = f"use one of {', '.join(sorted(team_set))}" if team_set else "name the team that submits it"
            issues.append(SpecIssue(f"{where} team", "is not a team of the spec", team or NO_VALUE, fix))
            ok = False
        pclass = get["priorityClass"]
        if pclass and class_set is not None and pclass not in class_set:
            fix = (f"use one of {', '.join(sorted(class_set))} or leave it empty (lowest)" if class_set
                   else "leave it empty: the spec defines no priority classes")
            issues.append(SpecIssue(f"{where} priorityClass", "is not a priority class of the spec", pclass, fix))
            ok = False
        itype = get["instanceType"]
        if not itype or (type_set is not None and itype not in type_set):
            fix = f"use one of {', '.join(sorted(type_set))}" if type_set else "give the instance type, e.g. ml.g5.2xlarge"
            issues.append(SpecIssue(f"{where} instanceType", "is not an instance type of the cluster", itype or NO_VALUE, fix))
            ok = False
        acc_raw, inst_raw = get["accelerators"], get["instances"]
        accelerators = instances = None
        if bool(acc_raw) == bool(inst_raw):
            issues.append(SpecIssue(f"{where} accelerators/instances", "must have exactly one of the two",
                                    f"accelerators={acc_raw!r}, instances={inst_raw!r}",
                                    "give either a number of accelerators or a number of whole instances"))
            ok = False
        elif acc_raw:
            accelerators = _whole(acc_raw)
            if accelerators is None:
                issues.append(SpecIssue(f"{where} accelerators", "is not a whole number above 0", acc_raw,
                                        "write e.g. 4"))
                ok = False
        else:
            instances = _whole(inst_raw)
            if instances is None:
                issues.append(SpecIssue(f"{where} instances", "is not a whole number above 0", inst_raw, "write e.g. 2"))
                ok = False
        submit = _minutes(get["submitMinute"])
        if submit is None:
            issues.append(SpecIssue(f"{where} submitMinute", "is not a number of minutes (0 or more)",
                                    get["submitMinute"] or NO_VALUE, "write e.g. 0 or 90"))
            ok = False
        duration = _minutes(get["durationMinutes"])
        if duration is None:
            issues.append(SpecIssue(f"{where} durationMinutes", "is not a number of minutes (0 or more)",
                                    get["durationMinutes"] or NO_VALUE, "write e.g. 120"))
            ok = False
        if ok:
            rows.append(TraceRow(line, name, team, pclass, itype, accelerators, instances, submit, duration))  # type: ignore[arg-type]
    if issues:
        raise SpecError(issues, source)
    return tuple(rows)


def load_trace(path: str | Path, **checks) -> tuple[TraceRow, ...]:
    """Read a trace file; raise ``SpecError`` (never a traceback) for any problem."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise SpecError([SpecIssue(str(p), "cannot be read", exc.strerror or str(exc),
                                   "check the path of the trace file")]) from None
    return parse_trace(text, str(p), **checks)
