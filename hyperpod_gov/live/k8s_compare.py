"""The Kubernetes side of drift, without the API: what the plan puts on the cluster, and how it is compared.

Every object of ``charts.render(plan)`` is compared on the whole body hyperpod-gov owns: every top-level member
but ``apiVersion``, ``kind``, ``metadata`` and ``status`` (a mapping such as ``spec`` member by member:
``spec.validationActions``, ``spec.paramRef``, ``spec.egress``), and the ``metadata.labels`` and
``metadata.annotations`` the charts set. A team object also has the members ``charts/fields.py``'s
``TEAM_OBJECTS`` says the spec governs (its row's ``member`` and ``also``); a difference there is reported once, on
the governed member with its row's words, and the body member it lies in is compared without it.

Values are compared as a subset (``matches``): a mapping matches when every key the plan writes has the planned
value (the API server adds defaults such as a binding's ``matchResources.matchPolicy`` or a port's
``protocol``; other tools add labels); lists must have the same length and match item by item (an extra
RoleBinding subject or egress rule is drift). Two members are compared exactly, because an extra key in them
changes what they do and no server default goes there: a label selector (``podSelector: {}`` selects every pod,
any key narrows it) and a ConfigMap's ``data`` (the team-limits parameters: an added ``priority-class.*`` key
would allow that class). A value the deploy fills in (``${hyperpod-gov:fsx-lustre:Id}``) matches any text in its
place. A NetworkPolicy's ``ingress`` and ``egress`` the plan leaves out must stay absent.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any, Optional

from ..plan import Plan, names
from .drift import DriftItem

MANAGED_BY_KEY, MANAGED_BY_VALUE = "app.kubernetes.io/managed-by", "hyperpod-gov"
_BODY_SKIP = {"apiVersion", "kind", "metadata", "status"}
_OWNED_METADATA = ("annotations", "labels")
# Members the plan leaves out on purpose: absent means none, so one added on the cluster is drift. No server
# default goes there (a default-deny policy given an egress rule `{}` allows all egress).
_ABSENT_IS_NONE = {"NetworkPolicy": ("spec.egress", "spec.ingress")}
# A value known only at deploy (plan/storage.py's PLACEHOLDERS: a created file system's id, DNS and mount names).
_PLACEHOLDER = re.compile(r"\$\{hyperpod-gov:[^}]+\}")


@dataclass(frozen=True)
class PlannedObject:
    kind: str
    api_version: str
    namespace: str  # "" for cluster-scoped objects
    name: str
    team: Optional[str]
    members: dict[str, Any]  # governed member path -> planned value (TEAM_OBJECTS; empty: none governed)
    labels: dict[str, str]
    body: dict[str, Any]  # body member path -> planned value (``spec.policyName``, ``rules``, ``metadata.labels``)
    words: dict[str, str]  # governed member path -> its row's words and spec path

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.kind, self.namespace, self.name)

    @property
    def display(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


def body_members(manifest: dict[str, Any]) -> dict[str, Any]:
    """The members of ``manifest`` drift compares, by path: each top-level member of the body (a non-empty
    mapping one level down, so a difference names ``spec.validationActions``, not ``spec``), and the labels and
    annotations the charts set."""
    out: dict[str, Any] = {}
    for key, value in sorted(manifest.items()):
        if key in _BODY_SKIP:
            continue
        if isinstance(value, dict) and value and not _exact(key):
            out.update((f"{key}.{k}", v) for k, v in sorted(value.items()))
        else:
            out[key] = value
    for path in _ABSENT_IS_NONE.get(manifest.get("kind", ""), ()):
        out.setdefault(path, None)
    meta = manifest.get("metadata") or {}
    out.update((f"metadata.{k}", dict(meta[k])) for k in _OWNED_METADATA if meta.get(k))
    return dict(sorted(out.items()))


def _words(governed: Any) -> str:
    """A governed member in the report: its row's words and the spec path(s) that decide it."""
    return f"{governed.label}; spec {governed.spec}" if governed.spec else governed.label


