"""A capacity move between two clusters of a fleet (``fleet.moves``): N running nodes of one instance group move to
an instance group of another cluster with SageMaker's ``MoveClusterNodes`` (same account and region, both EKS with
``nodeProvisioningMode: Continuous``; at most 50 nodes per call).

The spec is the state after the move: both groups' ``count`` already show it (the source's lowered by N, the
target's raised by N), and the move entry is the reviewed explanation of the two changes. The operator runs the
move (``explain`` prints the exact command), deploys, and then removes the entry. The checks are rule HPG-F011
(``plan.fleet_moves``).
"""

from __future__ import annotations

from pydantic import Field

from ._base import SpecModel

MAX_MOVE = 50  # MoveClusterNodesRequest.InstanceCount: 1..50 (botocore sagemaker 2017-07-24)


class MoveEnd(SpecModel):
    """One side of a move: a cluster of the fleet and one of its instance groups."""

    cluster: str = Field(description="A cluster of the fleet (clusters[].name).")
    instance_group: str = Field(description="One of that cluster's cluster.instanceGroups[].name.")


class Move(SpecModel):
    """N running nodes moved from one instance group to another (MoveClusterNodes with InstanceCount)."""

    from_: MoveEnd = Field(alias="from", description="Where the nodes run now: {cluster, instanceGroup}.")
    to: MoveEnd = Field(description="Where they go: {cluster, instanceGroup} (same account and region).")
    count: int = Field(ge=1, le=MAX_MOVE, description=f"How many nodes move: 1 to {MAX_MOVE} (MoveClusterNodes' "
                       "InstanceCount). The spec's counts already show the move: the source group's count is its "
                       "count before minus this, the target's its count before plus this.")
