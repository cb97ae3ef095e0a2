"""HPG-D: what the cluster depends on to deploy and run: the dependencies chart, an existing cluster's keys, the
operators, shared storage.

HPG-D002 and HPG-D003 (options CloudFormation accepts, training plans) live in ``spec.cluster_options``.
"""

from __future__ import annotations

import datetime as dt
from typing import Iterator

from .._base import SpecModel
from ..addons import INFERENCE_NOT_PROVISIONED, TRAINING_OPERATOR_KUBERNETES
from ..errors import NO_VALUE, SpecIssue
from ..models import GovernanceSpec
from ..rulebook import rule
from ._common import _repeats


# The id of the CDK warning the cluster construct adds when the dependencies chart is missing
# (constructs/hyperpod_cluster.py; a test keeps the two in step): HPG-D001 reports it at validate.
CDK_WARN_NO_DEPENDENCIES_CHART = "hyperpod-gov:dependenciesChartMissing"


@rule("HPG-D001", "warning", "cluster.dependenciesChart is set: without the HyperPod dependencies chart, HyperPod "
      "cannot detect and replace faulty nodes.", covers=(CDK_WARN_NO_DEPENDENCIES_CHART,))
def dependencies_chart_is_set(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    c = spec.cluster
    if c.dependencies_chart is None and c.existing is None and c.orchestrator == "eks":
        yield SpecIssue(
            "cluster.dependenciesChart", "is not set, so the HyperPod dependencies Helm chart (health-monitoring "
            "agent, deep health checks, device plugins for GPUs, Neuron and EFA) is not installed before the "
            "cluster: HyperPod cannot detect and replace faulty nodes, and no device plugin offers the nodes' GPUs, "
            "Neuron devices or EFA to pods unless they are installed another way",
            NO_VALUE, "set it to the chart of the sagemaker-hyperpod-cli repository (helm_chart/HyperPodHelmChart, "
            "github.com/aws/sagemaker-hyperpod-cli), mirrored where the cluster can reach it: {repository, chart, "
            "version}, {oci, version} or a local {directory}",
        )


# Keys of `cluster` that only shape a cluster hyperpod-gov creates, and why they cannot apply to an existing one.
CREATED_CLUSTER_ONLY = (
    ("endpointAccess", "endpoint_access", "the existing EKS cluster's endpoint stays as it is"),
    ("adminCidrs", "admin_cidrs", "the existing EKS cluster's endpoint stays as it is"),
    # cluster.existing.securityGroupId is the kubectl handler's group, which need not be the EKS cluster security
    # group (the spec does not name that one, and synth looks nothing up): ingress on it would admit the networks
    # to the wrong group, or widen the handler's.
    ("apiAccess", "api_access", "the spec does not name the existing EKS cluster's security group "
     "(existing.securityGroupId is the kubectl handler's); admit networks where that cluster is managed"),
    ("authenticationMode", "authentication_mode", "the existing EKS cluster keeps its authentication mode (preflight "
     "checks that it is API or API_AND_CONFIG_MAP)"),
    ("dependenciesChart", "dependencies_chart", "the chart is installed before a HyperPod cluster is created"),
    ("admins", "admins", "the existing cluster's administrators have their access entries already; a second entry "
     "for the same principal fails the deploy"),
)


UNOWNED_ADDONS = (("vpcCni", "vpc_cni"), ("coredns", "coredns"), ("kubeProxy", "kube_proxy"),
                  ("podIdentityAgent", "pod_identity_agent"))


@rule("HPG-D004", "error", "With cluster.existing, the spec sets no key that only shapes a cluster hyperpod-gov "
      "creates, pins only the add-ons it installs, and gives the existing VPC's CIDR.")
def existing_cluster_keys(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    c = spec.cluster
    e = c.existing
    if e is None:
        return
    for key, attr, why in CREATED_CLUSTER_ONLY:
        if attr in c.model_fields_set:
            value = getattr(c, attr)
            if isinstance(value, SpecModel):  # shown as the spec writes it, not as a Python object
                value = value.model_dump(by_alias=True, exclude_unset=True)
            yield SpecIssue(f"cluster.{key}", f"only applies to a cluster hyperpod-gov creates: {why}",
                            value, f"remove cluster.{key} (or remove cluster.existing)")
    for key, attr in (("availabilityZones", "availability_zones"), ("maxAzs", "max_azs"), ("vpcId", "vpc_id"),
                      ("privateSubnetIds", "private_subnet_ids"), ("createEndpoints", "create_endpoints"),
                      ("createFlowLogs", "create_flow_logs")):
        if attr in c.vpc.model_fields_set:
            yield SpecIssue(f"cluster.vpc.{key}", "only shapes a VPC hyperpod-gov creates or builds on",
                            getattr(c.vpc, attr),
                            f"remove cluster.vpc.{key}; with existing, the VPC and subnets are cluster.existing's "
                            "and cluster.vpc holds only the VPC's cidr")
    if "vpc" not in c.model_fields_set or "cidr" not in c.vpc.model_fields_set:
        yield SpecIssue("cluster.vpc.cidr", f"is not given: the teams' NetworkPolicies allow HTTPS to the VPC's "
                        f"CIDR, and the default would name another network than {e.vpc_id}'s", NO_VALUE,
                        f"set cluster.vpc: {{cidr: ...}} to the CIDR of {e.vpc_id} (`aws ec2 describe-vpcs "
                        f"--vpc-ids {e.vpc_id}`)")
    versions = c.addon_versions
    for key, attr in UNOWNED_ADDONS:
        if attr in versions.model_fields_set:
            yield SpecIssue(f"cluster.addonVersions.{key}", "pins an add-on of the existing cluster, which "
                            "hyperpod-gov does not install there", getattr(versions, attr),
                            f"remove cluster.addonVersions.{key}; upgrade it where the cluster is managed")
    owned = {"cloudwatch_observability": ("cloudwatchObservability", e.installs.observability,
                                          "installs.observability"),
             "task_governance": ("taskGovernance", e.installs.scheduler and spec.scheduler.mode == "task-governance",
                                 "installs.scheduler (task-governance mode)"),
             "kueue_chart": ("kueueChart", e.installs.scheduler and spec.scheduler.mode == "kueue",
                             "installs.scheduler (kueue mode)")}
    for attr, (key, installed, when) in owned.items():
        if attr in versions.model_fields_set and not installed:
            yield SpecIssue(f"cluster.addonVersions.{key}", f"pins what hyperpod-gov installs only with "
                            f"cluster.existing.{when}", getattr(versions, attr),
                            f"remove cluster.addonVersions.{key}, or set cluster.existing.{when.split(' ')[0]}: true")


# --- cluster.operators (docs/operators.md) ------------------------------------------------------------------
OPERATOR_VERSION_KEYS = (("trainingOperator", "training_operator"), ("certManager", "cert_manager"),
                         ("spaces", "spaces"), ("ebsCsiDriver", "ebs_csi_driver"),
                         ("inferenceOperator", "inference_operator"),
                         ("mountpointS3CsiDriver", "mountpoint_s3_csi_driver"), ("fsxCsiDriver", "fsx_csi_driver"),
                         ("metricsServer", "metrics_server"), ("kuberayChart", "kuberay_chart"))


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in version.lstrip("v").split("-")[0].split("."))


@rule("HPG-D005", "error", "cluster.operators names each operator once and only operators this release installs "
      "(inference only on a cluster hyperpod-gov creates: its OIDC provider, CSI drivers and subnet tags), with a "
      "task-governance add-on the training operator works with (v1.3.0 or later); with cluster.existing, operator "
      "add-on versions are pinned only when cluster.operators lists what to install.")
def operators_are_installable(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    c = spec.cluster
    listed = c.existing is None or "operators" in c.model_fields_set
    yield from _repeats(list(c.operators), lambda i: f"cluster.operators[{i}]", "names an operator twice",
                        "list each operator once")
    for i, operator in enumerate(c.operators):
        if operator == "inference" and c.existing is not None:
            yield SpecIssue(f"cluster.operators[{i}]", "the HyperPod inference add-on on an existing cluster needs "
                            "what hyperpod-gov provisions only on a cluster it creates: "
                            + "; ".join(INFERENCE_NOT_PROVISIONED), operator,
                            "remove inference from cluster.operators and install the inference operator as "
                            "docs/operators.md describes (the SageMaker console's quick install, or AWS's "
                            "prerequisite CloudFormation stack and `aws eks create-addon`)")
    if not listed:
        for key, attr in OPERATOR_VERSION_KEYS:
            if attr in c.addon_versions.model_fields_set:
                yield SpecIssue(f"cluster.addonVersions.{key}", "pins an operator add-on, but with cluster.existing "
                                "no operator is installed unless cluster.operators lists it",
                                getattr(c.addon_versions, attr),
                                f"list the operators to install in cluster.operators, or remove "
                                f"cluster.addonVersions.{key}")
        return
    if "training" in c.operators:
        tg = c.addon_versions.task_governance
        if spec.scheduler.mode == "task-governance" and _release(tg) < (1, 3, 0):
            yield SpecIssue("cluster.addonVersions.taskGovernance", "is older than v1.3.0-eksbuild.1, the oldest "
                            "task-governance add-on the HyperPod training operator works with", tg,
                            "use v1.3.0-eksbuild.1 or later (e.g. v1.6.0-eksbuild.1), or remove training from "
                            "cluster.operators")


@rule("HPG-D006", "warning", "The training operator runs on a Kubernetes version AWS lists for it (its add-on may "
      "not install on a newer one before AWS supports it).")
def training_operator_supports_the_kubernetes_version(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    c = spec.cluster
    listed = c.existing is None or "operators" in c.model_fields_set
    if listed and "training" in c.operators and c.kubernetes_version not in TRAINING_OPERATOR_KUBERNETES:
        yield SpecIssue("cluster.kubernetesVersion", "is not among the Kubernetes versions AWS lists for the HyperPod "
                        f"training operator ({', '.join(TRAINING_OPERATOR_KUBERNETES)})", c.kubernetes_version,
                        f"check `aws eks describe-addon-versions --addon-name amazon-sagemaker-hyperpod-training-"
                        f"operator --kubernetes-version {c.kubernetes_version}` and acknowledge HPG-D006, use "
                        f"{TRAINING_OPERATOR_KUBERNETES[-1]}, or remove training from cluster.operators")


@rule("HPG-D007", "error", "cluster.sharedStorage.fsxLustre creates a file system on a cluster hyperpod-gov "
      "creates, and names an existing one (fileSystemId, dnsName, mountName) with cluster.existing.")
def shared_storage_matches_the_cluster(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    storage = spec.cluster.shared_storage
    if storage is None:
        return
    fsx = storage.fsx_lustre
    if spec.cluster.existing is not None and fsx.creates:
        yield SpecIssue("cluster.sharedStorage.fsxLustre.storageCapacityGiB", "would create a file system for an "
                        "existing cluster, whose nodes' security group hyperpod-gov does not know",
                        fsx.storage_capacity_gib,
                        "name the existing file system instead: fileSystemId, dnsName and mountName")
    if spec.cluster.existing is None and not fsx.creates:
        yield SpecIssue("cluster.sharedStorage.fsxLustre.fileSystemId", "names an existing file system for a "
                        "cluster hyperpod-gov creates: its security group would not admit the new nodes",
                        fsx.file_system_id,
                        "let hyperpod-gov create it (storageCapacityGiB, deploymentType, perUnitStorageThroughput)")


@rule("HPG-D008", "error", "One aws-fsx-csi-driver add-on serves a cluster: with the inference operator and a "
      "created FSx for Lustre file system, both name the same driver version.")
def one_fsx_csi_driver(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    c = spec.cluster
    fsx = c.shared_storage.fsx_lustre if c.shared_storage is not None else None
    if fsx is None or c.existing is not None or "inference" not in c.operators:
        return
    wanted = c.addon_versions.fsx_csi_driver
    if fsx.csi_driver_version != wanted:
        yield SpecIssue("cluster.sharedStorage.fsxLustre.csiDriverVersion", "differs from "
                        f"cluster.addonVersions.fsxCsiDriver ({wanted}), the version the inference operator's FSx CSI "
                        "driver is installed at; EKS installs one aws-fsx-csi-driver per cluster",
                        fsx.csi_driver_version, f"give both the same version (e.g. {fsx.csi_driver_version})")
