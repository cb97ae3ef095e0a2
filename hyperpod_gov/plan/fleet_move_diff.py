"""A fleet change's capacity moves against its instance counts (issue 60): ``diff OLD-FLEET NEW-FLEET`` shows a
``MoveClusterNodes`` move as one move, not as two count changes under two clusters.

The spec shows the counts after the move (``spec.fleet_moves``), so a move of N nodes from A/g1 to B/g2 explains a
change of exactly -N on A/g1 and +N on B/g2 (several moves through one group: the sum of theirs). A move whose groups'
counts changed by exactly that **matches**: its two count changes are the move's, and the members' diffs leave them
out (``explained``). A move that does not explain its counts (-2 and +3, no change at all, a group the old spec did
not have) is a review finding, said plainly; the count changes then stay the members' changes, as does any count
change no move explains. A move the old spec lists too, with neither count changed, is carried over: the counts
showed it when it was added, and the entry waits to be removed once the move has run and been deployed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional

from ..spec.fleet import FleetSpec
from ..spec.fleet_moves import Move, MoveEnd
from .fleet_moves import OPERATION, end_json, fleet_moves, instance_type_of
from .model import Plan

Counts = Optional[tuple[int, int]]  # an instance group's count in the old and the new spec; None: not in both


def _count(plans: Mapping[str, Plan], end: MoveEnd) -> Optional[int]:
    plan = plans.get(end.cluster)
    group = None if plan is None else next((g for g in plan.instance_groups if g.name == end.instance_group), None)
    return None if group is None else group.count


def _end(end: MoveEnd) -> str:
    return f"{end.cluster}/{end.instance_group}"


def _signed(n: int) -> str:
    return f"+{n}" if n > 0 else str(n)


@dataclass(frozen=True)
class MoveInDiff:
    """A move of the new spec and the counts of its two groups, old -> new (``source``, ``target``)."""

    move: Move
    instance_type: str  # the source group's type (or a flexible group's types, comma-separated)
    source: Counts
    target: Counts
    expected: tuple[int, int]  # the count changes the new spec's moves make on the two groups (-N, +N alone)
    carried: bool  # the old spec lists the same move and neither count changed

    @property
    def matches(self) -> bool:
        """Whether the counts show the move: each group changed by what the moves through it make it change (a
        carried-over move: by nothing, its counts as when it was added)."""
        if self.carried:
            return True
        return (self.source is not None and self.target is not None
                and (self.source[1] - self.source[0], self.target[1] - self.target[0]) == self.expected)

    @property
    def what(self) -> str:
        m = self.move
        return (f"{m.count} node{'' if m.count == 1 else 's'} of {self.instance_type} from {_end(m.from_)} to "
                f"{_end(m.to)}")

    @staticmethod
    def _counts(end: MoveEnd, counts: Counts) -> str:
        if counts is None:
            return f"{_end(end)} is not in the old spec (a new cluster or group: no nodes to move from or to)"
        old, new = counts
        return f"{_end(end)} {old} -> {new} ({_signed(new - old) if new != old else 'unchanged'})"

    @property
    def note(self) -> str:
        """Why the move does or does not explain the counts, in words."""
        m = self.move
        if self.carried:
            return (f"listed in the old spec too, the counts as they were ({self.source[1]} and {self.target[1]}): "
                    "once the move has run and this spec is deployed, remove the entry")
        if self.matches:
            return (f"{OPERATION}; run before deploying; instances {self.source[0]} -> {self.source[1]} and "
                    f"{self.target[0]} -> {self.target[1]}")
        return (f"does not explain the counts (review): {self._counts(m.from_, self.source)} and "
                f"{self._counts(m.to, self.target)}, where the spec's moves change them by "
                f"{_signed(self.expected[0])} and {_signed(self.expected[1])} (its counts are after the move); the "
                "count changes stay listed under their clusters")

    @property
    def words(self) -> str:
        """The line ``diff`` prints."""
        return f"move: {self.what} ({self.note})" if self.matches else f"move: {self.what}: {self.note}"

    @property
    def changed(self) -> bool:
        """Whether the move is part of this change (``--fail``): any move but one carried over."""
        return not self.carried

    def to_json(self) -> dict[str, Any]:
        """The move as ``hyperpod_gov/schemas/fleet-diff.json`` describes it."""
        return {"from": end_json(self.move.from_), "to": end_json(self.move.to), "count": self.move.count,
                "instanceType": self.instance_type, "matches": self.matches, "note": self.note}


def moves_in_diff(old: FleetSpec, old_plans: Mapping[str, Plan], new: FleetSpec,
                  new_plans: Mapping[str, Plan]) -> tuple[MoveInDiff, ...]:
    """Each move of the new spec against the counts of its groups in the old and the new spec, in its order."""
    moves = fleet_moves(new)
    before = fleet_moves(old)
    expected: dict[tuple[str, str], int] = {}
    for m in moves:
        for end, sign in ((m.from_, -1), (m.to, 1)):
            key = (end.cluster, end.instance_group)
            expected[key] = expected.get(key, 0) + sign * m.count
    out = []
    for m in moves:
        counts: list[Counts] = []
        for end in (m.from_, m.to):
            was, now = _count(old_plans, end), _count(new_plans, end)
            counts.append(None if was is None or now is None else (was, now))
        source, target = counts
        unchanged = all(c is not None and c[0] == c[1] for c in counts)
        out.append(MoveInDiff(m, instance_type_of(new, m), source, target,
                              (expected[(m.from_.cluster, m.from_.instance_group)],
                               expected[(m.to.cluster, m.to.instance_group)]),
                              carried=unchanged and m in before))
    return tuple(out)


def explained_counts(moves: tuple[MoveInDiff, ...]) -> dict[str, dict[str, tuple[int, int]]]:
    """Per cluster, the instance groups whose count change the moves explain (old, new): a group every move through
    which matches, and whose count changed."""
    ends: dict[tuple[str, str], list[MoveInDiff]] = {}
    for d in moves:
        for end in (d.move.from_, d.move.to):
            ends.setdefault((end.cluster, end.instance_group), []).append(d)
    out: dict[str, dict[str, tuple[int, int]]] = {}
    for (cluster, group), through in ends.items():
        d = through[0]
        counts = d.source if (cluster, group) == (d.move.from_.cluster, d.move.from_.instance_group) else d.target
        if all(x.matches for x in through) and counts is not None and counts[0] != counts[1]:
            out.setdefault(cluster, {})[group] = counts
    return out
