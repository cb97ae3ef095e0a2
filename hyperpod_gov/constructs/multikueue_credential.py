"""The MultiKueue worker credential's infrastructure (docs/fleet.md, "The worker credential").

``WorkerCredential``, in a worker's account and region: a customer managed key, the secret it encrypts
(``hyperpod-gov/multikueue/<worker member>/kubeconfig``, readable by the manager's copier role alone), and the
minter function that writes it. ``ManagerCopier``, in the manager's: the copier function, whose role has a fixed
name so each worker's policies name it before it exists.
"""

from __future__ import annotations

import json

from aws_cdk import RemovalPolicy, Stack, aws_iam as iam, aws_kms as kms, aws_secretsmanager as secretsmanager
from constructs import Construct

from ..plan.multikueue_credential import COPY_OFFSET_MINUTES, SCHEDULE_RATE_HOURS, CredentialPlan, WorkerSecret
from ._nag import acknowledge, wildcard
from .multikueue_function import CredentialFunction, Placement

MINT_CRON = f"cron(0 0/{SCHEDULE_RATE_HOURS} * * ? *)"  # 00:00, 08:00, 16:00 UTC
COPY_CRON = f"cron({COPY_OFFSET_MINUTES} 0/{SCHEDULE_RATE_HOURS} * * ? *)"  # half an hour after each mint


def copier_role_arn(partition: str, cp: CredentialPlan) -> str:
    return f"arn:{partition}:iam::{cp.manager_account}:role/{cp.copier_role}"


def secret_arn_pattern(partition: str, w: WorkerSecret) -> str:
    """The worker secret's ARN, its six random characters as ``??????`` (IAM's one-character wildcards)."""
    return f"arn:{partition}:secretsmanager:{w.region}:{w.account}:secret:{w.secret}-??????"


def secret_partial_arn(partition: str, w: WorkerSecret) -> str:
    """The ARN GetSecretValue takes for another account's secret, without the six characters."""
    return f"arn:{partition}:secretsmanager:{w.region}:{w.account}:secret:{w.secret}"


class WorkerCredential(Construct):
    """A worker's secret, its key and the minter (the worker's member stack ``<member>-multikueue``)."""

    def __init__(self, scope: Construct, id: str, *, cp: CredentialPlan, placement: Placement) -> None:
        super().__init__(scope, id)
        if cp.secret is None:
            raise ValueError(f"{cp.member} is no MultiKueue worker")
        stack = Stack.of(self)
        via = f"secretsmanager.{stack.region}.amazonaws.com"
        copier = copier_role_arn(stack.partition, cp)
        self.key = kms.Key(self, "Key", enable_key_rotation=True, removal_policy=RemovalPolicy.RETAIN,
                           description=f"Encrypts the MultiKueue kubeconfig of worker {cp.cluster} "
                           f"({cp.secret.secret})")
        self.secret = secretsmanager.CfnSecret(  # no value: the minter writes every version (never a deploy)
            self, "Secret", name=cp.secret.secret, kms_key_id=self.key.key_arn,
            description=f"kubeconfig of MultiKueue worker {cp.cluster} with a bounded token, for manager account "
            f"{cp.manager_account}; written by the minter every {SCHEDULE_RATE_HOURS} hours")
        self.secret.apply_removal_policy(RemovalPolicy.DESTROY)
        # Only the manager's copier role may read it: the account as principal, narrowed to the role's ARN, so the
        # policy does not need the role to exist first (a role ARN principal is checked when the policy is set).
        self.resource_policy = secretsmanager.CfnResourcePolicy(
            self, "ResourcePolicy", secret_id=self.secret.ref, block_public_policy=True,
            resource_policy={"Version": "2012-10-17", "Statement": [{
                "Sid": "TheManagersCopierReads", "Effect": "Allow",
                "Principal": {"AWS": f"arn:{stack.partition}:iam::{cp.manager_account}:root"},
                "Action": "secretsmanager:GetSecretValue", "Resource": "*",
                "Condition": {"ArnEquals": {"aws:PrincipalArn": copier}}}]})
        self.minter = CredentialFunction(
            self, "Minter", cp=cp, handler="index.mint", placement=placement, cron=MINT_CRON,
            description=f"hyperpod-gov MultiKueue minter of worker {cp.cluster}",
            environment={"WORKER": cp.cluster, "EKS_CLUSTER": cp.eks_cluster, "SECRET_ID": cp.secret.secret,
                         "NAMESPACE": cp.namespace, "SERVICE_ACCOUNT": cp.service_account})
        self.minter.add(iam.PolicyStatement(sid="WriteTheSecret", actions=["secretsmanager:PutSecretValue"],
                                            resources=[self.secret.ref]))
        self.minter.run_at_deploy.node.add_dependency(self.resource_policy)
        # What Secrets Manager needs of the writer of a secret value ("Permissions for the KMS key", Secrets Manager
        # user guide, "Secret encryption and decryption"): GenerateDataKey and Decrypt, here only through it. In the
        # role's policy, which the key policy's account statement lets IAM grant: a key policy naming a role made in
        # the same deploy can be refused while IAM has not yet propagated the new role.
        self.minter.add(iam.PolicyStatement(
            sid="UseTheKeyThroughSecretsManager", actions=["kms:GenerateDataKey", "kms:Decrypt"],
            resources=[self.key.key_arn], conditions={"StringEquals": {"kms:ViaService": via}}))
        self.key.add_to_resource_policy(iam.PolicyStatement(
            sid="TheCopierDecryptsThroughSecretsManager",
            principals=[iam.AccountPrincipal(cp.manager_account)], actions=["kms:Decrypt"], resources=["*"],
            conditions={"StringEquals": {"kms:ViaService": via}, "ArnEquals": {"aws:PrincipalArn": copier}}))
        acknowledge(self.secret, [("AwsSolutions-SMG4", "The minter function rotates this secret: every "
                                   f"{SCHEDULE_RATE_HOURS} hours it writes a new version holding a new bounded "
                                   "token (Secrets Manager rotation would need a second function doing the same).")])


