"""The JSON Schemas of the command line's ``--format json`` documents (docs/cli.md), and the pieces they share."""

from __future__ import annotations

import datetime as dt
import json
from functools import cache
from importlib.resources import files
from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:
    from ..spec import SpecIssue

__all__ = ["NAMES", "issue_json", "json_value", "schema"]

NAMES = ("validate", "explain", "diff", "fleet-explain", "fleet-diff")  # one schema per command with --format json: <name>.json beside this file


@cache
def schema(name: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of ``hyperpod-gov <name> --format json``'s document."""
    if name not in NAMES:
        raise KeyError(f"no schema {name!r}; the schemas are {', '.join(NAMES)}")
    return json.loads(files(__package__).joinpath(f"{name}.json").read_text(encoding="utf-8"))


def json_value(value: Any) -> Any:
    """A spec value as JSON: mappings, lists and scalars as they are; dates as YYYY-MM-DD; anything else as text."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, dict):
        return {str(k): json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [json_value(v) for v in value]
        return sorted(items, key=repr) if isinstance(value, (set, frozenset)) else items
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    return str(value)


def issue_json(issue: "SpecIssue", environment: Optional[str] = None) -> dict[str, Any]:
    """One finding (error or warning) as the documents give it: the ``issue`` definition of ``validate.json``.

    ``id``: the rule's id (``HPG-C001``), null for a problem found while reading the file or the models' own
    fields; ``value``: null where the finding shows none; ``environment``: null for the spec's base."""
    from ..spec.errors import NO_VALUE

    return {"environment": environment, "id": issue.rule, "level": issue.severity, "path": issue.path,
            "value": None if issue.value is NO_VALUE else json_value(issue.value), "message": issue.problem,
            "fix": issue.fix}
