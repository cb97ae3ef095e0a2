"""The tables of every governed object (see ``fields.py``): one row per API member, declared once.

``task_governance.py`` emits quotas and the cluster policy from ``COMPUTE_QUOTA`` and ``CLUSTER_POLICY``; the
constructs emit instance groups, access entries and Pod Identity associations from ``INSTANCE_GROUP``,
``ACCESS_ENTRY`` and ``POD_IDENTITY``; ``live/`` compares every table with the live state and imports from it.
Member names are the AWS APIs' (SageMaker: PascalCase, shared with CloudFormation; EKS: camelCase, which
CloudFormation spells with a capital first letter: :func:`cfn_properties`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from ..spec.types import DEFAULT_BORROW_LIMIT_PERCENT
from .fields import Field, Table, emit, member_value
from .quotas import Allocated, TeamPlan

ACCESS_ENTRY_TYPE = "STANDARD"


def resource_config(given: Allocated) -> dict[str, Any]:
    """One ``ComputeQuotaResourceConfig`` (a quota resource or an absolute borrow limit), as the spec gave it."""
    entry: dict[str, Any] = {"InstanceType": given.instance_type}
    if given.accelerators is not None:
        entry["Accelerators"] = given.accelerators
    elif given.vcpu is not None:
        entry["VCpu"] = given.vcpu
        entry["MemoryInGiB"] = given.memory_gib
    elif given.partition is not None:
        entry["AcceleratorPartition"] = {"Type": given.partition[0], "Count": given.partition[1]}
    else:
        entry["Count"] = given.count
    return entry


def contract_tags(team: TeamPlan) -> Optional[list[dict[str, str]]]:
    """The quota's tags, sorted by key: the team's cost-allocation tags (``TeamPlan.tags``) and the contract's
    (tag values allow letters, digits, space and _.:/=+-@). The spec refuses keys under ``hyperpod-gov:``, so
    the generated ones never conflict with the team's."""
    contract = team.contract
    if contract is None:
        return [{"Key": k, "Value": v} for k, v in team.tags] or None
    tags = {
        "hyperpod-gov:business-owner": contract.business_owner,
        "hyperpod-gov:operations-owner": contract.operations_owner,
        "hyperpod-gov:cost-owner": contract.cost_owner,
        "hyperpod-gov:data-classification": contract.data_classification,
        "hyperpod-gov:approved-workloads": " ".join(contract.approved_workloads),
        "hyperpod-gov:review-by": contract.review_by.isoformat(),
    }
    return [{"Key": k, "Value": v} for k, v in sorted({**dict(team.tags), **tags}.items())]


def _lend_and_borrow(team: TeamPlan) -> bool:
    return team.strategy == "LendAndBorrow"


def _resources(team: TeamPlan) -> list[dict[str, Any]]:
    return [resource_config(f.given) for f in team.owned if f.given is not None]


def _absolute(team: TeamPlan) -> Optional[list[dict[str, Any]]]:
    if not _lend_and_borrow(team) or not team.absolute_borrow_limits:
        return None
    return [resource_config(b) for b in team.absolute_borrow_limits]


def _activation(team: TeamPlan) -> str:
    return "Enabled" if team.active else "Disabled"


_TAGS = ("the generated tags (hyperpod-gov:*, and the contract's on a quota), on every resource; describe calls do "
         "not return them")
_CLUSTER_NAME = "the cluster the object belongs to; the live object is read from it"
_DEPLOY_TIME = "a deploy-time reference to this cluster; the live object is read from it"
_GENERATED = "generated text that says which tool made it"

