"""The machinery of the governance views (``views.py``): a ``Row`` per decision, a ``View`` per kind of governed
thing, the team part the team view reads, and the helpers that say why a change widens privilege."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional

from .data import TeamStoragePlan
from .identity import IdentityPlan
from .model import Plan
from .quotas import TeamPlan
from .tools_policy import ToolsPolicyPlan


@dataclass(frozen=True)
class Row:
    """One governed decision. ``get`` gives a value in words, or a tuple of member strings (``members``)."""

    label: str
    spec: str  # the spec path it comes from ("teams[].quota"; alternatives separated by "|")
    get: Callable[[Any], Any]
    plan_fields: tuple[str, ...] = ()  # the plan part's attributes it reads (the completeness test)
    members: bool = False  # a set: diff lists what was added and removed
    # Why a change widens privilege (None: it does not). Members rows: called with each added member.
    privilege: Optional[Callable[[Any, Any], Optional[str]]] = None
    column: Optional[str] = None  # explain's column header, for the team table
    lines: Optional[Callable[[str, Any, Any], list[str]]] = None  # own wording of a change (title, old, new)


@dataclass(frozen=True)
class View:
    """A kind of governed thing: how to find each one in a plan, how to name it, and its rows."""

    name: str
    spec: str  # where one comes from ("teams[]")
    objects: Callable[[Plan], Mapping[str, Any]]  # key -> part, in output order
    title: Callable[[str], str]
    rows: tuple[Row, ...]
    added: Optional[Callable[[str, Any], str]] = None  # the line for a new one (None: "<title> added")
    removed: Optional[Callable[[str, Any], str]] = None


@dataclass(frozen=True)
class TeamPart:
    """A team with its workload identities (which the plan holds apart, per service account)."""

    team: TeamPlan
    identities: tuple[IdentityPlan, ...] = ()
    storage: Optional[TeamStoragePlan] = None  # per-team data: the team bucket, if any
    tools_policy: Optional[ToolsPolicyPlan] = None  # teams[].access.toolsPolicy (None: off, or nobody to give it)


def _widens(why: str) -> Callable[[Any, Any], Optional[str]]:
    return lambda old, new: why


def _when(test: Callable[[Any, Any], bool], why: str) -> Callable[[Any, Any], Optional[str]]:
    return lambda old, new: why if test(old, new) else None


def _on_off(value: bool) -> str:
    return "on" if value else "off"


def _allowed(value: bool) -> str:
    return "allowed" if value else "not allowed"
