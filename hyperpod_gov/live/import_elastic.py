"""What ``import`` writes of elastic capacity (issue 57): the cluster's autoscaling and provisioning, and a flexible
group's instance types.

DescribeCluster says whether HyperPod-managed Karpenter runs (``AutoScaling``), not which groups it scales: that is
held by the ``HyperpodNodeClass`` objects in Kubernetes, which import does not read. So import writes
``autoScaling`` and leaves each group's ``autoscale`` to the reader, with a comment on every group.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from ..plan.fields import imported
from ..plan.tables import CLUSTER, INSTANCE_GROUP
from .read import LiveCluster

AUTOSCALE_NOTE = ("      # autoscale: not written: which groups Karpenter scales is held by the HyperpodNodeClass "
                  "objects in Kubernetes, which import does not read; on such a group set autoscale: true and count "
                  "to the NodePool's limit (count above is the group's target now)")


def autoscaling_enabled(cluster: LiveCluster) -> bool:
    return imported(CLUSTER, cluster.raw).get("autoScaling") == "karpenter"


def elastic_cluster_lines(cluster: LiveCluster, scalar: Callable[[Any], str]) -> list[str]:
    """``nodeRecovery`` (where not the service's default), ``nodeProvisioningMode`` and ``autoScaling``, from the
    cluster table's rows: autoscaling needs the other two (HPG-K001), so they come together."""
    values = imported(CLUSTER, cluster.raw)
    default = CLUSTER.row("NodeRecovery").default
    out = []
    if values.get("nodeRecovery", default) != default:
        out.append(f"  nodeRecovery: {scalar(values['nodeRecovery'])}")
    if "nodeProvisioningMode" in values:
        out.append(f"  nodeProvisioningMode: {scalar(values['nodeProvisioningMode'])}")
    if "autoScaling" in values:
        out.append(f"  autoScaling: {scalar(values['autoScaling'])}  # HyperPod-managed Karpenter (AutoScaling Mode "
                   "Enable); which groups it scales DescribeCluster does not say: see each group")
    return out


def type_line(group: Mapping[str, Any], values: Mapping[str, Any], scalar: Callable[[Any], str]) -> str:
    """``instanceTypes: [...]`` for a flexible group (InstanceRequirements' desired types, in order of preference),
    else ``instanceType``. The table maps flat values only, so the list is written here from the row's live
    member."""
    row = INSTANCE_GROUP.row("InstanceRequirements.InstanceTypes")
    assert row.live_member is not None
    types = row.live_member(group)[1]
    if types:
        return f"      instanceTypes: [{', '.join(scalar(t) for t in types)}]"
    return f"      instanceType: {scalar(values.get('instanceType', ''))}"
