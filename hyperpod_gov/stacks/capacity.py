"""The capacity account: VPC, EKS, HyperPod cluster, add-ons and the scheduler; for a Slurm cluster VPC, HyperPod
cluster, file system and the lifecycle scripts that apply the governance on the controller."""

from __future__ import annotations

from typing import Any, Mapping, Optional

from aws_cdk import Annotations, CfnOutput, Fn, aws_ec2 as ec2, aws_eks_v2 as eks
from constructs import Construct

from hyperpod_gov.constructs import (
    ClusterAddons,
    EksCluster,
    HyperPodCluster,
    LifecycleScripts,
    Network,
    Observability,
    SchedulerInstall,
)
from hyperpod_gov.constructs.evidence import evidence_bucket
from hyperpod_gov.constructs.hyperpod_cluster import SlurmHyperPodCluster
from hyperpod_gov.constructs.prometheus import SlurmPrometheus
from hyperpod_gov.constructs.bundled_provider import HandlerPlacement
from hyperpod_gov.constructs.lifecycle import (SLURM_LIFECYCLE_DIR, acknowledge_bucket_deployment, add_slurm_files,
                                               slurm_parameters)
from hyperpod_gov.constructs.operators import Operators
from hyperpod_gov.constructs.shared_storage import SharedFileSystem
from hyperpod_gov.plan import Plan
from hyperpod_gov.plan.connect import kubeconfig_command
from hyperpod_gov.plan.evidence import evidence_of
from hyperpod_gov.plan.invariants import provider_in_vpc
from hyperpod_gov.plan.operators import tls_bucket_name

from .base import SpecStack


class CapacityStack(SpecStack):
    """Everything the shared cluster needs before any team is governed on it."""

    def __init__(self, scope: Construct, id: str, *, plan: Plan, vpc: Optional[ec2.IVpc] = None,
                 **kwargs: Any) -> None:
        c = plan.cluster
        super().__init__(scope, id, plan=plan, what=f"HyperPod cluster {c.name} and its EKS cluster", **kwargs)
        self._azs = plan.network.availability_zones
        self.network = Network(self, "Network", network=plan.network, vpc=vpc)
        self.eks = EksCluster(self, "Eks", cluster=c, network=self.network,
                              authentication_mode=c.authentication_mode)
        self.addons = ClusterAddons(self, "Addons", versions=c.addon_versions, cluster=self.eks.cluster)
        self.lifecycle = LifecycleScripts(self, "LifecycleScripts", bucket_name=c.lifecycle_bucket)
        self.hyperpod = HyperPodCluster(
            self,
            "HyperPod",
            plan=c,
            network=self.network,
            cluster=self.eks.cluster,
            lifecycle=self.lifecycle,
            depends_on=self.addons.networking,
        )
        # These run pods, so they need the HyperPod nodes to report healthy.
        self.addons.coredns.node.add_dependency(self.hyperpod.resource)
        self.observability = Observability(self, "Observability", version=c.addon_versions.cloudwatch_observability,
                                           cluster=self.eks.cluster, account=plan.account, cluster_arn=c.eks_arn)
        self.observability.node.add_dependency(self.hyperpod.resource, self.addons.pod_identity_agent)
        self.scheduler = SchedulerInstall(self, "Scheduler", task_governance=plan.task_governance,
                                          versions=c.addon_versions, kueue_config=plan.kueue_config,
                                          cluster=self.eks.cluster)
        self.scheduler.node.add_dependency(self.hyperpod.resource, self.addons.coredns)
        # cluster.operators: their pods need the nodes, their roles the Pod Identity agent, and the training
        # operator checks the task-governance add-on's version when it installs.
        self.operators = Operators(self, "Operators", addons=plan.operator_addons, cluster=self.eks.cluster,
                                   account=plan.account, eks_arn=c.eks_arn, hyperpod_arn=self.hyperpod.cluster_arn,
                                   tls_bucket_name=tls_bucket_name(plan.name, plan.account, plan.region),
                                   charts=plan.operator_charts)
        self.operators.node.add_dependency(self.hyperpod.resource, self.addons.pod_identity_agent, self.scheduler)
        # cluster.sharedStorage: the file system the teams' volumes name, and the FSx CSI driver (it runs on nodes).
        storage = plan.shared_storage
        self.shared_storage = SharedFileSystem(
            self, "SharedStorage", storage=storage, network=self.network, nodes=self.hyperpod.security_group,
            cluster=self.eks.cluster, account=plan.account, cluster_arn=c.eks_arn,
            # One aws-fsx-csi-driver per cluster: with the inference operator, its driver (and role) serves both.
            install_driver="inference" not in c.operators,
        ) if storage is not None and storage.file_system.created else None
        if self.shared_storage is not None and self.shared_storage.addon is not None:
            self.shared_storage.addon.node.add_dependency(self.hyperpod.resource, self.addons.pod_identity_agent)
        acknowledge_bucket_deployment(self, self.lifecycle)
        cluster_outputs(self, plan, hyperpod_cluster_arn=self.hyperpod.cluster_arn, cluster=self.eks.cluster)

    @property
    def availability_zones(self) -> list[str]:
        """The spec's AZs: no lookup, so synth needs no credentials."""
        return list(self._azs)


