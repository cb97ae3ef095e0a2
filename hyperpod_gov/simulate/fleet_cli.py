"""`hyperpod-gov simulate FLEET.yaml --trace T.csv [--compare OTHER_FLEET.yaml] [--format json|text|html]`: the
trace dispatched over the fleet's workers as MultiKueue does (``simulate_fleet``), the manager's fleet queues as the
fleet's plan emits them. No CDK import."""

from __future__ import annotations

import argparse
import datetime as dt
import json
from typing import Any, Callable, Optional, Sequence, TextIO

from ..plan.fleet import FleetPlan, build_fleet
from ..plan.invariants import INVARIANTS
from ..plan.multikueue import FleetQueue, multikueue_plans
from ..spec.errors import SpecError
from ..spec.fleet import load_fleet
from ..spec.rules import RULES
from .fleet import FleetResult, simulate_fleet
from .fleet_report import fleet_compare_lines, fleet_json, fleet_lines
from .trace import TraceRow, load_trace

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
    print(exc.render(what, default_source), file=err)
    return EXIT_INVALID


def fleet_parts(fleet: FleetPlan) -> tuple[dict[str, Any], list[FleetQueue]]:
    """The workers' plans (in ``MultiKueueConfig`` order) and the manager's fleet queues, as the fleet's plan emits
    them. The fleet must have a dispatch."""
    dispatch = fleet.fleet.dispatch
    if dispatch is None:
        raise ValueError(f"fleet {fleet.name} has no dispatch: no trace is sent across its clusters")
    queues = multikueue_plans(fleet.plans, dispatch.manager, dispatch.workers)[dispatch.manager].queues
    return {w: fleet.plans[w] for w in dispatch.workers}, list(queues)


def fleet_simulation(fleet: FleetPlan, rows: Sequence[TraceRow]) -> FleetResult:
    """The trace dispatched over the fleet's workers (``simulate_fleet``): the one run `simulate FLEET` and
    `review-pack FLEET --trace` both show."""
    workers, queues = fleet_parts(fleet)
    return simulate_fleet(workers, rows, teams=[q.team for q in queues], fleet_queues=queues)


NO_DISPATCH = ("the fleet has no dispatch (fleet.dispatch), so no trace is sent across its clusters; simulate a trace "
               "on one cluster with that cluster's own spec, or add fleet: {dispatch: {manager, workers}}")


def load_fleet_plan(path: str) -> FleetPlan:
    """A fleet spec's plan (``SpecError`` with every problem)."""
    return build_fleet(load_fleet(path, today=dt.date.today(), known=RULES + INVARIANTS))


def run_fleet(args: argparse.Namespace, out: TextIO, err: TextIO, html: Optional[Callable[..., str]] = None) -> int:
    """Simulate a fleet spec with ``--trace`` (and ``--compare OTHER_FLEET``: FLEET is the old fleet, OTHER the
    new, as for one cluster): 0 when it ran, 1 for bad input or a fleet without dispatch."""
    if getattr(args, "capacity", None):
        print(f"simulate: --capacity is not available for a fleet spec ({args.spec}): the fleet simulation does not "
              "model node groups (docs/simulator.md, Fleet); give FLEET --trace TRACE.csv [--compare OTHER_FLEET] "
              "[--format json|text|html]", file=err)
        return EXIT_INVALID
    fleets = []
    for path in (args.spec, args.compare):
        if not path:
            continue
        if path == args.compare and not is_fleet_path(path):
            print(f"simulate: --compare {path} is not a fleet spec (it lists no clusters); compare a fleet with a "
                  "fleet", file=err)
            return EXIT_INVALID
        try:
            fleets.append(load_fleet_plan(path))
        except SpecError as exc:
            return _problems(exc, "spec", path, err)
        if fleets[-1].fleet.dispatch is None:
            print(f"simulate: {path}: {NO_DISPATCH}", file=err)
            return EXIT_INVALID
    old, new = (fleets[0], fleets[1]) if len(fleets) == 2 else (None, fleets[0])
    _workers, queues = fleet_parts(new)
    try:
        rows = load_trace(args.trace, **fleet_trace_checks(new, [q.team for q in queues]))
    except SpecError as exc:
        return _problems(exc, "trace", args.trace, err)
    if args.format == "html":
        if html is None:
            raise ValueError("--format html needs the fleet page renderer (hyperpod_gov.cli passes it)")
        out.write(html(new, rows, old, spec=args.compare or args.spec, base_name=args.spec if old else "",
                       trace=args.trace))
        return EXIT_OK
    result = fleet_simulation(new, rows)
    dispatch = new.fleet.dispatch
    assert dispatch is not None
    if old is None:
        if args.format == "json":
            doc: dict[str, Any] = {"spec": args.spec, "trace": args.trace, "manager": dispatch.manager}
            print(json.dumps({**doc, **fleet_json(result)}, indent=2), file=out)
        else:
            print(f"{args.spec} with {args.trace} ({len(rows)} workloads; manager {dispatch.manager}):", file=out)
            for line in fleet_lines(result):
                print(line, file=out)
        return EXIT_OK
    before = fleet_simulation(old, rows)
    end = max(before.end, result.end)  # both measured to the same end of the trace
    changes = fleet_compare_lines(before, result, end)
    if args.format == "json":
        print(json.dumps({"spec": args.spec, "compare": args.compare, "trace": args.trace,
                          "before": fleet_json(before, end), "after": fleet_json(result, end), "changes": changes},
                         indent=2), file=out)
    else:
        print(f"{args.spec} -> {args.compare} with {args.trace} ({len(rows)} workloads):", file=out)
        for line in changes:
            print(f"  {line}", file=out)
        for path, r in ((args.spec, before), (args.compare, result)):
            print("", file=out)
            print(f"{path}:", file=out)
            for line in fleet_lines(r, end):
                print(line, file=out)
    return EXIT_OK


def is_fleet_path(path: Optional[str]) -> bool:
    """Whether SPEC is a fleet spec (it lists ``clusters``)."""
    from ..spec.fleet import is_fleet_spec

    return bool(path) and is_fleet_spec(path)
