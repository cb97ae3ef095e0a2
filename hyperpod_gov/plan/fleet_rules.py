"""The fleet rules over the members' plans: a team is the same on every cluster it uses, and dispatch runs only
between Kueue clusters.

Each rule takes ``(fleet, plans)``: the ``FleetSpec`` and each member's built ``Plan`` by cluster name. The rules
that read only the fleet-level keys (names, what dispatch names) run before the members are parsed
(``spec.fleet_rules``).
"""

from __future__ import annotations

from typing import Any, Iterator, Mapping

from ..spec.errors import SpecIssue
from ..spec.fleet import FleetSpec
from ..spec.rulebook import RuleBook, rule
from .model import Plan

# What must be the same for a team on every Kubernetes cluster it is on: MultiKueue creates the manager's workload
# in the same namespace and LocalQueue on the worker, and people reach the team by its groups and principals.
_SAME = (
    ("namespace", "namespace"), ("local queue", "local_queue"), ("cluster queue", "cluster_queue"),
    ("viewers group", "viewers_group"), ("submitters group", "submitters_group"), ("viewers", "viewers"),
    ("submitters", "submitters"),
)


def _facts(plan: Plan, team: str) -> dict[str, Any]:
    t = plan.team(team)
    facts: dict[str, Any] = {what: getattr(t, attr) for what, attr in _SAME}
    classes = {p.name: p for p in plan.priority_classes}
    facts["priority classes"] = tuple(
        (name, classes[name].kueue_name, classes[name].weight) if name in classes else (name,)
        for name in t.priority_classes)
    return facts


def _kubernetes(plans: Mapping[str, Plan], clusters: tuple[str, ...]) -> list[str]:
    return [c for c in clusters if c in plans and plans[c].slurm is None]


# The team keys the facts above come from (the name and quota are refused per cluster by the fleet document):
# overriding one of them on one Kubernetes cluster (teams[].clusters) would make the team differ there.
IDENTITY_KEYS = ("access", "priorityClasses")


def _identity_overrides(fleet: FleetSpec, plans: Mapping[str, Plan], j: int) -> Iterator[SpecIssue]:
    """Per-cluster overrides (``teams[j].clusters.<cluster>``) of a key HPG-F006 keeps the same, on a Kubernetes
    cluster (a Slurm member has no namespace or principals: there ``access: null`` is how a team leaves them)."""
    team = (fleet.data.get("teams") or [])[j]
    overrides = team.get("clusters") if isinstance(team, Mapping) else None
    for cluster, keys in (overrides or {}).items():
        if cluster not in plans or plans[cluster].slurm is not None or not isinstance(keys, Mapping):
            continue
        for key in IDENTITY_KEYS:
            if key in keys:
                yield SpecIssue(f"teams[{j}].clusters.{cluster}.{key}", f"overrides the team's {key} on Kubernetes "
                                f"cluster {cluster}: a team's namespace, queues, groups, principals and priority "
                                "classes are the same on every Kubernetes cluster it is on (MultiKueue mirrors a "
                                "workload into the same namespace and LocalQueue; people reach the team the same "
                                "way everywhere)", keys[key], f"set {key} on the team (teams[{j}].{key}) for every "
                                "cluster it is on, not per cluster")


@rule("HPG-F006", "error", "A team's namespace, queues, groups, principals and priority classes are the same on "
      "every Kubernetes cluster of the fleet it is on (MultiKueue mirrors a workload into the same namespace and "
      "LocalQueue; people reach the team the same way everywhere): teams[].clusters overrides none of them there.")
def fleet_team_identical(fleet: FleetSpec, plans: Mapping[str, Plan]) -> Iterator[SpecIssue]:
    for j, (team, clusters) in enumerate(fleet.team_clusters.items()):
        refused = list(_identity_overrides(fleet, plans, j))
        yield from refused
        on = _kubernetes(plans, clusters)
        if len(on) < 2 or refused:  # the override is the cause: not reported twice
            continue
        facts = {c: _facts(plans[c], team) for c in on}
        for what in facts[on[0]]:
            seen = {c: facts[c][what] for c in on}
            if len(set(seen.values())) > 1:
                shown = "; ".join(f"{c}: {v!r}" for c, v in seen.items())
                yield SpecIssue(f"teams[{j}]", f"has different {what} on the clusters it is on ({shown})", team,
                                "give the clusters the same scheduler settings for the team (the fleet's "
                                "scheduler: rather than a cluster's own), so that the team is the same everywhere")


def _dispatch_roles(fleet: FleetSpec) -> Iterator[tuple[str, str]]:
    """(path, cluster) of the manager and each worker."""
    if fleet.dispatch is None:
        return
    yield "fleet.dispatch.manager", fleet.dispatch.manager
    for k, worker in enumerate(fleet.dispatch.workers):
        yield f"fleet.dispatch.workers[{k}]", worker


