"""The `hyperpod-gov` command: validate, explain and synthesize a governance spec."""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Optional, Sequence

# The spec's modules (pydantic models, rules: 0.3 s) are imported where they are used (commands.py), so that
# `synth` starts Node.js first (main).
from . import dispatch
from .cli_support import (  # noqa: F401 - the helpers' names, importable from here as before
    EXIT_INVALID, EXIT_OK, EXIT_USAGE, print_json, report_synth_warnings, unreported_synth_warnings, usage_error)
from .commands import (  # noqa: F401 - the commands' names, importable from here as before
    SLURM_NOT_SIMULATED, cmd_diff, cmd_explain, cmd_onboard, cmd_schema, cmd_synth, cmd_validate, plan_of, review_of,
    _simulate)
from .process import exit_with


# The commands whose own modules configure their options (help, module, function), in the order --help lists them.
# Those that read the live account import boto3.
OWN_MODULE_COMMANDS = {
    "review": ("contracts whose review is due or overdue; exit 1 when one is overdue", ".contracts.review",
               "configure_parser"),
    "simulate": ("what-if: who is admitted, borrows, is preempted (--scenario FILE, or SPEC --trace T.csv)",
                 ".simulate.cli", "configure_parser"),
    "drift": ("compare the deployed cluster with the spec; exit 0 no drift, 1 drift, 2 could not check", ".live.cli",
              "configure_drift"),
    "import": ("write a spec from a live cluster's instance groups, cluster policy and compute quotas", ".live.cli",
               "configure_import"),
    "preflight": ("check an existing cluster's live prerequisites before the first deploy; exit 0 ready, 1 something "
                  "to fix, 2 could not check", ".live.preflight", "configure_preflight"),
    "report": ("usage per team from CloudWatch against the spec, with a spec patch checked by its rules", ".report.cli",
               "configure_parser"),
    "review-pack": ("the allocation review as a page: OUT/index.html and OUT/summary.md with SVG charts",
                    ".review_pack.cli", "configure_parser"),
    "evidence": ("the evidence record of a change (spec, commit, diff, review page, contracts, alarms, "
                 "acknowledgements) with a MANIFEST.sha256; --verify DIR checks one", ".evidence.cli",
                 "configure_parser"),
}


