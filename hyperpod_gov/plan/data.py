"""Per-team data: the team buckets and who they admit, the nodes' image registries, and each team's data paths
in words (``explain`` and the contract record)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..spec.models import GovernanceSpec
from . import names
from .identity import IdentityPlan


@dataclass(frozen=True)
class TeamStoragePlan:
    """A team bucket (``teams[].storage.bucket: create``) and the principals its bucket and key policies admit."""

    team: str
    bucket: str  # names.team_bucket: global, so account and region are in it
    roles: tuple[str, ...]  # read-write: the team's Pod Identity source roles, sorted (none while retiring)
    submitters: tuple[str, ...]  # read-write: the team's submitters, sorted (none while retiring)
    readers: tuple[str, ...]  # read only: the viewers with storage.viewersRead who do not submit, sorted
    path: str = field(kw_only=True, compare=False)  # "teams[3].storage"

    @property
    def writers(self) -> tuple[str, ...]:
        return tuple(sorted(set(self.roles) | set(self.submitters)))

    @property
    def admitted(self) -> tuple[str, ...]:
        """Every principal the bucket policy lets through its denies, sorted."""
        return tuple(sorted(set(self.writers) | set(self.readers)))


def storage_plans(spec: GovernanceSpec, identities: tuple[IdentityPlan, ...]) -> tuple[TeamStoragePlan, ...]:
    """The team buckets, sorted by team. A retiring team's bucket stays (it holds the team's data) but admits
    nobody: its people lose access with their cluster access."""
    cap = spec.accounts.capacity
    out = []
    for i, team in sorted(enumerate(spec.teams), key=lambda it: it[1].name):
        if team.storage.bucket != "create":
            continue
        roles: set[str] = set()
        submitters: set[str] = set()
        readers: set[str] = set()
        if not team.retiring:  # identity_plans leaves a retiring team's identities out already
            roles = {w.source_role_arn for w in identities if w.team == team.name}
            submitters = set(team.access.submitters)
            readers = set(team.access.viewers) - submitters if team.storage.viewers_read else set()
        out.append(TeamStoragePlan(team.name, names.team_bucket(spec.name, team.name, cap.id, cap.region),
                                   tuple(sorted(roles)), tuple(sorted(submitters)), tuple(sorted(readers)),
                                   path=f"teams[{i}].storage"))
    return tuple(out)


@dataclass(frozen=True)
class ImageRegistriesPlan:
    """``cluster.imageRegistries``: the spec's own accounts' repositories the nodes may pull from."""

    repository_arns: tuple[str, ...]  # sorted; a name prefix as repository/<prefix>*
    own_accounts: tuple[str, ...]  # capacity, consumers and trusted accounts, sorted: only the listed ones of these


def image_registries(spec: GovernanceSpec, partition: str) -> Optional[ImageRegistriesPlan]:
    """None when the spec names none: the nodes keep pull rights on every repository of the region."""
    given = spec.cluster.image_registries
    if given is None:
        return None
    cap = spec.accounts.capacity
    arns = {e if e.startswith("arn:") else
            f"arn:{partition}:ecr:{cap.region}:{cap.id}:repository/{e}{'*' if e.endswith('/') else ''}"
            for e in given}
    own = {cap.id, *(c.id for c in spec.accounts.consumers), *spec.accounts.trusted}
    return ImageRegistriesPlan(tuple(sorted(arns)), tuple(sorted(own)))


def data_paths(identities: tuple[IdentityPlan, ...]) -> list[str]:
    """What a team's pods reach through its workload ``identities``, one line each, sorted: buckets and prefixes,
    keys, secrets and repositories of the source roles, the created target roles' data, and the team bucket."""
    lines: set[str] = set()
    for i in identities:
        g = i.grants
        who = f"({i.service_account})"
        if g.team_bucket:
            lines.add(f"s3://{g.team_bucket}/* read-write, team key {who}")
        lines |= {f"s3://{a.bucket}/{a.prefix}* {a.access} {who}" for a in g.s3}
        lines |= {f"KMS {k} {who}" for k in g.kms_key_arns}
        if g.secrets_arn:
            lines.add(f"secrets {g.secrets_arn} {who}")
        lines |= {f"ECR {r} pull {who}" for r in g.ecr_repository_arns}
        t = i.created_target
        if t is not None:
            lines |= {f"s3://{a.bucket}/{a.prefix}* {a.access} via {i.target_role_arn} {who}" for a in t.s3}
            lines |= {f"KMS {k} via {i.target_role_arn} {who}" for k in t.kms_keys}
        elif i.target_role_arn:
            lines.add(f"whatever {i.target_role_arn} reaches (not the spec's) {who}")
    return sorted(lines)
