"""The cluster's part of the plan (``derive.py``): the network, the dependencies chart, the cluster and its
instance groups, from the spec."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Optional

from .. import catalog
from ..spec._base import partition_of
from ..spec.cluster import DEDICATED_KEY, InstanceGroup
from ..spec.models import GovernanceSpec, HelmChart
from ..spec.slurm import ClusterSlurm
from . import names
from .addon_defaults import pinned
from .api_access import api_sources
from .data import image_registries
from .endpoint_policies import perimeter
from .parts import (
    AdminPlan,
    ChartPlan,
    ClusterPlan,
    ExistingClusterPlan,
    ExistingVpcPlan,
    InstanceGroupPlan,
    LifecyclePlan,
    NetworkPlan,
    PatchingPlan,
    SlurmOrchestratorPlan,
    TaintPlan,
)
from .slurm import AccountingDatabasePlan, SlurmGroupPlan, slurm_groups


# Interface endpoints a private HyperPod/EKS cluster needs (DESIGN.md), in a fixed order; S3 comes as an
# interface endpoint too, so that pods reach it on VPC addresses that their NetworkPolicies allow.
INTERFACE_ENDPOINTS = ("EcrApi", "EcrDkr", "Ec2", "Sts", "Eks", "EksAuth", "Logs", "Monitoring", "SageMakerApi",
                       "Ssm", "S3Interface")
# A Slurm cluster (cluster.orchestrator: slurm) has no EKS API and no pods asking EKS Auth for credentials.
SLURM_INTERFACE_ENDPOINTS = tuple(e for e in INTERFACE_ENDPOINTS if e not in ("Eks", "EksAuth"))


def data_endpoints(spec: GovernanceSpec) -> tuple[str, ...]:
    """The interface endpoints the teams' own data calls need (issue 55), after the cluster's: KMS where a workload
    identity names keys (grants.kmsKeyArns, targetRole.kmsKeys: the pods may call KMS themselves), Secrets Manager
    where one names secrets (grants.secretsPrefix). Without them such calls leave through the NAT gateway, outside
    the endpoints' policies, or fail where the team has no internet egress."""
    identities = [w for t in spec.teams if not t.retiring for w in t.workload_identities]
    keys = any(w.grants.kms_key_arns or (w.target_role is not None and w.target_role.kms_keys) for w in identities)
    secrets = any(w.grants.secrets_prefix for w in identities)
    return (("Kms",) if keys else ()) + (("SecretsManager",) if secrets else ())


def chart_plan(chart: HelmChart, base_dir: Optional[Path]) -> ChartPlan:
    if chart.source == "directory":
        directory = Path(chart.directory or "")
        if not directory.is_absolute():
            directory = (base_dir or Path.cwd()) / directory
        return ChartPlan("directory", None, None, None, directory)
    if chart.source == "oci":  # an OCI reference ends with the chart's name
        return ChartPlan("oci", (chart.oci or "").rstrip("/").rsplit("/", 1)[-1], chart.oci, chart.version, None)
    return ChartPlan("repository", chart.chart, chart.repository, chart.version, None)


def availability_zones(spec: GovernanceSpec) -> tuple[str, ...]:
    """AZs from the spec, or the region's first ``maxAzs`` letters (no lookup, so synth stays offline); for an
    existing VPC one per private subnet (the region's a, b, ... in order where the spec names none)."""
    vpc = spec.cluster.vpc
    if vpc.availability_zones:
        return tuple(vpc.availability_zones)
    region = spec.accounts.capacity.region
    count = len(vpc.private_subnet_ids) if vpc.vpc_id else vpc.max_azs  # fromApp: the app's VPC has its own
    return tuple(f"{region}{'abcdefghijklmnop'[i % 16]}" for i in range(count))


