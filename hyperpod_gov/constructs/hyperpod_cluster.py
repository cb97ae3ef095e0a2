"""The HyperPod cluster: with the EKS orchestrator (instance groups, node security group, dependencies chart) or
with Slurm (``SlurmHyperPodCluster``: each group's SlurmConfig, no EKS)."""

from __future__ import annotations

from typing import Mapping, Optional, Sequence

from aws_cdk import Annotations, Aws, aws_ec2 as ec2, aws_eks_v2 as eks, aws_iam as iam, aws_sagemaker as sagemaker
from constructs import Construct, IConstruct

from ..plan import ClusterPlan, InstanceGroupPlan
from ..plan.plan import LifecyclePlan
from ..plan.slurm import SlurmGroupPlan, SlurmPlan
from ..spec.cluster_options import instance_types_source
from ._nag import acknowledge, wildcard
from .dependencies import DependenciesChart
from .execution_role import execution_role, slurm_execution_role
from .lifecycle import ON_CREATE, LifecycleScripts
from .network import Network

WARN_NO_DEPENDENCIES_CHART = "hyperpod-gov:dependenciesChartMissing"
WARN_CONTROLLER_OWN_LIFECYCLE = "hyperpod-gov:slurmControllerOwnLifecycle"


class _InstanceGroups(Construct):
    """What both orchestrators' clusters share: the groups' lifecycle scripts and their storage."""

    execution_role: iam.Role

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

    def _lifecycle(self, group: InstanceGroupPlan,
                   lifecycle: LifecycleScripts) -> sagemaker.CfnCluster.ClusterLifeCycleConfigProperty:
        own: Optional[LifecyclePlan] = group.lifecycle
        if own is not None:
            return sagemaker.CfnCluster.ClusterLifeCycleConfigProperty(source_s3_uri=own.source_s3_uri,
                                                                       on_create=own.on_create)
        return sagemaker.CfnCluster.ClusterLifeCycleConfigProperty(source_s3_uri=lifecycle.source_s3_uri,
                                                                   on_create=ON_CREATE)

    @staticmethod
    def _storage(group: InstanceGroupPlan) -> Optional[list[sagemaker.CfnCluster.ClusterInstanceStorageConfigProperty]]:
        if not group.volume_size_gb:
            return None
        return [
            sagemaker.CfnCluster.ClusterInstanceStorageConfigProperty(
                ebs_volume_config=sagemaker.CfnCluster.ClusterEbsVolumeConfigProperty(
                    volume_size_in_gb=group.volume_size_gb, volume_kms_key_id=group.volume_kms_key_id
                )
            )
        ]


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

        subnets = network.vpc.select_subnets(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS)
        self.resource = sagemaker.CfnCluster(
            self,
            "Resource",
            cluster_name=c.name,
            node_recovery=c.node_recovery,
            node_provisioning_mode=c.node_provisioning_mode,
            orchestrator=sagemaker.CfnCluster.OrchestratorProperty(
                eks=sagemaker.CfnCluster.ClusterOrchestratorEksConfigProperty(cluster_arn=cluster.cluster_arn)
            ),
            vpc_config=sagemaker.CfnCluster.VpcConfigProperty(
                security_group_ids=[self.security_group.security_group_id],
                subnets=subnets.subnet_ids,
            ),
            instance_groups=[self._group(g, lifecycle) for g in c.instance_groups],
        )
        self._acknowledge_instance_types(c)
        self._grant_own_lifecycle_scripts(c)
        self.resource.node.add_dependency(lifecycle.deployment)
        for dependency in depends_on:
            self.resource.node.add_dependency(dependency)
        if self.dependencies is not None:
            self.resource.node.add_dependency(self.dependencies)

        self.cluster_arn = self.resource.attr_cluster_arn
        self.cluster_name = c.name

    def _group(self, group: InstanceGroupPlan,
               lifecycle: LifecycleScripts) -> sagemaker.CfnCluster.ClusterInstanceGroupProperty:
        storage = self._storage(group)
        labels, taints = group.kubernetes_labels, group.taints
        kubernetes = None
        if labels or taints:
            kubernetes = sagemaker.CfnCluster.ClusterKubernetesConfigProperty(
                labels=labels or None,
                taints=[sagemaker.CfnCluster.ClusterKubernetesTaintProperty(key=t.key, value=t.value, effect=t.effect)
                        for t in taints] or None,
            )
        return sagemaker.CfnCluster.ClusterInstanceGroupProperty(
            instance_group_name=group.name,
            instance_type=group.instance_type,
            instance_count=group.count,
            execution_role=self.execution_role.role_arn,
            life_cycle_config=self._lifecycle(group, lifecycle),
            instance_storage_configs=storage,
            # A partitioned group: HyperPod's GPU operator applies the MIG layout its label names.
            kubernetes_config=kubernetes,
            on_start_deep_health_checks=list(group.deep_health_checks) or None,
            training_plan_arn=group.training_plan_arn,
            # The group's own subnets keep the cluster's node security group (the service requires one).
            override_vpc_config=(sagemaker.CfnCluster.VpcConfigProperty(
                security_group_ids=[self.security_group.security_group_id], subnets=list(group.subnet_ids))
                if group.subnet_ids else None),
            threads_per_core=group.threads_per_core,
        )


