"""The HyperPod instance execution role: the managed policy, plus what EKS nodes need and nothing else."""

from __future__ import annotations

from typing import Optional

from aws_cdk import Aws, aws_iam as iam
from constructs import Construct

from ..plan.data import ImageRegistriesPlan
from ._nag import acknowledge, managed_policy, wildcard

INSTANCE_ROLE_POLICY = "AmazonSageMakerClusterInstanceRolePolicy"
ENI_ACTIONS = (
    "ec2:AssignPrivateIpAddresses",
    "ec2:AttachNetworkInterface",
    "ec2:CreateNetworkInterface",
    "ec2:CreateNetworkInterfacePermission",
    "ec2:DeleteNetworkInterface",
    "ec2:DeleteNetworkInterfacePermission",
    "ec2:DetachNetworkInterface",
    "ec2:ModifyNetworkInterfaceAttribute",
    "ec2:UnassignPrivateIpAddresses",
)


def execution_trust_conditions() -> dict:
    """Confused deputy: SageMaker assumes the role only for HyperPod clusters of this account and region (the
    cluster ARN ends in an id SageMaker assigns, so a wildcard after ``cluster/``)."""
    return {
        "StringEquals": {"aws:SourceAccount": Aws.ACCOUNT_ID},
        "ArnLike": {"aws:SourceArn": f"arn:{Aws.PARTITION}:sagemaker:{Aws.REGION}:{Aws.ACCOUNT_ID}:cluster/*"},
    }


ECR_PULL = ("ecr:BatchCheckLayerAvailability", "ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer")


def pull_statements(image_registries: Optional[ImageRegistriesPlan]) -> list[iam.PolicyStatement]:
    """The nodes' image pulls (kubelet pulls every pod's image with this role).

    Without ``cluster.imageRegistries``: every repository of the region, of any account (the EKS add-on and
    HyperPod agent images live in AWS-owned registries whose accounts differ by region). With it: the listed
    repositories, and any repository of an account that is not one of the spec's own (capacity, consumers,
    trusted), so that a team's pod cannot run another team's images from the capacity account unless listed.
    """
    every = f"arn:{Aws.PARTITION}:ecr:{Aws.REGION}:*:repository/*"
    if image_registries is None:
        return [iam.PolicyStatement(sid="PullImages", actions=list(ECR_PULL), resources=[every])]
    return [
        iam.PolicyStatement(sid="PullImages", actions=list(ECR_PULL), resources=list(image_registries.repository_arns)),
        iam.PolicyStatement(sid="PullAwsOwnedImages", actions=list(ECR_PULL), resources=[every],
                            conditions={"StringNotEquals": {"aws:ResourceAccount": list(image_registries.own_accounts)}}),
    ]


def execution_role(scope: Construct, id: str, *, cluster_name: str, cluster_arn: str,
                   vpc_arn: Optional[str] = None, image_registries: Optional[ImageRegistriesPlan] = None) -> iam.Role:
    """HyperPod instance role: the managed policy, plus what EKS nodes need and nothing else.

    ``vpc_arn``: the cluster's VPC; network interfaces, subnets and security groups are then limited to it with
    the ``ec2:Vpc`` condition (the instance an interface attaches to has no such key). ``image_registries``:
    ``cluster.imageRegistries`` (``pull_statements``).
    """
    role = iam.Role(
        scope,
        id,
        assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com", conditions=execution_trust_conditions()),
        description=f"Execution role of HyperPod cluster {cluster_name} instances",
        managed_policies=[iam.ManagedPolicy.from_aws_managed_policy_name(INSTANCE_ROLE_POLICY)],
    )
    region, account = Aws.REGION, Aws.ACCOUNT_ID
    in_vpc = {"ArnEquals": {"ec2:Vpc": vpc_arn}} if vpc_arn else None
    statements = [
        # VPC CNI on HyperPod nodes runs with the instance role: ENIs and IPs in this account (and VPC).
        iam.PolicyStatement(
            sid="ManageNodeNetworkInterfaces",
            actions=list(ENI_ACTIONS),
            resources=[
                f"arn:{Aws.PARTITION}:ec2:{region}:{account}:network-interface/*",
                f"arn:{Aws.PARTITION}:ec2:{region}:{account}:subnet/*",
                f"arn:{Aws.PARTITION}:ec2:{region}:{account}:security-group/*",
            ],
            conditions=in_vpc,
        ),
        iam.PolicyStatement(
            sid="AttachToNodes",
            actions=["ec2:AttachNetworkInterface", "ec2:DetachNetworkInterface"],
            resources=[f"arn:{Aws.PARTITION}:ec2:{region}:{account}:instance/*"],
        ),
        iam.PolicyStatement(
            sid="TagNodeNetworkInterfaces",
            actions=["ec2:CreateTags"],
            resources=[f"arn:{Aws.PARTITION}:ec2:{region}:{account}:network-interface/*"],
            conditions=in_vpc,
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
        *pull_statements(image_registries),
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
             "AWS-owned registries of other accounts (with cluster.imageRegistries: only accounts that are not "
             "the spec's own)."),
            *((wildcard("Resource", arn), "A repository name prefix of cluster.imageRegistries: the nodes pull "
               "the images of the repositories under it.")
              for arn in (image_registries.repository_arns if image_registries else ()) if arn.endswith("*")),
        ],
    )
    return role


def slurm_execution_role(scope: Construct, id: str, *, cluster_name: str,
                         image_registries: Optional[ImageRegistriesPlan] = None) -> iam.Role:
    """HyperPod instance role of a Slurm cluster: the managed policy and image pulls (jobs run containers with
    enroot or Docker from ECR), nothing of what EKS nodes need (no VPC CNI managing interfaces, no Pod Identity)."""
    role = iam.Role(
        scope,
        id,
        assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com", conditions=execution_trust_conditions()),
        description=f"Execution role of HyperPod cluster {cluster_name} instances (Slurm)",
        managed_policies=[iam.ManagedPolicy.from_aws_managed_policy_name(INSTANCE_ROLE_POLICY)],
    )
    for statement in (*pull_statements(image_registries),
                      iam.PolicyStatement(sid="EcrLogin", actions=["ecr:GetAuthorizationToken"], resources=["*"])):
        role.add_to_policy(statement)
    acknowledge(
        role,
        [
            (managed_policy(INSTANCE_ROLE_POLICY),
             f"{INSTANCE_ROLE_POLICY} is the AWS-managed policy HyperPod requires on the instance execution role."),
            (wildcard("Resource", "*"), "ecr:GetAuthorizationToken supports no resource-level permissions."),
            (wildcard("Resource", "arn:<AWS::Partition>:ecr:<AWS::Region>:*:repository/*"),
             "Pull-only access to ECR in this region, for the containers jobs run (enroot, Docker); with "
             "cluster.imageRegistries only accounts that are not the spec's own."),
            *((wildcard("Resource", arn), "A repository name prefix of cluster.imageRegistries: the nodes pull "
               "the images of the repositories under it.")
              for arn in (image_registries.repository_arns if image_registries else ()) if arn.endswith("*")),
        ],
    )
    return role
