"""Read the JSON that ``hyperpod-gov report --format json`` writes; every problem as path, value and fix."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..spec.errors import SpecError, SpecIssue

_FIX = "give the output of `hyperpod-gov report SPEC --format json`"
_TEAM = {"team": str, "flavors": list}
_FLAVOR = {"instanceType": str, "unit": str, "nominal": (int, float)}
_NUMBERS = ("average", "peak", "borrowingLimit")


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
            for key in _NUMBERS:
                v = f.get(key)
                if v is not None and (not isinstance(v, (int, float)) or isinstance(v, bool)):
                    issues.append(SpecIssue(f"{where}.{key}", "is not a number", v,
                                            "use a number, or null for no data"))
    for key in ("patch", "advice", "rejected"):
        if not isinstance(doc.get(key, []), list):
            issues.append(SpecIssue(key, "is not a list", doc.get(key), _FIX))
    if issues:
        raise SpecError(issues, source)
    return doc


def load_report(path: str | Path) -> dict[str, Any]:
    """Read and check a report file (``SpecError`` for an unreadable file, bad JSON or a wrong shape)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError:
        raise SpecError([SpecIssue("--report", "cannot be read", str(p), "check the path of the report file")]
                        ) from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SpecError([SpecIssue(f"line {exc.lineno} column {exc.colno}", "is not valid JSON", exc.msg, _FIX)],
                        str(p)) from None
    return parse_report(doc, str(p))
