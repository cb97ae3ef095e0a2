"""Changes the measured usage argues for, as a spec patch with the reason and the cost to other teams.

Every accepted patch has been applied to the spec as loaded from YAML and checked by ``parse_spec``: a proposal
never exceeds the cluster's capacity or breaks another rule. Pure apart from that check.
"""

from __future__ import annotations

import copy
import datetime as dt
import math
from dataclasses import dataclass
from typing import Any, Optional, Sequence

from .. import catalog
from ..plan import Plan
from ..spec import SpecError, parse_spec
from ..spec.models import DEFAULT_BORROW_LIMIT_PERCENT, GovernanceSpec, QuotaEntry
from .analysis import TeamUsage, Window, cohort_free, contended_hours

MAX_BORROW_LIMIT_PERCENT = 500
BORROW_STEP_PERCENT = 50
QUOTA_STEP = 0.25  # a team short of quota gets a quarter more (at least one unit)
MIN_COVERAGE = 0.5  # propose only from windows with data for at least half the hours


@dataclass(frozen=True)
class PatchOp:
    """One JSON Patch (RFC 6902) operation on the spec as written in YAML (camelCase keys)."""

    op: str  # replace | add | remove
    path: str  # JSON pointer, e.g. /teams/2/sharing
    value: Any = None
    old: Any = None

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"op": self.op, "path": self.path}
        if self.op != "remove":
            out["value"] = self.value
        return out


@dataclass(frozen=True)
class Proposal:
    team: str
    kind: str  # lend | more-quota | borrow-limit | borrow | move-quota | weights | add-capacity
    ops: tuple[PatchOp, ...]  # empty: advice only (nothing in the spec can fix it)
    reason: str
    cost: str


@dataclass(frozen=True)
class Rejected:
    proposal: Proposal
    problem: str  # the spec rule that refused the patched spec


# --- JSON pointer patching ---------------------------------------------------------------------------------------


def _parts(path: str) -> list[str]:
    return [p.replace("~1", "/").replace("~0", "~") for p in path.lstrip("/").split("/")]


def _get(data: Any, path: str) -> Any:
    node = data
    for part in _parts(path):
        node = node[int(part)] if isinstance(node, list) else node.get(part) if isinstance(node, dict) else None
        if node is None:
            return None
    return node


def apply_patch(data: Any, ops: Sequence[PatchOp]) -> Any:
    """A copy of ``data`` with the operations applied (add creates missing mappings on the way)."""
    out = copy.deepcopy(data)
    for op in ops:
        *parents, last = _parts(op.path)
        node = out
        for part in parents:
            if isinstance(node, list):
                node = node[int(part)]
            else:
                node = node.setdefault(part, {})
        if isinstance(node, list):
            index = int(last)
            if op.op == "remove":
                del node[index]
            else:
                node[index] = copy.deepcopy(op.value)
        elif op.op == "remove":
            node.pop(last, None)
        else:
            node[last] = copy.deepcopy(op.value)
    return out


def check(data: Any, proposals: Sequence[Proposal], today: dt.date
          ) -> tuple[tuple[Proposal, ...], tuple[Rejected, ...]]:
    """Keep each proposal whose patch, on top of those kept before it, the spec rules accept."""
    kept: list[Proposal] = []
    rejected: list[Rejected] = []
    current = data
    for p in proposals:
        if not p.ops:
            kept.append(p)
            continue
        candidate = apply_patch(current, p.ops)
        try:
            parse_spec(candidate, today=today)
        except SpecError as exc:
            rejected.append(Rejected(p, "; ".join(str(i) for i in exc.issues[:3])))
            continue
        kept.append(p)
        current = candidate
    return tuple(kept), tuple(rejected)


# --- what the usage argues for -----------------------------------------------------------------------------------


def _index(spec: GovernanceSpec, team: str) -> int:
    return next(i for i, t in enumerate(spec.teams) if t.name == team)


