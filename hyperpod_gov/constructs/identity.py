"""Workload identity: a Pod Identity source role per service account, with the data grants the spec gives it in
the capacity account, and, in a consumer account, the target role it may assume, trusting exactly that source
role, namespace and service account."""

from __future__ import annotations

from typing import Optional, Sequence

from aws_cdk import Aws, CfnResource, aws_eks as eks_l1, aws_iam as iam, aws_kms as kms
from constructs import Construct

from ..plan import names
from ..plan.identity import IdentityPlan
from ..spec.models import S3Access
from ..plan.tables import POD_IDENTITY, cfn_kwargs, cfn_properties
from ._nag import acknowledge, wildcard
from .observability import POD_IDENTITY_PRINCIPAL, pod_identity_conditions, pod_identity_trust
from .plain import Fragment, get_att, logical_id

ASSUME = ["sts:AssumeRole", "sts:TagSession"]
# Session tag EKS Pod Identity sets besides names.SESSION_TAG_*: the cluster's ARN, unique across regions.
SESSION_TAG_CLUSTER_ARN = "eks-cluster-arn"
S3_READ = ["s3:GetObject"]
S3_WRITE = ["s3:AbortMultipartUpload", "s3:DeleteObject", "s3:PutObject"]
ECR_PULL = ["ecr:BatchCheckLayerAvailability", "ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer"]
# https://docs.aws.amazon.com/eks/latest/userguide/pod-id-role.html ("Setting Conditions") and pod-id-abac.html
# (the session tags Pod Identity sets): the trust names the namespace and service account, so that an association
# of this role with another service account (by anyone who may pass it) yields no credentials.
POD_IDENTITY_DOCS = "https://docs.aws.amazon.com/eks/latest/userguide/pod-id-role.html"
# Where WorkloadIdentityRole puts the source role and the association (construct ids below it), and its include.
ROLE_ID, ASSOCIATION_ID, INCLUDE_ID = "SourceRole", "Association", "Resources"


def _session_tags(cluster_arn: str, namespace: str, service_account: str) -> dict[str, str]:
    return {
        f"aws:RequestTag/{SESSION_TAG_CLUSTER_ARN}": cluster_arn,
        f"aws:RequestTag/{names.SESSION_TAG_NAMESPACE}": namespace,
        f"aws:RequestTag/{names.SESSION_TAG_SERVICE_ACCOUNT}": service_account,
    }


def source_role_trust(*, account: str, cluster_arn: str, namespace: str, service_account: str) -> iam.IPrincipal:
    """Pod Identity's trust for one service account: the confused-deputy conditions (``aws:SourceAccount``,
    ``aws:SourceArn``: this cluster) plus the session tags EKS sets on the session (``POD_IDENTITY_DOCS``): the
    cluster's ARN, the namespace and the service account."""
    # One principal with every condition (the same policy as adding the tags with ``with_conditions``): a jsii
    # call fewer for each of the hundreds of identities of a large spec.
    return pod_identity_trust(account=account, cluster_arn=cluster_arn,
                              session=_session_tags(cluster_arn, namespace, service_account))


def _description(identity: IdentityPlan) -> str:
    return f"Pod Identity of {identity.namespace}/{identity.service_account}"


def s3_statements(accesses: Sequence[S3Access]) -> tuple[list[iam.PolicyStatement], list[tuple[str, str]], bool]:
    """Object and list statements for S3 prefixes, the cdk-nag findings to acknowledge, and whether any writes.

    A prefix ends at a '/' (``spec.teams.folder_prefix``), so ``data/*`` and the list condition ``data/*`` never
    reach ``data-other/``; the whole bucket ("" prefix) lists without a condition.
    """
    statements, findings, writes = [], [], False
    for access in sorted(accesses, key=lambda a: (a.bucket, a.prefix, a.access)):
        objects = f"arn:{Aws.PARTITION}:s3:::{access.bucket}/{access.prefix}*"
        actions = S3_READ + (S3_WRITE if access.access == "read-write" else [])
        writes = writes or access.access == "read-write"
        statements.append(iam.PolicyStatement(actions=sorted(actions), resources=[objects]))
        statements.append(iam.PolicyStatement(
            actions=["s3:ListBucket"], resources=[f"arn:{Aws.PARTITION}:s3:::{access.bucket}"],
            conditions={"StringLike": {"s3:prefix": [f"{access.prefix}*"]}} if access.prefix else None,
        ))
        findings.append((
            wildcard("Resource", f"arn:<AWS::Partition>:s3:::{access.bucket}/{access.prefix}*"),
            f"Object keys under s3://{access.bucket}/{access.prefix} are not known in advance; the grant is "
            f"limited to that prefix ({access.access}) as the spec names it.",
        ))
    return statements, findings, writes