def planned_kubernetes(plan: Plan, rows: Optional[tuple[Any, ...]] = None,
                       extra: tuple[dict[str, Any], ...] = ()) -> tuple[PlannedObject, ...]:
    """Every object the charts render for the plan, with the members drift compares (``rows``: the team
    objects' table, ``charts/fields.py``'s ``TEAM_OBJECTS`` unless given; ``extra``: cluster-wide objects planned
    beside the charts' own, compared on their whole body: a fleet member's MultiKueue objects)."""
    from ..charts import render
    from ..charts.fields import TEAM_OBJECTS, planned_objects

    manifests = render(plan)
    out: list[PlannedObject] = []

    def add(m: dict[str, Any], team: Optional[str], governed: dict[str, tuple[Any, Any]]) -> None:
        meta = m["metadata"]
        out.append(PlannedObject(m["kind"], m["apiVersion"], meta.get("namespace", ""), meta["name"], team,
                                 {p: v for p, (_, v) in sorted(governed.items())}, dict(meta.get("labels") or {}),
                                 body_members(m), {p: _words(g) for p, (g, _) in sorted(governed.items())}))

    for m in manifests.cluster:
        add(m, None, {})
    rendered = {p.key for p in out}
    for m in extra:  # an object the member's charts render too (a flavor of the manager's own) is compared once
        meta = m["metadata"]
        if (m["kind"], meta.get("namespace", ""), meta["name"]) not in rendered:
            add(m, None, {})
    teams = {t.name: t for t in plan.tenants}
    for team_name, objs in manifests.teams.items():
        team = teams[team_name]
        found = planned_objects(plan, team, TEAM_OBJECTS if rows is None else rows)
        for m in objs:
            row = found.get((m["kind"], m["metadata"]["name"]))
            if row is None:  # pragma: no cover - tests/plan/test_fields.py keeps manifests and rows together
                raise AssertionError(f"{m['kind']} {m['metadata']['name']} has no row in TEAM_OBJECTS")
            add(m, team_name, row[0].planned(plan, team))
    return tuple(out)


# --- comparing ---------------------------------------------------------------------------------


def member(obj: Any, path: str) -> Any:
    value: Any = obj
    for part in path.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def _exact(key: str) -> bool:
    """A member whose every key counts: a label selector (an empty one selects everything)."""
    return key == "selector" or key.endswith("Selector")