COMPUTE_QUOTA = Table(
    kind="ComputeQuota",
    label="compute quota",
    spec="teams[]",
    fields=(
        Field("Name", "quota name", "name", get=lambda t: t.quota_name, plan_fields=("quota_name",),
              drift="quotas are matched by ComputeQuotaTarget.TeamName; the name only picks among duplicates",
              imports="generated from the team name"),
        Field("ClusterArn", "cluster", "", drift=_DEPLOY_TIME, imports=_DEPLOY_TIME),
        Field("ActivationState", "the quota", "active", get=_activation, plan_fields=("active",),
              to_spec=lambda v: v != "Disabled"),
        Field("Description", "description", "", get=lambda t: f"hyperpod-gov compute quota of team {t.name}",
              drift=_GENERATED, imports=_GENERATED),
        Field("ComputeQuotaConfig.ComputeQuotaResources", "quota", "quota", get=_resources,
              plan_fields=("flavors",), keyed_by="InstanceType",
              imports="written entry by entry by the importer (one amount per spec entry)"),
        Field("ComputeQuotaConfig.ResourceSharingConfig.Strategy", "sharing strategy", "sharing.strategy",
              get=lambda t: t.strategy, plan_fields=("strategy",), to_spec=str),
        Field("ComputeQuotaConfig.ResourceSharingConfig.BorrowLimit", "borrow limit",
              "sharing.borrowLimitPercent", get=lambda t: t.borrow_limit_percent if _lend_and_borrow(t) else None,
              plan_fields=("borrow_limit_percent",), default=DEFAULT_BORROW_LIMIT_PERCENT, when=_lend_and_borrow,
              after="ComputeQuotaConfig.ResourceSharingConfig.Strategy", to_spec=int, unit="%"),
        Field("ComputeQuotaConfig.ResourceSharingConfig.AbsoluteBorrowLimits", "absolute borrow limits",
              "sharing.absoluteBorrowLimits", get=_absolute, plan_fields=("absolute_borrow_limits",),
              keyed_by="InstanceType", after="ComputeQuotaConfig.ResourceSharingConfig.Strategy",
              imports="written entry by entry by the importer (one amount per spec entry)"),
        Field("ComputeQuotaConfig.PreemptTeamTasks", "preemption of the team's own tasks", "preemptTeamTasks",
              get=lambda t: t.preempt_team_tasks, plan_fields=("preempt_team_tasks",), to_spec=str),
        Field("ComputeQuotaTarget.TeamName", "team", "name", get=lambda t: t.name, plan_fields=("name",),
              drift="the key quotas are matched by", to_spec=str),
        Field("ComputeQuotaTarget.FairShareWeight", "fair-share weight", "fairShareWeight",
              get=lambda t: t.fair_share_weight, plan_fields=("fair_share_weight",), to_spec=int),
        Field("Tags", "contract tags", "contract|tags", get=contract_tags, plan_fields=("contract", "tags"),
              drift="DescribeComputeQuota does not return tags; `review` and the contract record check contracts",
              imports="the contract is not held by the API: import leaves a commented placeholder"),
    ),
    exempt={
        "namespace": "HyperPod names the namespace after ComputeQuotaTarget.TeamName",
        "cluster_queue": "Kueue objects (kueue mode) and the simulator; HyperPod names its own",
        "local_queue": "Kueue objects (kueue mode) and the simulator; HyperPod names its own",
        "viewers_group": "the team's Kubernetes objects and access entries",
        "submitters_group": "the team's Kubernetes objects and access entries",
        "is_shared_pool": "the shared pool is a team to the API",
        "queue_reader": "the team's Kubernetes objects",
        "egress": "the team's Kubernetes objects (NetworkPolicies)",
        "service_accounts": "the team's Kubernetes objects and Pod Identity associations",
        "viewers": "access entries",
        "submitters": "access entries",
        "pod_security": "the team's Kubernetes objects (admission policies)",
        "pod_exec": "the team's Kubernetes objects (RBAC)",
        "write_secrets": "the team's Kubernetes objects (RBAC)",
        "write_config_maps": "the team's Kubernetes objects (RBAC)",
        "idle_resource_sharing": "the cluster policy (SchedulerConfig.IdleResourceSharing)",
    },
)


