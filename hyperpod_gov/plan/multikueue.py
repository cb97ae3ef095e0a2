"""MultiKueue across a fleet (kueue mode): what the manager and each worker get, as plain data.

Pure: built from the members' single-cluster plans (``build_plan`` of each member), no CDK. charts/multikueue.py
renders it. Kueue v0.19.2 facts this follows (docs/fleet.md cites them):

- the manager holds one MultiKueueCluster per worker (its kubeconfig in a Secret of the Kueue namespace, key
  ``kubeconfig``) and, per distinct set of workers a team is on, one MultiKueueConfig listing that set in dispatch
  order and one AdmissionCheck of controller ``kueue.x-k8s.io/multikueue`` naming it (the dispatcher copies a
  workload to every cluster of its check's config, ``workload.go`` ``remoteClientsForAC``; configs may share
  clusters, ``indexer.go`` indexes a cluster's configs); per team, a ClusterQueue that carries its set's check
  (one MultiKueue check per ClusterQueue, ``pkg/cache/scheduler/clusterqueue.go``); "the quota in the manager
  cluster should equal the total quota available in all worker clusters", so the plan derives it as the sum;
- a worker "acts like a standalone Kueue cluster": the dispatched copy keeps its namespace and queue name, so each
  worker has the team's namespace and a LocalQueue of the manager's queue name, pointing at the team's own
  ClusterQueue there; the manager reaches it as a service account with the rules of Kueue's
  ``create-multikueue-kubeconfig.sh`` plus the kinds the fleet's teams may run.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Iterable, Literal, Mapping

from . import names
from .kueue import KUEUE_SETTINGS, covered_resources, quantities
from .model import Plan
from .operators import KUEUE_NAMESPACE
from .quotas import FlavorQuota, TeamPlan
from .workloads import kinds_for

MULTIKUEUE_CONTROLLER = "kueue.x-k8s.io/multikueue"  # AdmissionCheck spec.controllerName (Kueue's constant)
KUBECONFIG_KEY = "kubeconfig"  # the Secret key Kueue reads (MultiKueueConfigSecretKey)
MAX_WORKERS = 20  # MultiKueueConfig spec.clusters maxItems
FLEET_CHECK = "hyperpod-gov-fleet"  # the prefix of each set's AdmissionCheck and MultiKueueConfig
WORKER_ACCOUNT = "hyperpod-gov-multikueue"  # the worker's ServiceAccount, ClusterRole and ClusterRoleBinding
CREDENTIAL_STEP = "docs/fleet.md#the-worker-credential"  # where the Secret's contents come from
MEMORY = "memory"

Role = Literal["manager", "worker"]
VERBS_OBJECT = ("create", "delete", "get", "list", "watch")
VERBS_STATUS = ("get",)


def fleet_queue(team: str) -> str:
    """The manager's ClusterQueue of a team (its LocalQueue on the manager and every worker is
    ``names.fleet_local_queue``, ``<namespace>-fleet``, which the team-queue policy admits).

    Ends in ``-fleet``: the single-cluster queue names end in ``-clusterqueue`` / ``-localqueue``, so no team's
    fleet queue is another's queue."""
    return f"{team}-fleet"


def dispatch_check(workers: Iterable[str]) -> str:
    """The AdmissionCheck of one set of workers and the MultiKueueConfig it names: ``hyperpod-gov-fleet-<hash>``,
    the first 10 hex digits of the SHA-256 of the sorted worker names joined by ``/`` (no member name holds one).

    Derived from the set alone: the dispatch order, the teams and their order change no name. A readable join of
    the names would collide (``a-b`` + ``c`` and ``a`` + ``b-c``: a DNS label may hold any run of ``-``)."""
    members = sorted(set(workers))
    if not members:
        raise ValueError("a dispatch check needs at least one worker")
    return f"{FLEET_CHECK}-{hashlib.sha256('/'.join(members).encode()).hexdigest()[:10]}"


def kubeconfig_secret(worker: str) -> str:
    """The Secret of the Kueue namespace on the manager that holds a worker's kubeconfig."""
    return f"{worker}-kubeconfig"


