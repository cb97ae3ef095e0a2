"""Plain-text review of an allocation: what each team owns, lends, borrows and may run."""

from __future__ import annotations

import datetime as dt
import textwrap
from typing import Optional

from .cost.page import explain_cost, monitoring_lines
from .plan import Plan
from .plan.data import data_paths
from .plan.elastic import KIND_WORDS, capacity_lines
from .plan.slurm_state import desired_state
from .plan.slurm_task_view import explain_lines, task_view
from .plan.slurm_observability import observed as slurm_observed
from .plan.api_access import api_reach
from .plan.invariants import plan_warnings
from .plan.views_studio import studio_lines
from .plan.views import (dedicated_groups, network_policy_enforcement, running_operators, shared_file_system,
                         team_columns)
from .plan.scheduling import gang_scheduling_words, podset_topology_annotations, topology_words
from .plan.words import NO_IDLE_SHARING, PAUSE_EFFECT, borrows, lends, owns, paused, unowned

from .explain_json import explain_json  # noqa: E402 (re-exported: explain --format json)

__all__ = ["explain", "explain_json", "owns", "lends", "borrows", "paused", "unowned", "PAUSE_EFFECT",
           "NO_IDLE_SHARING"]

WIDTH = 100  # explain fits a 100-column terminal (and a pull request's comment box)
GAP = "  "


def _widths(headers: list[str], rows: list[list[str]]) -> list[int]:
    return [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]


def _render(headers: list[str], rows: list[list[str]], widths: list[int]) -> list[str]:
    """One table; a cell longer than its column's width is wrapped onto the next lines of its row."""
    out = [GAP.join(h.ljust(w) for h, w in zip(headers, widths)), GAP.join("-" * w for w in widths)]
    for row in rows:
        cells = [textwrap.wrap(c, w, break_long_words=True, break_on_hyphens=False) or [""]
                 for c, w in zip(row, widths)]
        for i in range(max(len(c) for c in cells)):
            out.append(GAP.join((c[i] if i < len(c) else "").ljust(w) for c, w in zip(cells, widths)))
    return [x.rstrip() for x in out]


