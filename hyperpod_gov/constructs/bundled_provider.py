"""A CloudFormation custom resource provider whose Python handler carries the SDK the tests ran.

``BundledProvider`` is the one way this project builds such a provider (the task governance provider and the
cluster extension provider are two of them): the handler's ``on_event`` and ``is_complete`` functions
(``index.py`` of an asset directory, bundled with the boto3 and botocore of ``handler_bundle``), their log group
encrypted with a key of its own and kept when the stack goes, a role that may write those logs and do what the
subclass's policy statements say, the CDK provider framework's waiter whose role Step Functions may assume for
this account's state machines only, and, with a ``placement``, both functions in the VPC's private subnets behind a
security group that admits nothing and sends HTTPS to the VPC only. The cdk-nag acknowledgements of the framework's
own parts are made here; a subclass acknowledges its policy's.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Sequence

from aws_cdk import Duration, RemovalPolicy, Stack, Token, aws_ec2 as ec2, aws_iam as iam, aws_kms as kms
from aws_cdk import aws_lambda as lambda_, aws_logs as logs, aws_stepfunctions as sfn
from aws_cdk import custom_resources as cr
from constructs import Construct

from ._nag import acknowledge, managed_policy, wildcard
from .handler_bundle import bundled_asset

HANDLER_RUNTIME = lambda_.Runtime.PYTHON_3_14
QUERY_INTERVAL = Duration.seconds(30)
# What CloudWatch Logs may do with the provider's log key (the key policy AWS documents for encrypted log groups).
LOGS_KEY_ACTIONS = ("kms:Decrypt*", "kms:Describe*", "kms:Encrypt*", "kms:GenerateDataKey*", "kms:ReEncrypt*")


@dataclass(frozen=True)
class HandlerPlacement:
    """Where the handler's functions run: private subnets of a VPC from which the SageMaker API answers (a
    SageMaker API interface endpoint there), reached on 443 within ``cidr``."""

    vpc: ec2.IVpc
    subnets: ec2.SubnetSelection
    cidr: str


class BundledProvider(Construct):
    """The provider of one kind of change (``what``: "task governance", "cluster extension"), its handler in
    ``handler_dir`` with the botocore models of ``services``, its role allowed ``statements`` (one policy,
    ``HandlerPolicy``), the waiter polling every 30 s for up to ``total_timeout``. ``service_token`` is what a
    ``CustomResource`` names."""

    def __init__(self, scope: Construct, id: str, *, what: str, handler_dir: Path, services: Sequence[str],
                 statements: Sequence[iam.PolicyStatement], total_timeout: Duration,
                 placement: Optional[HandlerPlacement] = None) -> None:
        super().__init__(scope, id)
        stack = Stack.of(self)
        self.handler_name = f"the {what} handler"
        # The handler's logs are kept when the stack goes, like the VPC flow logs, and encrypted like them with a key
        # of this account (kept too: the logs stay readable).
        self.logs_key = logs_key(self, "LogsKey", f"Encrypts the logs of the hyperpod-gov {what} handler")
        self.log_group = logs.LogGroup(self, "HandlerLogs", retention=logs.RetentionDays.ONE_YEAR,
                                       removal_policy=RemovalPolicy.RETAIN, encryption_key=self.logs_key)
        self.role = iam.Role(self, "HandlerRole", assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
                             description=f"hyperpod-gov {what} custom resource handler")
        self.log_group.grant_write(self.role)
        self.policy = iam.Policy(self, "HandlerPolicy", statements=list(statements), roles=[self.role])

        # The handler with the boto3 and botocore the tests ran (the runtime's own may not know every member the
        # project sends); bytecode left by a local import would change the asset hash, and so the template.
        code = lambda_.Code.from_asset(str(bundled_asset(handler_dir, services=tuple(services))),
                                       exclude=["__pycache__", "*.pyc"])
        common: dict[str, Any] = dict(runtime=HANDLER_RUNTIME, code=code, role=self.role, log_group=self.log_group,
                                      timeout=Duration.minutes(2), memory_size=256)
        self.security_group: Optional[ec2.SecurityGroup] = None
        if placement is not None:
            common.update(self._in_vpc(placement, what))
        self.on_event = lambda_.Function(self, "OnEvent", handler="index.on_event",
                                         description=f"hyperpod-gov: start a {what} change", **common)
        self.is_complete = lambda_.Function(self, "IsComplete", handler="index.is_complete",
                                            description=f"hyperpod-gov: poll a {what} change", **common)
        for fn in (self.on_event, self.is_complete):
            fn.node.add_dependency(self.policy)  # no invocation before the role may act

        framework_logs = logs.LogGroup(self, "FrameworkLogs", retention=logs.RetentionDays.ONE_YEAR,
                                       removal_policy=RemovalPolicy.RETAIN, encryption_key=self.logs_key)
        self.provider = cr.Provider(
            self, "Provider", on_event_handler=self.on_event, is_complete_handler=self.is_complete,
            query_interval=QUERY_INTERVAL, total_timeout=total_timeout, log_group=framework_logs,
            disable_waiter_state_machine_logging=False,
            waiter_state_machine_log_options=cr.LogOptions(destination=framework_logs, level=sfn.LogLevel.ALL,
                                                           include_execution_data=False),
        )
        self.service_token = self.provider.service_token
        self._confine_waiter_trust(stack)
        self._acknowledge_framework(stack)

    def _in_vpc(self, placement: HandlerPlacement, what: str) -> dict[str, Any]:
        """The functions' VPC settings: the placement's subnets, and a security group of their own that admits
        nothing and sends HTTPS to the VPC only (the SageMaker API endpoint answers there)."""
        self.security_group = ec2.SecurityGroup(
            self, "HandlerSecurityGroup", vpc=placement.vpc, allow_all_outbound=False,
            description=f"hyperpod-gov {what} handler: HTTPS to the SageMaker API endpoint of the VPC")
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

    def _acknowledge_framework(self, stack: Stack) -> None:
        handler, framework = self.handler_name, "the CDK provider framework"
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


def nag_arn_prefix(stack: Stack):
    """``arn:partition:service:region:account:`` as cdk-nag prints it (pseudo parameters in ``<>``)."""
    region = "<AWS::Region>" if Token.is_unresolved(stack.region) else stack.region
    account = "<AWS::AccountId>" if Token.is_unresolved(stack.account) else stack.account
    return lambda service: f"arn:<AWS::Partition>:{service}:{region}:{account}:"
