"""The fleet-level keys of a fleet spec (``clusters``, ``fleet``, a team's per-cluster ``quota``), checked before
the fleet is expanded into its members: every structure error with path, value and fix, never a traceback.

Everything else of a fleet spec (a cluster's ``cluster:``, the teams' other keys, ...) is checked where it means
something: in each member, by ``parse_spec`` (``spec.fleet``).
"""

from __future__ import annotations

import difflib
from typing import Any, Mapping, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.alias_generators import to_camel

from ._base import SpecModel, check_label
from .errors import NO_VALUE, SpecIssue
from .fleet_moves import Move
from .models import GovernanceSpec
from .types import MAX_PREFIX
from .validation_issues import issues_from_validation

MAX_WORKERS = 20  # MultiKueueConfig.spec.clusters maxItems (Kueue v0.19.2, v1beta2)
MAX_RING = 9  # rings 0..9: each is a wave (a CodePipeline stage) per environment
# A team's keys that are the team itself on every cluster (its name, its quota per cluster): never overridden per
# cluster. The keys HPG-F006 compares (access, priorityClasses) are refused by that rule on a Kubernetes member.
TEAM_FLEET_KEYS = ("name", "quota", "clusters")


class FleetCluster(SpecModel):
    """One cluster of a fleet: its name, the accounts it differs in, and everything ``cluster:`` takes."""

    name: str = Field(description=f"DNS-1123 label; the member's stacks are named <fleet name>-<name>-... (the two "
                      f"together at most {MAX_PREFIX} characters, HPG-F002).")
    accounts: dict[str, Any] = Field(
        default_factory=dict,
        description="Accounts of this cluster merged onto the fleet's accounts, e.g. {capacity: {id: "
        "'111111111111', region: us-west-2}} (default: the fleet's accounts).",
    )
    cluster: dict[str, Any] = Field(description="The cluster, as a single-cluster spec's `cluster:` (new or "
                                    "existing, EKS or Slurm).")
    scheduler: Optional[dict[str, Any]] = Field(
        default=None, description="This cluster's scheduler (default: the fleet's `scheduler:`).")
    ring: Optional[int] = Field(
        default=None, ge=0, le=MAX_RING, strict=True,
        description=f"The pipeline ring (0..{MAX_RING}) this cluster deploys in: when any cluster sets one, every "
        "cluster does, and the pipeline deploys ring by ring, lowest first, the clusters of a ring side by side "
        "whatever their region (default: no rings, one wave per region).")

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return check_label(v, what="cluster name", max_len=MAX_PREFIX)


class Dispatch(SpecModel):
    """MultiKueue dispatch: the manager cluster sends each team's work to the worker clusters."""

    manager: str = Field(description="The cluster that runs the MultiKueue manager (kueue mode; not a worker).")
    workers: tuple[str, ...] = Field(
        min_length=1,
        description=f"The worker clusters in order of preference (kueue mode; at most {MAX_WORKERS}, Kueue's "
        "MultiKueueConfig limit).")


class FleetSection(SpecModel):
    """What the fleet does as a whole."""

    dispatch: Optional[Dispatch] = Field(default=None, description="MultiKueue dispatch (default: none, each "
                                         "cluster is used on its own).")
    moves: tuple[Move, ...] = Field(default=(), description="Capacity moves between clusters (MoveClusterNodes), "
                                    "each the explanation of two groups' counts changing (docs/fleet.md, Capacity "
                                    "moves; HPG-F011).")


class _FleetTeam(BaseModel):
    """A team's fleet-level key: ``quota`` per cluster (the rest is checked in each member)."""

    model_config = ConfigDict(extra="allow", alias_generator=to_camel, populate_by_name=True)

    name: str = Field(description="The team's name.")
    quota: dict[str, list[Any]] = Field(
        default_factory=dict,
        description="Per cluster name, the team's quota on that cluster; a team absent from a cluster's key is "
        "not on that cluster.")
    clusters: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="Per cluster name, team keys merged onto the team on that cluster only (as an environment's "
        "overrides: mappings by key, named lists by name, null removes a key), e.g. {use1-hpc: {access: null, "
        "slurm: {users: [alice]}}} (default: none).")


