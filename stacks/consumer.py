"""A consumer account: the target roles that workloads in the capacity account assume."""

from __future__ import annotations

from typing import Any, Sequence

from aws_cdk import Environment, Stack, Tags
from constructs import Construct

from hyperpod_gov.constructs.identity import TargetRole
from hyperpod_gov.plan import IdentityPlan
from hyperpod_gov.spec.models import ConsumerAccount, GovernanceSpec


class ConsumerAccountStack(Stack):
    """One per declared consumer account and region; each role under a scope named team/service account."""

    def __init__(self, scope: Construct, id: str, *, spec: GovernanceSpec, consumer: ConsumerAccount,
                 identities: Sequence[IdentityPlan], **kwargs: Any) -> None:
        super().__init__(
            scope, id, env=Environment(account=consumer.id, region=consumer.region),
            description=f"hyperpod-gov {spec.name}: roles that HyperPod workloads assume in {consumer.name}",
            **kwargs,
        )
        Tags.of(self).add("hyperpod-gov:spec", spec.name)
        for identity in sorted(identities, key=lambda i: (i.team, i.service_account)):
            TargetRole(self, f"{identity.team}-{identity.service_account}", spec=spec, identity=identity)
