"""Where a command goes: a fleet spec (``clusters:``, ``spec.fleet.is_fleet_spec``) to the fleet's command, any other
spec to the one cluster's. The one place that hands a fleet over: the single-cluster commands (``commands``,
``live.cli``, ``live.preflight``) do not import the fleet modules, which build on them.

``hyperpod_gov.cli`` makes these the commands' functions. The live tools (boto3) are imported only by drift and
preflight, when they run."""

from __future__ import annotations

import argparse

from . import commands
from .fleet_commands import explain_fleet, is_fleet_file, synth_fleet_command, validate_fleet
from .fleet_diff import fleet_diff


def validate(args: argparse.Namespace) -> int:
    """``validate SPEC``: ``fleet_commands.validate_fleet`` or ``commands.cmd_validate``."""
    return validate_fleet(args) if is_fleet_file(args.spec) else commands.cmd_validate(args)


def explain(args: argparse.Namespace) -> int:
    """``explain SPEC``: ``fleet_commands.explain_fleet`` or ``commands.cmd_explain``."""
    return explain_fleet(args) if is_fleet_file(args.spec) else commands.cmd_explain(args)


def synth(args: argparse.Namespace) -> int:
    """``synth SPEC``: ``fleet_commands.synth_fleet_command`` or ``commands.cmd_synth``."""
    return synth_fleet_command(args) if is_fleet_file(args.spec) else commands.cmd_synth(args)


def diff(args: argparse.Namespace) -> int:
    """``diff OLD [NEW]``: per cluster (``fleet_diff``) when either side is a fleet spec, else ``commands.cmd_diff``."""
    if any(p is not None and is_fleet_file(p) for p in (args.old, args.new)):
        return fleet_diff(args)
    return commands.cmd_diff(args)


def drift(args: argparse.Namespace) -> int:
    """``drift SPEC``: each member in its own account and region (``fleet_live``), or ``live.cli.run_drift``."""
    if is_fleet_file(args.spec):
        from .fleet_live import run_fleet_drift

        return run_fleet_drift(args)
    from .live.cli import run_drift

    return run_drift(args)


def preflight(args: argparse.Namespace) -> int:
    """``preflight SPEC``: each member (``fleet_live``), or ``live.preflight.run_preflight``."""
    if is_fleet_file(args.spec):
        from .fleet_live import run_fleet_preflight

        return run_fleet_preflight(args)
    from .live.preflight import run_preflight

    return run_preflight(args)


# the commands whose own modules configure them (cli.OWN_MODULE_COMMANDS) and take a fleet spec too
OWN_MODULE = {"drift": drift, "preflight": preflight}
