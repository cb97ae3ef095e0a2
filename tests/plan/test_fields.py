"""One declaration per governed field: a member that reaches an emitter has a table row, a table row's spec
path has a governance view row, and every plan attribute is read by a row or named with the reason it needs
none. Each test here fails when a new key skips one of emit, drift, diff, explain or import."""

from __future__ import annotations

import dataclasses
import json

import pytest

from hyperpod_gov.plan import ClusterPlan, InstanceGroupPlan, Plan, TeamPlan
from hyperpod_gov.plan.access import PrincipalAccess
from hyperpod_gov.plan.fields import Field, Table, compare, emit, imported, leaf_members
from hyperpod_gov.plan.evidence import EvidencePlan
from hyperpod_gov.plan.identity import IdentityPlan
from hyperpod_gov.plan.tables_evidence import EVIDENCE_BUCKET
from hyperpod_gov.plan.plan import AdminPlan, FlavorPlan, PriorityClassPlan
from hyperpod_gov.plan.tables import (ACCESS_ENTRY, ADDON, ADMIN_ENTRY, CLUSTER, CLUSTER_POLICY, COMPUTE_QUOTA,
                                      INSTANCE_GROUP, POD_IDENTITY, TABLES, AddonPart, PolicyPart)
from hyperpod_gov.plan.prometheus import GrafanaPlan, PrometheusPlan, TeamRules
from hyperpod_gov.plan.slurm import SlurmGroupPlan, SlurmTeamPlan
from hyperpod_gov.plan.slurm_observability import ExtensionPlan
from hyperpod_gov.plan.tables_prometheus import CLUSTER_EXTENSION, GRAFANA_WORKSPACE, PROMETHEUS_WORKSPACE, RULE_GROUPS
from hyperpod_gov.plan.tables_studio import (DOMAIN_UNIT, POLICY_GRANT, PROJECT_MEMBERSHIP, PROJECT_PROFILE_TABLE,
                                             STUDIO_PROJECT, UNIT_OWNER)
from hyperpod_gov.plan.unified_studio import (DomainPlan, GrantPlan, MembershipPart, OwnerPart, ProfilePlan,
                                              ProjectPlan, UnitPlan)
from hyperpod_gov.plan.views_studio import STUDIO
from hyperpod_gov.plan.views import (CAPACITY, CLUSTER as CLUSTER_VIEW, INSTANCE_GROUPS, MONITORING, NOT_GOVERNED,
                                     PRIORITY_CLASSES, SLURM, SLURM_GROUPS, SLURM_TEAMS, TEAM, VIEWS)

# Which resources each table emits, and how CloudFormation spells its members (EKS: a capital first letter).
EMITTED = {
    "AWS::SageMaker::ComputeQuota": COMPUTE_QUOTA,
    "AWS::SageMaker::ClusterSchedulerConfig": CLUSTER_POLICY,
    "AWS::SageMaker::Cluster": CLUSTER,
    "AWS::EKS::PodIdentityAssociation": POD_IDENTITY,
    "AWS::EKS::Addon": ADDON,
    # The SDK-backed custom resource takes the native types' properties (regions without them).
    "Custom::ComputeQuota": COMPUTE_QUOTA,
    "Custom::ClusterSchedulerConfig": CLUSTER_POLICY,
}
# The provider's, not the object's.
CUSTOM_RESOURCE_MEMBERS = {"ServiceToken"}


def _api(table: Table, member: str) -> str:
    return member[0].lower() + member[1:] if table.kind in ("AccessEntry", "PodIdentityAssociation", "Addon") \
        else member


def _covered(table: Table, member: str) -> bool:
    """A member is covered by a row of that member or of one of its parents (a row may hold a whole struct)."""
    return any(member == f.member or member.startswith(f.member + ".") for f in table.fields)


