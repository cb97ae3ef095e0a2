"""The `report` subcommand: ``configure_parser(parser)`` adds its arguments, ``run(args)`` runs it."""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from typing import Any, Optional

EXIT_OK, EXIT_INVALID, EXIT_UNREADABLE = 0, 1, 2
MAX_DAYS = 455  # CloudWatch keeps hourly data points for 455 days


def configure_parser(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Arguments of `hyperpod-gov report SPEC [--days N] [--format text|json|html]`."""
    parser.add_argument("spec", help="path of the governance spec (YAML)")
    parser.add_argument("--days", type=int, default=30, help="days to look back, 1..455 (default: 30)")
    parser.add_argument("--format", choices=("text", "json", "html"), default="text",
                        help="output format (default: text; html: the review pack's usage chart and proposals)")
    parser.add_argument("--strict", action="store_true", help="treat warnings (e.g. overdue contracts) as errors")
    parser.add_argument("--account-profile", action="append", default=[], metavar="ACCOUNT=PROFILE",
                        dest="account_profiles",
                        help="a fleet spec: read the members in ACCOUNT with this AWS profile (repeatable; default: "
                             "the default credential chain)")
    parser.set_defaults(func=run)
    return parser


def cloudwatch_client(region: str) -> Any:
    """CloudWatch in the spec's region, default credential chain, standard retries (throttling)."""
    import boto3
    from botocore.config import Config

    return boto3.client("cloudwatch", region_name=region, config=Config(retries={"mode": "standard"}))


def run(args: argparse.Namespace, *, client: Optional[Any] = None, now: Optional[dt.datetime] = None,
        today: Optional[dt.date] = None) -> int:
    """Exit 0 with a report, 1 for an invalid spec or --days, 2 when the metrics could not be read."""
    from ..plan import build_plan
    from ..spec import SpecError, parse_spec, read_yaml
    from .metrics import ReadError
    from .report import build_report, render_json, render_text, window_ending

    if not 1 <= args.days <= MAX_DAYS:
        print(f"--days: is out of range ({args.days}); use 1..{MAX_DAYS} (CloudWatch keeps hourly data "
              f"{MAX_DAYS} days)", file=sys.stderr)
        return EXIT_INVALID
    today = today or dt.date.today()
    from ..spec.fleet import is_fleet_spec

    if is_fleet_spec(args.spec):
        return run_fleet(args, client_for=None if client is None else (lambda _c, _p: client), now=now, today=today)
    try:
        data = read_yaml(args.spec)
        spec = parse_spec(data, strict=getattr(args, "strict", False), today=today, source=str(args.spec))
    except SpecError as exc:
        source = "" if exc.source else f"{args.spec}: "
        print(f"{source}{exc.render()}", file=sys.stderr)
        return EXIT_INVALID
    try:
        plan = build_plan(spec)
    except SpecError as exc:  # whole-app invariants the plan checks
        print(f"{args.spec}: {exc.render()}", file=sys.stderr)
        return EXIT_INVALID
    window = window_ending(now or dt.datetime.now(dt.timezone.utc), args.days)
    try:
        report = build_report(plan, spec, data, client or cloudwatch_client(plan.region), window, today)
    except ReadError as exc:
        print(f"could not read the metrics: {exc.call}: {exc.reason}; {exc.fix}", file=sys.stderr)
        return EXIT_UNREADABLE
    if args.format == "html":
        import json

        from ..review_pack.page import report_html

        sys.stdout.write(report_html(json.loads(render_json(report)), str(args.spec)))
        return EXIT_OK
    sys.stdout.write(render_json(report) if args.format == "json" else render_text(report, spec))
    return EXIT_OK


def run_fleet(args: argparse.Namespace, *, client_for: Optional[Any] = None, now: Optional[dt.datetime] = None,
              today: dt.date) -> int:
    """``report FLEET.yaml``: every Kueue member's report, summed per team (``report.fleet``); exit codes as run's."""
    from ..plan.fleet import build_fleet
    from ..plan.invariants import INVARIANTS
    from ..spec import SpecError
    from ..spec.fleet import load_fleet
    from ..spec.rules import RULES
    from .fleet import boto3_client_for, build_fleet_report, fleet_json, fleet_text
    from .metrics import ReadError
    from .report import window_ending

    if args.format == "html":
        print("--format html: is not available for a fleet spec yet; use text or json", file=sys.stderr)
        return EXIT_INVALID
    profiles = dict(p.split("=", 1) for p in getattr(args, "account_profiles", []) if "=" in p)
    try:
        fleet = build_fleet(load_fleet(args.spec, today=today, strict=getattr(args, "strict", False),
                                       known=RULES + INVARIANTS), strict=getattr(args, "strict", False))
    except SpecError as exc:
        source = "" if exc.source else f"{args.spec}: "
        print(f"{source}{exc.render()}", file=sys.stderr)
        return EXIT_INVALID
    window = window_ending(now or dt.datetime.now(dt.timezone.utc), args.days)
    try:
        report = build_fleet_report(fleet, client_for or boto3_client_for(profiles), window, today)
    except ReadError as exc:
        print(f"could not read the metrics: {exc.call}: {exc.reason}; {exc.fix}", file=sys.stderr)
        return EXIT_UNREADABLE
    if args.format == "json":
        import json

        sys.stdout.write(json.dumps(fleet_json(report), indent=2, sort_keys=True) + "\n")
    else:
        sys.stdout.write(fleet_text(report))
    return EXIT_OK
