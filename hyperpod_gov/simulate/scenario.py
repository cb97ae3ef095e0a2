"""Load a queue-level scenario (YAML, SIMULATOR.md section 1), reporting every problem at once."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Optional

import yaml

from ..spec.errors import NO_VALUE, SpecError, SpecIssue
from .model import (
    DEFAULT_STRATEGIES,
    Event,
    FlavorFungibility,
    FlavorQuotas,
    Preemption,
    QueueDef,
    ResourceQuota,
    Scenario,
    WorkloadDef,
)
from .quantities import parse_quantity
from .scenario_nodes import parse_nodes
from .scenario_parse import Issues, as_known_name, as_mapping, as_name, as_number, unknown_keys
from .yaml_load import Unusual, load_plain

_TOP = ("fairSharing", "preemptionStrategies", "queues", "workloads", "events", "until", "nodeGroups", "scaleUpDelay",
        "capacity")
_QUEUE = ("name", "cohort", "fairSharingWeight", "queueingStrategy", "preemption", "flavorFungibility", "flavors")
_WORKLOAD = ("name", "queue", "priority", "created", "requests", "admitted", "duration")
_WITHIN = ("Never", "LowerPriority", "LowerOrNewerEqualPriority")
_RECLAIM = ("Never", "LowerPriority", "Any")
_BORROW = ("Never", "LowerPriority")
_FUNGIBILITY = ("MayStopSearch", "TryNextFlavor")
_STRATEGIES = ("LessThanOrEqualToFinalShare", "LessThanInitialShare")
_QUANTITY_FIX = "write a non-negative quantity such as 8, '500m' or '64Gi'"


def _choice(issues: Issues, path: str, value: Any, allowed: tuple[str, ...], default: str) -> str:
    if value is None:
        return default
    if value not in allowed:
        issues.add(path, "is not one of the allowed values", value, f"use one of {', '.join(allowed)}")
        return default
    return value


def _requests(issues: Issues, path: str, value: Any) -> tuple[tuple[str, int], ...]:
    data = as_mapping(issues, path, value, "write requests as a mapping, e.g. {cpu: 4, nvidia.com/gpu: 1}")
    if data is None:
        return ()
    if not data:
        issues.add(path, "is empty", NO_VALUE, "request at least one resource, e.g. {cpu: 1}")
    out = []
    for resource, amount in data.items():
        parsed = parse_quantity(str(resource), amount)
        if parsed is None:
            issues.add(f"{path}.{resource}", "is not a quantity", amount, _QUANTITY_FIX)
        elif parsed > 0:
            out.append((str(resource), parsed))
    return tuple(out)


def _queue(issues: Issues, path: str, data: Any) -> Optional[QueueDef]:
    q = as_mapping(issues, path, data, "write each queue as a mapping with name and flavors")
    if q is None:
        return None
    unknown_keys(issues, path, q, _QUEUE)
    name = as_name(issues, f"{path}.name", q.get("name"))
    cohort = q.get("cohort")
    if cohort is not None and (not isinstance(cohort, str) or not cohort):
        issues.add(f"{path}.cohort", "is not a name", cohort, "name the cohort, e.g. 'all', or leave the key out")
        cohort = None
    weight = as_number(issues, f"{path}.fairSharingWeight", q.get("fairSharingWeight"), default=1, minimum=0)
    strategy = _choice(issues, f"{path}.queueingStrategy", q.get("queueingStrategy"),
                       ("BestEffortFIFO", "StrictFIFO"), "BestEffortFIFO")
    preemption = Preemption()
    p = as_mapping(issues, f"{path}.preemption", q.get("preemption"), "write preemption as a mapping")
    if p:
        unknown_keys(issues, f"{path}.preemption", p, ("withinClusterQueue", "reclaimWithinCohort", "borrowWithinCohort"))
        bwc = as_mapping(issues, f"{path}.preemption.borrowWithinCohort", p.get("borrowWithinCohort"),
                         "write {policy: LowerPriority, maxPriorityThreshold: 100}") or {}
        unknown_keys(issues, f"{path}.preemption.borrowWithinCohort", bwc, ("policy", "maxPriorityThreshold"))
        preemption = Preemption(
            within_cluster_queue=_choice(issues, f"{path}.preemption.withinClusterQueue", p.get("withinClusterQueue"),
                                         _WITHIN, "Never"),
            reclaim_within_cohort=_choice(issues, f"{path}.preemption.reclaimWithinCohort",
                                          p.get("reclaimWithinCohort"), _RECLAIM, "Never"),
            borrow_within_cohort=_choice(issues, f"{path}.preemption.borrowWithinCohort.policy", bwc.get("policy"),
                                         _BORROW, "Never"),
            max_priority_threshold=as_number(issues, f"{path}.preemption.borrowWithinCohort.maxPriorityThreshold",
                                             bwc.get("maxPriorityThreshold"), default=None, integer=True),
        )
    fungibility = FlavorFungibility()
    ff = as_mapping(issues, f"{path}.flavorFungibility", q.get("flavorFungibility"),
                    "write flavorFungibility as a mapping")
    if ff:
        unknown_keys(issues, f"{path}.flavorFungibility", ff, ("whenCanBorrow", "whenCanPreempt"))
        fungibility = FlavorFungibility(
            when_can_borrow=_choice(issues, f"{path}.flavorFungibility.whenCanBorrow", ff.get("whenCanBorrow"),
                                    _FUNGIBILITY, "MayStopSearch"),  # type: ignore[arg-type]
            when_can_preempt=_choice(issues, f"{path}.flavorFungibility.whenCanPreempt", ff.get("whenCanPreempt"),
                                     _FUNGIBILITY, "TryNextFlavor"),  # type: ignore[arg-type]
        )
    flavors = []
    raw_flavors = q.get("flavors")
    if not isinstance(raw_flavors, list) or not raw_flavors:
        issues.add(f"{path}.flavors", "is missing or not a list of flavors", raw_flavors if raw_flavors is not None
                   else NO_VALUE, "list at least one flavor: - {name: on-demand, resources: {cpu: {nominal: 8}}}")
        raw_flavors = []
    seen: set[str] = set()
    for j, f in enumerate(raw_flavors):
        fp = f"{path}.flavors[{j}]"
        fm = as_mapping(issues, fp, f, "write each flavor as {name: ..., resources: {...}}")
        if fm is None:
            continue
        unknown_keys(issues, fp, fm, ("name", "resources"))
        fname = as_name(issues, f"{fp}.name", fm.get("name"))
        if fname in seen:
            issues.add(f"{fp}.name", "repeats a flavor of this queue", fname, "list each flavor once")
        seen.add(fname or "")
        res = as_mapping(issues, f"{fp}.resources", fm.get("resources"), "write resources as {cpu: {nominal: 8}}")
        if res is not None and not res:
            issues.add(f"{fp}.resources", "is empty", NO_VALUE, "give at least one resource, e.g. {cpu: {nominal: 8}}")
        resources = []
        for r, spec in (res or {}).items():
            rp = f"{fp}.resources.{r}"
            rm = as_mapping(issues, rp, spec, "write {nominal: 8, borrowingLimit: 4, lendingLimit: 2}")
            if rm is None:
                continue
            unknown_keys(issues, rp, rm, ("nominal", "borrowingLimit", "lendingLimit"))
            values = {}
            for key in ("nominal", "borrowingLimit", "lendingLimit"):
                raw = rm.get(key)
                if raw is None:
                    if key == "nominal":
                        issues.add(f"{rp}.nominal", "is missing", NO_VALUE, "give the nominal quota, e.g. nominal: 8")
                    values[key] = None
                    continue
                parsed = parse_quantity(str(r), raw)
                if parsed is None:
                    issues.add(f"{rp}.{key}", "is not a quantity", raw, _QUANTITY_FIX)
                values[key] = parsed
            nominal = values["nominal"] or 0
            lending = values["lendingLimit"]
            if lending is not None and values["nominal"] is not None and lending > nominal:
                issues.add(f"{rp}.lendingLimit", "is above the nominal quota", rm.get("lendingLimit"),
                           f"lend at most the nominal quota ({rm.get('nominal')})")
            if values["borrowingLimit"] is not None and cohort is None:
                issues.add(f"{rp}.borrowingLimit", "is set on a queue without a cohort", rm.get("borrowingLimit"),
                           "set a cohort on the queue or remove the borrowingLimit")
            if lending is not None and cohort is None:
                issues.add(f"{rp}.lendingLimit", "is set on a queue without a cohort", rm.get("lendingLimit"),
                           "set a cohort on the queue or remove the lendingLimit")
            resources.append((str(r), ResourceQuota(nominal, values["borrowingLimit"], lending)))
        if fname:
            flavors.append(FlavorQuotas(fname, tuple(resources)))
    if name is None:
        return None
    return QueueDef(
        name=name, cohort=cohort, fair_sharing_weight=float(weight), queueing_strategy=strategy,  # type: ignore[arg-type]
        preemption=preemption, flavor_fungibility=fungibility, flavors=tuple(flavors),
    )


def _workload(issues: Issues, path: str, data: Any, default_created: float,
              queues: Mapping[str, QueueDef]) -> Optional[WorkloadDef]:
    w = as_mapping(issues, path, data, "write each workload as a mapping with name, queue and requests")
    if w is None:
        return None
    unknown_keys(issues, path, w, _WORKLOAD)
    name = as_name(issues, f"{path}.name", w.get("name"))
    queue = as_known_name(issues, f"{path}.queue", w.get("queue"), queues, "names no queue of the scenario",
                          "(no queues defined)")
    priority = as_number(issues, f"{path}.priority", w.get("priority"), default=0, integer=True)
    created = as_number(issues, f"{path}.created", w.get("created"), default=default_created)
    duration = as_number(issues, f"{path}.duration", w.get("duration"), default=None, minimum=0)
    if "requests" not in w:
        issues.add(f"{path}.requests", "is missing", NO_VALUE, "give the workload's total request, e.g. {cpu: 4}")
    requests = _requests(issues, f"{path}.requests", w.get("requests"))
    admitted_flavor, admitted_at = None, 0.0
    if w.get("admitted") is not None:
        adm = as_mapping(issues, f"{path}.admitted", w.get("admitted"), "write {flavor: on-demand, at: 0}")
        if adm is not None:
            unknown_keys(issues, f"{path}.admitted", adm, ("flavor", "at"))
            admitted_flavor = as_name(issues, f"{path}.admitted.flavor", adm.get("flavor"))
            admitted_at = as_number(issues, f"{path}.admitted.at", adm.get("at"), default=0.0)
            if queue is not None and admitted_flavor is not None:
                q = queues[queue]
                names = [f.name for f in q.flavors]
                if admitted_flavor not in names:
                    issues.add(f"{path}.admitted.flavor", f"is not a flavor of queue {queue}", admitted_flavor,
                               f"use one of {', '.join(names)}")
                    admitted_flavor = None
    if queue is not None:
        covered = queues[queue].covered_resources
        for r, _ in requests:
            if r not in covered:
                issues.add(f"{path}.requests.{r}", f"is not a resource of queue {queue}", r,
                           f"request only {', '.join(covered)}, or add the resource to the queue's flavors")
    if name is None or queue is None:
        return None
    return WorkloadDef(name=name, queue=queue, requests=requests, priority=priority, created=created,
                       duration=duration, admitted_flavor=admitted_flavor, admitted_at=admitted_at)


def parse_scenario(data: Any, source: Optional[str] = None) -> Scenario:
    """Validate a scenario mapping; raise ``SpecError`` listing every problem."""
    issues = Issues()
    if not isinstance(data, Mapping):
        raise SpecError([SpecIssue("(top level)", "is not a mapping of keys", data,
                                   "start the file with `queues:` and `workloads:` (see SIMULATOR.md)")], source)
    unknown_keys(issues, "", data, _TOP)
    fair = data.get("fairSharing", False)
    if not isinstance(fair, bool):
        issues.add("fairSharing", "is not true or false", fair, "write fairSharing: true or fairSharing: false")
        fair = False
    strategies = data.get("preemptionStrategies")
    if strategies is None:
        strategies = list(DEFAULT_STRATEGIES)
    elif not isinstance(strategies, list) or not strategies or any(s not in _STRATEGIES for s in strategies):
        issues.add("preemptionStrategies", "is not a list of fair-sharing strategies", strategies,
                   f"list one or two of {', '.join(_STRATEGIES)}")
        strategies = list(DEFAULT_STRATEGIES)
    queues: dict[str, QueueDef] = {}
    raw_queues = data.get("queues")
    if not isinstance(raw_queues, list) or not raw_queues:
        issues.add("queues", "is missing or not a list", raw_queues if raw_queues is not None else NO_VALUE,
                   "list at least one queue: - {name: alpha, flavors: [...]}")
        raw_queues = []
    for i, q in enumerate(raw_queues):
        queue = _queue(issues, f"queues[{i}]", q)
        if queue is None:
            continue
        if queue.name in queues:
            issues.add(f"queues[{i}].name", "repeats another queue's name", queue.name, "give each queue its own name")
            continue
        queues[queue.name] = queue
    names: dict[str, str] = {}
    workloads = []
    raw_wls = data.get("workloads") or []
    if not isinstance(raw_wls, list):
        issues.add("workloads", "is not a list", raw_wls, "list workloads: - {name: a1, queue: alpha, requests: {cpu: 1}}")
        raw_wls = []
    for i, w in enumerate(raw_wls):
        raw_name = w.get("name") if isinstance(w, Mapping) else None
        if isinstance(raw_name, str) and raw_name in names:
            issues.add(f"workloads[{i}].name", f"repeats {names[raw_name]}", raw_name, "give each workload its own name")
        elif isinstance(raw_name, str) and raw_name:
            names[raw_name] = f"workloads[{i}]"
        wl = _workload(issues, f"workloads[{i}]", w, float(i), queues)
        if wl is not None and names.get(wl.name) == f"workloads[{i}]":
            workloads.append(wl)
    events = []
    raw_events = data.get("events") or []
    if not isinstance(raw_events, list):
        issues.add("events", "is not a list", raw_events, "list events: - {at: 100, finish: a1}")
        raw_events = []
    for i, e in enumerate(raw_events):
        path = f"events[{i}]"
        em = as_mapping(issues, path, e, "write each event as {at: 100, finish: a1} or {at: 100, submit: {...}}")
        if em is None:
            continue
        unknown_keys(issues, path, em, ("at", "finish", "submit"))
        if em.get("at") is None:
            issues.add(f"{path}.at", "is missing", NO_VALUE, "give the time in seconds, e.g. at: 100")
        at = as_number(issues, f"{path}.at", em.get("at"), default=0.0)
        if ("finish" in em) == ("submit" in em):
            issues.add(path, "needs exactly one of finish or submit", em, "write {at: 100, finish: a1} or "
                       "{at: 100, submit: {name: x, queue: alpha, requests: {cpu: 1}}}")
            continue
        if "finish" in em:
            target = as_name(issues, f"{path}.finish", em.get("finish"))
            if target is None:
                continue
            if target not in names:
                issues.add(f"{path}.finish", "names no workload defined before it", target,
                           "name a workload from workloads: or an earlier submit event")
                continue
            events.append(Event(at=at, finish=target))
        else:
            wl = _workload(issues, f"{path}.submit", em.get("submit"), at, queues)
            if wl is None:
                continue
            if wl.admitted_flavor is not None:
                issues.add(f"{path}.submit.admitted", "is not allowed on a submitted workload", NO_VALUE,
                           "remove admitted: a submitted workload starts pending")
            if wl.name in names:
                issues.add(f"{path}.submit.name", f"repeats {names[wl.name]}", wl.name, "give each workload its own name")
                continue
            names[wl.name] = f"{path}.submit"
            events.append(Event(at=at, submit=wl))
    until = as_number(issues, "until", data.get("until"), default=None)
    node_groups, capacity, delay = parse_nodes(issues, data, queues)
    if issues.items:
        raise SpecError(issues.items, source)
    return Scenario(queues=tuple(queues.values()), workloads=tuple(workloads), events=tuple(events),
                    fair_sharing=fair, preemption_strategies=tuple(strategies), until=until,
                    node_groups=node_groups, capacity=capacity, scale_up_delay=delay)


# libyaml's parser where PyYAML was built with it: the same Python objects (the constructor and resolver are
# PyYAML's own), many times faster on a large scenario.
_FAST_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _load_yaml(text: str) -> Any:
    """yaml.safe_load, parsed by libyaml when available. Plain data is built straight from libyaml's
    events (:mod:`.yaml_load`); anything else goes through PyYAML's loaders. A file libyaml rejects is
    parsed again by PyYAML, so the problem reported (and its line) is the same with or without libyaml."""
    try:
        return load_plain(text)
    except Unusual:
        pass
    try:
        return yaml.load(text, Loader=_FAST_LOADER)
    except yaml.YAMLError:
        if _FAST_LOADER is yaml.SafeLoader:
            raise
    return yaml.load(text, Loader=yaml.SafeLoader)


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate a scenario file; raise ``SpecError`` (never a traceback) for any problem."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise SpecError([SpecIssue(str(p), "cannot be read", exc.strerror or str(exc),
                                   "check the path of the scenario file")]) from None
    try:
        data = _load_yaml(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else "(file)"
        raise SpecError([SpecIssue(where, "is not valid YAML", getattr(exc, "problem", None) or str(exc),
                                   "fix the YAML syntax (indentation, colons, quotes)")], str(p)) from None
    return parse_scenario(data, str(p))