def _governed_resources(templates: dict) -> list[tuple[str, Table, dict]]:
    out = []
    for stack, template in sorted(templates.items()):
        for lid, resource in sorted(template.get("Resources", {}).items()):
            kind, props = resource["Type"], resource.get("Properties", {})
            if kind == "AWS::EKS::AccessEntry":
                if "KubernetesGroups" in props:
                    out.append((f"{stack}/{lid}", ACCESS_ENTRY, props))
                elif lid.startswith("EksAdmin"):
                    out.append((f"{stack}/{lid}", ADMIN_ENTRY, props))
            elif kind == "AWS::SageMaker::Cluster":
                out.append((f"{stack}/{lid}", CLUSTER, {k: v for k, v in props.items() if k != "InstanceGroups"}
                            | {"InstanceGroups": []}))
                out += [(f"{stack}/{lid}/InstanceGroups[{i}]", INSTANCE_GROUP, g)
                        for i, g in enumerate(props["InstanceGroups"])]
            elif kind in EMITTED:
                out.append((f"{stack}/{lid}", EMITTED[kind],
                            {k: v for k, v in props.items() if k not in CUSTOM_RESOURCE_MEMBERS}))
    return out


@pytest.mark.parametrize("example", ["enterprise", "startup"])
def test_every_member_the_emitters_write_has_a_table_row(example, request):
    templates = request.getfixturevalue(example).templates  # the session's synthesized example
    found = _governed_resources(templates)
    kinds = {"Cluster", "InstanceGroup", "AccessEntry", "PodIdentityAssociation", "Addon"}
    if request.getfixturevalue(example).spec.scheduler.mode == "task-governance":
        kinds |= {"ComputeQuota", "ClusterSchedulerConfig"}
    assert {t.kind for _, t, _ in found} == kinds
    missing = sorted({(t.kind, _api(t, m)) for where, t, props in found for m in leaf_members(props)
                      if not _covered(t, _api(t, m))})
    assert missing == [], f"members written with no table row (add a row to plan/tables.py): {missing}"


def test_a_member_without_a_row_is_found():
    stripped = dataclasses.replace(COMPUTE_QUOTA, fields=tuple(f for f in COMPUTE_QUOTA.fields
                                                               if f.member != "ComputeQuotaConfig.PreemptTeamTasks"))
    props = {"ComputeQuotaConfig": {"PreemptTeamTasks": "Never", "ComputeQuotaResources": []}}
    assert [m for m in leaf_members(props) if not _covered(stripped, m)] == ["ComputeQuotaConfig.PreemptTeamTasks"]


def test_every_row_says_how_drift_and_import_treat_it():
    for table in TABLES:
        for f in table.fields:
            assert f.get is not None or f.drift is not None, f"{table.kind}.{f.member}: a context value drift cannot plan"
            assert f.to_spec is not None or f.imports, f"{table.kind}.{f.member}: say how import maps it, or why not"


def _spec_paths(table: Table) -> set[str]:
    return {f"{table.spec}.{alt}" for f in table.fields if f.spec for alt in f.spec.split("|")}


def _view_paths() -> set[str]:
    return {alt for view in VIEWS for row in view.rows for alt in row.spec.split("|")}


def _known_to_a_view(path: str, views: set[str]) -> bool:
    """A path is shown when a view row shows it, a part of it, or the object it belongs to."""
    def under(a: str, b: str) -> bool:
        return a == b or a.startswith(b + ".") or a.startswith(b + "[")
    return any(under(path, v) or under(v, path) for v in views)


def test_every_spec_path_a_table_reads_is_in_a_governance_view():
    views = _view_paths()
    missing = sorted(p for t in TABLES for p in _spec_paths(t) if not _known_to_a_view(p, views))
    assert missing == [], f"spec paths that diff and explain would not show (add a row to plan/views.py): {missing}"


def test_a_table_path_without_a_view_row_is_found():
    views = _view_paths() - {"teams[].preemptTeamTasks"}
    assert not _known_to_a_view("teams[].preemptTeamTasks", views)