@dataclass(frozen=True)
class PolicyPart:
    """What the cluster policy is made of (``policy_part(plan)``)."""

    name: str
    cluster_name: str
    priority_classes: tuple[tuple[str, int], ...]  # (spec name, weight), sorted by name
    fair_sharing: bool
    idle_resource_sharing: bool


def policy_part(plan: Any) -> PolicyPart:
    return PolicyPart(plan.policy_name, plan.cluster.name, tuple((p.name, p.weight) for p in plan.priority_classes),
                      plan.fair_sharing, plan.idle_resource_sharing)


CLUSTER_POLICY = Table(
    kind="ClusterSchedulerConfig",
    label="cluster policy",
    spec="scheduler",
    fields=(
        Field("Name", "policy name", "", get=lambda p: p.name, plan_fields=("name",),
              drift="HyperPod holds one policy per cluster; the planned name only picks among several",
              imports="the spec's name is read from it (<name>-policy)"),
        Field("ClusterArn", "cluster", "", drift=_DEPLOY_TIME, imports=_DEPLOY_TIME),
        Field("Description", "description", "", get=lambda p: f"hyperpod-gov cluster policy of {p.cluster_name}",
              plan_fields=("cluster_name",), drift=_GENERATED, imports=_GENERATED),
        Field("SchedulerConfig.PriorityClasses", "priority classes", "priorityClasses",
              get=lambda p: [{"Name": n, "Weight": w} for n, w in p.priority_classes],
              plan_fields=("priority_classes",), keyed_by="Name", strip_key=False,
              to_spec=lambda v: [{"name": p["Name"], "weight": p["Weight"]} for p in v] or None),
        Field("SchedulerConfig.FairShare", "fair sharing of idle compute", "idleCompute",
              get=lambda p: "Enabled" if p.fair_sharing else "Disabled", plan_fields=("fair_sharing",),
              to_spec=lambda v: "fair-share" if v == "Enabled" else "first-come-first-serve"),
        # Written only when off: the service's default is Enabled.
        Field("SchedulerConfig.IdleResourceSharing", "idle resource sharing", "idleResourceSharing",
              get=lambda p: None if p.idle_resource_sharing else "Disabled", plan_fields=("idle_resource_sharing",),
              default="Enabled", to_spec=lambda v: v != "Disabled"),
        Field("Tags", "tags", "", drift=_TAGS, imports=_TAGS),
    ),
)


def same_arn(planned: Optional[str], live: Optional[str], context: Mapping[str, Any]) -> bool:
    """ARNs equal once the plan's partition (or its ``${partition}`` placeholder) is the live one
    (``context["partition"]``)."""
    if planned is None or live is None:
        return planned == live
    partition = context.get("partition", "aws")
    return re.sub(r"^arn:[^:]+:", f"arn:{partition}:", planned.replace("${partition}", partition)) == live


def _live_count(live: Mapping[str, Any]) -> tuple[str, Any]:
    """DescribeCluster reports TargetCount (what the group is scaling to) and CurrentCount; CloudFormation's
    InstanceCount is the target."""
    member = "TargetCount" if "TargetCount" in live else "CurrentCount"
    return member, live.get(member)


def _storage(group: Any) -> Optional[list[dict[str, Any]]]:
    if not group.volume_size_gb:
        return None
    ebs: dict[str, Any] = {"VolumeSizeInGB": group.volume_size_gb}
    if group.volume_kms_key_id:
        ebs["VolumeKmsKeyId"] = group.volume_kms_key_id
    return [{"EbsVolumeConfig": ebs}]


def _live_sorted(member: str, live_member: str) -> Any:
    """The live list at ``live_member``, sorted (the service keeps no order for it)."""
    def read(live: Mapping[str, Any]) -> tuple[str, Any]:
        value = member_value(live, live_member)
        return live_member, sorted(value) if isinstance(value, list) else value
    return read


