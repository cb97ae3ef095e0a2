"""The HyperPod cluster is emitted from its field tables only (issue 54): every member ``CLUSTER`` and
``INSTANCE_GROUP`` emit for a plan is in the synthesized ``AWS::SageMaker::Cluster``, with the planned value
(deploy-time members: present), on both orchestrators; and a row taken out of a table takes its member out of
the template, so no second emitter writes it."""

from __future__ import annotations

import copy
import dataclasses
import json
from typing import Any, Mapping

import aws_cdk as cdk
import pytest
from aws_cdk import aws_eks_v2 as eks
from aws_cdk.assertions import Template

from hyperpod_gov.constructs import hyperpod_cluster
from hyperpod_gov.constructs.hyperpod_cluster import HyperPodCluster, SlurmHyperPodCluster
from hyperpod_gov.constructs.lifecycle import SLURM_LIFECYCLE_DIR, LifecycleScripts
from hyperpod_gov.constructs.network import Network
from hyperpod_gov.plan import build_plan
from hyperpod_gov.plan.fields import Table, member_value
from hyperpod_gov.plan.tables import CLUSTER, INSTANCE_GROUP
from hyperpod_gov.spec import parse_spec, read_yaml
from hyperpod_gov.stacks.base import apply_feature_flags
from tests.conftest import EXAMPLES, TODAY
from tests.stacks.test_instance_group_options import every_option
from tests.synth_helpers import minimal_app

DB_NAME = "slurm_acct"


class _DeployTime(dict):
    """emit's context where every deploy-time value is a marker: a member emitted from it is checked for presence
    (the template holds a reference there), the planned ones for their value."""

    def get(self, key: str, default: Any = None) -> Any:
        return f"<deploy-time {key}>"


def _is_marker(value: Any) -> bool:
    return "<deploy-time " in json.dumps(value)


def _eks_plan():
    return build_plan(parse_spec(every_option(), today=TODAY))


def _slurm_plan():
    data = read_yaml(EXAMPLES / "enterprise-slurm.yaml")
    data["cluster"]["slurm"]["accountingDatabase"]["name"] = DB_NAME  # the example leaves Name to the service
    return build_plan(parse_spec(data, today=TODAY))


def _elastic_plan():
    """The elastic example (issue 57) with a pinned AMI on one group and a HyperPod release on another: every
    elastic-capacity row."""
    data = read_yaml(EXAMPLES / "elastic.yaml")
    data["cluster"]["instanceGroups"][0]["imageId"] = "ami-0123456789abcdef0"
    data["cluster"]["instanceGroups"][1]["image"] = {"releaseVersion": "1.2.3"}
    return build_plan(parse_spec(data, today=TODAY))


def _synth_cluster(plan) -> dict[str, Any]:
    """The ``AWS::SageMaker::Cluster`` properties the plan's cluster construct writes, in a stack of its own."""
    app = minimal_app()
    stack = cdk.Stack(app, "Capacity", env=cdk.Environment(account=plan.account, region=plan.region))
    apply_feature_flags(stack)  # as every stack of the library (stacks/base.py)
    network = Network(stack, "Network", network=plan.network)
    if plan.slurm is not None:
        lifecycle = LifecycleScripts(stack, "LifecycleScripts", bucket_name=plan.cluster.lifecycle_bucket,
                                     source=SLURM_LIFECYCLE_DIR)
        SlurmHyperPodCluster(stack, "HyperPod", plan=plan.cluster, network=network, lifecycle=lifecycle)
    else:
        lifecycle = LifecycleScripts(stack, "LifecycleScripts", bucket_name=plan.cluster.lifecycle_bucket)
        cluster = eks.Cluster(stack, "Eks", version=eks.KubernetesVersion.of(plan.cluster.kubernetes_version),
                              vpc=network.vpc)
        HyperPodCluster(stack, "HyperPod", plan=dataclasses.replace(plan.cluster, dependencies_chart=None),
                        network=network, cluster=cluster, lifecycle=lifecycle)
    resources = Template.from_stack(stack).find_resources("AWS::SageMaker::Cluster")
    (resource,) = resources.values()
    return resource["Properties"]


@pytest.fixture(scope="module")
def synthesized() -> dict[str, tuple[Any, dict[str, Any]]]:
    return {name: (plan, _synth_cluster(plan)) for name, plan in (("eks", _eks_plan()), ("slurm", _slurm_plan()),
                                                                  ("elastic", _elastic_plan()))}


def _unreached(table: Table, part: Any, props: Mapping[str, Any]) -> tuple[list[str], set[str]]:
    """(members the table emits for ``part`` that the template lacks or holds with another value, members checked)."""
    missing, checked = [], set()
    for row in table.fields:
        value = row.emitted(part, _DeployTime())
        if value is None or row.member in ("Tags", "InstanceGroups"):
            continue  # the stack's tags; the groups are checked one by one
        written = member_value(props, row.member)
        checked.add(row.member)
        if written is None or (not _is_marker(value) and written != value):
            missing.append(f"{row.member}: the table emits {value!r}, the template holds {written!r}")
    return missing, checked


@pytest.mark.parametrize("orchestrator", ["eks", "slurm", "elastic"])
def test_every_member_the_tables_emit_is_in_the_synthesized_cluster(synthesized, orchestrator):
    plan, props = synthesized[orchestrator]
    missing, _ = _unreached(CLUSTER, plan.cluster, props)
    groups = {g["InstanceGroupName"]: g for g in props["InstanceGroups"]}
    assert sorted(groups) == sorted(g.name for g in plan.instance_groups)
    for g in plan.instance_groups:
        missing += [f"{g.name} {m}" for m in _unreached(INSTANCE_GROUP, g, groups[g.name])[0]]
    assert missing == []


