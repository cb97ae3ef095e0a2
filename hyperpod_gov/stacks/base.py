"""The settings every stack of a spec shares: its environment, a description naming the spec, the spec tag."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

from aws_cdk import Environment, Stack, Tags
from constructs import Construct

from hyperpod_gov.plan import Plan

SPEC_TAG = "hyperpod-gov:spec"

# Feature flags the library is written for ("library") and every other aws-cdk-lib flag pinned at the behaviour
# the snapshots were taken with ("pinned"), set on each stack of a spec before its constructs (docs/library.md).
# cdk.json carries the same values, so the CDK CLI finds no unconfigured flag in the reference app.
_FLAGS = json.loads((Path(__file__).with_name("feature_flags.json")).read_text())
FEATURE_FLAGS: dict[str, object] = {**_FLAGS["library"], **_FLAGS["pinned"]}
# No creation stack trace in each construct's metadata: from Python it shows only jsii's runtime ("no user code in
# 10 frames"), and capturing it costs about a second of a 300-team synth. CDK_DEBUG=true still records them. Nor
# one on each annotation (a warning or an info in *.metadata.json, e.g. a template nearing its size limit): it
# named the jsii kernel's temporary directories, so two synths of the same spec wrote different bytes.
NO_CREATION_STACK_TRACES: dict[str, object] = {"aws:cdk:disable-creation-stack-traces": True,
                                               "aws:cdk:disable-stack-trace": True}
STACK_CONTEXT: dict[str, object] = {**FEATURE_FLAGS, **NO_CREATION_STACK_TRACES}


def apply_feature_flags(scope: Construct) -> None:
    """Set ``STACK_CONTEXT`` on ``scope`` (a construct without children yet) where the context it inherits differs:
    one read of the whole context, then only what differs (a jsii round trip per value is ~90 of them)."""
    node = scope.node
    context = node.get_all_context() or {}
    for key, value in STACK_CONTEXT.items():
        if context.get(key) != value:
            node.set_context(key, value)


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
        # Before any child: the flags the library is written for, on this stack alone (never on the caller's app).
        apply_feature_flags(self)
        Tags.of(self).add(SPEC_TAG, plan.name)
        # The spec's cost-allocation tags (never under hyperpod-gov:, so the generated tag stays as it is).
        tag(self, plan.tags)
