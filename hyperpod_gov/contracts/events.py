"""Event-driven reviews: which changes between two plans call for a team's contract to be reviewed before its
``reviewBy`` date, and what a retirement or a revocation does to running work. Pure functions of two plans."""

from __future__ import annotations

from typing import Any, Iterable, Optional

from ..plan import Plan, TeamPlan

# The events of the governance model, in the order they are reported.
PROJECT_OWNERSHIP = "project ownership"
ACCESS_ROLES = "access roles"
ACCOUNT_OR_REGION = "account or region"
CLUSTER_CAPACITY = "cluster capacity"
ORCHESTRATOR_VERSION = "orchestrator version"
DATA_CLASSIFICATION = "data classification"
MONITORING_COVERAGE = "monitoring coverage"
ISOLATION = "isolation or network path"
NODE_IMAGE = "node image or patching"

# The instance-group view's rows of a group's node image and patching window (plan/views_cluster.py): an event
# words its change as the row does, and diff attributes it by these paths (diff.REVIEW_EVENTS).
IMAGE_PATH = "cluster.instanceGroups[].imageId|cluster.instanceGroups[].image.releaseVersion"
PATCHING_PATH = "cluster.instanceGroups[].patching|cluster.instanceGroups[].patching.auto"


def _change(what: str, old: Any, new: Any) -> list[str]:
    return [] if old == new else [f"{what} {_show(old)} -> {_show(new)}"]