# Each plan part, with the tables and views whose rows read it.
READERS: dict[type, tuple[object, ...]] = {
    TeamPlan: (COMPUTE_QUOTA, TEAM),
    InstanceGroupPlan: (INSTANCE_GROUP, INSTANCE_GROUPS),
    IdentityPlan: (POD_IDENTITY,),
    PrincipalAccess: (ACCESS_ENTRY,),
    AdminPlan: (ADMIN_ENTRY,),
    ClusterPlan: (CLUSTER, CLUSTER_VIEW),
    Plan: (CLUSTER_VIEW, SLURM, MONITORING),
    PolicyPart: (CLUSTER_POLICY,),
    AddonPart: (ADDON,),
    FlavorPlan: (CAPACITY,),
    PriorityClassPlan: (PRIORITY_CLASSES,),
    # Slurm-orchestrated clusters
    SlurmTeamPlan: (SLURM_TEAMS,),
    SlurmGroupPlan: (SLURM_GROUPS,),
    # Unified Studio delegation
    DomainPlan: (STUDIO,),
    UnitPlan: (DOMAIN_UNIT,),
    OwnerPart: (UNIT_OWNER,),
    GrantPlan: (POLICY_GRANT,),
    ProfilePlan: (PROJECT_PROFILE_TABLE,),
    ProjectPlan: (STUDIO_PROJECT,),
    MembershipPart: (PROJECT_MEMBERSHIP,),
    # monitoring.prometheus and monitoring.grafana
    PrometheusPlan: (PROMETHEUS_WORKSPACE,),
    TeamRules: (RULE_GROUPS,),
    GrafanaPlan: (GRAFANA_WORKSPACE,),
    ExtensionPlan: (CLUSTER_EXTENSION,),
    # monitoring.evidence
    EvidencePlan: (EVIDENCE_BUCKET,),
}


def _read(reader: object) -> set[str]:
    rows = reader.fields if isinstance(reader, Table) else reader.rows  # type: ignore[attr-defined]
    names = {name for row in rows for name in row.plan_fields}
    if isinstance(reader, Table):
        names |= set(reader.exempt)
    return names


@pytest.mark.parametrize("part", READERS, ids=lambda c: c.__name__)
def test_every_attribute_of_a_plan_part_is_read_by_a_row_or_exempt_with_a_reason(part):
    read = set().union(*(_read(r) for r in READERS[part]))
    exempt = {k.split(".", 1)[1] for k in NOT_GOVERNED if k.split(".", 1)[0] == part.__name__}
    unread = sorted(f.name for f in dataclasses.fields(part) if f.name not in read | exempt)
    assert unread == [], (f"{part.__name__} attributes no table or view reads: {unread}; add a row (plan/tables.py, "
                          "plan/views.py) or name it in views.NOT_GOVERNED with the reason")


def test_an_unread_attribute_is_found():
    @dataclasses.dataclass(frozen=True)
    class Grown(TeamPlan):
        new_knob: int = 0

    read = set().union(*(_read(r) for r in READERS[TeamPlan]))
    assert [f.name for f in dataclasses.fields(Grown)
            if f.name not in read and f"TeamPlan.{f.name}" not in NOT_GOVERNED] == ["new_knob"]


def test_every_exemption_names_an_attribute_that_exists():
    by_name = {c.__name__: {f.name for f in dataclasses.fields(c)} for c in READERS}
    for key in NOT_GOVERNED:
        cls, attr = key.split(".", 1)
        assert attr in by_name[cls], key
    for table in TABLES:
        for attr in table.exempt:
            assert any(attr in names for names in by_name.values()), (table.kind, attr)


# --- the generic functions on hand-written inputs ----------------------------------------------------------------

ROWS = Table("Thing", "thing", "things[]", (
    Field("A", "a", "a", get=lambda p: p["a"]),
    Field("Sharing.Strategy", "strategy", "strategy", get=lambda p: p["strategy"]),
    Field("Sharing.Limit", "limit", "limit", get=lambda p: p.get("limit"), default=50,
          after="Sharing.Strategy", to_spec=int),
    Field("Items", "items", "items", get=lambda p: p["items"], keyed_by="Key"),
    Field("Arn", "arn", "", drift="deploy-time", imports="deploy-time"),
))
PART = {"a": 1, "strategy": "Lend", "limit": 25, "items": [{"Key": "x", "N": 1, "M": 2}, {"Key": "y", "N": 3}]}


