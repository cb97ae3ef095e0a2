"""Kueue objects as plain data: the ClusterQueue spec of a team, exactly as ``kueue`` mode emits it.

Pure: the charts turn these dicts into objects, the simulator turns them into queues.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Mapping, Optional, Sequence

from ..spec.cluster import DEDICATED_KEY
from ..spec.scheduler import TOPOLOGY_INSTANCE_TYPES
from . import names
from .quotas import ZERO, Amounts, FlavorQuota, TeamPlan
from .scheduling import DEFAULT_WAIT_FOR_PODS_READY, HOSTNAME, TopologyPlan
from .storage import DedicatedPlan

KUEUE_API = "kueue.x-k8s.io/v1beta2"
MIG_PREFIX = "nvidia.com/mig-"


@dataclass(frozen=True)
class KueueSettings:
    """The Kueue scheduling settings this project chooses, declared once.

    The ClusterQueues (:func:`cluster_queue_spec`), the controller configuration
    (:func:`kueue_manager_config`) and the what-if simulator (``simulate.spec_level``) all read them from
    here, so a what-if result always describes the queues the cluster gets.
    """

    # spec.queueingStrategy of every team's ClusterQueue: a head that cannot be admitted does not block
    # the smaller work behind it.
    queueing_strategy: str = "BestEffortFIFO"
    # spec.preemption.reclaimWithinCohort of a team that lends: it takes back what it lent when its own work
    # needs it, whatever the borrower's priority.
    reclaim_when_lending: str = "Any"
    # ... of a team that lends nothing (DontLend): nothing of its own is out to reclaim.
    reclaim_when_not_lending: str = "Never"
    # fairSharing.preemptionStrategies of the controller configuration (Kueue's default order).
    fair_sharing_strategies: tuple[str, ...] = ("LessThanOrEqualToFinalShare", "LessThanInitialShare")
    # spec.stopPolicy of a paused team (teams[].active: false): admit nothing new, leave admitted work
    # running (HoldAndDrain would evict it).
    paused_stop_policy: str = "Hold"


KUEUE_SETTINGS = KueueSettings()


def covered_resources(flavor_kinds: Sequence[Optional[str]],
                      mig_resources: Sequence[Optional[str]] = ()) -> tuple[str, ...]:
    """cpu, memory, then each accelerator resource used in the cluster, then each MIG resource (each sorted).

    A partitioned GPU type offers only its MIG resource (``nvidia.com/mig-1g.10gb``), not ``nvidia.com/gpu``.
    """
    return ("cpu", "memory", *sorted({k for k in flavor_kinds if k}), *sorted({m for m in mig_resources if m}))


def quantities(covered: Sequence[str], f: FlavorQuota, amounts: Amounts) -> dict[str, Any]:
    """Per covered resource: cpu in cores, memory in Gi, each accelerator kind (0 if the flavor has another),
    each MIG resource (partitions; 0 where the flavor's GPUs are not partitioned into that profile)."""
    out: dict[str, Any] = {"cpu": amounts.vcpu, "memory": f"{amounts.memory_gib}Gi"}
    for resource in covered[2:]:
        if resource.startswith(MIG_PREFIX):
            out[resource] = amounts.partition(resource)
        else:
            out[resource] = amounts.accelerators if resource == f.accelerator_kind and not f.mig_resource else 0
    return out


def _resource(covered: Sequence[str], f: FlavorQuota, name: str) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": name, "nominalQuota": quantities(covered, f, f.nominal)[name]}
    if f.lending_limit is not None:
        entry["lendingLimit"] = quantities(covered, f, f.lending_limit)[name]
    if f.borrowing_limit is not None:
        entry["borrowingLimit"] = quantities(covered, f, f.borrowing_limit)[name]
    return entry


def _minus(a: Amounts, b: Amounts) -> Amounts:
    """``a - b`` per resource, never below zero."""
    parts = dict(a.partitions)
    for r, n in b.partitions:
        parts[r] = max(parts.get(r, 0) - n, 0)
    return Amounts(max(a.accelerators - b.accelerators, 0), max(a.vcpu - b.vcpu, 0),
                   max(a.memory_gib - b.memory_gib, 0), tuple(sorted(parts.items())))


def _flavor_entries(covered: Sequence[str], f: FlavorQuota,
                    dedicated: Optional[DedicatedPlan]) -> list[dict[str, Any]]:
    """The team's flavors of one instance type. With groups of the type dedicated to the team, their flavor comes
    first (Kueue tries flavors in order: the team's work fills its own nodes first) holding what they bring, and
    lends and borrows nothing; the shared flavor keeps the rest of the team's quota (the spec's rule HPG-Q008
    makes the quota cover the dedicated groups)."""
    shared = {"name": names.flavor(f.instance_type), "resources": []}
    if dedicated is None:
        shared["resources"] = [_resource(covered, f, r) for r in covered]
        return [shared]
    own = replace(f, nominal=dedicated.capacity, lending_limit=ZERO, borrowing_limit=ZERO)
    rest = replace(f, nominal=_minus(f.nominal, dedicated.capacity))
    shared["resources"] = [_resource(covered, rest, r) for r in covered]
    return [{"name": dedicated.flavor, "resources": [_resource(covered, own, r) for r in covered]}, shared]


def cluster_queue_spec(cohort: str, covered: Sequence[str], team: TeamPlan,
                       settings: KueueSettings = KUEUE_SETTINGS,
                       dedicated: Sequence[DedicatedPlan] = ()) -> dict[str, Any]:
    """The ClusterQueue ``spec`` of a team, per DESIGN.md's semantics table (a paused team's queue is held);
    ``dedicated``: the team's dedicated groups (``Plan.dedicated``), each type's as a flavor of its own."""
    mine = {d.instance_type: d for d in dedicated if d.team == team.name}
    spec: dict[str, Any] = {
        "cohortName": cohort,
        # Only the team's own namespace may submit to its queue (null would admit none, {} all).
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": team.namespace}},
        "queueingStrategy": settings.queueing_strategy,
        "resourceGroups": [
            {
                "coveredResources": list(covered),
                "flavors": [entry for f in team.flavors
                            for entry in _flavor_entries(covered, f, mine.get(f.instance_type))],
            }
        ],
        "preemption": {
            "withinClusterQueue": team.preempt_team_tasks,
            "reclaimWithinCohort": (settings.reclaim_when_lending if team.can_lend
                                    else settings.reclaim_when_not_lending),
        },
        "fairSharing": {"weight": team.fair_share_weight},
    }
    if not team.active:
        spec["stopPolicy"] = settings.paused_stop_policy
    return spec


def flavor_spec(instance_type: str, topology_name: Optional[str] = None) -> dict[str, Any]:
    """The ResourceFlavor ``spec`` of an instance type; ``topology_name``: the Kueue Topology its work is placed in
    (scheduler.topology, accelerated types only: :func:`topology_for`)."""
    spec: dict[str, Any] = {"nodeLabels": {names.INSTANCE_TYPE_LABEL: instance_type}}
    if topology_name is not None:
        spec["topologyName"] = topology_name
    return spec


def topology_for(instance_type: str, accelerated: bool, topology: Optional[TopologyPlan]) -> Optional[str]:
    """The Topology a flavor of ``instance_type`` names (scheduler.topology), or None.

    Only accelerated types (the multi-node work topology-aware scheduling is for runs there), and of those only the
    ones whose nodes carry every level's label: Kueue v0.19.2 counts a node in a topology-aware flavor only when it
    has each level's label (``pkg/util/tas/node.go`` NodeMatchesFlavor), so a flavor of a type without the network
    labels would have no capacity at all. The network labels are on the types AWS lists for topology-aware
    scheduling (``TOPOLOGY_INSTANCE_TYPES``); every node has ``kubernetes.io/hostname``."""
    if topology is None or not accelerated:
        return None
    if instance_type in TOPOLOGY_INSTANCE_TYPES or all(level == HOSTNAME for level in topology.levels):
        return topology.name
    return None


def dedicated_flavor_spec(d: DedicatedPlan, topology_name: Optional[str] = None) -> dict[str, Any]:
    """The ResourceFlavor ``spec`` of a team's dedicated groups of one type: Kueue adds the node labels as a
    nodeSelector and the toleration to the pods it admits on the flavor, so they land on those nodes only."""
    spec: dict[str, Any] = {
        "nodeLabels": {names.INSTANCE_TYPE_LABEL: d.instance_type, DEDICATED_KEY: d.team},
        "tolerations": [{"key": DEDICATED_KEY, "operator": "Equal", "value": d.team, "effect": "NoSchedule"}],
    }
    if topology_name is not None:
        spec["topologyName"] = topology_name
    return spec


def fair_sharing_config(fair_sharing: bool, settings: KueueSettings = KUEUE_SETTINGS) -> dict[str, Any]:
    """The ``fairSharing`` block of Kueue's controller Configuration."""
    return {"enable": fair_sharing, "preemptionStrategies": list(settings.fair_sharing_strategies)}


def kueue_manager_config(fair_sharing: bool, settings: KueueSettings = KUEUE_SETTINGS, *,
                         frameworks: tuple[str, ...] = ("pod",), external_frameworks: tuple[str, ...] = (),
                         wait_for_pods_ready: Optional[Mapping[str, Any]] = None) -> str:
    """Kueue's controller Configuration (Helm value ``managerConfig.controllerManagerConfigYaml``);
    ``frameworks`` and ``external_frameworks``: the Kueue integrations of the kinds the teams may create
    (plan/workloads.py ``kueue_integrations``); ``wait_for_pods_ready``: scheduler.gangScheduling as Kueue's block
    (``plan.scheduling.wait_for_pods_ready``; None: ``DEFAULT_WAIT_FOR_PODS_READY``, on with Kueue's defaults and
    admission not blocked)."""
    import json

    config = {
        "apiVersion": "config.kueue.x-k8s.io/v1beta1",
        "kind": "Configuration",
        "health": {"healthProbeBindAddress": ":8081"},
        "metrics": {"bindAddress": ":8443", "enableClusterQueueResources": True},
        "webhook": {"port": 9443},
        "leaderElection": {"leaderElect": True, "resourceName": "c1f6bfd2.kueue.x-k8s.io"},
        # Every job in a team namespace goes through a queue: one without the queue label is held (suspended),
        # never run outside the quotas. Team namespaces carry TEAM_LABEL (tenant chart); a label selector keeps
        # the configuration unchanged when teams come and go, and leaves system namespaces alone.
        "manageJobsWithoutQueueName": True,
        "managedJobsNamespaceSelector": {"matchExpressions": [{"key": names.TEAM_LABEL, "operator": "Exists"}]},
        "waitForPodsReady": dict(wait_for_pods_ready or DEFAULT_WAIT_FOR_PODS_READY),
        "integrations": {"frameworks": list(frameworks),
                         **({"externalFrameworks": list(external_frameworks)} if external_frameworks else {})},
        "fairSharing": fair_sharing_config(fair_sharing, settings),
    }
    # JSON is valid YAML, and its key order is fixed: the chart value is byte-stable.
    return json.dumps(config, indent=2, sort_keys=True)
