"""What the worker's minter and the manager's copier share: a Python Lambda function in the cluster's VPC, its
role's EKS access entry, its schedule and its run at deploy (docs/fleet.md, "The worker credential").

The function's asset is ``assets/multikueue_credential/index.py`` with ``live/kube_credential.py`` beside it (the
one implementation of the steps, which the CLI also runs) and the SDK the tests ran (``handler_bundle``; botocore
trimmed to eks, secretsmanager and sts).
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from aws_cdk import CustomResource, Duration, RemovalPolicy, Stack, aws_ec2 as ec2, aws_eks as eks_l1
from aws_cdk import aws_iam as iam, aws_lambda as lambda_, aws_logs as logs, aws_scheduler as scheduler
from constructs import Construct

from ..plan.multikueue_credential import CredentialPlan
from ._nag import acknowledge, managed_policy, wildcard
from .handler_bundle import bundled_asset
from .bundled_provider import HANDLER_RUNTIME, logs_key

ASSETS = Path(__file__).resolve().parents[1] / "assets" / "multikueue_credential"
STEPS = Path(__file__).resolve().parents[1] / "live" / "kube_credential.py"
SERVICES = ("eks", "secretsmanager", "sts")  # the service models the bundled botocore carries
API_PORT = 443


def handler_dir(cache: Path | None = None) -> Path:
    """The handler's files: ``index.py`` and the steps module beside it, in a folder named after their content."""
    files = {"index.py": (ASSETS / "index.py").read_bytes(), "kube_credential.py": STEPS.read_bytes()}
    key = hashlib.sha256(b"".join(n.encode() + b"\0" + b + b"\0" for n, b in sorted(files.items()))).hexdigest()[:16]
    root = (cache or Path(tempfile.gettempdir()) / "hyperpod-gov-handler-sources") / f"multikueue-{key}"
    if not root.is_dir():
        staging = Path(tempfile.mkdtemp(prefix=".staging-"))
        for name, data in files.items():
            (staging / name).write_bytes(data)
        root.parent.mkdir(parents=True, exist_ok=True)
        try:
            staging.rename(root)
        except OSError:  # made meanwhile by another process, or another file system: keep theirs / copy
            if not root.is_dir():
                shutil.copytree(staging, root)
            shutil.rmtree(staging, ignore_errors=True)
    return root


@dataclass(frozen=True)
class Placement:
    """Where the function runs: private subnets of the cluster's VPC, and the EKS cluster security group (the one
    on the API's network interfaces) that admits it on 443, or ``None`` when ``security_group`` already reaches
    the API (an existing cluster's kubectl handler group)."""

    vpc: ec2.IVpc
    subnets: ec2.SubnetSelection
    cluster_security_group_id: str | None = None
    security_group: ec2.ISecurityGroup | None = None