@dataclass(frozen=True)
class RbacRule:
    """One ClusterRole rule."""

    api_groups: tuple[str, ...]
    resources: tuple[str, ...]
    verbs: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        return {"apiGroups": list(self.api_groups), "resources": list(self.resources), "verbs": list(self.verbs)}


def _pair(group: str, resource: str, verbs: tuple[str, ...] = VERBS_OBJECT) -> tuple[RbacRule, RbacRule]:
    return RbacRule((group,), (resource,), verbs), RbacRule((group,), (f"{resource}/status",), VERBS_STATUS)


# The ClusterRole rules of Kueue's site/static/examples/multikueue/create-multikueue-kubeconfig.sh@v0.19.2, in the
# script's order (tests/fleet/test_multikueue.py reads the vendored script and checks each is granted).
SCRIPT_RULES: tuple[RbacRule, ...] = (
    *_pair("batch", "jobs"),
    RbacRule(("",), ("pods",), VERBS_OBJECT),
    *_pair("apps", "statefulsets"),
    *_pair("leaderworkerset.x-k8s.io", "leaderworkersets"),
    *_pair("jobset.x-k8s.io", "jobsets"),
    RbacRule(("kueue.x-k8s.io",), ("workloads",), (*VERBS_OBJECT, "update", "patch")),
    RbacRule(("kueue.x-k8s.io",), ("clusterqueues", "localqueues"), ("get", "list", "watch")),
    RbacRule(("kueue.x-k8s.io",), ("workloads/status",), ("get", "patch", "update")),
    *(rule for kind in ("tfjobs", "paddlejobs", "pytorchjobs", "xgboostjobs", "mpijobs")
      for rule in _pair("kubeflow.org", kind)),
    *_pair("ray.io", "rayjobs"),
    *_pair("ray.io", "rayclusters", (*VERBS_OBJECT, "update", "patch")),
    *_pair("ray.io", "rayservices"),
    *_pair("workload.codeflare.dev", "appwrappers"),
)


@dataclass(frozen=True)
class FleetFlavor:
    """A team's summed quota on one flavor of the manager's fleet ClusterQueue.

    ``nominal``: (resource, amount) in ``covered`` order; memory in GiB, the rest in Kueue's units (cores,
    accelerators, MIG partitions). ``by_worker``: each worker's share, the same shape, workers in dispatch order."""

    name: str
    instance_type: str
    nominal: tuple[tuple[str, int], ...]
    by_worker: tuple[tuple[str, tuple[tuple[str, int], ...]], ...]

    def quantity(self, resource: str) -> Any:
        """The amount of one resource as Kueue writes it (memory as ``<n>Gi``)."""
        value = dict(self.nominal)[resource]
        return f"{value}Gi" if resource == MEMORY else value


@dataclass(frozen=True)
class DispatchSet:
    """One set of workers some team is on: the manager's MultiKueueConfig listing them and the AdmissionCheck
    naming it, both ``name`` (:func:`dispatch_check`)."""

    name: str
    workers: tuple[str, ...]  # in dispatch order (MultiKueueConfig spec.clusters)


