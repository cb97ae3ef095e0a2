"""Whole-app invariants, checked on the plan before anything is synthesized.

A spec the rules accept must also deploy: every physical name unique where AWS
requires it (IAM role names per account, bucket names, stack names), every
construct key unique in its scope, every stack under CloudFormation's limits.
Each problem names both sides and the spec path that fixes it, read from the
plan part it concerns (the plan carries where each part came from).

Every invariant has a stable id (``HPG-P001`` ...), a level and an explanation,
is a pure function of the plan, and runs through the same crash-safe runner as
the spec rules (``spec.rulebook``): an invariant that raises is reported as a
defect naming its id, never as a traceback and never as a silent pass. Each
finding carries its id (printed first), and a spec can acknowledge a warning by
it like any rule's.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable, Iterator, Optional

from ..spec.errors import NO_VALUE, SpecIssue
from ..spec.rulebook import Rule, RuleBook
from .model import Plan
from .quotas import FlavorQuota, governed_units

# CloudFormation allows 500 resources per template; keep headroom for what CDK adds (custom resource
# providers, policies) so that an estimate close to the limit is not trusted.
RESOURCE_BUDGET = 450
# What the SDK-backed task-governance provider adds to every stack that holds a policy or quota through it
# (5 Lambda functions, 5 roles, 6 policies, 2 log groups and their key, the polling state machine; counted by a
# test), and its handler's security group where the handler runs in the VPC (``provider_in_vpc``).
PROVIDER_RESOURCES = 20
PROVIDER_IN_VPC_RESOURCES = 1
TOPIC_RESOURCES = 3  # topic, topic policy, email subscription
STACK_NAME_MAX = 128


def _issue(rule: str, path: str, problem: str, value, fix: str, severity: str = "error") -> SpecIssue:
    return SpecIssue(path, problem, value, fix, severity=severity, rule=rule)  # type: ignore[arg-type]


def _first_clash(items: Iterable[tuple[str, str]]) -> Iterator[tuple[str, str, str]]:
    """(value, first owner, second owner) for every value owned twice."""
    seen: dict[str, str] = {}
    for value, owner in items:
        if value in seen:
            yield value, seen[value], owner
        else:
            seen[value] = owner


def role_names_unique(plan: Plan) -> Iterator[SpecIssue]:
    """IAM role names are unique per account: source roles live in the capacity account, created target
    roles in their consumer account (which may be the capacity account too)."""
    per_account: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for i in plan.identities:
        per_account[plan.account].append((i.source_role_name, i.path))
    for i in plan.identities:
        if i.created_target is not None and i.consumer_account:
            per_account[i.consumer_account].append((i.created_target.name, i.path + ".targetRole"))
    for account, items in sorted(per_account.items()):
        for name, first, second in _first_clash(items):
            yield _issue(
                "HPG-P001",
                f"{second}.serviceAccount" if not second.endswith("targetRole") else f"{second}.name",
                f"gives IAM role name {name!r} in account {account}, which {first} already gives "
                "(role names are unique per account, so the second stack would fail at deploy)",
                name, "rename one of the two service accounts (or the target role) so the names differ",
            )


def stack_names_unique(plan: Plan) -> Iterator[SpecIssue]:
    """Stack names are unique in an account and region, and at most 128 characters."""
    owners = [(plan.stacks.capacity, "the capacity stack")] if plan.stacks.capacity else []  # absent: existing
    owners += [(name, what) for name, what in ((plan.stacks.governance, "the governance stack"),
                                               (plan.stacks.monitoring, "the monitoring stack")) if name]  # Slurm: none
    owners += [(name, "a cluster dashboard stack") for name in plan.stacks.dashboards]
    owners += [(s.name, "an access stack") for s in plan.stacks.access]
    owners += [(s.name, "a team stack") for s in plan.stacks.teams]
    owners += [(c.name, f"the stack of consumer account {c.account_name}") for c in plan.stacks.consumers]
    owners += [(s.name, "a Unified Studio connection stack") for s in plan.stacks.studio]
    for name, first, second in _first_clash(owners):
        yield _issue("HPG-P002", "accounts.consumers", f"stack name {name!r} is used by {first} and by {second}",
                     name, "rename the consumer account (stack names are <name>-consumer-<account name>)")
    for name, _ in owners:
        if len(name) > STACK_NAME_MAX:
            yield _issue("HPG-P002", "name", f"makes stack name {name!r} longer than {STACK_NAME_MAX} characters",
                         name, "shorten the spec name or the consumer account name")


def construct_keys_unique(plan: Plan) -> Iterator[SpecIssue]:
    """Ids that share a scope: admins of the cluster, principals of the access stacks."""
    admins = {a.principal_arn: a.path for a in plan.cluster.admins}
    for key, first, second in _first_clash((a.key, a.principal_arn) for a in plan.cluster.admins):
        yield _issue("HPG-P003", admins[second], f"{first} and {second} get the same construct id {key!r}",
                     second, "list each principal once")
    principals = {p.principal_arn: p.path for p in plan.principals}
    for key, first, second in _first_clash((p.key, p.principal_arn) for p in plan.principals):
        yield _issue("HPG-P003", principals[second], f"{first} and {second} get the same construct id {key!r}",
                     second, "list each principal once")


TEAM_OUTPUTS = 3  # namespace, LocalQueue, priority classes (stacks/governance.py team_outputs)
MAX_OUTPUTS = 200  # CloudFormation's outputs per stack


def _team_resources(plan: Plan, name: str) -> int:
    """CloudFormation resources one team adds to its stack (kept in step with stacks/governance.py)."""
    team = plan.team(name)
    identities = team.identities
    # role (+ policy: a target to assume, or grants) + association
    per_identity = sum(3 if i.target_role_arn or not i.grants.empty else 2 for i in identities)
    # Per-team data: the team bucket and its policy, its key, its access-log bucket and that bucket's policy.
    per_identity += 5 if team.storage is not None else 0
    governance = 2 if plan.task_governance else 0  # compute quota + namespace waiter
    watch = team.monitoring
    monitoring = len(watch.alarms) + (1 if watch.dashboard else 0)
    return 1 + governance + per_identity + monitoring  # + the team's manifest


def provider_in_vpc(plan: Plan) -> bool:
    """Whether the SDK-backed provider's handler runs in the cluster's private subnets: where the app creates the
    VPC's SageMaker API endpoint (the handler calls that API only). An existing cluster's subnets are only known
    to reach its EKS endpoint."""
    return plan.cluster.existing is None and "SageMakerApi" in plan.network.interface_endpoints


def provider_resources(plan: Plan) -> int:
    """What the SDK-backed task-governance provider adds to a stack of the plan (0 with the native types)."""
    if plan.task_governance_backend != "custom-resource":
        return 0
    return PROVIDER_RESOURCES + (PROVIDER_IN_VPC_RESOURCES if provider_in_vpc(plan) else 0)


def stacks_fit_cloudformation(plan: Plan) -> Iterator[SpecIssue]:
    """No team or access stack nears CloudFormation's 500 resources."""
    overhead = provider_resources(plan)
    for stack in plan.stacks.teams:
        total = overhead + sum(_team_resources(plan, t) for t in stack.members) + \
            TOPIC_RESOURCES * len(plan.monitoring.owner_topics(plan.team(t).monitoring for t in stack.members))
        if total > RESOURCE_BUDGET:
            yield _issue(
                "HPG-P004", "deployment.teamStacks",
                f"stack {stack.name} would hold about {total} resources ({len(stack.members)} teams), over "
                f"{RESOURCE_BUDGET} of CloudFormation's 500", plan.stacks.team_shards,
                "raise deployment.teamStacks (it moves teams between stacks: do it before the first deploy)",
            )
        if TEAM_OUTPUTS * len(stack.members) > MAX_OUTPUTS:  # stacks/governance.py team_outputs
            yield _issue(
                "HPG-P004", "deployment.teamStacks",
                f"stack {stack.name} would hold {TEAM_OUTPUTS * len(stack.members)} outputs ({len(stack.members)} "
                f"teams), over CloudFormation's {MAX_OUTPUTS}", plan.stacks.team_shards,
                "raise deployment.teamStacks (it moves teams between stacks: do it before the first deploy)",
            )
    for stack in plan.stacks.access:
        if len(stack.members) > RESOURCE_BUDGET:
            yield _issue(
                "HPG-P004", "deployment.accessStacks",
                f"stack {stack.name} would hold {len(stack.members)} access entries, over {RESOURCE_BUDGET} of "
                "CloudFormation's 500", plan.stacks.access_shards,
                "raise deployment.accessStacks (it moves access entries: do it before the first deploy)",
            )


