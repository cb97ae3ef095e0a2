"""The HyperPod operators of ``cluster.operators`` as EKS add-ons, each with its roles.

What each operator installs, in which order and with which roles is plan data (``plan/operators.py``, sources in
docs/operators.md); this module only translates it. The add-ons run pods, so callers make the construct depend on
the HyperPod cluster (nodes) and on the Pod Identity agent (the roles are assumed through it).

The inference operator's add-on takes IRSA roles only: with it, the EKS cluster's IAM OIDC provider is created
(CDK's own, ``Cluster.open_id_connect_provider``), and its TLS certificate bucket.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

from aws_cdk import Aws, CfnJson, Duration, RemovalPolicy, Stack, aws_eks_v2 as eks, aws_iam as iam, aws_s3 as s3
from constructs import Construct

from ..plan.operators import KEDA_ACTIONS, AddonRole, OperatorAddon, OperatorChart, fsx_csi_addon_spec
from ..plan.tables_addon import addon_part
from ._nag import acknowledge, managed_policy, wildcard
from .addons import EksAddon
from .observability import pod_identity_trust

ASSETS = Path(__file__).resolve().parents[1] / "assets"
STS_AUDIENCE = "sts.amazonaws.com"


def irsa_trust(scope: Construct, id: str, *, provider: iam.IOpenIdConnectProvider, namespace: str,
               service_account: str) -> iam.PrincipalBase:
    """The cluster's OIDC provider, for one service account only: ``<issuer>:sub`` and ``<issuer>:aud`` with
    StringEquals (the issuer is a deploy-time value, hence the CfnJson keys)."""
    issuer = provider.open_id_connect_provider_issuer
    conditions = CfnJson(scope, id, value={
        f"{issuer}:sub": f"system:serviceaccount:{namespace}:{service_account}",
        f"{issuer}:aud": STS_AUDIENCE,
    })
    return iam.OpenIdConnectPrincipal(provider, conditions={"StringEquals": conditions})


def policy_wildcards(document: dict) -> list[tuple[str, str]]:
    """Each wildcard ``("Action" | "Resource", value)`` of a policy document, once, in order: the exact cdk-nag
    findings the document raises."""
    found: list[tuple[str, str]] = []
    for statement in document["Statement"]:
        for kind in ("Action", "Resource"):
            values = statement.get(kind, [])
            for value in [values] if isinstance(values, str) else values:
                if "*" in value and (kind, value) not in found:
                    found.append((kind, value))
    return found


def _trust(scope: Construct, role: AddonRole, *, account: str, eks_arn: str,
           provider: Optional[iam.IOpenIdConnectProvider]) -> iam.IPrincipal:
    if not role.irsa:
        return pod_identity_trust(account=account, cluster_arn=eks_arn)
    assert provider is not None, "IRSA roles need the cluster's OIDC provider"
    principal: iam.IPrincipal = irsa_trust(scope, f"{role.key}Trust", provider=provider, namespace=role.namespace,
                                           service_account=role.service_account)
    if role.sagemaker_trust:
        # The setup page's execution role also trusts SageMaker; only for this account's SageMaker resources.
        principal = iam.CompositePrincipal(principal, iam.ServicePrincipal(
            "sagemaker.amazonaws.com", conditions=sagemaker_trust_conditions()))
    return principal


def sagemaker_trust_conditions() -> dict:
    """Confused deputy for the inference operator's execution role: SageMaker assumes it only on behalf of a
    SageMaker resource of this account and region.

    The setup page's trust (sagemaker-hyperpod-model-deployment-setup.html, and the trust troubleshooting page
    sagemaker-hyperpod-model-deployment-ts-trust.html) names the service without a condition, and AWS does not
    document which resource SageMaker acts for with this role (the HyperPod cluster, or the SageMaker endpoint an
    InferenceEndpointConfig registers): ``cluster/*`` alone could break endpoint registration, so the ARN pattern
    is every SageMaker resource of this account and region; another account's resources never match."""
    return {
        "StringEquals": {"aws:SourceAccount": Aws.ACCOUNT_ID},
        "ArnLike": {"aws:SourceArn": f"arn:{Aws.PARTITION}:sagemaker:{Aws.REGION}:{Aws.ACCOUNT_ID}:*"},
    }


def _role(scope: Construct, role: AddonRole, *, account: str, eks_arn: str, hyperpod_arn: str,
          provider: Optional[iam.IOpenIdConnectProvider] = None, tls_bucket: Optional[s3.IBucket] = None) -> iam.Role:
    out = iam.Role(
        scope,
        role.key,
        assumed_by=_trust(scope, role, account=account, eks_arn=eks_arn, provider=provider),
        description=role.why,
        managed_policies=[iam.ManagedPolicy.from_aws_managed_policy_name(role.managed_policy)]
        if role.managed_policy else [],
    )
    findings: list[tuple[str, str]] = []
    if role.managed_policy:
        findings.append((managed_policy(role.managed_policy),
                         f"{role.managed_policy} is the AWS-managed policy AWS documents for the {role.why}."))
    if role.policy_file:
        document = json.loads((ASSETS / role.policy_file).read_text())
        policy = iam.Policy(scope, f"{role.key}Policy", document=iam.PolicyDocument.from_json(document))
        out.attach_inline_policy(policy)
        reason = (f"The AWS Load Balancer Controller's own policy ({role.policy_file}, the file AWS's inference "
                  "setup page attaches, unchanged): ELB and EC2 describe calls have no resource-level permissions, "
                  "and the load balancers, target groups and security groups it manages are named by the "
                  "controller, limited by its elbv2.k8s.aws/cluster tag conditions.")
        acknowledge(policy, [(wildcard(kind, value), reason) for kind, value in policy_wildcards(document)])
    if role.keda_metrics:
        for actions in KEDA_ACTIONS:
            out.add_to_policy(iam.PolicyStatement(actions=list(actions), resources=["*"]))
        findings.append((wildcard("Resource", "*"), "KEDA reads CloudWatch and Amazon Managed Prometheus metrics to "
                         "scale inference endpoints; these read actions have no resource-level permissions "
                         "(AWS's inference setup page grants them on *)."))
    if role.tls_bucket:
        assert tls_bucket is not None
        # The setup page's TLS bucket statements: the operator writes, tags, reads and deletes its certificates.
        out.add_to_policy(iam.PolicyStatement(
            actions=["s3:GetObject", "s3:PutObject", "s3:PutObjectTagging", "s3:DeleteObject"],
            resources=[tls_bucket.arn_for_objects("*")]))
        findings.append((wildcard("Resource", f"<{Stack.of(tls_bucket).get_logical_id(tls_bucket.node.default_child)}"
                                  ".Arn>/*"),  # type: ignore[arg-type]
                         "The inference operator stores TLS certificates under names it picks, in its own bucket."))
    if role.s3_read:
        # Model weights, from the prefixes the teams' inference endpoints may name (admission holds each team to its
        # own): read-only, this account's buckets only, never every bucket of the account.
        buckets = sorted({f"arn:aws:s3:::{bucket}" for bucket, _ in role.s3_read})
        objects = sorted({f"arn:aws:s3:::{bucket}/{prefix}*" for bucket, prefix in role.s3_read})
        condition = {"StringEquals": {"aws:ResourceAccount": account}}
        out.add_to_policy(iam.PolicyStatement(sid="ModelBuckets", actions=["s3:ListBucket"], resources=buckets,
                                              conditions=condition))
        out.add_to_policy(iam.PolicyStatement(sid="ModelObjects", actions=["s3:GetObject"], resources=objects,
                                              conditions=condition))
        findings += [(wildcard("Resource", arn), "Mountpoint reads the model objects under a prefix a team's "
                      "workload identities are granted (teams[].workloadIdentities[].grants.s3), whose keys are not "
                      "known in advance; read-only, this account's buckets only (aws:ResourceAccount).")
                     for arn in objects]
    if role.hyperpod_volumes:
        # HyperPod nodes attach EBS volumes through SageMaker, not EC2 (sagemaker-hyperpod-eks-ebs.html): this
        # cluster only.
        out.add_to_policy(iam.PolicyStatement(
            actions=["sagemaker:AttachClusterNodeVolume", "sagemaker:DetachClusterNodeVolume"],
            resources=[hyperpod_arn],
        ))
        out.add_to_policy(iam.PolicyStatement(actions=["eks:DescribeCluster"], resources=[eks_arn]))
    acknowledge(out, findings)
    return out


def oidc_provider(scope: Construct, cluster: eks.ICluster) -> iam.IOpenIdConnectProvider:
    """The EKS cluster's IAM OIDC provider, once per stack (``OidcProvider`` in the stack), for IRSA roles: audience
    ``sts.amazonaws.com``. No thumbprint is given: IAM then retrieves the issuer's CA thumbprint itself (CDK's
    ``OidcProviderNative``, which replaces aws_eks_v2's deprecated custom-resource provider)."""
    if not isinstance(cluster, eks.Cluster):
        raise ValueError("IRSA roles need the OIDC provider of a cluster this app creates")
    stack = Stack.of(scope)
    found = stack.node.try_find_child("OidcProvider")
    if found is not None:
        return found  # type: ignore[return-value]
    return iam.OidcProviderNative(stack, "OidcProvider", url=cluster.cluster_open_id_connect_issuer_url,
                                  client_ids=[STS_AUDIENCE])


def tls_bucket(scope: Construct, id: str, *, bucket_name: str) -> s3.Bucket:
    """The inference operator's TLS certificate bucket: encrypted, TLS-only, private, access-logged like the
    lifecycle bucket (its own log bucket, a year of logs)."""
    logs = s3.Bucket(
        scope, f"{id}AccessLogs",
        encryption=s3.BucketEncryption.S3_MANAGED,
        block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
        enforce_ssl=True,
        object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
        removal_policy=RemovalPolicy.RETAIN,
        lifecycle_rules=[s3.LifecycleRule(expiration=Duration.days(365))],
    )
    acknowledge(logs, [("AwsSolutions-S1", "This is the access-log bucket of the inference operator's TLS "
                        "bucket; logging it into itself would loop.")])
    return s3.Bucket(
        scope, id,
        bucket_name=bucket_name,
        encryption=s3.BucketEncryption.S3_MANAGED,
        block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
        enforce_ssl=True,
        versioned=True,
        server_access_logs_bucket=logs,
        server_access_logs_prefix="tls-bucket/",
        removal_policy=RemovalPolicy.RETAIN,
    )


def fsx_csi_addon(scope: Construct, cluster: eks.ICluster, version: str, *, account: str, eks_arn: str) -> EksAddon:
    """The FSx for Lustre CSI driver add-on and its IRSA role under ``scope``/``FsxCsiDriver``: one function for
    every feature that needs the driver, so the cluster gets it once."""
    existing = scope.node.try_find_child("FsxCsiDriver")
    if existing is not None:
        return existing.node.find_child("Resource")  # type: ignore[return-value]
    return _addon(scope, fsx_csi_addon_spec(version), cluster=cluster, account=account, eks_arn=eks_arn,
                  hyperpod_arn="", provider=oidc_provider(scope, cluster))


def _addon(scope: Construct, spec: OperatorAddon, *, cluster: eks.ICluster, account: str, eks_arn: str,
           hyperpod_arn: str, provider: Optional[iam.IOpenIdConnectProvider] = None,
           tls: Optional[s3.IBucket] = None, roles: Optional[dict[tuple[str, str], iam.Role]] = None) -> EksAddon:
    addon_scope = Construct(scope, spec.key)
    associations = []
    service_account_role: Optional[str] = None
    configuration: dict[str, Any] = {}
    for role in spec.roles:
        made = _role(addon_scope, role, account=account, eks_arn=eks_arn, hyperpod_arn=hyperpod_arn,
                     provider=provider, tls_bucket=tls)
        if roles is not None:
            roles[(spec.key, role.key)] = made
        if role.via == "pod-identity":
            associations.append({"serviceAccount": role.service_account, "roleArn": made.role_arn})
        elif role.via == "service-account":
            service_account_role = made.role_arn
        elif role.via == "executionRoleArn":
            configuration["executionRoleArn"] = made.role_arn
        elif role.via == "alb":
            configuration["alb"] = {"serviceAccount": {"create": True, "roleArn": made.role_arn}}
        elif role.via == "keda":
            configuration["keda"] = {"auth": {"aws": {"irsa": {"roleArn": made.role_arn}}}}
    if spec.inference:
        assert tls is not None
        configuration.update({"tlsCertificateS3Bucket": tls.bucket_name, "hyperpodClusterArn": hyperpod_arn})
    return EksAddon(addon_scope, "Resource", part=addon_part(spec.name, spec.version, configuration), cluster=cluster,
                    pod_identity_associations=associations, service_account_role_arn=service_account_role)


def operator_chart(scope: Construct, spec: OperatorChart, *, cluster: eks.ICluster) -> eks.HelmChart:
    """One operator's pinned Helm release (``Plan.operator_charts``), installed as the Kueue chart is
    (constructs/addons.py SchedulerInstall): its own namespace, waiting for the release to be ready."""
    return eks.HelmChart(scope, spec.key, cluster=cluster, chart=spec.chart, repository=spec.repository,
                         version=spec.version, release=spec.release, namespace=spec.namespace, create_namespace=True,
                         wait=True, timeout=Duration.minutes(15))


class Operators(Construct):
    """The add-ons of ``addons`` (``Plan.operator_addons``), each under a scope of its key, prerequisites first, and
    the Helm charts of ``charts`` (``Plan.operator_charts``), each under its key.

    ``account``, ``eks_arn``: the capacity account and the EKS cluster ARN, for the roles' trust conditions.
    ``hyperpod_arn``: the HyperPod cluster (a deploy-time reference in the capacity stack), the only cluster the
    EBS CSI driver's role may attach volumes on, and the inference add-on's ``hyperpodClusterArn``.
    ``tls_bucket_name``: the inference operator's TLS bucket (``plan.operators.tls_bucket_name``); needed only
    with the inference add-on, which needs a cluster this app creates (``eks.Cluster``: its OIDC provider).
    """

    def __init__(self, scope: Construct, id: str, *, addons: tuple[OperatorAddon, ...], cluster: eks.ICluster,
                 account: str, eks_arn: str, hyperpod_arn: str, tls_bucket_name: Optional[str] = None,
                 charts: tuple[OperatorChart, ...] = ()) -> None:
        super().__init__(scope, id)
        self.charts: dict[str, eks.HelmChart] = {c.key: operator_chart(self, c, cluster=cluster) for c in charts}
        self.addons: dict[str, EksAddon] = {}
        self.roles: dict[tuple[str, str], iam.Role] = {}
        self.tls_bucket: Optional[s3.Bucket] = None
        provider: Optional[iam.IOpenIdConnectProvider] = None
        if any(role.irsa for spec in addons for role in spec.roles):
            provider = oidc_provider(self, cluster)
        if any(spec.inference for spec in addons):
            if tls_bucket_name is None:
                raise ValueError("the inference add-on needs its TLS bucket's name")
            self.tls_bucket = tls_bucket(self, "TlsBucket", bucket_name=tls_bucket_name)
        for spec in addons:
            addon = _addon(self, spec, cluster=cluster, account=account, eks_arn=eks_arn, hyperpod_arn=hyperpod_arn,
                           provider=provider, tls=self.tls_bucket, roles=self.roles)
            for key in spec.after:
                addon.node.add_dependency(self.addons[key])
            self.addons[spec.key] = addon