@dataclass(frozen=True)
class FleetQueue:
    """A team's fleet queues. On the manager: the ClusterQueue ``cluster_queue`` (with the check ``check`` of its
    set of ``workers``, ``flavors`` summed over them) and the LocalQueue ``local_queue``; on a worker: the
    LocalQueue ``local_queue`` pointing at ``cluster_queue``, the team's own ClusterQueue there."""

    team: str
    namespace: str
    local_queue: str
    cluster_queue: str
    workers: tuple[str, ...] = ()  # manager: the workers the team has quota on, in dispatch order: its set
    check: str = ""  # manager: dispatch_check(workers), the AdmissionCheck its ClusterQueue carries
    covered: tuple[str, ...] = ()  # manager: coveredResources of the fleet ClusterQueue
    flavors: tuple[FleetFlavor, ...] = ()  # manager: sorted by flavor name; only the flavors with quota
    active: bool = True  # manager: False when the team is paused on every worker (stopPolicy Hold)
    create_namespace: bool = False  # manager: the team has no quota on the manager's own cluster

    def cluster_queue_spec(self) -> dict[str, Any]:
        """The manager's ClusterQueue ``spec``: no cohort (the manager only bounds what is in flight; borrowing
        happens on the workers), the team's namespace only, the MultiKueue check of its set for every flavor
        (Kueue refuses ``onFlavors`` on a MultiKueue check)."""
        spec: dict[str, Any] = {
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": self.namespace}},
            "queueingStrategy": KUEUE_SETTINGS.queueing_strategy,
            "resourceGroups": [{
                "coveredResources": list(self.covered),
                "flavors": [{"name": f.name, "resources": [{"name": r, "nominalQuota": f.quantity(r)}
                                                           for r in self.covered]} for f in self.flavors],
            }],
            "admissionChecksStrategy": {"admissionChecks": [{"name": self.check}]},
        }
        if not self.active:
            spec["stopPolicy"] = KUEUE_SETTINGS.paused_stop_policy
        return spec


@dataclass(frozen=True)
class WorkerLink:
    """The manager's view of one worker: its MultiKueueCluster and the Secret its kubeconfig is in."""

    worker: str
    cluster: str  # MultiKueueCluster name
    secret: str  # Secret name in ``MultiKueuePlan.kueue_namespace`` (key ``kubeconfig``)


@dataclass(frozen=True)
class ManagerFlavor:
    """A ResourceFlavor the manager lacks, named as the workers name it (its nodes are on the workers)."""

    name: str
    instance_type: str


@dataclass(frozen=True)
class MultiKueuePlan:
    """What one member of a dispatching fleet gets for MultiKueue."""

    cluster: str  # the member's name in the fleet
    role: Role
    kueue_namespace: str
    queues: tuple[FleetQueue, ...]  # sorted by team
    links: tuple[WorkerLink, ...] = ()  # manager: the workers, in dispatch order
    sets: tuple[DispatchSet, ...] = ()  # manager: the sets of workers its queues use, each once, sorted by name
    flavors: tuple[ManagerFlavor, ...] = ()  # manager: the ResourceFlavors it lacks, sorted by name
    account: str = WORKER_ACCOUNT  # worker: ServiceAccount, ClusterRole, ClusterRoleBinding
    rules: tuple[RbacRule, ...] = ()  # worker: the ClusterRole's rules

    @property
    def workers(self) -> tuple[str, ...]:
        return tuple(link.worker for link in self.links)


def _resources(covered: tuple[str, ...], f: FlavorQuota) -> dict[str, int]:
    """A team's nominal quota of one flavor on one cluster, per covered resource (memory in GiB)."""
    out = quantities(covered, f, f.nominal)
    out[MEMORY] = f.nominal.memory_gib
    return out


def _same(teams: list[tuple[str, TeamPlan]], field: str) -> Any:
    values = {getattr(t, field) for _, t in teams}
    if len(values) != 1:
        where = ", ".join(f"{w}: {getattr(t, field)}" for w, t in teams)
        raise ValueError(f"team {teams[0][1].name} has a different {field} on the workers ({where})")
    return values.pop()


def manager_queue(name: str, on: list[tuple[str, TeamPlan]], on_manager: bool) -> FleetQueue:
    """The manager's fleet queue of one team, ``on``: (worker, the team there) in dispatch order."""
    owned = [(w, f) for w, t in on for f in t.owned]
    covered = covered_resources([f.accelerator_kind for _, f in owned], [f.mig_resource for _, f in owned])
    flavors = []
    for instance_type in sorted({f.instance_type for _, f in owned}):
        shares = [(w, _resources(covered, f)) for w, f in owned if f.instance_type == instance_type]
        total = {r: sum(s[r] for _, s in shares) for r in covered}
        flavors.append(FleetFlavor(
            name=names.flavor(instance_type), instance_type=instance_type,
            nominal=tuple((r, total[r]) for r in covered),
            by_worker=tuple((w, tuple((r, s[r]) for r in covered)) for w, s in shares)))
    workers = tuple(w for w, _ in on)
    return FleetQueue(team=name, namespace=_same(on, "namespace"), local_queue=names.fleet_local_queue(name),
                      cluster_queue=fleet_queue(name), workers=workers, check=dispatch_check(workers),
                      covered=covered, flavors=tuple(sorted(flavors, key=lambda f: f.name)),
                      active=any(t.active for _, t in on), create_namespace=not on_manager)


