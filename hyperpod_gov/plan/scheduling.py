"""Scheduling controls of the spec (scheduler.gangScheduling, scheduler.topology) as plan parts, per mode.

kueue mode: gang scheduling is the ``waitForPodsReady`` block of Kueue's controller Configuration
(:func:`wait_for_pods_ready`, rendered by ``plan.kueue.kueue_manager_config``), and topology is a Kueue
``Topology`` object that the accelerated ResourceFlavors name (``charts/kueue.py``).

task-governance mode: the HyperPod add-on owns Kueue and its Configuration. AWS documents gang scheduling as a
console action on the cluster ("Policy management" tab, "Task governance" section, Actions, "Configure gang
scheduling"; "The Kueue controller restarts to apply the change") or as an edit of the Kueue configuration with
kubectl, and no CloudFormation property or SageMaker API member carries it (GANG_SCHEDULING_PAGE): hyperpod-gov
renders the same settings and the spec rule HPG-Q012 tells the platform team to apply them there. Topology-aware
scheduling needs no object of the platform's: "HyperPod task governance automatically configures cluster nodes
with topology labels" from add-on v1.2.2-eksbuild.1 (TOPOLOGY_PAGE); the rule HPG-Q011 refuses an older pinned
add-on. Jobs ask for a level with a pod-set annotation (:func:`podset_topology_annotations`), in both modes.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Mapping, Optional

from ..spec.scheduler import GANG_SCHEDULING_PAGE, TOPOLOGY_LABELS, TOPOLOGY_PAGE, Scheduler
from . import names

__all__ = ["GANG_SCHEDULING_PAGE", "TOPOLOGY_PAGE", "GangSchedulingPlan", "TopologyPlan", "gang_scheduling_plan",
           "topology_plan", "wait_for_pods_ready", "podset_topology_annotations", "gang_scheduling_words",
           "topology_words", "REQUIRED_TOPOLOGY", "PREFERRED_TOPOLOGY"]

HOSTNAME = TOPOLOGY_LABELS[-1]
REQUIRED_TOPOLOGY = "kueue.x-k8s.io/podset-required-topology"
PREFERRED_TOPOLOGY = "kueue.x-k8s.io/podset-preferred-topology"

# kueue mode without scheduler.gangScheduling: what the controller Configuration always held (waitForPodsReady on
# with Kueue's defaults, admission not blocked).
DEFAULT_WAIT_FOR_PODS_READY: Mapping[str, Any] = MappingProxyType({"enable": True, "blockAdmission": False})


@dataclass(frozen=True)
class GangSchedulingPlan:
    """scheduler.gangScheduling, every value stated (the spec's defaults filled in)."""

    timeout: str
    recovery_timeout: Optional[str]  # None: Kueue's default, the timeout
    block_admission: bool
    requeuing_timestamp: str
    backoff_limit_count: Optional[int]  # None: requeued without limit
    backoff_base_seconds: int
    backoff_max_seconds: int

    def wait_for_pods_ready(self) -> dict[str, Any]:
        """Kueue's ``waitForPodsReady`` (config.kueue.x-k8s.io/v1beta1, Kueue v0.19.2's field names)."""
        requeuing: dict[str, Any] = {"timestamp": self.requeuing_timestamp,
                                     "backoffBaseSeconds": self.backoff_base_seconds,
                                     "backoffMaxSeconds": self.backoff_max_seconds}
        if self.backoff_limit_count is not None:
            requeuing["backoffLimitCount"] = self.backoff_limit_count
        out: dict[str, Any] = {"enable": True, "timeout": self.timeout, "blockAdmission": self.block_admission,
                               "requeuingStrategy": requeuing}
        if self.recovery_timeout is not None:
            out["recoveryTimeout"] = self.recovery_timeout
        return out

    @property
    def words(self) -> str:
        """The settings as the console and explain show them."""
        limit = ("without limit" if self.backoff_limit_count is None
                 else f"at most {self.backoff_limit_count} times")
        return (f"timeout {self.timeout}, recovery timeout {self.recovery_timeout or self.timeout}, "
                f"admission {'blocked until ready' if self.block_admission else 'not blocked'}, requeued {limit} "
                f"(backoff {self.backoff_base_seconds}s doubling to {self.backoff_max_seconds}s, ordered by "
                f"{self.requeuing_timestamp.lower()} time)")


@dataclass(frozen=True)
class TopologyPlan:
    """scheduler.topology: the Kueue Topology's name (kueue mode) and its levels, outermost first."""

    name: str
    levels: tuple[str, ...]

    def spec(self) -> dict[str, Any]:
        """The Kueue ``Topology`` spec (kueue.x-k8s.io/v1beta2)."""
        return {"levels": [{"nodeLabel": label} for label in self.levels]}

    @property
    def multi_node_level(self) -> Optional[str]:
        """The innermost level a job of several nodes can be packed into: the innermost network layer listed
        (the hostname level holds one node only). None when the levels name the hostname alone."""
        layers = [label for label in self.levels if label != HOSTNAME]
        return layers[-1] if layers else None


def gang_scheduling_plan(scheduler: Scheduler) -> Optional[GangSchedulingPlan]:
    g = scheduler.gang_scheduling
    if g is None:
        return None
    r = g.requeuing
    return GangSchedulingPlan(g.timeout, g.recovery_timeout, g.block_admission, r.timestamp, r.backoff_limit_count,
                              r.backoff_base_seconds, r.backoff_max_seconds)


def topology_plan(spec_name: str, scheduler: Scheduler) -> Optional[TopologyPlan]:
    t = scheduler.topology
    return None if t is None else TopologyPlan(names.topology(spec_name), tuple(t.levels))


def wait_for_pods_ready(gang: Optional[GangSchedulingPlan]) -> dict[str, Any]:
    """The ``waitForPodsReady`` block kueue mode installs: the spec's, or the fixed one without it."""
    return dict(DEFAULT_WAIT_FOR_PODS_READY) if gang is None else gang.wait_for_pods_ready()


def podset_topology_annotations(topology: Optional[TopologyPlan], *, required: bool = False,
                                level: Optional[str] = None) -> dict[str, str]:
    """The pod-set annotation a multi-node job's pod template carries to be packed into one topology domain, in
    either mode (empty without scheduler.topology, or when no level holds several nodes).

    ``required``: ``kueue.x-k8s.io/podset-required-topology`` (the job waits until one domain of the level fits
    it) rather than ``podset-preferred-topology`` (packed as tightly as it can be, admitted anyway). ``level``: one of
    the topology's levels (default: :attr:`TopologyPlan.multi_node_level`). The annotation goes on the pod
    template's metadata (``spec.template.metadata.annotations``, each ``replicaSpecs`` entry's template for
    PyTorchJob and MPIJob), where Kueue reads a pod set's topology request.
    """
    if topology is None:
        return {}
    chosen = level if level is not None else topology.multi_node_level
    if chosen is None:
        return {}
    if chosen not in topology.levels:
        raise ValueError(f"{chosen!r} is not a level of the topology ({', '.join(topology.levels)})")
    return {REQUIRED_TOPOLOGY if required else PREFERRED_TOPOLOGY: chosen}


def gang_scheduling_words(gang: Optional[GangSchedulingPlan], mode: str, installs_kueue: bool = True) -> str:
    """The cluster view's gang scheduling row (``diff``, ``explain``): the settings and who applies them.
    ``installs_kueue``: hyperpod-gov installs the scheduler (False on an existing cluster that runs its own)."""
    if gang is None:
        return ("Kueue's waitForPodsReady on with its defaults, admission not blocked" if mode == "kueue"
                else "the task-governance add-on's setting (not set by the spec)")
    if mode == "kueue":
        return gang.words if installs_kueue else f"{gang.words}; set in the cluster's own Kueue (HPG-Q012)"
    return f"{gang.words}; applied in the SageMaker console's Configure gang scheduling (HPG-Q012)"


def topology_words(topology: Optional[TopologyPlan], mode: str) -> str:
    """The cluster view's topology row: the levels, and what carries them in the mode."""
    if topology is None:
        return "off"
    levels = " > ".join(topology.levels)
    if mode == "kueue":
        return f"Kueue Topology {topology.name} ({levels}) on the flavors of accelerated types that carry its labels"
    return f"{levels}, on the topology labels HyperPod puts on nodes (task-governance add-on v1.2.2 or later)"