def shared_pool_has_capacity(plan: Plan) -> Iterator[SpecIssue]:
    """A shared pool the spec asks for holds something."""
    if plan.shared_pool_asked is not None and plan.shared_pool is None:
        yield _issue(
            "HPG-P005", "sharedPool", "would hold nothing: the teams' quotas take all capacity",
            plan.shared_pool_asked, "remove sharedPool, or lower quotas to leave capacity in the pool",
            severity="warning",
        )


def borrow_limits_can_be_met(plan: Plan) -> Iterator[SpecIssue]:
    """A borrowing limit above what the other teams can ever lend is a promise nobody can keep."""
    lenders = [t for t in plan.teams if t.can_lend]
    # per type and unit: what each lender can lend, and all of them together
    offered: dict[tuple[str, Optional[str], Optional[str]], tuple[dict[str, int], int]] = {}

    def lends(f: FlavorQuota) -> tuple[dict[str, int], int]:
        key = (f.instance_type, f.accelerator_kind, f.mig_resource)
        if key not in offered:
            each: dict[str, int] = {}
            for other in lenders:
                of = next(x for x in other.flavors if x.instance_type == f.instance_type)
                each[other.name] = governed_units(of.lending_limit or of.nominal, *key[1:])
            offered[key] = each, sum(each.values())
        return offered[key]

    for team in plan.tenants:  # once per type and unit, not once per pair of teams: 300 teams, 0.11 s -> under 1 ms
        if not team.can_borrow:
            continue
        for f in team.owned:
            each, total = lends(f)
            lendable = total - each.get(team.name, 0)
            limit = f.governed(f.borrowing_limit) if f.borrowing_limit else 0
            unit = "partitions" if f.mig_resource else "accelerators" if f.accelerator_kind else "vCPU"
            if limit > lendable:
                yield _issue(
                    "HPG-P006", f"{team.path}.sharing.borrowLimitPercent",
                    f"lets {team.name} borrow {limit} {unit} of {f.instance_type}, but the other teams can lend at "
                    f"most {lendable}: the team will never borrow more than {lendable}",
                    team.borrow_limit_percent,
                    "lower the borrow limit, or let more capacity of that type be lent", severity="warning",
                )