class WorkloadIdentityRole(Construct):
    """Source role trusting ``pods.eks.amazonaws.com`` and its Pod Identity association.

    For a cross-account identity the association sets ``targetRoleArn`` and the
    source role may assume (and tag a session of) that one role and nothing else.

    An identity without grants of its own is plain data (:func:`plain_identity`, the one emitter of that case,
    which a teams stack also calls into its own fragment) in one ``CfnInclude``; one with grants is aws-cdk-lib's
    ``iam.Role`` with its statements (merged by ``@aws-cdk/aws-iam:minimizePolicies``, findings acknowledged on
    the role), the one emitter of that case. Either way ``role_resource`` (``CfnRole``) and ``association``
    (``CfnPodIdentityAssociation``) are the escape hatches; ``role`` is the L2 role, None for the plain case.
    """

    def __init__(self, scope: Construct, id: str, *, cluster_name: str, identity: IdentityPlan, account: str,
                 cluster_arn: str, team_key: Optional[kms.IKey] = None) -> None:
        """``account``, ``cluster_arn``: the capacity account and EKS cluster ARN (plan.cluster.eks_arn); the
        source role trusts Pod Identity of that one cluster, namespace and service account only. ``team_key``: the
        team bucket's key, when the identity's grants hold the team bucket."""
        super().__init__(scope, id)
        self.role: Optional[iam.Role] = None
        self._role_resource: Optional[iam.CfnRole] = None
        if is_plain(identity):
            fragment = Fragment(self)
            plain_identity(fragment, [], cluster_name=cluster_name, identity=identity, account=account,
                           cluster_arn=cluster_arn)
            include = fragment.include_resources(INCLUDE_ID)
            role_id, association_id = (logical_id([*fragment.components, *path])
                                       for path in ([ROLE_ID, "Resource"], [ASSOCIATION_ID]))
            self._role_resource = include.get_resource(role_id)  # type: ignore[assignment]
            self.association: CfnResource = include.get_resource(association_id)
            return
        role = self.role = iam.Role(
            self,
            ROLE_ID,
            role_name=identity.source_role_name,
            assumed_by=source_role_trust(account=account, cluster_arn=cluster_arn, namespace=identity.namespace,
                                         service_account=identity.service_account),
            description=_description(identity),
        )
        target = identity.target_role_arn
        if target:
            role.add_to_policy(iam.PolicyStatement(sid="AssumeTargetRole", actions=ASSUME, resources=[target]))
        self._grant(role, identity, team_key)
        # The table's roleArn is the role's planned ARN; the association takes the deploy-time reference, which
        # makes CloudFormation create the role first.
        props = cfn_kwargs(POD_IDENTITY, identity, {"clusterName": cluster_name})
        props["role_arn"] = role.role_arn
        self.association = eks_l1.CfnPodIdentityAssociation(self, ASSOCIATION_ID, **props)

    @property
    def role_resource(self) -> iam.CfnRole:
        """The source role's ``AWS::IAM::Role`` (read from jsii)."""
        if self._role_resource is None:
            self._role_resource = self.role.node.default_child  # type: ignore[union-attr,assignment]
        return self._role_resource  # type: ignore[return-value]

    @staticmethod
    def _grant(role: iam.Role, identity: IdentityPlan, team_key: Optional[kms.IKey]) -> None:
        """``identity.grants`` on the source role: S3 prefixes, KMS keys, the secrets prefix, ECR pulls, the team
        bucket."""
        g = identity.grants
        statements, findings, writes = s3_statements(g.s3)
        if g.team_bucket is not None:
            if team_key is None:
                raise ValueError(f"{identity.path}: the team bucket {g.team_bucket} needs the team's key")
            bucket = f"arn:{Aws.PARTITION}:s3:::{g.team_bucket}"
            statements += [
                iam.PolicyStatement(sid="TeamBucketObjects", actions=sorted(S3_READ + S3_WRITE),
                                    resources=[f"{bucket}/*"]),
                iam.PolicyStatement(sid="TeamBucketList", actions=["s3:ListBucket"], resources=[bucket]),
                iam.PolicyStatement(sid="TeamBucketKey", actions=["kms:Decrypt", "kms:GenerateDataKey"],
                                    resources=[team_key.key_arn]),
            ]
            findings.append((wildcard("Resource", f"arn:<AWS::Partition>:s3:::{g.team_bucket}/*"),
                             "The team's own bucket: its pods write objects whose keys are not known in advance."))
        if g.kms_key_arns:
            actions = ["kms:Decrypt"] + (["kms:GenerateDataKey"] if g.writes else [])
            statements.append(iam.PolicyStatement(sid="Keys", actions=actions, resources=list(g.kms_key_arns)))
        if g.secrets_arn:
            statements.append(iam.PolicyStatement(sid="Secrets", actions=["secretsmanager:GetSecretValue"],
                                                  resources=[g.secrets_arn]))
            findings.append((wildcard("Resource", g.secrets_arn),
                             "Secrets Manager appends a random 6-character suffix to every secret's ARN; "
                             "'secret:<prefix>*' is the documented form for the secrets under one name prefix."))
        if g.ecr_repository_arns:
            statements += [
                iam.PolicyStatement(sid="PullImages", actions=list(ECR_PULL),
                                    resources=list(g.ecr_repository_arns)),
                iam.PolicyStatement(sid="EcrLogin", actions=["ecr:GetAuthorizationToken"], resources=["*"]),
            ]
            findings.append((wildcard("Resource", "*"), "ecr:GetAuthorizationToken supports no resource-level "
                             "permissions; the pulls themselves are limited to the named repositories."))
        for statement in statements:
            role.add_to_policy(statement)
        if findings:
            acknowledge(role, findings)


