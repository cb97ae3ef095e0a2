"""A fleet: several HyperPod clusters, in their own accounts and regions, governed from one spec.

A fleet spec has ``clusters: [{name, accounts?, cluster, scheduler?, ring?}]`` instead of ``cluster:``, an optional
``fleet: {dispatch: {manager, workers}}`` (MultiKueue), and teams whose ``quota`` maps a cluster name to that
cluster's quota list (a team absent from a cluster's key is not on that cluster) and whose optional ``clusters`` maps
a cluster name to team keys for that cluster only (``team_on``). A spec with ``cluster:`` is a single-cluster spec,
read as before.

The fleet is expanded on the YAML data, before validation, like environments (``spec.environments``): each
cluster becomes a member spec (``fleet_members``), named ``<fleet name>-<cluster>`` so that its stacks are
``<fleet name>-<cluster>-capacity`` and so on, and is validated as a whole by ``parse_spec``: every rule of a
single cluster runs per member. Their issues are reported together, with paths that lead back into the fleet spec.
"""

from __future__ import annotations

import copy
import datetime as dt
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping, Optional

from .environments import chosen_environment, merge
from .errors import NO_VALUE, SpecError, SpecIssue
from .fleet_document import FleetDocument, document_issues
from .fleet_rules import FLEET_DOCUMENT_RULES
from .models import GovernanceSpec
from .rulebook import RuleBook
from .rules import RULES

FLEET_ONLY = ("clusters", "fleet", "environments")
# The fleet document rules without which the members cannot be told apart (names): the others' errors are reported
# with every member's.
EXPANSION_RULES = ("HPG-F001", "HPG-F002")


def is_fleet(data: Any) -> bool:
    """Whether spec data (as read from YAML) is a fleet: it lists ``clusters``."""
    return isinstance(data, Mapping) and "clusters" in data


def is_fleet_spec(path: str | Path) -> bool:
    """Whether the spec file is a fleet (it lists ``clusters``); False where it cannot be read, so that
    ``load_spec`` reports why as it always has."""
    from .yaml_reader import read_yaml

    try:
        return is_fleet(read_yaml(path))
    except (OSError, SpecError):
        return False


def _types(cluster: Mapping[str, Any]) -> set[str]:
    """The instance types the cluster's groups may run (a flexible group's every type)."""
    out: set[str] = set()
    for group in cluster.get("instanceGroups") or ():
        if isinstance(group, Mapping):
            out.update(str(t) for t in group.get("instanceTypes") or ())
            if group.get("instanceType") is not None:
                out.add(str(group["instanceType"]))
    return out


def teams_on(data: Mapping[str, Any], cluster: str) -> list[int]:
    """Indices of the fleet's teams on ``cluster``: those with a quota key for it and, on the dispatch manager,
    every team on a worker (MultiKueue needs the team's namespace, people and queue there; it owns nothing)."""
    dispatch = (data.get("fleet") or {}).get("dispatch") if isinstance(data.get("fleet"), Mapping) else None
    slurm = {c.get("name") for c in data.get("clusters") or () if isinstance(c, Mapping)
             and isinstance(c.get("cluster"), Mapping) and c["cluster"].get("orchestrator") == "slurm"}
    workers = set(dispatch.get("workers") or ()) - slurm if isinstance(dispatch, Mapping) and \
        dispatch.get("manager") == cluster else set()  # a Slurm worker is refused (HPG-F008), not mirrored
    out = []
    for j, team in enumerate(data.get("teams") or ()):
        quota = team.get("quota") if isinstance(team, Mapping) else None
        if isinstance(quota, Mapping) and (cluster in quota or workers & set(quota)):
            out.append(j)
    return out


def team_on(team: Mapping[str, Any], cluster: str) -> dict[str, Any]:
    """A team's data on one cluster: its keys with its overrides for that cluster merged on (``teams[].clusters``,
    as an environment's overrides merge: ``environments.merge``), and its quota there."""
    overrides = team.get("clusters") if isinstance(team.get("clusters"), Mapping) else {}
    own = merge({k: v for k, v in team.items() if k != "clusters"}, overrides.get(cluster) or {})
    own["quota"] = copy.deepcopy(team["quota"].get(cluster) or [])
    return own


