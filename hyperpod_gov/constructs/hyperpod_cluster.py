"""The HyperPod cluster (EKS orchestrator), its execution role and its lifecycle scripts."""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Sequence

from aws_cdk import (
    Annotations,
    Aws,
    Duration,
    RemovalPolicy,
    Stack,
    aws_ec2 as ec2,
    aws_eks_v2 as eks,
    aws_iam as iam,
    aws_s3 as s3,
    aws_s3_assets as s3_assets,
    aws_s3_deployment as s3deploy,
    aws_sagemaker as sagemaker,
)
from constructs import Construct, IConstruct

from .. import catalog
from ..spec.models import GovernanceSpec, HelmChart
from ._nag import acknowledge, managed_policy, wildcard
from .network import Network

LIFECYCLE_DIR = Path(__file__).resolve().parents[1] / "assets" / "lifecycle"
LIFECYCLE_PREFIX = "lifecycle/"
ON_CREATE = "on_create.sh"
DEEP_HEALTH_CHECKS = ("InstanceStress", "InstanceConnectivity")
INSTANCE_ROLE_POLICY = "AmazonSageMakerClusterInstanceRolePolicy"
WARN_NO_DEPENDENCIES_CHART = "hyperpod-gov:dependenciesChartMissing"
DEPENDENCIES_RELEASE = "hyperpod-dependencies"


def lifecycle_bucket_name(spec: GovernanceSpec) -> str:
    """The managed instance role policy only reads buckets whose names start with ``sagemaker-``."""
    cap = spec.accounts.capacity
    return f"sagemaker-{spec.name}-{cap.id}-{cap.region}"


class LifecycleScripts(Construct):
    """A ``sagemaker-`` bucket (encrypted, TLS-only, private, access-logged) holding the shipped scripts."""

    def __init__(self, scope: Construct, id: str, *, spec: GovernanceSpec, source: Path = LIFECYCLE_DIR) -> None:
        super().__init__(scope, id)
        self.access_logs = s3.Bucket(
            self,
            "AccessLogs",
            encryption=s3.BucketEncryption.S3_MANAGED,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            enforce_ssl=True,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
            removal_policy=RemovalPolicy.RETAIN,
            lifecycle_rules=[s3.LifecycleRule(expiration=Duration.days(365))],
        )
        acknowledge(self.access_logs, [("AwsSolutions-S1", "This is the access-log bucket of the lifecycle "
                                        "script bucket; logging it into itself would loop.")])
        self.bucket = s3.Bucket(
            self,
            "Resource",
            bucket_name=lifecycle_bucket_name(spec),
            encryption=s3.BucketEncryption.S3_MANAGED,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            enforce_ssl=True,
            versioned=True,
            server_access_logs_bucket=self.access_logs,
            server_access_logs_prefix="lifecycle-bucket/",
            removal_policy=RemovalPolicy.RETAIN,
        )
        self.deployment = s3deploy.BucketDeployment(
            self,
            "Upload",
            sources=[s3deploy.Source.asset(str(source))],
            destination_bucket=self.bucket,
            destination_key_prefix=LIFECYCLE_PREFIX,
            prune=True,
            retain_on_delete=True,
        )
        self.source_s3_uri = f"s3://{self.bucket.bucket_name}/{LIFECYCLE_PREFIX}"


def acknowledge_bucket_deployment(stack: Stack, lifecycle: LifecycleScripts) -> None:
    """The singleton handler of BucketDeployment lives at stack level, outside the LifecycleScripts scope."""
    bucket_id = stack.get_logical_id(lifecycle.bucket.node.default_child)  # type: ignore[arg-type]
    assets = f"arn:<AWS::Partition>:s3:::cdk-hnb659fds-assets-{stack.account}-{stack.region}/*"
    copy = "The BucketDeployment handler copies the lifecycle scripts from the CDK asset bucket into the " \
           "lifecycle bucket and prunes stale ones"
    for child in stack.node.children:
        if child.node.id.startswith("Custom::CDKBucketDeployment"):
            acknowledge(
                child,
                [
                    (managed_policy("service-role/AWSLambdaBasicExecutionRole"),
                     "Lets the BucketDeployment handler write its own logs; AWS-managed, CloudWatch Logs only."),
                    ("AwsSolutions-L1", "The BucketDeployment handler's runtime is pinned by aws-cdk-lib to "
                     "the one its bundled AWS CLI layer supports; it moves with aws-cdk-lib upgrades."),
                    (wildcard("Action", "s3:GetObject*"), f"{copy}: it reads objects and their versions."),
                    (wildcard("Action", "s3:GetBucket*"), f"{copy}: it reads the buckets' location."),
                    (wildcard("Action", "s3:List*"), f"{copy}: it lists both buckets to compare them."),
                    (wildcard("Action", "s3:DeleteObject*"), f"{copy}: pruning deletes stale scripts."),
                    (wildcard("Action", "s3:Abort*"), f"{copy}: it aborts failed multipart uploads."),
                    (wildcard("Resource", assets), f"{copy}: asset object keys are content hashes."),
                    (wildcard("Resource", f"<{bucket_id}.Arn>/*"), f"{copy}: it writes under lifecycle/."),
                ],
            )


