"""HPG-K: elastic capacity (issue 57): HyperPod-managed Karpenter, minimum counts, Spot, flexible instance groups and
the node image's lifecycle.

AWS facts the rules rest on (SageMaker Developer Guide, "DG"): autoscaling needs continuous provisioning and
automatic node recovery (DG sagemaker-hyperpod-eks-autoscaling, Prerequisites); an autoscaled group starts at 0
instances and runs no deep health checks, and groups on a training plan or reserved capacity are not supported (DG
sagemaker-hyperpod-eks-autoscaling-nodeclass); MinInstanceCount only gates the group's first InService and keeps no
floor (botocore's CreateCluster documentation); ImageReleaseVersion, automatic patching and batch updates are for
EKS-orchestrated clusters only (DG sagemaker-hyperpod-ami-update, sagemaker-hyperpod-ami-auto-patching, CloudFormation's
ImageReleaseVersion documentation). Where AWS says nothing (Spot on a training plan; one accelerator across a
flexible group's types) the message says that the basis is hyperpod-gov's own.

The rules on quotas over elastic capacity (HPG-K007 to HPG-K010) are in ``elastic_quotas``. The service fields the
elastic keys set are in ``spec.cluster_options`` (GROUP_OPTIONS, CLUSTER_OPTIONS): every
region HPG-R001 admits has them, which HPG-D002's test holds to cfn-lint's schemas and botocore's model.
"""

from __future__ import annotations

import datetime as dt
from typing import Iterator

from ... import catalog
from ..cluster import InstanceGroup
from ..errors import NO_VALUE, SpecIssue
from ..instance_types import spec_catalog
from ..models import GovernanceSpec
from ..rulebook import rule
from ._common import _slurm

ENABLE_ON_A_RUNNING_CLUSTER = (
    "`aws sagemaker update-cluster --cluster-name NAME --auto-scaling Mode=Enable,AutoScalerType=Karpenter "
    "--cluster-role ROLE_ARN` (AWS documents it for a cluster in continuous provisioning mode: DG "
    "sagemaker-hyperpod-eks-autoscaling-cluster)")


def _group_path(gi: int) -> str:
    return f"cluster.instanceGroups[{gi}]"


def _autoscaled(spec: GovernanceSpec) -> Iterator[tuple[int, InstanceGroup]]:
    for gi, g in enumerate(spec.cluster.instance_groups):
        if g.autoscale:
            yield gi, g


@rule("HPG-K001", "error", "cluster.autoScaling needs nodeProvisioningMode: Continuous and nodeRecovery: Automatic "
      "(AWS's prerequisites for HyperPod-managed Karpenter).")
