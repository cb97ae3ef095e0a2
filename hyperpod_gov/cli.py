"""The `hyperpod-gov` command: validate, explain and synthesize a governance spec."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Sequence

from pathlib import Path
from typing import TYPE_CHECKING

from .spec import GovernanceSpec, SpecError, SpecIssue, load_spec, spec_warnings

if TYPE_CHECKING:
    from .plan import Plan

EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2


def plan_of(path: str, *, strict: bool = False, warn: bool = True) -> "Plan":
    """Load a spec file and build its plan (every spec rule and plan invariant checked), printing warnings."""
    from .plan import build_plan

    spec = load_spec(path, strict=strict)
    plan = build_plan(spec, base_dir=Path(path).resolve().parent, strict=strict)
    if warn:
        for issue in (*spec_warnings(spec), *plan.warnings):
            print(f"warning: {issue}", file=sys.stderr)
    return plan


def cmd_validate(args: argparse.Namespace) -> int:
    plan = plan_of(args.spec, strict=args.strict)
    print(f"{args.spec}: valid ({len(plan.tenants)} teams, {plan.mode} mode)")
    return EXIT_OK


def cmd_explain(args: argparse.Namespace) -> int:
    from .explain import explain

    sys.stdout.write(explain(plan_of(args.spec, strict=args.strict)))
    return EXIT_OK


def cmd_synth(args: argparse.Namespace) -> int:
    from stacks.app import PolicyValidationError, assembly_warnings, synth  # the composition root

    plan = plan_of(args.spec, strict=args.strict)
    out = Path(args.out)
    try:
        assembly = synth(plan, out)
    except OSError as exc:  # --out names a file, an unwritable folder, a full disk...
        raise SpecError([SpecIssue("--out", f"cannot be written ({exc.strerror or exc})", str(out),
                                   "give a folder you can write to (it is created if missing)")]) from None
    except PolicyValidationError as exc:
        print(f"{len(exc.violations)} policy violation(s) (cdk-nag, template checks) without an acknowledgement:",
              file=sys.stderr)
        for line in exc.violations:
            print(f"  - {line}", file=sys.stderr)
        print(f"full report: {exc.report}", file=sys.stderr)
        return EXIT_INVALID
    for warning in assembly_warnings(assembly):
        print(f"warning: {warning}", file=sys.stderr)
    for stack in sorted(assembly.stacks, key=lambda s: s.stack_name):
        print(f"{stack.stack_name}: {len(stack.template.get('Resources', {}))} resources -> {out / 'cdk.out' / stack.template_file}")
    return EXIT_OK


def cmd_diff(args: argparse.Namespace) -> int:
    from .diff import governance_diff, resource_diff

    plans = []
    for path, warn in ((args.old, False), (args.new, True)):
        try:
            plans.append(plan_of(path, strict=args.strict, warn=warn))
        except SpecError as exc:  # say which of the two specs is wrong
            raise SpecError(exc.issues, exc.source or path) from None
    old, new = plans
    lines = governance_diff(old, new)
    print(f"Governance changes ({args.old} -> {args.new}):")
    print("\n".join(f"  {line}" for line in lines) if lines else "  none")
    from .contracts import events, retirement_notes

    reviews = events(old, new) + retirement_notes(old, new)
    print("Contract reviews (event-driven) and retirement:")
    print("\n".join(f"  {line}" for line in reviews) if reviews else "  none")
    if args.trace:
        from .simulate.cli import diff_effect

        print(f"Simulated effect on {args.trace} (Kueue admission, per team):")
        effect = diff_effect(old, new, args.trace)
        print("\n".join(f"  {line}" for line in effect) if effect else "  none")
    resources: list[str] = []
    if not args.governance_only:
        from .testing import synth_snapshot

        resources = resource_diff(synth_snapshot(old), synth_snapshot(new))
        print("Resource changes (+ added, - removed, ~ changed):")
        print("\n".join(f"  {line}" for line in resources) if resources else "  none")
    return EXIT_INVALID if args.fail and (lines or resources or reviews) else EXIT_OK


def _simulate(args: argparse.Namespace) -> int:
    from .simulate.cli import run

    return run(args)


def cmd_schema(args: argparse.Namespace) -> int:
    schema = GovernanceSpec.model_json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "hyperpod-gov governance spec"
    print(json.dumps(schema, indent=2, sort_keys=True))
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hyperpod-gov", description="Govern a shared SageMaker HyperPod cluster from one spec."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    def with_spec(name: str, help_: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_)
        p.add_argument("spec", help="path of the governance spec (YAML)")
        p.add_argument("--strict", action="store_true", help="treat warnings (e.g. overdue contracts) as errors")
        return p

    with_spec("validate", "check a spec; exit 0 if valid, 1 with every problem otherwise").set_defaults(
        func=cmd_validate
    )
    with_spec("explain", "print per team what it owns, lends, may borrow, and who may view or submit").set_defaults(
        func=cmd_explain
    )
    synth_parser = with_spec("synth", "write the CDK cloud assembly to OUT/cdk.out (and manifests to OUT/k8s)")
    synth_parser.add_argument("--out", default="build", help="output directory (default: build)")
    synth_parser.set_defaults(func=cmd_synth)
    diff_parser = sub.add_parser("diff", help="what a spec change does: governance first, then resources")
    diff_parser.add_argument("old", help="the spec before the change")
    diff_parser.add_argument("new", help="the spec after the change")
    diff_parser.add_argument("--strict", action="store_true", help="treat warnings as errors")
    diff_parser.add_argument("--governance-only", action="store_true", help="skip the (slower) resource diff")
    diff_parser.add_argument("--fail", action="store_true", help="exit 1 when anything changes")
    diff_parser.add_argument("--trace", metavar="TRACE.csv",
                             help="also simulate a workload trace on both specs: wait p95, borrowed accelerator-hours "
                             "and preemptions per team, old -> new")
    diff_parser.set_defaults(func=cmd_diff)
    sub.add_parser("schema", help="print the JSON Schema of the spec (for editors)").set_defaults(func=cmd_schema)
    from .contracts.review import configure_parser as configure_review
    from .simulate.cli import configure_parser as configure_simulate

    configure_review(sub.add_parser(
        "review", help="contracts whose review is due or overdue; exit 1 when one is overdue"))

    simulate_parser = sub.add_parser(
        "simulate", help="what-if: who is admitted, borrows, is preempted (--scenario FILE, or SPEC --trace T.csv)")
    configure_simulate(simulate_parser)
    simulate_parser.set_defaults(func=_simulate)
    # Commands that read the live account (boto3); each module parses its own options.
    from .live.cli import configure_drift, configure_import
    from .report.cli import configure_parser as configure_report

    configure_drift(sub.add_parser(
        "drift", help="compare the deployed cluster with the spec; exit 0 no drift, 1 drift, 2 could not check"))
    configure_import(sub.add_parser(
        "import", help="write a spec from a live cluster's instance groups, cluster policy and compute quotas"))
    configure_report(sub.add_parser(
        "report", help="usage per team from CloudWatch against the spec, with a spec patch checked by its rules"))
    from .review_pack.cli import configure_parser as configure_review_pack

    configure_review_pack(sub.add_parser(
        "review-pack", help="the allocation review as a page: OUT/index.html and OUT/summary.md with SVG charts"))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except SpecError as exc:
        source = "" if exc.source else f"{getattr(args, 'spec', '')}: "
        print(f"{source}{exc.render()}", file=sys.stderr)
        return EXIT_INVALID


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