def test_the_two_orchestrators_exercise_every_row(synthesized):
    """Not vacuous: between them, the EKS spec with every group option, the Slurm example (with an accounting
    database) and the elastic example plan a value for every row but the stack's tags."""
    checked = set()
    for plan, props in synthesized.values():
        checked |= _unreached(CLUSTER, plan.cluster, props)[1]
        groups = {g["InstanceGroupName"]: g for g in props["InstanceGroups"]}
        for g in plan.instance_groups:
            checked |= {f"InstanceGroups.{m}" for m in _unreached(INSTANCE_GROUP, g, groups[g.name])[1]}
    rows = {f.member for f in CLUSTER.fields} | {f"InstanceGroups.{f.member}" for f in INSTANCE_GROUP.fields}
    assert rows - checked == {"Tags", "InstanceGroups"}


def test_a_template_member_that_no_row_emits_is_found(synthesized):
    """The check above fails when the template and the table disagree: a group whose template lost a member."""
    plan, props = synthesized["slurm"]
    g = plan.instance_groups[0]
    written = copy.deepcopy(next(x for x in props["InstanceGroups"] if x["InstanceGroupName"] == g.name))
    del written["SlurmConfig"]["NodeType"]
    assert [m.split(":")[0] for m in _unreached(INSTANCE_GROUP, g, written)[0]] == ["SlurmConfig.NodeType"]


def _without(table: Table, member: str) -> Table:
    return dataclasses.replace(table, fields=tuple(f for f in table.fields if f.member != member))


@pytest.mark.parametrize("orchestrator, table, member", [
    ("eks", "INSTANCE_GROUP", "ThreadsPerCore"),
    ("eks", "INSTANCE_GROUP", "KubernetesConfig.Taints"),
    ("eks", "CLUSTER", "Orchestrator.Eks.ClusterArn"),
    ("slurm", "INSTANCE_GROUP", "SlurmConfig.PartitionNames"),
    ("slurm", "CLUSTER", "Orchestrator.Slurm.AccountingDatabase.Port"),
])
def test_a_row_dropped_from_its_table_is_dropped_from_the_template(synthesized, monkeypatch, orchestrator, table,
                                                                   member):
    """The construct writes nothing by hand: without the row, the member is gone from the template."""
    plan, props = synthesized[orchestrator]
    where = props["InstanceGroups"] if table == "INSTANCE_GROUP" else [props]
    assert any(member_value(w, member) is not None for w in where)  # written while the row is there
    monkeypatch.setattr(hyperpod_cluster, table, _without(getattr(hyperpod_cluster, table), member))
    dropped = _synth_cluster(plan)
    where = dropped["InstanceGroups"] if table == "INSTANCE_GROUP" else [dropped]
    assert all(member_value(w, member) is None for w in where)


# --- emit's output as CfnCluster's typed structs (constructs/_l1.py) ----------------------------------------------

GROUP = {"InstanceGroupName": "gpu", "InstanceType": "ml.p5.48xlarge", "InstanceCount": 2, "ExecutionRole": "arn:r",
         "KubernetesConfig": {"Labels": {"Team": "a", "example.com/pool": "b"}},
         "InstanceStorageConfigs": [{"EbsVolumeConfig": {"VolumeSizeInGB": 500}}]}


def test_l1_kwargs_builds_the_structs_and_keeps_a_maps_keys():
    from aws_cdk import aws_sagemaker as sagemaker

    from hyperpod_gov.constructs._l1 import l1_kwargs

    kwargs = l1_kwargs(sagemaker.CfnCluster, {"ClusterName": "ml", "InstanceGroups": [GROUP]})
    (group,) = kwargs["instance_groups"]
    assert isinstance(group, sagemaker.CfnCluster.ClusterInstanceGroupProperty)
    assert group.kubernetes_config.labels == {"Team": "a", "example.com/pool": "b"}  # label keys are data
    assert group.instance_storage_configs[0].ebs_volume_config.volume_size_in_gb == 500
    assert kwargs["cluster_name"] == "ml"


def test_l1_kwargs_refuses_a_member_the_l1_class_does_not_have():
    from aws_cdk import aws_sagemaker as sagemaker

    from hyperpod_gov.constructs._l1 import l1_kwargs

    with pytest.raises(KeyError, match="PlacementStrategy"):
        l1_kwargs(sagemaker.CfnCluster, {"InstanceGroups": [{**GROUP, "PlacementStrategy": "spread"}]})


def test_the_escape_hatch_still_reaches_into_an_instance_group():
    """A property override of one group's member (``InstanceGroups.0.InstanceCount``) edits that member only: the
    groups are the L1's own list, not a raw override a deeper override would replace."""
    from aws_cdk import aws_sagemaker as sagemaker

    from hyperpod_gov.constructs._l1 import l1_kwargs

    app = minimal_app()
    stack = cdk.Stack(app, "S")
    cfn = sagemaker.CfnCluster(stack, "Resource", **l1_kwargs(sagemaker.CfnCluster, {"ClusterName": "ml",
                                                                                    "InstanceGroups": [GROUP]}))
    cfn.add_property_override("InstanceGroups.0.InstanceCount", 3)
    (written,) = Template.from_stack(stack).find_resources("AWS::SageMaker::Cluster").values()
    assert written["Properties"]["InstanceGroups"] == [{**GROUP, "InstanceCount": 3}]
