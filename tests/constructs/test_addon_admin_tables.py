"""The EKS add-ons and the cluster admins' access entries are emitted from their field tables only (issue 54, "one
emitter per resource"): each ``ADDON`` / ``ADMIN_ENTRY`` row with a planned value reaches the synthesized
``AWS::EKS::Addon`` / ``AWS::EKS::AccessEntry`` of its part, with the planned value, and a row taken out of a
table is taken out of the template."""

from __future__ import annotations

import dataclasses
import functools
import importlib
import json
from typing import Any, Iterable, Mapping

import pytest

from hyperpod_gov.plan import build_plan
from hyperpod_gov.plan.fields import Table, member_value
from hyperpod_gov.plan.tables import ADDON, ADMIN_ENTRY, addon_parts, same_arn
from hyperpod_gov.plan.tables_access import CLUSTER_ADMIN_POLICY, CLUSTER_ADMIN_POLICY_ARN, PARTITION, with_partition
from tests.synth_helpers import minimal_app, resources


def _cfn(member: str) -> str:
    """An EKS member (camelCase) as CloudFormation spells it (``cfn_properties``): a capital first letter."""
    return member[:1].upper() + member[1:]


def _capitalized(value: Any) -> Any:
    if isinstance(value, dict):
        return {_cfn(k): _capitalized(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_capitalized(v) for v in value]
    return value


@functools.lru_cache(maxsize=1)
def _stack():
    from aws_cdk import Stack

    return Stack(minimal_app(), "Render")


def _rendered(value: Any) -> Any:
    """A planned value as the template holds it: ``${partition}`` as the stack's partition (``Fn::Join``), nested
    members capitalised."""
    from aws_cdk import Aws

    return _stack().resolve(_capitalized(with_partition(value, Aws.PARTITION)))


def _all_of(templates: Mapping[str, Mapping[str, Any]], type_: str) -> list[dict[str, Any]]:
    return [p for t in templates.values() for _, p in resources(t, type_)]


def mismatched(table: Table, parts: Iterable[Any], props_of) -> list[str]:
    """``<part>: <member>`` for each row planned for a part that its resource lacks or holds another value of."""
    out = []
    for key, part in parts:
        props = props_of(key)
        for row in table.fields:
            planned = None if row.get is None else row.get(part)
            if planned is None:
                continue
            written = member_value(props, _cfn(row.member))
            if row.member == "configurationValues" and isinstance(written, str):
                written = json.loads(written)
                expected = planned
            else:
                expected = _rendered(planned)
            if written != expected:
                out.append(f"{key}: {row.member}")
    return out


def _addons(templates) -> dict[str, dict[str, Any]]:
    found = _all_of(templates, "AWS::EKS::Addon")
    by_name = {p["AddonName"]: p for p in found}
    assert len(by_name) == len(found), "one AWS::EKS::Addon per add-on"
    return by_name


def _admin_entries(templates) -> dict[str, dict[str, Any]]:
    return {p["PrincipalArn"]: p for p in _all_of(templates, "AWS::EKS::AccessEntry")
            if isinstance(p["PrincipalArn"], str) and "KubernetesGroups" not in p}


@pytest.mark.parametrize("example", ["enterprise", "startup"])
def test_every_planned_addon_row_reaches_its_addon(example, request):
    synthesized = request.getfixturevalue(example)
    plan = build_plan(synthesized.spec)
    written = _addons(synthesized.templates)
    parts = [(a.name, a) for a in addon_parts(plan)]
    assert sorted(written) == sorted(name for name, _ in parts)  # every add-on written is one drift compares
    assert mismatched(ADDON, parts, written.__getitem__) == []
    assert {name: p["PreserveOnDelete"] for name, p in written.items()} == {name: False for name in written}
    assert json.loads(written["vpc-cni"]["ConfigurationValues"])["env"] == {"NETWORK_POLICY_ENFORCING_MODE": "strict"}


@pytest.mark.parametrize("example", ["enterprise", "startup"])
def test_every_planned_admin_row_reaches_its_access_entry(example, request):
    synthesized = request.getfixturevalue(example)
    admins = build_plan(synthesized.spec).cluster.admins
    written = _admin_entries(synthesized.templates)
    assert sorted(written) == sorted(a.principal_arn for a in admins)
    assert mismatched(ADMIN_ENTRY, [(a.principal_arn, a) for a in admins], written.__getitem__) == []


def _join(value: Any, partition: str) -> str:
    """A template's ``Fn::Join`` of strings and ``Ref: AWS::Partition``, as CloudFormation resolves it."""
    sep, items = value["Fn::Join"]
    return sep.join(partition if item == {"Ref": "AWS::Partition"} else item for item in items)


def test_the_admin_row_names_the_policy_arn_the_template_has(startup):
    (entry,) = (p for p in _admin_entries(startup.templates).values())
    (template_policy,) = entry["AccessPolicies"]
    (planned,) = ADMIN_ENTRY.row("accessPolicies").get(build_plan(startup.spec).cluster.admins[0])
    assert planned == {"policyArn": f"arn:{PARTITION}:eks::aws:cluster-access-policy/{CLUSTER_ADMIN_POLICY}",
                       "accessScope": {"type": "cluster"}}
    assert template_policy["AccessScope"] == {"Type": "cluster"}
    for partition in ("aws", "aws-cn", "aws-us-gov"):
        live = _join(template_policy["PolicyArn"], partition)
        assert live == f"arn:{partition}:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy"
        assert same_arn(planned["policyArn"], live, {"partition": partition})
        assert not same_arn(CLUSTER_ADMIN_POLICY, live, {"partition": partition})  # the name alone, as it was
    assert with_partition(CLUSTER_ADMIN_POLICY_ARN, "aws-cn") == _join(template_policy["PolicyArn"], "aws-cn")


# --- the constructs alone, on a small stack: what the tables hold is what they write ------------------------------


def _synth(plan) -> dict[str, Any]:
    from aws_cdk import Stack, aws_eks_v2 as eks

    from hyperpod_gov.constructs.addons import ClusterAddons, SchedulerInstall
    from hyperpod_gov.constructs.eks import AdminAccessEntry

    app = minimal_app()
    stack = Stack(app, "Tables")
    cluster = eks.Cluster.from_cluster_attributes(stack, "Cluster", cluster_name=plan.eks_cluster_name)
    versions = plan.cluster.addon_versions
    addons = ClusterAddons(stack, "Addons", versions=versions, cluster=cluster)
    scheduler = SchedulerInstall(stack, "Scheduler", task_governance=True, versions=versions, kueue_config="",
                                 cluster=cluster)
    scheduler.node.add_dependency(addons.coredns)
    for admin in plan.cluster.admins:
        AdminAccessEntry(stack, f"Admin{admin.key}", admin=admin, cluster_name=plan.eks_cluster_name)
    return app.synth().get_stack_by_name("Tables").template


@pytest.fixture(scope="module")
def small(startup_spec):
    plan = build_plan(startup_spec)
    return plan, _synth(plan)


def _mismatches(plan, template) -> list[str]:
    templates = {"Tables": template}
    addons = _addons(templates)
    parts = [(a.name, a) for a in addon_parts(plan) if a.name in addons]
    admins = _admin_entries(templates)
    return (mismatched(ADDON, parts, addons.__getitem__)
            + mismatched(ADMIN_ENTRY, [(a.principal_arn, a) for a in plan.cluster.admins], admins.__getitem__))


def test_the_constructs_write_every_planned_row(small):
    plan, template = small
    assert sorted(_addons({"t": template})) == ["amazon-sagemaker-hyperpod-taskgovernance", "coredns",
                                                "eks-pod-identity-agent", "kube-proxy", "vpc-cni"]
    assert _mismatches(plan, template) == []
    # The dependency a caller adds on an add-on reaches its resource.
    (scheduler,) = (r for r in template["Resources"].values()
                    if r["Properties"].get("AddonName") == "amazon-sagemaker-hyperpod-taskgovernance")
    assert scheduler["DependsOn"] == [lid for lid, r in template["Resources"].items()
                                      if r["Properties"].get("AddonName") == "coredns"]


def test_a_version_left_to_eks_is_not_written(startup_spec):
    plan = build_plan(startup_spec)
    cluster = dataclasses.replace(plan.cluster, addon_versions=plan.cluster.addon_versions.model_copy(
        update={"coredns": None}))
    template = _synth(dataclasses.replace(plan, cluster=cluster))
    coredns = _addons({"t": template})["coredns"]
    assert "AddonVersion" not in coredns and coredns["PreserveOnDelete"] is False


@pytest.mark.parametrize("module, name, kind, member", [
    ("hyperpod_gov.constructs.addons", "ADDON", "AWS::EKS::Addon", "configurationValues"),
    ("hyperpod_gov.constructs.addons", "ADDON", "AWS::EKS::Addon", "addonVersion"),
    ("hyperpod_gov.constructs.addons", "ADDON", "AWS::EKS::Addon", "preserveOnDelete"),
    ("hyperpod_gov.constructs.eks", "ADMIN_ENTRY", "AWS::EKS::AccessEntry", "accessPolicies"),
])
def test_a_row_dropped_from_a_table_is_dropped_from_the_template(module, name, kind, member, small, monkeypatch):
    """The constructs write what the table holds and nothing of their own: without the row, the member is gone,
    and the check above reports the row."""
    plan, template = small
    assert any(_cfn(member) in p for p in _all_of({"t": template}, kind))  # with the row, it is written
    emitter = importlib.import_module(module)
    table = getattr(emitter, name)
    monkeypatch.setattr(emitter, name, dataclasses.replace(table, fields=tuple(f for f in table.fields
                                                                               if f.member != member)))
    template = _synth(plan)
    assert not any(_cfn(member) in p for p in _all_of({"t": template}, kind))
    assert any(m.endswith(f": {member}") for m in _mismatches(plan, template))


def test_drift_leaves_the_inference_add_ons_deploy_time_configuration_alone():
    """The inference operator's add-on is configured with its roles' ARNs, its TLS bucket and the HyperPod cluster,
    known at deploy only: drift does not hold the live configuration against the plan's none. Another add-on given
    a configuration by hand is still a change."""
    import copy

    from hyperpod_gov.plan.fields import compare
    from hyperpod_gov.spec import parse_spec
    from tests.conftest import BASE, TODAY

    data = copy.deepcopy(BASE)
    data["cluster"]["operators"] = ["training", "inference", "spaces"]
    parts = {a.name: a for a in addon_parts(build_plan(parse_spec(data, today=TODAY)))}
    configured = json.dumps({"executionRoleArn": "arn:aws:iam::111111111111:role/inference"})
    inference = parts["amazon-sagemaker-hyperpod-inference"]
    assert inference.configured_at_deploy
    assert compare(ADDON, inference, {"addonName": inference.name, "addonVersion": inference.version,
                                      "configurationValues": configured}) == []
    cert_manager = parts["cert-manager"]
    assert not cert_manager.configured_at_deploy
    assert [d.field for d in compare(ADDON, cert_manager, {"addonName": cert_manager.name, "addonVersion":
                                                           cert_manager.version, "configurationValues": configured})
            ] == ["configurationValues"]
