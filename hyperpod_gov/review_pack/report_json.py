"""Read the JSON that ``hyperpod-gov report --format json`` writes; every problem as path, value and fix."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from ..spec.errors import SpecError, SpecIssue

_FIX = "give the output of `hyperpod-gov report SPEC --format json`"
_TEAM = {"team": str, "flavors": list}
_FLAVOR = {"instanceType": str, "unit": str, "nominal": (int, float)}
_NUMBERS = ("average", "peak", "borrowingLimit")  # a number, or null for no data
_REQUIRED_NUMBERS = ("average", "peak")  # the report writes them always (null without data); the page draws them
# What the page prints of each item of these lists (report.py writes strings, a cost may be a number).
_ITEMS = {"patch": ("reason", "cost"), "advice": ("team", "reason", "cost"), "rejected": ("team", "problem")}


def _number_problem(v: Any) -> str | None:
    """Why ``v`` is not a usable amount (None: it is): a finite number, not negative, not a boolean."""
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        return "is not a number"
    if not math.isfinite(v):
        return "is not a finite number"
    if v < 0:
        return "is negative"
    return None


def parse_report(doc: Any, source: str) -> dict[str, Any]:
    """Check the parts the review pack draws: teams[].flavors[] with quota, average and peak; patch, advice."""
    issues: list[SpecIssue] = []
    if not isinstance(doc, dict):
        raise SpecError([SpecIssue("(root)", "is not a JSON object", type(doc).__name__, _FIX)], source)
    teams = doc.get("teams")
    if not isinstance(teams, list):
        issues.append(SpecIssue("teams", "is missing or not a list", teams, _FIX))
        teams = []
    for i, t in enumerate(teams):
        if not isinstance(t, dict):
            issues.append(SpecIssue(f"teams[{i}]", "is not an object", t, _FIX))
            continue
        for key, kind in _TEAM.items():
            if not isinstance(t.get(key), kind):
                issues.append(SpecIssue(f"teams[{i}].{key}", "is missing or of the wrong type", t.get(key), _FIX))
        for j, f in enumerate(t.get("flavors") if isinstance(t.get("flavors"), list) else []):
            where = f"teams[{i}].flavors[{j}]"
            if not isinstance(f, dict):
                issues.append(SpecIssue(where, "is not an object", f, _FIX))
                continue
            for key, kind in _FLAVOR.items():
                if not isinstance(f.get(key), kind) or isinstance(f.get(key), bool):
                    issues.append(SpecIssue(f"{where}.{key}", "is missing or of the wrong type", f.get(key), _FIX))
            if isinstance(f.get("nominal"), (int, float)) and _number_problem(f["nominal"]):
                issues.append(SpecIssue(f"{where}.nominal", _number_problem(f["nominal"]) or "", f["nominal"],
                                        "use the quota as a finite number, 0 or more"))
            for key in _REQUIRED_NUMBERS:
                if key not in f:
                    issues.append(SpecIssue(f"{where}.{key}", "is missing", None, "use a number, or null for no data"))
            for key in _NUMBERS:
                v = f.get(key)
                if v is not None and _number_problem(v):
                    issues.append(SpecIssue(f"{where}.{key}", _number_problem(v) or "", v,
                                            "use a finite number, 0 or more, or null for no data"))
    for key, fields in _ITEMS.items():
        items = doc.get(key, [])
        if not isinstance(items, list):
            issues.append(SpecIssue(key, "is not a list", items, _FIX))
            continue
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                issues.append(SpecIssue(f"{key}[{i}]", "is not an object", item, _FIX))
                continue
            for field in fields:
                v = item.get(field)
                if v is not None and (not isinstance(v, (str, int, float)) or isinstance(v, bool)):
                    issues.append(SpecIssue(f"{key}[{i}].{field}", "is not text", v, _FIX))
    if issues:
        raise SpecError(issues, source)
    return doc


def _read(path: str | Path) -> Any:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError:
        raise SpecError([SpecIssue("--report", "cannot be read", str(p), "check the path of the report file")]
                        ) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise SpecError([SpecIssue(f"line {exc.lineno} column {exc.colno}", "is not valid JSON", exc.msg, _FIX)],
                        str(p)) from None


def load_report(path: str | Path) -> dict[str, Any]:
    """Read and check a report file (``SpecError`` for an unreadable file, bad JSON or a wrong shape)."""
    return parse_report(_read(path), str(path))


def load_fleet_report(path: str | Path, clusters: list[str]) -> dict[str, Any]:
    """Read and check what ``hyperpod-gov report FLEET --format json`` writes: each member's report under
    ``clusters`` (``clusters``: the fleet's members; a member left out of the report, e.g. a Slurm one, is allowed,
    one the fleet lacks is not). Every problem at once, its path under ``clusters.<name>``."""
    doc = _read(path)
    fix = "give the output of `hyperpod-gov report FLEET --format json`"
    members = doc.get("clusters") if isinstance(doc, dict) else None
    if not isinstance(members, dict):
        raise SpecError([SpecIssue("clusters", "is missing or not an object (not a fleet's report)",
                                   type(members).__name__, fix)], str(path))
    issues: list[SpecIssue] = []
    parsed: dict[str, Any] = {}
    for name, member in members.items():
        if name not in clusters:
            issues.append(SpecIssue(f"clusters.{name}", "is not a cluster of this fleet", name,
                                    f"report on this fleet (its clusters: {', '.join(clusters)})"))
            continue
        try:
            parsed[name] = parse_report(member, str(path))
        except SpecError as exc:
            issues += [SpecIssue(f"clusters.{name}.{i.path}", i.problem, i.value, i.fix) for i in exc.issues]
    if issues:
        raise SpecError(issues, str(path))
    return {**doc, "clusters": parsed}