def cluster_outputs(scope: Construct, plan: Plan, *, hyperpod_cluster_arn: str,
                    cluster: Optional[eks.Cluster] = None) -> Construct:
    """How to reach the cluster, as stack outputs (``aws cloudformation describe-stacks``): the EKS cluster's
    name and ARN, the HyperPod cluster's ARN and the kubeconfig command (plan/connect.py writes it); for a cluster
    hyperpod-gov creates also its API endpoint and certificate authority, from which members in other accounts
    (where EKS does not authorize DescribeCluster) write a kubeconfig that runs `aws eks get-token`."""
    outputs = Construct(scope, "Outputs")
    if cluster is not None:
        CfnOutput(outputs, "EksEndpoint", value=cluster.cluster_endpoint,
                  description="The EKS API endpoint (private unless endpointAccess says otherwise)")
        CfnOutput(outputs, "EksCertificateAuthority", value=cluster.cluster_certificate_authority_data,
                  description="The EKS cluster's certificate authority (base64), for a kubeconfig")
    for id, value, what in (
        ("EksClusterName", plan.eks_cluster_name, "Name of the EKS cluster that orchestrates HyperPod"),
        ("EksClusterArn", plan.cluster.eks_arn, "ARN of the EKS cluster"),
        ("HyperPodClusterArn", hyperpod_cluster_arn, "ARN of the HyperPod cluster (hyp set-cluster-context)"),
        ("KubeconfigCommand", kubeconfig_command(plan), "Run it with a team role's credentials to reach the API"),
    ):
        CfnOutput(outputs, id, value=value, description=what)
    return outputs