def alarms_reach_a_subscriber(plan: Plan) -> Iterator[SpecIssue]:
    """An alarm that publishes to a topic nobody subscribes to fires unheard: the platform topic takes the alarms of
    teams without a contract, and has a subscriber only with monitoring.platformEmail (issue 58)."""
    if plan.slurm is not None:  # a Slurm cluster has no monitoring stack, so no alarm
        return
    silent = {t.key for t in plan.monitoring.topics if not t.email}
    unheard = [(w.team, a) for w in plan.monitoring.teams for a in w.alarms if a.topic in silent]
    if unheard:
        teams = sorted({team for team, _a in unheard})
        yield _issue(
            "HPG-P007", "monitoring.platformEmail",
            f"is not set, so {len(unheard)} alarm{'s' if len(unheard) != 1 else ''} of {', '.join(teams)} (no "
            "contract owner to receive them) publish to the platform topic, which nobody subscribes to: they fire "
            "unheard", NO_VALUE,
            "set monitoring.platformEmail, or give each of these teams a contract whose owners receive its alarms",
            severity="warning",
        )


INVARIANTS = RuleBook("invariants", (
    Rule("HPG-P001", "error", "IAM role names are unique per account", role_names_unique),
    Rule("HPG-P002", "error", "stack names are unique and short enough", stack_names_unique),
    Rule("HPG-P003", "error", "construct ids are unique in their scope", construct_keys_unique),
    Rule("HPG-P004", "error", "every stack fits CloudFormation's resource limit", stacks_fit_cloudformation),
    Rule("HPG-P005", "warning", "a shared pool the spec asks for holds capacity", shared_pool_has_capacity),
    Rule("HPG-P006", "warning", "borrow limits can be met by what the other teams lend", borrow_limits_can_be_met),
    Rule("HPG-P007", "warning", "every alarm reaches a subscriber: no alarm publishes to a topic nobody subscribes to",
         alarms_reach_a_subscriber),
))


def check_plan(plan: Plan) -> list[SpecIssue]:
    """Every finding of every invariant, errors and warnings, in id order (one that raises is a defect)."""
    return INVARIANTS.run(plan)


def plan_warnings(plan: Plan) -> tuple[SpecIssue, ...]:
    """The invariants' warnings (``build_plan`` raised on their errors): printed by validate and explain."""
    return tuple(i for i in check_plan(plan) if i.severity == "warning")
