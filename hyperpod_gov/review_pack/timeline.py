"""Accelerators held per team over a simulated trace, read from the simulator's result.

The engine reports each admission, finish and preemption in ``Result.timeline`` (one line each, in order);
each workload's team and accelerators are labels on ``Result.workloads``. Replaying those lines gives the usage
step function per team; its integral equals ``TeamFigures.accelerator_hours`` (the tests hold it to that).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Iterator

from ..simulate import Result

_ADMITTED = re.compile(r"^t=(?P<t>[-0-9.e+]+)(?: cycle \d+)?: (?:admitted (?P<w>\S+)|(?P<w2>\S+) already admitted) in ")
_FINISHED = re.compile(r"^t=(?P<t>[-0-9.e+]+): (?P<w>\S+) finished$")
_PREEMPTS = re.compile(r"^t=(?P<t>[-0-9.e+]+) cycle \d+: \S+ preempts (?P<w>\S+) \(")


@dataclass(frozen=True)
class Usage:
    """One team's accelerators in use: (minute, accelerators from then on), starting at minute 0."""

    team: str
    steps: tuple[tuple[float, int], ...]
    end_minute: float

    @property
    def peak(self) -> int:
        return max((n for _t, n in self.steps), default=0)

    @property
    def accelerator_hours(self) -> float:
        total = 0.0
        for (t, n), (t_next, _n) in zip(self.steps, (*self.steps[1:], (self.end_minute, 0))):
            total += n * (t_next - t)
        return round(total / 60.0, 2)


def usage_by_team(result: Result, teams: list[str]) -> dict[str, Usage]:
    """Per team (every name in ``teams``), accelerators held from minute 0 to the end of the run."""
    def changes() -> Iterator[tuple[str, str, int]]:
        for line in result.timeline:
            if m := _ADMITTED.match(line):
                yield m.group("t"), m.group("w") or m.group("w2"), 1
            elif m := (_FINISHED.match(line) or _PREEMPTS.match(line)):
                yield m.group("t"), m.group("w"), -1
    return _replay(result, teams, changes())


def _replay(result: Result, teams: list[str], changes: Iterable[tuple[str, str, int]]) -> dict[str, Usage]:
    """The usage step function per team from (time in seconds as written, workload, +1 starts / -1 stops)."""
    labels = {w.name: dict(w.labels) for w in result.workloads}
    level = {t: 0 for t in teams}
    steps_of: dict[str, list[tuple[float, int]]] = {t: [(0.0, 0)] for t in teams}
    holding: set[str] = set()
    for t, name, delta in changes:
        if (delta > 0) == (name in holding):  # a finish of a workload that never ran, or a double admission
            continue
        holding.symmetric_difference_update({name})
        team = labels[name].get("team", "")
        if team not in level:
            continue
        level[team] += delta * int(labels[name].get("accelerators", "0"))
        minute = float(t) / 60.0
        steps = steps_of[team]
        if steps[-1][0] == minute:
            steps[-1] = (minute, level[team])
        else:
            steps.append((minute, level[team]))
    end = result.end / 60.0
    return {t: Usage(t, tuple(_merge(steps_of[t])), end) for t in teams}


def usage_from_runs(runs: Iterable[tuple[str, float, float, int]], teams: list[str],
                    end_minute: float) -> dict[str, Usage]:
    """Per team, accelerators held from minute 0 to ``end_minute``, from runs (team, start in seconds, seconds run,
    accelerators): a fleet run's placements on its workers (``simulate.fleet.FleetWorkload.placements``)."""
    changes: dict[str, dict[float, int]] = {t: {} for t in teams}
    for team, start, secs, accelerators in runs:
        if team in changes:
            for minute, delta in ((start / 60.0, accelerators), ((start + secs) / 60.0, -accelerators)):
                changes[team][minute] = changes[team].get(minute, 0) + delta
    out = {}
    for team in teams:
        level, steps = 0, [(0.0, 0)]
        for minute, delta in sorted(changes[team].items()):
            level += delta
            steps = steps[:-1] if steps[-1][0] == minute else steps
            steps.append((minute, level))
        out[team] = Usage(team, tuple(_merge(steps)), end_minute)
    return out


def _merge(steps: list[tuple[float, int]]) -> list[tuple[float, int]]:
    out: list[tuple[float, int]] = []
    for t, n in steps:
        if out and out[-1][1] == n:
            continue
        out.append((t, n))
    return out


_STARTED = re.compile(r"^t=(?P<t>[-0-9.e+]+): (?P<w>\S+) started on the nodes of \S+$")
_EVICTED = re.compile(r"^t=(?P<t>[-0-9.e+]+): (?P<w>\S+) evicted from \S+: nodes of .+ lost under it$")
_ADMITTED_ON = re.compile(r"^t=(?P<t>[-0-9.e+]+)(?: cycle \d+)?: admitted (?P<w>\S+) in \S+ on (?P<f>\S+)")


def usage_on_nodes(result: Result, teams: list[str], bounded: set[str]) -> dict[str, Usage]:
    """With a capacity timeline: per team, accelerators *running on nodes* (not quota held) from minute 0 to the
    end of the run. A workload runs from its start on nodes until it finishes, is preempted or is evicted because
    nodes were lost; on a flavor no node group bounds (``bounded``: the flavors node groups provide) it runs from
    its admission, as without nodes. The integral equals ``TeamFigures.accelerator_hours`` of such a run."""
    def changes() -> Iterator[tuple[str, str, int]]:
        for line in result.timeline:
            if m := _STARTED.match(line):
                yield m.group("t"), m.group("w"), 1
            elif (m := _ADMITTED_ON.match(line)) and m.group("f") not in bounded:
                yield m.group("t"), m.group("w"), 1
            elif m := (_FINISHED.match(line) or _PREEMPTS.match(line) or _EVICTED.match(line)):
                yield m.group("t"), m.group("w"), -1
    return _replay(result, teams, changes())
