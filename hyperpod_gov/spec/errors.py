"""One error type for every problem found in a spec, each with path, value and fix."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Literal, Optional

Severity = Literal["error", "warning"]


def show_value(value: Any) -> str:
    """Render a spec value for a message: short, quoted like YAML would show it."""
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return f"a list of {len(value)} entries"
    if isinstance(value, dict):
        keys = ", ".join(sorted(str(k) for k in value)[:6])
        return f"a mapping with keys {keys}" if value else "an empty mapping"
    if value is None:
        return "nothing (null)"
    return repr(value)


@dataclass(frozen=True, order=True)
class SpecIssue:
    """One finding about a spec: where it is, what is wrong, the value, how to fix it.

    ``rule`` is the id of the rule that found it (e.g. ``HPG-C002``, see ``spec.rulebook``), set by the rule
    runner together with ``severity`` (the rule's level); it leads the printed message so that a warning can be
    acknowledged by it. Problems found while reading the file or the models' own fields have no rule.
    """

    path: str
    problem: str
    value: Any
    fix: str
    severity: Severity = "error"
    rule: Optional[str] = None

    def __str__(self) -> str:
        shown = "" if self.value is _NO_VALUE else f" ({show_value(self.value)})"
        head = f"{self.rule} " if self.rule else ""
        return f"{head}{self.path}: {self.problem}{shown}; {self.fix}"


class _NoValue:
    def __repr__(self) -> str:  # pragma: no cover - only for debugging
        return "<no value>"


_NO_VALUE: Any = _NoValue()
NO_VALUE = _NO_VALUE


class SpecError(Exception):
    """The spec is not valid. ``issues`` holds every problem found, not just the first."""

    def __init__(self, issues: Iterable[SpecIssue], source: str | None = None, note: str | None = None):
        self.issues: tuple[SpecIssue, ...] = tuple(issues)
        self.source = source
        self.note = note  # one line after the list, e.g. how to acknowledge warnings that --strict refused
        super().__init__(self.render())

    def render(self, what: str = "spec", default_source: str | None = None) -> str:
        """Every issue, one a line, under ``SOURCE: N problems in the WHAT:`` (``default_source`` where the error
        names no file: the command's argument)."""
        source = self.source or default_source
        head = f"{source}: " if source else ""
        count = len(self.issues)
        lines = [f"{head}{count} problem{'s' if count != 1 else ''} in the {what}:"]
        lines += [f"  - {issue}" for issue in self.issues]
        if self.note:
            lines.append(self.note)
        return "\n".join(lines)