class SlurmCapacityStack(SpecStack):
    """A Slurm-orchestrated cluster (``cluster.orchestrator: slurm``) and everything it needs: the VPC and its
    endpoints (no EKS ones), the lifecycle bucket with the Slurm lifecycle scripts and the governance files
    (``files``: relative path -> text, from ``hyperpod_gov.slurm.render.files``), the shared FSx for Lustre file
    system when the spec creates one, and the HyperPod cluster. No EKS cluster, add-ons, scheduler or charts: the
    controller's on_create.sh applies the governance once Slurm is up (docs/slurm-stacks.md)."""

    def __init__(self, scope: Construct, id: str, *, plan: Plan, files: Mapping[str, str],
                 vpc: Optional[ec2.IVpc] = None, **kwargs: Any) -> None:
        c, slurm = plan.cluster, plan.slurm
        if slurm is None:
            raise ValueError("SlurmCapacityStack builds a Slurm cluster: the plan's cluster.orchestrator is eks")
        super().__init__(scope, id, plan=plan, what=f"HyperPod cluster {c.name} (Slurm)", **kwargs)
        self._azs = plan.network.availability_zones
        self.network = Network(self, "Network", network=plan.network, vpc=vpc)
        self.lifecycle = LifecycleScripts(self, "LifecycleScripts", bucket_name=c.lifecycle_bucket,
                                          source=SLURM_LIFECYCLE_DIR)
        self.hyperpod = SlurmHyperPodCluster(self, "HyperPod", plan=c, network=self.network, lifecycle=self.lifecycle)
        # cluster.sharedStorage: the file system the teams' data directories are on, mounted by on_create.sh.
        storage = plan.shared_storage
        self.shared_storage = SharedFileSystem(
            self, "SharedStorage", storage=storage, network=self.network, nodes=self.hyperpod.security_group,
            cluster=None, account=plan.account, cluster_arn="", install_driver=False,
        ) if storage is not None and storage.file_system.created else None
        file_system: Optional[Mapping[str, str]] = None
        if self.shared_storage is not None:
            file_system = self.shared_storage.values
        elif storage is not None:  # an existing file system: its names as the spec gives them
            file_system = {"DNSName": storage.file_system.dns_name,
                           "LustreMountName": storage.file_system.mount_name}
        add_slurm_files(self.lifecycle, parameters=slurm_parameters(slurm, file_system), files=files)
        acknowledge_bucket_deployment(self, self.lifecycle)
        slurm_outputs(self, plan, hyperpod_cluster_arn=self.hyperpod.cluster_arn)
        self.evidence = evidence_bucket(self, evidence_of(plan))  # a Slurm spec has no monitoring stack
        # monitoring.prometheus: the workspace and the cluster's observability extension writing to it.
        self.prometheus = None if plan.prometheus is None else SlurmPrometheus(
            self, "Prometheus", plan=plan.prometheus, cluster_arn=self.hyperpod.cluster_arn,
            execution_role=self.hyperpod.execution_role, account=plan.account,
            placement=HandlerPlacement(self.network.vpc, self.network.private_subnets, plan.network.cidr)
            if provider_in_vpc(plan) else None)
        unused = without_effect_on_slurm(plan)
        if unused:
            Annotations.of(self).add_warning_v2(WARN_SLURM_UNUSED, (
                f"{'; '.join(unused)}: a Slurm cluster has no monitoring or Unified Studio stack, so these keys "
                "have no effect (docs/slurm-stacks.md); remove them or set cluster.orchestrator: eks (a team's "
                "unifiedStudio is used with teams[].slurm.studioUser: its role is the one the Studio task view "
                "steps tag, docs/slurm.md)."))

    @property
    def availability_zones(self) -> list[str]:
        """The spec's AZs: no lookup, so synth needs no credentials."""
        return list(self._azs)


WARN_SLURM_UNUSED = "hyperpod-gov:slurmKeysWithoutEffect"


def without_effect_on_slurm(plan: Plan) -> list[str]:
    """The spec keys whose only emitters are the EKS-side stacks a Slurm spec does not have (the alarms' e-mail,
    a team's Unified Studio project), as ``path (value)``, sorted. A project of a team with a ``studioUser`` is
    used: the contract record names its role in the Studio task view's steps (plan/slurm_task_view.py)."""
    out = []
    if plan.alerting.platform_email:
        out.append(f"monitoring.platformEmail ({plan.alerting.platform_email})")
    for team in plan.tenants:
        if team.slurm is not None and team.slurm.studio_user is not None:
            continue
        if team.contract is not None and team.contract.unified_studio is not None:
            out.append(f"{team.path}.contract.unifiedStudio (project {team.contract.unified_studio.project_id})")
    return sorted(out)


def slurm_outputs(scope: Construct, plan: Plan, *, hyperpod_cluster_arn: str) -> Construct:
    """How to reach a Slurm cluster, as stack outputs: its ARN, and the SSM target of its login nodes (or of the
    controller, without a login group) to which ``aws ssm start-session --target`` appends an instance id."""
    slurm = plan.slurm
    if slurm is None:
        raise ValueError("slurm_outputs describes a Slurm cluster")
    outputs = Construct(scope, "Outputs")
    entry = next((g for g in slurm.groups if g.node_type == "Login"), None) or next(
        g for g in slurm.groups if g.node_type == "Controller")
    cluster_id = Fn.select(1, Fn.split("/", hyperpod_cluster_arn))
    for id, value, what in (
        ("HyperPodClusterArn", hyperpod_cluster_arn, "ARN of the HyperPod cluster (Slurm)"),
        ("SsmTarget", Fn.join("", ["sagemaker-cluster:", cluster_id, f"_{entry.name}-"]),
         f"aws ssm start-session --target <this><instance id of a {entry.node_type.lower()} node> "
         "(aws sagemaker list-cluster-nodes)"),
    ):
        CfnOutput(outputs, id, value=value, description=what)
    return outputs
