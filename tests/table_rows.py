"""Every row of every field table reaches the synthesized templates (issue 54: "a test fails when a table row is
never emitted").

A table row (``plan/fields.py``) names an API member and how the plan gives its value. The emitters build their
resources from the tables (``emit``), so a row whose planned value is not None must show up in the template as the
member it names. This module checks that on a synthesized spec: for each table, the plan parts it is emitted for,
the resource type it becomes, and how the member is spelled in CloudFormation; ``unreached(...)`` lists the rows
planned for some part that no resource of the type carries. The tests call it on each synthesized example
(``tests/test_table_rows_emitted.py``, the Slurm and existing-cluster stack tests).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping

from hyperpod_gov.constructs.task_governance_provider import POLICY_RESOURCE_TYPE, QUOTA_RESOURCE_TYPE
from hyperpod_gov.plan.fields import Field, Table, member_value
from hyperpod_gov.plan.tables import (
    ACCESS_ENTRY, ADDON, ADMIN_ENTRY, CLUSTER, CLUSTER_POLICY, COMPUTE_QUOTA, INSTANCE_GROUP, POD_IDENTITY, TABLES,
    addon_parts, policy_part,
)
from hyperpod_gov.constructs.cluster_extension import RESOURCE_TYPE as EXTENSION_RESOURCE_TYPE
from hyperpod_gov.plan.tables_prometheus import CLUSTER_EXTENSION, GRAFANA_WORKSPACE, PROMETHEUS_WORKSPACE, RULE_GROUPS
from hyperpod_gov.plan.evidence import evidence_of
from hyperpod_gov.plan.tables_evidence import EVIDENCE_BUCKET
from hyperpod_gov.plan.tables_studio import (DOMAIN_UNIT, POLICY_GRANT, PROJECT_MEMBERSHIP, PROJECT_PROFILE_TABLE,
                                             STUDIO_PROJECT, UNIT_OWNER)


def _pascal(member: str) -> str:
    """An EKS member (camelCase) as CloudFormation spells it: each step with a capital first letter."""
    return ".".join(step[:1].upper() + step[1:] for step in member.split("."))


@dataclass(frozen=True)
class Emitted:
    """Where a table's objects are emitted: the plan parts, the CloudFormation type, and the items of a resource's
    properties that are one object each (the cluster's instance groups are items of one resource)."""

    parts: Callable[[Any], Iterable[Any]]
    types: tuple[str, ...]
    spell: Callable[[str], str] = lambda member: member
    items: Callable[[Mapping[str, Any]], Iterable[Mapping[str, Any]]] = lambda props: (props,)


def _domains(plan: Any) -> list[Any]:
    return [d for s in plan.contracts.studio for d in s.domains]


def _governed(plan: Any) -> bool:
    """Task governance's own objects: an EKS cluster in task-governance mode (a Slurm cluster has no quota)."""
    return plan.task_governance and plan.slurm is None


# The native types, or the custom resources of a region without them (same properties, beside a ServiceToken).
EMITTED: dict[int, Emitted] = {
    id(COMPUTE_QUOTA): Emitted(lambda plan: plan.teams if _governed(plan) else (),
                               ("AWS::SageMaker::ComputeQuota", QUOTA_RESOURCE_TYPE)),
    id(CLUSTER_POLICY): Emitted(lambda plan: (policy_part(plan),) if _governed(plan) else (),
                                ("AWS::SageMaker::ClusterSchedulerConfig", POLICY_RESOURCE_TYPE)),
    id(CLUSTER): Emitted(lambda plan: () if plan.cluster.existing else (plan.cluster,), ("AWS::SageMaker::Cluster",)),
    id(INSTANCE_GROUP): Emitted(lambda plan: () if plan.cluster.existing else plan.instance_groups,
                                ("AWS::SageMaker::Cluster",), items=lambda props: props.get("InstanceGroups", ())),
    id(ACCESS_ENTRY): Emitted(lambda plan: plan.principals, ("AWS::EKS::AccessEntry",), _pascal),
    id(ADMIN_ENTRY): Emitted(lambda plan: () if plan.cluster.existing else plan.cluster.admins,
                             ("AWS::EKS::AccessEntry",), _pascal),
    id(POD_IDENTITY): Emitted(lambda plan: plan.identities, ("AWS::EKS::PodIdentityAssociation",), _pascal),
    id(ADDON): Emitted(lambda plan: () if plan.cluster.existing else addon_parts(plan), ("AWS::EKS::Addon",), _pascal),
    # Unified Studio delegation (the studio stacks of a spec with the unifiedStudio section)
    id(DOMAIN_UNIT): Emitted(lambda plan: [u for d in _domains(plan) for u in d.units], ("AWS::DataZone::DomainUnit",)),
    id(UNIT_OWNER): Emitted(lambda plan: [o for d in _domains(plan) for u in d.units for o in u.owner_parts],
                            ("AWS::DataZone::Owner",)),
    id(POLICY_GRANT): Emitted(lambda plan: [g for d in _domains(plan) for u in d.units for g in u.grants],
                              ("AWS::DataZone::PolicyGrant",)),
    id(PROJECT_PROFILE_TABLE): Emitted(lambda plan: [p for d in _domains(plan) for p in d.profiles],
                                       ("AWS::DataZone::ProjectProfile",)),
    id(STUDIO_PROJECT): Emitted(lambda plan: [p for d in _domains(plan) for p in d.projects],
                                ("AWS::DataZone::Project",)),
    # monitoring.prometheus and monitoring.grafana (the monitoring stack)
    id(PROMETHEUS_WORKSPACE): Emitted(lambda plan: (plan.prometheus,) if plan.prometheus and plan.prometheus.creates
                                      else (), ("AWS::APS::Workspace",)),
    id(RULE_GROUPS): Emitted(lambda plan: plan.prometheus.rules if plan.prometheus else (),
                             ("AWS::APS::RuleGroupsNamespace",)),
    id(GRAFANA_WORKSPACE): Emitted(lambda plan: (plan.prometheus.grafana,) if plan.prometheus and
                                   plan.prometheus.grafana else (), ("AWS::Grafana::Workspace",)),
    # a Slurm cluster's observability extension (monitoring.prometheus on Slurm: the capacity stack)
    id(CLUSTER_EXTENSION): Emitted(lambda plan: (plan.prometheus.extension,) if plan.prometheus and
                                   plan.prometheus.extension else (), (EXTENSION_RESOURCE_TYPE,)),
    id(PROJECT_MEMBERSHIP): Emitted(lambda plan: [m for d in _domains(plan) for p in d.projects for m in p.memberships],
                                    ("AWS::DataZone::ProjectMembership",)),
    # monitoring.evidence (the monitoring stack, or a Slurm spec's capacity stack)
    id(EVIDENCE_BUCKET): Emitted(lambda plan: [e for e in (evidence_of(plan),) if e is not None], ("AWS::S3::Bucket",)),
}


_ABSENT = object()


def _has(props: Mapping[str, Any], member: str) -> bool:
    return member_value(props, member, _ABSENT) is not _ABSENT


def planned_rows(table: Table, plan: Any) -> set[str]:
    """The members of ``table`` whose planned value is not None for some part of ``plan`` (rows read from the
    plan only: deploy-time rows take their value from the emitter's context)."""
    out = set()
    for part in EMITTED[id(table)].parts(plan):
        for row in table.fields:
            if row.get is not None and row.get(part) is not None:
                out.add(row.member)
    return out


def carried(table: Table, templates: Mapping[str, Mapping[str, Any]]) -> set[str]:
    """The members of ``table`` that some resource of its type carries, in any of ``templates``."""
    where = EMITTED[id(table)]
    out = set()
    for template in templates.values():
        for resource in (template.get("Resources") or {}).values():
            if resource.get("Type") not in where.types:
                continue
            for item in where.items(resource.get("Properties") or {}):
                out.update(row.member for row in table.fields if _has(item, where.spell(row.member)))
    return out


def unreached(plan: Any, templates: Mapping[str, Mapping[str, Any]]) -> dict[str, list[str]]:
    """Table kind/label -> the rows planned in ``plan`` that no synthesized resource carries (empty: all reach)."""
    out = {}
    for table in TABLES:
        missing = sorted(planned_rows(table, plan) - carried(table, templates))
        if missing:
            out[f"{table.kind} ({table.label})"] = missing
    return out


def rows_planned(plans: Iterable[Any]) -> dict[str, set[str]]:
    """Table label -> every row some part of one of ``plans`` gives a value (which rows the examples exercise)."""
    out: dict[str, set[str]] = {t.label: set() for t in TABLES}
    for plan in plans:
        for table in TABLES:
            out[table.label] |= planned_rows(table, plan)
    return out


def value_rows(table: Table) -> list[Field]:
    """The rows of ``table`` with a planned value (not deploy-time)."""
    return [row for row in table.fields if row.get is not None]