def _desired(what: str) -> Any:
    """DescribeCluster reports ``KubernetesConfig.Desired<what>`` (what was asked for) and ``Current<what>``
    (what the nodes have now): the desired ones are what the spec governs."""
    def read(live: Mapping[str, Any]) -> tuple[str, Any]:
        config = live.get("KubernetesConfig") or {}
        member = f"Desired{what}" if f"Desired{what}" in config else f"Current{what}"
        return f"KubernetesConfig.{member}", config.get(member)
    return read


def _taints(group: Any) -> Optional[list[dict[str, str]]]:
    return [{k: v for k, v in (("Key", t.key), ("Value", t.value), ("Effect", t.effect)) if v is not None}
            for t in group.taints] or None


def _same_taints(planned: Any, live: Any, context: Mapping[str, Any]) -> bool:
    def key(items: Any) -> list[tuple[str, str, str]]:
        return sorted((t.get("Key", ""), t.get("Value") or "", t.get("Effect", "")) for t in items or ())
    return key(planned) == key(live)


def _lifecycle_member(what: str) -> Any:
    def get(group: Any) -> Optional[str]:
        if group.lifecycle is None:
            return None
        return group.lifecycle.source_s3_uri if what == "SourceS3Uri" else group.lifecycle.on_create
    return get


def volume_of(live_storage: Any) -> Optional[int]:
    """The data volume's size from ``InstanceStorageConfigs`` (the root volume left out)."""
    for storage in live_storage or ():
        ebs = storage.get("EbsVolumeConfig") or {}
        if ebs.get("VolumeSizeInGB") and not ebs.get("RootVolume"):
            return int(ebs["VolumeSizeInGB"])
    return None


INSTANCE_GROUP = Table(
    kind="InstanceGroup",
    label="instance group",
    spec="cluster.instanceGroups[]",
    fields=(
        Field("InstanceGroupName", "name", "name", get=lambda g: g.name, plan_fields=("name",),
              drift="the key instance groups are matched by", to_spec=str),
        Field("InstanceType", "instance type", "instanceType", get=lambda g: g.instance_type,
              plan_fields=("instance_type",), to_spec=str),
        Field("InstanceCount", "the instance count", "count", get=lambda g: g.count, plan_fields=("count",),
              live_member=_live_count, to_spec=int),
        Field("ExecutionRole", "execution role", "", drift=_DEPLOY_TIME, imports=_DEPLOY_TIME),
        # Own scripts are the spec's; the shipped ones are in the lifecycle bucket, a deploy-time reference.
        Field("LifeCycleConfig.SourceS3Uri", "lifecycle scripts", "lifecycle.sourceS3Uri",
              get=_lifecycle_member("SourceS3Uri"), plan_fields=("lifecycle",),
              when=lambda g: g.lifecycle is not None,
              imports="the shipped scripts' bucket is hyperpod-gov's; own scripts are a nested key the importer "
                      "does not write"),
        Field("LifeCycleConfig.OnCreate", "lifecycle entrypoint", "lifecycle.onCreate",
              get=_lifecycle_member("OnCreate"), plan_fields=("lifecycle",),
              when=lambda g: g.lifecycle is not None,
              imports="written with lifecycle.sourceS3Uri"),
        Field("InstanceStorageConfigs", "data volume (GiB)", "volumeSizeGb", get=_storage,
              plan_fields=("volume_size_gb", "volume_kms_key_id"),
              drift="HyperPod adds its root volume to what it reports; import reads the data volume's size (its "
                    "KMS key, volumeKmsKeyId, is not imported)",
              to_spec=volume_of),
        Field("KubernetesConfig.Labels", "node labels", "labels", get=lambda g: g.kubernetes_labels or None,
              plan_fields=("mig_profile", "labels", "dedicated_to"), live_member=_desired("Labels"),
              imports="a mapping (KubernetesConfig.DesiredLabels): the importer writes flat values only; the MIG "
                      "profile is guessed from the compute quotas' partitions"),
        Field("KubernetesConfig.Taints", "node taints", "taints|dedicatedTo", get=_taints, plan_fields=("taints",),
              live_member=_desired("Taints"), same=_same_taints,
              imports="a list of {key, value, effect}: the importer writes flat values only"),
        Field("OnStartDeepHealthChecks", "deep health checks", "deepHealthChecks|instanceType",
              get=lambda g: list(g.deep_health_checks) or None,
              plan_fields=("deep_health_checks", "accelerated", "deep_health_checks_given"),
              # The default follows the instance type, which is compared; checks the spec names are compared.
              when=lambda g: g.deep_health_checks_given,
              same=lambda planned, live, context: sorted(planned or ()) == sorted(live or ()),
              imports="the default follows the instance type; an explicit list the importer does not write"),
        Field("TrainingPlanArn", "training plan", "trainingPlanArn", get=lambda g: g.training_plan_arn,
              plan_fields=("training_plan_arn",), same=same_arn, to_spec=str),
        # The node security group is the cluster's, a deploy-time reference; the subnets are the spec's.
        Field("OverrideVpcConfig.Subnets", "subnets", "subnetIds", get=lambda g: list(g.subnet_ids) or None,
              plan_fields=("subnet_ids",), live_member=_live_sorted("OverrideVpcConfig.Subnets",
                                                                    "OverrideVpcConfig.Subnets"),
              imports="a list: the importer writes flat values only"),
        Field("OverrideVpcConfig.SecurityGroupIds", "security groups", "subnetIds",
              drift="the node security group, a deploy-time reference", imports=_DEPLOY_TIME),
        # Compared only where the spec sets it: without it the service reports the instance type's own value.
        Field("ThreadsPerCore", "threads per core", "threadsPerCore", get=lambda g: g.threads_per_core,
              plan_fields=("threads_per_core",), when=lambda g: g.threads_per_core is not None, to_spec=int),
    ),
)


