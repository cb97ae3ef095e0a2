"""drift and import of elastic capacity (issue 57) on examples/elastic.yaml: instance types, MinCount, Spot, the node
image and patching, and the cluster's autoscaling, as DescribeCluster reports them (Stubber checks every response
against botocore's model, so a member name the tables read wrongly cannot pass here)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml

from hyperpod_gov.live import run_drift, run_import
from hyperpod_gov.spec import load_spec
from tests.conftest import EXAMPLES, TODAY

from .conftest import Aws, drift_args, import_args, queue_drift, queue_import, spec_and_plan
from .fake_aws import FakeCluster, cluster_from_plan

ELASTIC = EXAMPLES / "elastic.yaml"


def _drift(spec_path: Path, fake: FakeCluster, capsys, *argv: str) -> tuple[int, str]:
    spec, plan = spec_and_plan(spec_path)
    with Aws() as aws:
        queue_drift(aws, spec, plan, fake)
        code = run_drift(drift_args(str(spec_path), *argv), clients=aws.factory)
        aws.assert_all_used()
    return code, capsys.readouterr().out


def _items(spec_path: Path, fake: FakeCluster, capsys) -> list[dict[str, Any]]:
    return json.loads(_drift(spec_path, fake, capsys, "--format", "json")[1])["drift"]


def _group(fake: FakeCluster, name: str) -> dict[str, Any]:
    return next(g for g in fake.instance_groups if g["InstanceGroupName"] == name)


@pytest.fixture(scope="module")
def elastic() -> FakeCluster:
    return cluster_from_plan(spec_and_plan(ELASTIC)[1])


def _scaled(fake: FakeCluster) -> None:
    """Karpenter at work: the autoscaled groups run nodes their InstanceCount 0 never named."""
    _group(fake, "gpu-elastic").update(TargetCount=5, CurrentCount=3)
    _group(fake, "burst").update(TargetCount=2, CurrentCount=2)


def _patch_rescheduled(fake: FakeCluster) -> None:
    """The service moves the next patch date and reports the idle wait it applies; neither is the spec's."""
    import datetime as dt

    later = {"NextPatchDate": dt.datetime(2027, 3, 1, 2, 0, tzinfo=dt.timezone.utc)}
    _group(fake, "gpu-base")["AutoPatchConfig"].update(CurrentPatchSchedule=later, DesiredPatchSchedule=later,
                                                       IdleWaitWindowInSeconds=172800)


def _image_updating(fake: FakeCluster) -> None:
    """A software update under way: the current AMI is not yet the desired one (the desired one is governed)."""
    _group(fake, "gpu-base")["CurrentImageId"] = "ami-0ffffffffffffffff"


@pytest.mark.parametrize("change", [lambda f: None, _scaled, _patch_rescheduled, _image_updating],
                         ids=["as-deployed", "autoscaled-groups-scaled", "patch-date-moved", "image-update-under-way"])
def test_an_elastic_cluster_as_deployed_or_as_karpenter_and_the_service_move_it_shows_no_drift(elastic, change,
                                                                                               capsys):
    fake = elastic.copy()
    change(fake)
    assert _items(ELASTIC, fake, capsys) == []


def test_a_fixed_groups_target_count_is_still_drift(elastic, capsys):
    fake = elastic.copy()
    _group(fake, "gpu-base")["TargetCount"] = 5
    assert _items(ELASTIC, fake, capsys) == [{"kind": "InstanceGroup", "name": "gpu-base", "change": "changed",
                                              "field": "TargetCount", "expected": 6, "actual": 5}]


def _set(group: str, **members: Any) -> Callable[[FakeCluster], None]:
    return lambda fake: _group(fake, group).update(members)


def _auto_patch(**members: Any) -> Callable[[FakeCluster], None]:
    return lambda fake: _group(fake, "gpu-base")["AutoPatchConfig"].update(members)


PATCH_EXPECTED = {"PatchingStrategy": "WhenIdle", "DeploymentConfig": {
    "AutoRollbackConfiguration": [{"AlarmName": "gpu-base-errors"}],
    "RollingUpdatePolicy": {"MaximumBatchSize": {"Type": "CAPACITY_PERCENTAGE", "Value": 10}}}}
SCHEDULE = "cron(00 02 10 01 ? 2027)"

