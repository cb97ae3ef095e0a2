"""Workload identities resolved: source role names and target role ARNs, per account."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..spec.models import GovernanceSpec, TargetRole
from . import names


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
                path=f"teams[{index[team.name]}].workloadIdentities[{position[w.service_account]}]",
            ))
    return tuple(out)
