"""HyperPod task governance through the SageMaker API, for regions whose CloudFormation lacks the types.

``TaskGovernanceProvider`` is one custom resource provider per stack (the Lambda handler in
``hyperpod_gov/assets/task_governance_provider``); ``SdkClusterPolicy`` and ``SdkComputeQuota`` take
exactly the properties of ``AWS::SageMaker::ClusterSchedulerConfig`` and ``AWS::SageMaker::ComputeQuota``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Optional

from aws_cdk import CustomResource, Duration, RemovalPolicy, Stack, Token, aws_ec2 as ec2, aws_iam as iam
from aws_cdk import aws_kms as kms, aws_lambda as lambda_, aws_logs as logs, aws_stepfunctions as sfn
from aws_cdk import custom_resources as cr
from constructs import Construct

from ._nag import acknowledge, managed_policy, wildcard
from .handler_bundle import bundled_asset

HANDLER_DIR = Path(__file__).resolve().parents[1] / "assets" / "task_governance_provider"
HANDLER_RUNTIME = lambda_.Runtime.PYTHON_3_14
HANDLER_SERVICES = ("sagemaker",)  # the service models its bundled botocore carries
POLICY_RESOURCE_TYPE = "Custom::ClusterSchedulerConfig"
QUOTA_RESOURCE_TYPE = "Custom::ComputeQuota"
QUERY_INTERVAL = Duration.seconds(30)
TOTAL_TIMEOUT = Duration.minutes(30)

MANAGE_VERBS = ("Describe", "Update", "Delete")  # Create also names the cluster: its own statements
# The one EKS access policy SageMaker associates (and disassociates) on the cluster's access entries when a compute
# quota changes: the policy EKS publishes for HyperPod's system namespaces (`aws eks list-access-policies`). The
# role may associate no other, so a change of a quota cannot grant, say, AmazonEKSClusterAdminPolicy to anyone.
HYPERPOD_ACCESS_POLICY = "AmazonSagemakerHyperpodSystemNamespacePolicy"
# What CloudWatch Logs may do with the provider's log key (the key policy AWS documents for encrypted log groups).
LOGS_KEY_ACTIONS = ("kms:Decrypt*", "kms:Describe*", "kms:Encrypt*", "kms:GenerateDataKey*", "kms:ReEncrypt*")


@dataclass(frozen=True)
class HandlerPlacement:
    """Where the handler's functions run: private subnets of a VPC from which the SageMaker API answers (a
    SageMaker API interface endpoint there), reached on 443 within ``cidr``."""

    vpc: ec2.IVpc
    subnets: ec2.SubnetSelection
    cidr: str


class TaskGovernanceProvider(Construct):
    """The provider behind ``SdkClusterPolicy`` and ``SdkComputeQuota`` on one HyperPod cluster.

    Its handler may manage cluster policies and compute quotas of this account and region, create
    them only on ``cluster_arn``, and make the EKS calls SageMaker makes with the caller's
    credentials when a policy or quota changes (on ``eks_cluster_name`` only). Its log groups are
    encrypted with a key of its own; with a ``placement`` the handler's two functions run in the
    VPC (the CDK provider framework's stay outside: docs/security.md, "Low findings of the scan").
    """

    def __init__(self, scope: Construct, id: str, *, cluster_arn: str, eks_cluster_name: str,
                 placement: Optional[HandlerPlacement] = None) -> None:
        super().__init__(scope, id)
        stack = Stack.of(self)
        configs = stack.format_arn(service="sagemaker", resource="cluster-scheduler-config", resource_name="*")
        quotas = stack.format_arn(service="sagemaker", resource="compute-quota", resource_name="*")
        eks_cluster = stack.format_arn(service="eks", resource="cluster", resource_name=eks_cluster_name)
        access_entries = stack.format_arn(service="eks", resource="access-entry",
                                          resource_name=f"{eks_cluster_name}/*")

        # Logs of governance changes are kept when the stack goes, like the VPC flow logs, and encrypted like them
        # with a key of this account (kept too: the logs stay readable).
        self.logs_key = logs_key(self, "LogsKey", "Encrypts the logs of the hyperpod-gov task governance handler")
        self.log_group = logs.LogGroup(self, "HandlerLogs", retention=logs.RetentionDays.ONE_YEAR,
                                       removal_policy=RemovalPolicy.RETAIN, encryption_key=self.logs_key)
        self.role = iam.Role(self, "HandlerRole", assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
                             description="hyperpod-gov task governance custom resource handler")
        self.log_group.grant_write(self.role)
        statements = [
            iam.PolicyStatement(sid="CreateOnTheCluster", actions=["sagemaker:CreateClusterSchedulerConfig"],
                                resources=[cluster_arn, configs]),
            iam.PolicyStatement(sid="CreateQuotaOnTheCluster", actions=["sagemaker:CreateComputeQuota"],
                                resources=[cluster_arn, quotas]),
            iam.PolicyStatement(sid="ManagePolicies",
                                actions=[f"sagemaker:{verb}ClusterSchedulerConfig" for verb in MANAGE_VERBS]
                                + ["sagemaker:AddTags", "sagemaker:DeleteTags"],
                                resources=[configs]),
            iam.PolicyStatement(sid="ManageQuotas",
                                actions=[f"sagemaker:{verb}ComputeQuota" for verb in MANAGE_VERBS]
                                + ["sagemaker:AddTags", "sagemaker:DeleteTags"],
                                resources=[quotas]),
            iam.PolicyStatement(sid="FindByName",
                                actions=["sagemaker:ListClusterSchedulerConfigs", "sagemaker:ListComputeQuotas"],
                                resources=["*"]),
            # The native types' handlers list these: SageMaker reads the cluster and maps the team's
            # access in EKS with the caller's credentials.
            iam.PolicyStatement(sid="ReadTheCluster", actions=["sagemaker:DescribeCluster"],
                                resources=[cluster_arn]),
            iam.PolicyStatement(sid="ReadTheEksCluster", actions=["eks:DescribeCluster"], resources=[eks_cluster]),
            iam.PolicyStatement(sid="MapTeamAccess",
                                actions=["eks:AssociateAccessPolicy", "eks:DisassociateAccessPolicy"],
                                resources=[access_entries],
                                conditions={"StringEquals": {"eks:policyArn": hyperpod_access_policy(stack)}}),
            iam.PolicyStatement(sid="ReadTeamAccess",
                                actions=["eks:DescribeAccessEntry", "eks:ListAssociatedAccessPolicies"],
                                resources=[access_entries]),
        ]
        self.policy = iam.Policy(self, "HandlerPolicy", statements=statements, roles=[self.role])

        # The handler with the boto3 and botocore the tests ran (the runtime's own may not know every member the
        # project sends); bytecode left by a local import would change the asset hash, and so the template.
        code = lambda_.Code.from_asset(str(bundled_asset(HANDLER_DIR, services=HANDLER_SERVICES)),
                                       exclude=["__pycache__", "*.pyc"])
        common: dict[str, Any] = dict(runtime=HANDLER_RUNTIME, code=code, role=self.role, log_group=self.log_group,
                                      timeout=Duration.minutes(2), memory_size=256)
        self.security_group: Optional[ec2.SecurityGroup] = None
        if placement is not None:
            common.update(self._in_vpc(placement))
        self.on_event = lambda_.Function(self, "OnEvent", handler="index.on_event",
                                         description="hyperpod-gov: start a task governance change", **common)
        self.is_complete = lambda_.Function(self, "IsComplete", handler="index.is_complete",
                                            description="hyperpod-gov: poll a task governance change", **common)
        for fn in (self.on_event, self.is_complete):
            fn.node.add_dependency(self.policy)  # no invocation before the role may act

        framework_logs = logs.LogGroup(self, "FrameworkLogs", retention=logs.RetentionDays.ONE_YEAR,
                                       removal_policy=RemovalPolicy.RETAIN, encryption_key=self.logs_key)
        self.provider = cr.Provider(
            self, "Provider", on_event_handler=self.on_event, is_complete_handler=self.is_complete,
            query_interval=QUERY_INTERVAL, total_timeout=TOTAL_TIMEOUT, log_group=framework_logs,
            disable_waiter_state_machine_logging=False,
            waiter_state_machine_log_options=cr.LogOptions(destination=framework_logs, level=sfn.LogLevel.ALL,
                                                           include_execution_data=False),
        )
        self.service_token = self.provider.service_token
        self._confine_waiter_trust(stack)
        self._acknowledge(stack, eks_cluster_name)

    def _in_vpc(self, placement: HandlerPlacement) -> dict[str, Any]:
        """The functions' VPC settings: the placement's subnets, and a security group of their own that admits
        nothing and sends HTTPS to the VPC only (the SageMaker API endpoint answers there)."""
        self.security_group = ec2.SecurityGroup(
            self, "HandlerSecurityGroup", vpc=placement.vpc, allow_all_outbound=False,
            description="hyperpod-gov task governance handler: HTTPS to the SageMaker API endpoint of the VPC")
        self.security_group.add_egress_rule(ec2.Peer.ipv4(placement.cidr), ec2.Port.tcp(443),
                                            "HTTPS to the SageMaker API endpoint of the VPC")
        # Lambda creates the functions' network interfaces with the role's rights (what aws-cdk-lib attaches to
        # a role it makes for a function in a VPC).
        self.role.add_managed_policy(iam.ManagedPolicy.from_aws_managed_policy_name(
            "service-role/AWSLambdaVPCAccessExecutionRole"))
        return dict(vpc=placement.vpc, vpc_subnets=placement.subnets, security_groups=[self.security_group])

    def _confine_waiter_trust(self, stack: Stack) -> None:
        """Step Functions may assume the waiter state machine's role for a state machine of this account and region
        only (the confused-deputy conditions AWS documents for states.amazonaws.com). The state machine's own ARN
        would be a circular reference: the role is a property of the state machine."""
        role: iam.Role = self.provider.node.find_child("waiter-state-machine").node.find_child("Role")  # type: ignore
        cfn_role: iam.CfnRole = role.node.default_child  # type: ignore[assignment]
        cfn_role.add_property_override("AssumeRolePolicyDocument.Statement.0.Condition",
                                      waiter_trust_conditions(stack))

    def _acknowledge(self, stack: Stack, eks_cluster_name: str) -> None:
        handler = "the task governance handler"
        framework = "the CDK provider framework"
        here = _nag_arn_prefix(stack)
        acknowledge(self.policy, [
            (wildcard("Resource", f"{here('sagemaker')}cluster-scheduler-config/*"),
             f"SageMaker assigns a cluster policy's id when {handler} creates it, so its ARN is unknown before; "
             "scoped to cluster policies of this account and region."),
            (wildcard("Resource", f"{here('sagemaker')}compute-quota/*"),
             f"SageMaker assigns a compute quota's id when {handler} creates it, so its ARN is unknown before; "
             "scoped to compute quotas of this account and region."),
            (wildcard("Resource", "*"),
             "ListClusterSchedulerConfigs and ListComputeQuotas take no resource type in the Service "
             f"Authorization Reference, so only '*' works; {handler} lists to adopt a resource of the same "
             "name on this cluster."),
            (wildcard("Resource", f"{here('eks')}access-entry/{eks_cluster_name}/*"),
             f"Access entries of EKS cluster {eks_cluster_name} only (their ids are generated by EKS): SageMaker "
             "maps teams' access there with the caller's credentials when a policy or quota changes, associating "
             f"{HYPERPOD_ACCESS_POLICY} and no other access policy (eks:policyArn)."),
        ])
        acknowledge(self.provider, [
            (managed_policy("service-role/AWSLambdaBasicExecutionRole"),
             f"Lets the functions of {framework} write their own logs; AWS-managed, CloudWatch Logs only."),
            *((wildcard("Resource", f"<{stack.get_logical_id(fn.node.default_child)}.Arn>:*"),  # type: ignore
               f"{framework} invokes any version of {what}, nothing else.")
              for fn, what in ((self.on_event, f"{handler}'s onEvent function"),
                               (self.is_complete, f"{handler}'s isComplete function"),
                               (self._framework("framework-isComplete"), "its own isComplete function"),
                               (self._framework("framework-onTimeout"), "its own onTimeout function"))),
            (wildcard("Resource", "*"),
             "Step Functions delivers the waiter state machine's execution log through CloudWatch Logs log "
             "delivery (logs:CreateLogDelivery and related), whose actions take no resource type."),
            ("AwsSolutions-SF2", f"{framework} offers no X-Ray tracing for its waiter state machine; every "
             "execution is logged at level ALL to the framework log group instead."),
        ])
        if self.security_group is not None:
            acknowledge(self.role, [(managed_policy("service-role/AWSLambdaVPCAccessExecutionRole"),
                                     f"Lets Lambda attach {handler}'s functions to the VPC's private subnets; "
                                     "AWS-managed, network interfaces only.")])

    def _framework(self, child: str) -> lambda_.Function:
        return self.provider.node.find_child(child)  # type: ignore[return-value]


def logs_key(scope: Construct, id: str, description: str) -> kms.Key:
    """A key for log groups of this stack's account and region: rotated, kept when the stack goes, usable by
    CloudWatch Logs for this account's log groups only."""
    stack = Stack.of(scope)
    key = kms.Key(scope, id, enable_key_rotation=True, removal_policy=RemovalPolicy.RETAIN, description=description)
    key.add_to_resource_policy(iam.PolicyStatement(
        sid="CloudWatchLogsOfThisAccount",
        principals=[iam.ServicePrincipal(f"logs.{stack.region}.amazonaws.com")],
        actions=list(LOGS_KEY_ACTIONS),
        resources=["*"],
        conditions={"ArnLike": {"kms:EncryptionContext:aws:logs:arn":
                                f"arn:{stack.partition}:logs:{stack.region}:{stack.account}:log-group:*"}},
    ))
    return key


def waiter_trust_conditions(stack: Stack) -> dict[str, Any]:
    """``aws:SourceAccount`` and ``aws:SourceArn`` for Step Functions assuming a role: the stack's account's state
    machines of its region (Step Functions developer guide, cross-service confused deputy prevention)."""
    return {
        "StringEquals": {"aws:SourceAccount": stack.account},
        "ArnLike": {"aws:SourceArn": f"arn:{stack.partition}:states:{stack.region}:{stack.account}:stateMachine:*"},
    }


def hyperpod_access_policy(stack: Stack) -> str:
    """The ARN of ``HYPERPOD_ACCESS_POLICY`` in the stack's partition (EKS access policies have no region or
    account: arn:aws:eks::aws:cluster-access-policy/NAME)."""
    return f"arn:{stack.partition}:eks::aws:cluster-access-policy/{HYPERPOD_ACCESS_POLICY}"


def _nag_arn_prefix(stack: Stack):
    """``arn:partition:service:region:account:`` as cdk-nag prints it (pseudo parameters in ``<>``)."""
    region = "<AWS::Region>" if Token.is_unresolved(stack.region) else stack.region
    account = "<AWS::AccountId>" if Token.is_unresolved(stack.account) else stack.account
    return lambda service: f"arn:<AWS::Partition>:{service}:{region}:{account}:"


class _SdkResource(Construct):
    resource_type = ""
    required: tuple[str, ...] = ()
    native = ""

    def __init__(self, scope: Construct, id: str, *, provider: TaskGovernanceProvider,
                 properties: Mapping[str, Any]) -> None:
        super().__init__(scope, id)
        missing = [k for k in self.required if k not in properties]
        if missing:
            raise ValueError(f"{self.node.path}: properties lack {', '.join(missing)} ({sorted(properties)}); "
                             f"pass the properties of {self.native}")
        self.resource = CustomResource(self, "Resource", service_token=provider.service_token,
                                       resource_type=self.resource_type, properties=dict(properties))
        self.attr_arn = self.resource.get_att_string("Arn")
        self.attr_id = self.resource.ref


class SdkClusterPolicy(_SdkResource):
    """``Custom::ClusterSchedulerConfig``: the cluster policy, with the properties of the native type."""

    resource_type = POLICY_RESOURCE_TYPE
    required = ("Name", "ClusterArn", "SchedulerConfig")
    native = "AWS::SageMaker::ClusterSchedulerConfig"


class SdkComputeQuota(_SdkResource):
    """``Custom::ComputeQuota``: one team's compute quota, with the properties of the native type."""

    resource_type = QUOTA_RESOURCE_TYPE
    required = ("Name", "ClusterArn", "ComputeQuotaConfig", "ComputeQuotaTarget")
    native = "AWS::SageMaker::ComputeQuota"
