"""validate and explain of a fleet spec (``clusters:``): every member checked, each cluster explained under its own
heading, then the fleet as a whole (``dispatch`` hands a fleet spec over here; ``commands`` reads one cluster's)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any, Optional

from .cli_support import EXIT_INVALID, EXIT_OK, cannot_write, print_json, synth_outcome

if TYPE_CHECKING:
    from .plan.amounts import Amounts
    from .plan.fleet import FleetPlan


def is_fleet_file(path: str) -> bool:
    """Whether the spec file is a fleet (``spec.fleet.is_fleet_spec``)."""
    from .spec.fleet import is_fleet_spec

    return is_fleet_spec(path)


def fleet_review(path: str, *, strict: bool = False, environment: Optional[str] = None,
                 warn: bool = True) -> "FleetPlan":
    """Load a fleet spec file and build every member's plan (every spec rule, invariant and fleet rule checked),
    printing the warnings no member acknowledges. Raises ``SpecError``."""
    from .plan.fleet import build_fleet
    from .plan.invariants import INVARIANTS
    from .spec.fleet import load_fleet
    from .spec.rules import RULES

    fleet = build_fleet(load_fleet(path, environment=environment, strict=strict, known=RULES + INVARIANTS),
                        strict=strict)
    if warn:
        for issue in fleet.warnings:
            print(f"warning: {issue}", file=sys.stderr)
    return fleet


def _summary(fleet: "FleetPlan") -> str:
    clusters = ", ".join(fleet.plans)
    teams = len(fleet.fleet.teams)
    return f"fleet of {len(fleet.plans)} clusters: {clusters}; {teams} team{'' if teams == 1 else 's'}"


def validate_fleet(args: argparse.Namespace) -> int:
    """The fleet (or the one environment asked for; without one: the base and every environment), every problem
    of every member at once; ``--format json`` as validate.json, each checked entry naming its clusters."""
    from .schemas import issue_json
    from .spec import SpecError
    from .spec.environments import environment_names
    from .spec.loader import read_yaml

    as_json = getattr(args, "format", "text") == "json"
    chosen: list[Optional[str]] = ([args.environment] if args.environment is not None
                                   else [None, *environment_names(read_yaml(args.spec))])
    checked: list[dict[str, Any]] = []
    issues: list[dict[str, Any]] = []
    failed: list[SpecError] = []
    for environment in chosen:
        try:
            fleet = fleet_review(args.spec, strict=args.strict, environment=environment, warn=not as_json)
        except SpecError as exc:
            failed.append(exc)
            checked.append({"environment": environment, "valid": False})
            issues += [issue_json(i, environment) for i in exc.issues]
            continue
        checked.append({"environment": environment, "valid": True, "teams": len(fleet.fleet.teams),
                        "clusters": [{"name": c, "mode": "slurm" if p.slurm is not None else p.mode,
                                      "account": p.account, "region": p.region} for c, p in fleet.plans.items()]})
        issues += [issue_json(i, environment) for i in fleet.warnings]
        if not as_json:
            which = f" (environment {environment}: stacks {fleet.name}-*)" if environment else ""
            print(f"{args.spec}{which}: valid ({_summary(fleet)})")
    if as_json:
        print_json({"spec": args.spec, "valid": not failed, "checked": checked, "issues": issues})
        return EXIT_INVALID if failed else EXIT_OK
    for exc in failed[:-1]:
        print(exc.render(), file=sys.stderr)
    if failed:
        raise failed[-1]
    return EXIT_OK


def amounts_words(amounts: "Amounts", kind: Optional[str]) -> str:
    """An owned amount in the unit its quota counts: partitions, accelerators, or vCPU and memory."""
    if amounts.partitions:
        return ", ".join(f"{n} x {r}" for r, n in amounts.partitions)
    if kind and amounts.accelerators:
        return f"{amounts.accelerators} accelerators ({kind})"
    return f"{amounts.vcpu} vCPU, {amounts.memory_gib} GiB"


def fleet_section(fleet: "FleetPlan") -> str:
    """The fleet as a whole: per team its allocation per cluster and in total, and the dispatch."""
    from .plan.fleet import team_allocations

    kinds = {f.instance_type: f.accelerator_kind for p in fleet.plans.values() for f in p.flavors}
    lines = [f"Fleet {fleet.name} ({_summary(fleet)})", "", "Allocation per team (owned quota per cluster and in total):"]
    for alloc in team_allocations(fleet):
        lines.append(f"  {alloc.team}")
        width = max(len(c) for c, _ in alloc.per_cluster) if alloc.per_cluster else 5
        manager = fleet.fleet.dispatch.manager if fleet.fleet.dispatch else None
        for cluster, owned in alloc.per_cluster:
            shown = "; ".join(f"{t}: {amounts_words(a, kinds.get(t))}" for t, a in owned) or (
                "nothing owned (the dispatch manager: sends the team's work to the workers)" if cluster == manager
                else "nothing owned")
            lines.append(f"    {cluster.ljust(max(width, 5))}  {shown}")
        total = "; ".join(f"{t}: {amounts_words(a, kinds.get(t))}" for t, a in alloc.total) or "nothing owned"
        lines.append(f"    {'total'.ljust(max(width, 5))}  {total}")
        if alloc.accelerators:
            lines.append(f"    {''.ljust(max(width, 5))}  accelerators in all: "
                         + ", ".join(f"{n} {k}" for k, n in alloc.accelerators))
    dispatch = fleet.fleet.dispatch
    lines.append("")
    if dispatch is None:
        lines.append("Dispatch: none; each cluster takes the work submitted to it.")
    else:
        lines.append(f"Dispatch (Kueue MultiKueue): manager {dispatch.manager}; workers "
                     f"{', '.join(dispatch.workers)} (in order of preference).")
    from .plan.fleet_moves import moves_section

    moves = moves_section(fleet.fleet, fleet.plans)
    return "\n".join(lines) + "\n" + (f"\n{moves}" if moves else "")


def explain_fleet(args: argparse.Namespace) -> int:
    """Each cluster's explain under a heading, then the fleet section; ``--format json``: fleet-explain.json."""
    from .explain import explain, explain_json

    as_json = getattr(args, "format", "text") == "json"
    fleet = fleet_review(args.spec, strict=args.strict, environment=args.environment, warn=not as_json)
    if as_json:
        from .plan.fleet import team_allocations
        from .plan.fleet_moves import move_commands
        from .schemas import issue_json

        print_json({
            "fleet": fleet.name, "environment": args.environment,
            "clusters": [{"name": c, "account": p.account, "region": p.region,
                          "explain": explain_json(p, (), environment=args.environment)}
                         for c, p in fleet.plans.items()],
            "teams": [{"name": a.team,
                       "clusters": [{"cluster": c, "quota": [_owned_json(t, x) for t, x in owned]}
                                    for c, owned in a.per_cluster],
                       "total": [_owned_json(t, x) for t, x in a.total],
                       "accelerators": [{"kind": k, "count": n} for k, n in a.accelerators]}
                      for a in team_allocations(fleet)],
            "dispatch": (None if fleet.fleet.dispatch is None else
                         {"manager": fleet.fleet.dispatch.manager, "workers": list(fleet.fleet.dispatch.workers)}),
            "moves": [c.to_json() for c in move_commands(fleet.fleet, fleet.plans)],
            "warnings": [issue_json(i, args.environment) for i in fleet.warnings],
        })
        return EXIT_OK
    out = []
    for cluster, plan in fleet.plans.items():
        heading = f"Cluster {cluster} (account {plan.account}, {plan.region}; stacks {plan.name}-*)"
        out += [heading, "=" * len(heading), explain(plan), ""]
    out.append(fleet_section(fleet))
    sys.stdout.write("\n".join(out))
    return EXIT_OK


