"""Every key of the spec reaches a governance view, a table or a team-object row, or is exempt with a reason.

The key paths come from the spec's JSON Schema (``GovernanceSpec.model_json_schema(by_alias=True)``), ``$ref``s
resolved, list items as ``[]`` and a map's values as ``*`` (``teams[].quota[].instanceType``,
``instanceTypes.*.vcpu``). A path is covered when a row's ``spec`` names it or an ancestor of it, or when every key
under it is covered; ``plan/spec_exemptions.py`` lists the paths ``diff`` and ``explain`` need not show, with the
reason. A new spec key fails here until a row shows it or an exemption says why none does.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

import pydantic

from hyperpod_gov.charts.fields import TEAM_OBJECTS
from hyperpod_gov.plan.spec_exemptions import SPEC_NOT_GOVERNED
from hyperpod_gov.plan.tables import TABLES
from hyperpod_gov.plan.views import VIEWS
from hyperpod_gov.spec import GovernanceSpec


def key_paths(schema: Mapping[str, Any]) -> dict[str, set[str]]:
    """Every key path of ``schema`` -> the paths of the keys directly under it (empty: a leaf)."""
    defs = schema.get("$defs", {})
    out: dict[str, set[str]] = {}

    def walk(node: Mapping[str, Any], path: str, parent: str, refs: frozenset[str]) -> None:
        ref = node.get("$ref")
        if ref is not None:
            name = ref.rsplit("/", 1)[-1]
            if name in refs:  # a recursive model: its keys are already listed above
                return
            walk(defs[name], path, parent, refs | {name})
        for combined in ("anyOf", "oneOf", "allOf"):
            for sub in node.get(combined, ()):
                walk(sub, path, parent, refs)
        for key, sub in node.get("properties", {}).items():
            child = f"{path}.{key}" if path else key
            out.setdefault(child, set())
            if parent or path:
                out.setdefault(parent, set()).add(child)
            walk(sub, child, child, refs)
        if isinstance(node.get("items"), Mapping):
            walk(node["items"], f"{path}[]", parent, refs)
        if isinstance(node.get("additionalProperties"), Mapping):
            walk(node["additionalProperties"], f"{path}.*", parent, refs)

    walk(schema, "", "", frozenset())
    return out


def row_paths() -> set[str]:
    """The spec paths the rows of the views, the tables and the team objects name."""
    named = {alt for view in VIEWS for row in view.rows for alt in row.spec.split("|")}
    named |= {f"{t.spec}.{alt}" for t in TABLES for f in t.fields if f.spec for alt in f.spec.split("|")}
    named |= {alt for r in TEAM_OBJECTS for g in (r, *r.also) if g.spec for alt in g.spec.split("|")}
    return named - {""}


def _under(path: str, ancestor: str) -> bool:
    return path == ancestor or path.startswith(ancestor + ".") or path.startswith(ancestor + "[")


def _covered(path: str, tree: Mapping[str, set[str]], names: Iterable[str]) -> bool:
    names = tuple(names)
    if any(_under(path, n) for n in names):
        return True
    kids = tree.get(path, set())
    return bool(kids) and all(_covered(k, tree, names) for k in kids)


def uncovered(tree: Mapping[str, set[str]], rows: set[str], exempt: Mapping[str, str]) -> list[str]:
    """The leaf paths no row and no exemption covers (a key holding others is reported through them)."""
    names = rows | set(exempt)
    return sorted(p for p, kids in tree.items() if not kids and not _covered(p, tree, names))


def unknown_exemptions(tree: Mapping[str, set[str]], exempt: Mapping[str, str]) -> list[str]:
    return sorted(p for p in exempt if p not in tree)


def stale_exemptions(tree: Mapping[str, set[str]], rows: set[str], exempt: Mapping[str, str]) -> list[str]:
    return sorted(p for p in exempt if p in tree and _covered(p, tree, rows))


SPEC = key_paths(GovernanceSpec.model_json_schema(by_alias=True))


def test_the_walk_finds_nested_lists_and_maps():
    assert {"teams[].quota[].instanceType", "monitoring.alarms.idleHours", "instanceTypes.*.vcpu"} <= set(SPEC)
    assert {"monitoring.alarms", "monitoring.platformEmail", "monitoring.teamDashboards", "monitoring.prometheus",
            "monitoring.grafana", "monitoring.evidence"} <= SPEC["monitoring"]
    assert SPEC["teams[].quota[].instanceType"] == set()


def test_every_spec_key_reaches_a_row_or_is_exempt_with_a_reason():
    missing = uncovered(SPEC, row_paths(), SPEC_NOT_GOVERNED)
    assert missing == [], (f"spec keys that diff and explain would not show: {missing}; add a row (plan/views*.py, "
                           "plan/tables*.py, charts/fields.py) or name it in plan/spec_exemptions.py with the reason")


def test_every_exemption_names_a_spec_key():
    assert unknown_exemptions(SPEC, SPEC_NOT_GOVERNED) == [], "exemptions of keys the spec no longer has"


def test_no_exemption_names_a_key_a_row_shows():
    assert stale_exemptions(SPEC, row_paths(), SPEC_NOT_GOVERNED) == [], "exemptions a row has made stale"


def test_every_exemption_gives_a_reason():
    assert all(len(reason.split()) >= 5 for reason in SPEC_NOT_GOVERNED.values())


# --- the checks fail when they should: on a hand-built model ---------------------------------------------------


class _Alarms(pydantic.BaseModel):
    idle_percent: int = pydantic.Field(default=20, alias="idlePercent")


class _Team(pydantic.BaseModel):
    name: str
    alarms: _Alarms = _Alarms()


class _Spec(pydantic.BaseModel):
    name: str
    teams: list[_Team]
    catalog: dict[str, _Alarms] = {}


TOY = key_paths(_Spec.model_json_schema(by_alias=True))


def test_the_walk_of_a_toy_spec_lists_each_key_once():
    assert sorted(TOY) == ["catalog", "catalog.*.idlePercent", "name", "teams", "teams[].alarms",
                           "teams[].alarms.idlePercent", "teams[].name"]


def test_a_key_without_a_row_is_found():
    rows = {"teams[].name", "catalog"}
    assert uncovered(TOY, rows, {"name": "a reason"}) == ["teams[].alarms.idlePercent"]
    assert uncovered(TOY, rows | {"teams[].alarms"}, {"name": "a reason"}) == []


def test_an_exemption_of_a_key_that_is_gone_is_found():
    assert unknown_exemptions(TOY, {"name": "a reason", "teams[].retired": "a reason"}) == ["teams[].retired"]


def test_an_exemption_of_a_key_a_row_shows_is_found():
    rows = {"teams[].name", "teams[].alarms.idlePercent"}
    assert stale_exemptions(TOY, rows, {"teams[].alarms": "a reason", "name": "a reason"}) == ["teams[].alarms"]
