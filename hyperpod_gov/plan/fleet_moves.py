"""Rule HPG-F011 over a fleet's capacity moves (``fleet.moves``, ``spec.fleet_moves``), and each move's exact
``aws sagemaker move-cluster-nodes`` command for ``explain``.

The checks follow MoveClusterNodes (botocore sagemaker 2017-07-24): both clusters in one account and Region, both
orchestrated by EKS with ``NodeProvisioningMode: Continuous``, two instance groups of compatible configuration (here:
the same instance type or types), at most 50 nodes. The spec shows the counts after the move, so the target
group's ``count`` holds at least the moved nodes; every team's quota on either cluster is checked against those
counts by the member's own rules (the move changes both clusters' capacity, and both sides' quotas must fit it).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any, Iterator, Mapping, Optional

from ..spec.errors import SpecIssue
from ..spec.fleet import FleetSpec
from ..spec.fleet_moves import Move, MoveEnd
from ..spec.rulebook import rule
from .model import Plan

OPERATION = "MoveClusterNodes"


def fleet_moves(fleet: FleetSpec) -> tuple[Move, ...]:
    """The fleet's moves (``fleet.moves``; already validated with the fleet document)."""
    section = fleet.data.get("fleet") if isinstance(fleet.data.get("fleet"), Mapping) else {}
    return tuple(Move.model_validate(m) for m in section.get("moves") or ())


def _group(fleet: FleetSpec, cluster: str, name: str) -> Optional[Any]:
    return next((g for g in fleet.members[cluster].cluster.instance_groups if g.name == name), None)


def _types(group: Any) -> tuple[str, ...]:
    return tuple(sorted({*(group.instance_types or ()), *([group.instance_type] if group.instance_type else [])}))


def instance_type_of(fleet: FleetSpec, move: Move) -> str:
    """The instance type a move's nodes run: its source group's (a flexible group's types, sorted, comma-separated)."""
    return ", ".join(_types(_group(fleet, move.from_.cluster, move.from_.instance_group)))


def _side_issues(fleet: FleetSpec, plans: Mapping[str, Plan], path: str, cluster: str, group: str) -> list[SpecIssue]:
    names = list(fleet.members)
    if cluster not in fleet.members:
        return [SpecIssue(f"{path}.cluster", "is not a cluster of the fleet", cluster,
                          f"use one of: {', '.join(names)}")]
    spec = fleet.members[cluster].cluster
    where = f"clusters[{names.index(cluster)}].cluster"
    if spec.orchestrator != "eks" or plans[cluster].slurm is not None:
        return [SpecIssue(f"{path}.cluster", f"is cluster {cluster!r}, orchestrated by Slurm: MoveClusterNodes moves "
                          "nodes only between EKS-orchestrated clusters", cluster,
                          "move capacity between EKS clusters of the fleet only")]
    out = []
    if spec.node_provisioning_mode != "Continuous":
        out.append(SpecIssue(f"{path}.cluster", f"is cluster {cluster!r}, without nodeProvisioningMode: Continuous: "
                             "MoveClusterNodes needs both clusters in Continuous provisioning", cluster,
                             f"set {where}.nodeProvisioningMode: Continuous (a change of the cluster, deployed "
                             "before the move)"))
    if _group(fleet, cluster, group) is None:
        known = [g.name for g in spec.instance_groups]
        out.append(SpecIssue(f"{path}.instanceGroup", f"is not an instance group of cluster {cluster!r}", group,
                             f"use one of {where}.instanceGroups: {', '.join(known)}" if known else
                             f"{where} lists no instance groups (a governance-only cluster): the spec cannot "
                             "show the move's counts"))
    return out


@rule("HPG-F011", "error", "A capacity move (fleet.moves, MoveClusterNodes) is between EKS clusters of one account "
      "and Region, both in Continuous provisioning, from and to instance groups of the same instance type; the "
      "spec's counts show it (the target group holds at least the moved nodes).")
