"""The stacks of a plan, composed in deploy order: used by the app and by the pipeline's stages.

Which stacks there are, their names and members are the plan's (``plan.stack_layout``); this module only
instantiates them and orders their deploys.
"""

from __future__ import annotations

from typing import Callable, Mapping, Optional, Sequence

import aws_cdk as cdk
from aws_cdk import aws_ec2 as ec2
from constructs import Construct

from hyperpod_gov.charts import Manifests
from hyperpod_gov.plan import Plan
from hyperpod_gov.slurm.render import files as slurm_files

from .base import SpecStack
from .capacity import CapacityStack, SlurmCapacityStack
from .consumer import ConsumerAccountStack
from .governance import AccessStack, DashboardsStack, GovernanceStack, MonitoringStack, TeamsStack
from .studio import StudioConnectionsStack


def add_capacity_stacks(scope: Construct, plan: Plan, manifests: Manifests, *,
                        governance_files: Optional[Mapping[str, str]] = None,
                        built: Optional[Callable[[SpecStack], object]] = None,
                        vpc: Optional[ec2.IVpc] = None) -> list[cdk.Stack]:
    """The capacity account's stacks, in deploy order: capacity (absent in governance-only mode), governance,
    monitoring (and further cluster dashboard pages), access, the team shards; for a Slurm cluster the capacity
    stack alone (``add_slurm_stacks``; ``governance_files``: the rendered Slurm files, rendered here if not given).

    Stack names are set explicitly, so inside a pipeline stage they stay the names ``cdk deploy`` uses.
    ``built``: called with each access and teams stack once it is built (``predicted.Predictions.offer``).
    ``vpc``: the app's VPC for a spec with ``cluster.vpc.fromApp`` (``HyperPodGovernance``'s ``vpc=``).
    """
    s = plan.stacks
    if plan.slurm is not None:
        return add_slurm_stacks(scope, plan, governance_files=governance_files, vpc=vpc)
    if s.governance is None or s.monitoring is None:
        raise ValueError("an EKS plan has a governance and a monitoring stack")
    # Governance-only mode (cluster.existing): no capacity stack; the governance stack holds the kubectl handler.
    capacity = CapacityStack(scope, s.capacity, plan=plan, vpc=vpc, stack_name=s.capacity) if s.capacity else None
    governance = GovernanceStack(scope, s.governance, plan=plan, capacity=capacity, manifests=manifests,
                                 stack_name=s.governance)
    monitoring = MonitoringStack(scope, s.monitoring, plan=plan, capacity=capacity, stack_name=s.monitoring)
    stacks: list[cdk.Stack] = [*([capacity] if capacity else []), governance, monitoring]
    for page, name in enumerate(s.dashboards, start=1):
        stacks.append(DashboardsStack(scope, name, plan=plan, page=page, stack_name=name))
    shards: list[SpecStack] = []
    for shard in s.access:
        shards.append(AccessStack(scope, shard.name, plan=plan, shard=shard, capacity=capacity,
                                  stack_name=shard.name))
        if built is not None:
            built(shards[-1])
    for shard in s.teams:
        shards.append(TeamsStack(scope, shard.name, plan=plan, shard=shard, capacity=capacity, governance=governance,
                                 monitoring=monitoring, manifests=manifests, stack_name=shard.name))
        if built is not None:
            built(shards[-1])
    return [*stacks, *shards]


def add_slurm_stacks(scope: Construct, plan: Plan, *, governance_files: Optional[Mapping[str, str]] = None,
                     vpc: Optional[ec2.IVpc] = None) -> list[cdk.Stack]:
    """A Slurm cluster's stacks: the capacity stack, holding the cluster, its file system and the lifecycle scripts
    with the governance files (``governance_files``, default ``hyperpod_gov.slurm.render.files(plan)``); the plan's
    layout has no other stack for Slurm."""
    if plan.stacks.capacity is None:
        raise ValueError("a Slurm plan creates its cluster: it has a capacity stack")
    files = slurm_files(plan) if governance_files is None else governance_files
    return [SlurmCapacityStack(scope, plan.stacks.capacity, plan=plan, files=files, vpc=vpc,
                               stack_name=plan.stacks.capacity)]


def add_consumer_stacks(scope: Construct, plan: Plan) -> list[cdk.Stack]:
    """The target roles the spec asks the library to create, one stack per consumer account that has any; then
    the Unified Studio connections, one stack per domain account and region (``add_studio_stacks``)."""
    consumers: list[cdk.Stack] = [ConsumerAccountStack(scope, c.name, plan=plan, consumer=c, stack_name=c.name)
                                  for c in plan.stacks.consumers]
    return consumers + add_studio_stacks(scope, plan)


def add_studio_stacks(scope: Construct, plan: Plan) -> list[cdk.Stack]:
    """The Unified Studio connections, deployed after the capacity account's stacks found in ``scope``.

    A connection names the cluster, and its project role reaches the cluster through an access stack's entry, so
    ``cdk deploy --all`` creates the cluster and the entries first (a dependency across accounts orders the
    deploys; no value crosses it). In the pipeline they are a wave after the capacity stage.
    """
    first = plan.stacks.capacity or plan.stacks.governance  # the cluster, or the existing cluster's kubectl handler
    if not plan.stacks.studio:
        return []
    before = [scope.node.try_find_child(name) for name in (first, *(s.name for s in plan.stacks.access))]
    stacks: list[cdk.Stack] = []
    for studio in plan.stacks.studio:
        stack = StudioConnectionsStack(scope, studio.name, plan=plan, studio=studio, stack_name=studio.name)
        for other in before:
            if isinstance(other, cdk.Stack):
                stack.add_stack_dependency(other, "the connection names the cluster; its project role's access entry")
        stacks.append(stack)
    return stacks


def order_deploys(plan: Plan, capacity: Sequence[cdk.Stack], consumers: Sequence[cdk.Stack]) -> None:
    """``cdk deploy --all`` (and a CDK Pipeline's stage) deploys in the README's order because the stacks say so:
    each team stack after the consumer accounts' stacks (the target roles its identities name) and the access
    stacks (the entries that map its principals onto its groups). Across accounts the dependency only orders the
    deploys; no value crosses it."""
    access = {s.name for s in plan.stacks.access}
    teams = {s.name for s in plan.stacks.teams}
    consumer_names = {c.name for c in plan.stacks.consumers}
    before = [s for s in capacity if s.stack_name in access] + [s for s in consumers if s.stack_name in consumer_names]
    for stack in capacity:
        if stack.stack_name in teams:
            for other in before:
                stack.add_stack_dependency(other, "the team's principals and identities: access entries, target roles")
