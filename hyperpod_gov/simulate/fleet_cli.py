"""`hyperpod-gov simulate FLEET.yaml --trace T.csv`: the trace dispatched over the fleet's workers as MultiKueue
does (``simulate_fleet``), the manager's fleet queues as the fleet's plan emits them. No CDK import."""

from __future__ import annotations

import argparse
import datetime as dt
import json
from typing import Any, Optional, TextIO

from ..plan.fleet import FleetPlan, build_fleet
from ..plan.invariants import INVARIANTS
from ..plan.multikueue import multikueue_plans
from ..spec.errors import SpecError
from ..spec.fleet import load_fleet
from ..spec.rules import RULES
from .fleet import simulate_fleet
from .fleet_report import fleet_json, fleet_lines
from .trace import load_trace

EXIT_OK, EXIT_INVALID = 0, 1


def fleet_trace_checks(fleet: FleetPlan, teams: list[str]) -> dict[str, list[str]]:
    """Names a fleet trace row may use: the dispatched teams, and the priority classes and instance types of any
    worker (a row no worker can run is left out with a note by the simulator)."""
    from .spec_level import plan_priorities

    assert fleet.fleet.dispatch is not None
    workers = [fleet.plans[w] for w in fleet.fleet.dispatch.workers]
    return {
        "teams": teams,
        "priority_classes": sorted({k for p in workers for k in plan_priorities(p) if k}),
        "instance_types": sorted({f.instance_type for p in workers for f in p.flavors}),
    }


def _problems(exc: SpecError, what: str, default_source: str, err: TextIO) -> int:
    source = exc.source or default_source
    n = len(exc.issues)
    print(f"{source}: {n} problem{'s' if n != 1 else ''} in the {what}:", file=err)
    for issue in exc.issues:
        print(f"  - {issue}", file=err)
    return EXIT_INVALID


def run_fleet(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Simulate a fleet spec with ``--trace``: 0 when it ran, 1 for bad input or a fleet without dispatch."""
    for flag, given in (("--compare", args.compare), ("--capacity", getattr(args, "capacity", None)),
                        ("--format html", args.format == "html")):
        if given:
            print(f"simulate: {flag} is not available for a fleet spec ({args.spec}); give FLEET --trace TRACE.csv "
                  "[--format json|text]", file=err)
            return EXIT_INVALID
    try:
        fleet = build_fleet(load_fleet(args.spec, today=dt.date.today(), known=RULES + INVARIANTS))
    except SpecError as exc:
        return _problems(exc, "spec", args.spec, err)
    dispatch = fleet.fleet.dispatch
    if dispatch is None:
        print(f"simulate: {args.spec}: the fleet has no dispatch (fleet.dispatch), so no trace is sent across its "
              "clusters; simulate a trace on one cluster with that cluster's own spec, or add fleet: {dispatch: "
              "{manager, workers}}", file=err)
        return EXIT_INVALID
    queues = multikueue_plans(fleet.plans, dispatch.manager, dispatch.workers)[dispatch.manager].queues
    teams = [q.team for q in queues]
    try:
        rows = load_trace(args.trace, **fleet_trace_checks(fleet, teams))
    except SpecError as exc:
        return _problems(exc, "trace", args.trace, err)
    workers = {w: fleet.plans[w] for w in dispatch.workers}
    result = simulate_fleet(workers, rows, teams=teams, fleet_queues=queues)
    if args.format == "json":
        doc: dict[str, Any] = {"spec": args.spec, "trace": args.trace, "manager": dispatch.manager}
        print(json.dumps({**doc, **fleet_json(result)}, indent=2), file=out)
    else:
        print(f"{args.spec} with {args.trace} ({len(rows)} workloads; manager {dispatch.manager}):", file=out)
        for line in fleet_lines(result):
            print(line, file=out)
    return EXIT_OK


def is_fleet_path(path: Optional[str]) -> bool:
    """Whether SPEC is a fleet spec (it lists ``clusters``)."""
    from ..spec.fleet import is_fleet_spec

    return bool(path) and is_fleet_spec(path)
