"""The extra cluster-wide Kubernetes objects of a fleet's members, by cluster name (plain data, no CDK): what
``fleet_construct.fleet_manifests`` adds to each member's manifests for the synth and ``fleet_live`` compares in
its drift, one function for both."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..plan.fleet import FleetPlan


def fleet_cluster_objects(fleet: "FleetPlan") -> dict[str, list[dict[str, Any]]]:
    """The extra cluster-wide Kubernetes objects of each member, by cluster name: with ``fleet.dispatch``, the
    MultiKueue objects (docs/fleet.md). The manager gets its MultiKueueClusters, MultiKueueConfig, AdmissionCheck,
    fleet ClusterQueues and LocalQueues; each worker its mirrored LocalQueues and MultiKueue service account
    (``plan.multikueue.multikueue_plans``, ``charts.multikueue.multikueue_objects``), then the worker credential's
    Roles (``charts.multikueue_credential``). The fleet rules have checked what those need (kueue mode, the manager
    not a worker, at most 20 workers). Without dispatch: none."""
    from ..plan.multikueue import multikueue_plans
    from .multikueue import multikueue_objects
    from .multikueue_credential import fleet_credential_objects

    dispatch = fleet.fleet.dispatch
    if dispatch is None:
        return {}
    roles = multikueue_plans(fleet.plans, dispatch.manager, dispatch.workers)
    credentials = fleet_credential_objects(fleet)  # the worker credential's Roles (docs/fleet.md)
    return {cluster: [*multikueue_objects(fleet.plans[cluster], mk), *credentials.get(cluster, [])]
            for cluster, mk in roles.items()}