ELASTIC_CHANGES = [
    ("min-count-lowered", _set("gpu-base", MinCount=2),
     {"kind": "InstanceGroup", "name": "gpu-base", "field": "MinCount", "expected": 4, "actual": 2}),
    ("spot-group-on-demand", _set("burst", CapacityRequirements={"OnDemand": {}}),
     {"kind": "InstanceGroup", "name": "burst", "field": "CapacityRequirements", "expected": {"Spot": {}},
      "actual": {"OnDemand": {}}}),
    ("on-demand-group-spot", _set("gpu-elastic", CapacityRequirements={"Spot": {}}),
     {"kind": "InstanceGroup", "name": "gpu-elastic", "field": "CapacityRequirements", "expected": None,
      "actual": {"Spot": {}}}),
    ("instance-types-reordered", _set("burst", InstanceRequirements={
        "CurrentInstanceTypes": ["ml.g5.12xlarge", "ml.g6e.12xlarge"],
        "DesiredInstanceTypes": ["ml.g6e.12xlarge", "ml.g5.12xlarge"]}),
     {"kind": "InstanceGroup", "name": "burst", "field": "InstanceRequirements.DesiredInstanceTypes",
      "expected": ["ml.g5.12xlarge", "ml.g6e.12xlarge"], "actual": ["ml.g6e.12xlarge", "ml.g5.12xlarge"]}),
    ("instance-type-added", _set("burst", InstanceRequirements={
        "CurrentInstanceTypes": ["ml.g5.12xlarge", "ml.g6e.12xlarge"],
        "DesiredInstanceTypes": ["ml.g5.12xlarge", "ml.g6e.12xlarge", "ml.g6.12xlarge"]}),
     {"kind": "InstanceGroup", "name": "burst", "field": "InstanceRequirements.DesiredInstanceTypes",
      "expected": ["ml.g5.12xlarge", "ml.g6e.12xlarge"],
      "actual": ["ml.g5.12xlarge", "ml.g6e.12xlarge", "ml.g6.12xlarge"]}),
    ("patching-strategy-changed", _auto_patch(PatchingStrategy="WhenAllIdle"),
     {"kind": "InstanceGroup", "name": "gpu-base", "field": "AutoPatchConfig", "expected": PATCH_EXPECTED,
      "actual": {**PATCH_EXPECTED, "PatchingStrategy": "WhenAllIdle"}}),
    ("auto-patching-switched-off", lambda f: _group(f, "gpu-base").pop("AutoPatchConfig"),
     {"kind": "InstanceGroup", "name": "gpu-base", "field": "AutoPatchConfig", "expected": PATCH_EXPECTED,
      "actual": None}),
    ("patch-batch-widened", lambda f: _group(f, "gpu-base")["ScheduledUpdateConfig"]["DeploymentConfig"].update(
        RollingUpdatePolicy={"MaximumBatchSize": {"Type": "CAPACITY_PERCENTAGE", "Value": 50}}),
     {"kind": "InstanceGroup", "name": "gpu-base", "field": "ScheduledUpdateConfig",
      "expected": {"ScheduleExpression": SCHEDULE, "DeploymentConfig": PATCH_EXPECTED["DeploymentConfig"]},
      "actual": {"ScheduleExpression": SCHEDULE, "DeploymentConfig": {
          **PATCH_EXPECTED["DeploymentConfig"],
          "RollingUpdatePolicy": {"MaximumBatchSize": {"Type": "CAPACITY_PERCENTAGE", "Value": 50}}}}}),
    ("update-window-moved", lambda f: _group(f, "gpu-base")["ScheduledUpdateConfig"].update(
        ScheduleExpression="cron(00 14 10 01 ? 2027)"),
     {"kind": "InstanceGroup", "name": "gpu-base", "field": "ScheduledUpdateConfig",
      "expected": {"ScheduleExpression": SCHEDULE, "DeploymentConfig": PATCH_EXPECTED["DeploymentConfig"]},
      "actual": {"ScheduleExpression": "cron(00 14 10 01 ? 2027)",
                 "DeploymentConfig": PATCH_EXPECTED["DeploymentConfig"]}}),
    ("update-scheduled-on-a-group-without", _set("gpu-elastic", ScheduledUpdateConfig={
        "ScheduleExpression": "cron(00 02 ? * 1 *)"}),
     {"kind": "InstanceGroup", "name": "gpu-elastic", "field": "ScheduledUpdateConfig", "expected": None,
      "actual": {"ScheduleExpression": "cron(00 02 ? * 1 *)"}}),
    ("autoscaling-disabled", lambda f: f.cluster_members["AutoScaling"].update(Mode="Disable"),
     {"kind": "Cluster", "name": "gpu-cluster", "field": "AutoScaling",
      "expected": {"Mode": "Enable", "AutoScalerType": "Karpenter"},
      "actual": {"Mode": "Disable", "AutoScalerType": "Karpenter", "Status": "InService"}}),
    ("continuous-provisioning-off", lambda f: f.cluster_members.pop("NodeProvisioningMode"),
     {"kind": "Cluster", "name": "gpu-cluster", "field": "NodeProvisioningMode", "expected": "Continuous",
      "actual": None}),
]


