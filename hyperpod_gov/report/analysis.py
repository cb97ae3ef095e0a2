"""Per-team usage over a window, from hourly metric series. Pure: no AWS call."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Mapping, Optional

from ..plan.monitoring import MonitoringPlan, TeamWatch
from .metrics import Query, Series


@dataclass(frozen=True)
class FlavorUsage:
    instance_type: str
    unit: str
    nominal: int
    borrowing_limit: int
    average: Optional[float]  # over the hours with data; None: no data
    peak: Optional[float]
    used_hours: float  # unit-hours (e.g. GPU-hours): the sum of hourly averages
    borrowed_hours: float  # the part above nominal
    hours_with_data: int
    hourly: Mapping[dt.datetime, float] = field(default_factory=dict, compare=False, repr=False)  # hourly average

    @property
    def average_percent(self) -> Optional[float]:
        if self.average is None or not self.nominal:
            return None
        return 100 * self.average / self.nominal


@dataclass(frozen=True)
class TeamUsage:
    team: str
    is_shared_pool: bool
    strategy: str
    fair_share_weight: int
    borrow_limit_percent: int
    flavors: tuple[FlavorUsage, ...]
    hours: int  # in the window
    hours_with_data: int  # hours with a usage value
    pending_hours_below_quota: int  # work waited while the team ran below its nominal quota
    pending_hours_at_quota: int  # work waited while the team used all its nominal quota
    pending_hours_at_cap: int  # ... and all it may borrow on top (nominal + borrowing limit)
    days_pending_at_quota: int
    days_with_data: int
    evictions: tuple[tuple[str, int], ...]  # (reason, count), sorted by reason
    utilisation: Optional[float]  # average percent over the hours with data
    borrowing_hours: frozenset[dt.datetime]  # hours with usage above nominal
    pending_at_quota: frozenset[dt.datetime]

    @property
    def main_average_percent(self) -> Optional[float]:
        """Average usage over the main flavors (accelerators if it owns any), in percent of their nominal quota."""
        main = [f for f in self.flavors if f.unit != "vCPUs"] or list(self.flavors)
        with_data = [f for f in main if f.average is not None]
        nominal = sum(f.nominal for f in with_data)
        if not with_data or not nominal:
            return None
        return 100 * sum(f.average or 0 for f in with_data) / nominal


@dataclass(frozen=True)
class Window:
    start: dt.datetime
    end: dt.datetime

    @property
    def hours(self) -> int:
        return int((self.end - self.start).total_seconds() // 3600)

    @property
    def days(self) -> int:
        return max(1, self.hours // 24)


def _only(series: list[Series]) -> dict[dt.datetime, float]:
    return series[0].points if series else {}


def _team(w: TeamWatch, window: Window, mine: dict[str, list[Series]], by_what: dict[tuple[str, Optional[str]], str]
          ) -> TeamUsage:
    def points(what: str, instance_type: Optional[str] = None) -> dict[dt.datetime, float]:
        qid = by_what.get((what, instance_type))
        return _only(mine.get(qid, [])) if qid else {}

    flavors = []
    avg_by_flavor, max_by_flavor = {}, {}
    for f in w.flavors:
        avg, peak = points("usage-avg", f.instance_type), points("usage-max", f.instance_type)
        avg_by_flavor[f.instance_type], max_by_flavor[f.instance_type] = avg, peak
        values = list(avg.values())
        flavors.append(FlavorUsage(
            instance_type=f.instance_type, unit=f.unit, nominal=f.nominal, borrowing_limit=f.borrowing_limit,
            average=sum(values) / len(values) if values else None,
            peak=max(peak.values()) if peak else (max(values) if values else None),
            used_hours=sum(values),
            borrowed_hours=sum(max(v - f.nominal, 0.0) for v in values),
            hours_with_data=len(values),
            hourly=avg,
        ))
    hours_with_data = set().union(*(set(a) for a in avg_by_flavor.values())) if avg_by_flavor else set()
    pending = points("pending")
    main = w.main_flavors
    below, at, cap, borrowing = set(), set(), set(), set()
    for hour in hours_with_data:
        peaks = [max_by_flavor[f.instance_type].get(hour, avg_by_flavor[f.instance_type].get(hour, 0.0))
                 for f in main]
        used = sum(peaks)
        if any(avg_by_flavor[f.instance_type].get(hour, 0.0) > f.nominal for f in w.flavors):
            borrowing.add(hour)
        if pending.get(hour, 0.0) <= 0:
            continue
        if any(p < f.nominal for p, f in zip(peaks, main)):
            below.add(hour)
        elif used >= w.main_nominal:
            at.add(hour)
            if all(p >= f.nominal + f.borrowing_limit for p, f in zip(peaks, main)):
                cap.add(hour)
    evictions: dict[str, int] = {}
    qid = by_what.get(("evictions", None))
    for s in mine.get(qid, []) if qid else []:
        total = int(round(sum(s.points.values())))
        if total:
            evictions[s.label or "unknown"] = evictions.get(s.label or "unknown", 0) + total
    util = list(points("utilisation").values())
    return TeamUsage(
        team=w.team, is_shared_pool=w.is_shared_pool, strategy=w.strategy, fair_share_weight=w.fair_share_weight,
        borrow_limit_percent=w.borrow_limit_percent, flavors=tuple(flavors), hours=window.hours,
        hours_with_data=len(hours_with_data), pending_hours_below_quota=len(below), pending_hours_at_quota=len(at),
        pending_hours_at_cap=len(cap),
        days_pending_at_quota=len({h.date() for h in at}), days_with_data=len({h.date() for h in hours_with_data}),
        evictions=tuple(sorted(evictions.items())), utilisation=sum(util) / len(util) if util else None,
        borrowing_hours=frozenset(borrowing), pending_at_quota=frozenset(at),
    )


def analyse(monitoring: MonitoringPlan, window: Window, queries: list[Query],
            results: dict[str, list[Series]]) -> tuple[TeamUsage, ...]:
    """Per team (in plan order): usage against quota, borrowing, pending, evictions, utilisation."""
    out = []
    for w in monitoring.teams:
        mine = [q for q in queries if q.team == w.team]
        by_what = {(q.what, q.instance_type): q.id for q in mine}
        out.append(_team(w, window, {q.id: results.get(q.id, []) for q in mine}, by_what))
    return tuple(out)


def cohort_free(usage: tuple[TeamUsage, ...] | list[TeamUsage], instance_type: str, hour: dt.datetime,
                exclude: str) -> float:
    """Capacity of one instance type that ``exclude`` could still borrow in an hour: what the other lenders left
    idle minus what borrowers (``exclude`` included) already took; DontLend teams' idle capacity is nobody else's."""
    idle = taken = 0.0
    for u in usage:
        for f in u.flavors:
            if f.instance_type != instance_type or hour not in f.hourly:
                continue
            used = f.hourly[hour]
            taken += max(used - f.nominal, 0.0)
            if u.strategy != "DontLend" and u.team != exclude:
                idle += max(f.nominal - used, 0.0)
    return max(idle - taken, 0.0)


def contended_hours(usage: tuple[TeamUsage, ...]) -> int:
    """Hours in which fair sharing had something to decide: two teams borrowing, or one borrowing while another
    waited at its quota (both want the same idle capacity)."""
    hours: set[dt.datetime] = set()
    all_hours = set().union(*(u.borrowing_hours | u.pending_at_quota for u in usage)) if usage else set()
    for hour in all_hours:
        wanting = sum(1 for u in usage if hour in u.borrowing_hours or hour in u.pending_at_quota)
        if wanting >= 2:
            hours.add(hour)
    return len(hours)
