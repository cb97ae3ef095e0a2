"""Which stacks a plan makes, under which names, in which order: used by the app and by the pipeline's stages."""

from __future__ import annotations

import aws_cdk as cdk
from constructs import Construct

from hyperpod_gov.charts import Manifests
from hyperpod_gov.plan import Plan

from .capacity import CapacityStack
from .consumer import ConsumerAccountStack
from .governance import AccessStack, GovernanceStack, MonitoringStack, TeamsStack


def add_capacity_stacks(scope: Construct, plan: Plan, manifests: Manifests) -> list[cdk.Stack]:
    """The capacity account's stacks, in deploy order: capacity, governance, monitoring, access, the team shards.

    Stack names are set explicitly, so inside a pipeline stage they stay the names ``cdk deploy`` uses.
    """
    s = plan.stacks
    capacity = CapacityStack(scope, s.capacity, plan=plan, stack_name=s.capacity)
    governance = GovernanceStack(scope, s.governance, plan=plan, capacity=capacity, manifests=manifests,
                                 stack_name=s.governance)
    monitoring = MonitoringStack(scope, s.monitoring, plan=plan, stack_name=s.monitoring)
    stacks: list[cdk.Stack] = [capacity, governance, monitoring]
    for shard in s.access:
        stacks.append(AccessStack(scope, shard.name, plan=plan, shard=shard, capacity=capacity,
                                  stack_name=shard.name))
    for shard in s.teams:
        stacks.append(TeamsStack(scope, shard.name, plan=plan, shard=shard, capacity=capacity, governance=governance,
                                 monitoring=monitoring, manifests=manifests, stack_name=shard.name))
    return stacks


def add_consumer_stacks(scope: Construct, plan: Plan) -> list[cdk.Stack]:
    """The target roles the spec asks the library to create, one stack per consumer account that has any."""
    return [ConsumerAccountStack(scope, c.name, plan=plan, consumer=c, stack_name=c.name) for c in plan.stacks.consumers]
