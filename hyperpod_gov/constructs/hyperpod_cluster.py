"""The HyperPod cluster: with the EKS orchestrator (instance groups, node security group, dependencies chart) or
with Slurm (``SlurmHyperPodCluster``: each group's SlurmConfig, no EKS)."""

from __future__ import annotations

from typing import Optional, Sequence

from aws_cdk import Annotations, Aws, aws_ec2 as ec2, aws_eks_v2 as eks, aws_iam as iam, aws_sagemaker as sagemaker
from constructs import Construct, IConstruct

from ..plan import ClusterPlan
from ..plan.fields import emit
from ..plan.tables import CLUSTER, INSTANCE_GROUP
from ..spec.cluster_options import instance_types_source
from ._l1 import l1_kwargs
from ._nag import acknowledge, wildcard
from .autoscaling import AutoscalingRole
from .dependencies import DependenciesChart
from .execution_role import execution_role, slurm_execution_role
from .lifecycle import ON_CREATE, LifecycleScripts
from .network import Network

WARN_NO_DEPENDENCIES_CHART = "hyperpod-gov:dependenciesChartMissing"
WARN_CONTROLLER_OWN_LIFECYCLE = "hyperpod-gov:slurmControllerOwnLifecycle"


class _InstanceGroups(Construct):
    """What both orchestrators' clusters share: the ``CfnCluster`` the field tables emit, the groups' instance types
    and their own lifecycle scripts."""

    execution_role: iam.Role
    security_group: ec2.SecurityGroup

    def _acknowledge_instance_types(self, c: ClusterPlan) -> None:
        types = sorted({g.instance_type for g in c.instance_groups})
        acknowledge(self.resource, [("CloudFormation-Validate::E3644", (
            f"validate (HPG-I006) checked {', '.join(types)} against {instance_types_source()}, which is newer "
            "than the data aws-cdk-lib's template check ships (that data lacks, e.g., ml.p6-b200.48xlarge in "
            "us-east-1); where the two disagree, the newer data wins."))])

    def _grant_own_lifecycle_scripts(self, c: ClusterPlan) -> None:
        """Read access to each group's own lifecycle scripts: their bucket and prefix only (the managed policy
        covers the sagemaker-* buckets alone)."""
        own = sorted({(g.lifecycle.bucket, g.lifecycle.prefix) for g in c.instance_groups
                      if g.lifecycle is not None and g.lifecycle.bucket is not None})
        findings = []
        for bucket, prefix in own:
            objects = f"arn:{Aws.PARTITION}:s3:::{bucket}/{prefix}*"
            self.execution_role.add_to_policy(iam.PolicyStatement(
                actions=["s3:GetObject"], resources=[objects]))
            self.execution_role.add_to_policy(iam.PolicyStatement(
                actions=["s3:ListBucket"], resources=[f"arn:{Aws.PARTITION}:s3:::{bucket}"],
                conditions={"StringLike": {"s3:prefix": [f"{prefix}*"]}} if prefix else None))
            findings.append((wildcard("Resource", f"arn:<AWS::Partition>:s3:::{bucket}/{prefix}*"),
                             f"The lifecycle scripts an instance group names (s3://{bucket}/{prefix}): the objects "
                             "under that prefix of that bucket only, read-only."))
        if findings:
            acknowledge(self.execution_role, findings)

    def _cluster(self, c: ClusterPlan, network: Network, lifecycle: LifecycleScripts,
                 eks_arn: Optional[str] = None) -> sagemaker.CfnCluster:
        """The ``CfnCluster`` the ``CLUSTER`` and ``INSTANCE_GROUP`` tables emit for the plan, given the deploy-time
        values: the execution role, the shipped lifecycle scripts, the node security group, the VPC's private
        subnets and, with EKS, the EKS cluster's ARN."""
        nodes = [self.security_group.security_group_id]
        self.autoscaling: Optional[AutoscalingRole] = None
        if c.auto_scaling is not None:
            self.autoscaling = AutoscalingRole(self, "Autoscaling", plan=c)
        group = {"ExecutionRole": self.execution_role.role_arn, "LifeCycleConfig.SourceS3Uri": lifecycle.source_s3_uri,
                 "LifeCycleConfig.OnCreate": ON_CREATE, "OverrideVpcConfig.SecurityGroupIds": nodes}
        subnets = network.vpc.select_subnets(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS)
        props = emit(CLUSTER, c, {"InstanceGroups": [emit(INSTANCE_GROUP, g, group) for g in c.instance_groups],
                                  "Orchestrator.Eks.ClusterArn": eks_arn, "VpcConfig.SecurityGroupIds": nodes,
                                  "VpcConfig.Subnets": subnets.subnet_ids,
                                  "ClusterRole": self.autoscaling.role.role_arn if self.autoscaling else None})
        resource = sagemaker.CfnCluster(self, "Resource", **l1_kwargs(sagemaker.CfnCluster, props))
        if self.autoscaling is not None:
            self.autoscaling.grant_cluster(resource.attr_cluster_arn)
        return resource


