"""Who maps to which Kubernetes groups. EKS allows one access entry per principal,
so a principal that several teams name gets one entry with all its groups."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from ..spec.models import GovernanceSpec
from . import names
from .contracts import project_role_groups


@dataclass(frozen=True)
class PrincipalAccess:
    principal_arn: str
    groups: tuple[str, ...]  # sorted
    teams: tuple[str, ...]  # sorted
    key: str  # construct id: readable name plus a hash of the whole ARN
    # Where the spec first names the principal ("teams[1].access.viewers[0]"); not part of its identity.
    path: str = field(kw_only=True, compare=False)


def principal_access(spec: GovernanceSpec) -> tuple[PrincipalAccess, ...]:
    """Every principal's groups: the teams' viewers and submitters, and each Unified Studio project role, which
    gets exactly a submitter's groups. A retiring team's principals get nothing from it."""
    groups: dict[str, set[str]] = defaultdict(set)
    teams: dict[str, set[str]] = defaultdict(set)
    paths: dict[str, str] = {}
    for ti, team in enumerate(spec.teams):
        if team.retiring:
            continue
        for i, arn in enumerate(team.access.viewers):
            groups[arn].add(names.viewers_group(team.name))
            teams[arn].add(team.name)
            paths.setdefault(arn, f"teams[{ti}].access.viewers[{i}]")
        for i, arn in enumerate(team.access.submitters):
            groups[arn].add(names.submitters_group(team.name))
            teams[arn].add(team.name)
            paths.setdefault(arn, f"teams[{ti}].access.submitters[{i}]")
        studio = team.contract.unified_studio if team.contract else None
        if studio is not None:
            groups[studio.project_role_arn].update(project_role_groups(team.name))
            teams[studio.project_role_arn].add(team.name)
            paths.setdefault(studio.project_role_arn, f"teams[{ti}].contract.unifiedStudio.projectRoleArn")
    return tuple(
        PrincipalAccess(arn, tuple(sorted(groups[arn])), tuple(sorted(teams[arn])), names.principal_key(arn),
                        path=paths[arn])
        for arn in sorted(groups)
    )
