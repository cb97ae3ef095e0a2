"""Flavor assignment: which flavor of the queue's resource group a head gets, and in which mode.

Mirrors ``pkg/scheduler/flavorassigner/flavorassigner.go`` of kubernetes-sigs/kueue v0.19.2 (assignFlavors,
findFlavorForPodSets, fitsResourceQuota, isPreferred, shouldTryNextFlavor, lastAssignmentOutdated) for one
pod set and one resource group, with flavor fungibility and FlavorFungibilityPreserveScanProgress on. The
preemption oracle it asks (``preemption_oracle.go``) is passed in: :class:`.preemption.Preemptor`.
"""

from __future__ import annotations

from typing import Optional, Protocol

from .cache import ClusterQueue, Workload
from .quantities import show_quantity
from .resource_node import available_quota, limits
from .results import FR

# Granular modes of pkg/scheduler/flavorassigner (preemptionMode), worst to best.
NO_FIT, NO_CANDIDATES, PREEMPT, RECLAIM, FIT = range(5)
_MODE_NAMES = {NO_FIT: "NoFit", NO_CANDIDATES: "Preempt", PREEMPT: "Preempt", RECLAIM: "Preempt", FIT: "Fit"}


class Oracle(Protocol):
    """What flavor assignment asks about preemption (preemption.PreemptionOracle)."""

    def simulate_preemption(self, wl: Workload, fr: FR, val: int) -> tuple[int, int]: ...

    def can_preempt_while_borrowing(self, cq: ClusterQueue) -> bool: ...


class Assignment:
    """flavorassigner.Assignment for one pod set: the chosen flavor, its modes, borrowing level, targets."""

    __slots__ = ("flavor", "modes", "_borrow", "mode", "tried", "reasons", "usage", "targets", "pending", "_why",
                 "shares_read", "quota", "found_none")

    def __init__(self):
        self.flavor: Optional[str] = None
        self.modes: dict[str, int] = {}  # resource -> granular mode on the chosen flavor
        self._borrow = 0
        self.mode = NO_FIT  # representative granular mode
        self.tried: Optional[int] = None
        self.reasons: list[str] = []
        self.usage: dict[FR, int] = {}
        self.targets: list[tuple[Workload, str]] = []
        # Preemption simulations whose answers can only refine the mode among the preempting ones and the
        # borrowing level (see assign_flavors); run by resolve() when something reads those.
        self.pending: Optional[tuple] = None
        self._why: Optional[str] = None
        # Whether computing it read other queues' dominant shares (a fair-sharing search ran its
        # strategies): the memo then checks the borrowers' commits even while the flavors' versions hold.
        self.shares_read = True
        # The quota checks it made, in order: ((flavor, resource), amount, quota_check's answer); and whether
        # every preemption search it ran found no targets (what the memo may give again, see memo.py).
        self.quota: list[tuple] = []
        self.found_none = False

    def why(self) -> str:
        """The reasons, each once, in order, joined by '; ' (a remembered assignment is read again)."""
        why = self._why
        if why is None:
            why = self._why = "; ".join(dict.fromkeys(self.reasons))
        return why

    @property
    def borrow(self) -> int:
        """The borrowing level of the assignment (0: within nominal)."""
        if self.pending is not None:
            raise RuntimeError("the borrowing level of an assignment was read before its preemption simulations ran")
        return self._borrow

    @borrow.setter
    def borrow(self, value: int) -> None:
        self._borrow = value

    @property
    def representative(self) -> str:
        """Assignment.RepresentativeMode: NoFit, Preempt or Fit."""
        return _MODE_NAMES[self.mode] if self.flavor is not None else "NoFit"

    def resolve(self) -> None:
        """Run the deferred preemption simulations (in the state the assignment was made in)."""
        if self.pending is None:
            return
        wl, rep, to_simulate, oracle = self.pending
        self.pending = None
        rep = _simulate_all(wl, rep, to_simulate, self.modes, oracle)
        self.mode, self._borrow = rep


