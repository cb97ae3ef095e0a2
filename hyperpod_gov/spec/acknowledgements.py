"""Acknowledged warnings: the spec accepts a rule's finding by id, with a written reason (as cdk-nag suppressions do).

``acknowledgements: [{id: HPG-C001, reason: "...", path: "teams[2]"}]`` at the top of a spec hides the warnings
of rule ``HPG-C001`` (only those at or under ``teams[2]`` when ``path`` is given) from the printed warnings and
from ``--strict``. Errors cannot be acknowledged. ``acknowledge`` is generic: it takes any list of issues with
rule ids (spec rules, plan invariants) and the spec's acknowledgements.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

from pydantic import Field, field_validator

from ._base import SpecModel, spec_error
from .errors import SpecIssue
from .rulebook import RULE_ID, RuleBook

MIN_REASON = 10  # characters: "ok", "wip" or "n/a" do not tell a reviewer why the finding is accepted
STRICT_NOTE = ("--strict: warnings are errors; to accept one, acknowledge it in the spec by its id with a reason "
               "(acknowledgements: [{id: HPG-..., reason: ..., path: ...}], see docs/rules.md)")


class Acknowledgement(SpecModel):
    """One accepted warning: the rule's id, why it is accepted, and optionally the one finding it covers."""

    id: str = Field(description="Id of the warning rule acknowledged, e.g. HPG-C001 (docs/rules.md lists them).")
    reason: str = Field(
        description=f"Why the finding is accepted, for whoever reviews the spec (at least {MIN_REASON} characters).",
    )
    path: Optional[str] = Field(
        default=None,
        description="Only the findings at this spec path or under it, e.g. teams[2] covers "
        "teams[2].contract.reviewBy (default: every finding of the rule).",
    )

    @field_validator("id")
    @classmethod
    def _id(cls, v: str) -> str:
        if not RULE_ID.match(v):
            raise spec_error("is not a rule id", "write the id as printed with the warning, e.g. HPG-C001")
        return v

    @field_validator("reason")
    @classmethod
    def _reason(cls, v: str) -> str:
        if len(v.strip()) < MIN_REASON:
            raise spec_error(
                f"is shorter than {MIN_REASON} characters: it does not say why the finding is accepted",
                "write why the finding is acceptable here and until when, e.g. \"team retires on 2027-01-31; "
                "no contract will be written\"",
            )
        return v

    def covers(self, issue: SpecIssue) -> bool:
        """True if this acknowledgement accepts ``issue`` (same rule, and at or under ``path`` if given)."""
        if issue.rule != self.id or issue.severity != "warning":
            return False
        if self.path is None:
            return True
        p = self.path
        return issue.path == p or issue.path.startswith((p + ".", p + "["))


@dataclass(frozen=True)
class Review:
    """Findings split by what the spec's acknowledgements do with them."""

    errors: tuple[SpecIssue, ...]
    warnings: tuple[SpecIssue, ...]  # not acknowledged: printed, and errors with --strict
    acknowledged: tuple[SpecIssue, ...]
    unused: tuple[int, ...]  # indices of acknowledgements that accepted nothing

    def failing(self, *, strict: bool) -> tuple[SpecIssue, ...]:
        """What stops the command: errors, and with ``strict`` every unacknowledged warning."""
        return self.errors + (self.warnings if strict else ())


def acknowledge(issues: Iterable[SpecIssue], acknowledgements: Sequence[Acknowledgement]) -> Review:
    """Split ``issues`` into errors, unacknowledged warnings and acknowledged warnings."""
    errors: list[SpecIssue] = []
    warnings: list[SpecIssue] = []
    accepted: list[SpecIssue] = []
    used: set[int] = set()
    for issue in issues:
        if issue.severity != "warning":
            errors.append(issue)
            continue
        by = [i for i, a in enumerate(acknowledgements) if a.covers(issue)]
        used.update(by)
        (accepted if by else warnings).append(issue)
    unused = tuple(i for i in range(len(acknowledgements)) if i not in used)
    return Review(tuple(errors), tuple(warnings), tuple(accepted), unused)


def check_acknowledgements(acknowledgements: Sequence[Acknowledgement], known: RuleBook) -> list[SpecIssue]:
    """Every acknowledgement names a warning rule of ``known``: an unknown id, or an error, is itself an error."""
    out = []
    for i, ack in enumerate(acknowledgements):
        found = known.get(ack.id)
        path = f"acknowledgements[{i}].id"
        if found is None:
            warning_ids = ", ".join(r.id for r in known if r.level == "warning")
            out.append(SpecIssue(path, "is not the id of a rule hyperpod-gov has", ack.id,
                                 f"use the id printed with the warning (warning rules: {warning_ids}); see "
                                 "docs/rules.md"))
        elif found.level != "warning":
            out.append(SpecIssue(path, f"is an error rule ({found.name}: {found.explanation}); only warnings can be "
                                 "acknowledged", ack.id,
                                 "fix what the error reports and remove this acknowledgement"))
    return out
