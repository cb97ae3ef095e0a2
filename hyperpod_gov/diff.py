"""What a spec change does, in governance terms first, then resource by resource.

Both come as structured changes (``GovernanceChange``, ``ResourceChange``): the text of ``hyperpod-gov diff`` is
their ``words``, and ``--format json`` is their ``to_json``, so the two outputs cannot disagree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional

from .contracts.events import IMAGE_PATH, NODE_IMAGE, PATCHING_PATH
from .plan import Plan
from .plan.views import VIEWS, Row, View

__all__ = ["GovernanceChange", "ResourceChange", "ReviewEvent", "governance_changes", "governance_diff",
           "resource_changes", "resource_diff", "review_events", "REVIEW_EVENTS"]


def _jsonable(value: Any) -> Any:
    """A row's value as JSON: scalars as they are, a tuple of scalars as a list; anything else (an object the row
    describes only in ``words``, e.g. Slurm's accounting state) as null."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, (tuple, list)) and all(isinstance(v, (str, int, float, bool)) for v in value):
        return list(value)
    return None


@dataclass(frozen=True)
class GovernanceChange:
    """One governance change between two plans: a row of a view (``plan/views.py``) that differs.

    ``kind``: ``added`` / ``removed`` (a whole object, e.g. a team, or one member of a set row),
    ``changed`` (a value). ``path`` is the spec path the row reads (``teams[].quota``; alternatives separated by
    ``|``), ``view`` and ``key`` name the object (``team``, ``speech``). ``old`` and ``new``: the values in the
    row's terms (a member row: the member on its side, null on the other). ``words``: the line ``diff`` prints.
    ``privilege``: why the change widens privilege (None: it does not).
    """

    view: str
    key: str
    path: str
    label: str
    kind: str
    old: Any
    new: Any
    words: str
    privilege: Optional[str] = None

    @property
    def team(self) -> Optional[str]:
        """The team the change concerns (None: the cluster, or no one team)."""
        return self.key if self.view in ("team", "slurm team") else None

    def to_json(self) -> dict[str, Any]:
        """The change as ``hyperpod_gov/schemas/diff.json`` describes it (without its reviews)."""
        return {"view": self.view, "key": self.key, "path": self.path, "label": self.label, "kind": self.kind,
                "old": _jsonable(self.old), "new": _jsonable(self.new), "words": self.words,
                "privilege": self.privilege is not None, "privilegeReason": self.privilege}


def _prefix(title: str, label: str) -> str:
    return f"{title} {label}" if title else label


def _row_changes(view: View, key: str, row: Row, old: Any, new: Any) -> Iterator[GovernanceChange]:
    title = view.title(key)
    o, n = row.get(old), row.get(new)
    if o == n:
        return

    def change(kind: str, was: Any, now: Any, words: str, why: Optional[str] = None) -> GovernanceChange:
        return GovernanceChange(view.name, key, row.spec, row.label, kind, was, now, words, why)

    if row.lines is not None:  # the row words its own change (pausing a team, Slurm's accounting commands)
        for line in row.lines(title, o, n):
            yield change("changed", o, n, line)
        return
    label = _prefix(title, row.label)
    if row.members:
        for x in sorted(set(n) - set(o)):
            why = row.privilege(None, x) if row.privilege else None
            yield change("added", None, x, f"{label}: + {x}" + (f" (privilege: {why})" if why else ""), why)
        for x in sorted(set(o) - set(n)):
            yield change("removed", x, None, f"{label}: - {x}")
        return
    why = row.privilege(o, n) if row.privilege else None
    yield change("changed", o, n, f"{label}: {o} -> {n}" + (f" (privilege: {why})" if why else ""), why)