def dispatch_sets(queues: Iterable[FleetQueue]) -> tuple[DispatchSet, ...]:
    """The distinct sets of workers of ``queues`` (the manager's), each once, sorted by name: a set no team is on
    is not among them. Two sets of one name (a hash collision) are refused rather than merged."""
    sets: dict[str, tuple[str, ...]] = {}
    for q in queues:
        if sets.setdefault(q.check, q.workers) != q.workers:
            raise ValueError(f"dispatch check {q.check} names two sets of workers: {list(sets[q.check])} and "
                             f"{list(q.workers)}")
    return tuple(DispatchSet(name, ws) for name, ws in sorted(sets.items()))


def worker_rules(teams: tuple[TeamPlan, ...]) -> tuple[RbacRule, ...]:
    """The script's rules, then a pair (object, status) for every kind a team of ``teams`` may run that they
    lack, sorted by group and resource."""
    granted = {(g, r) for rule in SCRIPT_RULES for g in rule.api_groups for r in rule.resources}
    extra = sorted({(k.group, k.resource) for t in teams for k in kinds_for(t)} - granted)
    return SCRIPT_RULES + tuple(rule for g, r in extra for rule in _pair(g, r))


def multikueue_plans(members: Mapping[str, Plan], manager: str,
                     workers: tuple[str, ...]) -> dict[str, MultiKueuePlan]:
    """The MultiKueue plan of the manager and of each worker (keys: member names; manager first, then the workers
    in dispatch order). ``members``: each member's single-cluster plan (kueue mode)."""
    if manager in workers:
        raise ValueError(f"{manager}: Kueue v0.19.2 cannot run the manager as one of its own workers")
    if not workers or len(workers) > MAX_WORKERS or len(set(workers)) != len(workers):
        raise ValueError(f"workers: 1 to {MAX_WORKERS} distinct clusters, got {list(workers)}")
    for name in (manager, *workers):
        if name not in members:
            raise ValueError(f"{name}: not a member of the fleet ({sorted(members)})")
        if members[name].mode != "kueue":
            raise ValueError(f"{name}: MultiKueue needs scheduler.mode kueue, not {members[name].mode}")
    by_team: dict[str, list[tuple[str, TeamPlan]]] = {}
    for w in workers:
        for team in members[w].tenants:
            by_team.setdefault(team.name, []).append((w, team))
    home = members[manager]
    on_manager = {t.name for t in home.tenants}
    queues = tuple(manager_queue(name, by_team[name], name in on_manager) for name in sorted(by_team))
    have = {f.name for f in home.flavors}
    lacking = {f.name: f.instance_type for q in queues for f in q.flavors if f.name not in have}
    plans = {manager: MultiKueuePlan(
        cluster=manager, role="manager", kueue_namespace=KUEUE_NAMESPACE, queues=queues,
        links=tuple(WorkerLink(w, w, kubeconfig_secret(w)) for w in workers), sets=dispatch_sets(queues),
        flavors=tuple(ManagerFlavor(n, t) for n, t in sorted(lacking.items())))}
    fleet_teams = tuple(t for w in workers for t in members[w].tenants)
    rules = worker_rules(fleet_teams)
    for w in workers:
        plans[w] = MultiKueuePlan(
            cluster=w, role="worker", kueue_namespace=KUEUE_NAMESPACE, rules=rules,
            queues=tuple(FleetQueue(team=t.name, namespace=t.namespace, local_queue=names.fleet_local_queue(t.name),
                                    cluster_queue=t.cluster_queue) for t in members[w].tenants))
    return plans

