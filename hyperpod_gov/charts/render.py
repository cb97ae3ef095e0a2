"""Render every chart of a spec into plain manifests (lists of dicts), deterministically."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import yaml
from cdk8s import App

from ..plan import Plan
from ._objects import chart_objects, cluster_chart
from .admission import admission_policies
from .cluster_rbac import cluster_wide_rbac, member_reads_binding
from .dedicated import dedicated_objects
from .karpenter import karpenter_objects
from .kueue import KueueSharedObjects
from .platform_network import platform_network_policies
from .storage import storage_objects
from .tenant import TenantChart

Manifest = dict[str, Any]

# libyaml's emitter writes the same bytes as PyYAML's pure-Python one for these manifests (plain data: strings,
# numbers, booleans, lists, mappings; tests/charts checks the two agree) at a tenth of the time; PyYAML built
# without libyaml falls back to the pure-Python dumper.
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_STR, _INT, _BOOL, _NULL = (f"tag:yaml.org,2002:{t}" for t in ("str", "int", "bool", "null"))
_MAP, _SEQ = "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"


class _NotPlain(Exception):
    """A mapping or list met twice in one document (PyYAML writes it once, with an anchor, and aliases it), or a
    mapping whose keys do not sort (PyYAML then keeps their order)."""


class _ManifestDumper(_DUMPER):  # type: ignore[valid-type, misc]
    """``_DUMPER`` whose representer builds the nodes of plain data (exact ``dict``, ``list``, ``str``, ``int``,
    ``bool``, ``None``) itself, in the order and with the tags and styles PyYAML's ``SafeRepresenter`` gives them
    under ``sort_keys=True, default_flow_style=False``. PyYAML's is Python even under libyaml, and was most of
    the cost of writing ``k8s/``: 1.5 s of CPU at 300 teams, 1.15 s with this one. Any other value (a float, a
    tuple) is left to PyYAML's; where the data is not plain (``_NotPlain``), :func:`dump_manifests` writes the
    stream with ``_DUMPER`` alone."""

    def represent(self, data: Any) -> None:
        self._seen: set[int] = set()
        super().represent(data)

    def represent_data(self, data: Any) -> Any:
        kind = type(data)
        if kind is str:
            return yaml.ScalarNode(_STR, data)
        if kind is dict or kind is list:
            if id(data) in self._seen:
                raise _NotPlain
            self._seen.add(id(data))
            if kind is list:
                return yaml.SequenceNode(_SEQ, [self.represent_data(v) for v in data], flow_style=False)
            try:
                items = sorted(data.items())
            except TypeError:
                raise _NotPlain from None
            return yaml.MappingNode(_MAP, [(self.represent_data(k), self.represent_data(v)) for k, v in items],
                                    flow_style=False)
        if kind is bool:
            return yaml.ScalarNode(_BOOL, "true" if data else "false")
        if kind is int:
            return yaml.ScalarNode(_INT, str(data))
        if data is None:
            return yaml.ScalarNode(_NULL, "null")
        return super().represent_data(data)


@dataclass
class Manifests:
    """Objects all teams share (cluster-scoped), and each team's own objects, in apply order.

    A team's objects travel together (one manifest per team) so that the
    CloudFormation resource applying them stays small however many teams there are.
    """

    cluster: list[Manifest]
    teams: dict[str, list[Manifest]] = field(default_factory=dict)  # sorted by team name

    def all(self) -> list[Manifest]:
        return [*self.cluster, *(m for objs in self.teams.values() for m in objs)]

    def write(self, directory: Path) -> list[Path]:
        """``cluster.yaml`` and ``teams/<team>.yaml`` for GitOps users; stale team files are removed."""
        teams_dir = directory / "teams"
        teams_dir.mkdir(parents=True, exist_ok=True)
        written = [_write(directory / "cluster.yaml", self.cluster)]
        for name, objs in self.teams.items():
            written.append(_write(teams_dir / f"{name}.yaml", objs))
        for stale in set(teams_dir.glob("*.yaml")) - set(written):
            stale.unlink()
        return written


def _write(path: Path, objs: list[Manifest]) -> Path:
    path.write_text(dump_manifests(objs))
    return path


def dump_manifests(objs: list[Manifest], dumper: Optional[type] = None) -> str:
    """A YAML stream of the objects, keys sorted, block style (what ``cluster.yaml`` and the team files hold);
    ``dumper``: a PyYAML dumper class to write it with instead."""
    if dumper is None:
        try:
            return yaml.dump_all(objs, Dumper=_ManifestDumper, sort_keys=True, default_flow_style=False)
        except _NotPlain:
            dumper = _DUMPER
    return yaml.dump_all(objs, Dumper=dumper, sort_keys=True, default_flow_style=False)


def render(plan: Plan) -> Manifests:
    """Every Kubernetes object of the plan: cluster-wide ones, then one list per team (sorted by name)."""
    app = App()
    cluster = cluster_chart(app, "cluster")
    admission_policies(cluster)
    cluster_wide_rbac(cluster, plan=plan)
    dedicated_objects(cluster, plan=plan)  # instanceGroups[].dedicatedTo
    storage_objects(cluster, plan=plan)  # cluster.sharedStorage
    if plan.emits_kueue_objects:
        KueueSharedObjects(cluster, "kueue", plan=plan)
    platform_network_policies(cluster, namespaces=plan.strict_mode_namespaces)  # VPC CNI strict mode
    karpenter_objects(cluster, plan=plan)  # instanceGroups[].autoscale: a NodeClass and a NodePool per group
    charts = {t.name: TenantChart(app, f"team-{t.name}", plan=plan, team=t) for t in plan.tenants}
    for t in plan.tenants:
        member_reads_binding(charts[t.name], plan=plan, team=t)
    return Manifests(
        cluster=chart_objects(cluster),
        teams={name: chart_objects(chart) for name, chart in charts.items()},
    )


def governance_manifests(plan: Plan) -> Manifests:
    """The Kubernetes objects of the plan: none for a Slurm cluster (its governance is ``slurm.render.files``)."""
    return Manifests(cluster=[], teams={}) if plan.slurm is not None else render(plan)
