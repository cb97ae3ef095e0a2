"""Amazon Managed Service for Prometheus with the HyperPod observability add-on, the teams' alerting rules and the
alert manager routing them to their owners' topics, and an Amazon Managed Grafana workspace reading it; on a Slurm
cluster the workspace with the cluster's observability extension writing to it (``SlurmPrometheus``).

Every input is a part of the plan (``plan/prometheus.py``); nothing here decides a rule, a route or a name.
"""

from __future__ import annotations

from typing import Optional

from aws_cdk import Aws, Fn, aws_aps as aps, aws_eks_v2 as eks, aws_grafana as grafana, aws_iam as iam
from aws_cdk import aws_kms as kms
from constructs import Construct

from ..plan.prometheus import (ADDON, CLUSTER_LOG_GROUPS, COLLECTOR_SERVICE_ACCOUNT, QUERY_ACTIONS, REMOTE_WRITE,
                               GrafanaPlan, PrometheusPlan, alertmanager_document)
from ..plan.tables import GRAFANA_WORKSPACE, PROMETHEUS_WORKSPACE, RULE_GROUPS, cfn_kwargs
from ..plan.tables_addon import addon_part
from ..plan.slurm_observability import remote_write_url
from ._nag import acknowledge, wildcard
from .addons import EksAddon
from .cluster_extension import ClusterExtension, ClusterExtensionProvider
from .bundled_provider import HandlerPlacement
from .observability import pod_identity_trust

GRAFANA_PRINCIPAL = "grafana.amazonaws.com"
# What the collector does with the cluster's log groups (the troubleshooting page's CloudwatchLogsAccess statement).
LOG_ACTIONS = ("logs:CreateLogGroup", "logs:CreateLogStream", "logs:DescribeLogStreams", "logs:PutLogEvents")


def topic_arn(name: str) -> str:
    """The ARN of the alarm topic named ``name`` (``names.alarm_topic``) in this stack's account and region."""
    return Fn.join("", ["arn:", Aws.PARTITION, ":sns:", Aws.REGION, ":", Aws.ACCOUNT_ID, ":", name])


def _workspace_endpoint(arn: str) -> str:
    """The remote-write base of an existing workspace (arn:...:aps:REGION:ACCOUNT:workspace/ws-ID)."""
    region, workspace = arn.split(":")[3], arn.split("/")[-1]
    return f"https://aps-workspaces.{region}.amazonaws.com/workspaces/{workspace}/"


class ManagedPrometheus(Construct):
    """The workspace (created, KMS-encrypted, with its alert manager; or an existing one by ARN), the collector's
    Pod Identity role and the add-on, one rule groups namespace per team, and the Grafana workspace if planned.

    The alert manager reaches the owners' topics by their names (``PrometheusPlan.topics``).
    ``account`` and ``cluster_arn``: plain strings, for the collector role's trust conditions.
    """

    def __init__(self, scope: Construct, id: str, *, plan: PrometheusPlan, cluster: eks.ICluster,
                 account: str, cluster_arn: str, region: str) -> None:
        super().__init__(scope, id)
        if plan.addon_version is None:
            raise ValueError(f"{self.node.path}: the observability add-on needs its pinned version (an EKS plan)")
        document: Optional[str] = None
        if plan.creates:
            placeholders = {f"Topic{i}": topic_arn(k) for i, k in enumerate(plan.topics)}
            document = Fn.sub(alertmanager_document(
                plan.topics, {k: f"${{Topic{i}}}" for i, k in enumerate(plan.topics)}, region, plan.default_topic),
                placeholders)
        self.key, self.workspace, self.workspace_arn, endpoint = _workspace(self, plan, document)
        # The collector writes to this workspace only, and to the cluster's log groups.
        logs = f"arn:{Aws.PARTITION}:logs:{Aws.REGION}:{Aws.ACCOUNT_ID}:log-group:{CLUSTER_LOG_GROUPS}*"
        self.collector_role = iam.Role(
            self, "CollectorRole", assumed_by=pod_identity_trust(account=account, cluster_arn=cluster_arn),
            description=f"Collector of the {ADDON} add-on: remote-writes to one Prometheus workspace",
            inline_policies={"RemoteWrite": iam.PolicyDocument(statements=[
                iam.PolicyStatement(sid="PrometheusAccess", actions=[REMOTE_WRITE], resources=[self.workspace_arn]),
                iam.PolicyStatement(sid="ClusterLogs", actions=list(LOG_ACTIONS),
                                    resources=[logs, f"{logs}:log-stream:*"]),
            ])},
        )
        groups = f"arn:<AWS::Partition>:logs:<AWS::Region>:<AWS::AccountId>:log-group:{CLUSTER_LOG_GROUPS}*"
        why = ("the collector creates one log group per HyperPod cluster under /aws/sagemaker/Clusters/ (the add-on's "
               "documented permissions); the names are the service's, so the prefix is the narrowest resource")
        acknowledge(self.collector_role, [(wildcard("Resource", groups), why),
                                          (wildcard("Resource", f"{groups}:log-stream:*"), why)])
        part = addon_part(ADDON, plan.addon_version,
                          {"ampWorkspace": {"arn": self.workspace_arn, "prometheusEndpoint": endpoint}},
                          configured_at_deploy=True)
        self.addon = EksAddon(self, "Addon", part=part, cluster=cluster, pod_identity_associations=[
            {"serviceAccount": COLLECTOR_SERVICE_ACCOUNT, "roleArn": self.collector_role.role_arn}])
        # One rule groups namespace per team (construct id: the team), so a team's rules change alone.
        rules = Construct(self, "Rules")
        self.rule_groups: dict[str, aps.CfnRuleGroupsNamespace] = {
            r.team: aps.CfnRuleGroupsNamespace(rules, r.team, **cfn_kwargs(RULE_GROUPS, r,
                                                                           {"Workspace": self.workspace_arn}))
            for r in plan.rules}
        self.grafana: Optional[ManagedGrafana] = (
            ManagedGrafana(self, "Grafana", plan=plan.grafana, account=account, workspace_arn=self.workspace_arn)
            if plan.grafana is not None else None)