def governance_changes(old_plan: Plan, new_plan: Plan) -> list[GovernanceChange]:
    """Every governance change between two plans, view by view, in the order ``diff`` prints them: objects
    removed, objects added, then each kept object's rows."""
    out: list[GovernanceChange] = []
    for view in VIEWS:
        old, new = view.objects(old_plan), view.objects(new_plan)
        for key in (k for k in old if k not in new):
            words = view.removed(key, old[key]) if view.removed else f"{view.title(key)} removed"
            out.append(GovernanceChange(view.name, key, view.spec, "", "removed", key, None, words))
        for key in (k for k in new if k not in old):
            words = view.added(key, new[key]) if view.added else f"{view.title(key)} added"
            out.append(GovernanceChange(view.name, key, view.spec, "", "added", None, key, words))
        for key in (k for k in new if k in old):
            for row in view.rows:
                out += _row_changes(view, key, row, old[key], new[key])
    return out


def governance_diff(old_plan: Plan, new_plan: Plan) -> list[str]:
    """Plain-words lines, one per governance change (``plan/views.py``): teams added or removed, quotas, borrow
    caps, sharing, priorities, people, and every privilege change, marked ``(privilege: why)``."""
    return [c.words for c in governance_changes(old_plan, new_plan)]


# --- contract reviews --------------------------------------------------------------------------------------------

# contracts.events words each event "team <name>: review (<event>): <detail>"; team names are DNS labels (no ':')
# and event names hold no ')'.
_EVENT = re.compile(r"\Ateam (?P<team>[^:]+): review \((?P<event>[^)]+)\): (?P<detail>.*)\Z", re.S)

# Which contract review events (contracts/events.py) a governance row's change can cause, by the row's spec path:
# a change of such a row is attributed the review events of that kind for its team (a cluster-wide row: for every
# team). Rows not listed cause none; a review no change explains stays in the top-level list only.
REVIEW_EVENTS: dict[str, tuple[str, ...]] = {
    "cluster.name": ("account or region",),
    "cluster.instanceGroups[]": ("cluster capacity",),
    "cluster.instanceGroups[].count": ("cluster capacity",),
    # elastic capacity (issue 57): what stays, what comes after a scale-up, what Spot can take, and the types a
    # flexible group may launch
    "cluster.autoScaling": ("cluster capacity",),
    "cluster.instanceGroups[].instanceTypes": ("cluster capacity",),
    "cluster.instanceGroups[].minCount": ("cluster capacity",),
    "cluster.instanceGroups[].capacity": ("cluster capacity",),
    "cluster.instanceGroups[].capacity|cluster.instanceGroups[].minCount|cluster.autoScaling": ("cluster capacity",),
    # what runs as root on a group's nodes, and when they are drained to replace it
    IMAGE_PATH: (NODE_IMAGE,),
    PATCHING_PATH: (NODE_IMAGE,),
    "scheduler.mode": ("orchestrator version",),
    "cluster.kubernetesVersion": ("orchestrator version",),
    "cluster.addonVersions": ("orchestrator version",),
    "teams[].quota": ("cluster capacity",),
    "teams[].access.viewers": ("access roles",),
    "teams[].access.submitters": ("access roles",),
    "teams[].workloadIdentities[]": ("access roles",),
    "teams[].contract": ("project ownership", "data classification", "monitoring coverage", "access roles"),
    "teams[].contract.isolation": ("isolation or network path",),
    "teams[].contract.networkPath": ("isolation or network path",),
    "teams[]": ("new connection",),
}


@dataclass(frozen=True)
class ReviewEvent:
    """One contract review a change calls for (``contracts.events``): the team, the event and the detail."""

    team: str
    event: str
    detail: str
    words: str

    def to_json(self) -> dict[str, str]:
        return {"team": self.team, "event": self.event, "detail": self.detail, "words": self.words}


def review_events(old_plan: Plan, new_plan: Plan) -> list[ReviewEvent]:
    """``contracts.events`` as structured events, in its order."""
    from .contracts import events

    out = []
    for line in events(old_plan, new_plan):
        m = _EVENT.match(line)
        if m is None:  # pragma: no cover - contracts.events words every line as above (a test holds it)
            raise ValueError(f"contract review line not in the form 'team T: review (E): D': {line!r}")
        out.append(ReviewEvent(m["team"], m["event"], m["detail"], line))
    return out