def fleet_members(data: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Each cluster's member spec data, by cluster name in the spec's order (not yet validated).

    A member is the fleet's data without ``clusters``, ``fleet`` and ``environments``, named ``<fleet
    name>-<cluster name>``, with the fleet's ``accounts`` and the cluster's merged on, the cluster's ``cluster``,
    its ``scheduler`` (else the fleet's), and the teams that have a quota on that cluster, each with that quota and
    its overrides for that cluster (``team_on``; ``sharing.absoluteBorrowLimits`` of instance types the cluster
    lacks left out); the dispatch manager
    also holds every team on a worker, owning nothing there (``teams_on``).
    """
    base = {k: v for k, v in data.items() if k not in FLEET_ONLY}
    members: dict[str, dict[str, Any]] = {}
    for item in data.get("clusters") or ():
        name = str(item["name"])
        member = copy.deepcopy(base)
        member["name"] = f"{data.get('name')}-{name}"
        member["accounts"] = merge(data.get("accounts") or {}, item.get("accounts") or {})
        member["cluster"] = copy.deepcopy(item.get("cluster"))
        if item.get("scheduler") is not None:
            member["scheduler"] = copy.deepcopy(item["scheduler"])
        types = _types(item.get("cluster") or {})
        teams = []
        for j in teams_on(data, name):
            team = data["teams"][j]
            on = team_on(team, name)
            sharing = on.get("sharing")
            if isinstance(sharing, Mapping) and isinstance(sharing.get("absoluteBorrowLimits"), list):
                on["sharing"] = {**sharing, "absoluteBorrowLimits": [
                    b for b in sharing["absoluteBorrowLimits"]
                    if not isinstance(b, Mapping) or b.get("instanceType") in types]}
            teams.append(on)
        member["teams"] = teams
        if isinstance(data.get("acknowledgements"), list):
            member["acknowledgements"] = _member_acknowledgements(data, name)
        members[name] = member
    return members


_CLUSTER_PATH = re.compile(r"\Aclusters\[(\d+)\](.*)\Z", re.S)


def _member_acknowledgements(data: Mapping[str, Any], cluster: str) -> list[Any]:
    """The fleet's acknowledgements as a member reads them: a path into the fleet spec (``clusters[i].cluster...``,
    ``teams[j].quota.<cluster>...``) becomes the member's path, and an acknowledgement whose path is another
    cluster's (or a team's not on this cluster) is left out of this member."""
    names = [c.get("name") for c in data.get("clusters") or ()]
    on = teams_on(data, cluster)
    out = []
    for ack in data["acknowledgements"]:
        path = ack.get("path") if isinstance(ack, Mapping) else None
        if not isinstance(path, str):
            out.append(copy.deepcopy(ack))
            continue
        found = _CLUSTER_PATH.match(path)
        team = _TEAM.match(path)
        if found:
            index = int(found.group(1))
            if index >= len(names) or names[index] != cluster:
                continue
            path = found.group(2).lstrip(".")
        elif team:
            j = int(team.group(1))
            if j not in on:
                continue
            rest = team.group(2)
            if rest.startswith(".clusters."):  # an override's path: this cluster's only, as the member's key
                key, _, tail = rest[len(".clusters."):].partition(".")
                if key != cluster:
                    continue
                rest = f".{tail}" if tail else ""
            elif rest.startswith(".quota."):
                key, _, tail = rest[len(".quota."):].partition("[")
                key = key.split(".", 1)[0]
                if key != cluster:
                    continue
                rest = ".quota" + (f"[{tail}" if tail else "")
            path = f"teams[{on.index(j)}]{rest}"
        if not path:  # the whole cluster: the member's every finding of that rule
            out.append({k: v for k, v in ack.items() if k != "path"})
        else:
            out.append({**ack, "path": path})
    return out


@dataclass(frozen=True)
class Dispatch:
    """MultiKueue dispatch: the manager cluster and its workers in order of preference."""

    manager: str
    workers: tuple[str, ...]


@dataclass(frozen=True, eq=False)
class FleetSpec:
    """A validated fleet: each member's spec by cluster name in the spec's order, and what the fleet does."""

    name: str
    members: dict[str, GovernanceSpec]
    dispatch: Optional[Dispatch]
    team_clusters: dict[str, tuple[str, ...]]  # team -> the clusters it is on, in the spec's order
    warnings: tuple[SpecIssue, ...] = ()  # the members' warnings they do not acknowledge, mapped to the fleet
    source_dir: Optional[Path] = field(default=None)
    data: Mapping[str, Any] = field(default_factory=dict, repr=False)  # the fleet's data (paths of member issues)

    def fleet_issues(self, found: list[tuple[str, SpecIssue]]) -> list[SpecIssue]:
        """Issues of members (cluster, issue) as issues of the fleet spec (``member_path``)."""
        return _mapped(found, self.data)

    @property
    def clusters(self) -> tuple[str, ...]:
        return tuple(self.members)

    @property
    def teams(self) -> tuple[str, ...]:
        """Every team of the fleet, in the spec's order."""
        return tuple(self.team_clusters)


