"""HyperPod-managed Karpenter (``cluster.autoScaling: karpenter``): per autoscaled instance group a
``HyperpodNodeClass`` naming the group and a ``NodePool`` that provisions from it.

AWS's pages this follows (SageMaker Developer Guide, https://docs.aws.amazon.com/sagemaker/latest/dg/):
``sagemaker-hyperpod-eks-autoscaling-nodeclass.html`` (the NodeClass: ``spec.instanceGroups``, at most 10 names),
``sagemaker-hyperpod-eks-autoscaling-nodepool.html`` (the NodePool: ``nodeClassRef``, ``expireAfter: Never``, the
requirement keys HyperPod supports) and ``sagemaker-hyperpod-spot.html`` (``consolidateAfter``).

When they are applied: with the other cluster-wide objects (``render``), which the governance stack applies after
the capacity stack, so after the HyperPod cluster (``CfnCluster``) exists. AWS: AutoScaling must be ``InService``
before a ``HyperpodNodeClass`` is applied (the service installs its CRD); the ``CfnCluster`` completes when the
cluster is ``InService``. That AutoScaling is ``InService`` by then too is not documented (UNCONFIRMED); if it were
not, the apply fails and CloudFormation rolls the governance stack back, and a redeploy applies them.

Names: the NodeClass and the NodePool are named after the group (a DNS-1123 label, unique among the groups), so
``kubectl get nodepool gpu-elastic`` finds the group's pool; the two kinds are distinct, so the names do not clash.
"""

from __future__ import annotations

from typing import Any, Optional

from constructs import Construct

from ..catalog import Catalog
from ..plan import InstanceGroupPlan, Plan, TeamPlan
from ._objects import api_object

NODE_CLASS_GROUP = "karpenter.sagemaker.amazonaws.com"
NODE_CLASS_API = f"{NODE_CLASS_GROUP}/v1"
NODE_CLASS_KIND = "HyperpodNodeClass"
NODE_POOL_API = "karpenter.sh/v1"
NODE_POOL_KIND = "NodePool"

INSTANCE_TYPE_KEY = "node.kubernetes.io/instance-type"
ARCH_KEY = "kubernetes.io/arch"
ARCHITECTURES = ("amd64",)  # AWS: "Only amd64 (no ARM support currently)"

# AWS (Spot page): with consolidateAfter 0 "consolidation can happen immediately ... Set it to non zero upto 2 min to
# allow graceful pod eviction". The top of that range: a node Kueue has just emptied gets two minutes for the next
# admitted workload (Kueue admits within seconds) before Karpenter may remove it, so a queue of jobs does not pay a
# GPU node's replacement (minutes of HyperPod provisioning) between two of its jobs.
CONSOLIDATE_AFTER = "2m"
# At most a tenth of a pool's nodes disrupted at once (Karpenter rounds up: always at least one). Upstream's default,
# stated so that HyperPod's own default (its sample shows 90%) does not apply.
DISRUPTION_BUDGETS = ({"nodes": "10%"},)
# HyperPod replaces unhealthy nodes itself (node recovery) and patches them in place; an expiry would only recycle
# healthy GPU nodes with the work on them. AWS's sample NodePool sets Never as well.
EXPIRE_AFTER = "Never"
WHEN_EMPTY = "WhenEmpty"
WHEN_EMPTY_OR_UNDERUTILIZED = "WhenEmptyOrUnderutilized"


def dont_lend_types(teams: tuple[TeamPlan, ...]) -> frozenset[str]:
    """Instance types on which a DontLend team holds quota: its reserved capacity, which it never lends."""
    return frozenset(f.instance_type for t in teams if t.strategy == "DontLend"
                     for f in t.flavors if f.given is not None)


def consolidation_policy(group: InstanceGroupPlan, dont_lend: frozenset[str]) -> str:
    """WhenEmpty for a group whose types carry a DontLend team's quota: consolidating an underutilized node evicts
    the pods on it to pack them onto fewer nodes, and that team's admitted work must run undisturbed on the capacity
    it keeps to itself; a node is removed only once nothing runs on it. WhenEmptyOrUnderutilized otherwise."""
    return WHEN_EMPTY if dont_lend.intersection(group.types) else WHEN_EMPTY_OR_UNDERUTILIZED


