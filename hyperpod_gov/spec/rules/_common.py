"""Helpers more than one area's rules use."""

from __future__ import annotations

from typing import Callable, Iterator

from ..errors import SpecIssue
from ..models import GovernanceSpec


def _repeats(values: list[str], path: Callable[[int], str], problem: str, fix: str) -> Iterator[SpecIssue]:
    """One issue for every value that already appeared earlier in ``values``."""
    seen: set[str] = set()
    for i, value in enumerate(values):
        if value in seen:
            yield SpecIssue(path(i), problem, value, fix)
        seen.add(value)


def _slurm(spec: GovernanceSpec) -> bool:
    return spec.cluster.orchestrator == "slurm"