def _pruned(value: Any) -> Any:
    if isinstance(value, dict):
        kept = {k: _pruned(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v not in (None, {}, [])}
    if isinstance(value, list):
        return [_pruned(v) for v in value]
    return value


def same(a: Any, b: Any) -> bool:
    """``a`` and ``b`` are equal (absent, null and empty members aside; ``8`` and ``"8"`` alike)."""
    a, b = _pruned(a), _pruned(b)
    return matches(a, b) and matches(b, a)


def matches(planned: Any, live: Any) -> bool:
    """``live`` holds ``planned``: mappings by the planned keys (server defaults ignored), lists item by item,
    label selectors exactly."""
    if isinstance(planned, dict):
        return isinstance(live, dict) and all(
            same(v, live.get(k)) if _exact(k) else matches(v, live.get(k)) for k, v in planned.items())
    if isinstance(planned, (list, tuple)):
        return (isinstance(live, list) and len(live) == len(planned)
                and all(matches(p, a) for p, a in zip(planned, live)))
    if planned is None:
        return live is None or live == {} or live == []
    if isinstance(planned, str) and _PLACEHOLDER.search(planned):
        pattern = ".+".join(re.escape(part) for part in _PLACEHOLDER.split(planned))
        return isinstance(live, str) and re.fullmatch(pattern, live) is not None
    # Kubernetes quantities and int-or-string members may come back as strings ("8" for 8), and the API server
    # writes a quantity in its canonical form ("0Gi" comes back as "0", "1024Mi" as "1Gi").
    return planned == live or (not isinstance(planned, bool) and str(planned) == str(live)) or \
        same_quantity(planned, live)


def same_quantity(planned: Any, live: Any) -> bool:
    """Both are Kubernetes quantities (``kubernetes.utils.quantity``) of the same value."""
    if isinstance(planned, bool) or isinstance(live, bool) or not isinstance(planned, (str, int, float)) \
            or not isinstance(live, (str, int, float)):
        return False
    from kubernetes.utils.quantity import parse_quantity

    try:
        return parse_quantity(planned) == parse_quantity(live)
    except ValueError:
        return False


def _holds(kind: str, path: str, planned: Any, live: Any) -> bool:
    if (kind == "ConfigMap" and path.split(".")[0] == "data") or _exact(path.split(".")[-1]):
        return same(planned, live)
    return matches(planned, live)


def _without(value: Any, path: str) -> Any:
    """``value`` with the member at dotted ``path`` removed (a copy)."""
    if not isinstance(value, dict):
        return value
    out = copy.deepcopy(value)
    parts = path.split(".")
    inner = member(out, ".".join(parts[:-1])) if len(parts) > 1 else out
    if isinstance(inner, dict):
        inner.pop(parts[-1], None)
    return out


def differences(p: PlannedObject, obj: dict[str, Any]) -> list[DriftItem]:
    """One item per differing member: each governed member, then each body member no governed member covers."""
    found: list[tuple[str, Any, Any, str]] = []
    for path, value in p.members.items():
        actual = member(obj, path)
        if not _holds(p.kind, path, value, actual):
            found.append((path, value, actual, p.words.get(path, path)))
    for path, value in p.body.items():
        if any(path == g or path.startswith(g + ".") for g in p.members):
            continue  # the governed member holds it, and reported it
        actual = member(obj, path)
        for g in (g for g in p.members if g.startswith(path + ".")):  # compared above, without its words here
            inner = g[len(path) + 1:]
            value, actual = _without(value, inner), _without(actual, inner)
        if not _holds(p.kind, path, value, actual):
            found.append((path, value, actual, path))
    return [DriftItem(p.kind, p.display, "changed", path, value, actual, team=p.team, label=words)
            for path, value, actual, words in sorted(found, key=lambda f: f[0])]


def _labels(obj: dict[str, Any]) -> dict[str, str]:
    return dict(((obj.get("metadata") or {}).get("labels")) or {})


def owned(obj: dict[str, Any]) -> bool:
    """An object carrying hyperpod-gov's labels: the managed-by label, or the team label."""
    labels = _labels(obj)
    return labels.get(MANAGED_BY_KEY) == MANAGED_BY_VALUE or names.TEAM_LABEL in labels


@dataclass(frozen=True)
class LiveKubernetes:
    objects: dict[tuple[str, str, str], dict[str, Any]]  # (kind, namespace, name) -> the object as the API gives it


def _team_of(key: tuple[str, str, str], obj: dict[str, Any]) -> Optional[str]:
    team = _labels(obj).get(names.TEAM_LABEL)
    if team:
        return team
    ns = key[1] or (key[2] if key[0] == "Namespace" else "")
    return ns[len(names.NAMESPACE_PREFIX):] if ns.startswith(names.NAMESPACE_PREFIX) else None


def compare_kubernetes(planned: tuple[PlannedObject, ...], live: LiveKubernetes) -> list[DriftItem]:
    """Missing planned objects, changed members, and unplanned objects carrying hyperpod-gov's labels."""
    items: list[DriftItem] = []
    by_key = {p.key: p for p in planned}
    for p in planned:
        obj = live.objects.get(p.key)
        if obj is None:
            items.append(DriftItem(p.kind, p.display, "missing", team=p.team))
        else:
            items += differences(p, obj)
    for key, obj in sorted(live.objects.items()):
        if key not in by_key and owned(obj):
            kind, ns, name = key
            items.append(DriftItem(kind, f"{ns}/{name}" if ns else name, "unexpected", team=_team_of(key, obj)))
    return items
