"""The EKS add-ons' table (``tables.py``): each add-on the spec pins, with its configuration."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from .fields import Field, Table
from .prometheus import ADDON as PROMETHEUS_ADDON, METRICS_PROVIDER
from .tables_common import _CLUSTER_NAME, _TAGS


# Configuration of the add-ons that need one (EKS's ConfigurationValues, JSON).
ADDON_CONFIGURATION: Mapping[str, Mapping[str, Any]] = {
    # NetworkPolicies are enforced only when the VPC CNI runs its network policy agent. Strict mode: a new pod
    # starts with default deny instead of default allow until its policies are in place, and a pod no policy
    # selects gets no traffic (https://docs.aws.amazon.com/eks/latest/userguide/cni-network-policy-configure.html,
    # step 1, NETWORK_POLICY_ENFORCING_MODE on the aws-node container, set through the add-on's `env`).
    "vpc-cni": {"enableNetworkPolicy": "true", "env": {"NETWORK_POLICY_ENFORCING_MODE": "strict"}},
    # Container Insights (enhanced) with Kueue metrics; the version is cluster.addonVersions.cloudwatchObservability.
    "amazon-cloudwatch-observability": {
        "agent": {"config": {"logs": {"metrics_collected": {
            "kubernetes": {"enhanced_container_insights": True, "kueue_container_insights": True}}}}},
    },
    # Kueue's metrics on (task governance); the workspace is given at deploy time (constructs/prometheus.py).
    PROMETHEUS_ADDON: {"metricsProvider": METRICS_PROVIDER},
}


@dataclass(frozen=True)
class AddonPart:
    """An EKS add-on as the spec pins it (``addon_parts(plan)``)."""

    name: str
    version: Optional[str]  # None: EKS's default for the Kubernetes version; only presence is checked
    configuration: Optional[Mapping[str, Any]]
    # Its configuration holds deploy-time values (the inference operator's role ARNs, TLS bucket and HyperPod
    # cluster): the plan does not know it, so drift does not compare it.
    configured_at_deploy: bool = False


def addon_part(name: str, version: Optional[str], configuration: Optional[Mapping[str, Any]] = None, *,
               configured_at_deploy: bool = False) -> AddonPart:
    """The add-on ``name`` at ``version``, with the library's configuration for it (``ADDON_CONFIGURATION``) and
    ``configuration``: what an operator's add-on is given at deploy time (its roles' ARNs, its bucket)."""
    merged = {**ADDON_CONFIGURATION.get(name, {}), **(configuration or {})}
    return AddonPart(name, version, merged or None, configured_at_deploy)


def addon_parts(plan: Any) -> tuple[AddonPart, ...]:
    """Every add-on ``plan`` installs (``Plan.addon_versions``), as drift compares it: none on a Slurm cluster,
    which has no EKS cluster (its add-on versions are the spec's defaults, which nothing installs)."""
    if plan.slurm is not None:
        return ()
    at_deploy = {a.name for a in plan.operator_addons if a.inference}  # constructs/operators.py configures it
    if plan.prometheus is not None:  # the workspace's ARN and endpoint (constructs/prometheus.py)
        at_deploy.add(PROMETHEUS_ADDON)
    return tuple(addon_part(n, v, configured_at_deploy=n in at_deploy) for n, v in sorted(plan.addon_versions.items()))


def _same_json(planned: Optional[Mapping[str, Any]], live: Any, context: Mapping[str, Any]) -> bool:
    if planned is None:
        return not live
    try:
        return json.loads(live) == planned if isinstance(live, str) else live == planned
    except ValueError:
        return False


ADDON = Table(
    kind="Addon",
    label="add-on",
    spec="cluster",
    fields=(
        Field("addonName", "name", "", get=lambda a: a.name, plan_fields=("name",),
              drift="the key add-ons are matched by", imports="add-ons are not written into the spec"),
        Field("clusterName", "cluster", "", drift=_CLUSTER_NAME, imports=_CLUSTER_NAME),
        # A version the spec leaves to EKS (None) is not compared: EKS picks its default for the version.
        Field("addonVersion", "version", "addonVersions", get=lambda a: a.version, plan_fields=("version",),
              when=lambda a: a.version is not None,
              imports="add-on versions are not written into the spec (the spec pins its own)"),
        # vpc-cni without its network policy agent enforces no NetworkPolicy: a governance change.
        Field("configurationValues", "configuration", "addonVersions", get=lambda a: a.configuration,
              plan_fields=("configuration", "configured_at_deploy"), same=_same_json,
              when=lambda a: not a.configured_at_deploy,
              imports="the configuration is the library's, not the spec's"),
        # Deleting the stack deletes the add-on's software from the cluster too (nothing is left running unmanaged).
        Field("preserveOnDelete", "preserve on delete", "", get=lambda a: False,
              drift="a CloudFormation setting, not the add-on's", imports="a CloudFormation setting"),
        Field("podIdentityAssociations", "Pod Identity associations", "",
              drift="the add-ons' own associations (observability agent, operators), outside team namespaces; "
                    "created with the add-on and its role",
              imports="created with the add-on"),
        Field("serviceAccountRoleArn", "IRSA role", "",
              drift="a deploy-time reference to the add-on's own IAM role (operators that take IRSA roles), created "
                    "with the add-on",
              imports="created with the add-on"),
        Field("tags", "tags", "", drift=_TAGS, imports=_TAGS),
    ),
)
