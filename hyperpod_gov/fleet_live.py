"""``drift`` and ``preflight`` of a fleet spec (``clusters:``): the single-cluster command run for every member (or
the one ``--cluster`` names), each in its own account and region, each under a heading; the exit status is the
worst of the members' by the command's own contract (docs/fleet.md, "drift, preflight and diff").

``dispatch.drift`` and ``dispatch.preflight`` hand a fleet spec over here (``live.cli.run_drift`` and
``live.preflight.run_preflight`` read one cluster's). ``clients`` and ``kube``
(cluster name -> a client factory / a Kubernetes connector) let tests say how each member is reached; by default
each member gets boto3 clients in its own capacity region, as the single-cluster command makes them (``--region``
and ``--profile``, when given, apply to every member).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import io
import json
import sys
from typing import TYPE_CHECKING, Any, Callable, Optional

from .fleet_commands import fleet_review
from .live.cli import drift_plan
from .live.preflight import preflight_spec

if TYPE_CHECKING:
    from .plan.fleet import FleetPlan

EXIT_OK, EXIT_FOUND, EXIT_CANNOT_CHECK = 0, 1, 2

# Options that address one cluster (a kubeconfig context, a Slurm controller's dump): with several members they
# would be read against the wrong ones, so they need --cluster.
_ONE_CLUSTER = {"drift": (("kubeconfig", "--kubeconfig"), ("kube_context", "--context"),
                          ("slurm_dump", "--slurm-dump"), ("slurm_qos", "--slurm-qos")),
                "preflight": (("kubeconfig", "--kubeconfig"), ("kube_context", "--context"))}


def worst(command: str, codes: list[int]) -> int:
    """The fleet's exit status from its members': drift (docs/live.md) 2 if any member could not be checked, else
    1 if any drifted, else 0; preflight as its checks are summed within one cluster: 1 if any member has something
    to fix, else 2 if any could not be checked, else 0."""
    if command == "preflight" and EXIT_FOUND in codes:
        return EXIT_FOUND
    return max(codes, default=EXIT_OK)


def chosen_clusters(command: str, args: argparse.Namespace, fleet: "FleetPlan") -> Optional[list[str]]:
    """The members to check (``--cluster`` or all), or None after saying why not (unknown name, a one-cluster
    option without ``--cluster``)."""
    names = list(fleet.plans)
    wanted = getattr(args, "cluster", None)
    if wanted is not None:
        if wanted not in fleet.plans:
            print(f"hyperpod-gov {command}: --cluster {wanted}: fleet {fleet.name} has no such cluster; its clusters: "
                  f"{', '.join(names)}", file=sys.stderr)
            return None
        return [wanted]
    given = [flag for attr, flag in _ONE_CLUSTER[command] if getattr(args, attr, None)]
    if given and len(names) > 1:
        print(f"hyperpod-gov {command}: {' and '.join(given)} address one cluster; fleet {fleet.name} has "
              f"{len(names)} ({', '.join(names)}): add --cluster NAME", file=sys.stderr)
        return None
    return names


def _load(command: str, args: argparse.Namespace) -> Optional[tuple["FleetPlan", list[str]]]:
    """The fleet and the members to check (``chosen_clusters``), or None after saying why not (an invalid fleet
    spec, or the members cannot be chosen)."""
    from .spec import SpecError

    try:
        fleet = fleet_review(args.spec, environment=getattr(args, "environment", None), warn=False)
    except SpecError as exc:
        source = "" if exc.source else f"{args.spec}: "
        print(f"hyperpod-gov {command}: cannot check against an invalid fleet spec.\n{source}{exc.render()}",
              file=sys.stderr)
        return None
    clusters = chosen_clusters(command, args, fleet)
    return None if clusters is None else (fleet, clusters)


def _run_members(command: str, args: argparse.Namespace, fleet: "FleetPlan", clusters: list[str],
                 run: Callable[[str, argparse.Namespace], int]) -> int:
    """Run ``run(cluster, args)`` for each member, its output under a heading (text) or gathered into one document
    (json: ``{"fleet", "clusters": {name: <the single-cluster document> + "exitCode" | {"exitCode", "error"}},
    "exitCode"}``); a member's standard error is kept, each line naming the member."""
    as_json = getattr(args, "format", "text") == "json"
    codes: dict[str, int] = {}
    documents: dict[str, Any] = {}
    for cluster in clusters:
        plan = fleet.plans[cluster]
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            codes[cluster] = run(cluster, args)
        if err.getvalue():
            sys.stderr.write("".join(f"[{cluster}] {line}\n" for line in err.getvalue().splitlines()))
        if as_json:
            text = out.getvalue().strip()
            document = json.loads(text) if text else {"error": err.getvalue().strip()}
            documents[cluster] = {**document, "exitCode": codes[cluster]}
            continue
        heading = (f"cluster {cluster} (account {plan.account}, {getattr(args, 'region', None) or plan.region}; "
                   f"{plan.cluster_name}):")
        body = out.getvalue() or "could not check (the reason is on standard error)\n"
        sys.stdout.write(f"{heading}\n{body if body.endswith(chr(10)) else body + chr(10)}\n")
    code = worst(command, list(codes.values()))
    if as_json:
        sys.stdout.write(json.dumps({"fleet": fleet.name, "clusters": documents, "exitCode": code}, indent=2,
                                    sort_keys=True) + "\n")
    else:
        sys.stdout.write(f"fleet {fleet.name}: " + ", ".join(f"{c} {_WORDS[command][n]}" for c, n in codes.items())
                         + "\n")
    return code