def test_emit_nests_members_in_row_order_and_leaves_out_none():
    assert emit(ROWS, {**PART, "limit": None}, {"Arn": "arn:x"}) == {
        "A": 1, "Sharing": {"Strategy": "Lend"}, "Items": PART["items"], "Arn": "arn:x"}


def test_compare_applies_the_service_default_to_an_absent_member():
    live = emit(ROWS, PART)
    del live["Sharing"]["Limit"]
    assert [(d.field, d.expected, d.actual) for d in compare(ROWS, PART, live)] == [("Sharing.Limit", 25, 50)]
    assert compare(ROWS, {**PART, "limit": None}, live) == []  # planned absent = the service's default


def test_compare_skips_a_member_whose_parent_setting_differs():
    live = json.loads(json.dumps(emit(ROWS, PART)))
    live["Sharing"] = {"Strategy": "DontLend", "Limit": 10}
    assert [d.field for d in compare(ROWS, PART, live)] == ["Sharing.Strategy"]


def test_compare_names_one_member_of_a_keyed_item_or_the_whole_item():
    live = json.loads(json.dumps(emit(ROWS, PART)))
    live["Items"][0]["N"] = 9
    live["Items"].pop(1)
    assert [(d.field, d.expected, d.actual) for d in compare(ROWS, PART, live)] == [
        ("Items[x].N", 1, 9), ("Items[y]", {"N": 3}, None)]


def test_emit_writes_a_rows_deploy_value_and_compare_reads_the_planned_one():
    """A deploy-time stand-in (``deploy``) is what the template holds; drift still compares the planned value."""
    rows = Table("Thing", "thing", "things[]", (
        Field("Arn", "arn", "name", get=lambda p: p["arn"], deploy=lambda p, ctx: ctx.get("Arn", p["arn"])),
        Field("Uri", "uri", "uri", get=lambda p: p.get("uri"), deploy=lambda p, ctx: p.get("uri") or ctx.get("Uri")),
    ))
    part = {"arn": "arn:aws:eks:us-east-1:1:cluster/x"}
    assert emit(rows, part, {"Arn": "<reference>", "Uri": "s3://shipped/"}) == {"Arn": "<reference>",
                                                                              "Uri": "s3://shipped/"}
    assert emit(rows, {**part, "uri": "s3://own/"}, {"Uri": "s3://shipped/"}) == {"Arn": part["arn"],
                                                                                 "Uri": "s3://own/"}
    assert compare(rows, part, {"Arn": part["arn"]}) == []  # the planned ARN, not the reference


def test_import_maps_live_values_back_onto_spec_paths():
    assert imported(ROWS, {"Sharing": {"Limit": 30}, "A": 5}) == {"limit": 30}


# --- the per-team Kubernetes objects ----------------------------------------------------------------------------


def _member(obj: dict, member: str):
    for step in member.split("."):
        obj = (obj or {}).get(step)
    return obj


@pytest.mark.parametrize("example", ["enterprise", "startup"])
def test_team_manifests_hold_exactly_the_table_objects_with_the_planned_values(example):
    from hyperpod_gov.charts import render
    from hyperpod_gov.charts.fields import planned_objects
    from hyperpod_gov.plan import build_plan
    from hyperpod_gov.spec import load_spec
    from tests.conftest import EXAMPLES, TODAY

    plan = build_plan(load_spec(EXAMPLES / f"{example}.yaml", today=TODAY))
    manifests = render(plan)
    for team in plan.tenants:
        rendered = {(o["kind"], o["metadata"]["name"]): o for o in manifests.teams[team.name]}
        planned = planned_objects(plan, team)
        assert sorted(rendered) == sorted(planned), f"team {team.name}: objects without a row, or rows without one"
        for key, (row, value) in planned.items():
            if row.member is not None:
                assert _member(rendered[key], row.member) == value, (team.name, key, row.member)