def network_plan(spec: GovernanceSpec) -> NetworkPlan:
    vpc = spec.cluster.vpc
    private, public = subnet_masks(vpc.cidr, vpc.max_azs)
    existing = None
    if vpc.vpc_id is not None or vpc.from_app:
        existing = ExistingVpcPlan(vpc.vpc_id, tuple(vpc.private_subnet_ids), bool(vpc.create_endpoints),
                                   vpc.create_flow_logs)
    wanted = SLURM_INTERFACE_ENDPOINTS if spec.cluster.orchestrator == "slurm" else INTERFACE_ENDPOINTS
    endpoints = wanted + data_endpoints(spec) if existing is None or existing.create_endpoints else ()
    return NetworkPlan(cidr=vpc.cidr, availability_zones=availability_zones(spec), private_mask=private,
                       public_mask=public, interface_endpoints=endpoints, existing=existing,
                       perimeter=perimeter(spec.accounts, partition_of(spec.accounts.capacity.region),
                                           handlers_in_vpc=spec.cluster.orchestrator != "slurm"))


def subnet_masks(cidr: str, azs: int) -> tuple[int, int]:
    """(private, public) prefix lengths: private subnets take half the VPC, public ones are small (NAT only)."""
    prefix = int(cidr.split("/")[1])
    private = prefix + max(1, math.ceil(math.log2(azs))) + 1
    return private, min(28, private + 4)


def _cluster(spec: GovernanceSpec, base_dir: Optional[Path], cat: catalog.Catalog) -> ClusterPlan:
    c = spec.cluster
    roles = {r.name: r for r in slurm_groups(spec)} if c.orchestrator == "slurm" else {}
    groups = tuple(_group(g, i, cat, roles.get(g.name), autoscaled=g.autoscale and c.auto_scaling is not None)
                   for i, g in sorted(enumerate(c.instance_groups), key=lambda ig: ig[1].name))
    admin_index = {arn: i for i, arn in reversed(list(enumerate(c.admins)))}  # the first listing of each ARN
    e = c.existing
    eks_name = e.eks_cluster_name if e else names.eks_cluster(c.name)
    return ClusterPlan(
        name=c.name,
        eks_name=eks_name,
        eks_arn=f"arn:{partition_of(spec.accounts.capacity.region)}:eks:{spec.accounts.capacity.region}:"
                f"{spec.accounts.capacity.id}:cluster/{eks_name}",
        kubernetes_version=c.kubernetes_version,
        authentication_mode=c.authentication_mode,
        endpoint_access=c.endpoint_access,
        admin_cidrs=tuple(c.admin_cidrs),
        admins=tuple(AdminPlan(arn, names.principal_key(arn), path=f"cluster.admins[{admin_index[arn]}]")
                     for arn in sorted(c.admins)),
        instance_groups=groups,
        addon_versions=pinned(c.addon_versions, c.kubernetes_version),  # every add-on pinned (addon_defaults)
        dependencies_chart=chart_plan(c.dependencies_chart, base_dir) if c.dependencies_chart else None,
        lifecycle_bucket=names.lifecycle_bucket(spec.name, spec.accounts.capacity.id, spec.accounts.capacity.region),
        node_recovery=c.node_recovery,
        node_provisioning_mode=c.node_provisioning_mode,
        # With existing, the cluster runs its own operators unless the spec lists the ones to install.
        operators=tuple(sorted(set(c.operators))) if e is None or "operators" in c.model_fields_set else (),
        image_registries=image_registries(spec, partition_of(spec.accounts.capacity.region)),
        viewers=tuple(sorted(set(c.viewers))),
        member_cluster_reads=c.member_cluster_reads,
        existing=ExistingClusterPlan(
            hyperpod_arn=e.hyper_pod_cluster_arn, vpc_id=e.vpc_id, subnet_ids=tuple(e.subnet_ids),
            security_group_id=e.security_group_id, installs_scheduler=e.installs.scheduler,
            installs_observability=e.installs.observability, self_managed_kueue=e.self_managed_kueue,
            network_policy_enforcer=e.network_policy_enforcement.enforcer if e.network_policy_enforcement else None,
            network_policy_reason=e.network_policy_enforcement.reason if e.network_policy_enforcement else None,
            operators=tuple(sorted(e.operators)),
        ) if e else None,
        api_access=api_sources(c),
        slurm=_slurm_orchestrator(spec),
        auto_scaling=c.auto_scaling,
    )