def execution_role(scope: Construct, id: str, *, spec: GovernanceSpec, bucket: s3.IBucket,
                   cluster_arn: str) -> iam.Role:
    """HyperPod instance role: the managed policy, plus what EKS nodes need and nothing else."""
    role = iam.Role(
        scope,
        id,
        assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"),
        description=f"Execution role of HyperPod cluster {spec.cluster.name} instances",
        managed_policies=[iam.ManagedPolicy.from_aws_managed_policy_name(INSTANCE_ROLE_POLICY)],
    )
    region, account = Aws.REGION, Aws.ACCOUNT_ID
    statements = [
        # VPC CNI on HyperPod nodes runs with the instance role: ENIs and IPs in this account.
        iam.PolicyStatement(
            sid="ManageNodeNetworkInterfaces",
            actions=[
                "ec2:AssignPrivateIpAddresses",
                "ec2:AttachNetworkInterface",
                "ec2:CreateNetworkInterface",
                "ec2:CreateNetworkInterfacePermission",
                "ec2:DeleteNetworkInterface",
                "ec2:DeleteNetworkInterfacePermission",
                "ec2:DetachNetworkInterface",
                "ec2:ModifyNetworkInterfaceAttribute",
                "ec2:UnassignPrivateIpAddresses",
            ],
            resources=[
                f"arn:{Aws.PARTITION}:ec2:{region}:{account}:network-interface/*",
                f"arn:{Aws.PARTITION}:ec2:{region}:{account}:subnet/*",
                f"arn:{Aws.PARTITION}:ec2:{region}:{account}:security-group/*",
                f"arn:{Aws.PARTITION}:ec2:{region}:{account}:instance/*",
            ],
        ),
        iam.PolicyStatement(
            sid="TagNodeNetworkInterfaces",
            actions=["ec2:CreateTags"],
            resources=[f"arn:{Aws.PARTITION}:ec2:{region}:{account}:network-interface/*"],
        ),
        iam.PolicyStatement(
            sid="DescribeNetwork",  # Describe* calls support no resource-level permissions
            actions=[
                "ec2:DescribeDhcpOptions",
                "ec2:DescribeInstances",
                "ec2:DescribeNetworkInterfaces",
                "ec2:DescribeSecurityGroups",
                "ec2:DescribeSubnets",
                "ec2:DescribeVpcs",
            ],
            resources=["*"],
        ),
        iam.PolicyStatement(
            sid="PullImages",  # add-on images come from AWS-owned registries in other accounts
            actions=["ecr:BatchCheckLayerAvailability", "ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer"],
            resources=[f"arn:{Aws.PARTITION}:ecr:{region}:*:repository/*"],
        ),
        iam.PolicyStatement(sid="EcrLogin", actions=["ecr:GetAuthorizationToken"], resources=["*"]),
        iam.PolicyStatement(
            sid="PodIdentity", actions=["eks-auth:AssumeRoleForPodIdentity"], resources=[cluster_arn]
        ),
    ]
    for statement in statements:
        role.add_to_policy(statement)
    # No grant on the lifecycle bucket: the managed policy reads sagemaker-* buckets already.
    eni = "The VPC CNI on HyperPod nodes creates and attaches ENIs whose ids are unknown in advance; scoped " \
          "to this account and region"
    acknowledge(
        role,
        [
            (managed_policy(INSTANCE_ROLE_POLICY),
             f"{INSTANCE_ROLE_POLICY} is the AWS-managed policy HyperPod requires on the instance execution role."),
            (wildcard("Resource", "arn:<AWS::Partition>:ec2:<AWS::Region>:<AWS::AccountId>:network-interface/*"),
             eni + "."),
            (wildcard("Resource", "arn:<AWS::Partition>:ec2:<AWS::Region>:<AWS::AccountId>:subnet/*"),
             eni + ": creating an ENI also authorises the subnet it goes into."),
            (wildcard("Resource", "arn:<AWS::Partition>:ec2:<AWS::Region>:<AWS::AccountId>:security-group/*"),
             eni + ": creating an ENI also authorises its security groups."),
            (wildcard("Resource", "arn:<AWS::Partition>:ec2:<AWS::Region>:<AWS::AccountId>:instance/*"),
             eni + ": attaching an ENI authorises the instance it attaches to."),
            (wildcard("Resource", "*"),
             "EC2 Describe* calls and ecr:GetAuthorizationToken support no resource-level permissions."),
            (wildcard("Resource", "arn:<AWS::Partition>:ecr:<AWS::Region>:*:repository/*"),
             "Pull-only access to ECR in this region: EKS add-on and HyperPod agent images live in "
             "AWS-owned registries of other accounts."),
        ],
    )
    return role


