"""A Unified Studio account and region: the HyperPod connections of the projects whose contracts name it."""

from __future__ import annotations

from typing import Any

from aws_cdk import Environment, Stack, Tags
from constructs import Construct

from hyperpod_gov.constructs.studio import StudioConnection
from hyperpod_gov.plan import Plan
from hyperpod_gov.plan.contracts import StudioStack

from .capacity import SPEC_TAG


class StudioConnectionsStack(Stack):
    """One per Unified Studio account and region with connections; each connection under its team's scope."""

    def __init__(self, scope: Construct, id: str, *, plan: Plan, studio: StudioStack, **kwargs: Any) -> None:
        super().__init__(
            scope, id, env=Environment(account=studio.account, region=studio.region),
            description=f"hyperpod-gov {plan.name}: Unified Studio connections to HyperPod cluster "
            f"{plan.cluster_name}",
            **kwargs,
        )
        Tags.of(self).add(SPEC_TAG, plan.name)
        for connection in studio.connections:  # sorted by team
            StudioConnection(Construct(self, connection.team), "Connection", connection=connection)