def build_parser(command: Optional[str] = None) -> argparse.ArgumentParser:
    """The command line. ``command``: the one command the arguments name; the commands whose options live in their
    own modules (review, simulate, drift, import, preflight, report, review-pack) are then configured only if they
    are that one (``OWN_MODULE_COMMANDS``): the others are listed alike, their modules (boto3's, the simulator's)
    not imported.
    ``None``: every command configured."""
    from ._version import __version__

    parser = argparse.ArgumentParser(
        prog="hyperpod-gov", description="Govern a shared SageMaker HyperPod cluster from one spec.",
        epilog="Exit codes, JSON output and its schemas: docs/cli.md",
    )
    parser.add_argument("--version", action="version", version=f"hyperpod-gov {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    def with_spec(name: str, help_: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_)
        p.add_argument("spec", help="path of the governance spec (YAML)")
        p.add_argument("--strict", action="store_true",
                       help="treat every warning the spec does not acknowledge (e.g. overdue contracts) as an error")
        p.add_argument("--environment", metavar="NAME",
                       help="the spec of this environment (environments[]: the base with its accounts and overrides)")
        return p

    def with_format(p: argparse.ArgumentParser, schema: str) -> None:
        p.add_argument("--format", choices=("text", "json"), default="text",
                       help=f"output format (default: text; json: one document on standard output, its JSON Schema "
                       f"in hyperpod_gov/schemas/{schema})")

    validate_parser = with_spec("validate", "check a spec; exit 0 if valid, 1 with every problem otherwise")
    with_format(validate_parser, "validate.json")
    validate_parser.set_defaults(func=dispatch.validate)
    explain_parser = with_spec("explain", "print per team what it owns, lends, may borrow, and who may view or submit")
    with_format(explain_parser, "explain.json")
    explain_parser.set_defaults(func=dispatch.explain)
    onboard_parser = with_spec("onboard", "print the page that takes a new member of TEAM from a laptop to a running "
                               "job: tools, role, network, kubeconfig, queue and quota, a first job per kind, how to "
                               "watch it, the team's data and whom to ask")
    onboard_parser.add_argument("team", help="the team's name")
    onboard_parser.add_argument("--format", choices=("markdown", "html"), default="markdown",
                                help="output format (default: markdown; html: one self-contained document)")
    onboard_parser.set_defaults(func=cmd_onboard)
    synth_parser = with_spec("synth", "write the CDK cloud assembly to OUT/cdk.out (and manifests to OUT/k8s)")
    synth_parser.add_argument("--out", default="build", help="output directory (default: build)")
    synth_parser.set_defaults(func=dispatch.synth)
    diff_parser = sub.add_parser("diff", help="what a spec change does: governance first, then resources")
    diff_parser.add_argument("old", help="the spec before the change")
    diff_parser.add_argument("new", nargs="?", help="the spec after the change (not with --against)")
    diff_parser.add_argument("--environment", metavar="NAME", help="compare this environment of the spec(s)")
    diff_parser.add_argument("--against", metavar="OTHER",
                             help="compare environment NAME of one spec with its environment OTHER")
    diff_parser.add_argument("--strict", action="store_true",
                             help="treat every warning the specs do not acknowledge as an error")
    diff_parser.add_argument("--governance-only", action="store_true", help="skip the (slower) resource diff")
    diff_parser.add_argument("--fail", action="store_true", help="exit 1 when anything changes")
    diff_parser.add_argument("--trace", metavar="TRACE.csv",
                             help="also simulate a workload trace on both specs: wait p95, borrowed accelerator-hours "
                             "and preemptions per team, old -> new")
    with_format(diff_parser, "diff.json")
    diff_parser.set_defaults(func=dispatch.diff)
    sub.add_parser("schema", help="print the JSON Schema of the spec (for editors)").set_defaults(func=cmd_schema)
    for name, (help_, module, configure) in OWN_MODULE_COMMANDS.items():
        command_parser = sub.add_parser(name, help=help_)
        if command is None or command == name:
            getattr(importlib.import_module(module, __package__), configure)(command_parser)
            if name == "simulate":
                command_parser.set_defaults(func=_simulate)
            if name in dispatch.OWN_MODULE:  # a fleet spec goes to the fleet's command (dispatch)
                command_parser.set_defaults(func=dispatch.OWN_MODULE[name])
    return parser


def starts_jsii(argv: Sequence[str]) -> bool:
    """Whether the command synthesizes a CDK app (and so starts jsii's Node.js): synth, and diff unless
    ``--governance-only``. ``--help`` and ``--version`` start nothing."""
    if not argv or any(a in ("-h", "--help", "--version") for a in argv):
        return False
    return argv[0] == "synth" or (argv[0] == "diff" and "--governance-only" not in argv)


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    # synth: Node.js starts and loads the CDK's packages while the parser's modules are imported and the spec read
    from .cdk_start import resolve_modules_once, start_cdk_imports

    resolve_modules_once()  # for whichever command starts jsii's Node.js: synth, and diff's two synths
    if starts_jsii(argv):
        from .node import NodeNotFound, use_supported_node

        try:
            use_supported_node()  # before jsii starts: a Node.js it supports, so no warning banner
        except NodeNotFound as exc:
            print(f"hyperpod-gov {argv[0]}: {exc}", file=sys.stderr)
            return EXIT_USAGE
    cdk_imports = start_cdk_imports() if argv[:1] == ["synth"] else None
    try:
        # the command the arguments name (argparse takes no abbreviation of a command); "" before an option
        args = build_parser(argv[0] if argv and not argv[0].startswith("-") else "").parse_args(argv)
    except BaseException:  # a usage error: exit 2 once the imports are done
        if cdk_imports is not None:
            cdk_imports[0].shutdown(wait=True)
        raise
    if cdk_imports is not None:
        args.cdk_imports = cdk_imports
    from .spec import SpecError

    try:
        return int(args.func(args))
    except SpecError as exc:
        source = "" if exc.source else f"{getattr(args, 'spec', '')}: "
        print(f"{source}{exc.render()}", file=sys.stderr)
        return EXIT_INVALID


def run() -> None:
    """The ``hyperpod-gov`` command: :func:`main`, its code given to ``process.exit_with`` (tests call ``main``)."""
    exit_with(main())


if __name__ == "__main__":  # pragma: no cover
    run()
