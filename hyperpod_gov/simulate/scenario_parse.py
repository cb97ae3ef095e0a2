"""The checks a scenario's parts share (:mod:`.scenario` for queues and workloads, :mod:`.scenario_nodes` for the
capacity timeline): each reads one value, adds what is wrong with it to an :class:`Issues` and returns what can be
used, so every problem of a file is reported at once."""

from __future__ import annotations

from typing import Any, Collection, Mapping, Optional

from ..spec.errors import NO_VALUE, SpecIssue


class Issues:
    """The problems found so far."""

    def __init__(self) -> None:
        self.items: list[SpecIssue] = []

    def add(self, path: str, problem: str, value: Any, fix: str) -> None:
        self.items.append(SpecIssue(path, problem, value, fix))


def unknown_keys(issues: Issues, path: str, data: Mapping, allowed: tuple[str, ...]) -> None:
    """Each key of ``data`` not in ``allowed``."""
    for key in data:
        if key not in allowed:
            issues.add(f"{path}.{key}" if path else str(key), "is not a known key", NO_VALUE,
                       f"use one of {', '.join(allowed)}")


def as_mapping(issues: Issues, path: str, value: Any, fix: str) -> Optional[Mapping]:
    """``value`` as a mapping ({} when absent; None, and an issue, when it is something else)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        issues.add(path, "is not a mapping", value, fix)
        return None
    return value


def as_number(issues: Issues, path: str, value: Any, *, default: Any, minimum: float | None = None,
              integer: bool = False) -> Any:
    """``value`` as a number (a whole one with ``integer``) of at least ``minimum``; ``default`` when absent or not."""
    if value is None:
        return default
    ok = isinstance(value, int) if integer else isinstance(value, (int, float))
    if isinstance(value, bool) or not ok or (minimum is not None and value < minimum):
        kind = "a whole number" if integer else "a number"
        bound = f" of at least {minimum:g}" if minimum is not None else ""
        issues.add(path, f"is not {kind}{bound}", value, f"write {kind}{bound}")
        return default
    return value


def as_name(issues: Issues, path: str, value: Any) -> Optional[str]:
    """``value`` as a non-empty name (None when it is missing or something else)."""
    if not isinstance(value, str) or not value:
        issues.add(path, "is missing or not a name", value if value is not None else NO_VALUE,
                   "give a non-empty name, e.g. 'alpha'")
        return None
    return value


def as_known_name(issues: Issues, path: str, value: Any, known: Collection[str], problem: str, none: str
                  ) -> Optional[str]:
    """``value`` as a name that is one of ``known`` (a workload's queue, a node group's flavor): ``problem`` when
    it is another, and the fix lists ``known``, sorted (``none`` when there are none)."""
    name = as_name(issues, path, value)
    if name is not None and name not in known:
        issues.add(path, problem, name, f"use one of {', '.join(sorted(known)) or none}")
        return None
    return name
