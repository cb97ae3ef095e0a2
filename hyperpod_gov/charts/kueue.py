"""Kueue objects (``kueue`` mode only): flavors, priority classes, one ClusterQueue and LocalQueue per team.

In ``task-governance`` mode the HyperPod add-on owns all of these; emitting
them would only have them overwritten.
"""

from __future__ import annotations


from constructs import Construct

from ..plan import Plan, TeamPlan
from ..plan.kueue import KUEUE_API, dedicated_flavor_spec, flavor_spec, topology_for
from ._objects import api_object


class KueueSharedObjects(Construct):
    """Kueue objects every team shares: the Topology (scheduler.topology), ResourceFlavors,
    WorkloadPriorityClasses, the shared pool's queue."""

    def __init__(self, scope: Construct, id: str, *, plan: Plan) -> None:
        super().__init__(scope, id)
        if plan.topology is not None:
            api_object(self, "Topology", api_version=KUEUE_API, kind="Topology", name=plan.topology.name,
                       body={"spec": plan.topology.spec()})
        accelerated = {f.instance_type: f.accelerator_kind is not None for f in plan.flavors}
        for flavor in plan.flavors:
            api_object(
                self, f"Flavor-{flavor.name}", api_version=KUEUE_API, kind="ResourceFlavor", name=flavor.name,
                body={"spec": flavor_spec(flavor.instance_type, topology_for(
                    flavor.instance_type, accelerated[flavor.instance_type], plan.topology))},
            )
        # A team's dedicated groups of a type: a flavor of their own, which only the team's queue lists. The
        # instance type's shared flavor still selects every node of the type; the dedicated nodes' taint keeps
        # the work admitted on it (which does not tolerate the taint) off them.
        for d in plan.dedicated:
            api_object(self, f"DedicatedFlavor-{d.flavor}", api_version=KUEUE_API, kind="ResourceFlavor",
                       name=d.flavor,
                       body={"spec": dedicated_flavor_spec(d, topology_for(
                           d.instance_type, accelerated.get(d.instance_type, False), plan.topology))})
        for pc in plan.priority_classes:
            api_object(
                self, f"Priority-{pc.name}", api_version=KUEUE_API, kind="WorkloadPriorityClass",
                name=pc.kueue_name, body={"value": pc.weight, "description": f"{pc.name} (weight {pc.weight})"},
            )
        if plan.shared_pool is not None:
            cluster_queue(self, plan, plan.shared_pool)


def cluster_queue(scope: Construct, plan: Plan, team: TeamPlan) -> None:
    api_object(
        scope, f"ClusterQueue-{team.name}", api_version=KUEUE_API, kind="ClusterQueue",
        name=team.cluster_queue, body={"spec": plan.cluster_queue_spec(team)},
    )


def local_queue(scope: Construct, team: TeamPlan) -> None:
    api_object(
        scope, "LocalQueue", api_version=KUEUE_API, kind="LocalQueue", name=team.local_queue,
        namespace=team.namespace, body={"spec": {"clusterQueue": team.cluster_queue}},
    )