def _workspace(scope: Construct, plan: PrometheusPlan, alert_manager: Optional[str]
               ) -> tuple[Optional[kms.Key], Optional[aps.CfnWorkspace], str, str]:
    """The plan's workspace: created (``Key``, ``Workspace``, with ``alert_manager`` where given) or the existing
    one; its key, resource, ARN and Prometheus endpoint (``https://aps-workspaces.REGION.amazonaws.com/workspaces/
    ws-ID/``)."""
    if not plan.creates:
        if plan.workspace_arn is None:
            raise ValueError(f"{scope.node.path}: a plan that creates no workspace names one")
        return None, None, plan.workspace_arn, _workspace_endpoint(plan.workspace_arn)
    key = kms.Key(scope, "Key", enable_key_rotation=True, description="Encrypts the hyperpod-gov Prometheus workspace")
    context = {"KmsKeyArn": key.key_arn, **({"AlertManagerDefinition": alert_manager} if alert_manager else {})}
    workspace = aps.CfnWorkspace(scope, "Workspace", **cfn_kwargs(PROMETHEUS_WORKSPACE, plan, context))
    return key, workspace, workspace.attr_arn, workspace.attr_prometheus_endpoint


class SlurmPrometheus(Construct):
    """A Slurm cluster's metrics in a Prometheus workspace: the workspace (created, KMS-encrypted, without an alert
    manager: a Slurm cluster's teams have no alarms to route; or an existing one by ARN), ``aps:RemoteWrite`` on it
    for the cluster's execution role (the extension's collectors run on the nodes), the ``sagemaker-observability``
    extension writing to it (a custom resource, ``cluster_extension``; its handler in the VPC with a ``placement``),
    and the Grafana workspace if planned."""

    def __init__(self, scope: Construct, id: str, *, plan: PrometheusPlan, cluster_arn: str,
                 execution_role: iam.IRole, account: str, placement: Optional[HandlerPlacement] = None) -> None:
        super().__init__(scope, id)
        if plan.extension is None:
            raise ValueError(f"{self.node.path}: a Slurm plan's Prometheus has the cluster extension")
        self.key, self.workspace, self.workspace_arn, endpoint = _workspace(self, plan, None)
        # The nodes remote-write to this workspace only (no AWS-managed policy: AmazonPrometheusRemoteWriteAccess
        # allows every workspace).
        self.remote_write = iam.Policy(self, "RemoteWrite", roles=[execution_role], statements=[
            iam.PolicyStatement(sid="PrometheusAccess", actions=[REMOTE_WRITE], resources=[self.workspace_arn])])
        self.provider = ClusterExtensionProvider(self, "ExtensionProvider", cluster_arn=cluster_arn,
                                                 placement=placement)
        self.extension = ClusterExtension(self, "Extension", extension=plan.extension, cluster_arn=cluster_arn,
                                          remote_write_url=remote_write_url(endpoint), provider=self.provider)
        self.extension.node.add_dependency(self.remote_write)  # the collectors may write once they run
        self.grafana: Optional[ManagedGrafana] = (
            ManagedGrafana(self, "Grafana", plan=plan.grafana, account=account, workspace_arn=self.workspace_arn)
            if plan.grafana is not None else None)


class ManagedGrafana(Construct):
    """An Amazon Managed Grafana workspace (IAM Identity Center sign-in) whose role may query one Prometheus
    workspace and nothing else. Its admins and the teams' dashboards are applied after deploy
    (docs/observability.md): CloudFormation has no Grafana permission, folder or dashboard resource."""

    def __init__(self, scope: Construct, id: str, *, plan: GrafanaPlan, account: str, workspace_arn: str) -> None:
        super().__init__(scope, id)
        self.role = iam.Role(
            self, "Role",
            assumed_by=iam.ServicePrincipal(GRAFANA_PRINCIPAL,
                                            conditions={"StringEquals": {"aws:SourceAccount": account}}),
            description="Amazon Managed Grafana: reads the hyperpod-gov Prometheus workspace",
            inline_policies={"QueryPrometheus": iam.PolicyDocument(statements=[
                iam.PolicyStatement(sid="QueryOneWorkspace", actions=list(QUERY_ACTIONS), resources=[workspace_arn]),
            ])},
        )
        self.workspace = grafana.CfnWorkspace(self, "Resource", **cfn_kwargs(GRAFANA_WORKSPACE, plan,
                                                                             {"RoleArn": self.role.role_arn}))
