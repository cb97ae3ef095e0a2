"""The settings every stack of a spec shares: its environment, a description naming the spec, the spec tag."""

from __future__ import annotations

from typing import Any, Optional

from aws_cdk import Environment, Stack, Tags
from constructs import Construct

from hyperpod_gov.plan import Plan

SPEC_TAG = "hyperpod-gov:spec"


def tag(scope: Construct, tags: tuple[tuple[str, str], ...]) -> None:
    """Cost-allocation tags on every taggable resource under ``scope`` (a team's win over its stack's: the tag
    nearest a resource is applied last)."""
    for key, value in tags:
        Tags.of(scope).add(key, value)


def capacity_env(plan: Plan) -> Environment:
    return Environment(account=plan.account, region=plan.region)


class SpecStack(Stack):
    """A stack of one spec: ``hyperpod-gov <spec>: <what>`` as its description, tagged with the spec's name,
    deployed to ``env`` (default: the capacity account and region)."""

    def __init__(self, scope: Construct, id: str, *, plan: Plan, what: str, env: Optional[Environment] = None,
                 **kwargs: Any) -> None:
        self.spec_description = f"hyperpod-gov {plan.name}: {what}"  # kept in Python (stacks/predicted.py)
        super().__init__(scope, id, env=env or capacity_env(plan), description=self.spec_description, **kwargs)
        Tags.of(self).add(SPEC_TAG, plan.name)
        # The spec's cost-allocation tags (never under hyperpod-gov:, so the generated tag stays as it is).
        tag(self, plan.tags)