_TEAM = re.compile(r"\Ateams\[(\d+)\](.*)\Z", re.S)
_QUOTA = re.compile(r"\A\.quota(\[\d+\].*|)\Z", re.S)


def member_path(path: str, data: Mapping[str, Any], cluster: str) -> str:
    """A member's issue path as a path of the fleet spec ``data``."""
    index = next(i for i, c in enumerate(data.get("clusters") or ()) if c.get("name") == cluster)
    item = data["clusters"][index]
    head = re.split(r"[.\[]", path, maxsplit=1)[0]
    if head == "cluster":
        return f"clusters[{index}].{path}"
    if head == "scheduler" and item.get("scheduler") is not None:
        return f"clusters[{index}].{path}"
    if head == "accounts":
        rest = path[len("accounts"):]
        key = re.split(r"[.\[]", rest.lstrip("."), maxsplit=1)[0]
        overridden = item.get("accounts") or {}
        if not rest or key in overridden:
            return f"clusters[{index}].{path}"
        return path
    if path.startswith("teams[*].quota"):  # a finding over every team's quota on this cluster
        return f"teams[*].quota.{cluster}{path[len('teams[*].quota'):]}"
    match = _TEAM.match(path)
    if match:
        on = teams_on(data, cluster)
        j = int(match.group(1))
        fleet_j = on[j] if j < len(on) else j
        rest = match.group(2)
        quota = _QUOTA.match(rest)
        if quota:
            return f"teams[{fleet_j}].quota.{cluster}{quota.group(1)}"
        team = (data.get("teams") or [])[fleet_j] if fleet_j < len(data.get("teams") or []) else {}
        overridden = _override_path(team, cluster, rest) if isinstance(team, Mapping) else None
        if overridden is not None:
            return f"teams[{fleet_j}].clusters.{cluster}{overridden}"
        return f"teams[{fleet_j}]{rest}"
    return path


_STEP = re.compile(r"\.([^.\[]+)|\[(\d+)\]")


def _override_path(team: Mapping[str, Any], cluster: str, rest: str) -> Optional[str]:
    """``rest`` (a path inside the member's team, ``.access.viewers[0]``) as a path inside the team's override for
    ``cluster`` when the value there came from that override, else None (it came from the team's own keys)."""
    overrides = team.get("clusters") if isinstance(team.get("clusters"), Mapping) else {}
    node: Any = overrides.get(cluster)
    if not isinstance(node, Mapping):
        return None
    merged: Any = team_on(team, cluster)
    out = ""
    for step in _STEP.finditer(rest):
        key, index = step.group(1), step.group(2)
        if isinstance(node, Mapping) and key is not None:
            if key not in node:
                return None  # the team's own key
            node, merged, out = node[key], merged.get(key) if isinstance(merged, Mapping) else None, f"{out}.{key}"
        elif isinstance(node, list) and index is not None:
            i = int(index)
            item = merged[i] if isinstance(merged, list) and i < len(merged) else None
            names = [n.get("name") if isinstance(n, Mapping) else None for n in node]
            if isinstance(item, Mapping) and "name" in item and item["name"] in names:
                k = names.index(item["name"])  # a named list merges by name: the override's item of that name
            elif isinstance(item, Mapping) and "name" in item and all(n is not None for n in names):
                return None  # an item of the team's own list the override did not name
            else:
                k = i  # any other list replaces the team's
            node, merged, out = node[k] if k < len(node) else None, item, f"{out}[{k}]"
        else:
            return f"{out}{rest[step.start():]}"  # inside a value the override gives whole
    return out if out else None


