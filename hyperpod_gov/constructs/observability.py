"""CloudWatch Observability add-on with Kueue metrics, its agent authorised through EKS Pod Identity."""

from __future__ import annotations

from typing import Mapping, Optional

from aws_cdk import aws_eks_v2 as eks, aws_iam as iam
from constructs import Construct

from ..plan.tables_addon import addon_part
from ._nag import acknowledge, managed_policy
from .addons import EksAddon

OBSERVABILITY_ADDON = "amazon-cloudwatch-observability"
AGENT_SERVICE_ACCOUNT = "cloudwatch-agent"
POD_IDENTITY_PRINCIPAL = "pods.eks.amazonaws.com"


def pod_identity_trust(*, account: str, cluster_arn: str,
                       session: Optional[Mapping[str, str]] = None) -> iam.PrincipalBase:
    """EKS Pod Identity's trust: the pods service principal with AssumeRole and TagSession, for one cluster only.

    Without the conditions anyone in the account who may pass the role could associate it with another
    cluster (the confused-deputy conditions EKS documents for ``pods.eks.amazonaws.com``). ``session``: further
    ``StringEquals`` conditions (session tags), after ``aws:SourceAccount``.
    """
    return iam.ServicePrincipal(POD_IDENTITY_PRINCIPAL, conditions=pod_identity_conditions(
        account=account, cluster_arn=cluster_arn, session=session)).with_session_tags()


def pod_identity_conditions(*, account: str, cluster_arn: str,
                            session: Optional[Mapping[str, str]] = None) -> dict[str, dict[str, str]]:
    """The conditions of :func:`pod_identity_trust`, as its trust policy statement holds them."""
    return {"StringEquals": {"aws:SourceAccount": account, **(session or {})},
            "ArnEquals": {"aws:SourceArn": cluster_arn}}


class Observability(Construct):
    """Container Insights (enhanced) with Kueue metrics for the cluster."""

    def __init__(self, scope: Construct, id: str, *, version: str, cluster: eks.ICluster, account: str,
                 cluster_arn: str) -> None:
        """``account`` and ``cluster_arn``: the capacity account and the EKS cluster ARN (plan.cluster.eks_arn),
        plain strings known before deploy, for the agent role's trust conditions."""
        super().__init__(scope, id)
        self.agent_role = iam.Role(
            self,
            "AgentRole",
            assumed_by=pod_identity_trust(account=account, cluster_arn=cluster_arn),
            description="CloudWatch agent of the amazon-cloudwatch-observability add-on",
            managed_policies=[iam.ManagedPolicy.from_aws_managed_policy_name("CloudWatchAgentServerPolicy")],
        )
        acknowledge(
            self.agent_role,
            [(managed_policy("CloudWatchAgentServerPolicy"), "CloudWatchAgentServerPolicy is the AWS-managed policy the CloudWatch "
              "agent documents as required; it only writes metrics and logs.")],
        )
        # Its configuration is the table's (ADDON_CONFIGURATION): Container Insights (enhanced) with Kueue metrics.
        self.addon = EksAddon(
            self, "Resource", part=addon_part(OBSERVABILITY_ADDON, version), cluster=cluster,
            pod_identity_associations=[{"serviceAccount": AGENT_SERVICE_ACCOUNT, "roleArn": self.agent_role.role_arn}],
        )
