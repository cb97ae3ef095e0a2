"""A HyperPod cluster as the SageMaker and EKS APIs describe it, and Stubber queues that serve it.

``cluster_from_plan`` writes the API responses straight from the plan's fields (not through
``hyperpod_gov.live.expected``), so a mistake in the expected state shows up as drift.
``stub_drift`` / ``stub_import`` queue the responses in the order the commands make their calls;
Stubber checks every request against the service model and the expected parameters.
"""

from __future__ import annotations

import copy
import datetime as dt
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Optional

import boto3
from botocore.stub import Stubber

from hyperpod_gov.live.aws import RETRY_CONFIG
from hyperpod_gov.plan.tables import ADDON_CONFIGURATION

ACCOUNT = "111111111111"
REGION = "us-east-1"
CLUSTER_ID = "a1b2c3d4e5f6"
WHEN = dt.datetime(2026, 11, 1, 12, 0, tzinfo=dt.timezone.utc)
DEFAULT_ADDON_VERSION = "v1.0.0-eksbuild.1"


def ident(key: str) -> str:
    """A 12-character lowercase id, as SageMaker gives quotas and policies."""
    return hashlib.sha256(key.encode()).hexdigest()[:12]


@dataclass
class FakeCluster:
    """The live state, in API shapes. Tests change one thing and expect one drift item."""

    name: str
    account: str
    region: str
    eks_name: str
    instance_groups: list[dict[str, Any]]
    policies: list[dict[str, Any]]  # DescribeClusterSchedulerConfig responses
    quotas: list[dict[str, Any]]  # DescribeComputeQuota responses
    access_entries: list[dict[str, Any]]  # DescribeAccessEntry.accessEntry
    associations: list[dict[str, Any]]  # DescribePodIdentityAssociation.association
    addons: list[dict[str, Any]]  # DescribeAddon.addon
    eks_version: str = "1.33"
    vpc_id: str = "vpc-0123456789abcdef0"
    vpc_cidr: str = "10.192.0.0/16"
    subnet_ids: tuple[str, ...] = ("subnet-0aaa1111111111111", "subnet-0bbb2222222222222")
    cluster_security_group: str = "sg-0c1a55e7000000000"
    vanished: set[str] = field(default_factory=set)  # ids listed, then deleted before their Describe
    # DescribeCluster's cluster-wide members beyond the orchestrator (AutoScaling, ClusterRole,
    # NodeProvisioningMode, NodeRecovery), as the service reports them
    cluster_members: dict[str, Any] = field(default_factory=dict)

    @property
    def arn(self) -> str:
        return f"arn:aws:sagemaker:{self.region}:{self.account}:cluster/{CLUSTER_ID}"

    @property
    def eks_arn(self) -> str:
        return f"arn:aws:eks:{self.region}:{self.account}:cluster/{self.eks_name}"

    def copy(self) -> "FakeCluster":
        return copy.deepcopy(self)

    def quota(self, team: str) -> dict[str, Any]:
        return next(q for q in self.quotas if q["ComputeQuotaTarget"]["TeamName"] == team)

    def describe_cluster(self) -> dict[str, Any]:
        return {
            "ClusterArn": self.arn,
            "ClusterName": self.name,
            "ClusterStatus": "InService",
            "CreationTime": WHEN,
            "InstanceGroups": self.instance_groups,
            "Orchestrator": {"Eks": {"ClusterArn": self.eks_arn}},
            **self.cluster_members,
        }


def quota_response(fake_arn: str, account: str, region: str, name: str, team: str, config: dict[str, Any],
                   weight: Optional[int], activation: str = "Enabled", status: str = "Created") -> dict[str, Any]:
    qid = ident(name)
    target: dict[str, Any] = {"TeamName": team}
    if weight is not None:
        target["FairShareWeight"] = weight
    return {
        "ComputeQuotaArn": f"arn:aws:sagemaker:{region}:{account}:compute-quota/{qid}",
        "ComputeQuotaId": qid,
        "Name": name,
        "ComputeQuotaVersion": 1,
        "Status": status,
        "ClusterArn": fake_arn,
        "ComputeQuotaConfig": config,
        "ComputeQuotaTarget": target,
        "ActivationState": activation,
        "CreationTime": WHEN,
    }


