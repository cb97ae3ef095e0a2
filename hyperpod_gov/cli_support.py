"""What the spec-reading commands share, one cluster's and a fleet's alike: the JSON printer, the usage error, the
synth's outcome and failures' reports, the two sides of a diff and the diff of two plans, and the refusal of a
fleet spec by one cluster's drift and preflight (``commands``, ``live.cli``, ``live.preflight`` and the fleet
modules import it; it imports none of them, so none imports another through it).

The spec's modules (pydantic models, rules: 0.3 s) are imported where they are used, so that `synth` starts
Node.js first (``cli.main``)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional, TypeVar

if TYPE_CHECKING:
    from .diff import GovernanceChange
    from .plan import Plan
    from .spec import SpecError, SpecIssue

EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2
T = TypeVar("T")


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def print_json(document: Any) -> None:
    """One JSON document on standard output: keys sorted, two-space indent, a final newline."""
    sys.stdout.write(json.dumps(document, indent=2, sort_keys=True) + "\n")


def usage_error(issue: "SpecIssue") -> int:
    """Options that do not go together (argparse cannot say so): the problem with its fix, exit 2 like argparse's
    own usage errors."""
    print(f"usage error: {issue}", file=sys.stderr)
    return EXIT_USAGE


def one_cluster_refused(command: str, args: argparse.Namespace) -> bool:
    """``drift`` or ``preflight`` (``command``) of one cluster's spec given a fleet spec (``dispatch`` hands those to
    ``fleet_live``) or ``--cluster`` (it chooses a fleet's member): said on standard error, True; else False."""
    from .spec.fleet import is_fleet_spec

    if is_fleet_spec(args.spec):
        print(f"hyperpod-gov {command}: {args.spec} is a fleet spec (clusters:): fleet_live.run_fleet_{command} checks "
              f"each member, as `hyperpod-gov {command}` does", file=sys.stderr)
        return True
    if getattr(args, "cluster", None) is not None:
        print(f"hyperpod-gov {command}: --cluster {args.cluster}: {args.spec} is one cluster's spec (cluster:); "
              "--cluster chooses a member of a fleet spec (clusters:): leave it out", file=sys.stderr)
        return True
    return False


def cannot_write(out: Path, exc: OSError) -> "SpecError":
    """``--out`` that cannot be written, as the spec error the command exits 1 with."""
    from .spec import SpecError, SpecIssue

    return SpecError([SpecIssue("--out", f"cannot be written ({exc.strerror or exc})", str(out),
                                "give a folder you can write to (it is created if missing)")])


def policy_violations(exc: Any) -> int:
    """Print a synth's unacknowledged policy violations (``stacks.app.PolicyValidationError``): exit 1."""
    print(f"{len(exc.violations)} policy violation(s) (cdk-nag, template checks) without an acknowledgement:",
          file=sys.stderr)
    for line in exc.violations:
        print(f"  - {line}", file=sys.stderr)
    print(f"full report: {exc.report}", file=sys.stderr)
    return EXIT_INVALID


def synth_outcome(out: Path, synth: Callable[[], Any], line: Callable[[Any, Path], str], *, strict: bool) -> int:
    """Run ``synth`` (it writes a cloud assembly to ``out/cdk.out`` and returns it) and report it as ``synth`` does
    for one cluster or a fleet: an ``out`` that cannot be written raises ``cannot_write``; unacknowledged policy
    violations are printed (exit 1); else synth's warnings (``report_synth_warnings``) and, by stack name, each
    stack's ``line(stack, its template file)``."""
    from .stacks.app import PolicyValidationError, assembly_warnings

    try:
        assembly = synth()
    except OSError as exc:  # a full disk...
        raise cannot_write(out, exc) from None
    except PolicyValidationError as exc:
        return policy_violations(exc)
    code = report_synth_warnings(assembly_warnings(assembly), strict=strict)
    for stack in sorted(assembly.stacks, key=lambda s: s.stack_name):
        print(line(stack, out / "cdk.out" / stack.template_file))
    return code


def unreported_synth_warnings(warnings: Iterable[str], covered: Iterable[str]) -> list[str]:
    """Synth's CDK warnings less those a spec rule already reported (listed in its ``covers``).

    CDK appends ``[ack: <id>]`` to a warning added with ``add_warning_v2``; the spec rule has already printed
    that finding, or the spec acknowledged it, or ``--strict`` refused it before synth.
    """
    tags = tuple(f"[ack: {c}]" for c in covered)
    return [w for w in warnings if not any(tag in w for tag in tags)]


def report_synth_warnings(warnings: Iterable[str], *, strict: bool) -> int:
    """Print synth's CDK warnings that no spec rule reported; with ``strict`` any of them is exit 1."""
    from .spec.rules import RULES
    left = unreported_synth_warnings(warnings, RULES.covered_warnings())
    for warning in left:
        print(f"warning: {warning}", file=sys.stderr)
    if strict and left:
        print(f"--strict: synth added {plural(len(left), 'warning')} (above), errors with --strict; the cloud "
              "assembly is written but must not be deployed", file=sys.stderr)
        return EXIT_INVALID
    return EXIT_OK


def diff_sides(args: argparse.Namespace) -> Optional[tuple[list[tuple[str, Optional[str], bool]], str]]:
    """The two ``(path, environment, warn)`` sides of ``diff`` and its title: OLD NEW, or one spec's
    ``--environment`` against ``--against``; None after a usage error (said on standard error)."""
    from .spec import SpecIssue

    if args.against is not None:  # two environments of one spec: what the second differs in from the first
        if args.new is not None or args.environment is None:
            usage_error(SpecIssue("--against", "compares two environments of one spec", args.against,
                                  "give one spec, --environment NAME and --against OTHER"))
            return None
        return ([(args.old, args.environment, False), (args.old, args.against, True)],
                f"{args.old}: environment {args.environment} -> {args.against}")
    if args.new is None:
        usage_error(SpecIssue("diff", "needs the spec before and the spec after the change", args.old,
                              "give OLD NEW, or SPEC --environment NAME --against OTHER"))
        return None
    return [(args.old, args.environment, False), (args.new, args.environment, True)], f"{args.old} -> {args.new}"


def load_sides(sides: Iterable[tuple[str, Optional[str], bool]], load: Callable[[str, Optional[str], bool], T]
               ) -> list[T]:
    """Each ``(path, environment, warn)`` side of a diff read with ``load`` (one cluster's plan or a fleet's); a
    spec error names the side's spec, so that it says which of the two is wrong."""
    from .spec import SpecError

    out = []
    for path, environment, warn in sides:
        try:
            out.append(load(path, environment, warn))
        except SpecError as exc:
            raise SpecError(exc.issues, exc.source or path, exc.note) from None
    return out


def diff_plans(args: argparse.Namespace, old: "Plan", new: "Plan", title: str,
               snapshots: Optional[Callable[[], tuple[Any, Any]]], *,
               explained: Optional[Callable[["GovernanceChange"], bool]] = None
               ) -> tuple[Optional[dict[str, Any]], bool]:
    """The diff of two plans: printed (text), or the diff.json document (``--format json``); and whether anything
    changed. ``snapshots``: makes the two sides' ``testing.synth_snapshot`` (None: ``--governance-only``), called
    after the governance lines are printed (the synths are the slow part). ``explained``: the governance changes
    something else shows (a fleet's capacity move shows its two count changes as one move), left out here."""
    from .diff import governance_changes, resource_changes, review_events, reviews_of
    from .contracts import retirement_notes

    as_json = getattr(args, "format", "text") == "json"
    changes = [c for c in governance_changes(old, new) if explained is None or not explained(c)]
    reviews = review_events(old, new)
    retiring = retirement_notes(old, new)
    widened = sum(1 for c in changes if c.privilege is not None)
    if not as_json:  # printed before the (slower) simulation and synths
        print(f"Governance changes ({title}):")
        print("\n".join(f"  {c.words}" for c in changes) if changes else "  none")
        if widened:
            print(f"  {widened} of these widen privilege (marked 'privilege'): review them first")
        review_lines = [r.words for r in reviews] + retiring
        print("Contract reviews (event-driven) and retirement:")
        print("\n".join(f"  {line}" for line in review_lines) if review_lines else "  none")
    effect: Optional[list[str]] = None
    if args.trace:
        from .simulate.cli import diff_effect

        effect = diff_effect(old, new, args.trace)
        if not as_json:
            print(f"Simulated effect on {args.trace} (Kueue admission, per team):")
            print("\n".join(f"  {line}" for line in effect) if effect else "  none")
    resources = []
    if snapshots is not None:
        resources = resource_changes(*snapshots(), prefixes=(old.name, new.name) if args.against is not None else None)
        if not as_json:
            print("Resource changes (+ added, - removed, ~ changed):")
            print("\n".join(f"  {r.words}" for r in resources) if resources else "  none")
    changed = bool(changes or resources or reviews or retiring)
    if as_json:
        return ({
            "title": title,
            "changes": [{**c.to_json(), "review": [r.to_json() for r in reviews_of(c, reviews)]} for c in changes],
            "privilegeWidening": widened,
            "reviews": [r.to_json() for r in reviews],
            "retirement": retiring,
            "simulatedEffect": effect,
            "resources": None if snapshots is None else [r.to_json() for r in resources],
            "changed": changed,
        }, changed)
    return None, changed
