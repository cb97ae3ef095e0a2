"""The spec-level figures in words: the team table and ``--compare``'s sentences (``spec_level.figures_json`` is the
contract's JSON). A wait that counts never-admitted work (``submitted - admitted``) is a lower bound, and says so."""

from __future__ import annotations

from typing import Any, Sequence

from .spec_level import TeamFigures, figures_json

_COLUMNS = (("submitted", "submitted"), ("admitted", "admitted"), ("waiting", "waiting"),
            ("waitP50Minutes", "wait p50 min"), ("waitP95Minutes", "wait p95 min"),
            ("acceleratorHours", "acc-hours"), ("borrowedAcceleratorHours", "borrowed acc-h"),
            ("preempted", "preempted"), ("preemptedOthers", "preempted others"))
# With a capacity timeline: two more columns.
_NODE_COLUMNS = (("evictedByCapacityLoss", "evicted (nodes lost)"), ("waitAfterLossMinutes", "rewait min"),
                 ("waitingForNodes", "waiting for nodes"))


_SENTENCE = {
    "submitted": ("submitted", ""), "admitted": ("admitted", ""), "waiting": ("still waiting at the end", ""),
    "waitP50Minutes": ("p50 wait", " minutes"), "waitP95Minutes": ("p95 wait", " minutes"),
    "acceleratorHours": ("accelerator-hours used", ""),
    "borrowedAcceleratorHours": ("borrowed accelerator-hours", ""),
    "preempted": ("times preempted", ""), "preemptedOthers": ("times it preempted others", ""),
    "evictedByCapacityLoss": ("evictions by lost nodes", ""),
    "waitAfterLossMinutes": ("wait after those evictions", " minutes"),
    "waitingForNodes": ("waiting for nodes at the end", ""),
    # a fleet run's (fleet_report.team_json)
    "waitingOnManager": ("waiting on the manager at the end", ""),
    "inFlightNotAdmitted": ("in flight and admitted by no worker at the end", ""),
    "inFlightBoundHits": ("workloads the manager's quota held back", ""),
    "evictedOnWorkers": ("evictions on workers", ""), "preemptedByManager": ("times preempted by the manager", ""),
}


def _columns(*figures: dict[str, TeamFigures]) -> tuple[tuple[str, str], ...]:
    with_nodes = any(f.evicted_by_capacity is not None for fs in figures for f in fs.values())
    return _COLUMNS + _NODE_COLUMNS if with_nodes else _COLUMNS


def figures_table(figures: dict[str, TeamFigures]) -> list[str]:
    columns = _columns(figures)
    rows = [("team",) + tuple(h for _, h in columns)]
    for team in sorted(figures):
        j = figures_json(figures[team])
        rows.append((team,) + tuple(table_value(j, k) for k, _ in columns))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.rjust(widths[i]) if i else c.ljust(widths[i]) for i, c in enumerate(r)).rstrip() for r in rows]


def _show(x: Any) -> str:
    return "-" if x is None else str(x)


def compare_lines(old: dict[str, TeamFigures], new: dict[str, TeamFigures]) -> list[str]:
    """One plain sentence per team and figure that changed, old -> new."""
    keys = [k for k, _label in _columns(old, new)]
    return compare_docs({t: figures_json(f) for t, f in old.items()}, {t: figures_json(f) for t, f in new.items()},
                        keys)


def compare_docs(old: dict[str, dict[str, Any]], new: dict[str, dict[str, Any]], keys: Sequence[str]) -> list[str]:
    """One plain sentence per team and figure (``keys`` of the JSON objects, each with its words in ``_SENTENCE``)
    that changed, old -> new; a wait that counts never-admitted work (``submitted`` - ``admitted``) is "at least".
    A fleet run's team objects (``fleet_report.team_json``) read the same way."""
    lines = []
    for team in sorted(set(old) | set(new)):
        if team not in old:
            lines.append(f"team {team} is new in the second spec")
            continue
        if team not in new:
            lines.append(f"team {team} is not in the second spec")
            continue
        a, b = old[team], new[team]
        changes = [f"{_SENTENCE[k][0]} goes from {_shown(a, k)} to {_shown(b, k)}{_SENTENCE[k][1]}"
                   for k in keys if a.get(k) != b.get(k) or censored(a) != censored(b) and k in _WAITS]
        cut = [f"{n} never admitted by the end of the trace in the {which} spec"
               for which, n in (("first", censored(a)), ("second", censored(b))) if n]
        if changes and cut:
            changes.append("waits there count to the end of the trace only: " + ", ".join(cut))
        lines.append(f"{team}: " + ("; ".join(changes) if changes else "no change"))
    return lines


# The wait figures: a workload never admitted counts the time to the end of the trace, so they are lower bounds.
_WAITS = ("waitP50Minutes", "waitP95Minutes")


def censored(figures: dict[str, Any]) -> int:
    """Workloads never admitted by the end of the trace (submitted - admitted: the contract's own figures)."""
    return int(figures["submitted"]) - int(figures["admitted"])


def table_value(figures: dict[str, Any], key: str) -> str:
    """A figure as a table cell: "-" for none, ">=N" for a wait that counts never-admitted work."""
    value = figures.get(key)
    if value is None:
        return "-"
    return (">=" if key in _WAITS and censored(figures) else "") + str(value)


def _shown(figures: dict[str, Any], key: str) -> str:
    """A figure as the sentence shows it: a wait that counts never-admitted work is "at least" that."""
    value = _show(figures.get(key))
    return f"at least {value}" if key in _WAITS and censored(figures) and value != "-" else value