def policy_response(fake: FakeCluster, name: str, priority_classes: list[tuple[str, int]], fair_share: str,
                    status: str = "Created", idle_resource_sharing: Optional[str] = None) -> dict[str, Any]:
    pid = ident(name)
    response = {
        "ClusterSchedulerConfigArn": f"arn:aws:sagemaker:{fake.region}:{fake.account}:cluster-scheduler-config/{pid}",
        "ClusterSchedulerConfigId": pid,
        "Name": name,
        "ClusterSchedulerConfigVersion": 1,
        "Status": status,
        "ClusterArn": fake.arn,
        "SchedulerConfig": {"PriorityClasses": [{"Name": n, "Weight": w} for n, w in priority_classes],
                            "FairShare": fair_share},
        "CreationTime": WHEN,
    }
    if idle_resource_sharing is not None:
        response["SchedulerConfig"]["IdleResourceSharing"] = idle_resource_sharing
    return response


def _resource(given: Any) -> dict[str, Any]:
    """A ComputeQuotaResourceConfig as the API returns it, from a plan allocation (quota or borrow limit)."""
    out: dict[str, Any] = {"InstanceType": given.instance_type}
    if given.partition is not None:
        out["AcceleratorPartition"] = {"Type": given.partition[0], "Count": given.partition[1]}
    elif given.accelerators is not None:
        out["Accelerators"] = given.accelerators
    elif given.vcpu is not None:
        out["VCpu"], out["MemoryInGiB"] = float(given.vcpu), float(given.memory_gib)
    else:
        out["Count"] = given.count
    return out


def _instance_group(plan: Any, g: Any) -> dict[str, Any]:
    """An instance group as DescribeCluster reports it (ClusterInstanceGroupDetails) after a correct deploy."""
    out: dict[str, Any] = {"InstanceGroupName": g.name, "CurrentCount": g.instance_count,
                           "TargetCount": g.instance_count, "ExecutionRole": f"arn:aws:iam::{plan.account}:role/exec"}
    out.update(_elastic_members(g))
    if g.deep_health_checks:
        out["OnStartDeepHealthChecks"] = list(reversed(g.deep_health_checks))  # the service keeps no order
    kubernetes: dict[str, Any] = {}
    if g.kubernetes_labels:
        kubernetes["CurrentLabels"] = kubernetes["DesiredLabels"] = dict(g.kubernetes_labels)
    if g.taints:
        kubernetes["CurrentTaints"] = kubernetes["DesiredTaints"] = [
            {k: v for k, v in (("Key", t.key), ("Value", t.value), ("Effect", t.effect)) if v is not None}
            for t in g.taints]
    if kubernetes:
        out["KubernetesConfig"] = kubernetes
    if g.training_plan_arn:
        out["TrainingPlanArn"] = g.training_plan_arn
    if g.subnet_ids:
        out["OverrideVpcConfig"] = {"SecurityGroupIds": ["sg-0123456789abcdef0"], "Subnets": list(g.subnet_ids)}
    if g.threads_per_core:
        out["ThreadsPerCore"] = g.threads_per_core
    if g.lifecycle is not None:
        out["LifeCycleConfig"] = {"SourceS3Uri": g.lifecycle.source_s3_uri, "OnCreate": g.lifecycle.on_create}
    return out


