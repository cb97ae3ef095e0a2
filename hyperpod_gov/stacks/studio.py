"""A Unified Studio account and region: the HyperPod connections of the projects whose contracts name it."""

from __future__ import annotations

from typing import Any

from aws_cdk import Environment
from constructs import Construct

from hyperpod_gov.constructs.studio import StudioConnection
from hyperpod_gov.plan import Plan
from hyperpod_gov.plan.contracts import StudioStack

from .base import SpecStack


class StudioConnectionsStack(SpecStack):
    """One per Unified Studio account and region with connections; each connection under its team's scope."""

    def __init__(self, scope: Construct, id: str, *, plan: Plan, studio: StudioStack, **kwargs: Any) -> None:
        super().__init__(scope, id, plan=plan, env=Environment(account=studio.account, region=studio.region),
                         what=f"Unified Studio connections to HyperPod cluster {plan.cluster_name}", **kwargs)
        for connection in studio.connections:  # sorted by team
            StudioConnection(Construct(self, connection.team), "Connection", connection=connection)
