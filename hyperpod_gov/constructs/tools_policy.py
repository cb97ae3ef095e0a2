"""The tools policy: the IAM rights ``aws eks update-kubeconfig`` and the HyperPod CLI need, attached to the teams'
viewers and submitters of the capacity account (``plan/tools_policy.py`` derives it, ``attached_policy``)."""

from __future__ import annotations

from aws_cdk import aws_iam as iam
from constructs import Construct

from ..plan.tools_policy import ToolsPolicyPlan
from ._nag import acknowledge, wildcard


class ToolsPolicy(Construct):
    """One ``AWS::IAM::ManagedPolicy`` attached by name to the teams' roles and users of this account.

    ``hyperpod_cluster_arn``: the HyperPod cluster's ARN (the capacity stack's, or the existing cluster's).
    Principals of other accounts get the same document from ``iam/<team>.json`` instead.
    """

    def __init__(self, scope: Construct, id: str, *, policy: ToolsPolicyPlan, hyperpod_cluster_arn: str) -> None:
        super().__init__(scope, id)
        self.resource = iam.CfnManagedPolicy(
            self, "Resource",
            policy_document=policy.document(hyperpod_cluster_arn),
            description="hyperpod-gov: what kubeconfig and the HyperPod CLI need, for the teams' viewers and "
                        "submitters",
            roles=list(policy.roles) or None,
            users=list(policy.users) or None,
        )
        entries = next(s for s in policy.statements if s.sid == "EksDescribeAccessEntries").resources
        findings = [(wildcard("Resource", "*"),
                     "sagemaker:ListClusters has no resource type (IAM accepts only \"*\"); `hyp list-cluster` "
                     "calls it to find the clusters, and it lists names and ARNs, nothing inside them.")]
        findings += [(wildcard("Resource", entry),
                      "`hyp set-cluster-context` reads the caller's own access entry; an entry's ARN ends with the "
                      "principal's name and a UUID EKS makes, and one document cannot list every team principal's "
                      "(6,144 characters): read-only, this account's principals' entries on this cluster only.")
                     for entry in entries]
        acknowledge(self.resource, findings)

