"""Workload identities resolved: source role names, target role ARNs, per account, and the grants of the source
roles in the capacity account."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..spec.models import GovernanceSpec, Grants, S3Access, TargetRole
from . import names


@dataclass(frozen=True)
class SourceGrants:
    """What the source role reaches in the capacity account itself (``workloadIdentities[].grants``, and the team
    bucket when the team has one), every list sorted."""

    s3: tuple[S3Access, ...] = ()  # prefixes end at a '/' (spec.teams.folder_prefix), "" for the whole bucket
    kms_key_arns: tuple[str, ...] = ()
    secrets_arn: Optional[str] = None  # arn:...:secret:<prefix>*, the capacity account and region
    ecr_repository_arns: tuple[str, ...] = ()
    team_bucket: Optional[str] = None  # the team's bucket (read-write, with the team's key)

    @property
    def writes(self) -> bool:
        """Some grant writes objects, so the keys also generate data keys."""
        return self.team_bucket is not None or any(a.access == "read-write" for a in self.s3)

    @property
    def empty(self) -> bool:
        return not (self.s3 or self.kms_key_arns or self.secrets_arn or self.ecr_repository_arns or self.team_bucket)


def source_grants(spec: GovernanceSpec, grants: Grants, team_bucket: Optional[str], partition: str) -> SourceGrants:
    """The source role's grants, resolved to ARNs of the capacity account and region."""
    cap = spec.accounts.capacity
    secrets = (f"arn:{partition}:secretsmanager:{cap.region}:{cap.id}:secret:{grants.secrets_prefix}*"
               if grants.secrets_prefix else None)
    return SourceGrants(
        s3=tuple(sorted(set(grants.s3), key=lambda a: (a.bucket, a.prefix, a.access))),
        kms_key_arns=tuple(sorted(set(grants.kms_key_arns))),
        secrets_arn=secrets,
        ecr_repository_arns=tuple(sorted({f"arn:{partition}:ecr:{cap.region}:{cap.id}:repository/{name}"
                                          for name in grants.ecr_repositories})),
        team_bucket=team_bucket,
    )


@dataclass(frozen=True)
class IdentityPlan:
    team: str
    namespace: str
    service_account: str
    source_role_name: str
    source_role_arn: str
    target_role_arn: Optional[str]
    created_target: Optional[TargetRole]  # a role the library creates in a consumer account
    consumer: Optional[str]  # name of the consumer account where that role is created
    consumer_account: Optional[str]  # its id
    grants: SourceGrants = field(default_factory=SourceGrants, kw_only=True)  # the source role's own
    # Where the spec declares it ("teams[3].workloadIdentities[0]"); a list position, not part of its identity.
    path: str = field(kw_only=True, compare=False)


def identity_plans(spec: GovernanceSpec, partition: str = "aws") -> tuple[IdentityPlan, ...]:
    consumers = {c.name: c for c in spec.accounts.consumers}
    cap = spec.accounts.capacity.id
    out = []
    index = {t.name: i for i, t in enumerate(spec.teams)}
    for team in sorted(spec.teams, key=lambda t: t.name):
        if team.retiring:  # its namespace and quota stay for the hand-over; its AWS credentials go
            continue
        position = {w.service_account: i for i, w in enumerate(team.workload_identities)}
        for w in sorted(team.workload_identities, key=lambda w: w.service_account):
            role_name = names.source_role_name(spec.name, team.name, w.service_account)
            consumer = consumers.get(w.target_role.account) if w.target_role else None
            target = w.target_role_arn
            if w.target_role is not None and consumer is not None:
                target = f"arn:{partition}:iam::{consumer.id}:role/{w.target_role.name}"
            bucket = (names.team_bucket(spec.name, team.name, cap, spec.accounts.capacity.region)
                      if team.storage.bucket == "create" else None)
            out.append(IdentityPlan(
                team=team.name,
                namespace=names.namespace(team.name),
                service_account=w.service_account,
                source_role_name=role_name,
                source_role_arn=f"arn:{partition}:iam::{cap}:role/{role_name}",
                target_role_arn=target,
                created_target=w.target_role,
                consumer=consumer.name if consumer else None,
                consumer_account=consumer.id if consumer else None,
                grants=source_grants(spec, w.grants, bucket, partition),
                path=f"teams[{index[team.name]}].workloadIdentities[{position[w.service_account]}]",
            ))
    return tuple(out)
