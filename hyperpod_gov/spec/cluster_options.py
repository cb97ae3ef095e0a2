"""The service options of a new cluster and its instance groups, checked against the region's CloudFormation.

A new HyperPod cluster is an ``AWS::SageMaker::Cluster``. CloudFormation declares it only in some regions, and
its enums can lag the SageMaker API's (botocore's ``CreateCluster``): ``OnStartDeepHealthChecks`` takes
``MultiNodeTrainingValidation`` in the API but not in CloudFormation. The facts below are read off cfn-lint's
bundled provider schemas and botocore's ``sagemaker`` model; ``tests/spec/test_instance_group_options.py`` checks
them against both, so a new cfn-lint or botocore that changes them fails a test instead of a deploy.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
from pathlib import Path
from typing import Iterator

from .. import catalog
from ._base import sagemaker_regions
from .errors import SpecIssue
from .models import GovernanceSpec
from .rulebook import rule

# Regions whose CloudFormation has AWS::SageMaker::Cluster, with every member below (cfn-lint's schemas).
CLUSTER_REGIONS: frozenset[str] = frozenset({
    "ap-northeast-1", "ap-northeast-2", "ap-south-1", "ap-south-2", "ap-southeast-1", "ap-southeast-2",
    "ap-southeast-3", "ap-southeast-4", "ca-central-1", "eu-central-1", "eu-isoe-west-1", "eu-north-1",
    "eu-south-2", "eu-west-1", "eu-west-2", "eusc-de-east-1", "sa-east-1", "us-east-1", "us-east-2",
    "us-iso-east-1", "us-iso-west-1", "us-isob-east-1", "us-isob-west-1", "us-isof-east-1", "us-isof-south-1",
    "us-west-1", "us-west-2",
})
# Spec key of an instance group -> the ClusterInstanceGroup members it sets (CloudFormation and the API).
GROUP_OPTIONS: dict[str, tuple[str, ...]] = {
    "trainingPlanArn": ("TrainingPlanArn",),
    "subnetIds": ("OverrideVpcConfig",),
    "labels": ("KubernetesConfig",),
    "taints": ("KubernetesConfig",),
    "lifecycle": ("LifeCycleConfig",),
    "volumeKmsKeyId": ("InstanceStorageConfigs",),
    "deepHealthChecks": ("OnStartDeepHealthChecks",),
    "threadsPerCore": ("ThreadsPerCore",),
    # elastic capacity (issue 57)
    "minCount": ("MinInstanceCount",),
    "capacity": ("CapacityRequirements",),
    "instanceTypes": ("InstanceRequirements",),
    "imageId": ("ImageId",),
    "image": ("ImageReleaseVersion",),
    "patching": ("ScheduledUpdateConfig", "AutoPatchConfig"),
}
# Spec key of the cluster -> the AWS::SageMaker::Cluster properties (CreateCluster members) it sets: autoScaling
# sets the autoscaler and the role it assumes (ClusterRole, which hyperpod-gov creates).
CLUSTER_OPTIONS: dict[str, tuple[str, ...]] = {
    "nodeRecovery": ("NodeRecovery",),
    "nodeProvisioningMode": ("NodeProvisioningMode",),
    "autoScaling": ("AutoScaling", "ClusterRole"),
}


def members(options: dict[str, tuple[str, ...]]) -> frozenset[str]:
    """Every service member the spec keys of ``options`` set."""
    return frozenset(m for ms in options.values() for m in ms)


# The deep health checks CloudFormation accepts (DeepHealthCheckType); the API has MultiNodeTrainingValidation too.
CLOUDFORMATION_DEEP_HEALTH_CHECKS: frozenset[str] = frozenset({"InstanceStress", "InstanceConnectivity"})

@rule("HPG-D002", "error", "Every option value the spec sets is one CloudFormation's AWS::SageMaker::Cluster accepts "
      "(its deep health checks are fewer than the SageMaker API's); every option exists in every region HPG-R001 "
      "admits, the elastic-capacity ones included (MinInstanceCount, CapacityRequirements, InstanceRequirements, "
      "ImageId, ImageReleaseVersion, ScheduledUpdateConfig, AutoPatchConfig, AutoScaling, ClusterRole): a test checks "
      "GROUP_OPTIONS and CLUSTER_OPTIONS against cfn-lint's schemas of those regions and botocore's CreateCluster.")
def options_exist_in_the_regions_cloudformation(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    for gi, g in enumerate(spec.cluster.instance_groups):
        for ci, check in enumerate(g.deep_health_checks or ()):
            if check not in CLOUDFORMATION_DEEP_HEALTH_CHECKS:
                yield SpecIssue(
                    f"cluster.instanceGroups[{gi}].deepHealthChecks[{ci}]",
                    "is a deep health check of the SageMaker API that CloudFormation's AWS::SageMaker::Cluster does "
                    "not accept (OnStartDeepHealthChecks)", check,
                    f"use {' or '.join(sorted(CLOUDFORMATION_DEEP_HEALTH_CHECKS))}, and run {check} with "
                    "`aws sagemaker start-cluster-health-check` after the deploy",
                )


@rule("HPG-R001", "error", "The capacity region is in the aws partition (hyperpod-gov builds ARNs, endpoint service "
      "names and add-ons for it and is tested there), and a new cluster's region is one whose CloudFormation declares "
      "AWS::SageMaker::Cluster (cfn-lint's provider schemas); other regions are refused at validate, not at synth.")
def capacity_region_offers_hyperpod(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    region = spec.accounts.capacity.region
    partition = sagemaker_regions().get(region, "aws")
    offered = sorted(r for r in CLUSTER_REGIONS if sagemaker_regions().get(r) == "aws")
    if partition != "aws":
        yield SpecIssue(
            "accounts.capacity.region", f"is in the {partition} partition; hyperpod-gov builds and tests its stacks "
            "for the aws partition only (ARNs, endpoint service names, add-on availability)", region,
            f"use a region of the aws partition whose CloudFormation has AWS::SageMaker::Cluster: {', '.join(offered)}")
    elif spec.cluster.existing is None and region not in CLUSTER_REGIONS:
        yield SpecIssue(
            "accounts.capacity.region", "has no AWS::SageMaker::Cluster in its CloudFormation, so the new cluster "
            "cannot be declared there (synth would fail with F3006)", region,
            f"use one of {', '.join(offered)}, or govern a cluster created another way (cluster.existing)")


# Instance types AWS::SageMaker::Cluster takes per region: cfn-lint's regional data (rule E3644), copied whole;
# tests/spec/test_instance_group_options.py keeps the copy equal to the cfn-lint the project pins.
CLUSTER_INSTANCE_TYPES_FILE = Path(__file__).resolve().parent.parent / "assets" / "regions" / "cluster_instance_types.json"


@functools.lru_cache(maxsize=1)
def _cluster_instance_types() -> dict[str, object]:
    return json.loads(CLUSTER_INSTANCE_TYPES_FILE.read_text())


def cluster_instance_types(region: str) -> frozenset[str] | None:
    """The instance types a new cluster in ``region`` may use (None: no data for the region)."""
    types = _cluster_instance_types()["regions"].get(region)  # type: ignore[union-attr]
    return None if types is None else frozenset(types)


def instance_types_source() -> str:
    """Where ``cluster_instance_types`` comes from (the cfn-lint version), for messages and acknowledgements."""
    return str(_cluster_instance_types()["source"])


@rule("HPG-I006", "error", "Every instance group of a new cluster uses an instance type that AWS::SageMaker::Cluster "
      "offers in the capacity region (cfn-lint's current regional data, newer than the data CDK's built-in validator "
      "ships: where the two disagree, synth acknowledges that validator's E3644 with this rule as the reason); a type the "
      "spec declares itself (instanceTypes) is newer than both and is not checked.")
def instance_types_are_offered_in_the_region(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    region = spec.accounts.capacity.region
    offered = cluster_instance_types(region)
    if spec.cluster.existing is not None or offered is None:
        return  # an existing cluster's types are the service's business; HPG-R001 refuses regions without data
    declared = set(spec.instance_types)  # newer than every data set: the spec vouches for them (HPG-I004, I005)
    for gi, g in enumerate(spec.cluster.instance_groups):
        for ki, itype in enumerate(g.types):
            path = f"cluster.instanceGroups[{gi}]." + (f"instanceTypes[{ki}]" if g.flexible else "instanceType")
            if itype not in catalog.CATALOG:
                continue  # HPG-I003 reports an unknown type; saying it is not offered would repeat the typo
            if itype not in offered and itype not in declared:
                elsewhere = sorted(r for r, types in _cluster_instance_types()["regions"].items()  # type: ignore[union-attr]
                                   if itype in types)
                yield SpecIssue(
                    path,
                    f"is not offered for HyperPod clusters in {region} ({instance_types_source()})", itype,
                    f"use it in {', '.join(elsewhere)}" if elsewhere else
                    "no region offers it for AWS::SageMaker::Cluster in that data: use another type, or govern a cluster created another way (cluster.existing)",
                )


@rule("HPG-D003", "error", "An instance group's training plan is in the capacity account and region (a training plan "
      "reserves capacity of one account in one region), and its volume key, given as an ARN, is in the region.")
def reservations_are_in_the_capacity_region(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    account, region = spec.accounts.capacity.id, spec.accounts.capacity.region
    for gi, g in enumerate(spec.cluster.instance_groups):
        if g.training_plan_arn:
            _, _, _, plan_region, plan_account, _ = g.training_plan_arn.split(":", 5)
            if (plan_region, plan_account) != (region, account):
                yield SpecIssue(
                    f"cluster.instanceGroups[{gi}].trainingPlanArn",
                    f"reserves capacity in {plan_account} {plan_region}, not in the capacity account {account} "
                    f"{region}", g.training_plan_arn,
                    f"name a training plan of {account} in {region} (`aws sagemaker list-training-plans "
                    f"--region {region}`)",
                )
        key = g.volume_kms_key_id
        if key and key.startswith("arn:") and key.split(":")[3] != region:
            yield SpecIssue(f"cluster.instanceGroups[{gi}].volumeKmsKeyId",
                            f"is a key of {key.split(':')[3]}; EBS volumes in {region} need a key of {region}", key,
                            f"use a KMS key (or a multi-Region replica) in {region}")
