"""The stack layout and the pipeline of the plan (``derive.py``): every stack named and filled, in one place."""

from __future__ import annotations

from ..spec.models import GovernanceSpec
from . import names
from .access import PrincipalAccess
from .contracts import ConnectionPlan, studio_stacks
from .identity import IdentityPlan
from .monitoring import cluster_dashboard_pages
from .parts import ConsumerStack, PipelinePlan, Shard, StackLayout
from .quotas import TeamPlan
from .sharding import shard_of
from .unified_studio import studio_domains


def stack_layout(spec: GovernanceSpec, teams: tuple[TeamPlan, ...], principals: tuple[PrincipalAccess, ...],
                 identities: tuple[IdentityPlan, ...], connections: tuple[ConnectionPlan, ...]) -> StackLayout:
    """Every stack of the capacity and consumer accounts, named and filled: the one place that decides it."""
    d = spec.deployment

    def shards(keys: list[str], count: int, label) -> tuple[Shard, ...]:
        groups: dict[int, list[str]] = {}
        for key in keys:
            groups.setdefault(shard_of(key, count), []).append(key)
        return tuple(Shard(names.stack(spec.name, label(i)), i, tuple(sorted(groups[i]))) for i in sorted(groups))

    consumers = []
    for c in sorted(spec.accounts.consumers, key=lambda c: c.name):
        mine = tuple(i for i in identities if i.consumer == c.name)
        if mine:
            consumers.append(ConsumerStack(names.stack(spec.name, f"consumer-{c.name}"), c.name, c.id, c.region, mine))
    # The first cluster dashboard page lives in the monitoring stack, each further page in a stack of its own: a page
    # stays in its stack when teams are added (rows shift between pages in place), and no stack nears 1 MB.
    if spec.cluster.orchestrator == "slurm":
        return slurm_stack_layout(spec)
    pages = cluster_dashboard_pages(tuple(t.name for t in teams))
    return StackLayout(
        capacity=None if spec.cluster.existing else names.stack(spec.name, "capacity"),
        governance=names.stack(spec.name, "governance"),
        monitoring=names.stack(spec.name, "monitoring"),
        access=shards([p.principal_arn for p in principals], d.access_stacks, names.access_shard),
        teams=shards([t.name for t in teams if not t.is_shared_pool], d.team_stacks, names.team_shard),
        consumers=tuple(consumers),
        pipeline=names.stack(spec.name, "pipeline"),
        dashboards=tuple(names.stack(spec.name, names.dashboards_shard(i)) for i in range(1, len(pages))),
        team_shards=d.team_stacks,
        access_shards=d.access_stacks,
        studio=studio_stacks(spec.name, connections, studio_domains(spec)),
    )


# Slurm stacks (cluster.orchestrator: slurm; docs/slurm-stacks.md): the capacity stack alone holds the cluster and
# the governance it applies on the controller; the EKS-only stacks (governance, monitoring, access, teams,
# consumer roles, Unified Studio connections) have nothing to hold.
def slurm_stack_layout(spec: GovernanceSpec) -> StackLayout:
    """The stacks of a Slurm spec: the capacity stack (and the pipeline's name)."""
    d = spec.deployment
    return StackLayout(capacity=names.stack(spec.name, "capacity"), governance=None, monitoring=None, access=(),
                       teams=(), consumers=(), pipeline=names.stack(spec.name, "pipeline"), dashboards=(),
                       team_shards=d.team_stacks, access_shards=d.access_stacks, studio=())


def _pipeline(spec: GovernanceSpec) -> PipelinePlan:
    p = spec.deployment.pipeline
    return PipelinePlan(
        name=names.code_pipeline(spec.name),
        account=(p.account if p else None) or spec.accounts.capacity.id,
        region=(p.region if p else None) or spec.accounts.capacity.region,
        repository=p.repository if p else None,
        branch=p.branch if p else "main",
        connection_arn=p.connection_arn if p else None,
    )