class HyperPodCluster(_InstanceGroups):
    """L2 over ``AWS::SageMaker::Cluster`` with the EKS orchestrator.

    ``node.default_child`` is the ``CfnCluster``: use it as the escape hatch.
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        plan: ClusterPlan,
        network: Network,
        cluster: eks.Cluster,
        lifecycle: LifecycleScripts,
        depends_on: Sequence[IConstruct] = (),
    ) -> None:
        super().__init__(scope, id)
        c = plan
        self.security_group = ec2.SecurityGroup(
            self, "NodeSecurityGroup", vpc=network.vpc, allow_all_outbound=True,
            description=f"HyperPod {c.name} nodes: all traffic among themselves (EFA, NCCL) and with EKS",
        )
        # Ingress only: both groups already allow all egress.
        self.security_group.add_ingress_rule(self.security_group, ec2.Port.all_traffic(), "HyperPod nodes (EFA, NCCL)")
        for sg in cluster.connections.security_groups:
            self.security_group.add_ingress_rule(sg, ec2.Port.all_traffic(), "EKS control plane")
            sg.add_ingress_rule(self.security_group, ec2.Port.all_traffic(), "HyperPod nodes")

        self.execution_role = execution_role(self, "ExecutionRole", cluster_name=c.name,
                                             cluster_arn=cluster.cluster_arn, vpc_arn=network.vpc.vpc_arn,
                                             image_registries=c.image_registries)
        self.dependencies: Optional[DependenciesChart] = None
        if c.dependencies_chart is not None:
            self.dependencies = DependenciesChart(self, "Dependencies", chart=c.dependencies_chart, cluster=cluster)
        else:
            Annotations.of(self).add_warning_v2(
                WARN_NO_DEPENDENCIES_CHART,
                "cluster.dependenciesChart is not set, so the HyperPod dependencies Helm chart (health-monitoring "
                "agent, device plugins) is not installed before the cluster: HyperPod cannot detect and replace "
                "faulty nodes. Set cluster.dependenciesChart to a Helm repository, OCI reference or chart directory.",
            )

        self.resource = self._cluster(c, network, lifecycle, eks_arn=cluster.cluster_arn)
        self._acknowledge_instance_types(c)
        self._grant_own_lifecycle_scripts(c)
        self.resource.node.add_dependency(lifecycle.deployment)
        for dependency in depends_on:
            self.resource.node.add_dependency(dependency)
        if self.dependencies is not None:
            self.resource.node.add_dependency(self.dependencies)

        self.cluster_arn = self.resource.attr_cluster_arn
        self.cluster_name = c.name


class SlurmHyperPodCluster(_InstanceGroups):
    """L2 over ``AWS::SageMaker::Cluster`` with the Slurm orchestrator: ``Orchestrator.Slurm`` (the config strategy,
    the accounting database when the spec names one) and each group's ``SlurmConfig`` (node type; a Compute group's
    partition). No EKS cluster: the nodes' security group admits only the nodes themselves (slurmctld, slurmd,
    slurmdbd, srun, EFA and NCCL all run between them).

    ``node.default_child`` is the ``CfnCluster``: use it as the escape hatch.
    """

    def __init__(self, scope: Construct, id: str, *, plan: ClusterPlan, network: Network,
                 lifecycle: LifecycleScripts) -> None:
        super().__init__(scope, id)
        c = plan
        if c.slurm is None:
            raise ValueError(f"SlurmHyperPodCluster builds a Slurm cluster: cluster {c.name}'s orchestrator is eks")
        self.security_group = ec2.SecurityGroup(
            self, "NodeSecurityGroup", vpc=network.vpc, allow_all_outbound=True,
            description=f"HyperPod {c.name} nodes: all traffic among themselves (Slurm daemons, srun, EFA, NCCL)",
        )
        self.security_group.add_ingress_rule(self.security_group, ec2.Port.all_traffic(),
                                             "HyperPod nodes (Slurm, EFA, NCCL)")
        self.execution_role = slurm_execution_role(self, "ExecutionRole", cluster_name=c.name,
                                                   image_registries=c.image_registries)
        self.resource = self._cluster(c, network, lifecycle)
        self._acknowledge_instance_types(c)
        self._grant_own_lifecycle_scripts(c)
        self.resource.node.add_dependency(lifecycle.deployment)
        for g in c.instance_groups:
            if g.slurm is not None and g.slurm.node_type == "Controller" and g.lifecycle is not None:
                Annotations.of(self).add_warning_v2(
                    WARN_CONTROLLER_OWN_LIFECYCLE,
                    f"{g.path}.lifecycle: the controller group {g.name} runs its own lifecycle scripts "
                    f"({g.lifecycle.source_s3_uri}), so hyperpod-gov's on_create.sh does not apply the Slurm "
                    f"governance: have them run slurm/posix.sh and slurm/apply.sh from {lifecycle.source_s3_uri} "
                    "once Slurm is up, or drop the group's lifecycle key.",
                )
        self.cluster_arn = self.resource.attr_cluster_arn
        self.cluster_name = c.name