class FleetDocument(BaseModel):
    """The fleet-level keys of a fleet spec (other top-level keys: as a single-cluster spec's)."""

    model_config = ConfigDict(extra="allow", alias_generator=to_camel, populate_by_name=True)

    name: str = Field(description="The fleet's name.")
    clusters: tuple[FleetCluster, ...] = Field(min_length=1, description="The clusters of the fleet, in order.")
    fleet: FleetSection = Field(default_factory=FleetSection, description="What the fleet does as a whole.")
    teams: tuple[_FleetTeam, ...] = Field(default=(), description="The tenants.")


# Top-level keys of a fleet spec: a single-cluster spec's, with `clusters` and `fleet` instead of `cluster`.
FLEET_TOP_KEYS = tuple(sorted({f.alias or n for n, f in GovernanceSpec.model_fields.items()} - {"cluster"}
                              | {"clusters", "fleet"}))


def _model_at(loc: tuple[Any, ...]) -> Optional[type[BaseModel]]:
    model: Any = FleetDocument
    for part in loc:
        if isinstance(part, int):
            continue
        fields = {f.alias or n: f for n, f in model.model_fields.items()}
        field = fields.get(part)
        if field is None:
            return None
        inner = [a for a in getattr(field.annotation, "__args__", ()) if isinstance(a, type)
                 and issubclass(a, BaseModel)]
        if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel):
            model = field.annotation
        elif inner:
            model = inner[0]
        else:
            return None
    return model


