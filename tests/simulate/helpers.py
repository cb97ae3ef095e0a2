"""Build scenarios tersely and run them through the engine's JSON output."""

from __future__ import annotations

from typing import Any, Optional

from hyperpod_gov.simulate import parse_scenario, simulate
from hyperpod_gov.simulate.report import result_json


def cq(name: str, cpu: Any = None, *, cohort: Optional[str] = None, bl: Any = None, ll: Any = None,
       within: Optional[str] = None, reclaim: Optional[str] = None, bwc: Optional[str] = None,
       threshold: Optional[int] = None, weight: Any = None, strategy: Optional[str] = None,
       flavors: Optional[list] = None, fungibility: Optional[dict] = None, resource: str = "cpu") -> dict:
    """A ClusterQueue with one flavor 'default' holding ``cpu`` (or the given ``flavors``)."""
    q: dict[str, Any] = {"name": name}
    if cohort:
        q["cohort"] = cohort
    if flavors is None:
        r: dict[str, Any] = {"nominal": cpu}
        if bl is not None:
            r["borrowingLimit"] = bl
        if ll is not None:
            r["lendingLimit"] = ll
        flavors = [{"name": "default", "resources": {resource: r}}]
    q["flavors"] = flavors
    p: dict[str, Any] = {}
    if within:
        p["withinClusterQueue"] = within
    if reclaim:
        p["reclaimWithinCohort"] = reclaim
    if bwc:
        p["borrowWithinCohort"] = {"policy": bwc, "maxPriorityThreshold": threshold}
    if p:
        q["preemption"] = p
    if weight is not None:
        q["fairSharingWeight"] = weight
    if strategy:
        q["queueingStrategy"] = strategy
    if fungibility:
        q["flavorFungibility"] = fungibility
    return q


def wl(name: str, queue: str, cpu: Any = None, *, priority: int = 0, admitted: Optional[str] = None,
       created: Optional[float] = None, duration: Optional[float] = None, requests: Optional[dict] = None,
       at: float = 0) -> dict:
    w: dict[str, Any] = {"name": name, "queue": queue, "requests": requests or {"cpu": cpu}, "priority": priority}
    if admitted:
        w["admitted"] = {"flavor": admitted, "at": at}
    if created is not None:
        w["created"] = created
    if duration is not None:
        w["duration"] = duration
    return w


def run(queues: list, workloads: list, *, cycles: Optional[int] = None, fair: bool = False,
        strategies: Optional[list] = None, events: Optional[list] = None, until: Optional[float] = None) -> dict:
    data: dict[str, Any] = {"queues": queues, "workloads": workloads, "fairSharing": fair}
    if strategies:
        data["preemptionStrategies"] = strategies
    if events:
        data["events"] = events
    if until is not None:
        data["until"] = until
    return result_json(simulate(parse_scenario(data), cycles=cycles))


def preempted(out: dict) -> set[tuple[str, str]]:
    return {(p["victim"], p["reason"]) for p in out["preemptions"]}


def state(out: dict, name: str) -> str:
    return out["workloads"][name]["state"]
