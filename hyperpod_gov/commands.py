"""The commands that read one cluster's spec: validate, explain, onboard, synth, diff, schema (``hyperpod_gov.cli``
parses the command line and calls them, through ``dispatch`` for a fleet spec; the commands with options of their
own live in their modules)."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from .cli_support import (EXIT_INVALID, EXIT_OK, EXIT_USAGE, cannot_write, diff_plans, diff_sides, load_sides, plural,
                          print_json, synth_outcome)

# The spec's modules (pydantic models, rules: 0.3 s) are imported where they are used, so that `synth` starts
# Node.js first (cli.main).
if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

    from .plan import Plan
    from .spec import Review


def review_of(path: str, *, strict: bool = False, warn: bool = True, environment: Optional[str] = None,
              base: bool = False) -> tuple["Plan", Review]:
    """Load a spec file and build its plan (every spec rule and plan invariant checked), printing warnings.

    The warnings of the spec rules and of the plan's invariants go through the spec's acknowledgements together:
    acknowledged ones are not printed; with ``strict`` any other one is an error (``SpecError``, exit 1).
    ``environment``: the plan of that environment of the spec. A spec with environments is deployed only as one
    of them: without ``environment`` it is an error unless ``base`` (validate checks the base too).
    """
    from .spec import SpecError, SpecIssue, acknowledge, check_spec, load_spec
    from .spec.acknowledgements import STRICT_NOTE
    from .spec.rules import RULES
    from .plan import build_plan
    from .plan.invariants import INVARIANTS, plan_warnings

    # errors, and acknowledgements of no warning rule, stop here; a structural error comes with the rules' errors
    # over the parts it leaves intact (rules_beside_structure)
    try:
        spec = load_spec(path, known=RULES + INVARIANTS, environment=environment)
    except SpecError as exc:
        from .spec.beside import rules_beside_structure

        beside = rules_beside_structure(path, environment, exc.issues)
        if not beside:
            raise
        raise SpecError([*exc.issues, *beside], exc.source, exc.note) from None
    if spec.environments and environment is None and not base:
        names = ", ".join(e.name for e in spec.environments)
        raise SpecError([SpecIssue("environments", f"lists {names}: this spec is deployed as one of them", names,
                                   f"choose one with --environment NAME (cdk: -c environment=NAME), e.g. "
                                   f"--environment {spec.environments[0].name}")], path)
    plan = build_plan(spec, base_dir=Path(path).resolve().parent)  # the invariants' errors stop here
    review = acknowledge([*check_spec(spec, today=dt.date.today()), *plan_warnings(plan)], spec.acknowledgements)
    if strict and review.warnings:
        raise SpecError(review.warnings, path, note=STRICT_NOTE)
    if warn:
        for issue in review.warnings:
            print(f"warning: {issue}", file=sys.stderr)
    return plan, review


def plan_of(path: str, *, strict: bool = False, warn: bool = True, environment: Optional[str] = None) -> "Plan":
    """The plan of a spec file (of one of its environments), as ``review_of`` checks and warns."""
    return review_of(path, strict=strict, warn=warn, environment=environment)[0]


def cmd_validate(args: argparse.Namespace) -> int:
    """The spec (or the one environment asked for); a spec with environments: the base and every environment,
    each validated as a whole, every problem of every one reported before exit 1.

    ``--format json``: one document on standard output (``hyperpod_gov/schemas/validate.json``), also when the
    spec is invalid; its warnings are in the document, not on standard error."""
    from .schemas import issue_json
    from .spec import SpecError
    from .spec.environments import environment_names
    from .spec.loader import read_yaml

    as_json = getattr(args, "format", "text") == "json"
    checked: list[dict[str, Any]] = []
    issues: list[dict[str, Any]] = []
    if args.environment is not None:
        chosen: list[Optional[str]] = [args.environment]
    else:
        try:
            chosen = [None, *environment_names(read_yaml(args.spec))]
        except SpecError as exc:
            if not as_json:
                raise
            print_json({"spec": args.spec, "valid": False, "checked": [{"environment": None, "valid": False}],
                        "issues": [issue_json(i, None) for i in exc.issues]})
            return EXIT_INVALID
    failed: list[SpecError] = []
    for environment in chosen:
        try:
            plan, review = review_of(args.spec, strict=args.strict, environment=environment, base=True,
                                     warn=not as_json)
        except SpecError as exc:
            failed.append(exc)
            checked.append({"environment": environment, "valid": False})
            issues += [issue_json(i, environment) for i in exc.issues]
            continue
        mode = "Slurm" if plan.slurm is not None else f"{plan.mode} mode"
        checked.append({"environment": environment, "valid": True, "teams": len(plan.tenants),
                        "mode": "slurm" if plan.slurm is not None else plan.mode,
                        "acknowledged": len(review.acknowledged), "unusedAcknowledgements": list(review.unused)})
        issues += [issue_json(i, environment) for i in review.warnings]
        if as_json:
            continue
        acknowledged = f", {plural(len(review.acknowledged), 'warning')} acknowledged" if review.acknowledged else ""
        which = f" (environment {environment}: stacks {plan.name}-*)" if environment else ""
        print(f"{args.spec}{which}: valid ({len(plan.tenants)} teams, {mode}){acknowledged}")
        for i in review.unused:
            print(f"note: acknowledgements[{i}] accepts no finding; remove it if what it accepted is fixed",
                  file=sys.stderr)
    if as_json:
        print_json({"spec": args.spec, "valid": not failed, "checked": checked, "issues": issues})
        return EXIT_INVALID if failed else EXIT_OK
    if len(failed) == 1:
        raise failed[0]
    if failed:
        for exc in failed[:-1]:
            print(exc.render(), file=sys.stderr)
        raise failed[-1]
    return EXIT_OK


def cmd_explain(args: argparse.Namespace) -> int:
    """The allocation in words, or (``--format json``) as one document: ``hyperpod_gov/schemas/explain.json``."""
    from .explain import explain, explain_json

    if getattr(args, "format", "text") == "json":
        plan, review = review_of(args.spec, strict=args.strict, environment=args.environment, warn=False)
        print_json(explain_json(plan, review.warnings, environment=args.environment))
        return EXIT_OK
    sys.stdout.write(explain(plan_of(args.spec, strict=args.strict, environment=args.environment)))
    return EXIT_OK


def cmd_onboard(args: argparse.Namespace) -> int:
    from .onboard import onboarding_team, render_onboarding, render_onboarding_html

    plan = plan_of(args.spec, strict=args.strict, environment=args.environment)
    render = render_onboarding_html if getattr(args, "format", "markdown") == "html" else render_onboarding
    sys.stdout.write(render(plan, onboarding_team(plan, args.team)))
    return EXIT_OK


def cmd_synth(args: argparse.Namespace) -> int:
    import tempfile

    from .cdk_start import import_all, start_cdk_imports
    from .plan.addon_defaults import kubectl_layer
    from .template_checks import LARGE_PLAN_TEAMS, shared

    # Node.js starts and loads the CDK's packages while Python reads and plans the spec (on two cores about a
    # third of a second of the example's synth). A spec that fails, or an --out that cannot be written, stops here,
    # once those imports are done: before the template check starts or any app is built.
    started: Optional[tuple[ThreadPoolExecutor, Future[None]]] = getattr(args, "cdk_imports", None)
    if started is None:
        started = start_cdk_imports()
    with started[0] as loading:
        loaded = [started[1]]
        plan = plan_of(args.spec, strict=args.strict, environment=args.environment)
        if plan.slurm is None:  # the kubectl layer of the cluster's version: a 36 MB tarball to digest
            loaded.append(loading.submit(import_all, [kubectl_layer(plan.cluster.kubernetes_version)[0]]))
        out = Path(args.out)
        try:
            out.mkdir(parents=True, exist_ok=True)
            tempfile.TemporaryFile(dir=out).close()
        except OSError as exc:  # --out names a file, an unwritable folder...
            raise cannot_write(out, exc) from None
        # CDK's template check builds its engine while the app is imported and built
        checks = shared(tier_up=len(plan.tenants) >= LARGE_PLAN_TEAMS)
        for future in loaded:  # jsii's channel to Node.js serves one thread at a time: the imports end first
            future.result()
    from hyperpod_gov.stacks.app import synth  # the composition root

    counts: dict[str, int] = {}
    return synth_outcome(out, lambda: synth(plan, out, checks=checks, resource_counts=counts),
                         # counted as the check finished
                         lambda stack, template: f"{stack.stack_name}: {counts[template.name]} resources -> {template}",
                         strict=args.strict)


def cmd_diff(args: argparse.Namespace) -> int:
    """What a spec change does: governance changes (privilege marked), contract reviews, the simulated effect
    (``--trace``), resource changes; ``--format json``: one document, ``hyperpod_gov/schemas/diff.json``."""
    from .spec import SpecError, SpecIssue

    chosen = diff_sides(args)
    if chosen is None:
        return EXIT_USAGE
    sides, title = chosen
    old, new = load_sides(sides, lambda path, environment, warn: plan_of(path, strict=args.strict, warn=warn,
                                                                         environment=environment))
    if args.trace and (old.slurm is not None or new.slurm is not None):
        raise SpecError([SpecIssue("--trace", SLURM_NOT_SIMULATED, args.trace,
                                   "leave --trace out when either spec has cluster.orchestrator: slurm")])
    def snapshots() -> tuple[Any, Any]:
        from .testing import synth_snapshot

        return synth_snapshot(old), synth_snapshot(new)

    document, changed = diff_plans(args, old, new, title, None if args.governance_only else snapshots)
    if document is not None:
        print_json(document)
    return EXIT_INVALID if args.fail and changed else EXIT_OK


SLURM_NOT_SIMULATED = "the simulator models Kueue; Slurm specs are not simulated"


def _refuse_slurm_simulation(path: str, what: str) -> None:
    """Refuse a Slurm-orchestrated spec before the simulator reads it: it replays Kueue's admission, which a Slurm
    cluster does not run (read as plain YAML, so the simulator's own loading stays as it is)."""
    from .spec import SpecError, SpecIssue
    from .spec.loader import read_yaml

    try:
        raw = read_yaml(path)
    except (OSError, SpecError):
        return  # the simulator reports an unreadable spec itself
    cluster = raw.get("cluster") if isinstance(raw, dict) else None
    if isinstance(cluster, dict) and cluster.get("orchestrator") == "slurm":
        raise SpecError([SpecIssue("cluster.orchestrator", SLURM_NOT_SIMULATED, "slurm",
                                   f"{what} with cluster.orchestrator: eks; `hyperpod-gov explain {path}` shows how "
                                   "this spec's accounts, QOS and partitions share the cluster")], path)


def _simulate(args: argparse.Namespace) -> int:
    from .review_pack.fleet import fleet_simulation_html
    from .review_pack.page import simulation_html
    from .simulate.cli import run

    for path, what in ((args.spec, "simulate a spec"), (args.compare, "compare with a spec")):
        if path:
            _refuse_slurm_simulation(path, what)
    return run(args, html=simulation_html, fleet_html=fleet_simulation_html)


def cmd_schema(args: argparse.Namespace) -> int:
    from .spec import GovernanceSpec

    schema = GovernanceSpec.model_json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "hyperpod-gov governance spec"
    print(json.dumps(schema, indent=2, sort_keys=True))
    return EXIT_OK
