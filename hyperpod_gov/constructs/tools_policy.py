"""A team's tools policy: the IAM rights ``aws eks update-kubeconfig`` and the HyperPod CLI need, attached to the
team's viewers and submitters of the capacity account (``plan/tools_policy.py`` derives it)."""

from __future__ import annotations

from aws_cdk import aws_iam as iam
from constructs import Construct

from ..plan.tools_policy import ToolsPolicyPlan
from ._nag import acknowledge, wildcard


class ToolsPolicy(Construct):
    """One ``AWS::IAM::ManagedPolicy`` attached by name to the team's roles and users of this account.

    ``hyperpod_cluster_arn``: the HyperPod cluster's ARN (the capacity stack's, or the existing cluster's).
    Principals of other accounts get the same document from ``iam/<team>.json`` instead.
    """

    def __init__(self, scope: Construct, id: str, *, policy: ToolsPolicyPlan, hyperpod_cluster_arn: str) -> None:
        super().__init__(scope, id)
        self.resource = iam.CfnManagedPolicy(
            self, "Resource",
            policy_document=policy.document(hyperpod_cluster_arn),
            description=f"hyperpod-gov: what kubeconfig and the HyperPod CLI need, for team {policy.team}",
            roles=list(policy.roles) or None,
            users=list(policy.users) or None,
        )
        entries = next(s for s in policy.statements if s.sid == "EksDescribeTeamAccessEntries").resources
        findings = [(wildcard("Resource", "*"),
                     "sagemaker:ListClusters has no resource type (IAM accepts only \"*\"); `hyp list-cluster` "
                     "calls it to find the clusters, and it lists names and ARNs, nothing inside them.")]
        findings += [(wildcard("Resource", entry),
                      "The last segment of an access entry's ARN is a UUID EKS makes with the entry: the statement "
                      "names the team's own principals' entries on this cluster, nothing else.")
                     for entry in entries]
        acknowledge(self.resource, findings)