class DependenciesChart(Construct):
    """The HyperPod dependencies Helm chart (health-monitoring agent etc.), from the spec's location."""

    def __init__(self, scope: Construct, id: str, *, chart: HelmChart, cluster: eks.ICluster,
                 base_dir: Optional[Path] = None) -> None:
        super().__init__(scope, id)
        common = dict(cluster=cluster, release=DEPENDENCIES_RELEASE, namespace="kube-system",
                      timeout=Duration.minutes(15))
        if chart.source == "directory":
            path = Path(chart.directory or "")
            if not path.is_absolute() and base_dir is not None:
                path = base_dir / path
            asset = s3_assets.Asset(self, "ChartAsset", path=str(path))
            self.resource = eks.HelmChart(self, "Resource", chart_asset=asset, **common)
        elif chart.source == "oci":
            name = (chart.oci or "").rstrip("/").rsplit("/", 1)[-1]
            self.resource = eks.HelmChart(self, "Resource", chart=name, repository=chart.oci,
                                          version=chart.version, **common)
        else:
            self.resource = eks.HelmChart(self, "Resource", chart=chart.chart, repository=chart.repository,
                                          version=chart.version, **common)


class HyperPodCluster(Construct):
    """L2 over ``AWS::SageMaker::Cluster`` with the EKS orchestrator.

    ``node.default_child`` is the ``CfnCluster``: use it as the escape hatch.
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        spec: GovernanceSpec,
        network: Network,
        cluster: eks.Cluster,
        lifecycle: LifecycleScripts,
        depends_on: Sequence[IConstruct] = (),
        base_dir: Optional[Path] = None,
    ) -> None:
        super().__init__(scope, id)
        c = spec.cluster
        self.security_group = ec2.SecurityGroup(
            self, "NodeSecurityGroup", vpc=network.vpc, allow_all_outbound=True,
            description=f"HyperPod {c.name} nodes: all traffic among themselves (EFA, NCCL) and with EKS",
        )
        # Ingress only: both groups already allow all egress.
        self.security_group.add_ingress_rule(self.security_group, ec2.Port.all_traffic(), "HyperPod nodes (EFA, NCCL)")
        for sg in cluster.connections.security_groups:
            self.security_group.add_ingress_rule(sg, ec2.Port.all_traffic(), "EKS control plane")
            sg.add_ingress_rule(self.security_group, ec2.Port.all_traffic(), "HyperPod nodes")

        self.execution_role = execution_role(self, "ExecutionRole", spec=spec, bucket=lifecycle.bucket,
                                             cluster_arn=cluster.cluster_arn)
        self.dependencies: Optional[DependenciesChart] = None
        if c.dependencies_chart is not None:
            self.dependencies = DependenciesChart(self, "Dependencies", chart=c.dependencies_chart,
                                                  cluster=cluster, base_dir=base_dir)
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
            node_recovery="Automatic",
            orchestrator=sagemaker.CfnCluster.OrchestratorProperty(
                eks=sagemaker.CfnCluster.ClusterOrchestratorEksConfigProperty(cluster_arn=cluster.cluster_arn)
            ),
            vpc_config=sagemaker.CfnCluster.VpcConfigProperty(
                security_group_ids=[self.security_group.security_group_id],
                subnets=subnets.subnet_ids,
            ),
            instance_groups=[self._group(g, lifecycle) for g in sorted(c.instance_groups, key=lambda g: g.name)],
        )
        self.resource.node.add_dependency(lifecycle.deployment)
        for dependency in depends_on:
            self.resource.node.add_dependency(dependency)
        if self.dependencies is not None:
            self.resource.node.add_dependency(self.dependencies)

        self.cluster_arn = self.resource.attr_cluster_arn
        self.cluster_name = c.name

    def _group(self, group, lifecycle: LifecycleScripts) -> sagemaker.CfnCluster.ClusterInstanceGroupProperty:
        facts = catalog.lookup(group.instance_type)
        storage = None
        if group.volume_size_gb:
            storage = [
                sagemaker.CfnCluster.ClusterInstanceStorageConfigProperty(
                    ebs_volume_config=sagemaker.CfnCluster.ClusterEbsVolumeConfigProperty(
                        volume_size_in_gb=group.volume_size_gb
                    )
                )
            ]
        return sagemaker.CfnCluster.ClusterInstanceGroupProperty(
            instance_group_name=group.name,
            instance_type=group.instance_type,
            instance_count=group.count,
            execution_role=self.execution_role.role_arn,
            life_cycle_config=sagemaker.CfnCluster.ClusterLifeCycleConfigProperty(
                source_s3_uri=lifecycle.source_s3_uri, on_create=ON_CREATE
            ),
            instance_storage_configs=storage,
            # Deep health checks stress accelerators and their interconnect; CPU types have neither.
            on_start_deep_health_checks=list(DEEP_HEALTH_CHECKS) if facts.accelerators else None,
        )