def _slurm_orchestrator(spec: GovernanceSpec) -> Optional[SlurmOrchestratorPlan]:
    """``Orchestrator.Slurm`` of a ``cluster.orchestrator: slurm`` spec (its ``cluster.slurm`` settings); None for
    EKS."""
    if spec.cluster.orchestrator != "slurm":
        return None
    settings = spec.cluster.slurm or ClusterSlurm()
    db = settings.accounting_database
    return SlurmOrchestratorPlan(
        settings.config_strategy,
        AccountingDatabasePlan(db.endpoint, db.secret_arn, db.name, db.port) if db else None)


# Deep health checks HyperPod runs on an accelerated node when the spec names none: they stress accelerators and
# their interconnect, which CPU types do not have.
DEFAULT_DEEP_HEALTH_CHECKS = ("InstanceStress", "InstanceConnectivity")


def _patching(g: InstanceGroup) -> Optional[PatchingPlan]:
    p = g.patching
    if p is None:
        return None
    return PatchingPlan(p.schedule_expression, {"whenIdle": "WhenIdle", "whenAllIdle": "WhenAllIdle"}.get(p.auto or ""),
                        batch=(str(p.batch.service["Type"]), int(p.batch.service["Value"])) if p.batch else None,  # type: ignore[call-overload]
                        wait_seconds=p.wait_seconds, rollback_alarms=tuple(p.rollback_alarms))


def _group(g: InstanceGroup, index: int, cat: catalog.Catalog, slurm: Optional[SlurmGroupPlan], *,
           autoscaled: bool = False) -> InstanceGroupPlan:
    accelerated = cat.lookup(g.instance_type).accelerators > 0
    if g.deep_health_checks is not None:
        checks = tuple(g.deep_health_checks)
    else:  # AWS: an autoscaled group runs none (they take an hour, and Karpenter would over-provision meanwhile)
        checks = DEFAULT_DEEP_HEALTH_CHECKS if accelerated and not autoscaled else ()
    lifecycle = (LifecyclePlan(g.lifecycle.source_s3_uri, g.lifecycle.on_create, g.lifecycle.bucket,
                               g.lifecycle.prefix) if g.lifecycle else None)
    return InstanceGroupPlan(
        g.name, g.instance_type, g.count, g.volume_size_gb, accelerated, g.mig.profile if g.mig else None,
        path=f"cluster.instanceGroups[{index}]",
        training_plan_arn=g.training_plan_arn,
        subnet_ids=tuple(sorted(g.subnet_ids)),
        labels=tuple(sorted(g.labels.items())),
        # A dedicated group's taint joins the spec's (which may not use its key): KubernetesConfig.Taints.
        taints=tuple(sorted((*(TaintPlan(t.key, t.value, t.effect) for t in g.taints),
                             *((TaintPlan(DEDICATED_KEY, g.dedicated_to, "NoSchedule"),) if g.dedicated_to else ())),
                            key=lambda t: (t.key, t.effect))),
        lifecycle=lifecycle,
        volume_kms_key_id=g.volume_kms_key_id,
        deep_health_checks=checks,
        deep_health_checks_given=g.deep_health_checks is not None,
        threads_per_core=g.threads_per_core,
        dedicated_to=g.dedicated_to,
        slurm=slurm,
        instance_types=tuple(g.instance_types),
        min_count=g.min_count,
        capacity_type=g.capacity,
        image_id=g.image_id,
        image_release_version=g.image.release_version if g.image else None,
        patching=_patching(g),
        autoscaled=autoscaled,
    )