def unallocated(plan: Plan, itype: str) -> int:
    """Capacity of a type no team owns, from the plan, in the unit its quotas are counted in (partitions on a
    partitioned type, else accelerators, else vCPU)."""
    return plan.unallocated(itype)


@dataclass(frozen=True)
class _Given:
    """How the spec gives a team's quota on one type: the key, the value, and its size in governed units."""

    key: str  # JSON pointer below the quota entry: count, accelerators, vcpu or partitions/count
    have: int
    size: int  # governed units (partitions, accelerators or vCPU) per unit of ``have``
    word: str  # what one unit of ``have`` is called in a sentence

    @property
    def whole_instances(self) -> bool:
        return self.key == "count"


def _given(plan: Plan, itype: str, entry: QuotaEntry) -> _Given:
    f = plan.flavor(itype)
    per = max(f.governed(f.per_instance), 1)
    if entry.count is not None:
        return _Given("count", entry.count, per, "instances")
    if entry.accelerators is not None:
        return _Given("accelerators", entry.accelerators, 1, "accelerators")
    if entry.vcpu is not None:
        return _Given("vcpu", entry.vcpu, 1, "vCPU")
    assert entry.partitions is not None  # a quota entry gives exactly one of the four (spec rule)
    return _Given("partitions/count", entry.partitions.count, 1, f"{entry.partitions.profile} partitions")


def _unit(plan: Plan, itype: str) -> str:
    f = plan.flavor(itype)
    if f.mig_resource:
        return f"{f.mig_resource.removeprefix('nvidia.com/')} partitions"
    return {catalog.NVIDIA_GPU: "GPUs", catalog.NEURON_DEVICE: "Neuron devices"}.get(f.accelerator_kind or "",
                                                                                       "vCPUs")


def _fmt(x: Optional[float]) -> str:
    if x is None:
        return "no data"
    return f"{x:.0f}" if abs(x - round(x)) < 0.05 else f"{x:.1f}"


def _main(u: TeamUsage):
    owned = [f for f in u.flavors if f.nominal]
    return max(owned, key=lambda f: (f.nominal, f.instance_type)) if owned else None


def _lend(spec: GovernanceSpec, u: TeamUsage, idle_percent: int, window: Window) -> Optional[Proposal]:
    pct = u.main_average_percent
    if u.strategy != "DontLend" or pct is None or pct > idle_percent:
        return None
    i = _index(spec, u.team)
    owned = ", ".join(f"{f.nominal} {f.unit} on {f.instance_type}" for f in u.flavors)
    peaks = ", ".join(f"peak {_fmt(f.peak)} of {f.nominal}" for f in u.flavors)
    return Proposal(
        team=u.team, kind="lend",
        ops=(PatchOp("replace", f"/teams/{i}/sharing", {"strategy": "Lend"}, {"strategy": "DontLend"}),),
        reason=(f"{u.team} keeps {owned} to itself (DontLend) but used {pct:.0f}% of it on average over "
                f"{window.days} days ({peaks}), at most the {idle_percent}% idle bar."),
        cost=("none: the other teams may borrow its idle capacity; when its own work returns, "
              f"{u.team} takes the capacity back and borrowed work on it is preempted."),
    )


