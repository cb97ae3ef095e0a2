"""``diff`` of two fleet specs (``clusters:``), or of two environments of one (``--against``): per cluster the
single-cluster diff of its two member plans (``cli_support.diff_plans``: governance changes, contract reviews,
resource changes unless ``--governance-only``) under ``cluster <name>:``, then the clusters added and removed and
a change of dispatch. ``--format json``: ``hyperpod_gov/schemas/fleet-diff.json``, each cluster's document as
diff.json. A fleet spec against a single-cluster spec is a usage error (exit 2): their members do not pair up.
``dispatch.diff`` hands a diff over here when either side is a fleet."""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional

from .cli_support import diff_plans, diff_sides, load_sides, print_json, usage_error
from .fleet_commands import fleet_review, is_fleet_file

if TYPE_CHECKING:
    from .diff import GovernanceChange
    from .plan.fleet import FleetPlan
    from .plan.fleet_move_diff import MoveInDiff
    from .plan.model import Plan

EXIT_OK, EXIT_INVALID = 0, 1


def _sides(args: argparse.Namespace) -> Optional[tuple[list[tuple[str, Optional[str], bool]], str]]:
    """The two (path, environment, warn) sides and the title, or None after a usage error."""
    from .spec import SpecIssue

    if args.trace:
        usage_error(SpecIssue("--trace", "is not simulated in a fleet diff", args.trace,
                              "leave --trace out; `hyperpod-gov simulate` replays a trace on one cluster's spec"))
        return None
    sides = diff_sides(args)
    if sides is None or args.against is not None:
        return sides
    kinds = {p: "a fleet spec (clusters:)" if is_fleet_file(p) else "a single-cluster spec (cluster:)"
             for p in (args.old, args.new)}
    if len(set(kinds.values())) > 1:
        usage_error(SpecIssue("diff", f"{args.old} is {kinds[args.old]} and {args.new} is {kinds[args.new]}: a "
                              "fleet's clusters do not pair with one spec", f"{args.old} {args.new}",
                              "diff two fleet specs, or two single-cluster specs"))
        return None
    return sides


def fleet_snapshots(fleet: "FleetPlan") -> dict[str, dict[str, Any]]:
    """Each member's ``testing.synth_snapshot``-shaped structure from one synth of the whole fleet: its stacks'
    templates (by name, the member's ``<name>-`` prefix, the longest that fits), its Kubernetes objects with the
    fleet's MultiKueue objects, and a Slurm member's files."""
    from .fleet_construct import fleet_manifests
    from .stacks.fleet_app import synth_fleet
    from .testing import normalise

    manifests = fleet_manifests(fleet)
    with tempfile.TemporaryDirectory(prefix="hyperpod-gov-") as tmp:
        assembly = synth_fleet(fleet, Path(tmp), manifests=manifests)
        templates = {s.stack_name: s.template for s in assembly.stacks}
    by_prefix = sorted(fleet.plans.items(), key=lambda item: -len(item[1].name))
    out: dict[str, dict[str, Any]] = {}
    for cluster, plan in fleet.plans.items():
        mine = {n: t for n, t in templates.items()
                if next((c for c, p in by_prefix if n.startswith(f"{p.name}-")), None) == cluster}
        snapshot: dict[str, Any] = {"templates": dict(sorted(mine.items())),
                                    "manifests": {"cluster": manifests[cluster].cluster,
                                                  "teams": manifests[cluster].teams}}
        if plan.slurm is not None:
            from .slurm.render import files

            snapshot["slurm"] = dict(sorted(files(plan).items()))
        out[cluster] = normalise(snapshot)
    return out


def _dispatch(fleet: "FleetPlan") -> Optional[dict[str, Any]]:
    d = fleet.fleet.dispatch
    return None if d is None else {"manager": d.manager, "workers": list(d.workers)}


