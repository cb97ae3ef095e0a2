"""Whole-app invariants, checked on the plan before anything is synthesized.

A spec the rules accept must also deploy: every physical name unique where AWS
requires it (IAM role names per account, bucket names, stack names), every
construct key unique in its scope, every stack under CloudFormation's limits.
Each problem names both sides and the spec path that fixes it.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Callable, Iterable, Iterator

from ..spec.errors import SpecIssue
from ..spec.models import GovernanceSpec
from .plan import Plan

Invariant = Callable[[GovernanceSpec, Plan], Iterable[SpecIssue]]

# CloudFormation allows 500 resources per template; keep headroom for what CDK adds (custom resource
# providers, policies) so that an estimate close to the limit is not trusted.
RESOURCE_BUDGET = 450
# What the SDK-backed task-governance provider adds to every stack that holds a policy or quota through it
# (Lambda functions, roles, policies, log groups, the polling state machine).
PROVIDER_RESOURCES = 20
TOPIC_RESOURCES = 3  # topic, topic policy, email subscription
STACK_NAME_MAX = 128


def _first_clash(items: Iterable[tuple[str, str]]) -> Iterator[tuple[str, str, str]]:
    """(value, first owner, second owner) for every value owned twice."""
    seen: dict[str, str] = {}
    for value, owner in items:
        if value in seen:
            yield value, seen[value], owner
        else:
            seen[value] = owner


def _identity_paths(spec: GovernanceSpec) -> dict[tuple[str, str], str]:
    out = {}
    for ti, team in enumerate(spec.teams):
        for wi, w in enumerate(team.workload_identities):
            out[(team.name, w.service_account)] = f"teams[{ti}].workloadIdentities[{wi}]"
    return out


def role_names_unique(spec: GovernanceSpec, plan: Plan) -> Iterator[SpecIssue]:
    """IAM role names are unique per account: source roles live in the capacity account, created target
    roles in their consumer account (which may be the capacity account too)."""
    paths = _identity_paths(spec)
    per_account: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for i in plan.identities:
        per_account[plan.account].append((i.source_role_name, paths[(i.team, i.service_account)]))
    for i in plan.identities:
        if i.created_target is not None and i.consumer_account:
            per_account[i.consumer_account].append((i.created_target.name,
                                                    paths[(i.team, i.service_account)] + ".targetRole"))
    for account, items in sorted(per_account.items()):
        for name, first, second in _first_clash(items):
            yield SpecIssue(
                f"{second}.serviceAccount" if not second.endswith("targetRole") else f"{second}.name",
                f"gives IAM role name {name!r} in account {account}, which {first} already gives "
                "(role names are unique per account, so the second stack would fail at deploy)",
                name, "rename one of the two service accounts (or the target role) so the names differ",
            )


def stack_names_unique(spec: GovernanceSpec, plan: Plan) -> Iterator[SpecIssue]:
    owners = [(plan.stacks.capacity, "the capacity stack"), (plan.stacks.governance, "the governance stack"),
              (plan.stacks.monitoring, "the monitoring stack")]
    owners += [(name, "a cluster dashboard stack") for name in plan.stacks.dashboards]
    owners += [(s.name, "an access stack") for s in plan.stacks.access]
    owners += [(s.name, "a team stack") for s in plan.stacks.teams]
    owners += [(c.name, f"the stack of consumer account {c.account_name}") for c in plan.stacks.consumers]
    owners += [(name, "a Unified Studio connection stack") for name in plan.contracts.stack_names]
    for name, first, second in _first_clash(owners):
        yield SpecIssue("accounts.consumers", f"stack name {name!r} is used by {first} and by {second}", name,
                        "rename the consumer account (stack names are <name>-consumer-<account name>)")
    for name, _ in owners:
        if len(name) > STACK_NAME_MAX:
            yield SpecIssue("name", f"makes stack name {name!r} longer than {STACK_NAME_MAX} characters", name,
                            "shorten the spec name or the consumer account name")


def construct_keys_unique(spec: GovernanceSpec, plan: Plan) -> Iterator[SpecIssue]:
    """Ids that share a scope: admins of the cluster, principals of the access stacks."""
    for key, first, second in _first_clash((a.key, a.principal_arn) for a in plan.cluster.admins):
        yield SpecIssue("cluster.admins", f"{first} and {second} get the same construct id {key!r}", second,
                        "list each principal once")
    for key, first, second in _first_clash((p.key, p.principal_arn) for p in plan.principals):
        yield SpecIssue("teams[*].access", f"{first} and {second} get the same construct id {key!r}", second,
                        "list each principal once")


def _team_resources(plan: Plan, team: str) -> int:
    """CloudFormation resources one team adds to its stack (kept in step with stacks/governance.py)."""
    identities = [i for i in plan.identities if i.team == team]
    per_identity = sum(3 if i.target_role_arn else 2 for i in identities)  # role (+ policy) + association
    governance = 2 if plan.task_governance else 0  # compute quota + namespace waiter
    watch = plan.monitoring.team(team) if plan.monitoring else None
    monitoring = (len(watch.alarms) + (1 if watch.dashboard else 0)) if watch else 0
    return 1 + governance + per_identity + monitoring  # + the team's manifest


def stacks_fit_cloudformation(spec: GovernanceSpec, plan: Plan) -> Iterator[SpecIssue]:
    overhead = PROVIDER_RESOURCES if plan.task_governance_backend == "custom-resource" else 0
    for stack in plan.stacks.teams:
        total = overhead + sum(_team_resources(plan, t) for t in stack.members) + \
            TOPIC_RESOURCES * (len(plan.monitoring.owner_topics(stack.members)) if plan.monitoring else 0)
        if total > RESOURCE_BUDGET:
            yield SpecIssue(
                "deployment.teamStacks",
                f"stack {stack.name} would hold about {total} resources ({len(stack.members)} teams), over "
                f"{RESOURCE_BUDGET} of CloudFormation's 500", spec.deployment.team_stacks,
                "raise deployment.teamStacks (it moves teams between stacks: do it before the first deploy)",
            )
    for stack in plan.stacks.access:
        if len(stack.members) > RESOURCE_BUDGET:
            yield SpecIssue(
                "deployment.accessStacks",
                f"stack {stack.name} would hold {len(stack.members)} access entries, over {RESOURCE_BUDGET} of "
                "CloudFormation's 500", spec.deployment.access_stacks,
                "raise deployment.accessStacks (it moves access entries: do it before the first deploy)",
            )


def shared_pool_has_capacity(spec: GovernanceSpec, plan: Plan) -> Iterator[SpecIssue]:
    if spec.shared_pool is not None and plan.shared_pool is None:
        yield SpecIssue(
            "sharedPool", "would hold nothing: the teams' quotas take all capacity", spec.shared_pool.name,
            "remove sharedPool, or lower quotas to leave capacity in the pool", severity="warning",
        )


def borrow_limits_can_be_met(spec: GovernanceSpec, plan: Plan) -> Iterator[SpecIssue]:
    """A borrowing limit above what the other teams can ever lend is a promise nobody can keep."""
    index = {t.name: i for i, t in enumerate(spec.teams)}
    for team in plan.tenants:
        if not team.can_borrow:
            continue
        for f in team.owned:
            lendable = 0
            for other in plan.teams:
                if other.name == team.name or not other.can_lend:
                    continue
                of = next(x for x in other.flavors if x.instance_type == f.instance_type)
                lendable += f.governed(of.lending_limit or of.nominal)
            limit = f.governed(f.borrowing_limit) if f.borrowing_limit else 0
            unit = "partitions" if f.mig_resource else "accelerators" if f.accelerator_kind else "vCPU"
            if limit > lendable:
                yield SpecIssue(
                    f"teams[{index[team.name]}].sharing.borrowLimitPercent",
                    f"lets {team.name} borrow {limit} {unit} of {f.instance_type}, but the other teams can lend at "
                    f"most {lendable}: the team will never borrow more than {lendable}",
                    team.borrow_limit_percent,
                    "lower the borrow limit, or let more capacity of that type be lent", severity="warning",
                )


INVARIANTS: tuple[Invariant, ...] = (
    role_names_unique,
    stack_names_unique,
    construct_keys_unique,
    stacks_fit_cloudformation,
    shared_pool_has_capacity,
    borrow_limits_can_be_met,
)


def check_plan(spec: GovernanceSpec, plan: Plan) -> list[SpecIssue]:
    """Every finding of every invariant, errors and warnings, in a stable order."""
    return [issue for invariant in INVARIANTS for issue in invariant(spec, plan)]