class SlurmHyperPodCluster(_InstanceGroups):
    """L2 over ``AWS::SageMaker::Cluster`` with the Slurm orchestrator: ``Orchestrator.Slurm`` (the config strategy,
    the accounting database when the spec names one) and each group's ``SlurmConfig`` (node type; a Compute group's
    partition). No EKS cluster: the nodes' security group admits only the nodes themselves (slurmctld, slurmd,
    slurmdbd, srun, EFA and NCCL all run between them).

    ``node.default_child`` is the ``CfnCluster``: use it as the escape hatch.
    """

    def __init__(self, scope: Construct, id: str, *, plan: ClusterPlan, slurm: SlurmPlan, network: Network,
                 lifecycle: LifecycleScripts) -> None:
        super().__init__(scope, id)
        c = plan
        self.security_group = ec2.SecurityGroup(
            self, "NodeSecurityGroup", vpc=network.vpc, allow_all_outbound=True,
            description=f"HyperPod {c.name} nodes: all traffic among themselves (Slurm daemons, srun, EFA, NCCL)",
        )
        self.security_group.add_ingress_rule(self.security_group, ec2.Port.all_traffic(),
                                             "HyperPod nodes (Slurm, EFA, NCCL)")
        self.execution_role = slurm_execution_role(self, "ExecutionRole", cluster_name=c.name,
                                                   image_registries=c.image_registries)
        roles: Mapping[str, SlurmGroupPlan] = {g.name: g for g in slurm.groups}
        db = slurm.accounting_database
        subnets = network.vpc.select_subnets(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS)
        self.resource = sagemaker.CfnCluster(
            self,
            "Resource",
            cluster_name=c.name,
            node_recovery=c.node_recovery,
            node_provisioning_mode=c.node_provisioning_mode,
            orchestrator=sagemaker.CfnCluster.OrchestratorProperty(
                slurm=sagemaker.CfnCluster.ClusterOrchestratorSlurmConfigProperty(
                    slurm_config_strategy=slurm.config_strategy,
                    accounting_database=sagemaker.CfnCluster.ClusterAccountingDatabaseProperty(
                        endpoint=db.endpoint, secret_arn=db.secret_arn, name=db.name, port=db.port,
                    ) if db is not None else None,
                )
            ),
            vpc_config=sagemaker.CfnCluster.VpcConfigProperty(
                security_group_ids=[self.security_group.security_group_id],
                subnets=subnets.subnet_ids,
            ),
            instance_groups=[self._slurm_group(g, roles[g.name], lifecycle) for g in c.instance_groups],
        )
        self._acknowledge_instance_types(c)
        self._grant_own_lifecycle_scripts(c)
        self.resource.node.add_dependency(lifecycle.deployment)
        for g in c.instance_groups:
            if roles[g.name].node_type == "Controller" and g.lifecycle is not None:
                Annotations.of(self).add_warning_v2(
                    WARN_CONTROLLER_OWN_LIFECYCLE,
                    f"{g.path}.lifecycle: the controller group {g.name} runs its own lifecycle scripts "
                    f"({g.lifecycle.source_s3_uri}), so hyperpod-gov's on_create.sh does not apply the Slurm "
                    f"governance: have them run slurm/posix.sh and slurm/apply.sh from {lifecycle.source_s3_uri} "
                    "once Slurm is up, or drop the group's lifecycle key.",
                )
        self.cluster_arn = self.resource.attr_cluster_arn
        self.cluster_name = c.name

    def _slurm_group(self, group: InstanceGroupPlan, role: SlurmGroupPlan,
                     lifecycle: LifecycleScripts) -> sagemaker.CfnCluster.ClusterInstanceGroupProperty:
        return sagemaker.CfnCluster.ClusterInstanceGroupProperty(
            instance_group_name=group.name,
            instance_type=group.instance_type,
            instance_count=group.count,
            execution_role=self.execution_role.role_arn,
            life_cycle_config=self._lifecycle(group, lifecycle),
            instance_storage_configs=self._storage(group),
            slurm_config=sagemaker.CfnCluster.ClusterSlurmConfigProperty(
                node_type=role.node_type,
                partition_names=[role.partition] if role.partition else None,
            ),
            on_start_deep_health_checks=list(group.deep_health_checks) or None,
            training_plan_arn=group.training_plan_arn,
            override_vpc_config=(sagemaker.CfnCluster.VpcConfigProperty(
                security_group_ids=[self.security_group.security_group_id], subnets=list(group.subnet_ids))
                if group.subnet_ids else None),
            threads_per_core=group.threads_per_core,
        )