def _deployment_config(p: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if p.batch is not None:
        out["RollingUpdatePolicy"] = {"MaximumBatchSize": {"Type": p.batch[0], "Value": p.batch[1]}}
    if p.wait_seconds is not None:
        out["WaitIntervalInSeconds"] = p.wait_seconds
    if p.rollback_alarms:  # the service keeps no order for them
        out["AutoRollbackConfiguration"] = [{"AlarmName": a} for a in reversed(p.rollback_alarms)]
    return out


def _elastic_members(g: Any) -> dict[str, Any]:
    """Elastic capacity (issue 57) as ClusterInstanceGroupDetails reports it: a flexible group's
    InstanceRequirements {Current,Desired}InstanceTypes (else InstanceType), MinCount, CapacityRequirements
    (OnDemand reported where none was asked), Current/Desired image members, and the patching configuration with
    the service's own members (the next patch date, the idle wait's default)."""
    out: dict[str, Any] = {}
    if g.instance_types:
        out["InstanceRequirements"] = {"CurrentInstanceTypes": list(g.instance_types),
                                       "DesiredInstanceTypes": list(g.instance_types)}
        out["InstanceTypeDetails"] = [{"InstanceType": t, "CurrentCount": 0} for t in g.instance_types]
    else:
        out["InstanceType"] = g.instance_type
    if g.min_count is not None:
        out["MinCount"] = g.min_count
    out["CapacityRequirements"] = {"Spot": {}} if g.capacity_type == "spot" else {"OnDemand": {}}
    image = g.image_id or "ami-0a1b2c3d4e5f60718"  # the service's HyperPod AMI where the spec names none
    out["CurrentImageId"] = out["DesiredImageId"] = image
    if g.image_release_version:
        out["CurrentImageReleaseVersion"] = out["DesiredImageReleaseVersion"] = g.image_release_version
    p = g.patching
    if p is not None and p.schedule_expression:
        out["ScheduledUpdateConfig"] = {"ScheduleExpression": p.schedule_expression}
        if _deployment_config(p):
            out["ScheduledUpdateConfig"]["DeploymentConfig"] = _deployment_config(p)
    if p is not None and p.auto:
        next_patch = {"NextPatchDate": dt.datetime(2027, 1, 31, 2, 0, tzinfo=dt.timezone.utc)}
        out["AutoPatchConfig"] = {"PatchingStrategy": p.auto, "CurrentPatchSchedule": next_patch,
                                  "DesiredPatchSchedule": next_patch, "IdleWaitWindowInSeconds": 86400}
        if _deployment_config(p):
            out["AutoPatchConfig"]["DeploymentConfig"] = _deployment_config(p)
    return out


def _cluster_members(plan: Any) -> dict[str, Any]:
    """DescribeCluster's cluster-wide members a deploy of ``plan`` sets."""
    c = plan.cluster
    out: dict[str, Any] = {"NodeRecovery": c.node_recovery}
    if c.node_provisioning_mode:
        out["NodeProvisioningMode"] = c.node_provisioning_mode
    if c.auto_scaling:
        out["AutoScaling"] = {"Mode": "Enable", "AutoScalerType": "Karpenter", "Status": "InService"}
        out["ClusterRole"] = f"arn:aws:iam::{plan.account}:role/{plan.name}-autoscaling"
    return out


def cluster_from_plan(plan: Any) -> FakeCluster:
    """The cluster a correct deploy of ``plan`` leaves behind, written from the plan's own fields."""
    fake = FakeCluster(
        name=plan.cluster.name, account=plan.account, region=plan.region, eks_name=plan.cluster.eks_name,
        instance_groups=[_instance_group(plan, g) for g in plan.cluster.instance_groups],
        policies=[], quotas=[], access_entries=[], associations=[], addons=[], cluster_members=_cluster_members(plan),
    )
    if plan.mode == "task-governance":
        fake.policies.append(policy_response(
            fake, f"{plan.name}-policy", [(p.name, p.weight) for p in plan.priority_classes],
            "Enabled" if plan.fair_sharing else "Disabled",
            idle_resource_sharing=None if plan.idle_resource_sharing else "Disabled"))
        for t in plan.teams:
            sharing: dict[str, Any] = {"Strategy": t.strategy}
            if t.strategy == "LendAndBorrow":
                sharing["BorrowLimit"] = t.borrow_limit_percent
                if t.absolute_borrow_limits:
                    sharing["AbsoluteBorrowLimits"] = [_resource(b) for b in t.absolute_borrow_limits]
            resources = [_resource(f.given) for f in t.flavors if f.given is not None]
            config = {"ComputeQuotaResources": resources, "ResourceSharingConfig": sharing,
                      "PreemptTeamTasks": t.preempt_team_tasks}
            fake.quotas.append(quota_response(fake.arn, fake.account, fake.region, f"{t.name}-quota", t.name, config,
                                              t.fair_share_weight, "Enabled" if t.active else "Disabled"))
    entries: dict[str, dict[str, Any]] = {}
    for a in plan.cluster.admins:
        entries[a.principal_arn] = {"clusterName": fake.eks_name, "principalArn": a.principal_arn,
                                    "kubernetesGroups": [], "type": "STANDARD"}
    for p in plan.principals:
        entries[p.principal_arn] = {"clusterName": fake.eks_name, "principalArn": p.principal_arn,
                                    "kubernetesGroups": list(p.groups), "type": "STANDARD"}
    # The HyperPod execution role's entry: not governed by the spec, so never drift.
    node_role = f"arn:aws:iam::{plan.account}:role/exec"
    entries[node_role] = {"clusterName": fake.eks_name, "principalArn": node_role, "kubernetesGroups": [],
                          "type": "HYPERPOD_LINUX"}
    fake.access_entries = [entries[k] for k in sorted(entries)]
    for i in plan.identities:
        assoc: dict[str, Any] = {"clusterName": fake.eks_name, "namespace": i.namespace,
                                 "serviceAccount": i.service_account, "roleArn": i.source_role_arn,
                                 "associationId": "a-" + ident(i.namespace + i.service_account)[:17]}
        if i.target_role_arn:
            assoc["targetRoleArn"] = i.target_role_arn
        fake.associations.append(assoc)
    # The CloudWatch agent's association lives outside team namespaces: not a team identity.
    fake.associations.append({"clusterName": fake.eks_name, "namespace": "amazon-cloudwatch",
                              "serviceAccount": "cloudwatch-agent", "roleArn": f"arn:aws:iam::{plan.account}:role/cw",
                              "associationId": "a-cloudwatchagent0"})
    for name, version in sorted(plan.addon_versions.items()):
        addon = {"addonName": name, "clusterName": fake.eks_name, "addonVersion": version or DEFAULT_ADDON_VERSION,
                 "status": "ACTIVE"}
        if name in ADDON_CONFIGURATION:  # DescribeAddon returns the JSON text the add-on was given
            addon["configurationValues"] = json.dumps(ADDON_CONFIGURATION[name])
        fake.addons.append(addon)
    fake.addons.append({"addonName": "metrics-server", "clusterName": fake.eks_name,
                        "addonVersion": "v0.7.2-eksbuild.1", "status": "ACTIVE"})
    return fake


# --- clients and Stubber queues -----------------------------------------------------------------


def clients() -> tuple[Any, Any, Any]:
    """Real botocore clients (fake credentials, never sent: Stubber answers first): SageMaker, EKS, EC2."""
    kw = dict(region_name=REGION, aws_access_key_id="AKIDEXAMPLE", aws_secret_access_key="secret",
              config=RETRY_CONFIG)
    return boto3.client("sagemaker", **kw), boto3.client("eks", **kw), boto3.client("ec2", **kw)


def _pages(items: list[Any], size: Optional[int]) -> list[list[Any]]:
    if not size:
        return [items]
    return [items[i:i + size] for i in range(0, len(items), size)] or [[]]


def _list_then_describe(stub: Stubber, list_op: str, list_key: str, token: str, params: dict[str, Any],
                        summaries: list[Any], describe, page_size: Optional[int]) -> None:
    """Queue each page, then the Describe calls the command makes for that page's items."""
    pages = _pages(summaries, page_size)
    for n, page in enumerate(pages):
        response: dict[str, Any] = {list_key: page}
        if n + 1 < len(pages):
            response[token] = f"page-{n + 2}"
        stub.add_response(list_op, response, {**params, **({token: f"page-{n + 1}"} if n else {})})
        for item in page:
            describe(item)


def stub_governance(sm: Stubber, fake: FakeCluster, page_size: Optional[int]) -> None:
    def summary_policy(p: dict[str, Any]) -> dict[str, Any]:
        return {k: p[k] for k in ("ClusterSchedulerConfigArn", "ClusterSchedulerConfigId", "Name", "CreationTime",
                                  "Status", "ClusterArn")}

    def summary_quota(q: dict[str, Any]) -> dict[str, Any]:
        return {k: q[k] for k in ("ComputeQuotaArn", "ComputeQuotaId", "Name", "Status", "ClusterArn",
                                  "ComputeQuotaTarget", "CreationTime")}

    def describe_policy(s: dict[str, Any]) -> None:
        if s["Status"] not in ("Deleted", "Deleting"):
            full = next(p for p in fake.policies if p["ClusterSchedulerConfigId"] == s["ClusterSchedulerConfigId"])
            sm.add_response("describe_cluster_scheduler_config", full,
                            {"ClusterSchedulerConfigId": s["ClusterSchedulerConfigId"]})

    def describe_quota(s: dict[str, Any]) -> None:
        if s["ComputeQuotaId"] in fake.vanished:
            sm.add_client_error("describe_compute_quota", service_error_code="ResourceNotFound",
                                http_status_code=400, expected_params={"ComputeQuotaId": s["ComputeQuotaId"]})
        elif s["Status"] not in ("Deleted", "Deleting"):
            full = next(q for q in fake.quotas if q["ComputeQuotaId"] == s["ComputeQuotaId"])
            sm.add_response("describe_compute_quota", full, {"ComputeQuotaId": s["ComputeQuotaId"]})

    _list_then_describe(sm, "list_cluster_scheduler_configs", "ClusterSchedulerConfigSummaries", "NextToken",
                        {"ClusterArn": fake.arn}, [summary_policy(p) for p in fake.policies], describe_policy,
                        page_size)
    _list_then_describe(sm, "list_compute_quotas", "ComputeQuotaSummaries", "NextToken", {"ClusterArn": fake.arn},
                        [summary_quota(q) for q in fake.quotas], describe_quota, page_size)


def stub_drift(sm: Stubber, ek: Stubber, fake: FakeCluster, *, described_addons: tuple[str, ...] = (),
               planned_service_accounts: tuple[tuple[str, str], ...] = (), page_size: Optional[int] = None) -> None:
    """Queue every response drift reads, in its order."""
    sm.add_response("describe_cluster", fake.describe_cluster(), {"ClusterName": fake.name})
    stub_governance(sm, fake, page_size)
    cluster = {"clusterName": fake.eks_name}
    by_arn = {e["principalArn"]: e for e in fake.access_entries}
    _list_then_describe(
        ek, "list_access_entries", "accessEntries", "nextToken", cluster, [e["principalArn"] for e in fake.access_entries],
        lambda arn: ek.add_response("describe_access_entry", {"accessEntry": by_arn[arn]},
                                    {**cluster, "principalArn": arn}),
        page_size)
    planned = set(planned_service_accounts)

    def describe_association(s: dict[str, Any]) -> None:
        if (s["namespace"], s["serviceAccount"]) in planned or s["namespace"].startswith("hyperpod-ns-"):
            full = next(a for a in fake.associations if a["associationId"] == s["associationId"])
            ek.add_response("describe_pod_identity_association", {"association": full},
                            {**cluster, "associationId": s["associationId"]})

    _list_then_describe(
        ek, "list_pod_identity_associations", "associations", "nextToken", cluster,
        [{k: a[k] for k in ("clusterName", "namespace", "serviceAccount", "associationId")} for a in fake.associations],
        describe_association, page_size)
    names = sorted(a["addonName"] for a in fake.addons)
    _list_then_describe(ek, "list_addons", "addons", "nextToken", cluster, names, lambda _: None, page_size)
    for name in names:
        if name in described_addons:
            addon = next(a for a in fake.addons if a["addonName"] == name)
            ek.add_response("describe_addon", {"addon": addon}, {**cluster, "addonName": name})


def stub_import(sm: Stubber, ek: Stubber, fake: FakeCluster, *, page_size: Optional[int] = None,
                endpoint: Optional[dict[str, Any]] = None, ec2: Optional[Stubber] = None,
                addon_denied: bool = False) -> None:
    """Queue every response import reads, in its order (with ``ec2``: governance-only mode's reads too)."""
    sm.add_response("describe_cluster", fake.describe_cluster(), {"ClusterName": fake.name})
    stub_governance(sm, fake, page_size)
    vpc = {"vpcId": fake.vpc_id, "subnetIds": list(fake.subnet_ids),
           "clusterSecurityGroupId": fake.cluster_security_group}
    ek.add_response("describe_cluster", {"cluster": {
        "name": fake.eks_name, "arn": fake.eks_arn, "version": fake.eks_version, "status": "ACTIVE",
        "resourcesVpcConfig": {**vpc, **(endpoint or {"endpointPublicAccess": False, "endpointPrivateAccess": True})},
    }}, {"name": fake.eks_name})
    if ec2 is not None:
        ec2.add_response("describe_vpcs", {"Vpcs": [{"VpcId": fake.vpc_id, "CidrBlock": fake.vpc_cidr}]},
                         {"VpcIds": [fake.vpc_id]})
        ek.add_response("list_addons", {"addons": sorted(a["addonName"] for a in fake.addons)},
                        {"clusterName": fake.eks_name})
        cni = next((a for a in fake.addons if a["addonName"] == "vpc-cni"), None)
        if cni is not None and addon_denied:  # an identity with only the reads the live contract names
            ek.add_client_error("describe_addon", "AccessDeniedException", "not authorized",
                                expected_params={"clusterName": fake.eks_name, "addonName": "vpc-cni"})
        elif cni is not None:  # whether it enforces NetworkPolicies (cluster.existing.networkPolicyEnforcement)
            ek.add_response("describe_addon", {"addon": cni}, {"clusterName": fake.eks_name, "addonName": "vpc-cni"})