def _show(value: Any) -> str:
    if value is None or value == ():
        return "none"
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(str(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {v}" for k, v in sorted(value.items())) + "}"
    return str(value)


def _members(what: str, old: Iterable[str], new: Iterable[str]) -> list[str]:
    o, n = set(old), set(new)
    return [f"{what} + {x}" for x in sorted(n - o)] + [f"{what} - {x}" for x in sorted(o - n)]


def _studio(team: TeamPlan) -> Any:
    return team.contract.unified_studio if team.contract else None


def _contract(team: TeamPlan, field: str) -> Optional[Any]:
    return getattr(team.contract, field) if team.contract else None


def _principals(plan: Plan, team: str) -> list[str]:
    return [p.principal_arn for p in plan.principals if team in p.teams]


def _identities(team: TeamPlan) -> list[str]:
    return [f"{i.service_account}: {i.source_role_arn} -> {i.target_role_arn or 'no target role'}"
            for i in team.identities]


def _alarms(team: TeamPlan) -> tuple[str, ...]:
    watch = team.monitoring
    return tuple(sorted(f"{a.kind} -> {a.owner or 'platform'}" for a in watch.alarms)) if watch else ()


def _cluster_reasons(old: Plan, new: Plan) -> list[tuple[str, str]]:
    """(event, detail) of changes that concern every connection to the cluster."""
    out: list[tuple[str, str]] = []
    out += [(ACCOUNT_OR_REGION, d) for d in _change("capacity account", old.account, new.account)]
    out += [(ACCOUNT_OR_REGION, d) for d in _change("capacity region", old.region, new.region)]
    out += [(ACCOUNT_OR_REGION, d) for d in _change("HyperPod cluster", old.cluster_name, new.cluster_name)]
    old_cap, new_cap = old.capacity(), new.capacity()
    for itype in sorted(set(old_cap) | set(new_cap)):
        out += [(CLUSTER_CAPACITY, d) for d in _change(f"{itype} instances", old_cap.get(itype, 0),
                                                       new_cap.get(itype, 0))]
    out += _elastic_capacity(old, new)
    out += [(ORCHESTRATOR_VERSION, d) for d in _change("scheduler mode", old.mode, new.mode)]
    out += [(ORCHESTRATOR_VERSION, d) for d in _change("Kubernetes version", old.cluster.kubernetes_version,
                                                       new.cluster.kubernetes_version)]
    old_addons, new_addons = old.addon_versions, new.addon_versions
    for addon in sorted(set(old_addons) | set(new_addons)):
        out += [(ORCHESTRATOR_VERSION, d) for d in _change(f"add-on {addon}", old_addons.get(addon, "absent"),
                                                           new_addons.get(addon, "absent"))]
    return out


def _split(plan: Plan) -> dict[str, tuple[int, int, int]]:
    """Per instance type, (guaranteed, elastic, interruptible) instances: a flexible group counts under each of its
    types, as in ``Plan.capacity``."""
    out: dict[str, tuple[int, int, int]] = {}
    for g in plan.instance_groups:
        for itype in g.types:
            a, b, c = out.get(itype, (0, 0, 0))
            out[itype] = (a + g.guaranteed, b + g.elastic, c + g.interruptible)
    return out


def _elastic_capacity(old: Plan, new: Plan) -> list[tuple[str, str]]:
    """A change of what stays, what comes after a scale-up and what Spot can take (minCount, capacity, autoscale)
    is a capacity change even where the most instances stay the same. Types whose capacity is all guaranteed on
    both sides are left to the instance counts (a count change there is the same change)."""
    was, now = _split(old), _split(new)
    out = []
    for itype in sorted(set(was) | set(now)):
        a, b = was.get(itype, (0, 0, 0)), now.get(itype, (0, 0, 0))
        if a != b and (a[1] or a[2] or b[1] or b[2]):
            words = "guaranteed {}, elastic {}, interruptible {}"
            out.append((CLUSTER_CAPACITY, f"{itype} capacity {words.format(*a)} -> {words.format(*b)}"))
    return out


def _node_image(old: Plan, new: Plan) -> list[tuple[frozenset[str], str]]:
    """(the instance types, detail) of each group, on both sides, whose node image or patching window changes:
    what runs as root on its nodes, and when they are drained for it."""
    from ..plan.views_cluster import INSTANCE_GROUPS

    rows = [r for r in INSTANCE_GROUPS.rows if r.spec in (IMAGE_PATH, PATCHING_PATH)]
    was = {g.name: g for g in old.instance_groups}
    out = []
    for g in sorted(new.instance_groups, key=lambda x: x.name):
        if g.name not in was:
            continue
        for row in rows:
            out += [(frozenset(g.types), d) for d in _change(f"instance group {g.name} {row.label}",
                                                             row.get(was[g.name]), row.get(g))]
    return out


def _team_reasons(old_plan: Plan, new_plan: Plan, o: TeamPlan, n: TeamPlan) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for field in ("business_owner", "operations_owner", "cost_owner", "exception_owner"):
        out += [(PROJECT_OWNERSHIP, d) for d in _change(field.replace("_", " "), _contract(o, field),
                                                        _contract(n, field))]
    os_, ns = _studio(o), _studio(n)
    for field in ("domain_id", "domain_unit_id", "project_id", "domain_unit", "project"):
        out += [(PROJECT_OWNERSHIP, d) for d in _change("Unified Studio " + field.replace("_id", "").replace("_", " "),
                                                        getattr(os_, field, None), getattr(ns, field, None))]
    out += [(ACCESS_ROLES, d) for d in _change("project role", getattr(os_, "project_role_arn", None),
                                               getattr(ns, "project_role_arn", None))]
    out += [(ACCESS_ROLES, d) for d in _change("Unified Studio access role", getattr(os_, "access_role_arn", None),
                                               getattr(ns, "access_role_arn", None))]
    for field in ("owners", "members"):  # the groups of a project the spec creates (docs/unified-studio.md)
        out += [(ACCESS_ROLES, d) for d in _change(f"Unified Studio project {field}",
                                                   getattr(getattr(os_, field, None), "groups", ()),
                                                   getattr(getattr(ns, field, None), "groups", ()))]
    out += [(ACCESS_ROLES, d) for d in _members("principal", _principals(old_plan, o.name),
                                                _principals(new_plan, n.name))]
    out += [(ACCESS_ROLES, d) for d in _members("workload identity", _identities(o), _identities(n))]
    oc, nc = old_plan.contracts.connection(o.name), new_plan.contracts.connection(n.name)
    out += [(ACCOUNT_OR_REGION, d) for d in _change("Unified Studio account and region",
                                                    (oc.account, oc.region) if oc else None,
                                                    (nc.account, nc.region) if nc else None)]
    out += [(CLUSTER_CAPACITY, d) for d in _change("quota", _quota(o), _quota(n))]
    out += [(DATA_CLASSIFICATION, d) for d in _change("data classification", _contract(o, "data_classification"),
                                                      _contract(n, "data_classification"))]
    out += [(MONITORING_COVERAGE, d) for d in _members("alarm", _alarms(o), _alarms(n))]
    out += [(MONITORING_COVERAGE, d) for d in _change("monitoring expectations", _contract(o, "monitoring"),
                                                      _contract(n, "monitoring"))]
    # A team without a contract is shared, and states no network path.
    out += [(ISOLATION, d) for d in _change("isolation", _contract(o, "isolation") or "shared",
                                            _contract(n, "isolation") or "shared")]
    out += [(ISOLATION, d) for d in _change("network path", _contract(o, "network_path"),
                                            _contract(n, "network_path"))]
    return out


def _quota(team: TeamPlan) -> dict[str, str]:
    return {f.instance_type: f"{f.nominal.accelerators} accelerators, {f.nominal.vcpu} vCPU" for f in team.owned}


def events(old_plan: Plan, new_plan: Plan) -> list[str]:
    """One line per team and event that calls for a review of its contract, with the reason.

    Events: a change of project ownership, access roles, account or region, cluster capacity, orchestrator
    version, data classification, monitoring coverage, or isolation or network path. Cluster-wide changes mark every team that stays on the
    cluster; a group's node image or patching window marks the teams whose quota sits on its instance types; a new
    team's contract needs its first approval; retiring or removed teams are in ``retirement_notes``.
    """
    lines: list[str] = []
    old_teams = {t.name: t for t in old_plan.tenants}
    new_teams = {t.name: t for t in new_plan.tenants}
    retiring = new_plan.contracts.retiring
    cluster = _cluster_reasons(old_plan, new_plan)
    images = _node_image(old_plan, new_plan)
    for name in sorted(new_teams):
        if name in retiring:
            continue
        if name not in old_teams:
            lines.append(f"team {name}: review (new connection): approve its contract before it reaches the cluster")
            continue
        on = {f.instance_type for f in new_teams[name].owned} | {f.instance_type for f in old_teams[name].owned}
        reasons = cluster + [(NODE_IMAGE, d) for types, d in images if types & on]
        reasons += _team_reasons(old_plan, new_plan, old_teams[name], new_teams[name])
        lines += [f"team {name}: review ({event}): {detail}" for event, detail in reasons]
    return lines


def retirement_notes(old_plan: Plan, new_plan: Plan) -> list[str]:
    """What marking a team retiring, or removing it, does to its access and its running work."""
    lines: list[str] = []
    old_teams = {t.name for t in old_plan.tenants}
    new_teams = {t.name for t in new_plan.tenants}
    was, now = set(old_plan.contracts.retiring), set(new_plan.contracts.retiring)
    for name in sorted(new_teams & old_teams):
        if name in now and name not in was:
            lost = sorted(set(_principals(old_plan, name)) - set(_principals(new_plan, name)))
            identities = [i.service_account for i in old_plan.team(name).identities]
            connection = old_plan.contracts.connection(name)
            lines.append(
                f"team {name} retiring: {len(lost)} principal(s) lose cluster access"
                + (f" ({', '.join(lost)})" if lost else "")
                + f"; {len(identities)} workload identity(ies) removed"
                + (f" ({', '.join(identities)})" if identities else "")
                + (f"; Unified Studio connection {connection.name} deleted" if connection else "")
                + ". Its namespace and quota remain: running jobs keep running and queued jobs are still admitted "
                "under its quota, but nobody of the team can see, change or delete them (cluster admins drain them); "
                "pods that use a removed identity fail on their next AWS call once its role is deleted."
            )
        elif name in was and name not in now:
            lines.append(f"team {name} no longer retiring: its principals, workload identities and Unified Studio "
                         "connection come back; review its contract (a renewal)")
    for name in sorted(old_teams - new_teams):
        if name in was:
            lines.append(
                f"team {name} removed after retiring: the connection is revoked; its quota and team objects are "
                "deleted, so nothing more of it is admitted, and work still in its namespace loses its quota"
            )
        else:
            lines.append(
                f"team {name} removed without retiring first: its principals lose access, its identities go and its "
                "running work loses its quota in one deploy; mark it `retiring: true` first to hand over"
            )
    return lines