@rule("HPG-F007", "error", "The dispatch manager and workers run in kueue mode: HyperPod's task-governance add-on "
      "runs Kueue itself and exposes no MultiKueue configuration.")
def fleet_dispatch_needs_kueue(fleet: FleetSpec, plans: Mapping[str, Plan]) -> Iterator[SpecIssue]:
    clusters = list(fleet.members)
    for path, cluster in _dispatch_roles(fleet):
        plan = plans.get(cluster)
        if plan is None or plan.slurm is not None or plan.mode == "kueue":
            continue
        i = clusters.index(cluster)
        yield SpecIssue(path, f"is cluster {cluster!r} in {plan.mode} mode: HyperPod's task-governance add-on runs "
                        "Kueue itself (no other Kueue may run beside it) and exposes no MultiKueue configuration, "
                        "so it can neither dispatch nor take dispatched work", cluster,
                        f"set scheduler: {{mode: kueue}} on that cluster (clusters[{i}].scheduler, or the fleet's "
                        "scheduler:), or leave it out of fleet.dispatch")


@rule("HPG-F008", "error", "A Slurm cluster may be in the fleet (its accounting view) but not in dispatch: "
      "MultiKueue dispatches Kubernetes workloads between Kueue clusters.")
def fleet_dispatch_no_slurm(fleet: FleetSpec, plans: Mapping[str, Plan]) -> Iterator[SpecIssue]:
    for path, cluster in _dispatch_roles(fleet):
        plan = plans.get(cluster)
        if plan is not None and plan.slurm is not None:
            yield SpecIssue(path, f"is cluster {cluster!r}, orchestrated by Slurm: MultiKueue dispatches Kubernetes "
                            "workloads between Kueue clusters", cluster,
                            "leave the Slurm cluster out of fleet.dispatch (it stays in the fleet's accounting view)")


@rule("HPG-F009", "error", "No two members of a fleet have a stack of the same name: one CDK app (and one "
      "pipeline) holds every member's stacks.")
def fleet_stack_names_unique(fleet: FleetSpec, plans: Mapping[str, Plan]) -> Iterator[SpecIssue]:
    owner: dict[str, str] = {}
    clusters = list(fleet.members)
    for cluster, plan in plans.items():
        for name in plan.stacks.all_names:
            if name in owner and owner[name] != cluster:
                yield SpecIssue(f"clusters[{clusters.index(cluster)}].name", f"gives cluster {cluster!r} a stack "
                                f"named {name!r}, as cluster {owner[name]!r} has one", cluster,
                                "rename one of the two clusters (a member's stacks are <fleet>-<cluster>-...)")
            owner.setdefault(name, cluster)


@rule("HPG-F010", "error", "Clusters of a fleet in one account and region have different HyperPod and EKS cluster "
      "names (cluster.name), since AWS names them per account and region.")
def fleet_cluster_names_per_region(fleet: FleetSpec, plans: Mapping[str, Plan]) -> Iterator[SpecIssue]:
    seen: dict[tuple[str, str, str], str] = {}
    clusters = list(fleet.members)
    for cluster, plan in plans.items():
        names = dict.fromkeys((plan.cluster.name, plan.cluster.eks_name))
        clash = next(((n, seen[(plan.account, plan.region, n)]) for n in names
                      if (plan.account, plan.region, n) in seen), None)
        if clash is not None:  # one finding per cluster (its EKS name is derived from its name)
            yield SpecIssue(f"clusters[{clusters.index(cluster)}].cluster.name", f"names a cluster {clash[0]!r} in "
                            f"{plan.account}/{plan.region}, as cluster {clash[1]!r} of the fleet does there",
                            plan.cluster.name, "give each cluster in one account and region its own cluster.name")
        for name in names:
            seen.setdefault((plan.account, plan.region, name), cluster)


from .fleet_moves import fleet_moves_valid  # noqa: E402 (HPG-F011 lives with the moves it checks)

FLEET_RULES = RuleBook("fleet", (fleet_team_identical, fleet_dispatch_needs_kueue, fleet_dispatch_no_slurm,
                                 fleet_stack_names_unique, fleet_cluster_names_per_region, fleet_moves_valid))


def all_fleet_rules() -> RuleBook:
    """Every fleet rule, the document rules first: the table of docs/rules.md's fleet section."""
    from ..spec.fleet_rules import FLEET_DOCUMENT_RULES

    book = FLEET_DOCUMENT_RULES + FLEET_RULES
    return RuleBook(book.name, tuple(sorted(book.rules, key=lambda r: r.id)))
