"""Render every chart of a spec into plain manifests (lists of dicts), deterministically."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from cdk8s import App

from ..plan import Plan
from ._objects import chart_objects, cluster_chart
from .admission import admission_policies
from .cluster_rbac import cluster_wide_rbac, member_reads_binding
from .dedicated import dedicated_objects
from .kueue import KueueSharedObjects
from .platform_network import platform_network_policies
from .storage import storage_objects
from .tenant import TenantChart

Manifest = dict[str, Any]

# libyaml's emitter writes the same bytes as PyYAML's pure-Python one for these manifests (plain data: strings,
# numbers, booleans, lists, mappings; tests/charts checks the two agree) at a tenth of the time; PyYAML built
# without libyaml falls back to the pure-Python dumper.
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


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


def dump_manifests(objs: list[Manifest], dumper: type = _DUMPER) -> str:
    """A YAML stream of the objects, keys sorted, block style (what ``cluster.yaml`` and the team files hold)."""
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
    charts = {t.name: TenantChart(app, f"team-{t.name}", plan=plan, team=t) for t in plan.tenants}
    for t in plan.tenants:
        member_reads_binding(charts[t.name], plan=plan, team=t)
    return Manifests(
        cluster=chart_objects(cluster),
        teams={name: chart_objects(chart) for name, chart in charts.items()},
    )
