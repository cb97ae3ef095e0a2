"""A deterministic model of Kueue v0.19 admission in flat cohorts (kubernetes-sigs/kueue v0.19.2).

The model is laid out as Kueue's packages are; each module names the Kueue files it mirrors:

- :mod:`.cache`, :mod:`.resource_node`, :mod:`.fair_sharing`: the resource tree and its quota arithmetic
  (``pkg/cache/scheduler``, ``pkg/resources``);
- :mod:`.queue`: pending workloads (``pkg/cache/queue``);
- :mod:`.flavorassigner`: flavor assignment (``pkg/scheduler/flavorassigner``);
- :mod:`.preemption`: classic and fair-sharing preemption (``pkg/scheduler/preemption``);
- :mod:`.ordering`: entry ordering (``pkg/scheduler/scheduler.go``, ``fair_sharing_iterator.go``);
- :mod:`.scheduler`: one scheduling cycle (``pkg/scheduler/scheduler.go``);
- :mod:`.clock`: the simulator's time loop;
- :mod:`.nodes`: the simulator's own layer under Kueue, nodes that hold admitted work (a capacity timeline).

This module is the entry point: :func:`simulate` and the result types.
"""

from __future__ import annotations

from typing import Optional

from .clock import Engine
from .model import Scenario
from .resource_node import available as _available  # noqa: F401  (the quota invariants' tests read it here)
from .results import PreemptionRecord, QueueResult, Result, WorkloadResult

__all__ = ["Engine", "PreemptionRecord", "QueueResult", "Result", "WorkloadResult", "simulate"]


def simulate(scenario: Scenario, *, cycles: Optional[int] = None) -> Result:
    """Run a scenario to its end (or for ``cycles`` scheduling cycles in total)."""
    return Engine(scenario, cycles).run()
