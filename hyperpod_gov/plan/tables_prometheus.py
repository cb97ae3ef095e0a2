"""The managed Prometheus and Grafana tables (``tables.py``): the workspace, each team's rule groups namespace, the
Grafana workspace, in CloudFormation's member names (``AWS::APS::*``, ``AWS::Grafana::Workspace``), and a Slurm
cluster's observability extension, in the SageMaker API's (``Custom::ClusterExtension``, CreateClusterExtension).

``drift`` and ``import`` have no reader for these services: every row says so. Members whose value is another
resource of the stack (the workspace's ARN, the key, a role) are deploy-time references the emitter passes as
``context``.
"""

from __future__ import annotations

from .fields import Field, Table

_NO_READER = "no live reader: drift does not read Amazon Managed Service for Prometheus or Amazon Managed Grafana " \
    "(DescribeWorkspace, DescribeRuleGroupsNamespace, DescribeWorkspace of grafana)"
_NO_IMPORT = "not read by import: monitoring.prometheus and monitoring.grafana are written by hand"
_REFERENCE = "a deploy-time reference to a resource of the same stack"

PROMETHEUS_WORKSPACE = Table(
    kind="Workspace",
    label="Prometheus workspace",
    spec="monitoring.prometheus",
    fields=(
        Field("Alias", "alias", "workspace", get=lambda p: p.alias, plan_fields=("alias",), drift=_NO_READER,
              imports=_NO_IMPORT),
        Field("KmsKeyArn", "encryption key", "", drift=_REFERENCE, imports=_REFERENCE),
        # The routes are planned (PrometheusPlan.topics); the document holds the topics' ARNs, known at deploy.
        Field("AlertManagerDefinition", "alert manager routes", "", drift=_REFERENCE, imports=_NO_IMPORT),
    ),
    exempt={"creates": "whether the workspace exists here at all", "workspace_arn": "an existing workspace",
            "addon_version": "the add-on table", "rules": "the rule groups table",
            "topics": "the alert manager definition (deploy-time ARNs)", "default_topic": "the same",
            "grafana": "the Grafana table", "extension": "the cluster extension table (Slurm)"},
)

RULE_GROUPS = Table(
    kind="RuleGroupsNamespace",
    label="Prometheus rule groups",
    spec="monitoring.prometheus",
    fields=(
        Field("Name", "name", "", get=lambda r: r.team, plan_fields=("team",), drift=_NO_READER,
              imports=_NO_IMPORT),
        Field("Workspace", "workspace", "", drift=_REFERENCE, imports=_REFERENCE),
        Field("Data", "alerting rules", "workspace", get=lambda r: r.document(), plan_fields=("rules",),
              drift=_NO_READER, imports="the rules are the team's alarms (monitoring.alarms, teams[].alarms)"),
    ),
    exempt={"namespace": "the rules' filters (in Data)"},
)

GRAFANA_WORKSPACE = Table(
    kind="GrafanaWorkspace",
    label="Grafana workspace",
    spec="monitoring.grafana",
    fields=(
        Field("Name", "name", "workspace", get=lambda g: g.name, plan_fields=("name",), drift=_NO_READER,
              imports=_NO_IMPORT),
        Field("AccountAccessType", "account access", "", get=lambda g: "CURRENT_ACCOUNT", drift=_NO_READER,
              imports=_NO_IMPORT),
        Field("AuthenticationProviders", "sign-in", "", get=lambda g: ["AWS_SSO"], drift=_NO_READER,
              imports=_NO_IMPORT),
        Field("PermissionType", "permission type", "", get=lambda g: "CUSTOMER_MANAGED", drift=_NO_READER,
              imports=_NO_IMPORT),
        Field("RoleArn", "role", "", drift=_REFERENCE, imports=_REFERENCE),
        Field("DataSources", "data sources", "", get=lambda g: ["PROMETHEUS"], drift=_NO_READER, imports=_NO_IMPORT),
        Field("Description", "description", "", get=lambda g: g.description, plan_fields=("description",),
              drift=_NO_READER, imports=_NO_IMPORT),
    ),
    exempt={"admins": "applied after deploy with UpdatePermissions (grafana_export)",
            "dashboards": "applied after deploy with Grafana's HTTP API (grafana_export)"},
)

_NO_EXTENSION_READER = "no live reader: drift does not read the cluster's extensions (DescribeClusterExtension)"

CLUSTER_EXTENSION = Table(
    kind="ClusterExtension",
    label="HyperPod cluster extension",
    spec="monitoring.prometheus",
    fields=(
        Field("ClusterArn", "cluster", "", drift=_REFERENCE, imports=_REFERENCE),
        Field("ExtensionName", "extension", "", get=lambda e: e.name, plan_fields=("name",),
              drift=_NO_EXTENSION_READER, imports=_NO_IMPORT),
        Field("ExtensionVersion", "extension version", "", get=lambda e: e.version, plan_fields=("version",),
              drift=_NO_EXTENSION_READER, imports=_NO_IMPORT),
        # The settings hold the workspace's remote-write URL, known at deploy (plan/slurm_observability.py).
        Field("ConfigurationValues", "settings (the workspace to write to)", "", drift=_REFERENCE, imports=_NO_IMPORT),
    ),
)

PROMETHEUS_TABLES = (PROMETHEUS_WORKSPACE, RULE_GROUPS, GRAFANA_WORKSPACE, CLUSTER_EXTENSION)
