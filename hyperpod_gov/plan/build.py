"""Build the plan of a spec and check the whole-app invariants on it: the one entry point of every emitter."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from ..spec.errors import SpecError
from ..spec.loader import check_chart_directory
from ..spec.models import GovernanceSpec
from .invariants import check_plan
from .plan import Plan, derive_plan


def build_plan(spec: GovernanceSpec, *, base_dir: Optional[Path] = None, strict: bool = False) -> Plan:
    """Derive every decision from a validated spec and check the whole-app invariants on it.

    ``base_dir``: the spec file's folder (relative paths). Raises ``SpecError`` with every invariant that
    fails (warnings too with ``strict``); ``invariants.plan_warnings`` gives the remaining warnings.
    """
    # A spec built in Python has not been through load_spec: its chart folder is checked here, before synth.
    check_chart_directory(spec, base_dir or Path.cwd())
    plan = derive_plan(spec, base_dir)
    found = check_plan(plan)
    errors = [i for i in found if i.severity == "error" or strict]
    if errors:
        raise SpecError(errors)
    return plan
