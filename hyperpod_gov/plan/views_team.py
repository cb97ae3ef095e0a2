"""The team's governance view (``views.py``): quota, sharing, access, identities, data, contract, workloads."""

from __future__ import annotations

from ..spec.contract import ISOLATION_ORDER
from .identity import IdentityPlan
from .model import Plan
from .quotas import TeamPlan
from .views_base import Row, TeamPart, View, _allowed, _on_off, _when, _widens
from .words import PAUSE_EFFECT, borrows, lends, owns
from .workloads import kinds_for


def _identity(w: IdentityPlan) -> str:
    if w.created_target is not None:
        return f"{w.service_account} -> role {w.created_target.name} in {w.consumer}"
    if w.target_role_arn:
        return f"{w.service_account} -> {w.target_role_arn}"
    return f"{w.service_account} (same account)"


def _grants(part: TeamPart) -> tuple[str, ...]:
    out = []
    for w in part.identities:
        # Per-team data: the source role's own grants in the capacity account, then the created target role's.
        g = w.grants
        out += [f"s3://{a.bucket}/{a.prefix}* {a.access} for {w.service_account}" for a in g.s3]
        if g.team_bucket:
            out.append(f"s3://{g.team_bucket}/* read-write (team bucket) for {w.service_account}")
        out += [f"KMS key {key} for {w.service_account}" for key in g.kms_key_arns]
        if g.secrets_arn:
            out.append(f"secrets {g.secrets_arn} for {w.service_account}")
        out += [f"ECR pull {r} for {w.service_account}" for r in g.ecr_repository_arns]
        target = w.created_target
        if target is None:
            continue
        for s3 in target.s3:
            out.append(f"s3://{s3.bucket}/{s3.prefix}* {s3.access} for {w.service_account}")
        for key in target.kms_keys:
            out.append(f"KMS key {key} for {w.service_account}")
    return tuple(sorted(set(out)))


def _bucket_principals(part: TeamPart) -> tuple[str, ...]:
    """Per-team data: who the team bucket's policies admit, and how."""
    s = part.storage
    if s is None:
        return ()
    return tuple(sorted([f"{arn} read-write" for arn in s.writers] + [f"{arn} read" for arn in s.readers]))


def _contract(team: TeamPlan) -> str:
    c = team.contract
    if c is None:
        return "none"
    return (f"business {c.business_owner}, operations {c.operations_owner}, cost {c.cost_owner}; "
            f"{c.data_classification}; approved {', '.join(c.approved_workloads)}; review by {c.review_by}")


def _paused(title: str, old: bool, new: bool) -> list[str]:
    if old and not new:
        return [f"{title} paused: {PAUSE_EFFECT}"]
    if new and not old:
        return [f"{title} resumed: its queued work is admitted again, within its quota"]
    return []


def _team_summary(t: TeamPlan) -> str:
    return f"owns {owns(t)}; can lend {lends(t)}; may borrow {borrows(t)}; weight {t.fair_share_weight}"


def _team_objects(plan: Plan) -> dict[str, TeamPart]:
    return {t.name: TeamPart(t, t.identities, t.storage, t.tools_policy) for t in plan.tenants}


# --- reaching the cluster: teams[].access.toolsPolicy ---
def _tools_policy(part: TeamPart) -> str:
    """Who gets it follows the viewers and submitters (their rows); this row is the switch."""
    return _on_off(part.tools_policy is not None)


_RESTRICTED = {"restricted": 2, "baseline": 1}