def test_every_team_object_row_names_a_spec_path_a_view_shows():
    from hyperpod_gov.charts.fields import TEAM_OBJECTS

    views = _view_paths()
    missing = [(r.kind, alt) for r in TEAM_OBJECTS if r.spec for alt in r.spec.split("|")
               if not _known_to_a_view(alt, views)]
    assert missing == []


# --- what the emitters write is what the tables plan ---------------------------------------------------------------


def _plain(value) -> bool:
    """A value known at synth (no CloudFormation function or reference inside)."""
    text = json.dumps(value)
    return '"Fn::' not in text and '"Ref"' not in text


def _parts(plan, table: Table) -> dict:
    from hyperpod_gov.plan.tables import addon_parts, policy_part

    if table is COMPUTE_QUOTA:
        return {t.quota_name: t for t in plan.teams}
    if table is CLUSTER_POLICY:
        return {plan.policy_name: policy_part(plan)}
    if table is CLUSTER:
        return {plan.cluster.name: plan.cluster}
    if table is INSTANCE_GROUP:
        return {g.name: g for g in plan.instance_groups}
    if table is ACCESS_ENTRY:
        return {p.principal_arn: p for p in plan.principals}
    if table is ADMIN_ENTRY:
        return {a.principal_arn: a for a in plan.cluster.admins}
    if table is POD_IDENTITY:
        return {(i.namespace, i.service_account): i for i in plan.identities}
    return {a.name: a for a in addon_parts(plan)}


def _key(table: Table, props: dict):
    if table is POD_IDENTITY:
        return props["Namespace"], props["ServiceAccount"]
    member = {"ComputeQuota": "Name", "ClusterSchedulerConfig": "Name", "Cluster": "ClusterName",
              "InstanceGroup": "InstanceGroupName", "AccessEntry": "PrincipalArn", "Addon": "AddonName"}[table.kind]
    return props[member]


def _template_value(table: Table, props: dict, member: str):
    from hyperpod_gov.plan.fields import member_value

    cfn = member[0].upper() + member[1:] if table.kind in ("AccessEntry", "PodIdentityAssociation", "Addon") \
        else member
    value = member_value(props, cfn)
    if member == "configurationValues" and isinstance(value, str):
        return json.loads(value)
    return value


@pytest.mark.parametrize("example", ["enterprise", "startup"])
def test_every_value_the_emitters_write_is_the_one_the_table_plans(example, request):
    from hyperpod_gov.plan import build_plan

    synthesized = request.getfixturevalue(example)
    plan = build_plan(synthesized.spec)
    checked = 0
    for where, table, props in _governed_resources(synthesized.templates):
        if table is CLUSTER:
            continue  # its instance groups are checked one by one; the rest is references or constants
        part = _parts(plan, table)[_key(table, props)]
        for f in table.fields:
            if f.get is None or f.member in ("tags", "Tags"):
                continue
            if f.when is not None and not f.when(part):
                continue  # the row does not apply to this part (e.g. own lifecycle scripts: the shipped ones are written)
            planned, written = f.get(part), _template_value(table, props, f.member)
            if written is not None and not _plain(written):
                continue  # a deploy-time reference (the role's ARN, say): the plan holds the name it resolves to
            if table is ACCESS_ENTRY and f.member == "kubernetesGroups":
                written = sorted(written or [])
            if table is ADMIN_ENTRY and f.member == "accessPolicies":
                written = [{"policyArn": p["PolicyArn"].rsplit("/", 1)[-1],
                            "accessScope": {"type": p["AccessScope"]["Type"]}} for p in written or []]
            assert written == planned, f"{where}: {f.member} is {written!r}, the table plans {planned!r}"
            checked += 1
    assert checked > 40  # not vacuous: every governed resource of the example was compared
