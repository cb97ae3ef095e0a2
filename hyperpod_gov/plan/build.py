"""Build the plan of a spec and check the whole-app invariants on it: the one entry point of every emitter."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Optional

from ..spec.errors import SpecError
from ..spec.models import GovernanceSpec
from . import names
from .invariants import check_plan
from .monitoring import monitoring_plan
from .plan import Plan, derive_plan


def build_plan(spec: GovernanceSpec, *, base_dir: Optional[Path] = None, strict: bool = False) -> Plan:
    """Derive every decision from a validated spec and check the whole-app invariants on it.

    ``base_dir``: the spec file's folder (relative paths). Raises ``SpecError`` with every invariant that
    fails (warnings too with ``strict``); the remaining warnings are in ``plan.warnings``.
    """
    plan = derive_plan(spec, base_dir)
    monitoring = monitoring_plan(plan, spec)
    # The first cluster dashboard page lives in the monitoring stack, each further page in a stack of its own: a page
    # stays in its stack when teams are added (rows shift between pages in place), and no stack nears 1 MB.
    pages = tuple(names.stack(spec.name, names.dashboards_shard(i)) for i in range(1, len(monitoring.cluster_dashboards)))
    plan = replace(plan, monitoring=monitoring, stacks=replace(plan.stacks, dashboards=pages))
    found = check_plan(spec, plan)
    errors = [i for i in found if i.severity == "error" or strict]
    if errors:
        raise SpecError(errors)
    return replace(plan, warnings=tuple(found))