@pytest.mark.parametrize("change, expected", [c[1:] for c in ELASTIC_CHANGES], ids=[c[0] for c in ELASTIC_CHANGES])
def test_each_elastic_change_made_by_hand_is_one_drift_item(elastic, change, expected, capsys):
    fake = elastic.copy()
    change(fake)
    assert _items(ELASTIC, fake, capsys) == [{**expected, "change": "changed"}]


def test_the_text_output_words_an_elastic_change(elastic, capsys):
    fake = elastic.copy()
    _group(fake, "gpu-base")["MinCount"] = 2
    _group(fake, "burst")["CapacityRequirements"] = {"OnDemand": {}}
    code, text = _drift(ELASTIC, fake, capsys)
    assert code == 1
    assert "instance group gpu-base: the minimum instance count is 2 on the cluster, the spec says 4" in text
    assert ('instance group burst: capacity type (Spot or On-Demand) is {"OnDemand": {}} on the cluster, the spec '
            'says {"Spot": {}}') in text


def _with_image(tmp_path: Path, **group: Any) -> Path:
    data = yaml.safe_load(ELASTIC.read_text())
    data["cluster"]["instanceGroups"][0].update(group)
    path = tmp_path / "elastic-image.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


@pytest.mark.parametrize("group, member, live", [
    ({"imageId": "ami-0123456789abcdef0"}, "DesiredImageId", "ami-0fedcba9876543210"),
    ({"image": {"releaseVersion": "1.2.3"}}, "DesiredImageReleaseVersion", "1.3.0"),
], ids=["ami", "release"])
def test_a_changed_node_image_is_drift_where_the_spec_names_one(tmp_path, group, member, live, capsys):
    path = _with_image(tmp_path, **group)
    fake = cluster_from_plan(spec_and_plan(path)[1])
    assert _items(path, fake, capsys) == []
    planned = _group(fake, "gpu-base")[member]
    _group(fake, "gpu-base")[member] = live
    assert _items(path, fake, capsys) == [{"kind": "InstanceGroup", "name": "gpu-base", "change": "changed",
                                           "field": member, "expected": planned, "actual": live}]


# --- import ----------------------------------------------------------------------------------------------------


def test_an_elastic_cluster_imports_its_types_min_count_capacity_and_autoscaling(elastic, tmp_path, capsys):
    fake = elastic.copy()
    _scaled(fake)
    out = tmp_path / "imported.yaml"
    with Aws() as aws:
        queue_import(aws, fake)
        code = run_import(import_args("--cluster-name", fake.name, "--out", str(out)), clients=aws.factory)
        aws.assert_all_used()
    err = capsys.readouterr().err
    text = out.read_text()
    assert code == 0, err
    cluster = yaml.safe_load(text)["cluster"]
    assert (cluster["autoScaling"], cluster["nodeProvisioningMode"]) == ("karpenter", "Continuous")
    assert "nodeRecovery" not in cluster  # Automatic, the default
    groups = {g["name"]: g for g in cluster["instanceGroups"]}
    assert groups["burst"]["instanceTypes"] == ["ml.g5.12xlarge", "ml.g6e.12xlarge"]
    assert "instanceType" not in groups["burst"] and groups["burst"]["capacity"] == "spot"
    assert groups["gpu-base"]["minCount"] == 4 and "capacity" not in groups["gpu-base"]  # On-Demand: the default
    # What DescribeCluster does not hold is not written: which groups Karpenter scales (said on each group), the
    # AMI (the service's own cannot be told from a pinned one) and the patching window (a structure).
    assert all("autoscale" not in g and "imageId" not in g and "patching" not in g for g in groups.values())
    assert text.count("# autoscale: not written: which groups Karpenter scales is held by the HyperpodNodeClass") == 3
    # The autoscaled groups' count is their target now (Karpenter's), the one fixed group its InstanceCount.
    assert {n: g["count"] for n, g in groups.items()} == {"burst": 2, "gpu-base": 6, "gpu-elastic": 5}
    spec = load_spec(out, today=TODAY)
    assert spec.cluster.auto_scaling == "karpenter"
    assert spec.cluster.instance_groups[0].instance_types == ("ml.g5.12xlarge", "ml.g6e.12xlarge")


def test_a_cluster_without_autoscaling_imports_no_autoscaling_keys(enterprise_live, tmp_path, capsys):
    _, _, fake = enterprise_live
    out = tmp_path / "imported.yaml"
    with Aws() as aws:
        queue_import(aws, fake)
        assert run_import(import_args("--cluster-name", fake.name, "--out", str(out)), clients=aws.factory) == 0
    text = out.read_text()
    assert "autoScaling" not in text and "autoscale" not in text and "nodeProvisioningMode" not in text
