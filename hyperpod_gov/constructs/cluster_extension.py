"""A HyperPod cluster extension (SageMaker CreateClusterExtension) as a CloudFormation custom resource.

The pinned toolchain has no resource type for it (cfn-lint 1.58.0's schemas and aws-cdk-lib 2.275.0 know no
``AWS::SageMaker::Extension``; aws-cdk-lib 2.278.0 documents ``CfnExtension``), so ``ClusterExtension`` is a
``Custom::ClusterExtension`` backed by ``ClusterExtensionProvider``: a Python handler bundled with the boto3 and
botocore the tests ran (``handler_bundle``), under the CDK provider framework's waiter, as
``task_governance_provider`` is. The handler may manage extensions of one HyperPod cluster and nothing else.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from aws_cdk import CustomResource, Duration, RemovalPolicy, Stack, aws_ec2 as ec2, aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs, aws_stepfunctions as sfn
from aws_cdk import custom_resources as cr
from constructs import Construct

from ..plan.slurm_observability import ExtensionPlan, configuration_text
from ..plan.tables_prometheus import CLUSTER_EXTENSION
from ..plan.fields import emit
from ._nag import acknowledge, managed_policy, wildcard
from .handler_bundle import bundled_asset
from .task_governance_provider import HandlerPlacement, _nag_arn_prefix, logs_key, waiter_trust_conditions

HANDLER_DIR = Path(__file__).resolve().parents[1] / "assets" / "cluster_extension_provider"
HANDLER_RUNTIME = lambda_.Runtime.PYTHON_3_14
HANDLER_SERVICES = ("sagemaker",)
RESOURCE_TYPE = "Custom::ClusterExtension"
QUERY_INTERVAL = Duration.seconds(30)
# The extension is installed on every node; the provider framework's waiter allows up to two hours.
TOTAL_TIMEOUT = Duration.minutes(60)
# An extension's ARN: extension/(sagemaker|eks|pcs)-.../.../... (botocore's ExtensionArn pattern); HyperPod's own
# begin with sagemaker-. The segments after it are assigned by the service.
EXTENSION_RESOURCE = "extension/sagemaker-*"
MANAGE_VERBS = ("Describe", "Update", "Delete")
ACTIONS_UNKNOWN_TO_CFN_LINT = "W3037"


class ClusterExtensionProvider(Construct):
    """The provider behind ``ClusterExtension`` on one HyperPod cluster: its handler may create extensions on
    ``cluster_arn``, describe, update and delete HyperPod's extensions of this account and region, and list the
    cluster's extensions (to adopt one of the same name). Its log groups are encrypted with a key of its own and
    kept when the stack goes, and with a ``placement`` its two functions run in the VPC, like the task governance
    handler's (docs/security.md)."""

    def __init__(self, scope: Construct, id: str, *, cluster_arn: str,
                 placement: Optional[HandlerPlacement] = None) -> None:
        super().__init__(scope, id)
        stack = Stack.of(self)
        extensions = stack.format_arn(service="sagemaker", resource=EXTENSION_RESOURCE.split("/")[0],
                                      resource_name=EXTENSION_RESOURCE.split("/", 1)[1])
        self.logs_key = logs_key(self, "LogsKey", "Encrypts the logs of the hyperpod-gov cluster extension handler")
        self.log_group = logs.LogGroup(self, "HandlerLogs", retention=logs.RetentionDays.ONE_YEAR,
                                       removal_policy=RemovalPolicy.RETAIN, encryption_key=self.logs_key)
        self.role = iam.Role(self, "HandlerRole", assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
                             description="hyperpod-gov cluster extension custom resource handler")
        self.log_group.grant_write(self.role)
        self.policy = iam.Policy(self, "HandlerPolicy", roles=[self.role], statements=[
            iam.PolicyStatement(sid="CreateOnTheCluster", actions=["sagemaker:CreateClusterExtension"],
                                resources=[cluster_arn, extensions]),
            iam.PolicyStatement(sid="ListOnTheCluster", actions=["sagemaker:ListClusterExtensions"],
                                resources=[cluster_arn]),
            iam.PolicyStatement(sid="ManageExtensions",
                                actions=[f"sagemaker:{verb}ClusterExtension" for verb in MANAGE_VERBS],
                                resources=[cluster_arn, extensions]),
        ])
        # cfn-lint 1.58.0's list of IAM actions (a snapshot of the Service Authorization Reference) predates the
        # cluster extension API; the actions are the API's operation names, SageMaker's convention. Only that check
        # is set aside, on this policy only (tests/stacks/test_slurm_prometheus.py lists what it would report).
        self.policy.node.default_child.add_metadata(  # type: ignore[union-attr]
            "cfn-lint", {"config": {"ignore_checks": [ACTIONS_UNKNOWN_TO_CFN_LINT]}})
        code = lambda_.Code.from_asset(str(bundled_asset(HANDLER_DIR, services=HANDLER_SERVICES)),
                                       exclude=["__pycache__", "*.pyc"])
        common: dict[str, Any] = dict(runtime=HANDLER_RUNTIME, code=code, role=self.role, log_group=self.log_group,
                                      timeout=Duration.minutes(2), memory_size=256)
        self.security_group: Optional[ec2.SecurityGroup] = None
        if placement is not None:
            common.update(self._in_vpc(placement))
        self.on_event = lambda_.Function(self, "OnEvent", handler="index.on_event",
                                         description="hyperpod-gov: start a cluster extension change", **common)
        self.is_complete = lambda_.Function(self, "IsComplete", handler="index.is_complete",
                                            description="hyperpod-gov: poll a cluster extension change", **common)
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
        waiter: iam.Role = self.provider.node.find_child("waiter-state-machine").node.find_child("Role")  # type: ignore
        waiter.node.default_child.add_property_override(  # type: ignore[union-attr]
            "AssumeRolePolicyDocument.Statement.0.Condition", waiter_trust_conditions(stack))
        self._acknowledge(stack)

    def _in_vpc(self, placement: HandlerPlacement) -> dict[str, Any]:
        """The functions in the placement's subnets, with a security group that admits nothing and sends HTTPS to
        the VPC only (its SageMaker API endpoint), and the rights Lambda needs to attach them."""
        self.security_group = ec2.SecurityGroup(
            self, "HandlerSecurityGroup", vpc=placement.vpc, allow_all_outbound=False,
            description="hyperpod-gov cluster extension handler: HTTPS to the SageMaker API endpoint of the VPC")
        self.security_group.add_egress_rule(ec2.Peer.ipv4(placement.cidr), ec2.Port.tcp(443),
                                            "HTTPS to the SageMaker API endpoint of the VPC")
        self.role.add_managed_policy(iam.ManagedPolicy.from_aws_managed_policy_name(
            "service-role/AWSLambdaVPCAccessExecutionRole"))
        acknowledge(self.role, [(managed_policy("service-role/AWSLambdaVPCAccessExecutionRole"),
                                 "Lets Lambda attach the cluster extension handler's functions to the VPC's private "
                                 "subnets; AWS-managed, network interfaces only.")])
        return dict(vpc=placement.vpc, vpc_subnets=placement.subnets, security_groups=[self.security_group])

    def _acknowledge(self, stack: Stack) -> None:
        handler, framework = "the cluster extension handler", "the CDK provider framework"
        here = _nag_arn_prefix(stack)
        acknowledge(self.policy, [
            (wildcard("Resource", f"{here('sagemaker')}{EXTENSION_RESOURCE}"),
             f"SageMaker assigns an extension's ARN when {handler} creates it, so it is unknown before; scoped to "
             "HyperPod's extensions (extension/sagemaker-) of this account and region."),
        ])
        acknowledge(self.provider, [
            (managed_policy("service-role/AWSLambdaBasicExecutionRole"),
             f"Lets the functions of {framework} write their own logs; AWS-managed, CloudWatch Logs only."),
            *((wildcard("Resource", f"<{stack.get_logical_id(fn.node.default_child)}.Arn>:*"),  # type: ignore
               f"{framework} invokes any version of {what}, nothing else.")
              for fn, what in ((self.on_event, f"{handler}'s onEvent function"),
                               (self.is_complete, f"{handler}'s isComplete function"),
                               (self.provider.node.find_child("framework-isComplete"), "its own isComplete function"),
                               (self.provider.node.find_child("framework-onTimeout"), "its own onTimeout function"))),
            (wildcard("Resource", "*"),
             "Step Functions delivers the waiter state machine's execution log through CloudWatch Logs log "
             "delivery (logs:CreateLogDelivery and related), whose actions take no resource type."),
            ("AwsSolutions-SF2", f"{framework} offers no X-Ray tracing for its waiter state machine; every "
             "execution is logged at level ALL to the framework log group instead."),
        ])


class ClusterExtension(Construct):
    """``Custom::ClusterExtension``: ``extension`` installed on the cluster ``cluster_arn``, its settings naming
    ``remote_write_url`` (a deploy-time value). ``resource`` is the primary child; ``attr_arn`` the extension's
    ARN."""

    def __init__(self, scope: Construct, id: str, *, extension: ExtensionPlan, cluster_arn: str,
                 remote_write_url: str, provider: ClusterExtensionProvider) -> None:
        super().__init__(scope, id)
        properties = emit(CLUSTER_EXTENSION, extension, {
            "ClusterArn": cluster_arn,
            "ConfigurationValues": configuration_text(extension, remote_write_url)})
        self.resource = CustomResource(self, "Resource", service_token=provider.service_token,
                                       resource_type=RESOURCE_TYPE, properties=properties)
        self.attr_arn = self.resource.get_att_string("Arn")