ACCESS_ENTRY = Table(
    kind="AccessEntry",
    label="access entry",
    spec="teams[]",
    fields=(
        Field("clusterName", "cluster", "", drift=_CLUSTER_NAME, imports=_CLUSTER_NAME),
        Field("principalArn", "principal", "access.viewers|access.submitters", get=lambda a: a.principal_arn,
              plan_fields=("principal_arn",), drift="the key access entries are matched by",
              imports="not held by the quotas: import leaves a commented placeholder"),
        Field("type", "entry type", "", get=lambda a: ACCESS_ENTRY_TYPE, default=ACCESS_ENTRY_TYPE,
              imports="always STANDARD"),
        Field("kubernetesGroups", "Kubernetes groups", "access.viewers|access.submitters",
              get=lambda a: list(a.groups),
              plan_fields=("groups", "teams"),
              live_member=lambda live: ("kubernetesGroups", sorted(live.get("kubernetesGroups", []))),
              imports="not held by the quotas: import leaves a commented placeholder"),
        # HyperPod spaces: the access policies AWS documents for them, for interactive teams' submitters.
        Field("accessPolicies", "access policies (HyperPod spaces)", "contract.approvedWorkloads|access.submitters",
              get=lambda a: [p.emitted() for p in a.access_policies] or None, plan_fields=("access_policies",),
              drift="DescribeAccessEntry does not return them; drift does not read ListAssociatedAccessPolicies",
              imports="follows the team's approved workloads"),
        Field("tags", "tags", "", drift=_TAGS, imports=_TAGS),
    ),
    exempt={"key": "the construct id"},
)

# EKS's cluster-admin access policy, associated with each cluster.admins entry at cluster scope.
CLUSTER_ADMIN_POLICY = "AmazonEKSClusterAdminPolicy"

