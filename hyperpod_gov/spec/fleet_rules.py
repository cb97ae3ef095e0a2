"""The fleet rules that read only the fleet-level keys (``FleetDocument``): cluster names and what dispatch names.

They run before the fleet is expanded into its members (a member's name is ``<fleet name>-<cluster>``, so a name
too long would fail in every member instead). The rules that compare the members' plans, and dispatch's needs of
each member (kueue mode, EKS), are in ``hyperpod_gov.plan.fleet_rules``.
"""

from __future__ import annotations

from typing import Iterator

from .errors import SpecIssue
from .fleet_document import MAX_WORKERS, FleetDocument
from .rulebook import RuleBook, rule
from .types import MAX_PREFIX


@rule("HPG-F001", "error", "Every cluster of a fleet has its own name (the name keys its stacks, quotas and "
      "dispatch).")
def fleet_cluster_names_unique(doc: FleetDocument) -> Iterator[SpecIssue]:
    names = [c.name for c in doc.clusters]
    for i, name in enumerate(names):
        if name in names[:i]:
            yield SpecIssue(f"clusters[{i}].name", f"names cluster {name!r} a second time (clusters["
                            f"{names.index(name)}])", name, "give every cluster its own name")


@rule("HPG-F002", "error", f"`<fleet name>-<cluster name>` is at most {MAX_PREFIX} characters: it is the member's "
      "spec name, which prefixes its stack, IAM role and bucket names.")
def fleet_member_name_length(doc: FleetDocument) -> Iterator[SpecIssue]:
    for i, cluster in enumerate(doc.clusters):
        member = f"{doc.name}-{cluster.name}"
        if len(member) > MAX_PREFIX:
            room = MAX_PREFIX - len(doc.name) - 1
            fix = (f"use a cluster name of at most {room} characters (e.g. {cluster.name[:room].rstrip('-')!r}) or "
                   "a shorter fleet name") if room > 0 else f"use a fleet name shorter than {MAX_PREFIX - 1} characters"
            yield SpecIssue(f"clusters[{i}].name", f"makes the member's name {member!r} {len(member)} characters "
                            f"long; names are at most {MAX_PREFIX} (they prefix IAM role and bucket names)",
                            cluster.name, fix)


@rule("HPG-F003", "error", "fleet.dispatch names clusters of the fleet, each worker once.")
def fleet_dispatch_names_clusters(doc: FleetDocument) -> Iterator[SpecIssue]:
    dispatch = doc.fleet.dispatch
    if dispatch is None:
        return
    names = [c.name for c in doc.clusters]
    known = f"use one of the fleet's clusters: {', '.join(names)}"
    if dispatch.manager not in names:
        yield SpecIssue("fleet.dispatch.manager", "is not a cluster of the fleet", dispatch.manager, known)
    for k, worker in enumerate(dispatch.workers):
        if worker not in names:
            yield SpecIssue(f"fleet.dispatch.workers[{k}]", "is not a cluster of the fleet", worker, known)
        elif worker in dispatch.workers[:k]:
            yield SpecIssue(f"fleet.dispatch.workers[{k}]", "names a worker a second time (MultiKueueConfig's "
                            "clusters must be unique)", worker, "list each worker once")


@rule("HPG-F004", "error", "The MultiKueue manager is not one of its own workers (Kueue: \"We do not currently "
      "support running the manager cluster as one of the workers for itself\").")
def fleet_manager_not_worker(doc: FleetDocument) -> Iterator[SpecIssue]:
    dispatch = doc.fleet.dispatch
    if dispatch is not None and dispatch.manager in dispatch.workers:
        k = dispatch.workers.index(dispatch.manager)
        yield SpecIssue(f"fleet.dispatch.workers[{k}]", "is the manager itself: Kueue (v0.19) does not support "
                        "running the manager cluster as one of the workers for itself", dispatch.manager,
                        "remove it from the workers, or make a small cluster of its own the manager")


@rule("HPG-F005", "error", f"Dispatch has at most {MAX_WORKERS} workers (MultiKueueConfig.spec.clusters holds at "
      f"most {MAX_WORKERS}).")
def fleet_dispatch_worker_limit(doc: FleetDocument) -> Iterator[SpecIssue]:
    dispatch = doc.fleet.dispatch
    if dispatch is not None and len(dispatch.workers) > MAX_WORKERS:
        yield SpecIssue("fleet.dispatch.workers", f"lists {len(dispatch.workers)} workers; Kueue's "
                        f"MultiKueueConfig takes at most {MAX_WORKERS}", list(dispatch.workers),
                        f"keep at most {MAX_WORKERS} workers (the most preferred first)")


@rule("HPG-F012", "error", "With pipeline rings, the dispatch manager is in a ring no earlier than any of its "
      "workers: the manager dispatches to connected workers only, into the team's namespace and LocalQueue there, "
      "so each worker's ring deploys those (and the MultiKueue service account) before the manager's uses them.")
def fleet_manager_ring_after_workers(doc: FleetDocument) -> Iterator[SpecIssue]:
    # Kueue v0.19.2, pkg/controller/admissionchecks/multikueue: workload.go dispatches only to connected clusters
    # (remoteClientsForAC) and creates the remote Workload in the local one's namespace, logging a failed creation
    # and retrying; multikueuecluster.go connects by watching Workloads through the worker's kubeconfig (the
    # worker's MultiKueue service account); admissioncheck.go makes the check inactive ("NoUsableClusters") when no
    # worker is connected. A manager ahead of a worker dispatches a new team's work to a worker without its
    # namespace until that worker's ring is approved and deployed.
    dispatch = doc.fleet.dispatch
    rings = {c.name: c.ring for c in doc.clusters}
    if dispatch is None or rings.get(dispatch.manager) is None:
        return
    later = [(w, rings[w]) for w in dispatch.workers if rings.get(w) is not None
             and rings[w] > rings[dispatch.manager]]  # type: ignore[operator]
    if later:
        last = max(r for _, r in later)
        m = [c.name for c in doc.clusters].index(dispatch.manager)
        shown = ", ".join(f"{w} in ring {r}" for w, r in later)
        yield SpecIssue(f"clusters[{m}].ring", f"puts the dispatch manager {dispatch.manager} in ring "
                        f"{rings[dispatch.manager]}, before its workers {shown}: it would dispatch work (a new "
                        "team's, to a new worker) to workers that do not have the team's namespace and queue, or "
                        "the MultiKueue service account, until their ring deploys", rings[dispatch.manager],
                        f"put the manager in ring {last} (its last worker's) or later, or its workers in earlier "
                        "rings")


FLEET_DOCUMENT_RULES = RuleBook("fleet-document", (
    fleet_cluster_names_unique, fleet_member_name_length, fleet_dispatch_names_clusters, fleet_manager_not_worker,
    fleet_dispatch_worker_limit, fleet_manager_ring_after_workers,
))