TEAM = View(
    name="team",
    spec="teams[]",
    objects=_team_objects,
    title=lambda key: f"team {key}",
    rows=(
        Row("active", "teams[].active", lambda x: x.team.active, ("active",), lines=_paused),
        Row("owns", "teams[].quota", lambda x: owns(x.team), ("flavors",), column="OWNS"),
        Row("sharing", "teams[].sharing.strategy", lambda x: x.team.strategy, ("strategy",)),
        Row("tags", "teams[].tags", lambda x: tuple(f"{k}={v}" for k, v in x.team.tags), ("tags",), members=True),
        Row("can lend", "teams[].sharing.strategy", lambda x: lends(x.team), ("idle_resource_sharing",),
            column="CAN LEND"),
        Row("may borrow", "teams[].sharing.borrowLimitPercent|teams[].sharing.absoluteBorrowLimits",
            lambda x: borrows(x.team), ("borrow_limit_percent", "absolute_borrow_limits"), column="MAY BORROW"),
        Row("fair-share weight", "teams[].fairShareWeight", lambda x: x.team.fair_share_weight,
            ("fair_share_weight",), column="WEIGHT"),
        Row("preempts its own lower-priority work", "teams[].preemptTeamTasks", lambda x: x.team.preempt_team_tasks,
            ("preempt_team_tasks",), column="PREEMPTS OWN"),
        Row("can view", "teams[].access.viewers", lambda x: x.team.viewers, ("viewers", "viewers_group"),
            members=True, privilege=_widens("sees the team's work")),
        Row("can submit", "teams[].access.submitters", lambda x: x.team.submitters,
            ("submitters", "submitters_group"), members=True, privilege=_widens("runs work on the team's quota")),
        Row("workload identity", "teams[].workloadIdentities[]", lambda x: tuple(map(_identity, x.identities)),
            ("service_accounts", "identities"), members=True, privilege=_widens("the team's pods get these AWS credentials")),
        # Per-team data: grants of the source roles and target roles, and the team bucket.
        Row("data grant", "teams[].workloadIdentities[].targetRole|teams[].workloadIdentities[].grants", _grants,
            (), members=True, privilege=_widens("the team's pods reach this data")),
        Row("team bucket", "teams[].storage.bucket",
            lambda x: x.storage.bucket if x.storage else "none", ("storage",)),
        Row("team bucket admits", "teams[].storage|teams[].access|teams[].workloadIdentities[]", _bucket_principals,
            (), members=True, privilege=_widens("reaches the team bucket's data")),
        Row("egress", "teams[].egress", lambda x: tuple(f"{e.cidr} {e.protocol} {list(e.ports)}" for e in x.team.egress),
            ("egress",), members=True, privilege=_widens("the team's pods reach this network")),
        Row("pod security", "teams[].podSecurity", lambda x: x.team.pod_security, ("pod_security",),
            privilege=_when(lambda o, n: _RESTRICTED[n] < _RESTRICTED[o], "the team's pods may run with fewer "
                            "restrictions")),
        Row("exec into pods", "teams[].access.podExec", lambda x: _allowed(x.team.pod_exec), ("pod_exec",),
            privilege=_when(lambda o, n: n == "allowed", "submitters get a shell in the team's pods")),
        Row("write Secrets", "teams[].access.writeSecrets", lambda x: _allowed(x.team.write_secrets),
            ("write_secrets",), privilege=_when(lambda o, n: n == "allowed", "submitters read and write the "
                                                "team's Secrets")),
        Row("write ConfigMaps", "teams[].access.writeConfigMaps", lambda x: _allowed(x.team.write_config_maps),
            ("write_config_maps",), privilege=_when(lambda o, n: n == "allowed", "submitters write the team's "
                                                    "ConfigMaps")),
        Row("tools policy", "teams[].access.toolsPolicy", _tools_policy, ("tools_policy",),
            privilege=_when(lambda o, n: n == "on", "the team's viewers and submitters may describe the EKS and "
                            "HyperPod clusters and list HyperPod clusters")),
        Row("contract", "teams[].contract", lambda x: _contract(x.team), ("contract",)),
        # Isolation and network path (issue 59): a team without a contract is shared and states no path.
        Row("isolation", "teams[].contract.isolation",
            lambda x: x.team.contract.isolation if x.team.contract else "shared", ("contract",),
            privilege=_when(lambda o, n: ISOLATION_ORDER[n] < ISOLATION_ORDER[o],
                            "the team's work may now run beside other teams' work")),
        Row("network path", "teams[].contract.networkPath",
            lambda x: (x.team.contract.network_path if x.team.contract else None) or "not stated", ("contract",)),
        # Workload kinds and per-team workload limits (plan/workloads.py, charts/admission.py).
        Row("may create", "teams[].contract.approvedWorkloads", lambda x: tuple(k.kind for k in kinds_for(x.team)),
            ("contract",), members=True, privilege=_widens("the team's submitters may create this kind")),
        Row("priority classes", "teams[].priorityClasses", lambda x: x.team.priority_classes or ("none",),
            ("priority_classes",), members=True,
            privilege=_widens("the team's work may run at this priority and preempt work below it")),
        # Narrows only: without it unlabeled work runs at the lowest priority, which preempts nothing. import reads
        # the AWS APIs, not the team's parameter ConfigMap, so it writes neither this key nor priorityClasses; drift
        # compares the ConfigMap (charts/fields.py).
        Row("priority label required", "teams[].requirePriority", lambda x: _on_off(x.team.require_priority),
            ("require_priority",)),
        Row("images", "teams[].images", lambda x: x.team.image_prefixes or ("any image",), ("image_prefixes",),
            members=True, privilege=_widens("the team's containers may run images from here")),
        Row("name", "teams[].name", lambda x: x.team.name, ("name",)),
    ),
    added=lambda key, x: (f"team {key} added{'' if x.team.active else ' paused'}: {_team_summary(x.team)}; "
                          f"{len(x.team.viewers)} viewer(s), {len(x.team.submitters)} submitter(s)"),
    removed=lambda key, x: (f"team {key} removed: its quota, access, workload identities and team objects are "
                            f"deleted (it {_team_summary(x.team)})"),
)


def team_columns(team: TeamPlan) -> list[tuple[str, str]]:
    """(header, value in words) of the team view's rows that ``explain`` shows as columns, in row order."""
    part = TeamPart(team)
    return [(row.column, str(row.get(part))) for row in TEAM.rows if row.column]
