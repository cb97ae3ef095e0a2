"""A consumer account: the target roles that workloads in the capacity account assume."""

from __future__ import annotations

from typing import Any

from aws_cdk import Environment
from constructs import Construct

from hyperpod_gov.constructs.identity import TargetRole
from hyperpod_gov.plan import Plan
from hyperpod_gov.plan.plan import ConsumerStack

from .base import SpecStack


class ConsumerAccountStack(SpecStack):
    """One per consumer account with roles to create; each role under a team scope, then its service account."""

    def __init__(self, scope: Construct, id: str, *, plan: Plan, consumer: ConsumerStack, **kwargs: Any) -> None:
        super().__init__(scope, id, plan=plan, env=Environment(account=consumer.account, region=consumer.region),
                         what=f"roles that HyperPod workloads assume in {consumer.account_name}", **kwargs)
        scopes: dict[str, Construct] = {}
        for identity in consumer.identities:  # sorted by team, then service account
            team_scope = scopes.get(identity.team) or scopes.setdefault(identity.team, Construct(self, identity.team))
            TargetRole(
                team_scope, identity.service_account, identity=identity, capacity_account=plan.account,
                eks_cluster_name=plan.eks_cluster_name, eks_cluster_arn=plan.cluster.eks_arn,
                description=f"{plan.name}: data access of {identity.namespace}/{identity.service_account} "
                f"(HyperPod cluster {plan.cluster_name})",
            )