class ManagerCopier(Construct):
    """The manager's copier of every worker's kubeconfig (the manager's member stack ``<member>-multikueue``)."""

    def __init__(self, scope: Construct, id: str, *, cp: CredentialPlan, placement: Placement) -> None:
        super().__init__(scope, id)
        stack = Stack.of(self)
        workers = [{"worker": w.worker, "region": w.region, "secretArn": secret_partial_arn(stack.partition, w),
                    "kubeconfigSecret": w.kubeconfig_secret} for w in cp.workers]
        self.copier = CredentialFunction(
            self, "Copier", cp=cp, handler="index.copy", placement=placement, cron=COPY_CRON,
            role_name=cp.copier_role, description=f"hyperpod-gov MultiKueue copier of manager {cp.cluster}",
            environment={"EKS_CLUSTER": cp.eks_cluster, "NAMESPACE": cp.namespace,
                         "KUBECONFIG_KEY": cp.kubeconfig_key, "WORKERS": json.dumps(workers, sort_keys=True)})
        patterns = [secret_arn_pattern(stack.partition, w) for w in cp.workers]
        keys = sorted({f"arn:{stack.partition}:kms:{w.region}:{w.account}:key/*" for w in cp.workers})
        self.copier.add(
            iam.PolicyStatement(sid="ReadTheWorkersSecrets", actions=["secretsmanager:GetSecretValue"],
                                resources=patterns),
            iam.PolicyStatement(sid="DecryptTheWorkersSecrets", actions=["kms:Decrypt"], resources=keys, conditions={
                "StringEquals": {"kms:ViaService": sorted({f"secretsmanager.{w.region}.amazonaws.com"
                                                           for w in cp.workers})},
                "StringLike": {"kms:EncryptionContext:SecretARN": patterns}}))
        nag = "<AWS::Partition>"  # how cdk-nag prints the partition in a finding
        acknowledge(self.copier.policy, [
            *((wildcard("Resource", secret_arn_pattern(nag, w)), f"Worker {w.worker}'s secret {w.secret}: Secrets Manager appends six random "
               "characters to its ARN when the worker's stack creates it, so they are matched, one each.")
              for w in cp.workers),
            *((wildcard("Resource", f"arn:{nag}:kms:{region}:{account}:key/*"), "The worker's key is created by the worker's stack in another account, so "
               "its id is unknown here; Decrypt applies only through Secrets Manager (kms:ViaService) and only to "
               "the workers' kubeconfig secrets (kms:EncryptionContext:SecretARN), and the key's own policy "
               "admits this role alone.") for region, account in sorted({(w.region, w.account) for w in cp.workers})),
        ])