ADMIN_ENTRY = Table(
    kind="AccessEntry",
    label="cluster admin access entry",
    spec="cluster.admins[]",
    fields=(
        Field("clusterName", "cluster", "", drift=_CLUSTER_NAME, imports=_CLUSTER_NAME),
        Field("principalArn", "principal", "", get=lambda a: a.principal_arn, plan_fields=("principal_arn",),
              drift="the key access entries are matched by",
              imports="not held by the quotas: import leaves a commented placeholder"),
        Field("accessPolicies", "access policies", "",
              get=lambda a: [{"policyArn": CLUSTER_ADMIN_POLICY, "accessScope": {"type": "cluster"}}],
              drift="presence only: drift does not read ListAssociatedAccessPolicies",
              imports="not held by the quotas: import leaves a commented placeholder"),
        Field("tags", "tags", "", drift=_TAGS, imports=_TAGS),
    ),
    exempt={"key": "the construct id"},
)


POD_IDENTITY = Table(
    kind="PodIdentityAssociation",
    label="Pod Identity association",
    spec="teams[].workloadIdentities[]",
    fields=(
        Field("clusterName", "cluster", "", drift=_CLUSTER_NAME, imports=_CLUSTER_NAME),
        Field("namespace", "namespace", "", get=lambda i: i.namespace, plan_fields=("namespace", "team"),
              drift="part of the key associations are matched by", imports="the team's namespace"),
        Field("serviceAccount", "service account", "serviceAccount", get=lambda i: i.service_account,
              plan_fields=("service_account",), drift="part of the key associations are matched by",
              imports="not read by import (workload identities are placeholders)"),
        Field("roleArn", "role", "", get=lambda i: i.source_role_arn,
              plan_fields=("source_role_arn", "source_role_name"), same=same_arn,
              imports="generated from the spec, team and service account names"),
        Field("targetRoleArn", "cross-account target role", "targetRoleArn|targetRole",
              get=lambda i: i.target_role_arn, same=same_arn,
              plan_fields=("target_role_arn", "created_target", "consumer", "consumer_account"),
              imports="not read by import (workload identities are placeholders)"),
        Field("tags", "tags", "", drift=_TAGS, imports=_TAGS),
    ),
)