def _needs_more(spec: GovernanceSpec, plan: Plan, u: TeamUsage, usage: Sequence[TeamUsage], window: Window
                ) -> Optional[Proposal]:
    if not u.days_with_data or u.days_pending_at_quota * 2 <= u.days_with_data:
        return None
    f = _main(u)
    if f is None:
        return None
    i = _index(spec, u.team)
    team = spec.teams[i]
    qi, entry = next((qi, q) for qi, q in enumerate(team.quota) if q.instance_type == f.instance_type)
    itype, unit = f.instance_type, _unit(plan, f.instance_type)
    why = (f"{u.team} had work waiting while using all of its {f.nominal} {f.unit} on {itype} on "
           f"{u.days_pending_at_quota} of {u.days_with_data} days ({u.pending_hours_at_quota} hours).")
    given = _given(plan, itype, entry)
    flavor = plan.flavor(itype)
    whole_gpus = flavor.accelerator_kind is not None and flavor.mig_resource is None
    by_count, have, key = given.whole_instances, given.have, given.key
    step = max(1, math.ceil(have * QUOTA_STEP))
    step_units = step * given.size
    free = unallocated(plan, itype)
    if free >= step_units or (free and not by_count):
        add = step if free >= step_units else free
        ops = [PatchOp("replace", f"/teams/{i}/quota/{qi}/{key}", have + add, have)]
        if entry.vcpu is not None and entry.memory_gib is not None:  # memory grows with the vCPU, pro rata
            facts = plan.catalog.lookup(itype)
            more = add * facts.memory_gib // facts.vcpu
            ops.append(PatchOp("replace", f"/teams/{i}/quota/{qi}/memoryGib", entry.memory_gib + more,
                               entry.memory_gib))
        pool = plan.shared_pool_asked
        return Proposal(
            team=u.team, kind="more-quota", ops=tuple(ops),
            reason=why + f" {free} {'accelerators' if by_count and whole_gpus else unit} of {itype} belong to no "
                         "team.",
            cost=(f"nothing owned by another team; the shared pool '{pool}' holds {add} fewer {given.word} to lend."
                  if pool else f"nothing owned by another team: the {add} {given.word} were unallocated."),
        )
    # What the cohort could have lent while the team waited (lenders' idle minus what borrowers already took).
    waited = sorted(u.pending_at_quota)
    lenders_idle = sum(cohort_free(usage, itype, h, u.team) for h in waited) / len(waited) if waited else 0.0
    at_cap = u.pending_hours_at_cap * 2 >= u.pending_hours_at_quota
    others_borrowing = sorted(o.team for o in usage if o.team != u.team and o.borrowing_hours)
    competition = (f"; {', '.join(others_borrowing)} borrow too and compete for the same idle capacity by "
                   "fair-share weight" if others_borrowing else "")
    reclaim = ("lenders keep their guarantee: when they need their capacity back, borrowed work is preempted"
               + competition + ".")
    if (lenders_idle >= 1 and at_cap and u.strategy == "LendAndBorrow"
            and u.borrow_limit_percent < MAX_BORROW_LIMIT_PERCENT):
        new = min(MAX_BORROW_LIMIT_PERCENT, u.borrow_limit_percent + BORROW_STEP_PERCENT)
        return Proposal(
            team=u.team, kind="borrow-limit",
            ops=(PatchOp("replace", f"/teams/{i}/sharing/borrowLimitPercent", new,
                         team.sharing.borrow_limit_percent),),
            reason=why + f" It was borrowing all it may ({u.borrow_limit_percent}%) in {u.pending_hours_at_cap} of "
                   f"those hours, while lenders had {_fmt(lenders_idle)} {f.unit} of {itype} idle on average.",
            cost=f"borrowing up to {new}% instead of {u.borrow_limit_percent}% of its quota; " + reclaim,
        )
    if lenders_idle >= 1 and u.strategy == "Lend":
        return Proposal(
            team=u.team, kind="borrow",
            ops=(PatchOp("replace", f"/teams/{i}/sharing",
                         {"strategy": "LendAndBorrow", "borrowLimitPercent": DEFAULT_BORROW_LIMIT_PERCENT},
                         {"strategy": "Lend"}),),
            reason=why + f" Lenders had {_fmt(lenders_idle)} {f.unit} of {itype} idle on average meanwhile.",
            cost=f"{u.team} may borrow up to {DEFAULT_BORROW_LIMIT_PERCENT}% of its quota; " + reclaim,
        )
    donors = []
    for other in usage if key in ("count", "accelerators") else ():  # quota moves between GPU counts only
        if other.team == u.team or other.is_shared_pool:
            continue
        of = next((o for o in other.flavors if o.instance_type == itype and o.nominal), None)
        if of is None or of.peak is None:
            continue
        oi = _index(spec, other.team)
        oq = next((qj, q) for qj, q in enumerate(spec.teams[oi].quota) if q.instance_type == itype)
        donors.append((of.average_percent or 0.0, other.team, of, oi, oq, other.strategy == "LendAndBorrow"))
    for _, donor, of, oi, (qj, q), borrows in sorted(donors, key=lambda d: (d[0], d[1])):
        if q.count is None and q.accelerators is None:
            continue
        per = max(plan.flavor(itype).governed(plan.flavor(itype).per_instance), 1)
        # Move whole instances unless both quotas are in accelerators.
        in_acc = not by_count and q.accelerators is not None
        move_acc = step_units if in_acc else math.ceil(step_units / per) * per
        if of.peak + move_acc > of.nominal:
            continue
        d_new = (q.accelerators - move_acc) if q.accelerators is not None else (q.count or 0) - move_acc // per
        r_new = have + (move_acc // per if by_count else move_acc)
        d_key = "accelerators" if q.accelerators is not None else "count"
        if d_new <= 0:
            continue
        return Proposal(
            team=u.team, kind="move-quota",
            ops=(PatchOp("replace", f"/teams/{i}/quota/{qi}/{key}", r_new, have),
                 PatchOp("replace", f"/teams/{oi}/quota/{qj}/{d_key}", d_new,
                         q.accelerators if q.accelerators is not None else q.count)),
            reason=why + f" {donor} never used more than {_fmt(of.peak)} of its {of.nominal} {of.unit} on {itype} "
                   f"in {window.days} days (average {of.average_percent or 0:.0f}%).",
            cost=(f"{donor} owns {move_acc} {of.unit} fewer on {itype} ({of.nominal} -> {of.nominal - move_acc}); "
                  f"its peak so far ({_fmt(of.peak)}) still fits, beyond it its work "
                  f"{'borrows or waits' if borrows else 'waits'}."),
        )
    return Proposal(
        team=u.team, kind="add-capacity", ops=(),
        reason=why + " No capacity is unallocated, lenders had nothing idle to lend and no team has quota it "
                     "never used.",
        cost=f"add instances of {itype} (an instance group's count) and raise {u.team}'s quota with them.",
    )


def _weights(spec: GovernanceSpec, usage: Sequence[TeamUsage], fair_sharing: bool, window: Window
             ) -> Optional[Proposal]:
    tenants = [u for u in usage if not u.is_shared_pool]
    weights = {u.fair_share_weight for u in tenants}
    if not fair_sharing or len(weights) < 2 or not any(u.hours_with_data for u in tenants):
        return None
    if contended_hours(tuple(usage)):
        return None
    ops = []
    named = []
    for t_index, team in enumerate(spec.teams):
        if team.fair_share_weight != 100:
            ops.append(PatchOp("remove", f"/teams/{t_index}/fairShareWeight", old=team.fair_share_weight))
            named.append(f"{team.name} {team.fair_share_weight}")
    if not ops:
        return None
    return Proposal(
        team="*", kind="weights", ops=tuple(ops),
        reason=(f"fair-share weights ({', '.join(named)}) decided nothing in {window.days} days: no hour had two "
                "teams wanting idle capacity at once (borrowing, or waiting at quota). Dropping them makes the "
                "spec say what happens; keep them if you expect contention."),
        cost="none observed; under future contention every team would share idle capacity equally.",
    )


def propose(spec: GovernanceSpec, plan: Plan, usage: Sequence[TeamUsage], window: Window, *,
            idle_percent: dict[str, int]) -> tuple[Proposal, ...]:
    """Proposals in a stable order: per team (by name) lending or more capacity, then fair-share weights."""
    out = []
    names = {t.name for t in spec.teams}
    for u in sorted(usage, key=lambda u: u.team):
        if u.is_shared_pool or u.team not in names or u.hours_with_data < window.hours * MIN_COVERAGE:
            continue
        p = _lend(spec, u, idle_percent.get(u.team, 20), window) or _needs_more(spec, plan, u, usage, window)
        if p is not None:
            out.append(p)
    w = _weights(spec, usage, plan.fair_sharing, window)
    if w is not None:
        out.append(w)
    return tuple(out)