class CredentialFunction(Construct):
    """A credential step's function: role, log group, VPC placement, EKS access entry, schedule, run at deploy.

    ``statements``: the role's own rights (besides its log group and the network interfaces Lambda manages).
    ``environment``: the function's settings; the deploy-time run re-runs when they change.
    """

    def __init__(self, scope: Construct, id: str, *, cp: CredentialPlan, handler: str, description: str,
                 placement: Placement, environment: Mapping[str, str], cron: str,
                 role_name: str | None = None) -> None:
        super().__init__(scope, id)
        stack = Stack.of(self)
        self.logs_key = logs_key(self, "LogsKey", f"Encrypts the logs of the hyperpod-gov MultiKueue {cp.role} "
                                 "credential function")
        self.log_group = logs.LogGroup(self, "Logs", retention=logs.RetentionDays.ONE_YEAR,
                                       removal_policy=RemovalPolicy.RETAIN, encryption_key=self.logs_key)
        self.role = iam.Role(self, "Role", assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
                             role_name=role_name, description=description)
        self.log_group.grant_write(self.role)
        self.role.add_managed_policy(iam.ManagedPolicy.from_aws_managed_policy_name(
            "service-role/AWSLambdaVPCAccessExecutionRole"))
        self.eks_cluster_arn = stack.format_arn(service="eks", resource="cluster", resource_name=cp.eks_cluster)
        self.policy = iam.Policy(self, "Policy", roles=[self.role], statements=[iam.PolicyStatement(
            sid="ReadTheCluster", actions=["eks:DescribeCluster"], resources=[self.eks_cluster_arn])])

        self.security_group = placement.security_group or ec2.SecurityGroup(
            self, "SecurityGroup", vpc=placement.vpc, allow_all_outbound=False,
            description=f"hyperpod-gov MultiKueue {cp.role} credential function: HTTPS out only")
        if placement.security_group is None:
            self.security_group.add_egress_rule(  # type: ignore[union-attr]
                ec2.Peer.any_ipv4(), ec2.Port.tcp(API_PORT),
                "HTTPS to the EKS API and to AWS APIs (Secrets Manager, EKS, CloudFormation's response URL)")
        if placement.cluster_security_group_id is not None:
            ec2.CfnSecurityGroupIngress(
                self, "ApiIngress", group_id=placement.cluster_security_group_id, ip_protocol="tcp",
                from_port=API_PORT, to_port=API_PORT, source_security_group_id=self.security_group.security_group_id,
                description=f"hyperpod-gov MultiKueue {cp.role} credential function")
        code = lambda_.Code.from_asset(str(bundled_asset(handler_dir(), services=SERVICES)),
                                       exclude=["__pycache__", "*.pyc"])
        self.function = lambda_.Function(
            self, "Function", runtime=HANDLER_RUNTIME, code=code, handler=handler, role=self.role,
            log_group=self.log_group, timeout=Duration.minutes(2), memory_size=256, description=description,
            environment=dict(environment), vpc=placement.vpc, vpc_subnets=placement.subnets,
            security_groups=[self.security_group])
        self.function.node.add_dependency(self.policy)

        # The role's Kubernetes identity: a group bound to one namespaced Role (charts/multikueue_credential.py);
        # no access policy, so it may do nothing else on the cluster.
        self.access_entry = eks_l1.CfnAccessEntry(self, "AccessEntry", cluster_name=cp.eks_cluster,
                                                  principal_arn=self.role.role_arn, type="STANDARD",
                                                  kubernetes_groups=[cp.group])
        self.schedule = self._schedule(stack, cron, description)
        self.run_at_deploy = CustomResource(
            self, "RunAtDeploy", service_token=self.function.function_arn,
            resource_type="Custom::HyperPodGovMultiKueueCredential", properties=dict(environment))
        for before in (self.access_entry, self.policy):  # the function: its ARN is the service token
            self.run_at_deploy.node.add_dependency(before)
        self._acknowledge(stack, cp)

    def _schedule(self, stack: Stack, cron: str, description: str) -> scheduler.CfnSchedule:
        """An EventBridge Scheduler schedule invoking the function; its role may be assumed by EventBridge Scheduler
        for schedules of this account's default group only (the confused-deputy conditions of the Scheduler
        user guide, "Set up the execution role")."""
        group = f"arn:{stack.partition}:scheduler:{stack.region}:{stack.account}:schedule-group/default"
        self.schedule_role = iam.Role(
            self, "ScheduleRole", description=f"EventBridge Scheduler: invokes {description}",
            assumed_by=iam.ServicePrincipal("scheduler.amazonaws.com", conditions={
                "StringEquals": {"aws:SourceAccount": stack.account, "aws:SourceArn": group}}))
        self.schedule_role.add_to_policy(iam.PolicyStatement(
            sid="InvokeTheFunction", actions=["lambda:InvokeFunction"], resources=[self.function.function_arn]))
        return scheduler.CfnSchedule(
            self, "Schedule", description=description, schedule_expression=cron,
            schedule_expression_timezone="UTC", flexible_time_window={"mode": "OFF"},
            target={"arn": self.function.function_arn, "roleArn": self.schedule_role.role_arn,
                    "retryPolicy": {"maximumRetryAttempts": 2, "maximumEventAgeInSeconds": 3600}})

    def _acknowledge(self, stack: Stack, cp: CredentialPlan) -> None:
        what = f"the MultiKueue {cp.role} credential function"
        log_group = stack.get_logical_id(self.log_group.node.default_child)  # type: ignore[arg-type]
        acknowledge(self.role, [
            (managed_policy("service-role/AWSLambdaVPCAccessExecutionRole"),
             f"Lets Lambda attach {what} to the VPC's private subnets (it reaches the private EKS API there); "
             "AWS-managed, network interfaces only."),
            (wildcard("Resource", f"<{log_group}.Arn>:*"),
             f"The log streams of {what}'s own log group, which Lambda names per instance."),
        ])

    def add(self, *statements: iam.PolicyStatement) -> None:
        for s in statements:
            self.policy.add_statements(s)

