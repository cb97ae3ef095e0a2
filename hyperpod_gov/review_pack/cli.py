"""`hyperpod-gov review-pack SPEC [--base OLD_SPEC] [--trace TRACE.csv [--capacity TIMELINE.csv [--scale-up-delay
MINUTES]]] [--report REPORT.json] --out DIR`."""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from pathlib import Path
from typing import Any, Optional, TextIO

from ..contracts.review import iso_date
from ..spec.errors import SpecError, SpecIssue

EXIT_OK, EXIT_INVALID = 0, 1


def configure_parser(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Arguments of `review-pack`."""
    parser.add_argument("spec", help="the governance spec to review (YAML)")
    parser.add_argument("--base", metavar="OLD_SPEC", help="the spec before the change: old beside new, and the diff")
    parser.add_argument("--trace", metavar="TRACE.csv",
                        help="simulate this workload trace (on both specs with --base; a fleet's over its dispatch)")
    parser.add_argument("--capacity", metavar="TIMELINE.csv",
                        help="with --trace: run it on the spec's instance groups as nodes, with this capacity timeline "
                             "(nodes added or lost per minute; docs/simulator.md), on both specs with --base")
    parser.add_argument("--scale-up-delay", type=float, metavar="MINUTES", dest="scale_up_delay",
                        help="with --capacity: minutes from admitted work waiting for nodes to an autoscaled group's "
                             "new nodes being Ready (default: 10)")
    parser.add_argument("--report", metavar="REPORT.json",
                        help="the output of `hyperpod-gov report SPEC --format json`: quota against measured usage "
                             "(for a fleet, of `hyperpod-gov report FLEET --format json`: each member's under its "
                             "cluster)")
    parser.add_argument("--out", required=True, metavar="DIR", help="folder to write DIR/index.html, DIR/summary.md and the SVG charts to")
    parser.add_argument("--today", type=iso_date, default=None, metavar="YYYY-MM-DD",
                        help="contract status as of this date (default: today)")
    parser.set_defaults(func=run)
    return parser


def load_plan(path: str, today: dt.date) -> Any:
    """A spec file's plan; an overdue review is shown on the page, not an error."""
    from ..plan import build_plan
    from ..spec import load_spec

    try:
        return build_plan(load_spec(path, today=today), base_dir=Path(path).resolve().parent)
    except SpecError as exc:
        raise SpecError(exc.issues, exc.source or path) from None


def _capacity(args: argparse.Namespace, plan: Any, base: Any) -> Any:
    """The capacity timeline (``--capacity``, ``--scale-up-delay``), checked against both specs' instance groups."""
    from ..simulate.spec_nodes import plan_groups
    from ..simulate.timeline import CapacityTimeline, load_timeline

    path, delay = getattr(args, "capacity", None), getattr(args, "scale_up_delay", None)
    if delay is not None and (path is None or not 0 <= delay < float("inf")):
        raise SpecError([SpecIssue("--scale-up-delay", "needs --capacity and a number of minutes (0 or more)",
                                   str(delay), "give --capacity TIMELINE.csv, and e.g. --scale-up-delay 10")])
    if path is None:
        return None
    if not args.trace:
        raise SpecError([SpecIssue("--capacity", "needs --trace: the timeline's minutes are the trace's", path,
                                   "give --trace TRACE.csv as well")])
    timeline = CapacityTimeline(load_timeline(path, plan_groups(plan)),
                                **({} if delay is None else {"scale_up_delay_minutes": delay}))
    if base is not None:
        load_timeline(path, plan_groups(base))  # both specs run under it: it must name groups of each
    return timeline


def run(args: argparse.Namespace, err: Optional[TextIO] = None) -> int:
    """Write the pack; 0 when written, 1 for a bad spec, trace, capacity timeline, report or --out (every problem
    printed)."""
    from ..simulate.spec_level import trace_checks
    from ..simulate.trace import load_trace
    from .page import Inputs, write_pack
    from .report_json import load_report

    err = err or sys.stderr
    from ..spec.fleet import is_fleet_spec

    if is_fleet_spec(args.spec):
        from .fleet import run_fleet

        return run_fleet(args, err)
    today = args.today or dt.date.today()
    what = "spec"
    try:
        plan = load_plan(args.spec, today)
        base = load_plan(args.base, today) if args.base else None
        what = "trace"
        if args.trace and any(p is not None and p.slurm is not None for p in (plan, base)):
            raise SpecError([SpecIssue("--trace", "the simulator models Kueue, not Slurm: a Slurm spec's trace "
                                       "cannot be simulated", args.trace, "leave out --trace for a Slurm spec")])
        rows = load_trace(args.trace, **trace_checks(plan)) if args.trace else ()
        what = "capacity timeline"
        capacity = _capacity(args, plan, base)
        what = "usage report"
        report = load_report(args.report) if args.report else None
        what = "output folder"
        inputs = Inputs(plan=plan, spec=Path(args.spec).name, today=today, base_plan=base,
                        base=Path(args.base).name if args.base else "", trace=rows,
                        trace_name=Path(args.trace).name if args.trace else "", report=report,
                        report_name=Path(args.report).name if args.report else "", capacity=capacity,
                        capacity_name=Path(args.capacity).name if args.capacity else "")
        out = Path(args.out)
        try:
            written = write_pack(inputs, out)
        except OSError as exc:
            raise SpecError([SpecIssue("--out", f"cannot be written ({exc.strerror or exc})", str(out),
                                       "give a folder you can write to (it is created if missing)")]) from None
    except SpecError as exc:
        print(exc.render(what, args.spec), file=err)
        return EXIT_INVALID
    index = out / "index.html"
    print(f"{index}: {index.stat().st_size} bytes, {len(written) - 2} charts; summary: {out / 'summary.md'}")
    return EXIT_OK