def autoscaling_has_its_prerequisites(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    c = spec.cluster
    if c.auto_scaling is None:
        return
    if c.node_provisioning_mode != "Continuous":
        yield SpecIssue("cluster.nodeProvisioningMode", "is not Continuous, and HyperPod-managed Karpenter needs "
                        "continuous provisioning (AWS: autoscaling prerequisites)", NO_VALUE,
                        "set cluster.nodeProvisioningMode: Continuous, or remove cluster.autoScaling")
    if c.node_recovery != "Automatic":
        yield SpecIssue("cluster.nodeRecovery", "is not Automatic, and HyperPod-managed Karpenter needs automatic node "
                        "recovery (AWS: autoscaling prerequisites)", c.node_recovery,
                        "set cluster.nodeRecovery: Automatic, or remove cluster.autoScaling")


@rule("HPG-K002", "error", "Autoscaling (cluster.autoScaling, instanceGroups[].autoscale) is for a new EKS-orchestrated "
      "cluster, and a group with autoscale: true needs cluster.autoScaling.")
def autoscaling_is_on_a_new_eks_cluster(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    c = spec.cluster
    if _slurm(spec):
        why = ("HyperPod-managed Karpenter scales EKS-orchestrated clusters (its NodePools and HyperpodNodeClass are "
               "Kubernetes objects); a Slurm cluster has none")
        fix = ("remove it; on Slurm, set count to the nodes the partition needs (continuous provisioning keeps adding "
               "missing ones)")
        if c.auto_scaling is not None:
            yield SpecIssue("cluster.autoScaling", why, c.auto_scaling, fix)
        for gi, _ in _autoscaled(spec):
            yield SpecIssue(f"{_group_path(gi)}.autoscale", why, True, fix)
        return
    if c.existing is not None:
        why = "turns autoscaling on for a cluster hyperpod-gov governs but did not create (cluster.existing)"
        fix = (f"enable it where the cluster is managed: {ENABLE_ON_A_RUNNING_CLUSTER}; then remove this key")
        if c.auto_scaling is not None:
            yield SpecIssue("cluster.autoScaling", why, c.auto_scaling, fix)
        for gi, _ in _autoscaled(spec):
            yield SpecIssue(f"{_group_path(gi)}.autoscale", "asks for an autoscaled group on a cluster hyperpod-gov "
                            "did not create (cluster.existing)", True, fix)
        return
    if c.auto_scaling is None:
        for gi, _ in _autoscaled(spec):
            yield SpecIssue(f"{_group_path(gi)}.autoscale", "asks Karpenter to scale the group, and the cluster has no "
                            "autoscaler (cluster.autoScaling)", True,
                            "set cluster.autoScaling: karpenter (with nodeProvisioningMode: Continuous), or remove "
                            "autoscale to run count instances")


@rule("HPG-K012", "warning", "cluster.autoScaling with no group that autoscales creates the autoscaler and its "
      "ClusterRole for nothing.")
def autoscaling_has_a_group(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    c = spec.cluster
    if c.auto_scaling is not None and not _slurm(spec) and c.existing is None and not any(_autoscaled(spec)):
        yield SpecIssue("cluster.autoScaling", "is set, and no instance group has autoscale: true, so Karpenter scales "
                        "nothing (every group runs its count) while its ClusterRole may add and remove nodes",
                        c.auto_scaling,
                        "set autoscale: true on the groups Karpenter should scale, or remove cluster.autoScaling")


@rule("HPG-K003", "error", "An autoscaled group has no minCount: AWS starts it at InstanceCount 0, MinInstanceCount "
      "must be at most InstanceCount, and it is no floor that Karpenter keeps.")
def autoscaled_groups_have_no_min_count(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    for gi, g in _autoscaled(spec):
        if g.min_count is not None:
            yield SpecIssue(
                f"{_group_path(gi)}.minCount", "is set on an autoscaled group, which starts at InstanceCount 0 (AWS: "
                "Karpenter scales a group that starts above 0 down to 0); MinInstanceCount must be at most "
                "InstanceCount, and it only gates the group's first InService, it is no floor Karpenter keeps",
                g.min_count,
                f"remove minCount; to keep {g.min_count} nodes, put them in a group without autoscale (count: "
                f"{g.min_count}) and let this group add the rest")


@rule("HPG-K004", "error", "A group on a training plan neither autoscales (AWS: unsupported) nor runs on Spot (a "
      "training plan is reserved capacity).")
def training_plan_groups_are_reserved(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    for gi, g in enumerate(spec.cluster.instance_groups):
        if g.training_plan_arn is None:
            continue
        if g.autoscale:
            yield SpecIssue(f"{_group_path(gi)}.autoscale", "asks Karpenter to scale a group on a training plan, which "
                            "AWS does not support (DG: instance groups with a training plan or reserved capacity "
                            "are not supported in a HyperpodNodeClass)", True,
                            "remove autoscale (the plan's reserved instances run as count), or move the plan to a "
                            "group that does not autoscale")
        if g.capacity == "spot":
            yield SpecIssue(f"{_group_path(gi)}.capacity", "asks for Spot capacity on a training plan: the plan "
                            "reserves its instances for the group, Spot is what EC2 has spare (AWS documents no "
                            "combination of the two; hyperpod-gov refuses it rather than guess which one applies)",
                            "spot", "remove capacity (on-demand), or remove trainingPlanArn for a Spot group")


@rule("HPG-K005", "error", "An autoscaled group names no deep health checks (AWS: groups with deep health checks "
      "are not supported by HyperPod-managed Karpenter).")
def autoscaled_groups_run_no_deep_health_checks(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    for gi, g in _autoscaled(spec):
        if g.deep_health_checks:
            yield SpecIssue(
                f"{_group_path(gi)}.deepHealthChecks", "names deep health checks on an autoscaled group, which AWS "
                "does not support (they take an hour or more, and Karpenter would add nodes meanwhile)",
                list(g.deep_health_checks),
                "remove deepHealthChecks (an autoscaled group runs none), or run them on a group without autoscale")


@rule("HPG-K006", "error", "A flexible group's types share one accelerator kind and count per instance, and the "
      "group has no MIG layout (a quota on one of its types must hold whichever type HyperPod launches).")
def flexible_groups_share_an_accelerator(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    cat = spec_catalog(spec)
    for gi, g in enumerate(spec.cluster.instance_groups):
        if not g.flexible:
            continue
        if g.mig is not None:
            yield SpecIssue(f"{_group_path(gi)}.mig", "partitions a flexible group's GPUs, and a MIG layout is per "
                            "instance type (the profiles differ between GPUs)", g.mig.profile,
                            "remove mig, or split the group into one group per type")
        first = cat.get(g.instance_types[0])
        if first is None:
            continue  # HPG-I003 reports the type
        for ki, itype in enumerate(g.instance_types[1:], start=1):
            facts = cat.get(itype)
            if facts is None:
                continue
            if (facts.accelerator_kind, facts.accelerators) != (first.accelerator_kind, first.accelerators):
                yield SpecIssue(
                    f"{_group_path(gi)}.instanceTypes[{ki}]",
                    f"brings {_accelerators(facts)} per instance, and the group's first type {first.name} brings "
                    f"{_accelerators(first)}: a quota on one type of the group would hold a different amount "
                    "depending on which type HyperPod launches (hyperpod-gov's rule: AWS does not require it)",
                    itype, f"list only types with {_accelerators(first)} in this group, or give {itype} a group of its "
                    "own")


def _accelerators(facts: catalog.InstanceType) -> str:
    if not facts.accelerators:
        return "no accelerators"
    return f"{facts.accelerators} x {facts.accelerator_kind}"


@rule("HPG-K011", "error", "On a Slurm cluster no group sets image.releaseVersion, patching.auto or patching.batch "
      "(AWS: AMI release versions, automatic patching and batch updates are for EKS-orchestrated clusters).")
def slurm_refuses_eks_only_patching(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    if not _slurm(spec):
        return
    for gi, g in enumerate(spec.cluster.instance_groups):
        path = _group_path(gi)
        if g.image is not None:
            yield SpecIssue(f"{path}.image.releaseVersion", "pins a HyperPod AMI release, which AWS supports for "
                            "EKS-orchestrated clusters only (ImageReleaseVersion)", g.image.release_version,
                            "remove image, or give imageId (an AMI id, or default)")
        if g.patching is not None and g.patching.auto is not None:
            yield SpecIssue(f"{path}.patching.auto", "turns on automatic patching, which AWS offers for EKS clusters "
                            "only (AutoPatchConfig)", g.patching.auto,
                            "remove auto and schedule updates with patching.start or patching.schedule")
        if g.patching is not None and g.patching.batch is not None:
            yield SpecIssue(f"{path}.patching.batch", "updates the nodes in batches, which AWS offers for EKS clusters "
                            "only (RollingUpdatePolicy)", g.patching.batch.model_dump(by_alias=True, exclude_none=True),
                            "remove batch: a Slurm group's nodes are updated together")


# Label domains the NodePool CRD (Karpenter v1.6.0, tests/karpenter-crds) refuses on the nodes it creates, with the
# labels it allows in them.
RESTRICTED_DOMAINS = ("kubernetes.io", "k8s.io", "karpenter.sh")
ALLOWED_RESTRICTED = ("node.kubernetes.io", "node-restriction.kubernetes.io", "kops.k8s.io")


@rule("HPG-K014", "error", "An autoscaled group's labels avoid the domains the NodePool refuses (kubernetes.io, k8s.io "
      "and karpenter.sh, but node.kubernetes.io and node-restriction.kubernetes.io): the group's labels go onto its "
      "NodePool's nodes.")
def autoscaled_labels_fit_the_node_pool(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    for gi, g in _autoscaled(spec):
        for key in g.labels:
            domain = key.split("/", 1)[0] if "/" in key else ""
            if domain.endswith(RESTRICTED_DOMAINS) and not domain.endswith(ALLOWED_RESTRICTED):
                yield SpecIssue(f"{_group_path(gi)}.labels", f"uses the label domain {domain}, which Karpenter's "
                                "NodePool refuses on the nodes it creates (the apply would fail)", key,
                                "use a domain of your own, e.g. example.com/pool, or node.kubernetes.io/...")


@rule("HPG-K015", "warning", "A cluster hyperpod-gov creates with cluster.autoScaling installs the health-monitoring "
      "agent first (cluster.dependenciesChart): AWS requires agent 1.0.742.0_1.0.241.0 or later before autoscaling is "
      "enabled, and without the chart none runs unless installed another way (preflight checks an existing "
      "cluster's; acknowledge with the way it is installed).")
def autoscaling_has_the_health_agent(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    c = spec.cluster
    if c.auto_scaling is not None and c.existing is None and not _slurm(spec) and c.dependencies_chart is None:
        yield SpecIssue("cluster.dependenciesChart", "is not set, and autoscaling needs the health-monitoring agent "
                        "it installs (AWS: version 1.0.742.0_1.0.241.0 or later, configured before Karpenter "
                        "autoscaling is enabled)", NO_VALUE,
                        "set cluster.dependenciesChart to the HyperPod dependencies chart (helm_chart/HyperPodHelmChart "
                        "of github.com/aws/sagemaker-hyperpod-cli, mirrored where the cluster can reach it), install the "
                        "agent another way and acknowledge HPG-K015, or remove cluster.autoScaling")
