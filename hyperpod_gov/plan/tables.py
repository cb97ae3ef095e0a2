"""The tables of every governed object (see ``fields.py``): one row per API member, declared once.

``task_governance.py`` emits quotas and the cluster policy from ``COMPUTE_QUOTA`` and ``CLUSTER_POLICY``; the
constructs emit the HyperPod cluster (either orchestrator) from ``CLUSTER`` and ``INSTANCE_GROUP`` alone, and
access entries and Pod Identity associations from ``ACCESS_ENTRY`` and ``POD_IDENTITY``; ``live/`` compares every
table with the live state and imports from it.
Member names are the AWS APIs' (SageMaker: PascalCase, shared with CloudFormation; EKS: camelCase, which
CloudFormation spells with a capital first letter: :func:`cfn_properties`).

The tables are declared by object in ``tables_quota.py`` (quota, cluster policy), ``tables_cluster.py`` (cluster,
instance group), ``tables_access.py`` (access entries, Pod Identity), ``tables_addon.py`` and ``tables_studio.py``
(Unified Studio units, grants, profiles, projects); this module lists them and re-exports their names.
"""

from __future__ import annotations

from .tables_access import (
    ACCESS_ENTRY,
    ACCESS_ENTRY_TYPE,
    ADMIN_ENTRY,
    CLUSTER_ADMIN_POLICY,
    POD_IDENTITY,
    cfn_kwargs,
    cfn_properties,
)
from .tables_addon import ADDON, ADDON_CONFIGURATION, AddonPart, addon_parts
from .tables_cluster import CLUSTER, INSTANCE_GROUP, volume_of
from .tables_common import same_arn
from .tables_evidence import EVIDENCE_BUCKET
from .tables_quota import CLUSTER_POLICY, COMPUTE_QUOTA, PolicyPart, contract_tags, policy_part, resource_config
from .tables_prometheus import GRAFANA_WORKSPACE, PROMETHEUS_TABLES, PROMETHEUS_WORKSPACE, RULE_GROUPS
from .tables_studio import STUDIO_TABLES

__all__ = [
    "ACCESS_ENTRY", "ACCESS_ENTRY_TYPE", "ADDON", "ADDON_CONFIGURATION", "ADMIN_ENTRY", "CLUSTER", "CLUSTER_ADMIN_POLICY",
    "CLUSTER_POLICY", "COMPUTE_QUOTA", "INSTANCE_GROUP", "POD_IDENTITY", "TABLES", "AddonPart", "PolicyPart",
    "addon_parts", "cfn_kwargs", "cfn_properties", "contract_tags", "policy_part", "resource_config", "same_arn",
    "volume_of", "STUDIO_TABLES", "GRAFANA_WORKSPACE", "PROMETHEUS_TABLES", "PROMETHEUS_WORKSPACE", "RULE_GROUPS",
    "EVIDENCE_BUCKET",
]

# The Unified Studio delegation tables last (``tables_studio.py``): DataZone objects of the studio stacks.
TABLES = (COMPUTE_QUOTA, CLUSTER_POLICY, CLUSTER, INSTANCE_GROUP, ACCESS_ENTRY, ADMIN_ENTRY, POD_IDENTITY, ADDON,
          *STUDIO_TABLES, *PROMETHEUS_TABLES, EVIDENCE_BUCKET)