def _capitalized(value: Any) -> Any:
    """camelCase members with a capital first letter, nested too (the keys of every mapping are member names)."""
    if isinstance(value, dict):
        return {k[:1].upper() + k[1:]: _capitalized(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_capitalized(v) for v in value]
    return value


def cfn_properties(table: Table, part: Any, context: Optional[Mapping[str, Any]] = None) -> dict[str, Any]:
    """An EKS object's properties as CloudFormation spells them (``principalArn`` -> ``PrincipalArn``, nested
    members too), for a template written as data (``constructs/plain.py``)."""
    return _capitalized(emit(table, part, context))


def cfn_kwargs(table: Table, part: Any, context: Optional[Mapping[str, Any]] = None) -> dict[str, Any]:
    """An EKS object's properties as keyword arguments of its aws-cdk-lib L1 class (``principalArn`` ->
    ``principal_arn``); members that CloudFormation does not take (tags come from the stack) are left out."""
    return {re.sub(r"(?<!^)(?=[A-Z])", "_", k).lower(): v for k, v in emit(table, part, context).items()}


# Configuration of the add-ons that need one (EKS's ConfigurationValues, JSON).
ADDON_CONFIGURATION: Mapping[str, Mapping[str, Any]] = {
    # NetworkPolicies are enforced only when the VPC CNI runs its network policy agent. Strict mode: a new pod
    # starts with default deny instead of default allow until its policies are in place, and a pod no policy
    # selects gets no traffic (https://docs.aws.amazon.com/eks/latest/userguide/cni-network-policy-configure.html,
    # step 1, NETWORK_POLICY_ENFORCING_MODE on the aws-node container, set through the add-on's `env`).
    "vpc-cni": {"enableNetworkPolicy": "true", "env": {"NETWORK_POLICY_ENFORCING_MODE": "strict"}},
    # Container Insights (enhanced) with Kueue metrics; the version is cluster.addonVersions.cloudwatchObservability.
    "amazon-cloudwatch-observability": {
        "agent": {"config": {"logs": {"metrics_collected": {
            "kubernetes": {"enhanced_container_insights": True, "kueue_container_insights": True}}}}},
    },
}


@dataclass(frozen=True)
class AddonPart:
    """An EKS add-on as the spec pins it (``addon_parts(plan)``)."""

    name: str
    version: Optional[str]  # None: EKS's default for the Kubernetes version; only presence is checked
    configuration: Optional[Mapping[str, Any]]


def addon_parts(plan: Any) -> tuple[AddonPart, ...]:
    return tuple(AddonPart(n, v, ADDON_CONFIGURATION.get(n)) for n, v in sorted(plan.addon_versions.items()))


def _same_json(planned: Optional[Mapping[str, Any]], live: Any, context: Mapping[str, Any]) -> bool:
    if planned is None:
        return not live
    try:
        return json.loads(live) == planned if isinstance(live, str) else live == planned
    except ValueError:
        return False


ADDON = Table(
    kind="Addon",
    label="add-on",
    spec="cluster",
    fields=(
        Field("addonName", "name", "", get=lambda a: a.name, plan_fields=("name",),
              drift="the key add-ons are matched by", imports="add-ons are not written into the spec"),
        Field("clusterName", "cluster", "", drift=_CLUSTER_NAME, imports=_CLUSTER_NAME),
        # A version the spec leaves to EKS (None) is not compared: EKS picks its default for the version.
        Field("addonVersion", "version", "addonVersions", get=lambda a: a.version, plan_fields=("version",),
              when=lambda a: a.version is not None,
              imports="add-on versions are not written into the spec (the spec pins its own)"),
        # vpc-cni without its network policy agent enforces no NetworkPolicy: a governance change.
        Field("configurationValues", "configuration", "addonVersions", get=lambda a: a.configuration,
              plan_fields=("configuration",), same=_same_json,
              imports="the configuration is the library's, not the spec's"),
        Field("preserveOnDelete", "preserve on delete", "", drift="a CloudFormation setting, not the add-on's",
              imports="a CloudFormation setting"),
        Field("podIdentityAssociations", "Pod Identity associations", "",
              drift="the add-ons' own associations (observability agent, operators), outside team namespaces; "
                    "created with the add-on and its role",
              imports="created with the add-on"),
        Field("tags", "tags", "", drift=_TAGS, imports=_TAGS),
    ),
)


CLUSTER = Table(
    kind="Cluster",
    label="HyperPod cluster",
    spec="cluster",
    fields=(
        Field("ClusterName", "name", "name", get=lambda c: c.name, plan_fields=("name",),
              drift="the key the cluster is read by", to_spec=str),
        Field("InstanceGroups", "instance groups", "instanceGroups",
              drift="compared group by group (the InstanceGroup table)", imports="read group by group"),
        Field("NodeRecovery", "node recovery", "nodeRecovery", get=lambda c: c.node_recovery,
              plan_fields=("node_recovery",), default="Automatic", to_spec=str),
        Field("NodeProvisioningMode", "node provisioning", "nodeProvisioningMode",
              get=lambda c: c.node_provisioning_mode, plan_fields=("node_provisioning_mode",), to_spec=str),
        # The EKS cluster the spec derives from the HyperPod cluster's name (plan.cluster.eks_arn).
        Field("Orchestrator.Eks.ClusterArn", "EKS cluster", "name", get=lambda c: c.eks_arn,
              plan_fields=("eks_arn", "eks_name"), same=same_arn,
              imports="import notes an EKS cluster not named <name>-eks"),
        Field("VpcConfig", "VPC", "vpc", drift="the subnets and security group are deploy-time references",
              imports="not read by import"),
        Field("Tags", "tags", "", drift=_TAGS, imports=_TAGS),
    ),
)

TABLES = (COMPUTE_QUOTA, CLUSTER_POLICY, CLUSTER, INSTANCE_GROUP, ACCESS_ENTRY, ADMIN_ENTRY, POD_IDENTITY, ADDON)