_WORDS = {"drift": {0: "no drift", 1: "drift", 2: "could not check"},
          "preflight": {0: "ready", 1: "something to fix", 2: "could not check"}}


def multikueue_objects_of(fleet: "FleetPlan") -> dict[str, list[dict[str, Any]]]:
    """Each dispatch member's MultiKueue objects, as the synth adds them to its manifests
    (``charts.fleet_objects.fleet_cluster_objects``, imported here when asked: the charts start Node.js)."""
    from .charts.fleet_objects import fleet_cluster_objects

    return fleet_cluster_objects(fleet)


def run_fleet_drift(args: argparse.Namespace, clients: Optional[Callable[[str], Any]] = None,
                    kube: Optional[Callable[[str], Any]] = None) -> int:
    """``drift FLEET.yaml [--cluster NAME]``: each member's drift (its MultiKueue objects compared too)."""
    loaded = _load("drift", args)
    if loaded is None:
        return EXIT_CANNOT_CHECK
    fleet, clusters = loaded
    # the charts (cdk8s) start Node.js: only when the Kubernetes side is read, as for one cluster
    extra = {} if getattr(args, "no_kubernetes", False) else multikueue_objects_of(fleet)

    def run(cluster: str, a: argparse.Namespace) -> int:
        return drift_plan(a, fleet.plans[cluster], None if clients is None else clients(cluster),
                          None if kube is None else kube(cluster), tuple(extra.get(cluster, ())))

    return _run_members("drift", args, fleet, clusters, run)


def run_fleet_preflight(args: argparse.Namespace, clients: Optional[Callable[[str], Any]] = None,
                        kube: Optional[Callable[[str], Any]] = None) -> int:
    """``preflight FLEET.yaml [--cluster NAME]``: each member's preflight (``--endpoint-policies DIR``: each
    member's into DIR/<cluster>)."""
    loaded = _load("preflight", args)
    if loaded is None:
        return EXIT_CANNOT_CHECK
    fleet, clusters = loaded

    def run(cluster: str, a: argparse.Namespace) -> int:
        spec = fleet.fleet.members[cluster]
        member = copy.copy(a)
        if getattr(a, "endpoint_policies", None):
            member.endpoint_policies = f"{a.endpoint_policies}/{cluster}"
        return preflight_spec(member, spec, None if clients is None else clients(cluster),
                              None if kube is None else kube(cluster))

    return _run_members("preflight", args, fleet, clusters, run)