def _owned_json(instance_type: str, amounts: "Amounts") -> dict[str, Any]:
    return {"instanceType": instance_type, "accelerators": amounts.accelerators, "vcpu": amounts.vcpu,
            "memoryGib": amounts.memory_gib, "partitions": dict(amounts.partitions)}


def synth_fleet_command(args: argparse.Namespace) -> int:
    """``synth FLEET.yaml --out DIR``: every member's stacks in one assembly, each member's files in DIR/k8s/
    <cluster>/ (Slurm: DIR/slurm/<cluster>/), DIR/contracts/<cluster>/ and DIR/iam/<cluster>/, and each team's
    fleet allocation in DIR/contracts/_fleet/<team>.md."""
    import json
    import tempfile
    from pathlib import Path

    from .cdk_start import start_cdk_imports

    started = getattr(args, "cdk_imports", None) or start_cdk_imports()
    with started[0]:  # Node.js loads the CDK's packages while the fleet is read and planned
        fleet = fleet_review(args.spec, strict=args.strict, environment=args.environment)
        out = Path(args.out)
        try:
            out.mkdir(parents=True, exist_ok=True)
            tempfile.TemporaryFile(dir=out).close()
        except OSError as exc:
            raise cannot_write(out, exc) from None
        started[1].result()
    from .stacks.fleet_app import synth_fleet

    from .contracts.fleet import write_fleet_records

    def synth() -> Any:
        assembly = synth_fleet(fleet, out)
        write_fleet_records(fleet, out / "contracts")
        return assembly

    def line(stack: Any, template: Path) -> str:
        count = len(json.loads(template.read_text()).get("Resources", {}))
        return (f"{stack.stack_name} ({stack.environment.account}/{stack.environment.region}): {count} resources "
                f"-> {template}")

    return synth_outcome(out, synth, line, strict=args.strict)