def reviews_of(change: GovernanceChange, reviews: list[ReviewEvent]) -> list[ReviewEvent]:
    """The review events ``change`` calls for (``REVIEW_EVENTS``): of its team, or of every team when the change
    concerns the cluster; a team added: its first approval."""
    kinds = REVIEW_EVENTS.get(change.path, ())
    if change.view == "team" and change.kind == "added" and change.path == "teams[]":
        return [r for r in reviews if r.team == change.key and r.event == "new connection"]
    if change.path == "teams[]":
        return []

    def concerns(r: ReviewEvent) -> bool:  # a group's image or patching event names its group and the row
        return r.event != NODE_IMAGE or r.detail.startswith(f"instance group {change.key} {change.label} ")
    return [r for r in reviews
            if r.event in kinds and (change.team is None or r.team == change.team) and concerns(r)]


# --- resources ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ResourceChange:
    """One CloudFormation resource or Kubernetes object added (``+``), removed (``-``) or changed (``~``).

    ``kind``: ``cloudformation`` (``stack``, ``logical_id``, ``type``) or ``kubernetes`` (``type`` is the object's
    kind, ``namespace``, ``name``). ``words``: the line ``diff`` prints.
    """

    op: str
    kind: str
    type: str
    words: str
    stack: Optional[str] = None
    logical_id: Optional[str] = None
    namespace: Optional[str] = None
    name: Optional[str] = None

    def to_json(self) -> dict[str, Any]:
        return {"op": self.op, "kind": self.kind, "type": self.type, "stack": self.stack,
                "logicalId": self.logical_id, "namespace": self.namespace, "name": self.name, "words": self.words}


def _resources(templates: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(stack, lid): r for stack, t in templates.items() for lid, r in t.get("Resources", {}).items()}


def _objects(manifests: dict[str, Any]) -> dict[tuple[str, str, str], Any]:
    objs = [*manifests["cluster"], *(o for team in manifests["teams"].values() for o in team)]
    return {(o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]): o for o in objs}


def _compare(old: dict, new: dict, make: Callable[[str, Any, Any], ResourceChange]) -> list[ResourceChange]:
    """``+`` added, ``-`` removed, ``~`` changed, one change per key, sorted."""
    out = []
    for key in sorted(set(old) | set(new)):
        if key not in old:
            out.append(make("+", key, new[key]))
        elif key not in new:
            out.append(make("-", key, old[key]))
        elif old[key] != new[key]:
            out.append(make("~", key, new[key]))
    return out


def _resource(op: str, key: tuple[str, str], r: dict[str, Any]) -> ResourceChange:
    return ResourceChange(op, "cloudformation", r["Type"], f"{op} {key[0]}/{key[1]} ({r['Type']})", stack=key[0],
                          logical_id=key[1])


def _object(op: str, key: tuple[str, str, str], _: Any) -> ResourceChange:
    kind, namespace, name = key
    return ResourceChange(op, "kubernetes", kind, f"{op} k8s {kind} {namespace + '/' if namespace else ''}{name}",
                          namespace=namespace or None, name=name)


def resource_changes(old: dict[str, Any], new: dict[str, Any], *,
                     prefixes: tuple[str, str] | None = None) -> list[ResourceChange]:
    """Resource-level changes from two ``testing.synth_snapshot`` structures: templates first, then manifests.

    ``prefixes`` (old name, new name): two environments of one spec, whose stacks are paired by role
    (``acme-staging-capacity`` with ``acme-production-capacity``) and shown under the old name."""
    new_templates = new["templates"]
    if prefixes is not None:
        was, now = (f"{p}-" for p in prefixes)
        new_templates = {was + k[len(now):] if k.startswith(now) else k: t for k, t in new_templates.items()}
    return (_compare(_resources(old["templates"]), _resources(new_templates), _resource)
            + _compare(_objects(old["manifests"]), _objects(new["manifests"]), _object))


def resource_diff(old: dict[str, Any], new: dict[str, Any], *, prefixes: tuple[str, str] | None = None) -> list[str]:
    """Resource-level lines from two ``testing.synth_snapshot`` structures: + added, - removed, ~ changed
    (``resource_changes`` in words)."""
    return [c.words for c in resource_changes(old, new, prefixes=prefixes)]
