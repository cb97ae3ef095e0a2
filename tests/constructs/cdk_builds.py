"""What the plain-data emitters stand in for, built with aws-cdk-lib's own classes (issue 54).

Each resource of ``hyperpod_gov.constructs`` has one emitter: a function writing CloudFormation as plain data into
a ``plain.Fragment`` (``add_access_entry``, ``plain_identity``, ``plain_quota``, ``plain_topics``,
``plain_manifest``), which the constructs wrap. What those functions copy from aws-cdk-lib (logical ids, property
rendering, default policies, prune labels) is checked against the builds here, made with aws-cdk-lib's classes at
the same construct paths, so that an aws-cdk-lib upgrade that renders them otherwise fails the tests
(test_plain.py, test_plain_teams.py, test_plain_pinned.py). Nothing here is used by the library.
"""

from __future__ import annotations

from typing import Any, Sequence

import aws_cdk as cdk
from aws_cdk import Aws, aws_eks as eks_l1, aws_eks_v2 as eks, aws_iam as iam, aws_kms as kms
from aws_cdk import aws_sns as sns, aws_sns_subscriptions as subs
from constructs import Construct

from hyperpod_gov.constructs.identity import ASSUME, source_role_trust
from hyperpod_gov.constructs.monitoring import CLOUDWATCH_PRINCIPAL
from hyperpod_gov.constructs.task_governance import COMPUTE_QUOTA_TYPE
from hyperpod_gov.constructs.task_governance_provider import QUOTA_RESOURCE_TYPE
from hyperpod_gov.plan import PrincipalAccess, TeamPlan
from hyperpod_gov.plan import task_governance as tg
from hyperpod_gov.plan.identity import IdentityPlan
from hyperpod_gov.plan.tables import ACCESS_ENTRY, POD_IDENTITY, cfn_kwargs
from hyperpod_gov.plan.watches import TopicPlan


def access_entry(scope: Construct, id: str, *, cluster_name: str, access: PrincipalAccess) -> eks_l1.CfnAccessEntry:
    """``eks.CfnAccessEntry`` at ``<id>/Resource``."""
    return eks_l1.CfnAccessEntry(Construct(scope, id), "Resource",
                                 **cfn_kwargs(ACCESS_ENTRY, access, {"clusterName": cluster_name}))


def identity_role(scope: Construct, id: str, *, cluster_name: str, identity: IdentityPlan, account: str,
                  cluster_arn: str) -> tuple[iam.Role, eks_l1.CfnPodIdentityAssociation]:
    """A workload identity without grants: ``iam.Role`` at ``<id>/SourceRole`` trusting Pod Identity, its
    ``DefaultPolicy`` (``add_to_policy``) when it assumes a target role, and ``CfnPodIdentityAssociation`` at
    ``<id>/Association`` taking the role's ARN."""
    if not identity.grants.empty:
        raise ValueError("only an identity without grants is plain data")
    owner = Construct(scope, id)
    role = iam.Role(owner, "SourceRole", role_name=identity.source_role_name,
                    assumed_by=source_role_trust(account=account, cluster_arn=cluster_arn,
                                                 namespace=identity.namespace,
                                                 service_account=identity.service_account),
                    description=f"Pod Identity of {identity.namespace}/{identity.service_account}")
    if identity.target_role_arn:
        role.add_to_policy(iam.PolicyStatement(sid="AssumeTargetRole", actions=ASSUME,
                                               resources=[identity.target_role_arn]))
    props = cfn_kwargs(POD_IDENTITY, identity, {"clusterName": cluster_name})
    props["role_arn"] = role.role_arn
    return role, eks_l1.CfnPodIdentityAssociation(owner, "Association", **props)


def topics(scope: Construct, id: str, *, plans: Sequence[TopicPlan], key: kms.IKey) -> dict[str, sns.Topic]:
    """Per topic plan, in key order, ``sns.Topic`` at ``<id>/<key>/Resource`` encrypted with ``key``, TLS only
    (``enforce_ssl``), publishing allowed to this account's alarms (``add_to_resource_policy``: its
    ``TopicPolicy``), and an ``EmailSubscription``."""
    owner = Construct(scope, id)
    out: dict[str, sns.Topic] = {}
    for plan in sorted(plans, key=lambda t: t.key):
        topic = sns.Topic(Construct(owner, plan.key), "Resource", display_name=plan.display_name[:100],
                          master_key=key, enforce_ssl=True)
        topic.add_to_resource_policy(iam.PolicyStatement(
            sid="CloudWatchAlarmsPublish", principals=[iam.ServicePrincipal(CLOUDWATCH_PRINCIPAL)],
            actions=["sns:Publish"], resources=[topic.topic_arn],
            conditions={"StringEquals": {"aws:SourceAccount": Aws.ACCOUNT_ID},
                        "ArnLike": {"aws:SourceArn": f"arn:{Aws.PARTITION}:cloudwatch:{Aws.REGION}:{Aws.ACCOUNT_ID}"
                                                     ":alarm:*"}}))
        if plan.email:
            topic.add_subscription(subs.EmailSubscription(plan.email))
        out[plan.key] = topic
    return out


def quota(scope: Construct, id: str, *, team: TeamPlan, cluster_arn: str,
          service_token: str | None = None) -> cdk.CfnResource | cdk.CustomResource:
    """The team's compute quota at ``<id>/Resource``: ``CfnResource`` of ``AWS::SageMaker::ComputeQuota``, or with
    a provider's ``service_token`` a ``CustomResource`` of ``Custom::ComputeQuota``."""
    owner = Construct(scope, id)
    properties: dict[str, Any] = tg.compute_quota_properties(team, cluster_arn)
    if service_token is not None:
        return cdk.CustomResource(owner, "Resource", service_token=service_token,
                                  resource_type=QUOTA_RESOURCE_TYPE, properties=properties)
    return cdk.CfnResource(owner, "Resource", type=COMPUTE_QUOTA_TYPE, properties=properties)


def manifest(scope: Construct, id: str, *, cluster: eks.ICluster,
             objects: Sequence[dict[str, Any]]) -> eks.KubernetesManifest:
    """``eks.KubernetesManifest`` at ``<id>/Resource``, pruning."""
    return eks.KubernetesManifest(Construct(scope, id), "Resource", cluster=cluster, manifest=list(objects),
                                  prune=True)
