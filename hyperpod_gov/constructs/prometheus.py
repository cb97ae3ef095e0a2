"""Amazon Managed Service for Prometheus with the HyperPod observability add-on, the teams' alerting rules and the
alert manager routing them to their owners' topics, and an Amazon Managed Grafana workspace reading it.

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
from ._nag import acknowledge, wildcard
from .addons import EksAddon
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
        self.workspace: Optional[aps.CfnWorkspace] = None
        self.key: Optional[kms.Key] = None
        if plan.creates:
            self.key = kms.Key(self, "Key", enable_key_rotation=True,
                               description="Encrypts the hyperpod-gov Prometheus workspace")
            placeholders = {f"Topic{i}": topic_arn(k) for i, k in enumerate(plan.topics)}
            document = alertmanager_document(plan.topics, {k: f"${{Topic{i}}}" for i, k in enumerate(plan.topics)},
                                             region, plan.default_topic)
            self.workspace = aps.CfnWorkspace(self, "Workspace", **cfn_kwargs(PROMETHEUS_WORKSPACE, plan, {
                "KmsKeyArn": self.key.key_arn, "AlertManagerDefinition": Fn.sub(document, placeholders)}))
            self.workspace_arn: str = self.workspace.attr_arn
            endpoint = self.workspace.attr_prometheus_endpoint
        else:
            if plan.workspace_arn is None:
                raise ValueError(f"{self.node.path}: a plan that creates no workspace names one")
            self.workspace_arn = plan.workspace_arn
            endpoint = _workspace_endpoint(plan.workspace_arn)
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