def _mapped(issues: list[tuple[str, SpecIssue]], data: Mapping[str, Any]) -> list[SpecIssue]:
    """Member issues as fleet issues, each saying its cluster; one issue found alike on several clusters once."""
    found: dict[tuple[Any, ...], list[str]] = {}
    first: dict[tuple[Any, ...], SpecIssue] = {}
    for cluster, issue in issues:
        path = member_path(issue.path, data, cluster)
        key = (path, issue.problem, repr(issue.value), issue.fix, issue.severity, issue.rule)
        found.setdefault(key, []).append(cluster)
        first.setdefault(key, replace(issue, path=path))
    out = []
    for key, clusters in found.items():
        issue = first[key]
        where = f"on cluster {clusters[0]}" if len(clusters) == 1 else f"on clusters {', '.join(clusters)}"
        out.append(replace(issue, problem=f"{where}: {issue.problem}"))
    return out


def parse_fleet(data: Any, *, strict: bool = False, today: Optional[dt.date] = None, source: Optional[str] = None,
                known: RuleBook = RULES, base_dir: Optional[Path] = None) -> FleetSpec:
    """Validate fleet spec data (an environment already chosen) into a ``FleetSpec``: the fleet-level keys, the
    fleet document rules, then every member with ``parse_spec``. Raises ``SpecError`` with every problem of every
    member, paths leading into the fleet spec."""
    from .loader import check_chart_directory, parse_spec, spec_warnings

    if not is_fleet(data):
        raise SpecError([SpecIssue("clusters", "is not set: this is not a fleet spec", NO_VALUE,
                                   "list the fleet's clusters under clusters: [{name, accounts, cluster}], or read "
                                   "a single-cluster spec with load_spec")], source)
    document, issues = document_issues(data)
    if document is None:
        raise SpecError(issues, source)
    issues = [i for i in FLEET_DOCUMENT_RULES.run(document) if i.severity == "error"]
    if any(i.rule in EXPANSION_RULES for i in issues):  # the members cannot be named apart: nothing more to read
        raise SpecError(issues, source)
    members: dict[str, GovernanceSpec] = {}
    found: list[tuple[str, SpecIssue]] = []
    warnings: list[tuple[str, SpecIssue]] = []
    for cluster, member in fleet_members(data).items():
        try:
            spec = parse_spec(member, strict=strict, today=today, known=known)
            if base_dir is not None:
                check_chart_directory(spec, base_dir)
                spec._source_dir = base_dir
        except SpecError as exc:
            found += [(cluster, i) for i in exc.issues]
            continue
        members[cluster] = spec
        warnings += [(cluster, w) for w in spec_warnings(spec, today=today)]
    if found or issues:
        raise SpecError([*issues, *_mapped(found, data)], source)
    return fleet_of(document, members, warnings=_mapped(warnings, data), source_dir=base_dir, data=data)


def fleet_of(document: FleetDocument, members: dict[str, GovernanceSpec], *, warnings: list[SpecIssue] = (),
             source_dir: Optional[Path] = None, data: Mapping[str, Any]) -> FleetSpec:
    dispatch = document.fleet.dispatch
    team_clusters = {t.name: tuple(c for c in members if j in teams_on(data, c))
                     for j, t in enumerate(document.teams)}
    return FleetSpec(name=document.name, members=members,
                     dispatch=Dispatch(dispatch.manager, tuple(dispatch.workers)) if dispatch else None,
                     team_clusters=team_clusters, warnings=tuple(warnings), source_dir=source_dir,
                     data=copy.deepcopy(dict(data)))


def load_fleet(path: str | Path, *, environment: Optional[str] = None, today: Optional[dt.date] = None,
               strict: bool = False, known: RuleBook = RULES) -> FleetSpec:
    """Load and validate a fleet spec file (``environment``: that environment of it, chosen before the fleet is
    expanded, so that its overrides may address ``clusters`` items by name). Raises ``SpecError``."""
    from .yaml_reader import read_yaml

    source = str(path) if environment is None else f"{path} (environment {environment})"
    try:
        data = chosen_environment(read_yaml(path), environment)
    except SpecError as exc:
        raise SpecError(exc.issues, source) from None
    return parse_fleet(data, strict=strict, today=today, source=source, known=known,
                       base_dir=Path(path).resolve().parent)
