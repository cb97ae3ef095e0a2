"""Team egress as the NetworkPolicies carry it: every allow, with what it must never reach carved out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from ..spec._base import LINK_LOCAL, contains_link_local
from ..spec.models import EgressRule


@dataclass(frozen=True)
class EgressPlan:
    cidr: str
    excepts: tuple[str, ...]  # carved out of ``cidr`` (NetworkPolicy ipBlock.except)
    protocol: str
    ports: tuple[int, ...]  # sorted


def egress_plan(rules: Iterable[EgressRule]) -> tuple[EgressPlan, ...]:
    """The team's egress allows, sorted, each with link-local space carved out where it would include it."""
    out = []
    for rule in rules:
        # The instance metadata service and the node's agents: never reached through a team's own allow, even
        # inside 0.0.0.0/0 (the Pod Identity agent has its own, narrow allow).
        excepts = (str(LINK_LOCAL),) if contains_link_local(rule.cidr) else ()
        out.append(EgressPlan(rule.cidr, excepts, rule.protocol, tuple(sorted(rule.ports))))
    return tuple(sorted(out, key=lambda e: (e.cidr, e.protocol, e.ports)))