def is_preferred(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """flavorassigner.isPreferred with the default preference (BorrowingOverPreemption)."""
    if a[0] == NO_FIT:
        return False
    if b[0] == NO_FIT:
        return True
    a_nc, b_nc = a[0] == NO_CANDIDATES, b[0] == NO_CANDIDATES
    if a_nc != b_nc:
        return not a_nc
    if a[0] != b[0]:
        return a[0] > b[0]
    return a[1] < b[1]


def should_try_next(mode: tuple[int, int], cq: ClusterQueue) -> bool:
    """flavorassigner.shouldTryNextFlavor."""
    if mode[0] in (NO_FIT, NO_CANDIDATES):
        return True
    ff = cq.d.flavor_fungibility
    if mode[0] in (PREEMPT, RECLAIM) and ff.when_can_preempt == "TryNextFlavor":
        return True
    return mode[1] != 0 and ff.when_can_borrow == "TryNextFlavor"


def assign_flavors(wl: Workload, cycle: int, oracle: Oracle) -> Assignment:
    """FlavorAssigner.assignFlavors + findFlavorForPodSets for one pod set and one resource group."""
    cq = wl.cq
    a = Assignment()
    start = 0
    last = wl.last_tried
    if last is not None and not last_assignment_outdated(wl, cycle):
        start = last + 1
    scan = wl.scans.get(start) or _scan(wl, start)
    missing, sole, steps, usage = scan
    reasons = a.reasons
    if missing:
        reasons.append(missing)
        return a
    best: Optional[tuple[str, dict[str, int], tuple[int, int]]] = None
    best_mode = (NO_FIT, 1 << 30)
    pending = None
    attempted = -1
    for idx, fname, skipped, checks in steps:
        attempted = idx
        if skipped is not None:
            reasons.append(skipped)
            continue
        rep = (FIT, 0)
        modes: dict[str, int] = {}
        # fitsResourceQuota per resource. The quota checks are cheap and do not depend on each other, so
        # they all run first; a NoFit anywhere makes the flavor NoFit without simulating any preemption.
        to_simulate = []
        quota = a.quota
        for r, fr, val in checks:
            answer = quota_check(wl, fr, val, oracle)
            quota.append((fr, val, answer))
            mode, borrow, reason = answer
            if reason:
                reasons.append(reason)
            if mode is None:
                to_simulate.append((r, fr, val, borrow))
                continue
            m = (mode, borrow)
            if m != rep and is_preferred(rep, m):  # is_preferred(x, x) is False
                rep = m
            if rep[0] == NO_FIT:
                break
            modes[r] = mode
        if rep[0] != NO_FIT and to_simulate:
            if sole:
                # The oracle's answers are NoCandidates, Preempt or Reclaim: for the only flavor left to try,
                # with TryNextFlavor on preemption, each of them keeps this flavor and the scan's progress;
                # they only refine the mode among the preempting ones and the borrowing level.
                pending = (wl, rep, to_simulate, oracle)
                for r, _fr, _val, _borrow in to_simulate:
                    modes[r] = PREEMPT
                rep = (PREEMPT, rep[1])
            else:
                rep = _simulate_all(wl, rep, to_simulate, modes, oracle)
        if not should_try_next(rep, cq):
            best, best_mode = (fname, modes, rep), rep
            break
        if is_preferred(rep, best_mode):
            best, best_mode = (fname, modes, rep), rep
    if best is None:
        return a
    a.flavor, a.modes, rep = best
    a.mode = rep[0]
    a._borrow = rep[1]
    a.pending = pending
    a.tried = None if attempted == len(cq.flavors) - 1 else attempted
    a.usage = dict(usage[a.flavor])
    return a


def _scan(wl: Workload, start: int) -> tuple:
    """What :func:`assign_flavors` goes through for ``wl`` from flavor ``start``, fixed for the workload:
    (the reason if a resource is not covered, whether one flavor is left to try with TryNextFlavor on
    preemption, per flavor from ``start`` (index, name, the reason it is skipped or None, the requests as
    (resource, (flavor, resource), amount)), the usage the workload would have on each flavor)."""
    cq = wl.cq
    scan: tuple
    missing = next((r for r, _ in wl.requests if r not in cq.covered), None)
    if missing is not None:
        scan = (f"resource {missing} unavailable in ClusterQueue", False, (), {})
    else:
        allowed = wl.d.allowed_flavors
        flavors = cq.flavors[start:]
        left = len(flavors) if allowed is None else sum(1 for f in flavors if f in allowed)
        sole = left == 1 and cq.d.flavor_fungibility.when_can_preempt == "TryNextFlavor"
        steps = []
        usage = {}
        for idx, fname in enumerate(flavors, start):
            if allowed is not None and fname not in allowed:
                steps.append((idx, fname, f"flavor {fname} doesn't match node affinity", ()))
            else:
                steps.append((idx, fname, None, tuple((r, (fname, r), val) for r, val in wl.requests)))
                usage[fname] = tuple(((fname, r), val) for r, val in wl.requests)
        scan = ("", sole, tuple(steps), usage)
    wl.scans[start] = scan
    return scan


def _simulate_all(wl: Workload, rep: tuple[int, int], to_simulate: list, modes: dict[str, int],
                  oracle: Oracle) -> tuple[int, int]:
    """The preemption oracle on each resource that needs it, folded into the flavor's mode ``rep``."""
    for r, fr, val, borrow_now in to_simulate:
        if rep[0] == NO_CANDIDATES and borrow_now <= rep[1]:
            # Whatever the simulation finds, (NoCandidates, rep borrow) stays the worst mode.
            modes[r] = NO_CANDIDATES
            continue
        m = oracle.simulate_preemption(wl, fr, val)
        if is_preferred(rep, m):
            rep = m
        modes[r] = m[0]
    return rep


def last_assignment_outdated(wl: Workload, cycle: int) -> bool:
    """lastAssignmentOutdated with FlavorFungibilityPreserveScanProgress on."""
    if cycle - wl.last_cycle <= 1:
        return False
    gen = wl.cq.cohort.generation if wl.cq.cohort is not None else 0
    return gen > wl.last_generation


def quota_check(wl: Workload, fr: FR, val: int, oracle: Oracle) -> tuple[Optional[int], int, str]:
    """FlavorAssigner.fitsResourceQuota up to the preemption oracle: mode None means 'simulate preemption'
    (the borrow returned is then the level without preemption, which a NoCandidates result keeps).

    :func:`.resource_node.potential` and :func:`~.resource_node.lowest_subtree` are written out here over the
    queue's fixed limits, and :func:`~.resource_node.available_quota` called on them directly: this runs for
    every resource of every head a cycle nominates."""
    cq = wl.cq
    nominal, lq, bl, most, subtree = cq.limits.get(fr) or limits(cq, fr)
    if val > most:
        key = (fr, val, most)
        reason = cq.reasons.get(key)
        if reason is None:
            reason = cq.reasons[key] = (
                f"insufficient quota for {fr[1]} in flavor {fr[0]}, request {show_quantity(fr[1], val)} > "
                f"maximum capacity {show_quantity(fr[1], most)}"
            )
        return NO_FIT, 0, reason
    used = cq.usage[fr]
    co = cq.cohort
    if co is None:  # lowest_subtree
        borrow, may_reclaim = 0, False
        free = available_quota(nominal, lq, bl, subtree, used, None)
    else:
        if nominal < used + val:
            borrow, may_reclaim = 1, False
        else:
            borrow, may_reclaim = 0, True
        free = available_quota(nominal, lq, bl, subtree, used, co.usage[fr])
    if val <= free:
        return FIT, borrow, ""
    key = (fr, val - free)
    reason = cq.reasons.get(key)
    if reason is None:
        reason = cq.reasons[key] = (f"insufficient unused quota for {fr[1]} in flavor {fr[0]}, "
                                    f"{show_quantity(fr[1], val - free)} more needed")
    if nominal >= val or may_reclaim or oracle.can_preempt_while_borrowing(cq):
        return None, borrow, reason
    return NO_FIT, borrow, reason