POLICY_VERSION = "2012-10-17"
MAX_POLICY_NAME = 128  # aws-cdk-lib's MAX_POLICY_NAME_LEN: a default policy's name is its logical id's last 128


def is_plain(identity: IdentityPlan) -> bool:
    """Whether ``identity`` is plain data (:func:`plain_identity`): it has no grants of its own."""
    return identity.grants.empty


def plain_identity(fragment: Fragment, below: Sequence[str], *, cluster_name: str, identity: IdentityPlan,
                   account: str, cluster_arn: str) -> bool:
    """A workload identity without grants of its own (at most the target role to assume) as plain data in
    ``fragment``, where ``WorkloadIdentityRole`` at ``below`` puts it: the source role, its default policy and
    the association, as aws-cdk-lib's ``iam.Role`` (with ``add_to_policy``) and ``CfnPodIdentityAssociation``
    render them (tests/constructs/test_plain.py and test_plain_pinned.py build those and compare). An identity
    with grants has statements that aws-cdk-lib merges (``@aws-cdk/aws-iam:minimizePolicies``), a team key's ARN
    (a token) and cdk-nag findings to acknowledge on the role: False, and nothing is added; a
    ``WorkloadIdentityRole`` builds it with the L2 role."""
    if not is_plain(identity):
        return False
    trust = {"Action": ASSUME, "Condition": pod_identity_conditions(
                 account=account, cluster_arn=cluster_arn,
                 session=_session_tags(cluster_arn, identity.namespace, identity.service_account)),
             "Effect": "Allow", "Principal": {"Service": POD_IDENTITY_PRINCIPAL}}
    role = fragment.add([*below, ROLE_ID, "Resource"], "AWS::IAM::Role", {
        "AssumeRolePolicyDocument": {"Statement": [trust], "Version": POLICY_VERSION},
        "Description": _description(identity), "RoleName": identity.source_role_name})
    if identity.target_role_arn:
        policy_path = [*below, ROLE_ID, "DefaultPolicy", "Resource"]
        policy = logical_id([*fragment.components, *policy_path])
        fragment.add(policy_path, "AWS::IAM::Policy", {
            "PolicyDocument": {"Statement": [{"Action": ASSUME, "Effect": "Allow",
                                              "Resource": identity.target_role_arn, "Sid": "AssumeTargetRole"}],
                               "Version": POLICY_VERSION},
            "PolicyName": policy[-MAX_POLICY_NAME:], "Roles": [{"Ref": role}]})
    association = cfn_properties(POD_IDENTITY, identity, {"clusterName": cluster_name})
    association["RoleArn"] = get_att(role, "Arn")
    fragment.add([*below, ASSOCIATION_ID], "AWS::EKS::PodIdentityAssociation", association)
    return True


class TargetRole(Construct):
    """Role in a consumer account, assumable only by one workload's source role, with only its data access."""

    def __init__(self, scope: Construct, id: str, *, identity: IdentityPlan, capacity_account: str,
                 eks_cluster_name: str, eks_cluster_arn: str, description: str) -> None:
        super().__init__(scope, id)
        target = identity.created_target
        if target is None:
            raise ValueError(f"{identity.namespace}/{identity.service_account} has no role to create")
        source_arn = f"arn:{Aws.PARTITION}:iam::{capacity_account}:role/{identity.source_role_name}"
        trust = iam.AccountPrincipal(capacity_account).with_conditions({
            "StringEquals": {
                "aws:PrincipalArn": source_arn,
                f"aws:RequestTag/{names.SESSION_TAG_CLUSTER}": eks_cluster_name,
                # The name alone matches a cluster of the same name in another region of the capacity account.
                f"aws:RequestTag/{SESSION_TAG_CLUSTER_ARN}": eks_cluster_arn,
                f"aws:RequestTag/{names.SESSION_TAG_NAMESPACE}": identity.namespace,
                f"aws:RequestTag/{names.SESSION_TAG_SERVICE_ACCOUNT}": identity.service_account,
            }
        }).with_session_tags()
        self.role = iam.Role(
            self, "Resource", role_name=target.name, assumed_by=trust, description=description,
        )
        statements, findings, writes = s3_statements(target.s3)
        for statement in statements:
            self.role.add_to_policy(statement)
        if target.kms_keys:
            actions = ["kms:Decrypt"] + (["kms:GenerateDataKey"] if writes else [])
            self.role.add_to_policy(iam.PolicyStatement(actions=actions, resources=sorted(target.kms_keys)))
        if findings:
            acknowledge(self.role, findings)
