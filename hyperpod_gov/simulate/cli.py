"""`hyperpod-gov simulate` and `diff --trace`: functions the main CLI wires in. No CDK import."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from typing import Any, Callable, Optional, TextIO

from ..plan import build_plan
from ..spec import load_spec
from ..spec.errors import SpecError
from .engine import simulate
from .report import result_json, result_text
from .scenario import load_scenario
from .figures import compare_lines, figures_table
from .spec_level import figures_json, run_plan, trace_checks
from .spec_nodes import nodes_json, nodes_lines, plan_groups
from .timeline import CapacityTimeline, load_timeline
from .trace import load_trace

EXIT_OK, EXIT_INVALID = 0, 1
MAX_WAITING_SHOWN = 10


def configure_parser(parser: argparse.ArgumentParser) -> None:
    """Add the simulate arguments: SPEC (optional), --scenario, --trace, --compare, --cycles, --format."""
    parser.add_argument("spec", nargs="?", help="governance spec to simulate (with --trace)")
    parser.add_argument("--scenario", metavar="FILE",
                        help="queue-level scenario (YAML; its format: docs/simulator-contract.md)")
    parser.add_argument("--trace", metavar="TRACE.csv", help="workload trace to run on the spec's queues")
    parser.add_argument("--compare", metavar="OTHER_SPEC", help="run the same trace on this spec too and show the change")
    parser.add_argument("--capacity", metavar="TIMELINE.csv",
                        help="with --trace: run on the spec's instance groups as nodes, with this capacity timeline "
                             "(nodes added or lost per minute; docs/simulator.md)")
    parser.add_argument("--scale-up-delay", type=float, metavar="MINUTES", dest="scale_up_delay",
                        help="with --capacity: minutes from admitted work waiting for nodes to an autoscaled group's "
                             "new nodes being Ready (default: 10)")
    parser.add_argument("--cycles", type=int, metavar="N", help="stop after N scheduling cycles in total")
    parser.add_argument("--format", choices=("json", "text", "html"), default="text",
                        help="output format (default: text; html: the review pack's simulation charts, SPEC --trace)")


def _problems(exc: SpecError, what: str, default_source: str, err: TextIO) -> int:
    print(exc.render(what, default_source), file=err)
    return EXIT_INVALID


def _usage(message: str, err: TextIO) -> int:
    print(f"simulate: {message}", file=err)
    return EXIT_INVALID


def _load_plan(path: str, err: TextIO) -> Optional[Any]:
    try:
        return build_plan(load_spec(path, today=dt.date.today()))
    except SpecError as exc:
        _problems(exc, "spec", path, err)
        return None


# The page of a simulated run (``--format html``): ``review_pack.page.simulation_html`` for a spec and
# ``review_pack.fleet.fleet_simulation_html`` for a fleet, handed in by the command that composes both, so the
# simulator imports nothing above it.
HtmlRenderer = Callable[..., str]


def run(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None,
        html: HtmlRenderer | None = None, fleet_html: HtmlRenderer | None = None) -> int:
    """Run `simulate`: 0 when it ran, 1 for bad input (every problem printed to stderr)."""
    out = out or sys.stdout
    err = err or sys.stderr
    if args.cycles is not None and args.cycles < 1:
        return _usage(f"--cycles must be 1 or more (got {args.cycles})", err)
    if args.scenario and args.format == "html":
        return _usage("--format html charts a spec's run: give SPEC --trace TRACE.csv [--compare OTHER_SPEC]", err)
    capacity_file = getattr(args, "capacity", None)
    delay = getattr(args, "scale_up_delay", None)
    if delay is not None and (capacity_file is None or not delay >= 0 or delay == float("inf")):
        return _usage("--scale-up-delay needs --capacity and a number of minutes (0 or more)", err)
    if args.scenario:
        if args.spec or args.trace or args.compare or capacity_file:
            return _usage("--scenario runs on its own (its capacity timeline is in the file); leave out SPEC, --trace, "
                          "--compare and --capacity", err)
        try:
            scenario = load_scenario(args.scenario)
        except SpecError as exc:
            return _problems(exc, "scenario", args.scenario, err)
        result = simulate(scenario, cycles=args.cycles)
        if args.format == "json":
            print(json.dumps(result_json(result), indent=2), file=out)
        else:
            print(result_text(result), file=out)
        return EXIT_OK
    if not args.spec or not args.trace:
        return _usage("give either --scenario FILE, or SPEC --trace TRACE.csv [--compare OTHER_SPEC]", err)
    if args.cycles is not None:
        return _usage("--cycles applies to --scenario runs only", err)
    from .fleet_cli import is_fleet_path, run_fleet

    if is_fleet_path(args.spec):
        return run_fleet(args, out, err, fleet_html)
    plan = _load_plan(args.spec, err)
    if plan is None:
        return EXIT_INVALID
    other = None
    if args.compare:
        other = _load_plan(args.compare, err)
        if other is None:
            return EXIT_INVALID
    try:
        rows = load_trace(args.trace, **trace_checks(plan))
    except SpecError as exc:
        return _problems(exc, "trace", args.trace, err)
    capacity = None
    if capacity_file:
        try:
            capacity = CapacityTimeline(load_timeline(capacity_file, plan_groups(plan)),
                                        **({} if delay is None else {"scale_up_delay_minutes": delay}))
            if other is not None:
                load_timeline(capacity_file, plan_groups(other))
        except SpecError as exc:
            return _problems(exc, "capacity timeline", capacity_file, err)
    if args.format == "html":
        if html is None:
            raise ValueError("--format html needs the page renderer (hyperpod_gov.cli passes it)")
        out.write(html(other or plan, rows, plan if other else None, spec=args.compare or args.spec,
                                  base=args.spec if other else "", trace=args.trace,
                                  capacity=capacity, capacity_name=capacity_file or ""))
        return EXIT_OK
    figures, result, notes = run_plan(plan, rows, capacity)
    if other is None:
        if args.format == "json":
            doc = {"teams": {t: figures_json(f) for t, f in sorted(figures.items())},
                   "preemptions": len(result.preemptions), "endMinute": round(result.end / 60.0, 1), "notes": notes}
            if result.nodes is not None:
                doc["nodes"] = nodes_json(result.nodes)
            print(json.dumps(doc, indent=2), file=out)
        else:
            print(f"{args.spec} with {args.trace} ({len(rows)} workloads, ends at minute {result.end / 60.0:g}):",
                  file=out)
            for line in figures_table(figures) + notes:
                print(f"  {line}", file=out)
            if result.nodes is not None:
                for line in nodes_lines(result.nodes):
                    print(line, file=out)
            waiting = [w for w in result.workloads if w.state == "pending" or _waits_for_nodes(result, w.name)]
            if waiting:
                print(f"Still waiting at the end ({len(waiting)}):", file=out)
                for w in waiting[:MAX_WAITING_SHOWN]:
                    why = w.pending_reason or f"admitted, waiting for nodes of {w.flavor}"
                    print(f"  {w.name} ({dict(w.labels).get('team')}): {why}", file=out)
                if len(waiting) > MAX_WAITING_SHOWN:
                    print(f"  ... and {len(waiting) - MAX_WAITING_SHOWN} more (--format json lists every team's count)",
                          file=out)
        return EXIT_OK
    other_figures, _other_result, other_notes = run_plan(other, rows, capacity)
    if args.format == "json":
        doc = {
            "before": {t: figures_json(f) for t, f in sorted(figures.items())},
            "after": {t: figures_json(f) for t, f in sorted(other_figures.items())},
            "changes": compare_lines(figures, other_figures),
            "notes": notes + other_notes,
        }
        print(json.dumps(doc, indent=2), file=out)
    else:
        print(f"{args.spec} -> {args.compare} with {args.trace} ({len(rows)} workloads):", file=out)
        for line in compare_lines(figures, other_figures) + notes + other_notes:
            print(f"  {line}", file=out)
        print("", file=out)
        print(f"{args.spec}:", file=out)
        for line in figures_table(figures):
            print(f"  {line}", file=out)
        print(f"{args.compare}:", file=out)
        for line in figures_table(other_figures):
            print(f"  {line}", file=out)
    return EXIT_OK


def _waits_for_nodes(result: Any, name: str) -> bool:
    w = result.nodes.of(name) if result.nodes is not None else None
    return w is not None and w.waiting_for_nodes


def diff_effect(old_plan: Any, new_plan: Any, trace_path: str) -> list[str]:
    """For `hyperpod-gov diff OLD NEW --trace T`: per team wait p95 over admitted work and the work never admitted
    (``outcomes.effect_lines``), borrowed accelerator-hours and preemptions suffered, old -> new, in plain words.
    Raises ``SpecError`` for a bad trace (every row)."""
    from .outcomes import effect_lines as truthful_effect_lines
    from .spec_level import scenario_from_plan

    rows = load_trace(trace_path, **trace_checks(new_plan))
    notes_old = scenario_from_plan(old_plan, rows)[1]
    notes_new = scenario_from_plan(new_plan, rows)[1]
    return (truthful_effect_lines(old_plan, new_plan, rows) + [f"old spec: {n}" for n in notes_old]
            + [f"new spec: {n}" for n in notes_new])
