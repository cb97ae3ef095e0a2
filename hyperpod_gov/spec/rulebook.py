"""Rules with ids, levels and explanations, and one crash-safe runner: cdk-nag's NagPack, for the spec.

A rule is a small pure function of its inputs (the spec rules take ``(spec, today)``; the plan's whole-app
invariants take ``(spec, plan)``) that yields ``SpecIssue`` s. ``@rule(id, level, explanation)`` turns the
function into a ``Rule``; a ``RuleBook`` lists rules in id order and runs them all. The runner stamps every
finding with its rule's id and level, so a rule states its level once, and a rule that raises (or yields
something that is not a ``SpecIssue``) becomes one error naming its id instead of a traceback or a silent pass;
the other rules still run.

Rule ids
--------
``HPG-<area><number>``: ``HPG-`` (hyperpod-gov), one capital letter for the area, three digits. An id is public
API: a spec acknowledges a warning by it, so an id is never renumbered or reused for another check; a rule that
is removed leaves its id retired. Areas:

- ``N`` names that must be unique
- ``I`` instance types and GPU partitioning (MIG)
- ``Q`` quotas, sharing and the scheduler
- ``A`` accounts, access entries and workload identities
- ``E`` network exposure: the API endpoint, administrator CIDRs, egress, availability zones
- ``C`` team contracts
- ``D`` what the cluster depends on to deploy and run (e.g. the HyperPod dependencies chart)
- ``K`` elastic capacity: autoscaling, minimum counts, Spot, flexible instance groups, the node image's lifecycle
- ``S`` Slurm-orchestrated clusters (``cluster.orchestrator: slurm``)
- ``F`` fleets: several clusters governed from one spec (``spec.fleet_rules``, ``plan.fleet_rules``)
- ``P`` the plan's whole-app invariants (``plan/invariants.py``), run by the same runner

docs/rules.md lists every rule, generated from the registry (``RuleBook.markdown``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, Iterator, Optional

from .errors import NO_VALUE, Severity, SpecIssue

RULE_ID = re.compile(r"\AHPG-[A-Z][0-9]{3}\Z", re.ASCII)
AREAS: dict[str, str] = {
    "N": "Names",
    "I": "Instance types and GPU partitioning",
    "Q": "Quotas, sharing and the scheduler",
    "A": "Accounts, access and workload identities",
    "E": "Network exposure",
    "C": "Team contracts",
    "D": "Cluster dependencies",
    "K": "Elastic capacity",
    "F": "Fleets of clusters",
    "P": "Whole-app invariants of the plan",
    "R": "Regions and partitions",
    "S": "Slurm-orchestrated clusters",
    "U": "Unified Studio delegation",
}
LEVELS: tuple[Severity, ...] = ("error", "warning")


@dataclass(frozen=True)
class Rule:
    """One check: a stable id, a level, a one-line explanation, and the pure function that finds the issues.

    ``covers`` lists ids of CDK warnings (``Annotations.add_warning_v2``) that report the same finding at synth;
    the rule reports it first, so synth leaves those out rather than reporting it twice.
    """

    id: str
    level: Severity
    explanation: str
    check: Callable[..., Iterable[SpecIssue]]
    covers: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not RULE_ID.match(self.id) or self.id[4] not in AREAS:
            raise ValueError(f"rule id {self.id!r} is not HPG-<area><3 digits> with an area of {sorted(AREAS)}")
        if self.level not in LEVELS:
            raise ValueError(f"rule {self.id}: level {self.level!r} is not one of {LEVELS}")
        if not self.explanation.strip() or "\n" in self.explanation:
            raise ValueError(f"rule {self.id}: the explanation must be one line")

    @property
    def name(self) -> str:
        """The function's name (e.g. ``kueue_flavor_limit``)."""
        return getattr(self.check, "__name__", self.id)

    def __call__(self, *args: Any) -> Iterable[SpecIssue]:
        """The rule's raw findings, exactly as its function yields them (``RuleBook.run`` stamps and guards)."""
        return self.check(*args)

    def run(self, *args: Any) -> list[SpecIssue]:
        """The rule's findings stamped with its id and level, or one defect issue if the rule fails."""
        try:
            found = list(self.check(*args))
            wrong = next((f for f in found if not isinstance(f, SpecIssue)), None)
            if wrong is not None:
                raise TypeError(f"yielded {type(wrong).__name__} {wrong!r}, not a SpecIssue")
        except Exception as exc:  # noqa: BLE001 - reported as a defect of this rule, never swallowed
            return [defect(self.id, self.name, exc)]
        return [replace(f, rule=self.id, severity=self.level) for f in found]


def defect(rule_id: str, name: str, exc: BaseException) -> SpecIssue:
    """The issue that stands for a rule that raised: an error naming the rule, never acknowledged."""
    return SpecIssue(
        f"(rule {rule_id})", f"rule {rule_id} ({name}) threw {type(exc).__name__}: {exc}", NO_VALUE,
        "this is a defect in hyperpod-gov, not in the spec: report it with the spec that triggers it "
        "(the other rules ran; this one checked nothing)",
        severity="error", rule=rule_id,
    )


def rule(rule_id: str, level: Severity, explanation: str, *, covers: tuple[str, ...] = ()
         ) -> Callable[[Callable[..., Iterable[SpecIssue]]], Rule]:
    """Decorator: make a function a ``Rule`` (list it in a ``RuleBook`` to have it run)."""

    def wrap(check: Callable[..., Iterable[SpecIssue]]) -> Rule:
        return Rule(rule_id, level, explanation, check, covers)

    return wrap


@dataclass(frozen=True)
class RuleBook:
    """An ordered set of rules with unique ids, and the runner that applies them all (a cdk-nag NagPack)."""

    name: str
    rules: tuple[Rule, ...]

    def __post_init__(self) -> None:
        ids = [r.id for r in self.rules]
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        if repeated:
            raise ValueError(f"rule book {self.name}: ids used twice: {', '.join(repeated)}")

    def __iter__(self) -> Iterator[Rule]:
        return iter(self.rules)

    def __len__(self) -> int:
        return len(self.rules)

    def __add__(self, other: "RuleBook") -> "RuleBook":
        """Both books as one (e.g. the spec rules and the plan invariants, to check acknowledgements against)."""
        return RuleBook(f"{self.name} + {other.name}", self.rules + other.rules)

    def get(self, rule_id: str) -> Optional[Rule]:
        """The rule with this id, or None."""
        return next((r for r in self.rules if r.id == rule_id), None)

    def run(self, *args: Any) -> list[SpecIssue]:
        """Every finding of every rule, in rule order; a rule that raises is one defect issue."""
        return [issue for r in self.rules for issue in r.run(*args)]

    def covered_warnings(self) -> frozenset[str]:
        """Ids of CDK warnings that a rule of this book already reports."""
        return frozenset(c for r in self.rules for c in r.covers)

    def markdown(self) -> str:
        """The table of every rule (id, level, explanation), grouped by area: the body of docs/rules.md."""
        lines: list[str] = []
        for area, title in AREAS.items():
            rules = [r for r in self.rules if r.id[4] == area]
            if not rules:
                continue
            lines += [f"### {title} (`HPG-{area}`)", "", "| Id | Level | Rule | What it checks |", "|---|---|---|---|"]
            lines += [f"| `{r.id}` | {r.level} | `{r.name}` | {r.explanation} |" for r in rules]
            lines.append("")
        return "\n".join(lines)