def _path(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def document_issues(data: Mapping[str, Any]) -> tuple[Optional[FleetDocument], list[SpecIssue]]:
    """The fleet document and every structure issue of its fleet-level keys (the document is None if any)."""
    issues: list[SpecIssue] = []
    for key in data:
        if str(key) == "cluster":
            issues.append(SpecIssue("cluster", "is beside `clusters:`: a fleet spec gives each cluster under "
                                    "clusters[]", NO_VALUE, "move it into an item of clusters: [{name, cluster}] "
                                    "or remove `clusters:` for a single-cluster spec"))
        elif str(key) not in FLEET_TOP_KEYS:
            near = difflib.get_close_matches(str(key), FLEET_TOP_KEYS, n=1)
            hint = f"did you mean '{near[0]}'? " if near else ""
            issues.append(SpecIssue(str(key), "is not a key the spec knows", NO_VALUE,
                                    f"{hint}remove it or use one of: {', '.join(FLEET_TOP_KEYS)}"))
    try:
        document = FleetDocument.model_validate(data)
    except ValidationError as exc:
        document = None
        for issue, err in zip(issues_from_validation(exc), exc.errors(include_url=False)):
            loc = tuple(err["loc"])
            if err["type"] == "extra_forbidden":
                model = _model_at(loc[:-1])
                allowed = sorted(f.alias or n for n, f in model.model_fields.items()) if model else []
                near = difflib.get_close_matches(str(loc[-1]), allowed, n=1)
                hint = f"did you mean '{near[0]}'? " if near else ""
                issue = SpecIssue(issue.path, issue.problem, issue.value,
                                  f"{hint}remove it or use one of: {', '.join(allowed)}")
            elif err["type"] in ("model_type", "model_attributes_type") and _model_at(loc) is not None:
                allowed = sorted(f.alias or n for n, f in _model_at(loc).model_fields.items())  # type: ignore[union-attr]
                issue = SpecIssue(issue.path, issue.problem, issue.value,
                                  f"write a mapping with keys: {', '.join(allowed)}")
            elif err["type"] in ("dict_type", "model_type", "model_attributes_type") and loc[-1:] == ("quota",):
                issue = SpecIssue(_path(loc), "is not a mapping of cluster names: in a fleet spec a team's quota "
                                  "is given per cluster", issue.value, "write quota: {<cluster>: [{instanceType, "
                                  "accelerators | count}], ...} (a team absent from a cluster is not on it)")
            issues.append(issue)
    if document is not None:
        issues += _name_issues(document) + _ring_issues(document) + _override_issues(document, data)
    return (None if issues else document), issues


def _name_issues(doc: FleetDocument) -> list[SpecIssue]:
    """A team's quota keys name clusters of the fleet, and at least one (the names themselves: FLEET_DOCUMENT_RULES)."""
    issues: list[SpecIssue] = []
    names = [c.name for c in doc.clusters]
    for j, team in enumerate(doc.teams):
        if not team.quota:
            issues.append(SpecIssue(f"teams[{j}].quota", "names no cluster: the team would be on none", NO_VALUE,
                                    f"give the team a quota on one of its clusters: {', '.join(names)} "
                                    "(an empty list puts it on a cluster without owning capacity)"))
        for key in team.quota:
            if key not in names:
                near = difflib.get_close_matches(key, names, n=1)
                hint = f"did you mean {near[0]!r}? " if near else ""
                issues.append(SpecIssue(f"teams[{j}].quota.{key}", "is not a cluster of the fleet", key,
                                        f"{hint}use one of: {', '.join(names)}"))
    return issues


def _ring_issues(doc: FleetDocument) -> list[SpecIssue]:
    """Rings are all or nothing: a cluster without one would be in no wave of a ringed pipeline."""
    ringed = [i for i, c in enumerate(doc.clusters) if c.ring is not None]
    if not ringed:
        return []
    first = ringed[0]
    return [SpecIssue(f"clusters[{i}].ring", f"is not set, while clusters[{first}] ({doc.clusters[first].name}) "
                      f"is in ring {doc.clusters[first].ring}: with rings, the pipeline deploys only the clusters "
                      "of a ring", NO_VALUE, f"give cluster {c.name} a ring (0..{MAX_RING}, 0 first), or remove "
                      "every cluster's ring (one wave per region)")
            for i, c in enumerate(doc.clusters) if c.ring is None]


def _override_issues(doc: FleetDocument, data: Mapping[str, Any]) -> list[SpecIssue]:
    """A team's per-cluster keys name a cluster the team is on, and none is the team's own name or quota."""
    from .fleet import teams_on

    issues: list[SpecIssue] = []
    names = [c.name for c in doc.clusters]
    for j, team in enumerate(doc.teams):
        for cluster, keys in team.clusters.items():
            path = f"teams[{j}].clusters.{cluster}"
            if cluster not in names:
                near = difflib.get_close_matches(cluster, names, n=1)
                hint = f"did you mean {near[0]!r}? " if near else ""
                issues.append(SpecIssue(path, "is not a cluster of the fleet", cluster,
                                        f"{hint}use one of: {', '.join(names)}"))
                continue
            if j not in teams_on(data, cluster):
                issues.append(SpecIssue(path, f"overrides the team on cluster {cluster}, which it is not on (no "
                                        f"teams[{j}].quota.{cluster})", cluster, f"add quota.{cluster} (an empty "
                                        "list puts the team there without owning capacity), or remove the override"))
            for key in TEAM_FLEET_KEYS:
                if key in keys:
                    what = {"name": "the team's name is one on every cluster (it names its namespace and queues)",
                            "quota": f"the team's quota on {cluster} is teams[{j}].quota.{cluster}",
                            "clusters": "overrides do not nest"}[key]
                    fix = f"write it as teams[{j}].quota.{cluster}" if key == "quota" else "remove it"
                    issues.append(SpecIssue(f"{path}.{key}", f"cannot be overridden per cluster: {what}",
                                            keys[key], fix))
    return issues