def node_limits(group: InstanceGroupPlan, catalog: Catalog) -> dict[str, str]:
    """``spec.limits``: ``count`` times what one instance brings, in cpu, memory and the accelerator resource.

    Karpenter launches a node only while the pool's nodes plus the new one stay within every limit, so this bounds
    the group at ``count`` nodes of its largest type. A flexible group takes, per resource, the largest value among
    its types: ``count`` nodes of any of its types fit, and of a smaller type more could (a limit bounds resources,
    not nodes; Karpenter v1.6 has no node-count limit); the group's InstanceCount bound is HyperPod's, not this.
    A partitioned (MIG) group's nodes report MIG resources instead of whole GPUs: cpu and memory bound it then.
    """
    facts = [catalog.lookup(t) for t in group.types]
    out = {"cpu": str(group.count * max(f.vcpu for f in facts)),
           "memory": f"{group.count * max(f.memory_gib for f in facts)}Gi"}
    for kind in sorted({f.accelerator_kind for f in facts if f.accelerator_kind is not None}):
        out[kind] = str(group.count * max(f.accelerators for f in facts if f.accelerator_kind == kind))
    return out


def requirements(group: InstanceGroupPlan) -> list[dict[str, Any]]:
    """The group's instance types (its ``ml.`` names, in the spec's order of preference) and amd64.

    No ``topology.kubernetes.io/zone``: the group's zone is not known at synth (its subnets are the cluster's,
    across its zones, or OverrideVpcConfig subnet ids whose zones need a lookup, and the plan's zone names may be
    the region's letters in order), and a zone the group is not in would leave the pool unable to launch anything;
    the NodeClass's status lists the zones of the group's subnets. No ``karpenter.sh/capacity-type`` either: the
    group's capacity (Spot or On-Demand) is its CapacityRequirements, and HyperPod documents no such requirement.
    """
    return [
        {"key": INSTANCE_TYPE_KEY, "operator": "In", "values": list(group.types)},
        {"key": ARCH_KEY, "operator": "In", "values": list(ARCHITECTURES)},
    ]


def taints(group: InstanceGroupPlan) -> list[dict[str, str]]:
    """The group's taints (the spec's and a dedicated group's), as node taints."""
    return [{"key": t.key, **({"value": t.value} if t.value is not None else {}), "effect": t.effect}
            for t in group.taints]


def node_class_spec(group: InstanceGroupPlan) -> dict[str, Any]:
    return {"instanceGroups": [group.name]}


def node_pool_spec(group: InstanceGroupPlan, *, catalog: Catalog, dont_lend: frozenset[str]) -> dict[str, Any]:
    """The NodePool of an autoscaled group.

    The template carries the group's labels (the spec's, MIG's and the dedicated label) and taints, which HyperPod
    puts on the group's nodes: Karpenter decides from the template whether a node of this pool would take a pending
    pod, so a pod that selects the dedicated label or the MIG configuration gets a node from this pool, and a pod
    that does not tolerate the group's taints gets none.
    """
    template_spec: dict[str, Any] = {
        "nodeClassRef": {"group": NODE_CLASS_GROUP, "kind": NODE_CLASS_KIND, "name": group.name},
        "requirements": requirements(group),
        "expireAfter": EXPIRE_AFTER,
    }
    if group.taints:
        template_spec["taints"] = taints(group)
    template: dict[str, Any] = {"spec": template_spec}
    labels = group.kubernetes_labels
    if labels:
        template = {"metadata": {"labels": labels}, **template}
    return {
        "template": template,
        "disruption": {
            "consolidationPolicy": consolidation_policy(group, dont_lend),
            "consolidateAfter": CONSOLIDATE_AFTER,
            "budgets": [dict(b) for b in DISRUPTION_BUDGETS],
        },
        "limits": node_limits(group, catalog),
    }


def autoscaled_groups(plan: Plan) -> tuple[InstanceGroupPlan, ...]:
    """The groups Karpenter scales, sorted by name (the plan's order)."""
    return tuple(g for g in plan.instance_groups if g.autoscaled)


class KarpenterObjects(Construct):
    """Per autoscaled group, its HyperpodNodeClass then its NodePool (cluster-scoped objects)."""

    def __init__(self, scope: Construct, id: str, *, plan: Plan) -> None:
        super().__init__(scope, id)
        dont_lend = dont_lend_types(plan.teams)
        for group in autoscaled_groups(plan):
            api_object(self, f"NodeClass-{group.name}", api_version=NODE_CLASS_API, kind=NODE_CLASS_KIND,
                       name=group.name, body={"spec": node_class_spec(group)})
            api_object(self, f"NodePool-{group.name}", api_version=NODE_POOL_API, kind=NODE_POOL_KIND,
                       name=group.name,
                       body={"spec": node_pool_spec(group, catalog=plan.catalog, dont_lend=dont_lend)})


def karpenter_objects(scope: Construct, *, plan: Plan) -> Optional[KarpenterObjects]:
    """The objects, when some group autoscales; nothing (None) otherwise."""
    if not autoscaled_groups(plan):
        return None
    return KarpenterObjects(scope, "karpenter", plan=plan)
