"""HPG-Q011..Q013, the scheduling controls (scheduler.gangScheduling, scheduler.topology) in each mode.

Field-level checks (durations, ranges, the topology's labels and their order) live on the models
(``spec/scheduler.py``); these rules weigh the controls against the mode, the add-on and the instance types.
"""

from __future__ import annotations

import datetime as dt
from typing import Iterator

from ..errors import SpecIssue
from ..instance_types import spec_catalog
from ..models import GovernanceSpec
from ..rulebook import rule
from ..scheduler import (GANG_SCHEDULING_PAGE, TOPOLOGY_INSTANCE_TYPES, TOPOLOGY_MIN_ADDON,
                         TOPOLOGY_PAGE)
from ._common import _slurm
from .dependencies import _release

def _task_governance(spec: GovernanceSpec) -> bool:
    return not _slurm(spec) and spec.scheduler.mode == "task-governance"


@rule("HPG-Q011", "error", "scheduler.topology in task-governance mode needs the task-governance add-on "
      "v1.2.2-eksbuild.1 or later, the first that labels nodes with their network topology (AWS's topology-aware "
      "scheduling page).")
def topology_needs_a_recent_addon(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    if spec.scheduler.topology is None or not _task_governance(spec):
        return
    version = spec.cluster.addon_versions.task_governance
    if _release(version) < TOPOLOGY_MIN_ADDON:
        yield SpecIssue("cluster.addonVersions.taskGovernance", "is older than v1.2.2-eksbuild.1, which "
                        f"topology-aware scheduling needs ({TOPOLOGY_PAGE})", version,
                        "use v1.2.2-eksbuild.1 or later (e.g. v1.6.0-eksbuild.1), or remove scheduler.topology")


@rule("HPG-Q012", "warning", "scheduler.gangScheduling reaches the cluster only where hyperpod-gov installs Kueue's "
      "configuration (kueue mode, Kueue installed by hyperpod-gov). In task-governance mode AWS documents it as a "
      "SageMaker console action (cluster, Policy management, Task governance, Actions, Configure gang scheduling) or a "
      "kubectl edit of the add-on's Kueue configuration, and no CloudFormation property or SageMaker API member carries "
      "it; on an existing cluster whose Kueue hyperpod-gov does not install, that Kueue keeps its own configuration. "
      "hyperpod-gov then prints the settings (explain) but cannot deploy them.")
def gang_scheduling_is_applied_in_the_console(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    gang = spec.scheduler.gang_scheduling
    if gang is None or _slurm(spec):
        return
    shown = gang.model_dump(by_alias=True, exclude_unset=True)
    if _task_governance(spec):
        yield SpecIssue("scheduler.gangScheduling", "is not deployed in task-governance mode: the add-on owns Kueue's "
                        "configuration, AWS documents gang scheduling as a console action or a kubectl edit of it, and "
                        f"no CloudFormation property or SageMaker API member carries it ({GANG_SCHEDULING_PAGE})",
                        shown, "after deploying, open the cluster in the SageMaker console, Policy management, Task "
                        "governance, Actions, Configure gang scheduling, and enter the settings `hyperpod-gov explain` "
                        "prints; then acknowledge HPG-Q012 with that reason")
        return
    existing = spec.cluster.existing
    if existing is not None and not existing.installs.scheduler:
        yield SpecIssue("scheduler.gangScheduling", "is not deployed: the existing cluster runs its own Kueue "
                        "(cluster.existing.installs.scheduler is false), whose configuration hyperpod-gov does not "
                        "write", shown, "set waitForPodsReady in that Kueue's configuration as `hyperpod-gov explain` "
                        "prints it and acknowledge HPG-Q012, or set cluster.existing.installs.scheduler: true")


@rule("HPG-Q013", "warning", "With scheduler.topology naming a network layer, every accelerated instance type is one "
      "AWS lists for topology-aware scheduling: other types' nodes carry no topology.k8s.aws/network-node-layer labels, "
      "so kueue mode leaves their flavors out of the Topology (Kueue counts a node in a topology-aware flavor only "
      "with every level's label) and a job asking for a topology is admitted on them in neither mode.")
def topology_types_are_supported(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    topology = spec.scheduler.topology
    if topology is None or _slurm(spec):
        return
    if all(level == "kubernetes.io/hostname" for level in topology.levels):
        return
    types = spec_catalog(spec)
    seen: set[str] = set()
    for gi, g in enumerate(spec.cluster.instance_groups):
        if g.instance_type in seen or g.instance_type in TOPOLOGY_INSTANCE_TYPES:
            continue
        seen.add(g.instance_type)
        facts = types.get(g.instance_type)
        if facts is None or not facts.accelerators:
            continue  # CPU types: their flavors are never topology-aware (plan/kueue.py topology_for)
        yield SpecIssue(f"cluster.instanceGroups[{gi}].instanceType", "is not among the instance types AWS lists for "
                        f"topology-aware scheduling ({TOPOLOGY_PAGE}): its nodes have no network-layer labels, so "
                        "work that asks for a topology is never admitted on it", g.instance_type,
                        "use a listed type (e.g. ml.p5.48xlarge) for multi-node work, or acknowledge HPG-Q013 (work "
                        "on this type then runs without a topology request, placed as before)")