def fleet_moves_valid(fleet: FleetSpec, plans: Mapping[str, Plan]) -> Iterator[SpecIssue]:
    for k, move in enumerate(fleet_moves(fleet)):
        path = f"fleet.moves[{k}]"
        issues = [*_side_issues(fleet, plans, f"{path}.from", move.from_.cluster, move.from_.instance_group),
                  *_side_issues(fleet, plans, f"{path}.to", move.to.cluster, move.to.instance_group)]
        yield from issues
        if issues:
            continue
        src, dst = plans[move.from_.cluster], plans[move.to.cluster]
        if (src.account, src.region) != (dst.account, dst.region):
            yield SpecIssue(path, f"moves nodes from {src.account}/{src.region} to {dst.account}/{dst.region}: "
                            "MoveClusterNodes moves nodes within one account and Region", move.to.cluster,
                            "move between clusters of one account and Region (across them: lower one group's count "
                            "and raise the other's, new instances)")
            continue
        if move.from_ == move.to:
            yield SpecIssue(f"{path}.to", "is the source instance group itself", move.to.instance_group,
                            "name another instance group (of this or another cluster)")
            continue
        source, target = (_group(fleet, move.from_.cluster, move.from_.instance_group),
                          _group(fleet, move.to.cluster, move.to.instance_group))
        if _types(source) != _types(target):
            yield SpecIssue(f"{path}.to.instanceGroup", f"runs {', '.join(_types(target))}, the source group "
                            f"{', '.join(_types(source))}: a moved node keeps its instance, so both groups run the "
                            "same instance type", move.to.instance_group, "move into a group of the same instance type")
        if target.count < move.count:
            yield SpecIssue(f"{path}.count", f"moves {move.count} nodes into {move.to.cluster}/"
                            f"{move.to.instance_group}, whose count is {target.count}: the spec shows the counts after "
                            "the move, so the target group's count includes the moved nodes", move.count,
                            f"raise the target group's count to its count before the move plus {move.count}, and "
                            f"lower {move.from_.cluster}/{move.from_.instance_group}'s by as much")


@dataclass(frozen=True)
class MoveCommand:
    """A move as MoveClusterNodes' request (``parameters``, the cluster ARNs as the command finds them) and the
    AWS CLI command that sends it."""

    move: Move
    region: str
    parameters: dict[str, Any]  # MoveClusterNodesRequest members
    instance_type: str  # the source group's type (a flexible group's types, comma-separated)

    @property
    def command(self) -> str:
        from botocore import xform_name

        args = [f"--{xform_name(k, '-')} {v if str(v).startswith('$(') else shlex.quote(str(v))}"
                for k, v in self.parameters.items()]
        return " ".join([f"aws sagemaker {xform_name(OPERATION, '-')}", *args, f"--region {self.region}"])

    def to_json(self) -> dict[str, Any]:
        """The move as ``explain --format json`` of a fleet gives it (``schemas/fleet-explain.json``)."""
        m = self.move
        return {"from": end_json(m.from_), "to": end_json(m.to), "count": m.count, "instanceType": self.instance_type,
                "region": self.region, "command": self.command}


def end_json(end: MoveEnd) -> dict[str, str]:
    """One side of a move as the JSON documents give it: ``{"cluster", "instanceGroup"}``."""
    return {"cluster": end.cluster, "instanceGroup": end.instance_group}


def _arn(plan: Plan) -> str:
    """The cluster's ARN when the spec knows it; else the command that reads it (the capacity stack creates the
    cluster, whose ARN ends in an ID AWS chooses)."""
    return plan.hyperpod_cluster_arn or (f"$(aws sagemaker describe-cluster --cluster-name "
                                         f"{shlex.quote(plan.cluster_name)} --region {plan.region} "
                                         "--query ClusterArn --output text)")


def move_commands(fleet: FleetSpec, plans: Mapping[str, Plan]) -> tuple[MoveCommand, ...]:
    """Each move's request and command, in the spec's order (the moves already passed HPG-F011)."""
    out = []
    for move in fleet_moves(fleet):
        src, dst = plans[move.from_.cluster], plans[move.to.cluster]
        out.append(MoveCommand(move, src.region, {
            "SourceClusterArn": _arn(src), "SourceInstanceGroupName": move.from_.instance_group,
            "TargetClusterArn": _arn(dst), "TargetInstanceGroupName": move.to.instance_group,
            "InstanceCount": move.count},
            instance_type_of(fleet, move)))
    return tuple(out)


def moves_section(fleet: FleetSpec, plans: Mapping[str, Plan]) -> str:
    """``explain``'s lines for the moves: what moves and the command the operator runs (empty without moves)."""
    commands = move_commands(fleet, plans)
    if not commands:
        return ""
    lines = ["Capacity moves (MoveClusterNodes; run before deploying this spec, then remove the entry):"]
    for c in commands:
        m = c.move
        lines += [f"  {m.count} node{'' if m.count == 1 else 's'} from {m.from_.cluster}/{m.from_.instance_group} to "
                  f"{m.to.cluster}/{m.to.instance_group} ({c.region}; the spec's counts are after the move)",
                  f"    {c.command}"]
    return "\n".join(lines) + "\n"