def fleet_diff(args: argparse.Namespace) -> int:
    """The fleet diff (module docstring); exit 1 with ``--fail`` when anything changed, else 0."""
    sides = _sides(args)
    if sides is None:
        return 2
    paths, title = sides
    old, new = load_sides(paths, lambda path, environment, warn: fleet_review(path, strict=args.strict,
                                                                              environment=environment, warn=warn))
    as_json = getattr(args, "format", "text") == "json"
    moves, explained = _moves(args, old, new)
    if not as_json:  # the moves first: they explain count changes the clusters' sections then leave out
        for move in moves:
            print(move.words)
    snapshots: dict[str, Any] = {}

    def snapshots_of(cluster: str) -> Callable[[], tuple[Any, Any]]:
        def make() -> tuple[Any, Any]:
            if not snapshots:  # one synth of each whole fleet, on the first cluster that asks
                snapshots.update(old=fleet_snapshots(old), new=fleet_snapshots(new))
            return snapshots["old"][cluster], snapshots["new"][cluster]

        return make

    common = [c for c in new.plans if c in old.plans]
    added = [c for c in new.plans if c not in old.plans]
    removed = [c for c in old.plans if c not in new.plans]
    documents: dict[str, Any] = {}
    changed = bool(added or removed) or any(m.changed for m in moves)
    for cluster in common:
        member_title = f"{title}, cluster {cluster}"
        make = None if args.governance_only else snapshots_of(cluster)
        moved = _explained(explained.get(cluster, {}), new.plans[cluster])
        if as_json:
            documents[cluster], member_changed = diff_plans(args, old.plans[cluster], new.plans[cluster],
                                                            member_title, make, explained=moved)
        else:
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                _, member_changed = diff_plans(args, old.plans[cluster], new.plans[cluster], member_title, make,
                                               explained=moved)
            print(f"cluster {cluster}:")
            sys.stdout.write("".join(f"  {line}\n" for line in out.getvalue().splitlines()))
        changed = changed or member_changed
    dispatch = None
    if _dispatch(old) != _dispatch(new):
        dispatch = {"old": _dispatch(old), "new": _dispatch(new)}
        changed = True
    if as_json:
        print_json({"title": title, "moves": [m.to_json() for m in moves], "clusters": documents, "added": added,
                    "removed": removed, "dispatch": dispatch, "changed": changed})
    else:
        for cluster in added:
            plan = new.plans[cluster]
            print(f"cluster {cluster}: added (account {plan.account}, {plan.region}; stacks {plan.name}-*; "
                  f"{len(plan.tenants)} team{'' if len(plan.tenants) == 1 else 's'})")
        for cluster in removed:
            plan = old.plans[cluster]
            print(f"cluster {cluster}: removed (account {plan.account}, {plan.region}; its stacks {plan.name}-* "
                  "are no longer in this spec)")
        if dispatch is not None:
            print(f"dispatch: {_words(dispatch['old'])} -> {_words(dispatch['new'])}")
    return EXIT_INVALID if args.fail and changed else EXIT_OK


def _words(dispatch: Optional[dict[str, Any]]) -> str:
    if dispatch is None:
        return "none"
    return f"manager {dispatch['manager']}, workers {', '.join(dispatch['workers'])}"


def _moves(args: argparse.Namespace, old: "FleetPlan", new: "FleetPlan"
           ) -> tuple[tuple["MoveInDiff", ...], dict[str, dict[str, tuple[int, int]]]]:
    """The new spec's moves against the counts, and per cluster the count changes they explain (none with
    ``--against``: two environments' counts differ by design, not by a move)."""
    from .plan.fleet_move_diff import explained_counts, moves_in_diff

    if args.against is not None:
        return (), {}
    moves = moves_in_diff(old.fleet, old.plans, new.fleet, new.plans)
    return moves, explained_counts(moves)


def _explained(counts: dict[str, tuple[int, int]], new: "Plan") -> Callable[["GovernanceChange"], bool]:
    """The member's governance changes a matching move shows: its groups' instances (and guaranteed instances, which
    follow them), and the instance type's capacity when those groups' changes are all of it."""
    groups = {g.name: g for g in new.instance_groups}
    by_type: dict[str, int] = {}
    for name, (was, now) in counts.items():
        if not groups[name].instance_types:  # a flexible group's capacity is spread over its types
            by_type[groups[name].instance_type] = by_type.get(groups[name].instance_type, 0) + now - was

    def delta(change: "GovernanceChange") -> Optional[int]:
        ints = change.kind == "changed" and all(isinstance(v, int) and not isinstance(v, bool)
                                                for v in (change.old, change.new))
        return change.new - change.old if ints else None

    def explained(change: "GovernanceChange") -> bool:
        if change.view == "instance group" and change.key in counts:
            was, now = counts[change.key]
            return (change.label == "instances" and (change.old, change.new) == (was, now)) or (
                change.label == "guaranteed instances" and delta(change) == now - was)
        return (change.view == "capacity" and change.label == "(instances)" and change.key in by_type
                and delta(change) == by_type[change.key])

    return explained