def _table(headers: list[str], rows: list[list[str]], width: int = WIDTH) -> str:
    """A table within ``width`` columns: as many columns side by side as fit, the first (the row's name) repeated
    in each further table; a column too wide even beside the name alone is wrapped."""
    widths = _widths(headers, rows)
    first, rest = widths[0], list(range(1, len(headers)))
    groups: list[list[int]] = []
    for i in rest:
        if groups and first + sum(len(GAP) + widths[j] for j in groups[-1]) + len(GAP) + widths[i] <= width:
            groups[-1].append(i)
        else:
            groups.append([i])
    if not groups:
        groups = [[]]
    out: list[str] = []
    for group in groups:
        cols = [0, *group]
        fitted = [widths[c] for c in cols]
        room = width - first - len(GAP) * len(group)
        if group and sum(fitted[1:]) > room:  # one column alone beside the name: wrap it to what is left
            fitted[1:] = [max(10, room // len(group))] * len(group)
        if out:
            out.append("")
        out += _render([headers[c] for c in cols], [[r[c] for c in cols] for r in rows], fitted)
    return "\n".join(out)


def _fit(text: str, width: int = WIDTH) -> str:
    """Lines longer than ``width`` wrapped at spaces, continued with the line's indent plus two."""
    out = []
    for line in text.split("\n"):
        if len(line) <= width:
            out.append(line)
            continue
        indent = " " * (len(line) - len(line.lstrip()) + 2)
        out += textwrap.wrap(line, width, subsequent_indent=indent, break_long_words=False, break_on_hyphens=False)
    return "\n".join(out)


def _backend(plan: Plan) -> str:
    if plan.task_governance_backend == "native":
        return "cluster policy and quotas as native CloudFormation resources"
    if plan.task_governance_backend == "custom-resource":
        return (f"cluster policy and quotas through an SDK-backed custom resource ({plan.region}'s CloudFormation "
                "has no AWS::SageMaker::ClusterSchedulerConfig / ComputeQuota)")
    return "Kueue objects emitted by hyperpod-gov"


def _api_reach(plan: Plan) -> list[str]:
    c, existing = plan.cluster, plan.cluster.existing
    return api_reach(c.api_access, eks_name=c.eks_name, endpoint_access=c.endpoint_access, admin_cidrs=c.admin_cidrs,
                     admins=len(c.admins), principals=len(plan.principals),
                     handler_subnets=existing.subnet_ids if existing else (),
                     handler_security_group=existing.security_group_id if existing else None)


def explain(plan: Plan, *, today: Optional[dt.date] = None) -> str:
    """A review of the allocation that a person can read without the YAML; ``today`` (default: the day it runs)
    dates the EKS support tier of the cost lines (hyperpod_gov/cost/)."""
    if plan.slurm is not None:
        return explain_slurm(plan, today=today)
    classes = ", ".join(f"{p.name} ({p.weight})" for p in sorted(plan.priority_classes, key=lambda p: -p.weight))
    columns = {t.name: team_columns(t) for t in plan.teams}
    headers = ["TEAM", *(h for h, _ in columns[plan.teams[0].name])] if plan.teams else ["TEAM"]
    rows = [[t.name + (" (shared pool)" if t.is_shared_pool else "") + ("" if t.active else " (paused)"),
             *(v for _, v in columns[t.name])] for t in plan.teams]
    capacity = ", ".join(f"{f.instances} x {f.instance_type}"
                         + (f" (GPUs as {f.mig_resource.removeprefix('nvidia.com/')})" if f.mig_resource else "")
                         for f in plan.flavors)
    nobody = unowned(plan)
    parts = [
        f"Spec {plan.name}: cluster {plan.cluster_name}, {plan.mode} mode ({_backend(plan)}), idle compute "
        f"{plan.idle_compute}" + ("" if plan.idle_resource_sharing else f", {NO_IDLE_SHARING}: no team borrows"),
        *([f"Governs an existing cluster: {plan.cluster.existing.hyperpod_arn} (EKS {plan.eks_cluster_name}); "
           "creates no VPC, EKS or HyperPod cluster",
           f"NetworkPolicies enforced by: {network_policy_enforcement(plan)}"] if plan.cluster.existing else []),
        f"Capacity: {capacity}",
        *_capacity_kinds(plan),
        # Dedicated node groups and shared storage: which group is whose, and the teams' file system.
        *([f"Dedicated groups: {'; '.join(dedicated_groups(plan))}"] if plan.dedicated else []),
        *([f"Shared file system: {shared_file_system(plan)}"] if plan.shared_storage is not None else []),
        "Owned by nobody (runs only borrowed work): " + (", ".join(nobody) if nobody else "nothing"),
        f"Priority classes (highest first; work without a class runs last): {classes or 'none'}",
        *_scheduling_controls(plan),
        _operators(plan),
        "",
        _table(headers, rows),
    ]
    stopped = paused(plan)
    if stopped:
        parts += ["", "Paused teams:", *(f"  {line}" for line in stopped)]
    access_rows = [
        [t.name, t.namespace, "; ".join(_role_name(a) for a in t.viewers) or "-",
         "; ".join(_role_name(a) for a in t.submitters) or "-", ", ".join(t.priority_classes) or "-"]
        for t in plan.tenants
    ]
    parts += ["", _table(["TEAM", "NAMESPACE", "CAN VIEW", "CAN SUBMIT", "PRIORITY CLASSES"], access_rows)]
    # Per-team data: what each team's pods reach, and its bucket.
    data = [(t.name, data_paths(t.identities), t.storage) for t in plan.tenants]
    if any(paths or bucket for _, paths, bucket in data):
        parts += ["", "Data paths (what each team's pods reach):"]
        for name, paths, bucket in data:
            if bucket is not None:
                paths = [f"team bucket s3://{bucket.bucket} (own KMS key) admits "
                         f"{len(bucket.writers)} read-write, {len(bucket.readers)} read-only principal(s)", *paths]
            parts += [f"  {name}:", *(f"    {line}" for line in paths or ["none"])]
    parts += _isolation(plan)
    parts += studio_lines(plan)
    parts += ["", "Kubernetes API reachable from:", *(f"  {line}" for line in _api_reach(plan))]
    # Every EKS add-on hyperpod-gov installs, with its pinned version (plan/addon_defaults.py fills the spec's gaps)
    parts += ["", "EKS add-ons installed (pinned versions):",
              *(f"  {name} {version or '(EKS default)'}" for name, version in plan.addon_versions.items()),
              *(["  none (the existing cluster's are its own)"] if not plan.addon_versions else [])]
    parts += ["", "Monitoring (CloudWatch):", *(f"  {line}" for line in monitoring_lines(plan)),
              "", *explain_cost(plan, today or dt.date.today())]
    stacks = plan.stacks
    parts += ["", f"Stacks: {stacks.capacity + ', ' if stacks.capacity else ''}{stacks.governance}, {stacks.monitoring}, {len(stacks.access)} "
                  f"access, {len(stacks.teams)} team, {len(stacks.consumers)} consumer"]
    for issue in plan_warnings(plan):
        parts.append(f"Note: {issue}")
    return _fit("\n".join(parts)) + "\n"


def _capacity_kinds(plan: Plan) -> list[str]:
    """Per instance type (a flexible group on a line of its own): the guaranteed, elastic and interruptible
    instances (plan/elastic.py)."""
    lines = capacity_lines(plan.instance_groups, plan.catalog)
    return [f"Capacity by kind (guaranteed: {KIND_WORDS['guaranteed']}; elastic: after a scale-up; interruptible: "
            "Spot):", *(f"  {line.label}: {line.words}" for line in lines)]


def _isolation(plan: Plan) -> list[str]:
    """Each team's isolation and network path (teams[].contract), when a contract states either; else nothing."""
    stated = [t for t in plan.tenants if t.contract and (t.contract.isolation != "shared" or t.contract.network_path)]
    if not stated:
        return []
    return ["", "Isolation and network path (contracts; HPG-C005 to HPG-C007 hold them):",
            *(f"  {t.name}: {t.contract.isolation if t.contract else 'shared'}; network path "
              f"{(t.contract.network_path if t.contract else None) or 'not stated'}" for t in plan.tenants)]


def _scheduling_controls(plan: Plan) -> list[str]:
    """scheduler.gangScheduling and scheduler.topology, when the spec sets them (plan/scheduling.py)."""
    out = []
    if plan.gang_scheduling is not None:
        installs = plan.cluster.existing is None or plan.cluster.existing.installs_scheduler
        out.append(f"Gang scheduling: {gang_scheduling_words(plan.gang_scheduling, plan.mode, installs)}")
    if plan.topology is not None:
        ask = podset_topology_annotations(plan.topology, required=True)
        how = (f"; multi-node jobs annotate their pod templates {next(iter(ask))}: {ask[next(iter(ask))]}"
               if ask else "")
        out.append(f"Topology-aware scheduling: {topology_words(plan.topology, plan.mode)}{how}")
    return out


def _operators(plan: Plan) -> str:
    """cluster.operators and the pinned add-ons they install, and an existing cluster's own (docs/operators.md)."""
    running = running_operators(plan)
    own = f"; running already: {', '.join(running)}" if running else ""
    if not plan.cluster.operators:
        return f"Operators: none installed by hyperpod-gov{own}"
    addons = ", ".join(f"{a.name} {a.version or '(EKS default)'}" for a in plan.operator_addons)
    parts = [f"add-ons: {addons}"] if addons else []
    parts += [f"chart {c.chart} {c.version}" for c in plan.operator_charts]  # KubeRay (ray): a Helm release
    return f"Operators: {', '.join(plan.cluster.operators)} ({'; '.join(parts)}){own}"


def _role_name(arn: str) -> str:
    """Short form of an IAM ARN: account/role-name."""
    account = arn.split(":")[4]
    return f"{account}:{arn.split(':', 5)[5]}"


# --- Slurm-orchestrated clusters (cluster.orchestrator: slurm; docs/slurm.md) -----------------------------------

# How each concept of the spec maps to Slurm, and how faithfully (docs/slurm.md has the same table).
SLURM_MAPPING = (
    ("team", "account <team> under the organisation account", "exact"),
    ("fair-share weight", "the account's Fairshare (0 becomes 1, HPG-S010); PriorityWeightFairshare",
     "approximate: Slurm lowers priority with past usage, it does not hand out idle capacity by weight"),
    ("quota on an instance type", "sub-account <team>_<partition> with GrpTRES (node, gres/gpu, cpu and mem), "
     "pinned to the type's partition by AllowAccounts", "exact as a ceiling; nothing is held back for the team: "
     "others' borrowing jobs are requeued when it needs the nodes; its own borrowing does not count against it"),
    ("priority class", "QOS of its name, Priority=weight; PriorityWeightQOS", "exact for ordering"),
    ("preemption", "preempt/qos with REQUEUE: every QOS preempts the borrow QOS", "exact for reclaiming borrowed "
     "capacity; a team's own lower-priority work is not preempted (a class QOS is cluster-wide)"),
    ("Lend", "no borrow QOS", "exact"),
    ("LendAndBorrow", "QOS <team>_<partition>_borrow, GrpTRES=the cap, Priority 0, NoReserve, requeued; jobs run "
     "under the account of the same name (under the team, no GrpTRES, only that QOS)",
     "approximate: a percentage becomes a fixed cap (HPG-S009)"),
    ("DontLend", "a partition dedicated to the team (AllowAccounts)", "exact on a dedicated partition, refused "
     "elsewhere (HPG-S006)"),
    ("paused team", "GrpJobs=0 on its accounts", "exact: running jobs finish, nothing new starts"),
    ("people", "POSIX users with an association to the team's sub-accounts, the first guaranteed one as default "
     "account",
     "exact"),
    ("data", "a directory per team, group-owned, mode 2770", "exact (POSIX permissions)"),
)
PROMETHEUS_CONCEPT = "managed Prometheus and Grafana (monitoring.prometheus, monitoring.grafana)"


def _prometheus_mapping(plan: Plan) -> tuple[str, str, str]:
    """What managed Prometheus observes of this Slurm cluster and what it does not (plan/slurm_observability.py)."""
    p = plan.prometheus
    workspace = "none" if p is None else ("a workspace of this spec" if p.creates else str(p.workspace_arn))
    return (PROMETHEUS_CONCEPT, *slurm_observed(None if p is None else p.extension, workspace))


def _slurm_notes(plan: Plan) -> list[str]:
    """What a Slurm cluster approximates for this spec, team by team (the HPG-S warnings, from the plan)."""
    sp = plan.slurm
    assert sp is not None
    by_name = {t.name: t for t in plan.teams}
    out = []
    for t in sp.teams:
        if t.fair_share_weight == 0:
            out.append(f"{t.name}: fair-share weight 0 becomes Fairshare=1 (HPG-S010)")
        team = by_name[t.name]
        absolute = {a.instance_type for a in team.absolute_borrow_limits}
        for lim in t.borrow:
            if lim.instance_type not in absolute:
                out.append(f"{t.name}: borrowing {team.borrow_limit_percent}% of its quota becomes a fixed cap of "
                           f"{','.join(f'{k}={v}' for k, v in lim.tres)} on {lim.partition} (HPG-S009)")
        if t.users and not t.partitions:
            out.append(f"{t.name}: its users have no account to submit under (HPG-S012)")
    if not sp.edits_partitions and len(sp.partitions) <= 1:
        out.append(f"configStrategy {sp.config_strategy}: HyperPod keeps the partition lines; one compute partition "
                   "needs no AllowAccounts")
    return out


def explain_slurm(plan: Plan, *, today: Optional[dt.date] = None) -> str:
    """``explain`` for a Slurm-orchestrated spec: accounts, QOS, limits, partitions, and each mapping's fidelity."""
    sp = plan.slurm
    assert sp is not None
    state = desired_state(sp)
    groups = "; ".join(f"{g.name}: {g.count} x {g.instance_type} {g.node_type}"
                       + (f" in partition {g.partition}" if g.partition else "")
                       + (f" (dedicated to {g.dedicated_to})" if g.dedicated_to else "") for g in sp.groups)
    classes = ", ".join(f"{p.name} ({p.weight})" for p in sorted(sp.priority_classes, key=lambda p: -p.weight))
    db = sp.accounting_database
    parts = [
        f"Spec {plan.name}: cluster {sp.cluster_name}, Slurm orchestrator (configStrategy {sp.config_strategy}; "
        f"accounting in {db.endpoint if db else 'the controller' + chr(39) + 's MariaDB'}), idle compute "
        f"{plan.idle_compute}" + ("" if plan.idle_resource_sharing else f", {NO_IDLE_SHARING}: no team borrows"),
        f"Instance groups: {groups}",
        *_capacity_kinds(plan),
        f"Organisation account: {sp.organisation} (under root); work without a class runs in QOS {sp.standard_qos}",
        f"Priority classes as QOS (highest first): {classes or 'none'}",
        "",
        _table(["TEAM", "ACCOUNTS", "FAIRSHARE", "GUARANTEED (GrpTRES)", "BORROW CAP (QOS)", "USERS", "GROUP",
                "DATA"],
               [[t.name + ("" if t.active else " (paused)"),
                 ", ".join([t.account, *t.sub_accounts]),
                 str(t.fairshare) + (f" (weight {t.fair_share_weight})" if t.fairshare != t.fair_share_weight
                                     else ""),
                 "; ".join(f"{lim.partition} {','.join(f'{k}={v}' for k, v in lim.tres)}" for lim in t.guaranteed)
                 or "-",
                 "; ".join(f"{lim.partition} {','.join(f'{k}={v}' for k, v in lim.tres)}" for lim in t.borrow)
                 or "-",
                 ", ".join(t.users) or "-", t.group, t.data_path] for t in sp.teams]),
        "",
        "QOS:",
        *(f"  {q.name}: priority {q.priority}" + (f", GrpTRES={','.join(f'{k}={v}' for k, v in q.grp_tres)}"
                                                  if q.grp_tres else "")
          + (f", preempts {', '.join(q.preempt)}" if q.preempt else "")
          + (f", requeued when preempted, {', '.join(q.flags)}" if q.preempt_mode else "") for q in state.qos),
        "",
        "Partitions:",
        *(f"  {p.name}: {p.nodes} x {', '.join(p.instance_types)}; "
          + (f"AllowAccounts={','.join(p.accounts) or 'root'}; AllowQos={','.join(p.qos)}" if sp.edits_partitions
             else "every account (HyperPod's partition line)") for p in sp.partitions),
        "",
        "slurm.conf (apply.sh, between markers in accounting.conf): "
        + " ".join(f"{k}={v}" for k, v in (state.conf.settings if state.conf else ())),
        "",
        "Mapping (spec -> Slurm: fidelity):",
        *(f"  {concept} -> {slurm}: {fidelity}" for concept, slurm, fidelity in (*SLURM_MAPPING,
                                                                               _prometheus_mapping(plan))),
    ]
    parts += _isolation(plan)
    parts += explain_lines([task_view(sp, t.slurm, t.contract) for t in plan.teams if t.slurm is not None])
    notes = _slurm_notes(plan)
    if notes:
        parts += ["", "Approximations of this spec:", *(f"  {n}" for n in notes)]
    parts += ["", *explain_cost(plan, today or dt.date.today())]
    parts += ["", "Files (synth output slurm/): accounting.sh, posix.sh, apply.sh, slurm.conf.d/governance.conf"
              + (", slurm.conf.d/partitions.conf" if sp.edits_partitions and sp.partitions else "")]
    for issue in plan_warnings(plan):
        parts.append(f"Note: {issue}")
    return _fit("\n".join(parts)) + "\n"
